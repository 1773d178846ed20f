#pragma once
// torchtune's recipe config (torchtune.yaml, as frameworks/torchtune/launcher.hpp writes it) -> job spec, so
// `launch --framework torchtune` then `import --from torchtune:torchtune.yaml` gives back the plan's layout, batch
// sizes, precision, method (full, LoRA, QLoRA: the model builder's prefix) and token budget. Keys as the recipes read
// them at pytorch/torchtune@bd2a0fc7 (recipes/{full,lora}_finetune_{distributed,single_device}.py): dtype,
// batch_size, gradient_accumulation_steps, epochs, max_steps_per_epoch, enable_activation_checkpointing,
// enable_activation_offloading, compile, fsdp_reshard_after_forward (default True), fsdp_cpu_offload,
// optimizer_in_bwd, model (a builder of torchtune.models.<family>: frameworks/torchtune/models.hpp), tokenizer
// (max_seq_len: the packed sequence length), optimizer, loss (num_output_chunks, default 8). The world size is not
// in the file (tune run takes it): import_options.world_size gives it, dp = the world size. Needs yaml-cpp.
#include <string>

#include <yaml-cpp/yaml.h>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/frameworks/torchtune/models.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/io/launcher_yaml.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/frameworks/registry.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

namespace detail {

/// One scalar of torchtune.yaml as text; config_error naming `where` for a mapping or a list.
inline std::string tune_scalar(const YAML::Node& v, const std::string& where) {
    if (!v.IsScalar()) throw config_error("torchtune.yaml: " + where + " must be a single value");
    return v.Scalar();
}
inline bool tune_bool(const YAML::Node& v, const std::string& where) {
    if (const auto b = yaml_bool(v); v.IsScalar() && b) return *b;
    throw config_error("torchtune.yaml: " + where + " must be True or False");
}
inline bool tune_null(const YAML::Node& v) { return v.IsNull() || (v.IsScalar() && (v.Scalar() == "null" || v.Scalar() == "~")); }

/// The keys beside a full-model builder (torchtune.models.llama3_2.llama3_2_1b(), which takes no LoRA argument):
/// a LoRA key is refused as config.instantiate fails on it (TypeError: unexpected keyword argument); others listed.
inline void tune_full_builder_keys(const YAML::Node& m, const std::string& component, launcher_import& out) {
    for (const auto& kv : m) {
        const auto k = kv.first.Scalar();
        if (k == "_component_") continue;
        if (k.rfind("lora_", 0) == 0 || k.rfind("apply_lora_", 0) == 0 || k == "use_dora" || k == "quantize_base")
            throw config_error("torchtune.yaml: model." + k + " beside model._component_=" + printable(component) + ", a full-model "
                               "builder: it takes no LoRA arguments (torchtune's instantiate raises TypeError); a LoRA fine-tune "
                               "names the lora_ builder");
        out.unknown.push_back("model." + k + " (an argument of the full-model builder, not read)");
    }
}

/// model: the builder (preset and method) and the LoRA arguments.
inline void tune_model(const YAML::Node& m, const transformer_spec& given, launcher_import& out) {
    if (!m || !m.IsMap() || !m["_component_"]) throw config_error("torchtune.yaml: model._component_ is missing (a torchtune.models builder)");
    const auto component = tune_scalar(m["_component_"], "model._component_");
    const auto found = frameworks::torchtune::find_component(component);
    if (!found) throw config_error("torchtune.yaml: model._component_=" + printable(component) + " is not a builder Frenzy knows the shape of");
    const auto& [entry, prefix] = *found;
    auto model = preset(entry.preset);
    model.name = std::string(entry.preset);
    if (given.layers > 0) {
        if (given.layers != model.layers || given.hidden != model.hidden || given.heads != model.heads ||
            given.kv() != model.kv() || given.ffn_hidden != model.ffn_hidden || given.vocab != model.vocab)
            throw config_error("torchtune.yaml: model._component_=" + printable(component) +
                               " contradicts the model given beside the file (" + printable(given.name) + ")");
        model = given;
    }
    auto& j = out.job;
    j.model = model;
    auto& ft = j.training.finetune;
    ft.method = prefix == "qlora_" ? finetune_method::qlora : prefix == "lora_" ? finetune_method::lora : finetune_method::full;
    if (!ft.adapters()) return tune_full_builder_keys(m, component, out);
    unsigned targets = 0;
    for (const auto& kv : m) {
        const auto k = kv.first.Scalar();
        const auto where = "model." + k;
        if (k == "lora_rank") ft.rank = parse_int64(tune_scalar(kv.second, where), where, bounds::lora_rank);
        else if (k == "lora_alpha") ft.alpha = parse_double(tune_scalar(kv.second, where), where, bounds::rate);
        else if (k == "lora_dropout") ft.dropout = parse_double(tune_scalar(kv.second, where), where, bounds::rate);
        else if (k == "apply_lora_to_mlp") targets |= tune_bool(kv.second, where) ? (lora_gate | lora_up | lora_down) : 0u;
        else if (k == "lora_attn_modules") {
            if (!kv.second.IsSequence()) throw config_error("torchtune.yaml: model.lora_attn_modules must be a list");
            if (kv.second.size() == 0)  // torchtune@bd2a0fc7 models/llama3/_component_builders.py lora_llama3_self_attention
                throw config_error("torchtune.yaml: model.lora_attn_modules=[]: torchtune's LoRA builders raise \"Must pass one or "
                                   "more of ['q_proj', 'k_proj', 'v_proj', 'output_proj'] as lora_modules\"");
            for (const auto& e : kv.second) {
                const auto n = tune_scalar(e, where);
                if (n == "q_proj") targets |= lora_q;
                else if (n == "k_proj") targets |= lora_k;
                else if (n == "v_proj") targets |= lora_v;
                else if (n == "output_proj") targets |= lora_o;
                else throw config_error("torchtune.yaml: model.lora_attn_modules holds " + printable(n) +
                                        " (q_proj, k_proj, v_proj, output_proj)");
            }
        } else if (k == "apply_lora_to_output") {
            if (tune_bool(kv.second, where)) out.unknown.push_back("model.apply_lora_to_output=True (not modelled)");
        } else if (k != "_component_") out.ignored.push_back(where);
    }
    if (targets != 0) ft.targets = targets;
}

/// A top-level key that says something about memory or the schedule; false when it is not one of them.
inline bool tune_memory_key(const std::string& k, const YAML::Node& v, launcher_import& out) {
    auto& j = out.job;
    if (k == "dtype") {
        const auto d = tune_scalar(v, k);
        if (d != "bf16" && d != "fp32") throw config_error("torchtune.yaml: dtype=" + printable(d) + " must be bf16 or fp32");
        j.training.precision = d == "bf16" ? precision::bf16 : precision::fp32;
    } else if (k == "enable_activation_checkpointing") j.parallel.recompute = tune_bool(v, k) ? recompute::full : recompute::none;
    else if (k == "enable_activation_offloading") j.runtime.offload.activations = tune_bool(v, k);
    else if (k == "compile") j.runtime.compile = tune_bool(v, k);
    else if (k == "fsdp_cpu_offload") j.runtime.offload.parameters = j.runtime.offload.optimizer = tune_bool(v, k);
    else if (k == "optimizer_in_bwd") {
        if (tune_bool(v, k)) j.runtime.optimizer = optimizer_impl::in_backward;
    } else return false;
    return true;
}

/// optimizer: AdamW (fused unless fused: False) or bitsandbytes' 8-bit AdamW.
inline void tune_optimizer(const YAML::Node& o, launcher_import& out) {
    if (!o || !o.IsMap() || !o["_component_"]) return;
    const auto c = tune_scalar(o["_component_"], "optimizer._component_");
    auto& j = out.job;
    if (c.find("AdamW8bit") != std::string::npos) j.training.optimizer = optimizer_kind::adamw_8bit;
    else if (c == "torch.optim.AdamW") j.training.optimizer = optimizer_kind::adamw;
    else out.unknown.push_back("optimizer._component_=" + printable(c) + " (AdamW assumed)");
    if (o["fused"] && !tune_bool(o["fused"], "optimizer.fused") && j.runtime.optimizer != optimizer_impl::in_backward)
        j.runtime.optimizer = optimizer_impl::foreach;
}

/// loss: torchtune's chunked cross-entropy losses (modules/loss: LinearCrossEntropyLoss, CEWithChunkedOutputLoss,
/// both num_output_chunks=8 by default); another _component_ is refused, not read as the default loss.
inline void tune_loss(const YAML::Node& v, launcher_import& out) {
    if (v["_component_"]) {
        const auto c = tune_scalar(v["_component_"], "loss._component_");
        if (c != "torchtune.modules.loss.LinearCrossEntropyLoss" && c != "torchtune.modules.loss.CEWithChunkedOutputLoss")
            throw config_error("torchtune.yaml: loss._component_=" + printable(c) + " is not a loss Frenzy reads "
                               "(torchtune.modules.loss.LinearCrossEntropyLoss or CEWithChunkedOutputLoss)");
    }
    out.job.runtime.loss_chunks = v["num_output_chunks"] ? parse_int64(tune_scalar(v["num_output_chunks"], "loss.num_output_chunks"),
                                                                       "loss.num_output_chunks", bounds::chunks)
                                                         : 8;
}

}  // namespace detail

