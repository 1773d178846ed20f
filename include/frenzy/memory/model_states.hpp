#pragma once
// Model states (weights, gradients, optimizer states) per GPU, sharded as configured.
// Bytes per parameter: Rajbhandari et al. 2020 (ZeRO) sec. 3.1, (2 + 2 + K) Psi with K = 12 for mixed-precision
// Adam, and the ZeRO stages Pos / Pos+g / Pos+g+p; Megatron-LM's distributed optimizer keeps 16-bit params and fp32
// main grads whole and shards the 12 optimizer bytes (docs/source/api-guide/dist_optimizer.md: 6 + 12/d bytes).
#include <concepts>

#include "frenzy/core/units.hpp"
#include "frenzy/memory/framework_profile.hpp"
#include "frenzy/memory/layout.hpp"
#include "frenzy/model/transformer.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

struct model_state_bytes {
    bytes weights{}, gradients{}, optimizer{};
    /// States the offload keeps in the host's pinned memory for this GPU (runtime.offload; 0 without it).
    bytes host{};
    /// Optimizer states in CUDA unified memory (runtime.paged_optimizer): not in the caching allocator's figures.
    bytes paged{};
    bool operator==(const model_state_bytes&) const = default;
};

/// Bytes per parameter of each state before sharding.
/// Whether a stage's gradients exist at the forward/loss peak: kept in persistent buffers, or accumulated into by
/// earlier micro-batches of the step; otherwise they appear during backward as the activations go. With the
/// optimizer fused into backward they never exist together.
inline bool gradients_at_forward_peak(const job_spec& j, const framework_profile& f) {
    return !f.optimizer_in_backward && (f.persistent_grads || j.micro_batches() > 1);
}

struct state_bytes_per_param {
    double weights = 0, gradients = 0, optimizer = 0;
    double gathered_copy = 0;  ///< 16-bit compute copy that exists only while a layer is gathered/cast
    double paged = 0;          ///< optimizer state bytes in unified memory (runtime.paged_optimizer), beside `optimizer`
};

/// Bytes per parameter for a precision, optimizer and framework.
inline state_bytes_per_param bytes_per_param(const job_spec& j, const framework_profile& f) {
    const auto prec = j.training.precision;
    const auto opt = j.training.optimizer;
    const double h = static_cast<double>(j.model.hidden);
    const double ffn = static_cast<double>(j.model.ffn_hidden);
    // Optimizer state elements per parameter: Adam m and v; SGD momentum; Adafactor's factored second moment
    // (Shazeer & Stern 2018: r + c values for an r x c matrix, i.e. 1/c + 1/r per parameter; no first moment).
    const double state_elems = (opt == optimizer_kind::adam || opt == optimizer_kind::adamw) ? 2.0
                               : opt == optimizer_kind::sgd                                   ? 1.0
                                                                                              : 1.0 / h + 1.0 / ffn;
    state_bytes_per_param b;
    if (prec == precision::fp32 || prec == precision::bf16) {  // pure precision: no master copy
        const double e = prec == precision::fp32 ? 4.0 : 2.0;
        b.weights = e;
        b.gradients = e;
        b.optimizer = state_elems * e;
        return b;
    }
    const bool fp16 = prec == precision::fp16_mixed;
    if (f.master == master_weights::separate) {
        b.weights = 2;
        b.gradients = fp16 ? f.grad_bytes_fp16 : f.grad_bytes_bf16;
        // Megatron-FSDP (optim_grads / optim_grads_params): the main-grad buffer takes the model's dtype
        // (--megatron-fsdp-main-grads-dtype auto) and the main weights fp32 (--megatron-fsdp-main-params-dtype
        // fp32): megatron/core/distributed/fsdp/src/megatron_fsdp/param_and_grad_buffer.py
        // _resolve_group_grad_dtype, megatron/training/arguments.py @d98e8a64.
        const auto sh = j.parallel.sharding;
        if (f.megatron_fsdp && (sh == sharding::gradients || sh == sharding::full)) b.gradients = 2;
        b.optimizer = 4 + 4 * state_elems;  // fp32 master + fp32 states
    } else {
        b.weights = 4;  // the fp32 parameters are the master copy
        b.gradients = fp16 ? f.grad_bytes_fp16 : f.grad_bytes_bf16;
        b.optimizer = 4 * state_elems;
        b.gathered_copy = 2;
    }
    return b;
}

