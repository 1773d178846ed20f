#pragma once
// LitGPT's litgpt.yaml (the jsonargparse config of `litgpt finetune_lora` / `finetune_full` / `pretrain`) -> job spec, the
// reverse of frameworks/litgpt/launcher.hpp: the model from model_name or checkpoint_dir (frameworks/litgpt/
// traits.hpp: models), the layout from devices x num_nodes (FSDP data parallel: one device unsharded; several fully sharded,
// fine-tunes checkpointing every Block), precision, LoRA/QLoRA settings, batch sizes and the token budget
// (train.max_tokens, or train.max_steps optimizer steps). Keys and defaults as Lightning-AI/litgpt@26857050 defines
// them (finetune/lora.py, finetune/full.py and pretrain.py setup, litgpt/args.py TrainArgs). A checkpoint_dir file is
// finetune_full's when it has `resume` and no LoRA key (finetune_lora has no `resume` parameter, jsonargparse refuses
// it), else finetune_lora's. Needs yaml-cpp (FRENZY_HAS_YAML).
#include <string>

#include <yaml-cpp/yaml.h>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/frameworks/litgpt/traits.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/io/launcher_yaml.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/frameworks/registry.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

namespace detail {

inline std::string litgpt_scalar(const YAML::Node& v, const std::string& where) {
    if (!v.IsScalar()) throw config_error("litgpt.yaml: " + where + " must be a single value");
    return v.Scalar();
}

inline bool litgpt_bool(const YAML::Node& v, const std::string& where) {
    if (const auto b = yaml_bool(v); v.IsScalar() && b) return *b;
    throw config_error("litgpt.yaml: " + where + " must be true or false");
}

/// Fabric's precision names (the launcher's precision_name, reversed).
inline precision litgpt_precision(const std::string& p) {
    if (p == "bf16-true") return precision::bf16;
    if (p == "bf16-mixed") return precision::bf16_mixed;
    if (p == "16-mixed") return precision::fp16_mixed;
    if (p == "32-true") return precision::fp32;
    throw config_error("litgpt.yaml: precision=" + printable(p) + " must be bf16-true, bf16-mixed, 16-mixed or 32-true");
}

/// The model a LitGPT name stands for: model_name (a config name) or checkpoint_dir (checkpoints/ORG/NAME).
inline transformer_spec litgpt_model_spec(const std::string& key, std::string name) {
    if (key == "checkpoint_dir" && name.rfind("checkpoints/", 0) == 0) name = name.substr(12);
    const auto* m = frameworks::litgpt::model_of_litgpt_name(name);
    if (!m)
        throw config_error("litgpt.yaml: " + key + "=" + printable(name) + " is not a LitGPT model Frenzy has a preset for "
                           "(frameworks/litgpt/traits.hpp)");
    return preset(m->preset);
}

/// The LoRA switches and quantization of finetune_lora (finetune/lora.py setup defaults: r 8, alpha 16, dropout
/// 0.05, query and value).
inline bool litgpt_lora_key(const std::string& k, const YAML::Node& v, finetune_spec& ft) {
    auto on = [&](unsigned bits) {
        if (litgpt_bool(v, k)) ft.targets |= bits;
        else ft.targets &= ~bits;
    };
    if (k == "lora_r") ft.rank = parse_int64(litgpt_scalar(v, k), k, bounds::lora_rank);
    else if (k == "lora_alpha") ft.alpha = static_cast<double>(parse_int64(litgpt_scalar(v, k), k, bounds::lora_rank));
    else if (k == "lora_dropout") ft.dropout = parse_double(litgpt_scalar(v, k), k, real_bound{0, 1});
    else if (k == "lora_query") on(lora_q);
    else if (k == "lora_key") on(lora_k);
    else if (k == "lora_value") on(lora_v);
    else if (k == "lora_projection") on(lora_o);
    else if (k == "lora_mlp") on(lora_gate | lora_up | lora_down);
    else if (k == "lora_head") {
        if (litgpt_bool(v, k)) throw config_error("litgpt.yaml: lora_head=true: adapters on the LM head are not modelled");
    } else if (k == "quantize") {
        const auto q = litgpt_scalar(v, k);
        if (q != "bnb.nf4" && q != "bnb.nf4-dq")
            throw config_error("litgpt.yaml: quantize=" + printable(q) + " is not read (bnb.nf4 or bnb.nf4-dq: QLoRA)");
        ft.method = finetune_method::qlora;
        ft.double_quant = q == "bnb.nf4-dq";
    } else return false;
    return true;
}

/// A checkpoint_dir file of finetune_full: `resume` given (finetune_lora has no such parameter) and no LoRA key.
inline bool litgpt_full_finetune(const YAML::Node& root) {
    bool resume = false;
    for (const auto& kv : root) {
        const auto k = kv.first.Scalar();
        if (k.rfind("lora_", 0) == 0 || k == "quantize") return false;
        resume = resume || k == "resume";
    }
    return resume;
}

/// train.max_seq_length: null (TrainArgs' default): LitGPT trains up to the longest sample (finetune_*: fit's
/// min(longest_seq_length, max_seq_length or inf)) or the model's block_size (pretrain), neither in the file: the
/// length given beside it (import_options::training, --seq-len) is taken, with a note saying so.
inline void litgpt_null_seq_len(const YAML::Node& train, std::int64_t given, training_spec& t, launcher_import& out) {
    if (!train || !train.IsMap() || !train["max_seq_length"]) return;
    const auto& v = train["max_seq_length"];
    if (!(v.IsNull() || (v.IsScalar() && (v.Scalar() == "null" || v.Scalar() == "~")))) return;
    t.seq_len = given;
    out.notes.push_back("train.max_seq_length=null: LitGPT trains up to the longest sample (fine-tunes) or the model's block_size "
                        "(pretrain), neither in the file; seq_len " + std::to_string(given) + " assumed (--seq-len sets it)");
}

/// optimizer as litgpt/utils.py instantiate_torch_optimizer takes it: a torch.optim class name, a dotted class path,
/// or LitGPT's own form {class_path, init_args} (init_args: lr, weight_decay, betas..., listed as ignored).
inline void litgpt_optimizer(const YAML::Node& v, training_spec& t, launcher_import& out) {
    std::string path;
    if (v.IsMap()) {
        for (const auto& kv : v) {
            const auto k = kv.first.Scalar();
            if (k == "class_path") path = litgpt_scalar(kv.second, "optimizer.class_path");
            else if (k == "init_args" && kv.second.IsMap())
                for (const auto& a : kv.second) out.ignored.push_back("optimizer.init_args." + a.first.Scalar());
            else throw config_error("litgpt.yaml: optimizer." + k + " is not class_path or init_args");
        }
        if (path.empty()) throw config_error("litgpt.yaml: optimizer has no class_path");
    } else {
        path = litgpt_scalar(v, "optimizer");
    }
    const auto name = path.rfind("torch.optim.", 0) == 0 ? path.substr(12) : path;
    if (name == "AdamW") t.optimizer = optimizer_kind::adamw;
    else if (name == "Adam") t.optimizer = optimizer_kind::adam;
    else if (name == "SGD") t.optimizer = optimizer_kind::sgd;
    else if (name == "bitsandbytes.optim.AdamW8bit") t.optimizer = optimizer_kind::adamw_8bit;
    else out.unknown.push_back("optimizer=" + printable(path) + " (not modelled: AdamW assumed)");
}

/// The model and world size given beside the file (import --model, --world-size): checked against the file's,
/// which LitGPT runs (a contradiction is refused, not ignored).
inline void litgpt_check_given(const import_options& opt, const transformer_spec& file_model, std::int64_t world) {
    const auto& g = opt.model;
    if (g.layers > 0 && (g.layers != file_model.layers || g.hidden != file_model.hidden || g.heads != file_model.heads ||
                         g.kv() != file_model.kv() || g.ffn_hidden != file_model.ffn_hidden || g.vocab != file_model.vocab))
        throw config_error("litgpt.yaml: the model given beside the file (" + printable(g.name) + ") is not the file's (" +
                           printable(file_model.name) + "), which LitGPT trains");
    if (opt.world_size > 0 && opt.world_size != world)
        throw config_error("litgpt.yaml: devices x num_nodes = " + std::to_string(world) + " contradicts the world size given beside "
                           "it (" + std::to_string(opt.world_size) + "); LitGPT starts the file's");
}

/// The train: section (TrainArgs): batch sizes, sequence length and the budget (max_tokens, or max_steps).
inline void litgpt_train(const YAML::Node& train, training_spec& t, std::int64_t& steps, launcher_import& out) {
    if (!train) return;
    if (!train.IsMap()) throw config_error("litgpt.yaml: train must be a mapping (TrainArgs)");
    for (const auto& kv : train) {
        const auto k = kv.first.Scalar();
        const auto where = "train." + k;
        if (k == "global_batch_size") t.global_batch = parse_int64(litgpt_scalar(kv.second, where), where, bounds::global_batch);
        else if (k == "micro_batch_size") t.micro_batch = parse_int64(litgpt_scalar(kv.second, where), where, bounds::micro_batch);
        else if (k == "max_seq_length") {
            if (kv.second.IsNull() || (kv.second.IsScalar() && (kv.second.Scalar() == "null" || kv.second.Scalar() == "~"))) continue;
            t.seq_len = parse_int64(litgpt_scalar(kv.second, where), where, bounds::seq_len);
        }
        else if (k == "max_tokens") t.total_tokens = parse_double(litgpt_scalar(kv.second, where), where, bounds::tokens);
        else if (k == "max_steps") steps = parse_int64(litgpt_scalar(kv.second, where), where, bounds::global_batch);
        else out.ignored.push_back(where);
    }
}

}  // namespace detail

