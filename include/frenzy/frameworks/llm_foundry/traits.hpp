#pragma once
// MosaicML llm-foundry on Composer, as its pretraining benchmarks run it (mosaicml/llm-foundry@8c8dd48f
// scripts/train/benchmarking/submit_benchmarks.py: attn_impl flash, norm_type low_precision_layernorm, FSDP
// mixed_precision DEFAULT, activation checkpointing per block):
// - PyTorch FSDP1 with flat parameters (composer@6405188 composer/distributed/mosaic_parallelism.py
//   get_mixed_precision: "DEFAULT" gathers 16-bit parameters and reduce-scatters in fp32 into fp32 sharded
//   gradients; the reduce-scatter runs on FSDP1's post-backward stream, whose allocator pool adds to the reserved
//   peak as FSDP2's does); CPU offload is refused by Composer (get_cpu_offload: "not supported yet").
// - MPT's layers (llmfoundry/models/mpt/modeling_mpt.py, layers/{blocks,attention,ffn,norm}.py): flash attention
//   with the kv heads as they are (flash-attn 2 takes GQA), LPLayerNorm (layers/norm.py: the norm runs in the
//   autocast dtype with autocast off, so it saves its 16-bit input and no fp32 copy), eager GELU MLP, no dropout
//   (attn_pdrop, resid_pdrop, emb_pdrop default 0), the torch attention (attn_impl "torch": matmul, softmax,
//   matmul) where flash cannot run.
// - The loss: ComposerMPTCausalLM's default loss_fn "fused_crossentropy" is flash-attn's CrossEntropyLoss, built
//   with inplace_backward=False (loss_style::fused_cross_entropy): no fp32 copy of the logits.
// - The optimizer: Composer's DecoupledAdamW steps parameter by parameter (composer/optim/decoupled_weight_decay.py
//   adamw: a loop over params), no foreach scratch; zero_grad(set_to_none=True), so gradients are not persistent.
// - fp8: fc_type "te" (Transformer Engine linears that save their fp8 inputs) under Composer's amp_fp8.
#include <string>

#include "frenzy/train/framework.hpp"

namespace frenzy::frameworks::llm_foundry {

inline constexpr std::string_view field = "runtime.framework=\"llm-foundry\"";

/// Composer's FSDP1: FULL_SHARD, SHARD_GRAD_OP, NO_SHARD (no ZeRO-1); data parallel only; activation checkpointing
/// wraps whole blocks (fsdp_config.activation_checkpointing, MPTBlock), so there is no selective recompute.
inline std::string rejects_layout(const parallel_config& p, const training_spec&) {
    if (p.recompute == recompute::selective)
        return "parallel.recompute=\"selective\" is not supported by " + std::string(field) +
               " (fsdp_config.activation_checkpointing recomputes whole blocks: parallel.recompute=\"full\")";
    if (p.sharding == sharding::optimizer)
        return "parallel.sharding=\"optimizer\" is not supported by " + std::string(field) +
               " (FSDP sharding strategies: none, gradients or full)";
    return rejects_model_parallel(field, p);
}

inline std::string rejects_offload(const offload_spec& o, sharding) {
    if (o.optimizer || o.parameters)
        return "runtime.offload.optimizer/parameters are not supported by " + std::string(field) +
               " (Composer refuses FSDP CPU offload: composer/distributed/mosaic_parallelism.py get_cpu_offload)";
    return {};
}

inline constexpr framework_traits traits{
    .name = "llm-foundry",
    .summary = "MosaicML llm-foundry / Composer: FSDP1, flash attention, fused cross-entropy, low-precision LayerNorm",
    .table_words = {"foundry", "composer"},
    .memory = {.master = master_weights::in_params, .grad_bytes_bf16 = 4, .grad_bytes_fp16 = 4, .dropout = false,
               .loss = loss_style::fused_cross_entropy, .selective = selective_kind::every_other_mm,
               .attention_score_buffer = false, .fused_elementwise = false, .eager_final_norm = true,
               .rope_fp32_copies = false, .rmsnorm_fp32_copy = false, .gqa_kv_repeat = false,
               .persistent_grads = false, .foreach_optimizer = false, .side_stream_reduce_scatter = true,
               .side_stream_all_reduce = true,
               .fp8 = fp8_style::transformer_engine},
    .perf = {.attention_without_flash = attention_impl::unfused},
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload},
};

/// This framework as jobs and plans name it: a handle to `traits` (frameworks/registry.hpp lists it).
inline constexpr framework handle{traits};

}  // namespace frenzy::frameworks::llm_foundry
