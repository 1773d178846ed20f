#pragma once
// LitGPT (Lightning-AI/litgpt@26857050 on Lightning Fabric), as its CLI entry points run a model (litgpt/__main__.py:
// finetune_lora, finetune_full, pretrain). Each term is read from that commit:
// - Eager layers (litgpt/model.py): RMSNorm.forward upcasts (x = x.float() ... (x_normed * weight.float()).to(dtype)),
//   so it keeps an fp32 copy of its input (rmsnorm_fp32_copy); the final norm transformer.ln_f is the same module
//   (eager_final_norm); LLaMAMLP is eager silu(fc_1(x)) * fc_2(x) (fused_elementwise off); no dropout in the model.
// - CausalSelfAttention.forward: grouped-query k and v are expanded with k.repeat_interleave(q_per_kv, dim=1) before
//   F.scaled_dot_product_attention (no enable_gqa; "flash attention requires it in training mode"), so the kernel
//   saves them at the query width (gqa_kv_repeat).
// - apply_rope: (x * cos) + (rotated * sin) with cos/sin buffers that need no gradient, returned .to(dtype=x.dtype):
//   a multiplication by a constant saves only the constant, so no fp32 copy of q or k is kept (rope_fp32_copies off,
//   as the LoRA rows of tests/memory/methods_test.cpp confirm: +4.5% .. +7.6% with the term).
// - The loss: litgpt/utils.py chunked_cross_entropy (chunk_size=128) over F.cross_entropy; finetune/lora.py runs the
//   lm_head in 128-token chunks (model(input_ids, lm_head_chunk_size=128)), so one chunk's loss transients are live
//   at a time (loss_chunk_tokens = 128). The logits stay referenced by fit()'s `logits` through backward, and with the
//   saved log-softmax that is the 4 B a logit of loss_style::upcast_log_softmax under bf16-true (2 B + 2 B).
// - The optimizer: finetune/*.py build torch.optim.AdamW with no `fused` (instantiate_torch_optimizer), which on CUDA
//   takes the foreach path (foreach_optimizer); optimizer.zero_grad() sets gradients to None (not persistent).
//   pretrain.py passes fused=True and torch.compile's the model: such a job states runtime.optimizer "fused" and
//   runtime.compile; without them its estimate is the eager one (larger).
// - Precision (Fabric): "bf16-true" is training.precision "bf16" (the parameters themselves in bf16, no fp32
//   copy); "bf16-mixed" keeps fp32 parameters under torch.autocast (autocast_weight_copies on one device).
// - LoRA (litgpt/lora.py LoRALinear.forward): lora_dropout(x) @ lora_A.T @ lora_B.T in the input's dtype, no cast
//   (lora_adapter_cast off).
// - Layouts: one device runs strategy "auto" with no activation checkpointing; several devices always shard:
//   finetune/lora.py ModelParallelStrategy(parallelize_fn) fully_shard()s every Block and trainable Linear (FSDP2)
//   behind checkpoint_wrapper per Block; finetune/full.py FSDPStrategy(auto_wrap_policy={Block},
//   activation_checkpointing_policy={Block}) with FULL_SHARD; pretrain.py FSDPStrategy(sharding_strategy=
//   "HYBRID_SHARD") without activation checkpointing (shards within a node: the same as full sharding on one node).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "frenzy/train/framework.hpp"

