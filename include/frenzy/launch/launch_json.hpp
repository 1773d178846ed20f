#pragma once
// Launch results -> JSON: the one place the keys of `frenzy launch --json` are built (docs/formats.md lists them);
// the Python module's Launch.to_dict() serialises through it too. It sits in launch/ rather than io/ because io/
// is below launch/ in the include graph (tests/layers/check_layers.py); the plan and the job inside it are
// serialised by io/result_json.hpp and io/job_json.hpp.
#include <nlohmann/json.hpp>

#include "frenzy/io/job_json.hpp"
#include "frenzy/io/result_json.hpp"
#include "frenzy/launch/launch.hpp"

namespace frenzy {

/// `frenzy launch --json`: {plan (mixed_plan with launch --mixed), job (with the plan's layout), files (the paths
/// written; [] when not written)}.
inline void to_json(nlohmann::ordered_json& out, const launch_result& r) {
    out = nlohmann::ordered_json::object();
    out[r.plan.mixed() ? "mixed_plan" : "plan"] = r.plan;
    out["job"] = nlohmann::ordered_json(to_json(r.job));  // the job codec's keys, in its (sorted) order
    out["files"] = r.written;
}

}  // namespace frenzy
