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
// scripts/measure/hf_peft_grid.py.
//
// Sharded layouts run under `accelerate launch` with one of accelerate's back ends (huggingface/accelerate@16cb6eb8),
// chosen by parallel.sharding alone (backend_of):
//  - none: DistributedDataParallel (torchrun; the profile above, measured);
//  - optimizer / gradients: DeepSpeed ZeRO-1 / ZeRO-2 (DeepSpeedPlugin, src/accelerate/utils/dataclasses.py). With
//    mixed_precision bf16 accelerate sets bf16.enabled in the DeepSpeed config and no autocast (accelerator.py:
//    native_amp stays False for DEEPSPEED); DeepSpeed casts the module to bf16 and its ZeRO optimizer keeps the fp32
//    master partitions, gradients in bf16 and a 5e8-element reduce bucket (the deepspeed profile's facts at
//    microsoft/DeepSpeed@38327e07: accelerate's config writes no bucket size, so DeepSpeed's default holds). LoRA
//    adapters are cast to bf16 with the module: no input cast of their own.
//  - full: FSDP2 (fully_shard, fsdp_version 2, reshard_after_forward true = FULL_SHARD). With mixed_precision bf16
//    accelerate upcasts the trainable parameters to fp32 (utils/fsdp_utils.py fsdp2_prepare_model: "Upcast to fp32
//    master weights; MixedPrecisionPolicy.param_dtype handles compute cast"; frozen ones keep their load dtype) and
//    sets MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=bf16) (dataclasses.py set_mixed_precision): sharded
//    fp32 parameters, layers gathered in bf16 (no autocast weight copies: the gathered weights are bf16 already, and
//    the LoRA adapters are gathered in bf16 too, so PEFT's input cast is a no-op), gradients reduce-scattered on
//    FSDP2's side stream and kept sharded in fp32; no DDP bucket. FSDP2 always uses the original parameters
//    (use_orig_params is obsolete there, dataclasses.py), which PEFT needs.
// Offload is refused: DeepSpeed's ZeRO-Offload raises on the Trainer's torch optimizer unless
// zero_force_ds_cpu_optimizer is false (deepspeed/runtime/engine.py _configure_basic_optimizer), a key accelerate's
// config does not carry. The launcher writes accelerate_config.yaml for the sharded back ends (launcher.hpp).
#include <string>

#include "frenzy/train/framework.hpp"

namespace frenzy::frameworks::hf {

inline constexpr std::string_view field = "runtime.framework=\"hf\"";

/// The engine under Trainer for a layout: torchrun + DDP, or accelerate's DeepSpeed or FSDP back end.
enum class backend { ddp, deepspeed, fsdp };

/// The rule: sharding none -> DDP; optimizer / gradients (ZeRO-1 / ZeRO-2, which FSDP has no strategy for at that
/// level: FSDP2's reshard_after_forward=False also shards the weights at rest) -> DeepSpeed; full -> FSDP2.
constexpr backend backend_of(sharding s) {
    return s == sharding::none ? backend::ddp : s == sharding::full ? backend::fsdp : backend::deepspeed;
}

/// The layouts Trainer runs, with `who` naming the framework in the message (the stacks over Trainer reuse it).
inline std::string rejects_layout_of(std::string_view who, const parallel_config& p, const training_spec& t) {
    if (p.recompute == recompute::selective)
        return "parallel.recompute=\"selective\" is not supported by " + std::string(who) +
               " (gradient checkpointing recomputes whole decoder layers: parallel.recompute=\"full\")";
    if (backend_of(p.sharding) == backend::deepspeed && t.precision == precision::bf16)
        return "training.precision=\"bf16\" with parallel.sharding=\"" + std::string(to_string(p.sharding)) + "\" is not "
               "supported by " + std::string(who) + " (accelerate's DeepSpeed back end runs bf16 with fp32 master weights, "
               "bf16-mixed; pure bf16 runs unsharded or on FSDP: parallel.sharding \"none\" or \"full\")";
    return rejects_model_parallel(who, p);
}
inline std::string rejects_layout(const parallel_config& p, const training_spec& t) { return rejects_layout_of(field, p, t); }

inline std::string rejects_offload(const offload_spec& o, sharding) {
    if (o.optimizer || o.parameters)
        return "runtime.offload.optimizer/parameters are not supported by " + std::string(field) +
               " (DeepSpeed's ZeRO-Offload refuses the Trainer's torch optimizer unless zero_force_ds_cpu_optimizer is "
               "false, which accelerate's config cannot set: runtime.framework \"deepspeed\")";
    return {};
}

/// The profile of the back end that runs layout `p` (the measured DDP profile unchanged for sharding none).
inline framework_profile layout_memory(const framework_profile& ddp, const parallel_config& p) {
    auto f = ddp;
    switch (backend_of(p.sharding)) {
        case backend::ddp: return f;
        case backend::deepspeed:  // DeepSpeed ZeRO under bf16: 16-bit module, fp32 master in the optimizer
            f.master = master_weights::separate;
            f.grad_bytes_bf16 = 2;
            f.grad_bytes_fp16 = 2;
            f.bucket_elements = 5e8;
            f.persistent_grads = true;
            break;
        case backend::fsdp:  // FSDP2: sharded fp32 parameters, bf16 gathers, side-stream reduce-scatter
            f.side_stream_reduce_scatter = true;
            break;
    }
    f.grad_bucket_copies = 0;        // no DDP Reducer
    f.autocast_weight_copies = false;  // no autocast over fp32 weights: bf16 module (DeepSpeed) or bf16 gathers (FSDP2)
    f.lora_adapter_cast = false;     // the adapters compute in bf16 as the frozen linear does
    return f;
}

inline constexpr framework_traits traits{
    .name = "hf",
    .summary = "Hugging Face Trainer / accelerate with PEFT: the model's own eager layers, DDP, DeepSpeed ZeRO-1/2 or FSDP2",
    .table_words = {"hugging face", "peft", "accelerate"},
    .memory = {.master = master_weights::in_params, .grad_bytes_bf16 = 4, .grad_bytes_fp16 = 4, .dropout = false,
               .loss = loss_style::upcast_log_softmax, .selective = selective_kind::every_other_mm,
               .attention_score_buffer = false, .grad_bucket_copies = 1, .fused_elementwise = false,
               .eager_final_norm = true, .rope_fp32_copies = false, .rmsnorm_fp32_copy = true, .gqa_kv_repeat = false,
               .persistent_grads = false, .foreach_optimizer = false, .autocast_weight_copies = true,
               .lora_adapter_cast = true, .eager_logit_softcap = true, .fp8 = fp8_style::torchao},
    .layout_memory = layout_memory,
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload, .liger_kernels = true,
              .fp8_recipes = torchao_fp8_recipes, .fp8_default = fp8_recipe::rowwise, .adapters_by_default = true,
              .dpo = true},
};

/// This framework as jobs and plans name it: a handle to `traits` (frameworks/registry.hpp lists it).
inline constexpr framework handle{traits};

}  // namespace frenzy::frameworks::hf
