#pragma once
// llm-foundry's train.yaml (scripts/train/train.py's TrainConfig) -> job spec, the reverse of
// frameworks/llm_foundry/launcher.hpp, so `launch --framework llm-foundry` then `import --from llm-foundry:train.yaml`
// gives back the plan's layout, batch sizes, precision and token budget. Keys and defaults as llm-foundry and
// Composer define them: mosaicml/llm-foundry@8c8dd48f llmfoundry/utils/config_utils.py (TrainConfig: max_seq_len,
// precision, global_train_batch_size, device_train_microbatch_size, max_duration, fsdp_config, variables),
// llmfoundry/models/mpt/configuration_mpt.py + models/utils/config_defaults.py (MPTConfig: d_model, n_heads,
// n_layers, expansion_ratio 4, vocab_size, learned_pos_emb true, no_bias false, norm_type, tie_word_embeddings
// true, attn_config, ffn_config), mosaicml/composer@6405188 composer/core/time.py (durations "Nba", "Ntok") and
// composer/utils/parallelism.py (FSDPConfig). The world size is not in the file: import_options.world_size gives
// it (dp = world size, FSDP being data parallel). Needs yaml-cpp (FRENZY_HAS_YAML).
#include <cctype>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/io/launcher_yaml.hpp"
#include "frenzy/frameworks/registry.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

