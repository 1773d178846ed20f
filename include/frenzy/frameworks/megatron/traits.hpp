#pragma once
// Megatron-LM / Megatron-Core (NVIDIA/Megatron-LM@d98e8a64) as the memory, step-time and validation layers see it.
// Its launcher (pretrain_gpt.py arguments; reading launch scripts back) is frameworks/megatron/launcher.hpp.
#include <string>

#include "frenzy/frameworks/megatron/options.hpp"  // its flag language, which measurement tables use
#include "frenzy/train/framework.hpp"

namespace frenzy::frameworks::megatron {

inline constexpr std::string_view field = "runtime.framework=\"megatron\"";

/// Whether the layout runs on Megatron-FSDP (--use-megatron-fsdp): parameter or gradient sharding.
inline bool uses_megatron_fsdp(const parallel_config& p) {
    return p.sharding == sharding::full || p.sharding == sharding::gradients;
}

/// Pure bf16 (no fp32 master weights) is the precision-aware optimizer's (--use-precision-aware-optimizer, Adam
/// only: megatron/core/optimizer/optimizer_config.py) with bf16 main parameters, which only Megatron-FSDP offers
/// (--megatron-fsdp-main-params-dtype bf16): the distributed optimizer's --main-params-dtype is fp32 or fp16
/// (megatron/training/arguments.py @d98e8a64), and DDP has no precision-aware optimizer.
inline std::string rejects_pure_bf16(sharding sh, optimizer_kind optimizer) {
    if (!uses_megatron_fsdp(parallel_config{.sharding = sh}))
        return "training.precision=\"bf16\" (no fp32 master weights) on " + std::string(field) +
               " needs Megatron-FSDP (parallel.sharding full or gradients, --megatron-fsdp-main-params-dtype bf16); with "
               "parallel.sharding=\"" + std::string(to_string(sh)) + "\" Megatron keeps fp32 or fp16 main parameters "
               "(--main-params-dtype fp32|fp16)";
    if (optimizer != optimizer_kind::adam && optimizer != optimizer_kind::adamw)
        return "training.precision=\"bf16\" on " + std::string(field) + " needs training.optimizer adam or adamw (the "
               "precision-aware optimizer, --use-precision-aware-optimizer, is Adam only), not \"" +
               std::string(to_string(optimizer)) + "\"";
    return {};
}

/// Megatron-FSDP (--use-megatron-fsdp; sharding full = optim_grads_params, gradients = optim_grads,
/// megatron/core/distributed/fsdp @d98e8a64) supports sgd and adam only (megatron/training/arguments.py); the
/// distributed optimizer is ZeRO-1.
inline std::string rejects_layout(const parallel_config& p, const training_spec& t) {
    if (uses_megatron_fsdp(p) && t.optimizer == optimizer_kind::adafactor)
        return "parallel.sharding=\"" + std::string(to_string(p.sharding)) +
               "\" (Megatron-FSDP) does not support training.optimizer=\"adafactor\" (sgd or adam)";
    if (t.precision == precision::bf16) return rejects_pure_bf16(p.sharding, t.optimizer);
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
    .table_flags = {.sharding_of = table_sharding, .read_options = read_table_options},
    // Transformer Engine (Megatron's default --transformer-impl) allocates its own cuBLAS workspace through the
    // caching allocator besides torch's: 32 MiB + 1 KiB from Hopper on (NVIDIA/TransformerEngine@d0067d0d
    // transformer_engine/pytorch/cpp_extensions/gemm.py get_cublas_workspace_size_bytes, get_cublas_workspace).
    .memory = {.vocab_divisible_by = 128, .workspace_bytes = 64.0 * MiB, .global_memory_buffer = true,
               .grouped_gemm_streams = true,
               .megatron_fsdp = true, .offload_keeps_gradients = true},
    .perf = {.transformer_engine = true, .context_parallel = context_parallel_impl::ring_p2p,
             .pipeline_scatter_gather = true, .overlap_is_a_flag = true, .plannable_overlap_flags = true,
             .attention_without_flash = attention_impl::unfused},
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload, .adamw_8bit = false,
              .fp8_param_gather = true, .grad_reduce_bf16 = true, .nvfp4 = true, .default_sequence_parallel = true,
              .stage_layer_layout = true, .fp8_recipes = transformer_engine_fp8_recipes},
};

/// This framework as jobs and plans name it: a handle to `traits` (frameworks/registry.hpp lists it).
inline constexpr framework handle{traits};

}  // namespace frenzy::frameworks::megatron
