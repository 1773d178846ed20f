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

/// One change that makes a job fit, with the changed job and its verdict. A change of tp, pp or cp keeps the GPU
/// count (dp shrinks by the same factor) and may turn sequence parallelism on; only the last resort, when nothing
/// fits on the job's GPUs, uses more GPUs (job.parallel.gpus() says how many).
struct fit_suggestion {
    std::string field;  ///< the job field changed ("training.micro_batch", "parallel.dp", "runtime.offload.optimizer")
    std::string from, to;  ///< its old and new value, as text
    job_spec job;          ///< the job with the change (and what follows from it: dp, global batch, sp)
    fit_check fit;         ///< its verdict: fits
};

/// How advice treats what the job did not state.
struct advice_options {
    /// The job states its global batch. When false (a job built from flags without --global-batch: one micro-batch
    /// per GPU and step), a changed job's global batch stays micro_batch x dp, and the planner's alternatives choose
    /// their own (default_global_batch, as `frenzy plan` does) instead of being pinned to the job's.
    bool global_batch_stated = true;
};

/// The planner's answers on one GPU type, when the job as laid out does not fit.
struct planner_fits {
    std::optional<plan> same_gpus;    ///< the fastest plan with at most the job's GPU count
    std::optional<plan> fewest_gpus;  ///< the plan with the fewest GPUs (the fastest among those)
    /// Without any plan: why the planner finds none on the type (plan_result::infeasible), e.g. its precision or fp8
    /// recipe; empty when it has plans or states no reason.
    std::string none_reason;
    std::int64_t global_batch = 0;      ///< the global batch the planner was given (sequences)
    bool global_batch_chosen = false;   ///< it chose it (advice_options::global_batch_stated false)
    std::int64_t max_gpus = 0;          ///< the most GPUs it searched
};

/// Single changes least disruptive first, then the planner's layouts on the same GPU type.
struct fit_advice {
    std::vector<fit_suggestion> changes;
    planner_fits planner;
};

}  // namespace frenzy