namespace detail {

/// A scalar of train.yaml as text, with `${variables.NAME}` replaced by that variable (OmegaConf interpolation, one
/// level: what launch writes); config_error naming `where` for a mapping, a sequence or an unknown variable.
inline std::string foundry_scalar(const YAML::Node& v, const YAML::Node& variables, const std::string& where) {
    if (!v.IsScalar()) throw config_error("llm-foundry train.yaml: " + where + " must be a single value");
    auto s = v.Scalar();
    if (s.rfind("${variables.", 0) == 0 && s.back() == '}') {
        const auto name = s.substr(12, s.size() - 13);
        const auto var = variables ? variables[name] : YAML::Node();
        if (!var || !var.IsScalar())
            throw config_error("llm-foundry train.yaml: " + where + "=" + printable(s) + " names variables." + printable(name) +
                               ", which the file does not set");
        s = var.Scalar();
    }
    return s;
}

/// A YAML boolean of train.yaml (true/false and YAML 1.1's yes/no/on/off).
inline bool foundry_bool(const YAML::Node& v, const std::string& where) {
    if (const auto b = yaml_bool(v); v.IsScalar() && b) return *b;
    throw config_error("llm-foundry train.yaml: " + where + " must be true or false");
}

/// Composer's duration "Nba" (optimizer steps) or "Ntok" (tokens) -> tokens of `tokens_per_step`; nullopt (with
/// a note) for epochs or samples, which depend on the dataset.
inline std::optional<double> foundry_duration_tokens(const std::string& text, double tokens_per_step, launcher_import& out) {
    auto number = [&](std::size_t unit) { return parse_double(text.substr(0, text.size() - unit), "max_duration", bounds::tokens); };
    if (text.ends_with("tok")) return number(3);
    if (text.ends_with("ba")) return check_bound("max_duration (tokens)", number(2) * tokens_per_step, bounds::tokens);
    out.notes.push_back("max_duration=" + printable(text) + ": in epochs or samples, which depend on the dataset; no token budget read");
    return std::nullopt;
}

/// MPT's feed-forward (ffn_type, ffn_act_fn.name) as the job's activation (layers/ffn.py build_mptmlp/build_mptglu;
/// the activation defaults to GELU).
inline activation foundry_activation(const std::string& type, const std::string& act) {
    if (type == "mptmlp" && act == "gelu") return activation::gelu;
    if (type == "mptmlp" && act == "relu") return activation::relu;
    if (type == "mptglu" && act == "silu") return activation::swiglu;
    if (type == "mptglu" && act == "gelu") return activation::geglu;
    throw config_error("llm-foundry train.yaml: model.ffn_config: ffn_type=" + printable(type) + " with ffn_act_fn " +
                       printable(act) + " is not read (mptmlp with gelu or relu, mptglu with silu or gelu)");
}

/// What one YAML mapping of train.yaml holds, scalars by key (interpolated), for the small sections.
struct foundry_section {
    const YAML::Node& vars;
    std::string where;
    std::string text(const YAML::Node& v, const std::string& key) const { return foundry_scalar(v, vars, where + key); }
    std::int64_t number(const YAML::Node& v, const std::string& key, int_bound b) const {
        return parse_int64(text(v, key), where + key, b);
    }
    bool flag(const YAML::Node& v, const std::string& key) const { return foundry_bool(v, where + key); }
    double real(const YAML::Node& v, const std::string& key, real_bound b) const {
        return parse_double(text(v, key), where + key, b);
    }
};

/// model.attn_config.rope_hf_config (the scaling transformers' Llama rotary embedding runs: no_scaling, linear,
/// dynamic, llama3; llmfoundry/models/mpt/configuration_mpt.py).
inline void foundry_rope_hf(const YAML::Node& c, const foundry_section& sec, rope_spec& r, launcher_import& out) {
    if (!c.IsMap()) throw config_error("llm-foundry train.yaml: " + sec.where + "rope_hf_config must be a mapping");
    const foundry_section sub{sec.vars, sec.where + "rope_hf_config."};
    for (const auto& kv : c) {
        const auto k = kv.first.Scalar();
        if (k == "type") {
            const auto t = sub.text(kv.second, k);
            if (t == "no_scaling") r.scaling = rope_scaling_kind::none;
            else if (t == "linear" || t == "dynamic" || t == "llama3") r.scaling = parse_enum<rope_scaling_kind>(sub.where + k, t);
            else throw config_error("llm-foundry train.yaml: " + sub.where + "type=" + printable(t) + " must be one of no_scaling | linear | dynamic | llama3");
        } else if (k == "factor") r.factor = sub.real(kv.second, k, bounds::rope_factor);
        else if (k == "low_freq_factor") r.low_freq_factor = sub.real(kv.second, k, bounds::rope_factor);
        else if (k == "high_freq_factor") r.high_freq_factor = sub.real(kv.second, k, bounds::rope_factor);
        else if (k == "original_max_position_embeddings") r.original_max_positions = sub.number(kv.second, k, bounds::positions);
        else out.ignored.push_back(sub.where + k);
    }
    if (r.scaling == rope_scaling_kind::none) r.factor = 0;  // no_scaling's factor 1.0 (config_defaults.py) means nothing
}

/// model.attn_config into `s`; the attention kernel into the job's runtime.
inline void foundry_attention(const YAML::Node& a, const foundry_section& sec, transformer_spec& s, launcher_import& out) {
    std::optional<YAML::Node> hf_rope;  // a handle of its own: the loop's key-value pair ends with the loop
    std::string rope_impl = "dail";  // config_defaults.py
    for (const auto& kv : a) {
        const auto k = kv.first.Scalar();
        if (k == "kv_n_heads") s.kv_heads = sec.number(kv.second, k, bounds::heads);
        else if (k == "attn_type") {
            const auto t = sec.text(kv.second, k);
            if (t == "multiquery_attention") s.kv_heads = 1;
            else if (t != "multihead_attention" && t != "grouped_query_attention") out.unknown.push_back(sec.where + k + "=" + printable(t));
        } else if (k == "rope") {
            if (sec.flag(kv.second, k)) s.position_embedding = position_embedding::rope;
        } else if (k == "alibi") {
            if (sec.flag(kv.second, k)) s.position_embedding = position_embedding::alibi;
        } else if (k == "attn_impl") {  // configuration_mpt.py _validate_config: torch or flash
            const auto impl = sec.text(kv.second, k);
            if (impl != "torch" && impl != "flash")
                throw config_error("llm-foundry train.yaml: " + sec.where + "attn_impl=" + printable(impl) + " must be torch or flash "
                                   "(MPTConfig refuses another attn_impl)");
            out.job.runtime.attention = impl == "torch" ? attention_impl::unfused : attention_impl::flash;
        }
        else if (k == "rope_theta") s.rope.theta = sec.real(kv.second, k, bounds::rope_theta);
        else if (k == "rope_hf_config") hf_rope.emplace(kv.second);
        else if (k == "rope_impl") rope_impl = sec.text(kv.second, k);
        else if (k == "qk_gn") s.qk_norm = sec.flag(kv.second, k);
        else if (k == "qk_ln" && sec.flag(kv.second, k))
            throw config_error("llm-foundry train.yaml: " + sec.where + "qk_ln=true (one norm over all heads' queries) is not read; qk_gn is a norm per head");
        else if (k == "attn_logit_softcapping") s.attn_logit_softcap = sec.real(kv.second, k, bounds::softcap);
        else if (k == "sliding_window_size") {  // keys [i - size, i]: the window counts the query's own too; -1 none
            const auto w = sec.number(kv.second, k, int_bound{-1, bounds::seq_len.max});
            s.sliding_window = w < 0 ? 0 : w + 1;
        }
        else out.ignored.push_back(sec.where + k);
    }
    if (rope_impl != "dail" && rope_impl != "hf")
        throw config_error("llm-foundry train.yaml: " + sec.where + "rope_impl=" + printable(rope_impl) + " must be dail or hf");
    if (hf_rope && rope_impl == "hf") foundry_rope_hf(*hf_rope, sec, s.rope, out);
    else if (hf_rope) out.ignored.push_back(sec.where + "rope_hf_config (read only with rope_impl hf)");
}

/// model.ffn_config into `s` (its width 0 when it leaves it to expansion_ratio).
inline void foundry_ffn(const YAML::Node& f, const foundry_section& sec, transformer_spec& s, launcher_import& out) {
    std::string type = "mptmlp", act = "gelu";
    for (const auto& kv : f) {
        const auto k = kv.first.Scalar();
        if (k == "ffn_hidden_size") s.ffn_hidden = sec.number(kv.second, k, bounds::ffn_hidden);
        else if (k == "ffn_type") type = sec.text(kv.second, k);
        else if (k == "ffn_act_fn") {
            if (!kv.second.IsMap()) throw config_error("llm-foundry train.yaml: " + sec.where + k + " must be a mapping with a name");
            const YAML::Node& fn = kv.second;
            if (fn["name"]) act = sec.text(fn["name"], "ffn_act_fn.name");
        } else out.ignored.push_back(sec.where + k);
    }
    s.activation = foundry_activation(type, act);
}

/// One key of the model block into `s` (expansion ratio aside); false for a key it does not know.
inline bool foundry_model_key(const std::string& key, const YAML::Node& v, const foundry_section& sec, transformer_spec& s,
                              std::int64_t& expansion, launcher_import& out) {
    if (key == "d_model") s.hidden = sec.number(v, key, bounds::hidden);
    else if (key == "n_heads") s.heads = sec.number(v, key, bounds::heads);
    else if (key == "n_layers") s.layers = sec.number(v, key, bounds::layers);
    else if (key == "head_dim") s.head_dim = sec.number(v, key, bounds::heads);
    else if (key == "vocab_size") s.vocab = sec.number(v, key, bounds::vocab);
    else if (key == "expansion_ratio") expansion = sec.number(v, key, bounds::heads);
    else if (key == "learned_pos_emb") s.position_embedding = sec.flag(v, key) ? position_embedding::learned : position_embedding::rope;
    else if (key == "no_bias") s.bias = !sec.flag(v, key);
    else if (key == "attention_bias") s.qkv_bias = sec.flag(v, key);
    else if (key == "tie_word_embeddings") s.tied_embeddings = sec.flag(v, key);
    else if (key == "norm_eps") s.norm_eps = sec.real(v, key, bounds::norm_eps);
    else if (key == "final_logit_softcapping") s.final_logit_softcap = sec.real(v, key, bounds::softcap);
    else if (key == "norm_type") {
        const auto n = sec.text(v, key);
        if (n.find("rmsnorm") != std::string::npos) s.norm = norm_kind::rmsnorm;
        else if (n.find("layernorm") == std::string::npos)
            throw config_error("llm-foundry train.yaml: model.norm_type=" + printable(n) + " is neither a layernorm nor an rmsnorm");
    } else if (key == "attn_config" || key == "ffn_config") {
        if (!v.IsMap()) throw config_error("llm-foundry train.yaml: model." + key + " must be a mapping");
        const foundry_section sub{sec.vars, "model." + key + "."};
        key == "attn_config" ? foundry_attention(v, sub, s, out) : foundry_ffn(v, sub, s, out);
    } else return key == "name" || key == "init_device" || key == "max_seq_len" || key == "loss_fn" || key == "fc_type";
    return true;
}

/// The model the caller named (--model), once the file is checked to describe its architecture.
inline transformer_spec foundry_given_model(const transformer_spec& file, const transformer_spec& given) {
    auto same = [](const char* key, std::int64_t in_file, std::int64_t in_model) {
        if (in_file != in_model)
            throw config_error("llm-foundry train.yaml: model." + std::string(key) + "=" + std::to_string(in_file) +
                               " contradicts the model given beside the file (" + std::to_string(in_model) + ")");
    };
    same("n_layers", file.layers, given.layers);
    same("d_model", file.hidden, given.hidden);
    same("n_heads", file.heads, given.heads);
    same("kv_n_heads", file.kv(), given.kv());
    same("ffn_hidden_size", file.ffn_hidden, given.ffn_hidden);
    same("vocab_size", file.vocab, given.vocab);
    return given;
}

/// model.peft_config (PEFT's LoraConfig keys; llm-foundry@8c8dd48f models/hf/hf_base.py get_peft_config: peft_type
/// LORA and task_type CAUSAL_LM only) as a LoRA fine-tune of the job's rank, alpha, dropout and target modules.
inline void foundry_peft(const YAML::Node& p, const foundry_section& model, finetune_spec& ft, launcher_import& out) {
    if (!p.IsMap()) throw config_error("llm-foundry train.yaml: model.peft_config must be a mapping (PEFT's LoraConfig)");
    const foundry_section sec{model.vars, "model.peft_config."};
    std::string type, task;
    ft.method = finetune_method::lora;
    ft.targets = lora_q | lora_v;  // PEFT's default for Llama-style models without target_modules
    for (const auto& kv : p) {
        const auto k = kv.first.Scalar();
        if (k == "peft_type") type = sec.text(kv.second, k);
        else if (k == "task_type") task = sec.text(kv.second, k);
        else if (k == "r") ft.rank = sec.number(kv.second, k, bounds::lora_rank);
        else if (k == "lora_alpha") ft.alpha = sec.real(kv.second, k, real_bound{0, 1e6});
        else if (k == "lora_dropout") ft.dropout = sec.real(kv.second, k, bounds::fraction);
        else if (k == "target_modules") {
            if (!kv.second.IsSequence()) throw config_error("llm-foundry train.yaml: " + sec.where + k + " must be a list of module names");
            ft.targets = 0;
            for (const auto& n : kv.second) {
                const auto name = sec.text(n, k);
                unsigned bit = 0;
                for (const auto& [b, short_name] : lora_target_names)
                    if (name == std::string(short_name) + "_proj") bit = b;
                if (bit == 0) throw config_error("llm-foundry train.yaml: " + sec.where + k + " names " + printable(name) +
                                                 ", a module Frenzy does not adapt (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj)");
                ft.targets |= bit;
            }
        } else out.ignored.push_back(sec.where + k);
    }
    if (type != "LORA" && type != "lora")
        throw config_error("llm-foundry train.yaml: " + sec.where + "peft_type=" + printable(type) + " must be LORA (get_peft_config)");
    if (task != "CAUSAL_LM" && task != "causal_lm")
        throw config_error("llm-foundry train.yaml: " + sec.where + "task_type=" + printable(task) + " must be CAUSAL_LM (get_peft_config)");
    if (!p["target_modules"]) out.notes.push_back("no peft_config.target_modules: PEFT's default q_proj and v_proj assumed");
}

/// An hf_causal_lm model block (llm-foundry@8c8dd48f models/hf/hf_base.py BaseHuggingFaceModel): transformers'
/// implementation of pretrained_model_name_or_path's config, the preset published there, or the model given beside
/// the file when it has that preset's shape; its attention from attn_implementation.
inline transformer_spec foundry_hf_model(const YAML::Node& m, const YAML::Node& vars, const transformer_spec& given, launcher_import& out) {
    const foundry_section sec{vars, "model."};
    auto& ft = out.job.training.finetune;
    if (!m["pretrained"]) ft.method = finetune_method::full;  // BaseHuggingFaceModel(pretrained=True)
    if (!m["pretrained_model_name_or_path"])
        throw config_error("llm-foundry train.yaml: model.pretrained_model_name_or_path is missing (hf_causal_lm builds that model)");
    const auto repo = sec.text(m["pretrained_model_name_or_path"], "pretrained_model_name_or_path");
    const transformer_spec* published = nullptr;
    for (const auto& p : model_presets())
        if (published_repository(p.spec.name) == repo) published = &p.spec;
    if (!published && given.layers <= 0)
        throw config_error("llm-foundry train.yaml: model.pretrained_model_name_or_path=" + printable(repo) + " is no preset's "
                           "published repository: give the model beside the file (--model or --hf-config)");
    for (const auto& kv : m) {
        const auto k = kv.first.Scalar();
        if (k == "attn_implementation") {
            const auto a = sec.text(kv.second, k);
            if (a != "flash_attention_2" && a != "eager")
                throw config_error("llm-foundry train.yaml: model.attn_implementation=" + printable(a) + " must be flash_attention_2 or eager");
            out.job.runtime.attention = a == "eager" ? attention_impl::unfused : attention_impl::flash;
        } else if (k == "pretrained") {  // hf_base.py: true by default, the published weights loaded
            if (sec.flag(kv.second, k) && ft.method == finetune_method::none) ft.method = finetune_method::full;
        } else if (k == "peft_config") {
            foundry_peft(kv.second, sec, ft, out);
        } else if (k != "name" && k != "pretrained_model_name_or_path" && k != "init_device") {
            out.unknown.push_back("model." + k);
        }
    }
    if (!published) return given;
    return given.layers > 0 ? foundry_given_model(*published, given) : *published;
}

/// fsdp_config.mixed_precision as Composer reads it: upper-cased, FULL, DEFAULT or PURE (mosaicml/composer@6405188
/// composer/distributed/mosaic_parallelism.py get_mixed_precision: "Unable to interpret mixed_precision" otherwise;
/// a mapping of dtypes is read by Composer but not here: foundry_scalar refuses it).
inline std::string foundry_mixed_precision(std::string v) {
    for (auto& c : v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (v != "FULL" && v != "DEFAULT" && v != "PURE")
        throw config_error("llm-foundry train.yaml: fsdp_config.mixed_precision=" + printable(v) + " must be FULL, DEFAULT or PURE "
                           "(Composer's get_mixed_precision: \"Unable to interpret mixed_precision\")");
    return v;
}

/// The MPT block's name, loss_fn and max_seq_len as llm-foundry reads them: name mpt_causal_lm (the registry's MPT;
/// hf_causal_lm goes through foundry_hf_model), loss_fn fused_crossentropy (the default, flash-attn's fused loss) or
/// torch_crossentropy (runtime.loss "upcast"; llmfoundry/models/mpt/modeling_mpt.py ComposerMPTCausalLM: "`loss_fn`
/// must be one of [`fused_crossentropy`, `torch_crossentropy`]"), max_seq_len positive (its position table; the
/// training length is checked against it once read). Returns model.max_seq_len (0: not given).
inline std::int64_t foundry_mpt_extras(const YAML::Node& m, const foundry_section& sec, launcher_import& out) {
    if (m["name"]) {
        const auto name = sec.text(m["name"], "name");
        if (name != "mpt_causal_lm")
            throw config_error("llm-foundry train.yaml: model.name=" + printable(name) + " must be mpt_causal_lm (an MPT block) or "
                               "hf_causal_lm (a Hugging Face model)");
    }
    if (m["loss_fn"]) {
        const auto loss = sec.text(m["loss_fn"], "loss_fn");
        if (loss == "torch_crossentropy") out.job.runtime.loss = loss_style::upcast_log_softmax;
        else if (loss != "fused_crossentropy")
            throw config_error("llm-foundry train.yaml: model.loss_fn=" + printable(loss) + " must be fused_crossentropy or "
                               "torch_crossentropy (ComposerMPTCausalLM)");
    }
    return m["max_seq_len"] ? sec.number(m["max_seq_len"], "max_seq_len", bounds::seq_len) : 0;
}

/// The model block (an MPT with MPTConfig's defaults, or hf_causal_lm), or the model given beside the file when it agrees.
inline transformer_spec foundry_model(const YAML::Node& m, const YAML::Node& vars, const transformer_spec& given, launcher_import& out,
                                      std::int64_t& model_max_seq) {
    if (!m || !m.IsMap()) throw config_error("llm-foundry train.yaml: model is missing (an mpt_causal_lm or hf_causal_lm block)");
    if (m["name"] && foundry_scalar(m["name"], vars, "model.name") == "hf_causal_lm") return foundry_hf_model(m, vars, given, out);
    model_max_seq = foundry_mpt_extras(m, foundry_section{vars, "model."}, out);
    transformer_spec s;
    s.name = "mpt";
    s.tied_embeddings = true;  // MPTConfig: learned positions, LayerNorm, biases, tied embeddings by default
    std::int64_t expansion = 4;
    const foundry_section sec{vars, "model."};
    for (const auto& kv : m)
        if (!foundry_model_key(kv.first.Scalar(), kv.second, sec, s, expansion, out)) out.unknown.push_back("model." + kv.first.Scalar());
    if (s.layers <= 0 || s.hidden <= 0 || s.heads <= 0 || s.vocab <= 0)
        throw config_error("llm-foundry train.yaml: model needs d_model, n_heads, n_layers and vocab_size");
    if (s.ffn_hidden == 0) s.ffn_hidden = checked_mul(expansion, s.hidden, "model.expansion_ratio x d_model");
    return given.layers > 0 ? foundry_given_model(s, given) : s;
}

/// fsdp_config: the sharding, FSDP's mixed-precision preset (returned), activation checkpointing and offload.
inline std::string foundry_fsdp(const YAML::Node& f, const YAML::Node& vars, launcher_import& out) {
    std::string mixed = "DEFAULT", strategy = "FULL_SHARD";
    auto& p = out.job.parallel;
    if (f && !f.IsMap()) throw config_error("llm-foundry train.yaml: fsdp_config must be a mapping");
    const foundry_section sec{vars, "fsdp_config."};
    if (f)
        for (const auto& kv : f) {
            const auto k = kv.first.Scalar();
            if (k == "sharding_strategy") strategy = sec.text(kv.second, k);
            else if (k == "mixed_precision") mixed = foundry_mixed_precision(sec.text(kv.second, k));
            else if (k == "activation_checkpointing") p.recompute = sec.flag(kv.second, k) ? recompute::full : recompute::none;
            else if (k == "activation_cpu_offload") out.job.runtime.offload.activations = sec.flag(kv.second, k);
            else out.ignored.push_back(sec.where + k);
        }
    if (strategy == "FULL_SHARD" || strategy == "HYBRID_SHARD") p.sharding = sharding::full;
    else if (strategy == "SHARD_GRAD_OP") p.sharding = sharding::gradients;
    else if (strategy == "NO_SHARD") p.sharding = sharding::none;
    else throw config_error("llm-foundry train.yaml: fsdp_config.sharding_strategy=" + printable(strategy) +
                            " must be FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD or NO_SHARD");
    return mixed;
}

/// Composer's precision with the FSDP mixed-precision preset: amp_bf16 + PURE is pure bf16, amp_* otherwise mixed.
inline precision foundry_precision(const std::string& p, const std::string& mixed) {
    if (p == "amp_bf16") return mixed == "PURE" ? precision::bf16 : precision::bf16_mixed;
    if (p == "amp_fp16") return precision::fp16_mixed;
    if (p == "amp_fp8") return precision::fp8_mixed;
    if (p == "fp32") return precision::fp32;
    throw config_error("llm-foundry train.yaml: precision=" + printable(p) + " must be amp_bf16, amp_fp16, amp_fp8 or fp32");
}

}  // namespace detail

/// train.yaml -> job (llm-foundry on FSDP1: dp = the world size, opt.world_size).
inline launcher_import llm_foundry_import_yaml(const std::string& text, const import_options& opt = {}) {
    YAML::Node loaded;
    try {
        loaded = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw config_error("llm-foundry train.yaml: not YAML (line " + std::to_string(e.mark.line + 1) + ": " + e.msg + ")");
    }
    const YAML::Node root = loaded;  // const: looking a key up never adds it
    if (!root.IsMap()) throw config_error("llm-foundry train.yaml: the file must be a mapping (a TrainConfig)");
    check_yaml_keys(root, "", 0, "llm-foundry train.yaml");
    launcher_import out;
    auto& j = out.job;
    j.runtime.framework = frameworks::llm_foundry::handle;
    const auto vars = root["variables"];
    std::int64_t model_max_seq = 0;  // an MPT block's max_seq_len: the longest sequence its forward takes
    j.model = detail::foundry_model(root["model"], vars, opt.model, out, model_max_seq);
    auto scalar = [&](const char* key) { return detail::foundry_scalar(root[key], vars, key); };
    auto& t = j.training;
    if (root["max_seq_len"]) t.seq_len = parse_int64(scalar("max_seq_len"), "max_seq_len", bounds::seq_len);
    if (model_max_seq > 0 && model_max_seq < t.seq_len)  // MPTModel.forward: seq_len <= config.max_seq_len
        throw config_error("llm-foundry train.yaml: model.max_seq_len=" + std::to_string(model_max_seq) + " is shorter than max_seq_len=" +
                           std::to_string(t.seq_len) + " (MPT refuses a longer input)");
    if (root["device_train_microbatch_size"]) {
        const auto mb = scalar("device_train_microbatch_size");
        if (mb == "auto") out.notes.push_back("device_train_microbatch_size=auto: Composer searches it at run time; micro-batch 1 assumed");
        else t.micro_batch = parse_int64(mb, "device_train_microbatch_size", bounds::micro_batch);
    }
    const auto mixed = detail::foundry_fsdp(root["fsdp_config"], vars, out);
    t.precision = detail::foundry_precision(root["precision"] ? scalar("precision") : std::string("amp_bf16"), mixed);
    out.has_parallel = opt.world_size > 0;
    j.parallel.dp = out.has_parallel ? opt.world_size : 1;
    t.global_batch = root["global_train_batch_size"]
                         ? parse_int64(scalar("global_train_batch_size"), "global_train_batch_size", bounds::global_batch)
                         : checked_mul(t.micro_batch, j.parallel.dp, "device_train_microbatch_size x world size");
    if (root["max_duration"])
        if (const auto tokens = detail::foundry_duration_tokens(scalar("max_duration"), j.tokens_per_step(), out)) t.total_tokens = *tokens;
    for (const auto& kv : root) {
        const auto k = kv.first.Scalar();
        if (k != "model" && k != "variables" && k != "max_seq_len" && k != "device_train_microbatch_size" && k != "fsdp_config" &&
            k != "precision" && k != "global_train_batch_size" && k != "max_duration")
            out.ignored.push_back(k);
    }
    j.name = opt.name.empty() ? j.model.name : opt.name;
    out.world_size = opt.world_size;
    validate(j.model);
    validate(t);
    if (t.global_batch % checked_mul(t.micro_batch, j.parallel.dp, "micro-batch x dp") != 0)
        throw config_error("llm-foundry train.yaml: global_train_batch_size=" + std::to_string(t.global_batch) +
                           " is not a multiple of device_train_microbatch_size x the world size (" +
                           std::to_string(t.micro_batch) + " x " + std::to_string(j.parallel.dp) + ")");
    validate(j);
    return out;
}

}  // namespace frenzy
