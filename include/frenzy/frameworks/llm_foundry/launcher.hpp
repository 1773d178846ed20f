#pragma once
// The llm-foundry launcher: train.yaml for llm-foundry's scripts/train/train.py, every top-level key a field of its
// TrainConfig (mosaicml/llm-foundry@8c8dd48f llmfoundry/utils/config_utils.py), the model a published one as
// transformers builds it from its repository's config.json, with its own tokenizer (hf_causal_lm,
// models/hf/hf_base.py), else an MPT of the planned shape (llmfoundry/models/mpt/configuration_mpt.py MPTConfig,
// models/utils/config_defaults.py), fsdp_config with
// Composer's FSDPConfig fields (mosaicml/composer@6405188 composer/utils/parallelism.py). Every key written is in
// tests/data/launch/llm_foundry_keys.txt, read from that code by tests/data/launch/extract_framework_keys.py.
// The run's settings (checkout, data, tokenizer, checkpoints, learning rate) are shell variables of the batch
// script handed to train.py as OmegaConf overrides (train.py merges `key=value` arguments into the YAML).
#include <string>
#include <vector>

#include "frenzy/frameworks/llm_foundry/traits.hpp"
#include "frenzy/io/file.hpp"
#ifdef FRENZY_HAS_YAML
#include "frenzy/frameworks/llm_foundry/import.hpp"
#endif
#include "frenzy/launch/launcher.hpp"
#include "frenzy/memory/framework_profile.hpp"
#include "frenzy/model/presets.hpp"

