#pragma once
// Hugging Face transformers' Trainer (and accelerate's plain DDP loop), with PEFT for LoRA: the model's own eager
// layers (transformers/models/llama/modeling_llama.py: LlamaRMSNorm upcasts to fp32, rotary embedding by cos/sin in
// the activations' dtype, SDPA with enable_gqa when no mask is given, eager SwiGLU), the loss on logits.float()
// (loss/loss_utils.py ForCausalLMLoss), torch's fused AdamW (training_args.py: optim "adamw_torch_fused" from
// PyTorch 2.8), gradient checkpointing per decoder layer. Mixed precision is torch.autocast over fp32 weights
// (accelerate mixed_precision="bf16", Trainer(bf16=True)); a model loaded in bf16 (transformers 5's default dtype
// for bf16 checkpoints) trains in pure bf16. PEFT LoRA adapters are fp32 (autocast_adapter_dtype=True) and cast
// their input (tuners/lora/layer.py Linear.forward: _cast_input_dtype(x, lora_A.weight.dtype)).
// Measured on an H200 with transformers 5.17 and PEFT 0.21: data/memory/h200_measured.csv (h200-hf-* rows),
// scripts/measure/hf_peft_grid.py. Data parallel only: accelerate's FSDP and DeepSpeed back ends are the fsdp and
// deepspeed frameworks.
#include <string>

#include "frenzy/train/framework.hpp"

namespace frenzy::frameworks::hf {

inline constexpr std::string_view field = "runtime.framework=\"hf\"";

/// DistributedDataParallel under Trainer/accelerate: data parallel only, nothing sharded; gradient checkpointing
/// recomputes whole decoder layers (PreTrainedModel.gradient_checkpointing_enable), there is no selective recompute.
inline std::string rejects_layout(const parallel_config& p, const training_spec&) {
    if (p.recompute == recompute::selective)
        return "parallel.recompute=\"selective\" is not supported by " + std::string(field) +
               " (gradient checkpointing recomputes whole decoder layers: parallel.recompute=\"full\")";
    if (p.sharding != sharding::none)
        return "parallel.sharding=\"" + std::string(to_string(p.sharding)) + "\" is not supported by " +
               std::string(field) + " (accelerate's FSDP and DeepSpeed back ends are runtime.framework \"fsdp\" and \"deepspeed\")";
    return rejects_model_parallel(field, p);
}

inline std::string rejects_offload(const offload_spec& o, sharding) {
    if (o.optimizer || o.parameters)
        return "runtime.offload.optimizer/parameters are not supported by " + std::string(field) +
               " (offload runs through DeepSpeed: runtime.framework \"deepspeed\")";
    return {};
}

inline constexpr framework_traits traits{
    .name = "hf",
    .summary = "Hugging Face Trainer / accelerate with PEFT: the model's own eager layers, data parallel only",
    .table_words = {"hugging face", "peft", "accelerate"},
    .memory = {.master = master_weights::in_params, .grad_bytes_bf16 = 4, .grad_bytes_fp16 = 4, .dropout = false,
               .loss = loss_style::upcast_log_softmax, .selective = selective_kind::every_other_mm,
               .attention_score_buffer = false, .grad_bucket_copies = 1, .fused_elementwise = false,
               .eager_final_norm = true, .rope_fp32_copies = false, .rmsnorm_fp32_copy = true, .gqa_kv_repeat = false,
               .persistent_grads = false, .foreach_optimizer = false, .autocast_weight_copies = true,
               .lora_adapter_cast = true, .eager_logit_softcap = true, .fp8 = fp8_style::torchao},
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload, .liger_kernels = true},
};

}  // namespace frenzy::frameworks::hf
