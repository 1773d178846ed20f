#pragma once
// Test helper: every scheduling policy of this build, built by the library's own mapping (sim/policies.hpp).
#include <vector>

#include "frenzy/sim/policies.hpp"

namespace frenzy_test {

/// frenzy::selectable_policy_names() in order (HAS first; what `--policy all` runs, then gavel-las), each from
/// frenzy::make_scheduler; Sia's ILP stops at a 2% gap, which keeps it quick and deterministic in tests (a gap, not
/// a time limit).
inline std::vector<frenzy::any_scheduler> every_policy() {
    frenzy::policy_options o;
#ifdef FRENZY_HAS_GLPK
    o.sia.ilp.mip_gap = 0.02;
#endif
    std::vector<frenzy::any_scheduler> v;
    for (const auto& n : frenzy::selectable_policy_names()) v.push_back(frenzy::make_scheduler(n, o));
    return v;
}

}  // namespace frenzy_test
