#pragma once
// The scheduling policies as the simulator runs them: the registry by name (sched/policy_registry.hpp:
// policy_names(), selectable_policy_names(), select_policies(), make_scheduler()) and policy_options_for, which
// tells every policy the costs one simulation charges.
#include "frenzy/sched/policy_registry.hpp"
#include "frenzy/sim/simulator.hpp"

namespace frenzy {

/// The policies' view of one simulation's costs: HAS predicts with the simulator's start-up cost, Sia's restart
/// factor uses its restart cost (sim_options::restart_s) and Sia's restart lock its start-up cost, so that no policy
/// is told a cost other than the one charged.
inline policy_options policy_options_for(const sim_options& s, policy_options o = {}) {
    o.has.startup_s = s.startup_s;
#ifdef FRENZY_HAS_GLPK
    o.sia.ilp.restart_penalty_s = s.restart_s;
    o.sia.startup_s = s.startup_s;  // the restart lock's length for a first launch
#endif
    return o;
}

}  // namespace frenzy