/// torchtune.yaml -> job (FSDP2 data parallel: dp = opt.world_size; one GPU without it).
inline launcher_import torchtune_import_yaml(const std::string& text, const import_options& opt = {}) {
    YAML::Node loaded;
    try {
        loaded = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw config_error("torchtune.yaml: not YAML (line " + std::to_string(e.mark.line + 1) + ": " + e.msg + ")");
    }
    const YAML::Node root = loaded;
    if (!root.IsMap()) throw config_error("torchtune.yaml: the file must be a mapping (a recipe config)");
    check_yaml_keys(root, "", 0, "torchtune.yaml");
    launcher_import out;
    auto& j = out.job;
    j.runtime.framework = frameworks::torchtune::handle;
    j.training.precision = precision::bf16;
    detail::tune_model(root["model"], opt.model, out);
    auto& t = j.training;
    out.has_parallel = opt.world_size > 0;
    j.parallel.dp = out.has_parallel ? opt.world_size : 1;
    j.parallel.sharding = j.parallel.dp > 1 ? sharding::full : sharding::none;
    std::int64_t ga = 1, epochs = 1, steps = 0;
    for (const auto& kv : root) {
        const auto k = kv.first.Scalar();
        const auto& v = kv.second;
        if (k == "model" || detail::tune_memory_key(k, v, out)) continue;
        if (k == "batch_size") t.micro_batch = parse_int64(detail::tune_scalar(v, k), k, bounds::micro_batch);
        else if (k == "gradient_accumulation_steps") ga = parse_int64(detail::tune_scalar(v, k), k, bounds::global_batch);
        else if (k == "epochs") epochs = parse_int64(detail::tune_scalar(v, k), k, bounds::global_batch);
        else if (k == "max_steps_per_epoch") steps = detail::tune_null(v) ? 0 : parse_int64(detail::tune_scalar(v, k), k, bounds::steps);
        else if (k == "fsdp_reshard_after_forward") {
            if (j.parallel.dp > 1 && !detail::tune_bool(v, k)) j.parallel.sharding = sharding::gradients;
        } else if (k == "tokenizer" && v.IsMap() && v["max_seq_len"] && !detail::tune_null(v["max_seq_len"]))
            t.seq_len = parse_int64(detail::tune_scalar(v["max_seq_len"], "tokenizer.max_seq_len"), "tokenizer.max_seq_len", bounds::seq_len);
        else if (k == "optimizer") detail::tune_optimizer(v, out);
        else if (k == "loss" && v.IsMap()) detail::tune_loss(v, out);
        else if (k == "tensor_parallel_dim" || k == "context_parallel_dim") {
            if (detail::tune_scalar(v, k) != "1") out.unknown.push_back(k + "=" + printable(v.Scalar()) + " (not modelled)");
        } else out.ignored.push_back(k);
    }
    const auto& tok = root["tokenizer"];
    if (!tok || !tok.IsMap() || !tok["max_seq_len"] || detail::tune_null(tok["max_seq_len"])) {  // no length in the file
        t.seq_len = opt.training.seq_len;
        out.notes.push_back("tokenizer.max_seq_len not set: torchtune truncates nothing (the longest sample sets the length); "
                            "seq_len " + std::to_string(t.seq_len) + " assumed (--seq-len sets it)");
    }
    if (j.runtime.offload.activations && j.parallel.recompute != recompute::full)  // recipes/*_finetune_*.py __init__
        throw config_error("torchtune.yaml: enable_activation_offloading=True without enable_activation_checkpointing: the recipes "
                           "raise (\"enable_activation_offloading should only be True when enable_activation_checkpointing is True\")");
    t.global_batch = checked_mul(checked_mul(t.micro_batch, ga, "batch_size x gradient_accumulation_steps"), j.parallel.dp,
                                 "batch_size x gradient_accumulation_steps x world size");
    if (steps > 0) t.total_tokens = static_cast<double>(checked_mul(steps, epochs, "max_steps_per_epoch x epochs")) * j.tokens_per_step();
    else out.notes.push_back("max_steps_per_epoch=null: the run lasts `epochs` passes over the dataset; no token budget read");
    j.name = opt.name.empty() ? j.model.name : opt.name;
    out.world_size = opt.world_size;
    validate(j.model);
    validate(t);
    validate(j);
    return out;
}

}  // namespace frenzy