namespace frenzy::frameworks::litgpt {

inline constexpr std::string_view field = "runtime.framework=\"litgpt\"";

/// A job trained from scratch (training.finetune.method "none"): LitGPT's `pretrain`; otherwise a fine-tune.
inline bool pretraining(const training_spec& t) { return !t.finetune.pretrained(); }

/// What LitGPT's scripts do with the job's method: no frozen leading layers, LoRA's MLP switch covers all three MLP
/// matrices (lora_mlp), QLoRA on one device only in 16-bit true precision (finetune/lora.py setup).
inline std::string rejects_method(const parallel_config& p, const training_spec& t) {
    const auto& ft = t.finetune;
    if (ft.method == finetune_method::freeze || ft.frozen_layers > 0)
        return "training.finetune.frozen_layers=" + std::to_string(ft.frozen_layers) + " is not supported by " +
               std::string(field) + " (finetune_full trains every layer; finetune_lora trains adapters)";
    const unsigned mlp = ft.targets & (lora_gate | lora_up | lora_down);
    if (ft.adapters() && mlp != 0 && mlp != (lora_gate | lora_up | lora_down))
        return "training.finetune.target_modules: " + std::string(field) + " puts adapters on all MLP matrices or none "
               "(lora_mlp covers gate, up and down)";
    if (ft.method == finetune_method::qlora && p.dp > 1)
        return "training.finetune.method=\"qlora\" with parallel.dp=" + std::to_string(p.dp) + " is not supported by " +
               std::string(field) + " (finetune/lora.py: quantization is not supported for multi-GPU training)";
    if (ft.method == finetune_method::qlora && t.precision != precision::bf16 && t.precision != precision::fp32)
        return "training.precision=\"" + std::string(to_string(t.precision)) + "\" with training.finetune.method=\"qlora\" is "
               "not supported by " + std::string(field) + " (finetune/lora.py: quantization and mixed precision is not supported)";
    return {};
}

/// The layouts LitGPT's scripts build (see the header): data parallel only; one device unsharded without
/// checkpointing; several devices fully sharded, with whole-Block checkpointing for fine-tunes and none for pretrain.
inline std::string rejects_layout(const parallel_config& p, const training_spec& t) {
    if (auto why = rejects_model_parallel(field, p); !why.empty()) return why;
    if (t.precision == precision::fp8_mixed || t.precision == precision::fp4_mixed)
        return "training.precision=\"" + std::string(to_string(t.precision)) + "\" is not supported by " + std::string(field) +
               " (Fabric precisions: bf16-true, bf16-mixed, 16-mixed, 32-true)";
    if (p.recompute == recompute::selective)
        return "parallel.recompute=\"selective\" is not supported by " + std::string(field) + " (checkpointing wraps whole Blocks)";
    if (p.dp == 1) {
        if (p.sharding != sharding::none)
            return "parallel.sharding=\"" + std::string(to_string(p.sharding)) + "\" with parallel.dp=1 is not supported by " +
                   std::string(field) + " (one device runs Fabric's strategy \"auto\", nothing sharded)";
        if (p.recompute != recompute::none)
            return "parallel.recompute=\"full\" with parallel.dp=1 is not supported by " + std::string(field) +
                   " (one device runs without activation checkpointing)";
    } else {
        if (p.sharding != sharding::full)
            return "parallel.sharding=\"" + std::string(to_string(p.sharding)) + "\" is not supported by " + std::string(field) +
                   " (several devices always run FSDP full sharding: parallel.sharding=\"full\")";
        const bool ckpt = !pretraining(t);
        if ((p.recompute == recompute::full) != ckpt)
            return "parallel.recompute=\"" + std::string(to_string(p.recompute)) + "\" is not supported by " + std::string(field) +
                   (ckpt ? " for a fine-tune on several devices (finetune_lora/finetune_full checkpoint every Block: "
                           "parallel.recompute=\"full\")"
                         : " for pretraining (pretrain.py's FSDPStrategy has no activation checkpointing: "
                           "parallel.recompute=\"none\")");
    }
    return rejects_method(p, t);
}

inline std::string rejects_offload(const offload_spec& o, sharding) {
    if (o.any())
        return "runtime.offload is not supported by " + std::string(field) +
               " (finetune/full.py FSDPStrategy(cpu_offload=False); the other scripts offload nothing)";
    return {};
}

inline constexpr framework_traits traits{
    .name = "litgpt",
    .summary = "LitGPT on Lightning Fabric: eager layers, chunked cross-entropy, one device or FSDP full sharding",
    .table_words = {"litgpt", "lit-gpt"},
    .memory = {.master = master_weights::in_params, .grad_bytes_bf16 = 4, .grad_bytes_fp16 = 4, .dropout = false,
               .loss = loss_style::upcast_log_softmax, .selective = selective_kind::every_other_mm,
               .attention_score_buffer = false, .grad_bucket_copies = 0, .fused_elementwise = false,
               .eager_final_norm = true, .rope_fp32_copies = false, .rmsnorm_fp32_copy = true, .gqa_kv_repeat = true,
               .persistent_grads = false, .foreach_optimizer = true, .autocast_weight_copies = true,
               .lora_adapter_cast = false, .side_stream_reduce_scatter = true, .eager_logit_softcap = true,
               .loss_chunk_tokens = 128, .fp8 = fp8_style::torchao},
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload,
              .fp8_recipes = torchao_fp8_recipes, .fp8_default = fp8_recipe::rowwise},
};

/// This framework as jobs and plans name it: a handle to `traits` (frameworks/registry.hpp lists it).
inline constexpr framework handle{traits};

