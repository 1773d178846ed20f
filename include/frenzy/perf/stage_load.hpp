#pragma once
// The stage-aware part of the step-time prediction, public: the pipeline stage that bounds a step (the
// bottleneck stage) and the share of its layers full recompute runs twice. The step-time model
// (perf/step_time.hpp) reads a job's bottleneck stage; a caller that predicts one layout at many points (the
// planner: many dp, micro-batches, recompute levels, precisions and GPU types) computes it once with
// bottleneck_stage and passes it to basic_step_time_model::predict / step_parts.
#include <algorithm>
#include <cstdint>

#include "frenzy/memory/framework_profile.hpp"
#include "frenzy/memory/methods.hpp"
#include "frenzy/perf/flops.hpp"
#include "frenzy/train/geometry.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// The bottleneck pipeline stage as the step time sees it. Stages, their layers (uneven first/last stages,
/// embedding/loss slots, the MoE layers each chunk holds) and their per-GPU parameters come from the one layout
/// computation the memory model uses too (train/geometry.hpp for_each_stage_layout); the bottleneck is the stage
/// with the most forward FLOPs per token (the last on a tie: it also runs the loss), and the parameters are the
/// largest any stage's GPU holds before data-parallel sharding (its gradient sync and optimizer pass finish last).
struct stage_load {
    double layers = 0;      ///< transformer layers on the bottleneck stage (all its virtual chunks)
    double moe_layers = 0;  ///< of which mixture-of-experts layers
    bool logits = false;    ///< the bottleneck stage holds the output layer and the loss
    double params = 0;      ///< most parameters per GPU of any stage (dense + local experts), before dp sharding
    /// most trained parameters per GPU of any stage (= params unless fine-tuning freezes some: adapters or frozen
    /// layers; memory/methods.hpp trainable_split, the one place that says what is trained)
    double trainable_params = 0;
    double nf4_params = 0;  ///< QLoRA: the bottleneck stage's frozen NF4 linear weights per GPU
    std::int64_t chunk_slots = 0;  ///< layer slots per virtual chunk of the bottleneck stage (stage_layout)
    /// The per-token FLOPs the stages were weighed with: forward_flops_per_token of the job's model and sequence
    /// length, which the compute term reads too (kept here so that it is computed once per layout, not per call).
    token_flops flops{};
    double dense_layers() const { return layers - moe_layers; }
};

inline stage_load bottleneck_stage(const job_spec& j, const token_flops& f, std::int64_t first, std::int64_t last);

/// The bottleneck stage of `j`'s layout, its stages weighed with the per-token FLOPs `f`
/// (forward_flops_per_token(j.model, j.training.seq_len)). It depends on the model, the sequence length, the
/// framework's vocabulary padding and the fields of the layout that place layers (tp, etp, ep, pp, vpp, uneven
/// and embedding/loss splits), not on dp, the micro-batch, recompute, precision or the GPU.
inline stage_load bottleneck_stage(const job_spec& j, const token_flops& f) {
    return bottleneck_stage(j, f, 0, j.parallel.pp);
}

/// The same over the stages first .. last - 1 only: a heterogeneous pipeline's stages on one GPU type
/// (plan/mixed.hpp), whose gradient sync and optimizer pass run on that type.
inline stage_load bottleneck_stage(const job_spec& j, const token_flops& f, std::int64_t first, std::int64_t last) {
    stage_load out;
    out.flops = f;
    double worst = -1;
    const auto profile = profile_of(j);
    for_each_stage_layout(j, j.runtime.framework->memory.vocab_divisible_by, first, last, [&](const stage_layout& s) {
        const double l = static_cast<double>(s.layers), e = static_cast<double>(s.moe_layers);
        const double work = (l - e) * f.dense_layer + e * f.moe_layer + l * f.attention_core + (s.last ? f.logits : 0.0);
        const auto split = trainable_split(j, s, profile);
        if (work >= worst) {
            worst = work;
            out.layers = l;
            out.moe_layers = e;
            out.logits = s.last;
            out.chunk_slots = s.chunk_slots;
            out.nf4_params = split.frozen_nf4;
        }
        out.params = std::max(out.params, s.params());
        out.trainable_params = std::max(out.trainable_params, split.trainable);
    });
    return out;
}

/// The bottleneck stage of `j`'s layout at its own model and sequence length.
inline stage_load bottleneck_stage(const job_spec& j) {
    return bottleneck_stage(j, forward_flops_per_token(j.model, j.training.seq_len));
}

/// Share of the bottleneck stage's layers that full recompute runs forward a second time (train/geometry.hpp
/// full_recompute_of: all of them with the uniform method, the first recompute_layers of each chunk with block).
inline double full_recompute_share(const job_spec& j, const stage_load& s) {
    if (j.parallel.recompute != recompute::full || !(s.layers > 0)) return 0.0;
    stage_layout l;
    l.layers = static_cast<std::int64_t>(s.layers);
    l.chunk_slots = s.chunk_slots;
    return full_recompute_of(j, l).checkpointed / s.layers;
}

}  // namespace frenzy