namespace frenzy::frameworks::llm_foundry {

/// MPT's tokenizer (mosaicml/mpt-7b tokenizer_config.json: GPT-NeoX-20B's).
inline constexpr const char* mpt_tokenizer = "EleutherAI/gpt-neox-20b";

/// MPT's name for the job's MLP: mptmlp with its activation, or mptglu for the gated ones (layers/ffn.py
/// build_mptmlp / build_mptglu; the activation by torch.nn.functional name, resolve_ffn_act_fn).
struct mpt_ffn {
    const char* type;
    const char* act;
};
inline mpt_ffn ffn_of(const transformer_spec& m) {
    switch (m.activation) {
        case activation::gelu: return {"mptmlp", "gelu"};
        case activation::relu: return {"mptmlp", "relu"};
        case activation::swiglu: return {"mptglu", "silu"};
        case activation::geglu: return {"mptglu", "gelu"};
        case activation::squared_relu: break;
    }
    throw config_error("model.activation=\"squared-relu\" has no MPT feed-forward (ffn_type mptmlp/mptglu take a "
                       "torch activation by name): llm-foundry cannot build this model");
}

/// MPT's rotary keys (llmfoundry/models/utils/config_defaults.py: rope_theta 10000, rope_impl dail; modeling_mpt.py
/// gen_rotary_embedding: rope_impl hf hands rope_hf_config to transformers' Llama rotary embedding, whose types
/// configuration_mpt.py allows: no_scaling, linear, dynamic, llama3). MPT rotates whole heads, with one base.
inline std::string rope_yaml(const rope_spec& r) {
    auto refuse = [](const std::string& what) {
        return config_error(what + " has no MPT attn_config key (llm-foundry cannot build it)");
    };
    if (r.fraction != 1) throw refuse("model.rope.fraction=" + number_text(r.fraction));
    if (r.local_theta > 0 && r.local_theta != r.theta) throw refuse("model.rope.local_theta=" + number_text(r.local_theta));
    if (r.scaling == rope_scaling_kind::yarn || r.scaling == rope_scaling_kind::longrope)
        throw refuse("model.rope.scaling=\"" + std::string(to_string(r.scaling)) + "\"");
    std::string s = "    rope: true\n";
    if (r.theta != 10000) s += "    rope_theta: " + number_text(r.theta) + "\n";
    if (r.scaling == rope_scaling_kind::none) return s;
    s += "    rope_impl: hf\n    rope_hf_config:\n      type: " + std::string(to_string(r.scaling)) +
         "\n      factor: " + number_text(r.factor) + "\n";
    if (r.scaling == rope_scaling_kind::llama3)
        s += "      low_freq_factor: " + number_text(r.low_freq_factor) + "\n      high_freq_factor: " + number_text(r.high_freq_factor) +
             "\n      original_max_position_embeddings: " + std::to_string(r.original_max_positions) + "\n";
    else if (r.original_max_positions > 0)
        s += "      original_max_position_embeddings: " + std::to_string(r.original_max_positions) + "\n";
    return s;
}

/// The Hugging Face repository whose config.json llm-foundry builds the job's model from (hf_causal_lm:
/// transformers' own implementation, and the model's own tokenizer), or "" where the model is not a published one as
/// published (an MPT of its shape is written then, as for MPT itself).
inline std::string hf_repository_of(const transformer_spec& m) {
    if (m.name.rfind("mpt", 0) == 0) return "";
    const auto repo = published_repository(m.name);
    if (repo.empty() || !published_difference(m, preset(m.name)).empty()) return "";
    return std::string(repo);
}

/// A fine-tune's published repository (hf_repository_of), or config_error naming why there is none: llm-foundry
/// fine-tunes load a published model's weights with its config.json (hf_causal_lm pretrained: true), never an MPT's.
inline std::string finetune_repository(const transformer_spec& m) {
    auto repo = hf_repository_of(m);
    if (!repo.empty()) return repo;
    const auto published = published_repository(m.name);
    if (published.empty() || m.name.rfind("mpt", 0) == 0)
        throw config_error("training.finetune: model.name=\"" + m.name + "\" has no published weights known here (model/presets.hpp "
                           "published_repository); llm-foundry fine-tunes load a published model (hf_causal_lm pretrained: true)");
    throw config_error(published_difference(m, preset(m.name)) + ": llm-foundry fine-tunes " + std::string(published) +
                       " as published (hf_causal_lm loads its config.json with its weights)");
}

/// PEFT's LoraConfig of a LoRA fine-tune (llm-foundry@8c8dd48f models/hf/hf_base.py get_peft_config: peft_type LORA,
/// task_type CAUSAL_LM, the other keys LoraConfig's; the Llama-style module names Llama, Mistral, Qwen and Gemma share).
inline std::string peft_yaml(const finetune_spec& f) {
    std::string s = "  peft_config:\n    peft_type: LORA\n    task_type: CAUSAL_LM\n    r: " + std::to_string(f.rank) +
                    "\n    lora_alpha: " + number_text(f.alpha) + "\n    lora_dropout: " + number_text(f.dropout) + "\n    target_modules:\n";
    for (const auto& [bit, name] : lora_target_names)
        if (f.targets & bit) s += "    - " + std::string(name) + "_proj\n";
    return s;
}

/// hf_causal_lm of the published model (llm-foundry@8c8dd48f models/hf/hf_base.py BaseHuggingFaceModel), flash-attention
/// 2 or eager attention. From scratch: its config.json's architecture with fresh weights (pretrained false), built on
/// the meta device for FSDP to initialise (hf_base.py: meta with pretrained false). A fine-tune: its weights
/// (pretrained true), loaded by rank 0 and sent to the others by FSDP (init_device mixed; utils/config_utils.py
/// process_init_device: sync_module_states), with LoRA adapters through PEFT (peft_config).
inline std::string hf_model_yaml(const job_spec& j, attention_impl attn) {
    if (j.model.is_moe()) throw config_error("model.moe: frenzy launch writes no MoE for llm-foundry (its memory model is of dense FFNs)");
    if (j.training.precision == precision::fp8_mixed)  // Composer's amp_fp8 is te.fp8_autocast: Transformer Engine layers only
        throw config_error("training.precision=\"fp8-mixed\": llm-foundry's amp_fp8 runs Transformer Engine layers, which "
                           "hf_causal_lm (transformers' " + j.model.name + ") has none of");
    const auto& ft = j.training.finetune;
    std::string s = "model:\n  name: hf_causal_lm\n  pretrained_model_name_or_path: ${variables.model_name}\n  pretrained: " +
                    std::string(ft.pretrained() ? "true\n  init_device: mixed\n" : "false\n  init_device: meta\n") +
                    "  attn_implementation: " + std::string(attn == attention_impl::unfused ? "eager" : "flash_attention_2") + "\n";
    if (ft.adapters()) s += peft_yaml(ft);
    return s;
}

/// The MPT architecture keys of the job's model; what MPT cannot express is refused, naming the field.
inline std::string model_yaml(const job_spec& j, attention_impl attn) {
    const auto& m = j.model;
    if (m.is_moe()) throw config_error("model.moe: llm-foundry's MoE FFNs need MegaBlocks (ffn_type mb_moe), which frenzy launch does not write");
    if (m.is_mla()) throw config_error("model.mla: MPT has no multi-head latent attention");
    if (m.parallel_attention) throw config_error("model.parallel_attention: MPT blocks run attention and MLP one after the other");
    if (m.attention_sinks) throw config_error("model.attention_sinks: MPT's attention has no learned sink logits");
    if (m.swiglu_limit > 0) throw config_error("model.swiglu_limit: MPT's mptglu has no clamped SwiGLU (gpt-oss)");
    if (m.layer_norm_count() > 2)  // Gemma 2/3's norms after attention and MLP
        throw config_error(field_text("model.norms_per_layer", m.layer_norm_count()) + ": MPT blocks norm only before attention and MLP");
    if (m.sliding_window > 0 && m.global_layer_every > 0)  // attn_config.sliding_window_size is every layer's
        throw config_error(field_text("model.global_layer_every", m.global_layer_every) + ": MPT's sliding window is every layer's "
                           "(attn_config.sliding_window_size), none attends globally");
    const auto ffn = ffn_of(m);
    std::string s = "model:\n  name: mpt_causal_lm\n  init_device: meta\n";
    s += "  d_model: " + std::to_string(m.hidden) + "\n  n_heads: " + std::to_string(m.heads) +
         "\n  n_layers: " + std::to_string(m.layers) + "\n";
    if (m.head_dim > 0 && m.head_dim * m.heads != m.hidden) s += "  head_dim: " + std::to_string(m.head_dim) + "\n";
    s += "  max_seq_len: " + std::to_string(j.training.seq_len) + "\n  vocab_size: " + std::to_string(m.vocab) + "\n";
    s += "  learned_pos_emb: " + std::string(m.position_embedding == position_embedding::learned ? "true" : "false") + "\n";
    s += "  no_bias: " + std::string(m.bias ? "false" : "true") + "\n";
    s += "  norm_type: " + std::string(m.norm == norm_kind::rmsnorm ? "low_precision_rmsnorm" : "low_precision_layernorm") + "\n";
    s += "  tie_word_embeddings: " + std::string(m.tied_embeddings ? "true" : "false") + "\n";
    if (m.norm_eps != 1e-5) s += "  norm_eps: " + number_text(m.norm_eps) + "\n";  // MPTConfig default 1e-5
    if (m.qkv_bias && !m.bias) s += "  attention_bias: true\n";  // the QKV projection's biases only (Qwen2)
    if (m.final_logit_softcap > 0) s += "  final_logit_softcapping: " + number_text(m.final_logit_softcap) + "\n";  // MPTConfig
    if (j.training.precision == precision::fp8_mixed) s += "  fc_type: te\n";  // amp_fp8 runs Transformer Engine linears
    s += "  loss_fn: " + std::string(profile_of(j).loss == loss_style::fused_cross_entropy ? "fused_crossentropy" : "torch_crossentropy") + "\n";
    s += "  attn_config:\n    attn_impl: " + std::string(attn == attention_impl::unfused ? "torch" : "flash") + "\n";
    if (m.kv() != m.heads) s += "    attn_type: grouped_query_attention\n    kv_n_heads: " + std::to_string(m.kv()) + "\n";
    if (m.qk_norm) s += "    qk_gn: true\n";  // a norm of norm_type over each head's queries and keys
    if (m.attn_logit_softcap > 0) s += "    attn_logit_softcapping: " + number_text(m.attn_logit_softcap) + "\n";
    // the keys before and besides the query (configuration_mpt.py sliding_window_size: [i - size, i])
    if (m.sliding_window > 0) s += "    sliding_window_size: " + std::to_string(m.sliding_window - 1) + "\n";
    if (m.position_embedding == position_embedding::rope) s += rope_yaml(m.rope);
    if (m.position_embedding == position_embedding::alibi) s += "    alibi: true\n";
    s += "  ffn_config:\n    ffn_type: " + std::string(ffn.type) + "\n    ffn_hidden_size: " + std::to_string(m.ffn_hidden) +
         "\n    ffn_act_fn:\n      name: " + ffn.act + "\n";
    return s;
}

/// Composer's precision name (composer/core/precision.py Precision) and the FSDP mixed_precision preset
/// (composer/distributed/mosaic_parallelism.py get_mixed_precision: DEFAULT reduces in fp32, PURE in the 16-bit type).
inline std::pair<const char*, const char*> precision_names(precision p) {
    switch (p) {
        case precision::bf16_mixed: return {"amp_bf16", "DEFAULT"};
        case precision::fp16_mixed: return {"amp_fp16", "DEFAULT"};
        case precision::fp8_mixed: return {"amp_fp8", "DEFAULT"};
        case precision::bf16: return {"amp_bf16", "PURE"};
        case precision::fp32: return {"fp32", "FULL"};
        default: break;
    }
    throw config_error("training.precision=\"" + std::string(to_string(p)) + "\" has no Composer precision (amp_bf16, amp_fp16, amp_fp8, fp32)");
}

/// train.yaml: the TrainConfig of the job (the settings the batch script overrides are ${variables.*}).
inline std::string train_yaml(const job_spec& j, attention_impl attn) {
    const auto& t = j.training;
    const auto& p = j.parallel;
    const auto [composer_precision, mixed] = precision_names(t.precision);
    const char* strategy = p.sharding == sharding::full ? "FULL_SHARD" : p.sharding == sharding::gradients ? "SHARD_GRAD_OP" : "NO_SHARD";
    const auto steps = train_steps(j);
    std::string s = "# Written by frenzy launch for llm-foundry's scripts/train/train.py (TrainConfig of\n"
                    "# mosaicml/llm-foundry@8c8dd48f llmfoundry/utils/config_utils.py). The variables are set by\n"
                    "# launch.sbatch from its settings block; edit them there.\n";
    const auto repo = t.finetune.pretrained() ? finetune_repository(j.model) : hf_repository_of(j.model);
    s += "variables:\n  data_local: ./data\n  tokenizer_name: " + (repo.empty() ? std::string(mpt_tokenizer) : repo) + "\n";
    if (!repo.empty()) s += "  model_name: " + repo + "\n";
    s += "  save_folder: ./checkpoints\n  save_interval: 1000ba\n  lr: 1.0e-4\n  max_duration: " +
         (steps > 0 ? std::to_string(steps) + "ba" : std::string("1ba")) + "\n";
    s += "max_seq_len: " + std::to_string(t.seq_len) + "\nseed: 17\nprecision: " + composer_precision + "\n";
    s += repo.empty() ? model_yaml(j, attn) : hf_model_yaml(j, attn);
    s += "tokenizer:\n  name: ${variables.tokenizer_name}\n  kwargs:\n    model_max_length: " + std::to_string(t.seq_len) + "\n";
    s += "train_loader:\n  name: text\n  dataset:\n    local: ${variables.data_local}\n    split: train\n    shuffle: true\n"
         "    max_seq_len: " + std::to_string(t.seq_len) + "\n    shuffle_seed: 17\n  drop_last: true\n  num_workers: 8\n";
    s += "optimizer:\n  name: decoupled_adamw\n  lr: ${variables.lr}\n  betas:\n  - 0.9\n  - 0.95\n  eps: 1.0e-08\n  weight_decay: 0.0\n";
    s += "scheduler:\n  name: cosine_with_warmup\n  t_warmup: 0.01dur\n  alpha_f: 0.1\n";
    s += "algorithms:\n  gradient_clipping:\n    clipping_type: norm\n    clipping_threshold: 1.0\n";
    s += "max_duration: ${variables.max_duration}\n";
    s += "global_train_batch_size: " + std::to_string(t.global_batch) + "\ndevice_train_microbatch_size: " +
         std::to_string(t.micro_batch) + "\ndevice_eval_batch_size: " + std::to_string(t.micro_batch) + "\n";
    s += "fsdp_config:\n  sharding_strategy: " + std::string(strategy) + "\n  mixed_precision: " + mixed +
         "\n  activation_checkpointing: " + std::string(p.recompute == recompute::full ? "true" : "false") +
         "\n  activation_checkpointing_reentrant: false\n  activation_cpu_offload: false\n  limit_all_gathers: true\n";
    if (t.finetune.pretrained()) s += "  sync_module_states: true\n";  // init_device mixed: rank 0's weights to every rank
    s += "save_folder: ${variables.save_folder}\nsave_interval: ${variables.save_interval}\nautoresume: true\n";
    s += "progress_bar: false\nlog_to_console: true\nconsole_log_interval: 10ba\n";
    return s;
}

/// The settings block of the batch script and the OmegaConf overrides that carry them to train.py.
inline std::string settings(const job_spec& j, const launch_options& o) {
    std::string s = "# Settings: give them in sbatch's environment (LR=1e-4 sbatch launch.sbatch) or edit them here.\n";
    s += "LLM_FOUNDRY=\"${LLM_FOUNDRY:-$HOME/llm-foundry}\"  # an llm-foundry checkout: its scripts/train/train.py runs\n";
    s += "DATA_LOCAL=\"${DATA_LOCAL:?set DATA_LOCAL to a streaming dataset (llm-foundry scripts/data_prep/convert_dataset_hf.py)}\"\n";
    const bool ft = j.training.finetune.pretrained();
    const auto repo = ft ? finetune_repository(j.model) : hf_repository_of(j.model);
    if (ft)
        s += "MODEL_NAME=\"${MODEL_NAME:-" + repo + "}\"  # the weights to fine-tune: a Hugging Face repository or a local snapshot "
             "(hf_causal_lm loads its config.json and weights)\n";
    else if (!repo.empty())
        s += "MODEL_NAME=\"${MODEL_NAME:-" + repo + "}\"  # hf_causal_lm builds its config.json's model (its weights are not loaded)\n";
    // the model's own tokenizer; an MPT of another vocabulary than GPT-NeoX's (MPT's) has none to default to
    const bool neox = j.model.vocab >= 50277 && j.model.vocab <= 50432;
    const std::string tokenizer = ft ? std::string("$MODEL_NAME") : !repo.empty() ? repo : neox ? std::string(mpt_tokenizer) : "";
    s += "TOKENIZER=\"${TOKENIZER:" + (tokenizer.empty() ? "?set TOKENIZER to the Hugging Face tokenizer of the model (vocabulary " +
                                                                  std::to_string(j.model.vocab) + ")"
                                                            : "-" + tokenizer) +
         "}\"  # the tokenizer DATA_LOCAL was made with (vocabulary " + std::to_string(j.model.vocab) + ")\n";
    s += "CHECKPOINT_DIR=\"${CHECKPOINT_DIR:-$LAUNCH_DIR/checkpoints}\"  # saved to and resumed from (autoresume)\n";
    s += "SAVE_INTERVAL=\"${SAVE_INTERVAL:-" + std::to_string(save_interval_steps(j, o)) + "}\"  # optimizer steps (batches) between "
         "checkpoints" + save_interval_note(j, o) + "\n";
    // a fine-tune's rate as the hf launcher's (2e-5 full, 2e-4 adapters); from scratch llm-foundry's examples' 1e-4
    s += std::string("LR=\"${LR:-") + (!ft ? "1.0e-4" : j.training.finetune.adapters() ? "2e-4" : "2e-5") + "}\"\n";
    if (train_steps(j) <= 0)
        s += "TRAIN_BATCHES=\"${TRAIN_BATCHES:?the job has no token budget: set TRAIN_BATCHES (optimizer steps)}\"\n";
    return s;
}

inline launcher_payload payload(const job_spec& j, const launch_options& o) {
    if (j.runtime.offload.any()) throw config_error("runtime.offload: Composer refuses FSDP CPU offload");
    launcher_payload out;
    out.files.push_back({"train.yaml", train_yaml(j, j.runtime.attention)});
    out.preamble = settings(j, o);
    std::string overrides = " variables.data_local=\"$DATA_LOCAL\" variables.tokenizer_name=\"$TOKENIZER\""
                            " variables.save_folder=\"$CHECKPOINT_DIR\" variables.save_interval=\"${SAVE_INTERVAL}ba\" variables.lr=\"$LR\"";
    if (j.training.finetune.pretrained() || !hf_repository_of(j.model).empty()) overrides += " variables.model_name=\"$MODEL_NAME\"";
    if (train_steps(j) <= 0) overrides += " variables.max_duration=\"${TRAIN_BATCHES}ba\"";
    out.torchrun_target = (o.run_command.empty() ? std::string("\"$LLM_FOUNDRY/scripts/train/train.py\"") : o.run_command) +
                          " \"$LAUNCH_DIR/train.yaml\"" + overrides;
    return out;
}

/// train.yaml -> job (frameworks/llm_foundry/import.hpp); the world size comes from beside the file (--world-size).
inline launcher_import import_file(const std::string& path, const import_options& o) {
#ifdef FRENZY_HAS_YAML
    return llm_foundry_import_yaml(read_file_limited(path), o);
#else
    (void)path;
    (void)o;
    throw config_error("reading llm-foundry's train.yaml needs Frenzy built with yaml-cpp (FRENZY_HAS_YAML)");
#endif
}

inline constexpr launcher_traits launch_traits{
    .name = "llm-foundry",
    .summary = "torchrun of llm-foundry's scripts/train/train.py with train.yaml (the published model as hf_causal_lm, "
               "else an MPT of the planned shape; FSDP1)",
    .runs = {&traits},
    .payload = payload,
    .describes_model = true,
    .config_example = "train.yaml",
    .import_file = import_file,
    // fine-tunes of published weights (hf_causal_lm pretrained: true), LoRA through PEFT; QLoRA's 4-bit base has no
    // llm-foundry key (hf_base.py loads 8-bit only, and train.py refuses load_in_8bit for training)
    .methods = method_bits({finetune_method::none, finetune_method::full, finetune_method::lora}),
};

/// This launcher as launch options name it: a handle to `launch_traits` (frameworks/launchers.hpp lists it).
inline constexpr launcher launcher_handle{launch_traits};

}  // namespace frenzy::frameworks::llm_foundry
