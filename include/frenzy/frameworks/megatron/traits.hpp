#pragma once
// Megatron-LM / Megatron-Core (NVIDIA/Megatron-LM@d98e8a64) as the memory, step-time and validation layers see it.
// Its launcher (pretrain_gpt.py arguments; reading launch scripts back) is frameworks/megatron/launcher.hpp.
#include <string>

#include "frenzy/train/framework.hpp"

namespace frenzy::frameworks::megatron {

inline constexpr std::string_view field = "runtime.framework=\"megatron\"";

/// Megatron-FSDP (--use-megatron-fsdp; sharding full = optim_grads_params, gradients = optim_grads,
/// megatron/core/distributed/fsdp @d98e8a64) supports sgd and adam only (megatron/training/arguments.py); the
/// distributed optimizer is ZeRO-1.
inline std::string rejects_layout(const parallel_config& p, optimizer_kind optimizer) {
    if ((p.sharding == sharding::full || p.sharding == sharding::gradients) && optimizer == optimizer_kind::adafactor)
        return "parallel.sharding=\"" + std::string(to_string(p.sharding)) +
               "\" (Megatron-FSDP) does not support training.optimizer=\"adafactor\" (sgd or adam)";
    return {};
}

/// --optimizer-cpu-offload needs --use-distributed-optimizer; there is no parameter offload.
inline std::string rejects_offload(const offload_spec& o, sharding sh) {
    if (o.parameters) return "runtime.offload.parameters=true is not supported by " + std::string(field);
    if (o.optimizer && sh != sharding::optimizer)
        return "runtime.offload.optimizer=true with " + std::string(field) + " needs the distributed optimizer (parallel.sharding=\"" +
               std::string(to_string(sh)) + "\" must be optimizer)";
    return {};
}

inline constexpr framework_traits traits{
    .name = "megatron",
    .summary = "Megatron-LM / Megatron-Core: tp, pp (interleaved), cp, ep, distributed optimizer, Megatron-FSDP",
    .table_words = {"megatron"},
    // the tables' Megatron rows state their layout as Megatron arguments in other_flags
    .table_flags = table_flags_notation::megatron_arguments,
    // Transformer Engine (Megatron's default --transformer-impl) allocates its own cuBLAS workspace through the
    // caching allocator besides torch's: 32 MiB + 1 KiB from Hopper on (NVIDIA/TransformerEngine@d0067d0d
    // transformer_engine/pytorch/cpp_extensions/gemm.py get_cublas_workspace_size_bytes, get_cublas_workspace).
    .memory = {.vocab_divisible_by = 128, .workspace_bytes = 64.0 * MiB, .global_memory_buffer = true,
               .grouped_gemm_streams = true,
               .megatron_fsdp = true, .offload_keeps_gradients = true},
    .perf = {.transformer_engine = true, .context_parallel = context_parallel_impl::ring_p2p,
             .pipeline_scatter_gather = true, .overlap_is_a_flag = true, .plannable_overlap_flags = true},
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload, .adamw_8bit = false,
              .fp8_param_gather = true, .grad_reduce_bf16 = true, .default_sequence_parallel = true},
};

}  // namespace frenzy::frameworks::megatron
