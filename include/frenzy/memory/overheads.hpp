#pragma once
// Temporaries beyond model states and activations (communication buckets, gathered parameters under full
// sharding, optimizer-step scratch, library workspaces). The caching-allocator model that turns the peak allocated
// bytes into peak reserved bytes is memory/allocator.hpp.
#include <algorithm>
#include <concepts>
#include <utility>

#include "frenzy/core/units.hpp"
#include "frenzy/memory/activations.hpp"
#include "frenzy/memory/framework_profile.hpp"
#include "frenzy/memory/layout.hpp"
#include "frenzy/memory/model_states.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// One unit FSDP/ZeRO-3 gathers: its parameters on this GPU before sharding and the bytes per parameter of its
/// gathered weights and of its unsharded gradients.
struct gathered_unit {
    double params = 0, weight_bytes = 0, grad_bytes = 0;
};

/// Full sharding: the gathered weights of the current and prefetched units (`gathered_layers` of them) and the
/// unsharded gradients of one unit before its reduce-scatter (FSDP: _FSDPState prefetch; DeepSpeed stage-3
/// prefetch bucket), the larger of a layer and the embedding/output unit for each.
inline double gathered_unit_bytes(const gathered_unit& layer, const gathered_unit& edge, double gathered_layers) {
    const auto weights = [&](const gathered_unit& u) { return gathered_layers * u.weight_bytes * u.params; };
    const auto with_grads = [&](const gathered_unit& u) { return (u.weight_bytes + u.grad_bytes) * u.params; };
    return std::max(weights(layer), weights(edge)) + std::max(with_grads(layer), with_grads(edge));
}

/// Temporaries of the two phases whose peaks compete: forward/backward, and the optimizer step.
struct overhead_bytes {
    bytes train{};  ///< live during forward/backward (on top of activations)
    bytes step{};   ///< live during the optimizer step (activations are freed by then)
    bool operator==(const overhead_bytes&) const = default;
};

/// Policy: temporaries of one stage (the reserved-memory model is its own policy: memory/allocator.hpp).
template <class T>
concept OverheadPolicy = requires(const T& p, const job_spec& j, const stage_layout& l, const framework_profile& f,
                                  const model_state_bytes& s) {
    { p.temporaries(j, l, f, s) } -> std::same_as<overhead_bytes>;
};

struct framework_overheads {
    /// What temporaries() reads of the job alone, the same on every stage: bytes per parameter.
    struct job_terms {
        state_bytes_per_param b{};
    };
    job_terms terms_of(const job_spec& j, const framework_profile& f) const { return {bytes_per_param(j, f)}; }
    overhead_bytes temporaries(const job_spec& j, const stage_layout& l, const framework_profile& f,
                               const model_state_bytes& s) const {
        return temporaries(j, l, f, s, terms_of(j, f));
    }
    /// temporaries(j, l, f, s) with `t` = terms_of(j, f).
    overhead_bytes temporaries(const job_spec& j, const stage_layout& l, const framework_profile& f,
                               const model_state_bytes& s, const job_terms& t) const {
        const auto& p = j.parallel;
        const auto& b = t.b;
        overhead_bytes o;
        double train = f.workspace_bytes;
        // Grouped-GEMM experts (TEGroupedMLP) run on TE's 4 compute streams, each with its own cuBLAS workspace of
        // 32 MiB + 1 KiB (TransformerEngine@d0067d0d cpp_extensions/gemm.py get_cublas_workspace(grouped_gemm=True),
        // common/util/multi_stream.cpp num_compute_streams = 4); Hopper sizes, the larger ones.
        if (f.grouped_gemm_streams && j.model.is_moe() && p.grouped_gemm) train += 4 * (32.0 * MiB + 1024);
        if (f.global_memory_buffer) train += global_buffer(j, l);
        if (f.attention_score_buffer && j.runtime.attention == attention_impl::unfused) train += attention_score_buffer(j);
        // Gradient copies in communication buckets (torch DDP Reducer; only with data parallelism) and DeepSpeed's
        // reduce/all-gather buckets.
        if (p.dp * p.cp > 1) train += f.grad_bucket_copies * s.gradients.value;
        if (f.bucket_elements > 0 && p.sharding != sharding::full)
            train += std::min(f.bucket_elements, l.params()) * b.gradients;
        if (p.sharding == sharding::full) train += gathered_units(j, l, f, b);
        o.train = bytes{train};
        o.step = bytes{step_scratch(j, f, b, s)};
        return o;
    }

private:
    /// Megatron's global memory buffer "mpu" (megatron/core/utils.py GlobalMemoryBuffer.get_tensor: one tensor per
    /// name, reallocated only when a larger one is asked for, never freed) serves every all-gather that asks for
    /// it, so it holds the largest of them (megatron/core/tensor_parallel/mappings.py@d98e8a64
    /// _gather_along_first_dim(use_global_buffer=True)):
    ///  - the allgather MoE dispatcher's tokens over etp x ep (token_dispatcher.py
    ///    MoEAllGatherTokenDispatcher.token_dispatch): s b / tp x etp x ep tokens of h 16-bit values;
    ///  - with sequence parallelism, the LM head's (tensor_parallel.ColumnParallelLinear, not a TE layer) gathered
    ///    input, forward and backward (layers.py LinearWithGradAccumulationAndAsyncCommunication: get_tensor(
    ///    dim_size, input.dtype, "mpu")): s b h 16-bit values on the last stage.
    static double global_buffer(const job_spec& j, const stage_layout& l) {
        const auto& p = j.parallel;
        const double local = static_cast<double>(j.training.seq_len / p.cp) * static_cast<double>(j.training.micro_batch) /
                             (p.sequence_parallel ? static_cast<double>(p.tp) : 1.0);
        const double h = static_cast<double>(j.model.hidden);
        double largest = 0;
        if (j.model.is_moe() && l.moe_layers > 0 && p.dispatcher == moe_dispatcher::allgather && p.expert_tp() * p.ep > 1)
            largest = 2.0 * local * static_cast<double>(p.expert_tp() * p.ep) * h;
        if (l.last && p.sequence_parallel && p.tp > 1)
            largest = std::max(largest, 2.0 * local * static_cast<double>(p.tp) * h);
        return largest;
    }