/// Bytes of a job's checkpoint, whole: its weights and optimizer states (gradients are not saved) at bytes_per_param
/// of its framework, over all its parameters. What a move saves and loads (hw/cluster.hpp move_costs); 14 B per
/// parameter for bf16-mixed Adam with a separate fp32 master (2 + 4 + 2 x 4), as Megatron-LM's distributed optimizer
/// saves them (megatron/core/optimizer/distrib_optimizer.py: fp32 param, exp_avg, exp_avg_sq beside the 16-bit state).
inline double checkpoint_state_bytes(const job_spec& j) {
    const auto b = bytes_per_param(j, profile_of(j));
    return (b.weights + b.optimizer) * total_parameters(j.model, j.training.seq_len);
}

/// Policy: model states of one stage's GPU.
template <class T>
concept ModelStatePolicy = requires(const T& p, const job_spec& j, const stage_layout& l, const framework_profile& f) {
    { p.model_states(j, l, f) } -> std::same_as<model_state_bytes>;
};

/// Default: the sharding levels of ZeRO / FSDP / Megatron's distributed optimizer, over the data-parallel group
/// (dp x cp for dense parameters; dp x cp / ep for experts, which have their own data-parallel group).
struct sharded_model_states {
    /// What model_states() reads of the job alone, the same on every stage: bytes per parameter and the data-parallel
    /// group sizes. An estimate of many stages takes them once (basic_memory_estimator).
    struct job_terms {
        state_bytes_per_param b{};
        double n_dense = 1, n_expert = 1;
    };
    job_terms terms_of(const job_spec& j, const framework_profile& f) const {
        const auto& p = j.parallel;
        // Expert data-parallel group: the stage's dp x cp x tp GPUs regrouped as ep x etp x edp (Megatron
        // parallel_state.initialize_model_parallel expert groups @d98e8a64).
        return {bytes_per_param(j, f), static_cast<double>(p.dp * p.cp),
                static_cast<double>(p.dp * p.cp * p.tp / (p.ep * p.expert_tp()))};
    }
    model_state_bytes model_states(const job_spec& j, const stage_layout& l, const framework_profile& f) const {
        return model_states(j, l, f, terms_of(j, f));
    }
    /// model_states(j, l, f) with `t` = terms_of(j, f).
    model_state_bytes model_states(const job_spec& j, const stage_layout& l, const framework_profile&,
                                   const job_terms& t) const {
        const auto& p = j.parallel;
        const auto& b = t.b;
        const double n_dense = t.n_dense, n_expert = t.n_expert;
        auto sharded = [&](double per_param, bool shard) {
            if (!shard) return bytes{per_param * l.params()};
            return bytes{per_param * (l.dense_params / n_dense + l.expert_params / n_expert)};
        };
        const auto s = p.sharding;
        model_state_bytes r;
        r.optimizer = sharded(b.optimizer, s != sharding::none);
        r.gradients = sharded(b.gradients, s == sharding::gradients || s == sharding::full);
        r.weights = sharded(b.weights, s == sharding::full);
        // FSDP SHARD_GRAD_OP keeps the gathered 16-bit parameters from forward to backward.
        if (s == sharding::gradients && b.gathered_copy > 0) {
            r.weights = sharded(b.weights, true) + bytes{b.gathered_copy * l.params()};
        }
        return r;
    }
};
static_assert(ModelStatePolicy<sharded_model_states>);

}  // namespace frenzy