// The Frenzy presets LitGPT has a model config for (Lightning-AI/litgpt@26857050 litgpt/config.py `configs`): the
// config name `litgpt pretrain` takes (model_name), the Hugging Face repository `litgpt download` saves under
// checkpoints/ORG/NAME (the checkpoint_dir of the finetune commands), and the config's n_layer and n_embd, which
// tests/launch/litgpt_test.cpp checks against tests/data/launch/litgpt_models.txt (read from config.py by
// tests/data/launch/extract_framework_keys.py litgpt-models) and against the preset.
// Left out: presets LitGPT has no config for (GPT-2/3, OPT, BLOOM, MPT, LLaMA 1, DeepSeek, GPT-NeoX-20B, Qwen1.5-MoE),
// and Gemma-2 (gemma-2-9b): its attention_logit_softcapping makes CausalSelfAttention run the eager
// q @ k.mT softmax path instead of SDPA (model.py scaled_dot_product_attention), which the litgpt profile does not count.
struct litgpt_model {
    std::string_view preset;     ///< Frenzy's preset name (model/presets.hpp)
    std::string_view config;     ///< litgpt/config.py `name` (with the family's "{}" formatted as "")
    std::string_view repo;       ///< hf_config org/name: checkpoints/<repo> after `litgpt download <repo>`
    std::int64_t layers = 0;     ///< n_layer
    std::int64_t hidden = 0;     ///< n_embd
};

inline constexpr std::array<litgpt_model, 27> models{{
    {"llama-2-7b", "Llama-2-7b-hf", "meta-llama/Llama-2-7b-hf", 32, 4096},
    {"llama-2-13b", "Llama-2-13b-hf", "meta-llama/Llama-2-13b-hf", 40, 5120},
    {"llama-2-70b", "Llama-2-70b-hf", "meta-llama/Llama-2-70b-hf", 80, 8192},
    {"llama-3.1-8b", "Llama-3.1-8B", "meta-llama/Meta-Llama-3.1-8B", 32, 4096},
    {"llama-3.1-70b", "Llama-3.1-70B", "meta-llama/Meta-Llama-3.1-70B", 80, 8192},
    {"llama-3.1-405b", "Llama-3.1-405B", "meta-llama/Meta-Llama-3.1-405B", 126, 16384},
    {"llama-3.2-1b", "Llama-3.2-1B", "meta-llama/Llama-3.2-1B", 16, 2048},
    {"llama-3.2-3b", "Llama-3.2-3B", "meta-llama/Llama-3.2-3B", 28, 3072},
    {"mistral-7b", "Mistral-7B-v0.1", "mistralai/Mistral-7B-v0.1", 32, 4096},
    {"mixtral-8x7b", "Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-v0.1", 32, 4096},
    {"mixtral-8x22b", "Mixtral-8x22B-v0.1", "mistralai/Mixtral-8x22B-v0.1", 56, 6144},
    {"qwen2.5-0.5b", "Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B", 24, 896},
    {"qwen2.5-1.5b", "Qwen2.5-1.5B", "Qwen/Qwen2.5-1.5B", 28, 1536},
    {"qwen2.5-3b", "Qwen2.5-3B", "Qwen/Qwen2.5-3B", 36, 2048},
    {"qwen2.5-7b", "Qwen2.5-7B", "Qwen/Qwen2.5-7B", 28, 3584},
    {"qwen2.5-14b", "Qwen2.5-14B", "Qwen/Qwen2.5-14B", 48, 5120},
    {"qwen2.5-32b", "Qwen2.5-32B", "Qwen/Qwen2.5-32B", 64, 5120},
    {"qwen2.5-72b", "Qwen2.5-72B", "Qwen/Qwen2.5-72B", 80, 8192},
    {"qwen3-1.7b", "Qwen3-1.7B", "Qwen/Qwen3-1.7B", 28, 2048},
    {"pythia-1b", "pythia-1b", "EleutherAI/pythia-1b", 16, 2048},
    {"pythia-6.9b", "pythia-6.9b", "EleutherAI/pythia-6.9b", 32, 4096},
    {"pythia-12b", "pythia-12b", "EleutherAI/pythia-12b", 36, 5120},
    {"gemma-2b", "Gemma-2b", "google/gemma-2b", 18, 2048},
    {"phi-3.5-mini", "Phi-3.5-mini-instruct", "microsoft/Phi-3.5-mini-instruct", 32, 3072},
    {"phi-4-mini", "Phi-4-mini-instruct", "microsoft/Phi-4-mini-instruct", 32, 3072},
    {"olmo-2-7b", "OLMo-2-1124-7B", "allenai/OLMo-2-1124-7B", 32, 4096},
    {"falcon-7b", "falcon-7b", "tiiuae/falcon-7b", 32, 4544},
}};

/// The LitGPT model of a preset name, or nullptr.
inline const litgpt_model* model_of_preset(std::string_view preset) {
    for (const auto& m : models)
        if (m.preset == preset) return &m;
    return nullptr;
}

/// The LitGPT model whose config name or checkpoints/ORG/NAME path (repo) is `name`, or nullptr.
inline const litgpt_model* model_of_litgpt_name(std::string_view name) {
    for (const auto& m : models)
        if (m.config == name || m.repo == name) return &m;
    return nullptr;
}

}  // namespace frenzy::frameworks::litgpt
