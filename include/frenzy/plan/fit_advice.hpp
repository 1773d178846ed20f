#pragma once
// What would make a job that does not fit (or is tight) fit: the values plan/nearest_fit.hpp computes and
// estimate_result (plan/estimate.hpp) carries when asked.
#include <optional>
#include <string>
#include <vector>

#include "frenzy/memory/fit.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// One change that makes a job fit, with the changed job and its verdict.
struct fit_suggestion {
    std::string field;  ///< the job field changed ("training.micro_batch", "parallel.dp", "runtime.offload.optimizer")
    std::string from, to;  ///< its old and new value, as text
    job_spec job;          ///< the job with the change
    fit_check fit;         ///< its verdict: fits
};

/// The planner's answers on one GPU type, when the job as laid out does not fit.
struct planner_fits {
    std::optional<plan> same_gpus;    ///< the fastest plan with at most the job's GPU count
    std::optional<plan> fewest_gpus;  ///< the plan with the fewest GPUs (the fastest among those)
    /// Without any plan: why the planner finds none on the type (plan_result::infeasible), e.g. its precision or fp8
    /// recipe; empty when it has plans or states no reason.
    std::string none_reason;
};

/// Single changes least disruptive first, then the planner's layouts on the same GPU type.
struct fit_advice {
    std::vector<fit_suggestion> changes;
    planner_fits planner;
};

}  // namespace frenzy
