#pragma once
// What a plan() call is asked for and where it looks: the objective and limits (plan_options), the GPU pools of a
// cluster (one per GPU type) and the search statistics. Shared by the planner's parts (plan/search_space.hpp,
// plan/objective.hpp, plan/feasibility.hpp, plan/planner.hpp).
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frenzy/core/enum_names.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/hw/cluster.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

enum class plan_objective { time, gpu_hours, cost };

template <> struct enum_names<plan_objective> {
    static constexpr std::array<std::pair<plan_objective, std::string_view>, 3> table{{
        {plan_objective::time, "time"}, {plan_objective::gpu_hours, "gpu-hours"}, {plan_objective::cost, "cost"}}};
};

/// What to optimise and which limits to respect.
struct plan_options {
    plan_objective objective = plan_objective::time;
    std::map<std::string, double> price_per_gpu_hour;  ///< by GPU type name (USD); needed for objective cost
    double margin = default_margin;        ///< fraction of GPU memory kept free (memory/fit.hpp)
    bool whole_node_billing = false;       ///< cost and GPU-hours objectives bill whole nodes (5 GPUs of 8 = 8)
    bool pin_precision = false;            ///< never offer another precision where a type lacks the job's
    std::int64_t max_gpus = 0;             ///< 0 = as many as the cluster has
    bool allow_tp_across_nodes = false;    ///< tensor parallelism normally stays inside a node (NVLink/PCIe)
    std::vector<framework> frameworks;     ///< empty = the job's runtime.framework
    std::int64_t max_pp = 0;               ///< 0 = up to model.layers
    std::int64_t max_vpp = 4;              ///< largest virtual pipeline size tried (Megatron interleaved)
    plan_constraints constraints;          ///< layout fields the job pins
    /// Turn on the communication overlap the plan's framework supports, as a tuned run would (Megatron-LM:
    /// --overlap-grad-reduce with data parallelism, --tp-comm-overlap with tp > 1 inside a node and sequence
    /// parallelism, which it requires: megatron/training/arguments.py). The predicted step time then reflects it
    /// (perf/step_time.hpp). False: the job's runtime flags as given. DDP, FSDP and DeepSpeed always overlap their
    /// gradient reduction (nothing to turn on).
    bool framework_overlap = true;
    /// Also plan pipelines whose stages run on two GPU types (plan/mixed.hpp; Megatron-LM only).
    bool mixed = false;
    std::int64_t max_mixed_stages = 16;   ///< most pipeline stages of a mixed plan (max_pp, when set, instead)
};

/// How a caller names the cost objective and where a price comes from, in check_prices' error (the library's by
/// default; the CLI's: --objective cost, --price TYPE=USD).
struct price_wording {
    std::string_view objective = "objective=cost";
    std::string (*hint)(const std::string& type) = [](const std::string&) {
        return std::string("price_per_gpu_hour has none; example_prices() has illustrative ones");
    };
};

/// Where the GPUs of one type are: its catalog entry, node shape and how many nodes there are.
struct gpu_pool {
    gpu_type gpu;
    int gpus_per_node = 8;
    int nodes = 0;
    double network_GBps = 0;  ///< per node, GB/s
    double host_memory_GiB = 0;  ///< per node; 0 = not stated by every node group of the type (not checked)
    std::int64_t gpus() const { return static_cast<std::int64_t>(gpus_per_node) * nodes; }
};

/// The one check of "cost needs a price": with the cost objective, every GPU type of `pools` has a price in
/// `o.price_per_gpu_hour`, else config_error "OBJECTIVE needs a price for GPU type "T" (HINT)" naming the first
/// without one. The planner checks every call so; a front end may check first in its own words.
inline void check_prices(const plan_options& o, const std::vector<gpu_pool>& pools, const price_wording& w = {}) {
    if (o.objective != plan_objective::cost) return;
    for (const auto& pool : pools)
        if (!o.price_per_gpu_hour.contains(pool.gpu.name))
            throw config_error(std::string(w.objective) + " needs a price for GPU type \"" + pool.gpu.name + "\" (" +
                               w.hint(pool.gpu.name) + ")");
}

/// Search statistics (for benchmarks and tests).
struct plan_stats {
    std::int64_t layouts = 0;          ///< (framework, tp, pp, vpp, sharding, dp) combinations considered
    std::int64_t configurations = 0;   ///< layouts x recompute x micro-batch represented (incl. pruned ones)
    std::int64_t memory_estimates = 0; ///< estimator calls
    std::int64_t step_estimates = 0;   ///< step-time model calls
};

/// Pools of a cluster, one per GPU type (node groups of the same type and node size are merged; for a type with
/// several node sizes, the size with the most GPUs).
inline std::vector<gpu_pool> gpu_pools(const cluster_spec& c) {
    std::vector<gpu_pool> pools;
    for (const auto& g : c.nodes) {
        const auto& t = c.catalog.at(g.gpu);
        auto it = std::find_if(pools.begin(), pools.end(), [&](const gpu_pool& p) { return p.gpu.name == g.gpu; });
        if (it == pools.end()) {
            pools.push_back({t, g.gpus_per_node, g.count, network_GBps(g, t), g.host_memory_GiB});
        } else if (it->gpus_per_node == g.gpus_per_node) {
            it->nodes += g.count;
            it->network_GBps = std::min(it->network_GBps, network_GBps(g, t));
            // the smallest stated host memory; a group that states none leaves the pool unchecked
            it->host_memory_GiB = it->host_memory_GiB > 0 && g.host_memory_GiB > 0 ? std::min(it->host_memory_GiB, g.host_memory_GiB) : 0.0;
        } else if (static_cast<std::int64_t>(g.gpus_per_node) * g.count > it->gpus()) {
            *it = {t, g.gpus_per_node, g.count, network_GBps(g, t), g.host_memory_GiB};
        }
    }
    return pools;
}

}  // namespace frenzy
