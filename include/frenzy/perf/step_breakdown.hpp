#pragma once
// The pieces of one predicted step (perf/step_time.hpp fills them) and the step as named shares.
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "frenzy/perf/efficiency.hpp"

namespace frenzy {

/// The pieces of one step (seconds). Per-micro-batch pieces are on the bottleneck stage.
struct step_breakdown {
    double compute_mb = 0;     ///< fwd + bwd + recompute of one micro-batch on one GPU (all kernel classes)
    kernel_seconds kernels_mb{};  ///< compute_mb by kernel class, where the compute policy tells (by_kernel)
    double tp_mb = 0;          ///< tensor-parallel collectives (all-reduces, or reduce-scatter + all-gather with SP)
    double tp_exposed_mb = 0;  ///< the part of tp_mb not hidden behind GEMMs (all of it without tp_comm_overlap)
    double cp_mb = 0;          ///< context-parallel ring exchange of K/V (forward) and K/V + their gradients (backward)
    double cp_exposed_mb = 0;  ///< the part of cp_mb not hidden behind the attention of the other chunks
    double ep_mb = 0;          ///< expert-parallel all-to-alls
    double pp_mb = 0;          ///< pipeline send/recv of activations and their gradients
    double pp_exposed_mb = 0;  ///< the part of pp_mb on the critical path (interleaved: overlapped with compute)
    double shard_mb = 0;       ///< ZeRO-3/FSDP parameter gathers + gradient reduce-scatter (ZeRO-2: reduce-scatter)
    double micro_batch = 0;    ///< time of one micro-batch slot
    std::int64_t micro_batches = 1;
    double bubble_slots = 0;   ///< idle micro-batch slots of the schedule
    double pipeline = 0;       ///< (micro_batches + bubble_slots) x micro_batch
    double dp_sync = 0;        ///< gradient all-reduce (or ZeRO-1 reduce-scatter + all-gather), before overlap
    double dp_exposed = 0;     ///< the part of dp_sync not hidden behind the last backward
    double param_gather = 0;   ///< ZeRO-2: all-gather of updated parameters after the optimizer
    double optimizer = 0;      ///< memory-bandwidth-bound optimizer pass
    double total = 0;
    // inputs of the compute term (what calibration inverts)
    double dense_flops_mb = 0, attention_flops_mb = 0, memory_bytes_mb = 0, peak = 0;
    gemm_shape shape{};
    compute_work work{};
};

/// One named share of a step's time (step_time_parts).
struct step_part {
    std::string_view name;  ///< a static string
    double seconds = 0;
};

/// The step of `b` as shares that add up to b.total: the compute of all micro-batches by kernel class (one
/// "compute" share where the compute policy does not tell the classes), what each kind of communication leaves
/// exposed, the pipeline bubble, the gradient sync, ZeRO-2's parameter gather and the optimizer pass. Zero
/// shares are left out.
inline std::vector<step_part> step_time_parts(const step_breakdown& b) {
    const double m = static_cast<double>(b.micro_batches);
    const double work = b.compute_mb + b.tp_exposed_mb + b.cp_exposed_mb + b.ep_mb;
    // what the sharded-state gathers add to a micro-batch slot beyond its own work (basic_step_time_model's
    // micro_batch_slot): the slot less the work and the exposed pipeline sends
    const double shard_exposed = b.shard_mb > 0 ? std::max(0.0, b.micro_batch - work - b.pp_exposed_mb) : 0.0;
    const auto& k = b.kernels_mb;
    std::vector<step_part> all;
    if (k.total() > 0)
        all = {{"GEMMs", m * k.gemm}, {"attention", m * k.attention}, {"element-wise", m * k.elementwise},
               {"streaming", m * k.streaming}};
    else
        all = {{"compute", m * b.compute_mb}};
    const std::vector<step_part> rest = {
        {"tensor-parallel (exposed)", m * b.tp_exposed_mb}, {"context-parallel (exposed)", m * b.cp_exposed_mb},
        {"expert all-to-all", m * b.ep_mb},                {"sharded gathers (exposed)", m * shard_exposed},
        {"pipeline sends (exposed)", m * b.pp_exposed_mb}, {"pipeline bubble", b.bubble_slots * b.micro_batch},
        {"gradient sync (exposed)", b.dp_exposed},         {"parameter gather", b.param_gather},
        {"optimizer step", b.optimizer}};
    all.insert(all.end(), rest.begin(), rest.end());
    std::erase_if(all, [](const step_part& p) { return !(p.seconds > 0); });
    return all;
}

}  // namespace frenzy
