#pragma once
// One job with a stated layout, optionally on one GPU type: MARP's memory report, the fit verdict by the one fit
// rule, and the predicted speed. What `frenzy estimate`, the Python `frenzy.estimate` and the service answer.
#include <optional>

#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/plan/fit_advice.hpp"
#include "frenzy/plan/policies.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/train/attention.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

struct estimate_result {
    job_spec job;
    memory_report memory;
    double margin = default_margin;
    std::optional<gpu_type> gpu;          ///< set when a GPU type was asked for
    std::optional<fit_check> fit;         ///< with gpu
    std::optional<step_estimate> speed;   ///< with gpu
    std::optional<fit_advice> advice;     ///< with gpu, when asked and it does not fit (plan/nearest_fit.hpp advise)
};

/// Estimates `job` (validated; config_error on a rule a framework would reject) and, with a GPU type, whether it
/// fits with `margin` of memory kept free and how fast it runs (on a node of the type's typical size).
template <MemoryModel M = memory_estimator, StepTimeModel T = step_time_model>
estimate_result estimate(const job_spec& job, const gpu_type* gpu = nullptr, double margin = default_margin,
                         const M& memory = {}, const T& time = {}) {
    validate_margin(margin);
    estimate_result r;
    r.job = gpu ? job_on(job, *gpu) : job;  // the attention kernel the type runs (train/attention.hpp)
    r.margin = margin;
    r.memory = memory.estimate(r.job);
    if (gpu) {
        r.gpu = *gpu;
        r.fit = check_fit(r.memory, *gpu, margin);
        r.speed = time.predict(r.job, *gpu, topology{gpu->gpus_per_node, 0.0});
    }
    return r;
}

}  // namespace frenzy
