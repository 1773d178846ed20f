#pragma once
// torchtune's fine-tuning recipes, read at pytorch/torchtune@bd2a0fc7 (recipes/full_finetune_distributed.py,
// full_finetune_single_device.py, lora_finetune_distributed.py, lora_finetune_single_device.py; QLoRA is the LoRA
// recipe with a qlora_* model builder, NF4 base weights through torchao):
// - Precision: `dtype: bf16` builds the model in bf16 and trains it so, parameters, gradients and optimizer states
//   (full_finetune_distributed.py docstring "When dtype=bf16, all activations, gradients and optimizer states are
//   in bfloat16"; training/precision.py get_dtype refuses fp16); there is no autocast and no fp32 master copy.
// - Sharding: the distributed recipes call training.shard_model (torchtune/training/_distributed.py): FSDP2
//   fully_shard on every TransformerSelfAttentionLayer and the root, reshard_after_forward from
//   `fsdp_reshard_after_forward` (True = FULL_SHARD, False = SHARD_GRAD_OP); `fsdp_cpu_offload` is CPUOffloadPolicy
//   (parameters, gradients and optimizer together). The single-device recipes shard nothing.
// - The layers (torchtune/modules/): rms_norm.py RMSNorm upcasts (x.float() ... .type_as(x)), so it keeps an fp32
//   copy of its input; attention.py MultiHeadAttention expands k and v to every query head before SDPA
//   (k.unsqueeze(2).expand(...).flatten(1, 2), a copy SDPA saves); position_embeddings.py RotaryPositionalEmbeddings
//   upcasts x and multiplies it by a cache that needs no gradient, so autograd keeps no fp32 q/k (rope term off);
//   eager SwiGLU (feed_forward.py); no dropout (attn_dropout 0.0 in the builders).
// - The loss: LinearCrossEntropyLoss (modules/loss/cross_entropy_loss.py) or CEWithChunkedOutputLoss
//   (ce_chunked_output_loss.py): F.cross_entropy(logits.float()) chunk by chunk, num_output_chunks (default 8) =
//   runtime.loss_chunks: loss_style::upcast_log_softmax.
// - The optimizer: the recipe configs build torch.optim.AdamW with fused=True (no foreach scratch);
//   optimizer.zero_grad(set_to_none=True) (gradients not persistent); `optimizer_in_bwd` (full fine-tune recipes
//   only) steps in backward hooks: runtime.optimizer "in-backward".
// - Activation checkpointing per layer (training.set_activation_checkpointing on TransformerSelfAttentionLayer,
//   `enable_activation_checkpointing`); `enable_activation_offloading` needs it (the recipes raise otherwise).
// - `compile: True` compiles each layer and the loss (training/_compile.py compile_model per layer): runtime.compile.
// Validated on data/memory/measured_calibration.csv row 38 (torchtune's README table, Llama 3.2 3B, one A100):
// tests/memory/torchtune_test.cpp.
#include <string>

#include "frenzy/train/framework.hpp"

namespace frenzy::frameworks::torchtune {

inline constexpr std::string_view field = "runtime.framework=\"torchtune\"";

/// torchtune's precisions: `dtype` bf16 (pure) or fp32; fp16 is refused by training.get_dtype and there is no
/// autocast, so the mixed precisions and fp8 have no torchtune spelling.
inline std::string rejects_precision(precision p) {
    if (p == precision::bf16 || p == precision::fp32) return {};
    return "training.precision=\"" + std::string(to_string(p)) + "\" is not supported by " + std::string(field) +
           " (its recipes train in dtype bf16, pure bf16 without fp32 master weights, or fp32: training.precision "
           "\"bf16\" or \"fp32\")";
}

/// FSDP2 over data parallel ranks (distributed recipes) or one device (single-device recipes). Tensor and context
/// parallelism (full_finetune_distributed.py tensor_parallel_dim / context_parallel_dim) are not modelled here;
/// lora_finetune_distributed.py asserts tensor_parallel_dim == 1; no recipe pipelines (no pipeline_parallel key).
inline std::string rejects_layout(const parallel_config& p, const training_spec& t) {
    if (auto why = rejects_precision(t.precision); !why.empty()) return why;
    if (p.recompute == recompute::selective)
        return "parallel.recompute=\"selective\" is not supported by " + std::string(field) +
               " (enable_activation_checkpointing wraps whole TransformerSelfAttentionLayers: parallel.recompute=\"full\")";
    if (p.sharding == sharding::optimizer)
        return "parallel.sharding=\"optimizer\" is not supported by " + std::string(field) +
               " (FSDP2 fully_shard: sharding \"full\" or \"gradients\" = fsdp_reshard_after_forward false)";
    if (p.dp > 1 && p.sharding == sharding::none)
        return "parallel.sharding=\"none\" with " + field_text("parallel.dp", p.dp) + " is not supported by " +
               std::string(field) + " (its distributed recipes always shard with FSDP2: sharding \"full\" or \"gradients\")";
    if (p.tp > 1)
        return field_text("parallel.tp", p.tp) + " is not modelled for " + std::string(field) +
               " (tensor_parallel_dim: full_finetune_distributed only, lora_finetune_distributed asserts 1)";
    if (p.cp > 1) return field_text("parallel.cp", p.cp) + " is not modelled for " + std::string(field) + " (context_parallel_dim)";
    return rejects_model_parallel(field, p);
}

/// fsdp_cpu_offload (CPUOffloadPolicy) moves parameters, gradients and optimizer states together, in the
/// distributed recipes only; activation offloading (enable_activation_offloading) is modelled by
/// runtime.offload.activations.
inline std::string rejects_offload(const offload_spec& o, sharding sh) {
    if (o.optimizer != o.parameters)
        return "runtime.offload.optimizer/parameters must be set together for " + std::string(field) +
               " (fsdp_cpu_offload: FSDP2 CPUOffloadPolicy moves parameters, gradients and optimizer states)";
    if (o.parameters && sh == sharding::none)
        return "runtime.offload.parameters is not supported by " + std::string(field) +
               " on one GPU (fsdp_cpu_offload is read by the distributed recipes only)";
    return {};
}

inline constexpr framework_traits traits{
    .name = "torchtune",
    .summary = "torchtune's fine-tuning recipes: pure bf16, FSDP2 per layer or one device, eager layers, chunked CE",
    .table_words = {"torchtune"},
    .table_flags = {.optimizer = optimizer_impl::fused},
    .memory = {.master = master_weights::in_params, .grad_bytes_bf16 = 2, .grad_bytes_fp16 = 2, .dropout = false,
               .loss = loss_style::upcast_log_softmax, .selective = selective_kind::every_other_mm,
               .attention_score_buffer = false, .grad_bucket_copies = 0, .fused_elementwise = false,
               .eager_final_norm = true, .rope_fp32_copies = false, .rmsnorm_fp32_copy = true, .gqa_kv_repeat = true,
               .persistent_grads = false, .foreach_optimizer = false, .side_stream_reduce_scatter = true,
               .eager_logit_softcap = true, .fp8 = fp8_style::torchao},
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload,
              .fp8_recipes = torchao_fp8_recipes, .fp8_default = fp8_recipe::rowwise},
};

/// This framework as jobs and plans name it: a handle to `traits` (frameworks/registry.hpp lists it).
inline constexpr framework handle{traits};

}  // namespace frenzy::frameworks::torchtune