    /// Megatron's unfused core attention writes Q K^T into a persistent global buffer (b x a/t x s x s, 16-bit).
    static double attention_score_buffer(const job_spec& j) {
        const double s_local = static_cast<double>(local_sequence(j));
        return 2.0 * static_cast<double>(j.training.micro_batch) * static_cast<double>(j.model.heads) /
               static_cast<double>(j.parallel.tp) * s_local * static_cast<double>(j.training.seq_len);
    }

public:
    /// The units full sharding gathers on stage `l` with the job's bytes per parameter (16-bit compute copies
    /// where the master is the parameter): a layer, and the embedding/output layer where it is its own unit.
    static std::pair<gathered_unit, gathered_unit> gathered_units_of(const job_spec& j, const stage_layout& l,
                                                                     const framework_profile& f,
                                                                     const state_bytes_per_param& b) {
        const double edge = edge_params(j, l, f);
        const double per_layer = l.layers > 0 ? (l.params() - edge) / static_cast<double>(l.layers) : 0.0;
        const double gathered = b.gathered_copy > 0 ? b.gathered_copy : b.weights;
        return {{per_layer, gathered, b.gradients}, {edge, gathered, b.gradients}};
    }

private:
    static double gathered_units(const job_spec& j, const stage_layout& l, const framework_profile& f,
                                 const state_bytes_per_param& b) {
        const auto [layer, edge] = gathered_units_of(j, l, f, b);
        return gathered_unit_bytes(layer, edge, f.gathered_layers);
    }

    /// Optimizer step: torch.optim's foreach Adam/AdamW materialises sqrt(v) for the whole group, the size of one
    /// moment (torch/optim/adamw.py _multi_tensor_adamw); fused kernels (apex/TE FusedAdam, DeepSpeed, torch
    /// fused=True) need none. SGD and Adafactor updates run in place.
    static double step_scratch(const job_spec& j, const framework_profile& f, const state_bytes_per_param& b,
                               const model_state_bytes& s) {
        double step = f.workspace_bytes;
        const auto opt = j.training.optimizer;
        if (f.foreach_optimizer && (opt == optimizer_kind::adam || opt == optimizer_kind::adamw)) {
            const double master = (f.master == master_weights::separate && b.optimizer > 8) ? 4.0 : 0.0;
            step += s.optimizer.value * (b.optimizer - master) / 2.0 / b.optimizer;
        }
        return step;
    }

    static double edge_params(const job_spec& j, const stage_layout& l, const framework_profile& f) {
        const double v = static_cast<double>(framework_vocab(j, f)) * static_cast<double>(j.model.hidden) /
                         static_cast<double>(j.parallel.tp);
        double e = 0;
        if (l.first) e = std::max(e, v);
        if (l.last && (!j.model.tied_embeddings || j.parallel.pp > 1)) e = std::max(e, v);
        return e;
    }
};
static_assert(OverheadPolicy<framework_overheads>);

}  // namespace frenzy
