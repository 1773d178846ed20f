#pragma once
// Plan values: a job on one GPU type with a parallel configuration, and why a type is infeasible.
#include <cstdint>
#include <string>
#include <vector>

#include "frenzy/core/units.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// One way to run a job: `gpus` GPUs of type `gpu` over `nodes` nodes with `parallel`.
struct plan {
    std::string gpu;
    int gpus = 0;
    int nodes = 0;
    parallel_config parallel{};
    std::int64_t micro_batch = 1;
    bytes peak_allocated{};
    bytes capacity{};          ///< usable memory per GPU (after the safety margin)
    seconds step_time{};
    double tokens_per_s = 0;   ///< whole job
    seconds est_time{};        ///< total_tokens / tokens_per_s
    double gpu_hours = 0;
    double cost = 0;           ///< gpu_hours x price per GPU-hour (0 when no prices are given)
    frenzy::framework framework = framework::megatron;  ///< the framework the plan was checked against
    double mfu = 0;            ///< predicted model FLOPs utilisation (perf/step_time.hpp convention)
    bool operator==(const plan&) const = default;
};

struct infeasible_type {
    std::string gpu;
    std::string reason;
    bool operator==(const infeasible_type&) const = default;
};

/// All feasible plans, best first by the chosen objective, and the types that cannot run the job.
struct plan_result {
    std::vector<plan> plans;
    std::vector<infeasible_type> infeasible;
};

}  // namespace frenzy
