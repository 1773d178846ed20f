#pragma once
// LLaMA-Factory's train.yaml (`llamafactory-cli train train.yaml`) -> job spec (`--from llamafactory:train.yaml`).
// Keys and defaults as its argument dataclasses define them (hiyouga/LLaMA-Factory@ff6d4d12 src/llamafactory/hparams/:
// model_args.py ModelArguments and QuantizationArguments, data_args.py DataArguments, finetuning_args.py
// FinetuningArguments with LoraArguments and FreezeArguments, training_args.py TrainingArguments over transformers'
// Seq2SeqTrainingArguments), and as the model loader applies them: gradient checkpointing on unless
// disable_gradient_checkpointing (model/model_utils/checkpointing.py), trainable parameters cast to fp32 unless
// pure_bf16 (model/adapter.py init_adapter: bf16-mixed), lora_target "all" = every linear of the layers,
// lora_alpha = 2 x lora_rank when unset. Every key that moves memory is read into the job, or listed as not
// modelled; every other key is listed as ignored. The world size is not in the file: import_options.world_size.
// Needs yaml-cpp (FRENZY_HAS_YAML).
#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "frenzy/frameworks/hf/trainer_yaml.hpp"
#include "frenzy/frameworks/llamafactory/traits.hpp"
#include "frenzy/frameworks/registry.hpp"