/// litgpt.yaml -> job (LitGPT on Fabric; the world size is devices x num_nodes of the file).
inline launcher_import litgpt_import_yaml(const std::string& text, const import_options& opt = {}) {
    YAML::Node loaded;
    try {
        loaded = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw config_error("litgpt.yaml: not YAML (line " + std::to_string(e.mark.line + 1) + ": " + e.msg + ")");
    }
    const YAML::Node root = loaded;
    if (!root.IsMap()) throw config_error("litgpt.yaml: the file must be a mapping (a LitGPT command's arguments)");
    check_yaml_keys(root, "", 0, "litgpt.yaml");
    if (root["model_name"] && root["checkpoint_dir"])
        throw config_error("litgpt.yaml: model_name (pretrain) and checkpoint_dir (finetune_lora, finetune_full) are both given");
    if (!root["model_name"] && !root["checkpoint_dir"])
        throw config_error("litgpt.yaml: neither model_name (pretrain) nor checkpoint_dir (finetune_lora, finetune_full) "
                           "names the model");
    const std::string model_key = root["model_name"] ? "model_name" : "checkpoint_dir";
    launcher_import out;
    auto& j = out.job;
    j.runtime.framework = frameworks::litgpt::handle;
    j.model = detail::litgpt_model_spec(model_key, detail::litgpt_scalar(root[model_key], model_key));
    auto& t = j.training;
    t.precision = precision::bf16_mixed;  // get_default_supported_precision(training=True) on a bf16 GPU
    const bool full = model_key == "checkpoint_dir" && detail::litgpt_full_finetune(root);
    if (full) t.finetune.method = finetune_method::full;
    else if (model_key == "checkpoint_dir") t.finetune = {.method = finetune_method::lora, .rank = 8, .alpha = 16,
                                                          .targets = lora_q | lora_v, .dropout = 0.05};
    std::int64_t devices = 1, nodes = 1, steps = 0;
    for (const auto& kv : root) {
        const auto k = kv.first.Scalar();
        if (k == model_key) continue;
        if (k == "precision") t.precision = detail::litgpt_precision(detail::litgpt_scalar(kv.second, k));
        else if (k == "devices") devices = parse_int64(detail::litgpt_scalar(kv.second, k), k, bounds::gpus);
        else if (k == "num_nodes") nodes = parse_int64(detail::litgpt_scalar(kv.second, k), k, bounds::gpus);
        else if (k == "optimizer") detail::litgpt_optimizer(kv.second, t, out);
        else if (k == "train") detail::litgpt_train(kv.second, t, steps, out);
        else if (model_key == "checkpoint_dir" && !full && detail::litgpt_lora_key(k, kv.second, t.finetune)) continue;
        else out.ignored.push_back(k);
    }
    detail::litgpt_null_seq_len(root["train"], opt.training.seq_len, t, out);
    j.parallel.dp = checked_mul(devices, nodes, "devices x num_nodes");
    detail::litgpt_check_given(opt, j.model, j.parallel.dp);
    if (j.parallel.dp > 1) {
        j.parallel.sharding = sharding::full;
        j.parallel.recompute = model_key == "checkpoint_dir" ? recompute::full : recompute::none;
    }
    if (steps > 0) t.total_tokens = check_bound("train.max_steps (tokens)", static_cast<double>(steps) * j.tokens_per_step(), bounds::tokens);
    j.name = opt.name.empty() ? j.model.name : opt.name;
    out.world_size = j.parallel.dp;
    validate(j);
    return out;
}

}  // namespace frenzy
