#pragma once
// axolotl's config.yml -> job spec (`--from axolotl:config.yml`). Keys and defaults as axolotl's config models
// define them (axolotl-ai-cloud/axolotl@067b021c src/axolotl/utils/schemas/: config.py AxolotlInputConfig, model.py
// ModelInputConfig, peft.py LoraConfig, training.py HyperparametersConfig, fsdp.py FSDPConfig; liger keys
// src/axolotl/integrations/liger/args.py) and as src/axolotl/utils/config/__init__.py normalises them (bf16 "auto",
// torch_dtype, the use_reentrant=True default). Every key that moves memory is read into the job, or listed as not
// modelled (launcher_import::unknown, "(not modelled)"); every other key is listed as ignored. The world size is
// not in the file: import_options.world_size (estimate --gpus). Needs yaml-cpp (FRENZY_HAS_YAML).
#include <string>

#include <yaml-cpp/yaml.h>

#include "frenzy/frameworks/axolotl/traits.hpp"
#include "frenzy/frameworks/hf/trainer_yaml.hpp"
#include "frenzy/frameworks/registry.hpp"

namespace frenzy {

namespace detail {

/// What the keys say before they become the job (defaults as the config models state them).
struct axolotl_settings {
    std::string base_model, adapter, bf16 = "auto";  // LoraConfig.adapter None = full fine-tune; bf16 "auto"
    bool load_in_4bit = false, load_in_8bit = false, fp16 = false, bfloat16 = false, float16 = false, gradient_checkpointing = false;
    bool targets_given = false, target_linear = false, liger_plugin = false, liger_flce = false, sharded = false;
    std::string rl;                                        // rl: None = supervised fine-tuning
    bool precompute_ref = false, dpo_liger = false;        // precompute_ref_log_probs, dpo_use_liger_kernel
    std::int64_t rank = 8, accumulation = 1;  // PEFT LoraConfig r=8 when lora_r is None
    std::optional<double> alpha;
    unsigned targets = 0, modules_to_save = 0;
};

/// A key that moves memory in a way Frenzy does not model, when set: listed, never dropped silently.
inline void axolotl_not_modelled(const trainer_yaml& y, const std::string& key, const YAML::Node& v, const std::string& why) {
    if (trainer_yaml::unset(v)) return;
    if (const auto b = yaml_bool(v); v.IsScalar() && b && !*b) return;
    y.out.unknown.push_back(key + " (not modelled: " + why + ")");
}

/// Adapter keys (peft.py LoraConfig); false for a key of another group.
inline bool axolotl_adapter_key(const trainer_yaml& y, const std::string& k, const YAML::Node& v, axolotl_settings& s) {
    if (k == "adapter") s.adapter = trainer_yaml::unset(v) ? "" : y.text(v, k);
    else if (k == "load_in_4bit") s.load_in_4bit = !trainer_yaml::unset(v) && y.flag(v, k);
    else if (k == "load_in_8bit") s.load_in_8bit = !trainer_yaml::unset(v) && y.flag(v, k);
    else if (k == "lora_r") s.rank = trainer_yaml::unset(v) ? 8 : y.number(v, k, bounds::lora_rank);
    else if (k == "lora_alpha") {
        if (!trainer_yaml::unset(v)) s.alpha = y.real(v, k, real_bound{0, 1e6});
    } else if (k == "lora_dropout") y.out.job.training.finetune.dropout = trainer_yaml::unset(v) ? 0.0 : y.real(v, k, real_bound{0, 1});
    else if (k == "lora_target_modules") {
        if (!trainer_yaml::unset(v)) s.targets |= trainer_lora_targets(y, k, v), s.targets_given = true;
    } else if (k == "lora_target_linear") s.target_linear = !trainer_yaml::unset(v) && y.flag(v, k);
    else if (k == "lora_modules_to_save") {
        if (!trainer_yaml::unset(v)) s.modules_to_save = trainer_modules_to_save(y, k, v);
    }
    else if (k == "peft_use_dora") axolotl_not_modelled(y, k, v, "DoRA's magnitude vectors and their activations");
    else if (k == "peft_layers_to_transform") axolotl_not_modelled(y, k, v, "adapters on some layers only: counted on every layer");
    else if (k == "lora_target_parameters") axolotl_not_modelled(y, k, v, "LoRA on expert parameters");
    else if (k == "lora_mlp_kernel" || k == "lora_qkv_kernel" || k == "lora_o_kernel" || k == "lora_embedding_kernel")
        axolotl_not_modelled(y, k, v, "axolotl's fused LoRA autograd kernels save fewer activations");
    else if (k.rfind("unsloth_", 0) == 0)
        y.fail(k, "has been removed from axolotl (src/axolotl/utils/schemas/validation.py check_deprecated_unsloth_fields: "
                  "use lora_mlp_kernel, lora_qkv_kernel, lora_o_kernel)");
    else return false;
    return true;
}

/// The attention keys: attn_implementation and the deprecated booleans (config.py).
inline bool axolotl_attention_key(const trainer_yaml& y, const std::string& k, const YAML::Node& v, job_spec& j) {
    auto& a = j.runtime.attention;
    if (k == "attn_implementation") {
        if (trainer_yaml::unset(v)) return true;
        const auto impl = y.text(v, k);
        if (impl == "flash_attention_2" || impl == "flash_attention_3") a = attention_impl::flash;
        else if (impl == "eager") a = attention_impl::unfused;
        else if (impl != "sdpa") y.out.unknown.push_back(k + "=" + impl + " (not modelled: estimated with the GPU's default kernel)");
    } else if (k == "flash_attention" || k == "sdp_attention" || k == "eager_attention") {
        if (trainer_yaml::unset(v) || !y.flag(v, k)) return true;
        a = k == "flash_attention" ? attention_impl::flash : k == "eager_attention" ? attention_impl::unfused : attention_impl::automatic;
    } else if (k == "xformers_attention" || k == "flex_attention" || k == "sage_attention")
        axolotl_not_modelled(y, k, v, "estimated with the GPU's default kernel");
    else return false;
    return true;
}

/// Precision, checkpointing and compile keys (config.py).
inline bool axolotl_runtime_key(const trainer_yaml& y, const std::string& k, const YAML::Node& v, axolotl_settings& s, job_spec& j) {
    if (k == "bf16") s.bf16 = trainer_yaml::unset(v) ? "false" : y.text(v, k) == "auto" ? "auto" : y.flag(v, k) ? "true" : "false";
    else if (k == "fp16") s.fp16 = !trainer_yaml::unset(v) && y.flag(v, k);
    else if (k == "bfloat16") s.bfloat16 = !trainer_yaml::unset(v) && y.flag(v, k);
    else if (k == "float16") s.float16 = !trainer_yaml::unset(v) && y.flag(v, k);
    else if (k == "gradient_checkpointing") {
        if (trainer_yaml::unset(v)) return true;
        const auto t = y.text(v, k);
        s.gradient_checkpointing = t == "offload" || t == "offload_disk" || y.flag(v, k);
        if (t == "offload" || t == "offload_disk")
            y.out.unknown.push_back(k + "=" + t + " (not modelled: the checkpointed inputs moved to host memory are counted on the GPU)");
    } else if (k == "gradient_checkpointing_kwargs") {
        if (trainer_yaml::unset(v)) return true;
        if (!v.IsMap()) y.fail(k, "must be a mapping");
        for (const auto& kv : v) {
            const auto k2 = k + "." + kv.first.Scalar();
            if (kv.first.Scalar() == "use_reentrant") y.out.notes.push_back(k2 + "=" + (y.flag(kv.second, k2) ? "true" : "false") +
                " read: both save the same layer inputs, which Frenzy's full recompute counts");
            else y.out.ignored.push_back(k2);
        }
    } else if (k == "torch_compile") j.runtime.compile = !trainer_yaml::unset(v) && y.text(v, k) != "auto" && y.flag(v, k);
    else if (k == "activation_offloading" || k == "layer_offloading") axolotl_not_modelled(y, k, v, "host offload of activations or layers");
    else if (k == "fp8") axolotl_not_modelled(y, k, v, "torchao fp8 training of the linears: estimated in 16 bits");
    else if (k == "chunked_cross_entropy" || k == "tiled_mlp") axolotl_not_modelled(y, k, v, "chunked loss / MLP transients");
    else return false;
    return true;
}

/// Batch, sequence, optimizer and distributed keys (training.py, config.py, fsdp.py).
inline bool axolotl_training_key(const trainer_yaml& y, const std::string& k, const YAML::Node& v, axolotl_settings& s,
                                 job_spec& j, const std::string& dir) {
    auto& t = j.training;
    if (k == "sequence_len") t.seq_len = y.number(v, k, bounds::seq_len);
    else if (k == "micro_batch_size") t.micro_batch = trainer_yaml::unset(v) ? 1 : y.number(v, k, bounds::micro_batch);
    else if (k == "gradient_accumulation_steps") s.accumulation = trainer_yaml::unset(v) ? 1 : y.number(v, k, bounds::global_batch);
    else if (k == "optimizer") trainer_optimizer(y, k, trainer_yaml::unset(v) ? "adamw_torch_fused" : y.text(v, k), j);
    else if (k == "deepspeed") {
        if (trainer_yaml::unset(v)) return true;
        if (v.IsMap()) y.fail(k, "is an inline mapping; give the path of a DeepSpeed json");
        trainer_deepspeed(y, k, y.text(v, k), dir);
        s.sharded = true;
    } else if (k == "fsdp") {
        if (!trainer_yaml::unset(v)) trainer_fsdp_words(y, k, v, j), s.sharded = true;
    } else if (k == "fsdp_config") {
        if (trainer_yaml::unset(v)) return true;
        if (!v.IsMap()) y.fail(k, "must be a mapping");
        s.sharded = true;
        if (j.parallel.sharding == sharding::none) j.parallel.sharding = sharding::full;  // FSDPConfig: FULL_SHARD
        for (const auto& kv : v) {
            auto k2 = kv.first.Scalar();
            if (k2.rfind("fsdp_", 0) == 0 && k2 != "fsdp_version") k2 = k2.substr(5);  // validation.py drops the prefix
            const auto where = k + "." + kv.first.Scalar();
            if (k2 == "offload_params") {
                if (y.flag(kv.second, where)) j.runtime.offload.parameters = j.runtime.offload.optimizer = true;
            } else if (k2 == "activation_checkpointing") {
                if (y.flag(kv.second, where)) j.parallel.recompute = recompute::full;
            } else if (k2 == "sharding_strategy" || k2 == "reshard_after_forward") {
                const auto st = y.text(kv.second, where);
                if (st == "SHARD_GRAD_OP" || st == "2" || st == "false") j.parallel.sharding = sharding::gradients;
                else if (st == "NO_SHARD" || st == "3") j.parallel.sharding = sharding::none;
            } else y.out.ignored.push_back(where);
        }
    } else if (k == "context_parallel_size" || k == "tensor_parallel_size" || k == "dp_shard_size") {
        if (!trainer_yaml::unset(v) && y.number(v, k, bounds::degree) > 1)
            y.out.unknown.push_back(k + " (not modelled: Trainer's profile is data parallel only)");
    } else return false;
    return true;
}

/// Liger (integrations/liger/args.py) and the other plugins and memory-moving keys of the rest of config.py.
inline bool axolotl_plugin_key(const trainer_yaml& y, const std::string& k, const YAML::Node& v, axolotl_settings& s) {
    if (k == "plugins") {
        if (trainer_yaml::unset(v)) return true;
        if (!v.IsSequence()) y.fail(k, "must be a list of plugin classes");
        for (const auto& p : v) {
            const auto name = y.text(p, k);
            if (name.find("liger") != std::string::npos) s.liger_plugin = true;
            else y.out.unknown.push_back(k + ": " + name + " (not modelled)");
        }
    } else if (k == "liger_fused_linear_cross_entropy") s.liger_flce = !trainer_yaml::unset(v) && y.flag(v, k);
    else if (k == "liger_rms_norm" || k == "liger_glu_activation" || k == "liger_rope" || k == "liger_cross_entropy" ||
             k == "liger_layer_norm" || k == "liger_swiglu")
        y.out.ignored.push_back(k + " (runtime.liger counts Liger's kernels together, by liger_fused_linear_cross_entropy)");
    else if (k == "sample_packing") {
        if (!trainer_yaml::unset(v) && y.flag(v, k))
            y.out.notes.push_back("sample_packing=true: the packed micro-batch holds sequence_len tokens per sample, the peak "
                                  "Frenzy counts at that length");
    } else if (k == "unfrozen_parameters") axolotl_not_modelled(y, k, v, "a partial freeze by name: counted as the full fine-tune");
    else return false;
    return true;
}

/// Preference-training keys (config.py; enums.py RLType). rl: dpo and ipo build TRL's DPOTrainer
/// (src/axolotl/core/builders/rl.py: RLType.DPO and RLType.IPO -> DPOStrategy; ipo only sets loss_type, a scalar of
/// the same log-probabilities), with a reference model loaded again for a full fine-tune and none under adapters
/// (src/axolotl/train.py setup_reference_model: TRL disables the adapters; rl_adapter_ref_model is no schema field,
/// so pydantic drops it and it stays listed as ignored). The beta, label smoothing, loss types and weights scale the
/// loss only: ignored.
inline bool axolotl_preference_key(const trainer_yaml& y, const std::string& k, const YAML::Node& v, axolotl_settings& s) {
    if (k == "rl") s.rl = trainer_yaml::unset(v) ? "" : y.text(v, k);
    else if (k == "precompute_ref_log_probs") s.precompute_ref = !trainer_yaml::unset(v) && y.flag(v, k);
    else if (k == "dpo_use_liger_kernel") s.dpo_liger = !trainer_yaml::unset(v) && y.flag(v, k);  // TRL use_liger_kernel
    else if (k == "dpo_padding_free") {
        if (!trainer_yaml::unset(v) && y.flag(v, k))
            y.out.notes.push_back(k + "=true: the pair's sequences are packed without padding; Frenzy counts each at sequence_len");
    } else if (k == "dpo_norm_loss" || k == "dpo_use_logits_to_keep" || k == "dpo_generate_during_eval" || k == "rpo_alpha") {
        if (!trainer_yaml::unset(v))  // src/axolotl/utils/schemas/deprecated.py raises DeprecationWarning when set
            y.fail(k, "is no longer supported by axolotl (removed in TRL >= 0.29.0; src/axolotl/utils/schemas/deprecated.py)");
    } else return false;
    return true;
}

/// rl into the job's objective: dpo and ipo are TRL's DPOTrainer (objective dpo); the other trainers are refused by
/// name (orpo, simpo: a CPO/ORPO trainer; kto: unpaired; grpo, gdpo, ebft: generation and reward models).
inline void axolotl_objective(const trainer_yaml& y, const axolotl_settings& s, job_spec& j) {
    auto& ft = j.training.finetune;
    if (s.rl.empty()) {
        if (s.precompute_ref) y.fail("precompute_ref_log_probs", "=true needs rl: dpo or ipo (a reference model to precompute)");
        return;
    }
    if (s.rl != "dpo" && s.rl != "ipo")
        y.fail("rl", "=" + printable(s.rl) + " is not modelled (dpo and ipo are: TRL's DPOTrainer; orpo, simpo, kto, grpo, "
                     "gdpo and ebft train with other trainers, reward models or generation)");
    ft.objective = finetune_objective::dpo;
    ft.precompute_ref_log_probs = s.precompute_ref;
    if (s.dpo_liger && s.precompute_ref)  // trl/trainer/dpo_trainer.py: the Liger DPO loss cannot precompute
        y.fail("dpo_use_liger_kernel", "=true with precompute_ref_log_probs=true: TRL's Liger DPO loss does not support "
                                       "precomputed reference log-probabilities");
    // TrainingArguments.use_liger_kernel: transformers patches the model's kernels and TRL runs the fused linear DPO loss
    if (s.dpo_liger) j.runtime.liger = true;
}

/// The job's precision: the base model is loaded in bf16 when bf16 is on ("auto": an Ampere or newer GPU), so a full
/// fine-tune without sharding trains in pure bf16 (AdamW states in bf16); adapters (fp32 under PEFT's autocast) and
/// sharded engines (DeepSpeed's fp32 master, FSDP's upcast) are bf16-mixed.
inline precision axolotl_precision(const axolotl_settings& s, bool adapters, launcher_import& out) {
    const bool bf16 = s.bf16 == "true" || (s.bf16 == "auto" && !s.fp16);
    if (s.bf16 == "auto" && !s.fp16) out.notes.push_back("bf16=auto read as bf16 (an Ampere or newer GPU; give bf16: false otherwise)");
    if (bf16 || s.bfloat16) return adapters || s.sharded ? precision::bf16_mixed : precision::bf16;
    if (s.fp16 || s.float16) return precision::fp16_mixed;
    return precision::fp32;
}

/// The fine-tuning method and LoRA settings from the adapter keys.
inline void axolotl_method(const trainer_yaml& y, const axolotl_settings& s, job_spec& j) {
    auto& ft = j.training.finetune;
    if (s.adapter.empty()) {
        if (s.load_in_4bit) y.fail("load_in_4bit", "=true needs adapter: qlora (4-bit weights cannot be fully fine-tuned)");
        if (s.load_in_8bit) y.fail("load_in_8bit", "=true needs adapter: lora (8-bit weights cannot be fully fine-tuned)");
        if (s.modules_to_save != 0) y.fail("lora_modules_to_save", "needs adapter: lora or qlora (a full fine-tune trains them in place)");
        ft.method = finetune_method::full;
        return;
    }
    if (s.adapter != "lora" && s.adapter != "qlora")
        y.fail("adapter", "=" + printable(s.adapter) + " is not modelled (lora or qlora; none for a full fine-tune)");
    ft.method = s.adapter == "qlora" || s.load_in_4bit ? finetune_method::qlora : finetune_method::lora;
    // load_in_8bit: transformers' BitsAndBytesConfig(load_in_8bit=True) (src/axolotl/loaders/model.py), LoRA only
    if (s.load_in_8bit && ft.method == finetune_method::qlora)
        y.fail("load_in_8bit", "=true with " + std::string(s.load_in_4bit ? "load_in_4bit" : "adapter: qlora") +
                                   ": the base is either 8-bit (adapter: lora) or 4-bit (QLoRA)");
    ft.load_in_8bit = s.load_in_8bit;
    ft.modules_to_save = s.modules_to_save;
    if (ft.method == finetune_method::qlora) ft.double_quant = true;  // loaders/model.py: bnb_4bit_use_double_quant True
    ft.rank = s.rank;
    ft.alpha = s.alpha.value_or(8.0);  // PEFT LoraConfig lora_alpha=8 when None
    ft.targets = s.target_linear ? lora_all_linear : s.targets;
    if (!s.targets_given && !s.target_linear) {
        ft.targets = lora_q | lora_v;  // PEFT's default for Llama-style models (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING)
        y.out.notes.push_back("no lora_target_modules: PEFT's default for the model type, q_proj and v_proj, assumed");
    }
}

}  // namespace detail

/// config.yml -> job (axolotl over Trainer: dp = the world size, opt.world_size). `dir` is the folder of the file,
/// where a `deepspeed` json is looked for first.
inline launcher_import axolotl_import_yaml(const std::string& text, const import_options& opt = {}, const std::string& dir = ".") {
    launcher_import out;
    const detail::trainer_yaml y{"axolotl config.yml", out};
    const YAML::Node root = detail::trainer_yaml_load(text, y.file);
    auto& j = out.job;
    j.runtime.framework = frameworks::axolotl::handle;
    j.training.seq_len = 512;  // config.py sequence_len default
    detail::axolotl_settings s;
    for (const auto& kv : root) {
        const auto k = kv.first.Scalar();
        const YAML::Node& v = kv.second;
        if (k == "base_model") s.base_model = y.text(v, k);
        else if (!detail::axolotl_adapter_key(y, k, v, s) && !detail::axolotl_attention_key(y, k, v, j) &&
                 !detail::axolotl_runtime_key(y, k, v, s, j) && !detail::axolotl_training_key(y, k, v, s, j, dir) &&
                 !detail::axolotl_plugin_key(y, k, v, s) && !detail::axolotl_preference_key(y, k, v, s))
            out.ignored.push_back(k);
    }
    if (s.base_model.empty() && opt.model.layers <= 0) y.fail("base_model", "is missing (the model to fine-tune)");
    j.model = detail::trainer_base_model(y, "base_model", s.base_model, opt.model);
    detail::axolotl_method(y, s, j);
    detail::axolotl_objective(y, s, j);
    j.training.precision = detail::axolotl_precision(s, j.training.finetune.adapters(), out);
    if (s.gradient_checkpointing && j.parallel.recompute == recompute::none) j.parallel.recompute = recompute::full;
    if (s.liger_plugin && s.liger_flce) j.runtime.liger = true;
    else if (s.liger_plugin) out.unknown.push_back("plugins: Liger without liger_fused_linear_cross_entropy (not modelled: "
                                                   "runtime.liger counts the fused loss with the other kernels)");
    detail::trainer_finish(out, opt, s.accumulation);
    return out;
}

}  // namespace frenzy