namespace frenzy {

namespace detail {

/// What the keys say before they become the job (the dataclasses' defaults).
struct llamafactory_settings {
    std::string model, method = "lora", stage = "sft", lora_target = "all";  // finetuning_type lora, stage sft
    std::int64_t rank = 8, trainable_layers = 2, accumulation = 1, quantization_bit = 0;
    std::optional<double> alpha;
    bool bf16 = false, fp16 = false, pure_bf16 = false, gradient_checkpointing = true, from_scratch = false;
    bool double_quant = true, sharded = false;
    unsigned modules_to_save = 0;  ///< additional_target (PEFT modules_to_save)
    std::string pref_loss = "sigmoid", ref_model;  // RLHFArguments pref_loss, ref_model
    std::int64_t ref_quantization_bit = 0;          // RLHFArguments ref_model_quantization_bit (None)
};

/// A key that moves memory in a way Frenzy does not model, when set to anything but false/none.
inline void llamafactory_not_modelled(const trainer_yaml& y, const std::string& key, const YAML::Node& v, const std::string& why) {
    if (trainer_yaml::unset(v)) return;
    if (const auto b = yaml_bool(v); v.IsScalar() && b && !*b) return;
    y.out.unknown.push_back(key + " (not modelled: " + why + ")");
}

/// ModelArguments and QuantizationArguments keys (model_args.py).
inline bool llamafactory_model_key(const trainer_yaml& y, const std::string& k, const YAML::Node& v, llamafactory_settings& s,
                                   job_spec& j) {
    if (k == "model_name_or_path") s.model = y.text(v, k);
    else if (k == "flash_attn") {  // extras/constants.py AttentionFunction: auto | disabled | sdpa | fa2 | fa3
        const auto a = y.text(v, k);
        if (a == "fa2" || a == "fa3") j.runtime.attention = attention_impl::flash;
        else if (a == "disabled") j.runtime.attention = attention_impl::unfused;
        else if (a != "auto" && a != "sdpa") y.fail(k, "=" + printable(a) + " must be auto, disabled, sdpa, fa2 or fa3");
    } else if (k == "enable_liger_kernel") j.runtime.liger = !trainer_yaml::unset(v) && y.flag(v, k);
    else if (k == "disable_gradient_checkpointing") s.gradient_checkpointing = trainer_yaml::unset(v) || !y.flag(v, k);
    else if (k == "use_reentrant_gc") {
        if (!trainer_yaml::unset(v)) y.out.notes.push_back(k + "=" + (y.flag(v, k) ? "true" : "false") +
                                                           " read: both save the same layer inputs, which Frenzy's full recompute counts");
    } else if (k == "quantization_bit") s.quantization_bit = trainer_yaml::unset(v) ? 0 : y.number(v, k, int_bound{1, 64});
    else if (k == "quantization_method") {
        if (!trainer_yaml::unset(v) && y.text(v, k) != "bnb" && y.text(v, k) != "bitsandbytes")
            y.fail(k, "=" + printable(y.text(v, k)) + " is not modelled (bnb: bitsandbytes NF4/FP4, 4 bits a weight)");
    } else if (k == "double_quantization") s.double_quant = trainer_yaml::unset(v) || y.flag(v, k);
    else if (k == "train_from_scratch") s.from_scratch = !trainer_yaml::unset(v) && y.flag(v, k);
    else if (k == "use_unsloth") llamafactory_not_modelled(y, k, v, "Unsloth's fused kernels and its offloaded checkpointing");
    else if (k == "use_unsloth_gc") llamafactory_not_modelled(y, k, v, "Unsloth's checkpointing offloads the layer inputs to host memory");
    else if (k == "upcast_layernorm" || k == "upcast_lmhead_output") llamafactory_not_modelled(y, k, v, "fp32 norms / logits copies");
    else if (k == "shift_attn" || k == "mixture_of_depths") llamafactory_not_modelled(y, k, v, "attention/layer variant");
    else return false;
    return true;
}

/// FinetuningArguments keys (finetuning_args.py).
inline bool llamafactory_method_key(const trainer_yaml& y, const std::string& k, const YAML::Node& v, llamafactory_settings& s) {
    if (k == "finetuning_type") s.method = y.text(v, k);
    else if (k == "stage") s.stage = y.text(v, k);
    else if (k == "lora_rank") s.rank = y.number(v, k, bounds::lora_rank);
    else if (k == "lora_alpha") {
        if (!trainer_yaml::unset(v)) s.alpha = y.real(v, k, real_bound{0, 1e6});
    } else if (k == "lora_dropout") y.out.job.training.finetune.dropout = y.real(v, k, real_bound{0, 1});
    else if (k == "lora_target") s.lora_target = y.text(v, k);
    else if (k == "freeze_trainable_layers") s.trainable_layers = y.number(v, k, int_bound{-bounds::layers.max, bounds::layers.max});
    else if (k == "pure_bf16") s.pure_bf16 = y.flag(v, k);
    else if (k == "additional_target") {
        if (!trainer_yaml::unset(v)) s.modules_to_save = trainer_modules_to_save(y, k, v);
    }
    else if (k == "use_dora") llamafactory_not_modelled(y, k, v, "DoRA's magnitude vectors and their activations");
    else if (k == "freeze_extra_modules") llamafactory_not_modelled(y, k, v, "extra trainable modules");
    else if (k == "freeze_trainable_modules") {
        if (y.text(v, k) != "all") y.out.unknown.push_back(k + " (not modelled: the trainable layers are counted whole)");
    } else if (k == "use_galore" || k == "use_apollo" || k == "use_badam" || k == "use_adam_mini" || k == "use_muon") {
        if (!trainer_yaml::unset(v) && y.flag(v, k))
            y.fail(k, "=true replaces the optimizer with one Frenzy does not model (its states differ from AdamW's)");
    } else if (k == "use_llama_pro" || k == "use_mca" || k == "use_megatron_bridge" || k == "use_hyper_parallel")
        llamafactory_not_modelled(y, k, v, "another training engine or block expansion");
    else return false;
    return true;
}

/// DataArguments and Trainer's TrainingArguments keys (data_args.py; transformers training_args.py).
inline bool llamafactory_training_key(const trainer_yaml& y, const std::string& k, const YAML::Node& v, llamafactory_settings& s,
                                      job_spec& j, const std::string& dir) {
    auto& t = j.training;
    if (k == "cutoff_len") t.seq_len = y.number(v, k, bounds::seq_len);
    else if (k == "per_device_train_batch_size") t.micro_batch = y.number(v, k, bounds::micro_batch);
    else if (k == "gradient_accumulation_steps") s.accumulation = y.number(v, k, bounds::global_batch);
    else if (k == "bf16") s.bf16 = y.flag(v, k);
    else if (k == "fp16") s.fp16 = y.flag(v, k);
    else if (k == "optim") trainer_optimizer(y, k, y.text(v, k), j);
    else if (k == "torch_compile") j.runtime.compile = y.flag(v, k);
    else if (k == "deepspeed") {
        if (trainer_yaml::unset(v)) return true;
        trainer_deepspeed(y, k, y.text(v, k), dir);
        s.sharded = true;
    } else if (k == "fsdp") {
        if (!trainer_yaml::unset(v)) trainer_fsdp_words(y, k, v, j), s.sharded = j.parallel.sharding != sharding::none;
    } else if (k == "packing" || k == "neat_packing") {
        if (!trainer_yaml::unset(v) && y.flag(v, k))
            y.out.notes.push_back(k + "=true: packed samples fill cutoff_len tokens, the peak Frenzy counts at that length");
    } else if (k == "gradient_checkpointing") {
        if (y.flag(v, k)) s.gradient_checkpointing = true;
    } else return false;
    return true;
}

/// RLHFArguments keys of DPO (finetuning_args.py). pref_beta, pref_ftx (an SFT term on the policy's chosen
/// log-probabilities: train/dpo/trainer.py sft_loss), pref_bco_weight, dpo_label_smoothing, simpo_gamma and ld_alpha
/// scale the loss only: listed as ignored.
inline bool llamafactory_preference_key(const trainer_yaml& y, const std::string& k, const YAML::Node& v, llamafactory_settings& s) {
    if (k == "pref_loss") s.pref_loss = y.text(v, k);
    else if (k == "ref_model") s.ref_model = trainer_yaml::unset(v) ? "" : y.text(v, k);
    else if (k == "ref_model_quantization_bit") s.ref_quantization_bit = trainer_yaml::unset(v) ? 0 : y.number(v, k, int_bound{1, 64});
    else return false;
    return true;
}

/// stage into the job's objective. stage dpo runs CustomDPOTrainer (train/dpo/workflow.py run_dpo) over TRL's
/// DPOTrainer: chosen and rejected in one forward (PairwiseDataCollatorWithPadding; trainer.py concatenated_forward)
/// and a no-grad reference forward (compute_reference_log_probs) of a reference loaded again for full and freeze
/// fine-tunes, or of the base with the adapters disabled under LoRA (train/trainer_utils.py create_ref_model). The
/// losses orpo and simpo hold no reference (finetuning_args.py __post_init__: use_ref_model = stage == "dpo" and
/// pref_loss not in [orpo, simpo]; compute_reference_log_probs returns None): the same memory and work as DPO with
/// precomputed reference log-probabilities, so they are read as that. rm, ppo and kto are refused by name.
inline void llamafactory_objective(const trainer_yaml& y, const llamafactory_settings& s, job_spec& j) {
    auto& ft = j.training.finetune;
    if (s.stage == "sft" || s.stage == "pt") return;
    if (s.stage != "dpo")
        y.fail("stage", "=" + printable(s.stage) + " is not modelled (pt, sft and dpo are; rm adds a value head, ppo a "
                        "reward model, a value head and generation, kto unpaired sequences)");
    static constexpr std::array<std::string_view, 6> losses{"sigmoid", "hinge", "ipo", "kto_pair", "orpo", "simpo"};
    if (std::find(losses.begin(), losses.end(), s.pref_loss) == losses.end())
        y.fail("pref_loss", "=" + printable(s.pref_loss) + " must be sigmoid, hinge, ipo, kto_pair, orpo or simpo");
    ft.objective = finetune_objective::dpo;
    ft.precompute_ref_log_probs = s.pref_loss == "orpo" || s.pref_loss == "simpo";
    if (ft.precompute_ref_log_probs)
        y.out.notes.push_back("pref_loss=" + s.pref_loss + ": no reference model (use_ref_model false), counted as DPO with "
                              "precomputed reference log-probabilities (training.finetune.precompute_ref_log_probs)");
    else if (!s.ref_model.empty() && ft.adapters())
        y.out.unknown.push_back("ref_model (not modelled: a separate reference model beside the adapters' base; counted as "
                                "the base with the adapters disabled)");
    else if (s.ref_quantization_bit != 0 && !ft.adapters())
        y.out.unknown.push_back("ref_model_quantization_bit (not modelled: the reference copy is counted at the training precision)");
    // model/loader.py: apply_liger_kernel(require_logits=stage not in [pt, sft]) leaves the fused linear loss off
    if (j.runtime.liger) {
        j.runtime.liger = false;
        y.out.unknown.push_back("enable_liger_kernel (not modelled for stage dpo: Liger's kernels without its fused linear "
                                "loss, which the reference logits need)");
    }
}

/// finetuning_type and the quantization into the job's fine-tuning method.
inline void llamafactory_method(const trainer_yaml& y, const llamafactory_settings& s, job_spec& j) {
    auto& ft = j.training.finetune;
    if (s.quantization_bit != 0 && s.quantization_bit != 4 && s.quantization_bit != 8)
        y.fail("quantization_bit", "=" + std::to_string(s.quantization_bit) +
                                   " is not modelled (4: bitsandbytes QLoRA, 8: bitsandbytes LLM.int8)");
    if (s.method == "lora") {
        ft.method = s.quantization_bit == 4 ? finetune_method::qlora : finetune_method::lora;
        // quantization_bit 8: BitsAndBytesConfig(load_in_8bit=True) (model/model_utils/quantization.py)
        ft.load_in_8bit = s.quantization_bit == 8;
        ft.modules_to_save = s.modules_to_save;
        ft.double_quant = s.double_quant;
        ft.rank = s.rank;
        ft.alpha = s.alpha.value_or(2.0 * static_cast<double>(s.rank));  // finetuning_args.py: lora_rank * 2
        ft.targets = s.lora_target == "all" ? lora_all_linear : trainer_lora_targets(y, "lora_target", YAML::Node(s.lora_target));
        return;
    }
    if (s.quantization_bit != 0) y.fail("quantization_bit", "needs finetuning_type lora (quantized weights train adapters only)");
    if (s.modules_to_save != 0) y.fail("additional_target", "needs finetuning_type lora (the other types train those modules in place)");
    if (s.method == "full") ft.method = s.from_scratch ? finetune_method::none : finetune_method::full;
    else if (s.method == "freeze") {
        const auto n = s.trainable_layers < 0 ? -s.trainable_layers : s.trainable_layers;
        if (s.trainable_layers < 0)
            y.out.notes.push_back("freeze_trainable_layers<0 trains the first layers; counted as the same number of last layers");
        ft.method = n >= j.model.layers ? finetune_method::full : finetune_method::freeze;
        if (n < j.model.layers) ft.frozen_layers = j.model.layers - n;
    } else
        y.fail("finetuning_type", "=" + printable(s.method) + " is not modelled (lora, freeze or full)");
}

/// The job's precision: trainable parameters in fp32 under bf16/fp16 autocast (bf16-mixed), pure bf16 with pure_bf16.
inline precision llamafactory_precision(const llamafactory_settings& s) {
    if (s.pure_bf16) return s.sharded ? precision::bf16_mixed : precision::bf16;
    if (s.bf16) return precision::bf16_mixed;
    if (s.fp16) return precision::fp16_mixed;
    return precision::fp32;
}

}  // namespace detail

/// train.yaml -> job (LLaMA-Factory over Trainer: dp = the world size, opt.world_size). `dir` is the folder of the
/// file, where a `deepspeed` json is looked for first.
inline launcher_import llamafactory_import_yaml(const std::string& text, const import_options& opt = {}, const std::string& dir = ".") {
    launcher_import out;
    const detail::trainer_yaml y{"LLaMA-Factory train.yaml", out};
    const YAML::Node root = detail::trainer_yaml_load(text, y.file);
    auto& j = out.job;
    j.runtime.framework = frameworks::llamafactory::handle;
    j.training.seq_len = 2048;  // data_args.py cutoff_len
    j.training.micro_batch = 8;  // transformers TrainingArguments per_device_train_batch_size
    detail::llamafactory_settings s;
    for (const auto& kv : root) {
        const auto k = kv.first.Scalar();
        const YAML::Node& v = kv.second;
        if (!detail::llamafactory_model_key(y, k, v, s, j) && !detail::llamafactory_method_key(y, k, v, s) &&
            !detail::llamafactory_training_key(y, k, v, s, j, dir) && !detail::llamafactory_preference_key(y, k, v, s))
            out.ignored.push_back(k);
    }
    if (s.model.empty() && opt.model.layers <= 0) y.fail("model_name_or_path", "is missing (the model to train)");
    j.model = detail::trainer_base_model(y, "model_name_or_path", s.model, opt.model);
    detail::llamafactory_method(y, s, j);
    j.training.precision = detail::llamafactory_precision(s);
    if (s.gradient_checkpointing) j.parallel.recompute = recompute::full;
    detail::llamafactory_objective(y, s, j);
    detail::trainer_finish(out, opt, s.accumulation);
    return out;
}

}  // namespace frenzy
