#pragma once
// Job spec <-> JSON, in the format of docs/formats.md ("Job spec"). Unknown fields and values are errors.
#include <string>

#include <nlohmann/json.hpp>

#include "frenzy/io/json_reader.hpp"
#include "frenzy/train/batch_size.hpp"
#include "frenzy/io/hf_cache.hpp"
#include "frenzy/io/hf_config.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// `model.rope`: {"theta", "fraction", "scaling", "factor", "low_freq_factor", "high_freq_factor",
/// "original_max_positions", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "local_theta"}.
inline void read_rope_fields(const nlohmann::json& j, const std::string& path, rope_spec& o) {
    detail::object_reader a(j, path);
    a.get("theta", o.theta);
    a.get("fraction", o.fraction);
    a.get("scaling", o.scaling);
    a.get("factor", o.factor);
    a.get("low_freq_factor", o.low_freq_factor);
    a.get("high_freq_factor", o.high_freq_factor);
    a.get("original_max_positions", o.original_max_positions);
    a.get("beta_fast", o.beta_fast);
    a.get("beta_slow", o.beta_slow);
    a.get("mscale", o.mscale);
    a.get("mscale_all_dim", o.mscale_all_dim);
    a.get("local_theta", o.local_theta);
    a.finish();
}

/// Reads explicit model fields into `m` (which may hold a preset to override).
inline void read_model_fields(detail::object_reader& r, transformer_spec& m) {
    r.get("name", m.name);
    r.get("layers", m.layers);
    r.get("hidden", m.hidden);
    r.get("heads", m.heads);
    r.get("kv_heads", m.kv_heads);
    r.get("head_dim", m.head_dim);
    r.get("ffn_hidden", m.ffn_hidden);
    r.get("activation", m.activation);
    r.get("vocab", m.vocab);
    r.get("tied_embeddings", m.tied_embeddings);
    r.get("position_embedding", m.position_embedding);
    r.get("max_positions", m.max_positions);
    r.get("norm", m.norm);
    r.get("bias", m.bias);
    r.get("qkv_bias", m.qkv_bias);
    r.get("embedding_norm", m.embedding_norm);
    r.get("parallel_attention", m.parallel_attention);
    r.get("norms_per_layer", m.norms_per_layer);
    r.get("sliding_window", m.sliding_window);
    r.get("global_layer_every", m.global_layer_every);
    r.get("final_logit_softcap", m.final_logit_softcap);
    r.get("attn_logit_softcap", m.attn_logit_softcap);
    r.get("norm_eps", m.norm_eps);
    r.get("qk_norm", m.qk_norm);
    r.get("attention_sinks", m.attention_sinks);
    r.get("swiglu_limit", m.swiglu_limit);
    if (r.has("rope") && !r.raw("rope").is_null()) read_rope_fields(r.raw("rope"), r.field("rope"), m.rope);
    if (r.has("mla") && !r.raw("mla").is_null()) {
        detail::object_reader a(r.raw("mla"), r.field("mla"));
        a.get("q_lora_rank", m.mla.q_lora_rank);
        a.get("kv_lora_rank", m.mla.kv_lora_rank);
        a.get("qk_nope_head_dim", m.mla.qk_nope_head_dim);
        a.get("qk_rope_head_dim", m.mla.qk_rope_head_dim);
        a.get("v_head_dim", m.mla.v_head_dim);
        a.finish();
    }
    if (r.has("moe") && !r.raw("moe").is_null()) {
        detail::object_reader e(r.raw("moe"), r.field("moe"));
        e.get("experts", m.moe.experts);
        e.get("top_k", m.moe.top_k);
        e.get("expert_ffn_hidden", m.moe.expert_ffn_hidden);
        e.get("shared_experts", m.moe.shared_experts);
        e.get("dense_layers", m.moe.dense_layers);
        e.get("layer_step", m.moe.layer_step);
        e.get("capacity_factor", m.moe.capacity_factor);
        e.get("pad_to_capacity", m.moe.pad_to_capacity);
        e.get("score", m.moe.score);
        e.get("expert_bias", m.moe.expert_bias);
        e.get("groups", m.moe.groups);
        e.get("group_top_k", m.moe.group_top_k);
        e.get("topk_scaling", m.moe.topk_scaling);
        e.finish();
    }
}

/// `model`: {"preset": NAME} | {"hf_config": PATH} | explicit fields; explicit fields override a preset. A preset
/// name that is no preset may be ORG/NAME of a model in the local Hugging Face cache; PATH may be a snapshot folder
/// or ORG/NAME (io/hf_cache.hpp).
inline transformer_spec model_from_json(const nlohmann::json& j, const std::string& path = "model") {
    if (j.is_string()) return preset_or_cached(j.get<std::string>());
    detail::object_reader r(j, path);
    transformer_spec m;
    std::string preset_name, hf;
    r.get("preset", preset_name);
    r.get("hf_config", hf);
    if (!preset_name.empty() && !hf.empty()) throw config_error(path + ": give either preset or hf_config, not both");
    if (!preset_name.empty()) m = preset_or_cached(preset_name);
    if (!hf.empty()) m = load_hf_model(hf);
    read_model_fields(r, m);
    r.finish();
    if (m.name.empty()) m.name = "custom";
    validate(m);
    return m;
}

/// `training.finetune`: {"method": "full"|"freeze"|"lora"|"qlora", "rank", "alpha", "target_modules": [...],
/// "frozen_layers"}.
inline finetune_spec finetune_from_json(const nlohmann::json& j) {
    detail::object_reader r(j, "training.finetune");
    finetune_spec f;
    r.get("method", f.method);
    r.get("rank", f.rank);
    r.get("alpha", f.alpha);
    r.get("frozen_layers", f.frozen_layers);
    r.get("dropout", f.dropout);
    r.get("qlora_saves_inputs", f.qlora_saves_inputs);
    r.get("double_quant", f.double_quant);
    r.get("load_in_8bit", f.load_in_8bit);
    r.get("objective", f.objective);
    r.get("precompute_ref_log_probs", f.precompute_ref_log_probs);
    if (r.has("target_modules") && !r.raw("target_modules").is_null()) {
        const auto& a = r.raw("target_modules");
        if (!a.is_array()) throw config_error("training.finetune.target_modules=" + a.dump() + " must be an array of names");
        f.targets = 0;
        for (const auto& e : a) {
            const std::string name = e.is_string() ? e.get<std::string>() : e.dump();
            unsigned bit = 0;
            for (const auto& [b, n] : lora_target_names)
                if (n == name) bit = b;
            if (bit == 0 || !e.is_string())
                throw config_error("training.finetune.target_modules: \"" + name +
                                   "\" is not one of: q | k | v | o | gate | up | down");
            f.targets |= bit;
        }
    }
    if (r.has("modules_to_save") && !r.raw("modules_to_save").is_null()) {
        const auto& a = r.raw("modules_to_save");
        if (!a.is_array()) throw config_error("training.finetune.modules_to_save=" + a.dump() + " must be an array of names");
        for (const auto& e : a) {
            unsigned bit = 0;
            for (const auto& [b, n] : module_to_save_names)
                if (e.is_string() && n == e.get<std::string>()) bit = b;
            if (bit == 0)
                throw config_error("training.finetune.modules_to_save: " + e.dump() + " is not one of: embed_tokens | lm_head");
            f.modules_to_save |= bit;
        }
    }
    r.finish();
    return f;
}

inline nlohmann::json to_json(const finetune_spec& f) {
    nlohmann::json targets = nlohmann::json::array();
    for (const auto& [b, n] : lora_target_names)
        if (f.targets & b) targets.push_back(n);
    nlohmann::json out{{"method", to_string(f.method)}, {"rank", f.rank}, {"alpha", f.alpha}, {"target_modules", targets},
                       {"frozen_layers", f.frozen_layers}, {"dropout", f.dropout}, {"qlora_saves_inputs", f.qlora_saves_inputs},
                       {"double_quant", f.double_quant}};
    // written where set (absent: the defaults), so jobs without them read back as before
    if (f.load_in_8bit) out["load_in_8bit"] = true;
    if (f.modules_to_save != 0) {
        auto& m = out["modules_to_save"] = nlohmann::json::array();
        for (const auto& [b, n] : module_to_save_names)
            if (f.modules_to_save & b) m.push_back(n);
    }
    if (f.dpo()) out["objective"] = to_string(f.objective);
    if (f.precompute_ref_log_probs) out["precompute_ref_log_probs"] = true;
    return out;
}

inline training_spec training_from_json(const nlohmann::json& j) {
    detail::object_reader r(j, "training");
    training_spec t;
    r.get("seq_len", t.seq_len);
    r.get("micro_batch", t.micro_batch);
    r.get("global_batch", t.global_batch);
    r.get("precision", t.precision);
    r.get("optimizer", t.optimizer);
    r.get("total_tokens", t.total_tokens);
    r.get("checkpoint_interval_s", t.checkpoint_interval_s);
    if (r.has("finetune") && !r.raw("finetune").is_null()) t.finetune = finetune_from_json(r.raw("finetune"));
    r.finish();
    return t;
}

inline parallel_config parallel_from_json(const nlohmann::json& j) {
    detail::object_reader r(j, "parallel");
    parallel_config p;
    r.get("dp", p.dp);
    r.get("tp", p.tp);
    r.get("pp", p.pp);
    r.get("vpp", p.vpp);
    r.get("cp", p.cp);
    r.get("ep", p.ep);
    r.get("sequence_parallel", p.sequence_parallel);
    r.get("sharding", p.sharding);
    r.get("recompute", p.recompute);
    r.get("recompute_method", p.recompute_method);
    r.get("recompute_layers", p.recompute_layers);
    r.get("pipeline_schedule", p.schedule);
    r.get("etp", p.etp);
    r.get("moe_dispatcher", p.dispatcher);
    r.get("grouped_gemm", p.grouped_gemm);
    r.get("first_stage_layers", p.first_stage_layers);
    r.get("last_stage_layers", p.last_stage_layers);
    r.get("stage_layers", p.stage_layers, static_cast<std::size_t>(bounds::layers.max));  // one per stage, at most one stage per layer
    r.get("embedding_stage", p.embedding_stage);
    r.get("loss_stage", p.loss_stage);
    r.finish();
    return p;
}

inline runtime_spec runtime_from_json(const nlohmann::json& j) {
    detail::object_reader r(j, "runtime");
    runtime_spec rt;
    r.get("framework", rt.framework);
    r.get("attention", rt.attention);
    r.get("compile", rt.compile);
    r.get("loss_chunks", rt.loss_chunks);
    r.get("tp_comm_overlap", rt.tp_comm_overlap);
    r.get("overlap_grad_reduce", rt.overlap_grad_reduce);
    r.get("fp8_param_gather", rt.fp8_param_gather);
    r.get("grad_reduce_bf16", rt.grad_reduce_bf16);
    r.get("liger", rt.liger);
    r.get("paged_optimizer", rt.paged_optimizer);
    r.get("expandable_segments", rt.expandable_segments);
    r.get("empty_unused_memory_level", rt.empty_unused_memory_level);
    r.get("framework_version", rt.framework_version);
    // stack options that default to the framework's profile: absent or null = unset
    for (auto [key, field] : {std::pair{"dropout", &rt.dropout}, std::pair{"rope_fp32", &rt.rope_fp32},
                              std::pair{"norm_fp32", &rt.norm_fp32}, std::pair{"kv_repeat", &rt.kv_repeat}}) {
        if (!r.has(key) || r.raw(key).is_null()) continue;
        bool d = false;
        r.get(key, d);
        *field = d;
    }
    if (r.has("fp8_recipe") && !r.raw("fp8_recipe").is_null()) {
        fp8_recipe f{};
        r.get("fp8_recipe", f);
        rt.fp8_recipe = f;
    }
    if (r.has("loss") && !r.raw("loss").is_null()) {
        loss_style l{};
        r.get("loss", l);
        rt.loss = l;
    }
    r.get("optimizer_impl", rt.optimizer);
    if (r.has("offload") && !r.raw("offload").is_null()) {  // {"optimizer": bool, "parameters": bool, "activations": bool}
        detail::object_reader o(r.raw("offload"), "runtime.offload");
        o.get("optimizer", rt.offload.optimizer);
        o.get("parameters", rt.offload.parameters);
        o.get("activations", rt.offload.activations);
        o.finish();
    }
    r.finish();
    return rt;
}

/// A parsed job; `has_parallel` is false when the spec leaves the layout to the planner. `stated` holds the
/// layout fields the file gives (its `parallel` keys and training.micro_batch): the planner keeps those.
struct parsed_job {
    job_spec job;
    bool has_parallel = false;
    plan_constraints stated;
    /// training.global_batch was in the JSON; without it the global batch is micro_batch x dp (one micro-batch per
    /// GPU and step), as the CLI's flags make it
    bool global_batch_stated = false;
    bool framework_stated = false;  ///< runtime.framework given (else train/job.hpp default_framework)
    bool global_batch_chosen = false;  ///< choose_global_batch() set it

    /// For planning (plan, launch, serve and their Python calls): a global batch the job neither states nor fixes
    /// through a stated dp is chosen by default_global_batch (train/batch_size.hpp), since micro_batch x the
    /// unstated dp = 1 would allow only dp = 1 plans. Returns whether it chose one.
    bool choose_global_batch() {
        if (global_batch_stated || stated.dp) return false;
        job.training.global_batch = default_global_batch(job);
        return global_batch_chosen = true;
    }
};

/// The layout fields a job JSON states, as plan constraints.
inline plan_constraints stated_constraints(const nlohmann::json& j, const job_spec& job) {
    plan_constraints c;
    if (j.contains("training") && j["training"].is_object() && j["training"].contains("micro_batch"))
        c.micro_batch = job.training.micro_batch;
    if (!j.contains("parallel") || !j["parallel"].is_object()) return c;
    const auto& p = j["parallel"];
    const auto& q = job.parallel;
    auto pin = [&](const char* key, auto& out, auto value) {
        if (p.contains(key) && !p[key].is_null()) out = value;
    };
    pin("dp", c.dp, q.dp);
    pin("tp", c.tp, q.tp);
    pin("pp", c.pp, q.pp);
    pin("vpp", c.vpp, q.vpp);
    pin("cp", c.cp, q.cp);
    pin("ep", c.ep, q.ep);
    pin("sequence_parallel", c.sequence_parallel, q.sequence_parallel);
    pin("sharding", c.sharding, q.sharding);
    // A recompute method or unit size is a full-recompute setting: the planner keeps recompute full for it (a
    // stated recompute, pinned after, wins; validate(job) has rejected the pair unless it is full).
    pin("recompute_method", c.recompute, recompute::full);
    pin("recompute_layers", c.recompute, recompute::full);
    pin("recompute", c.recompute, q.recompute);
    pin("pipeline_schedule", c.schedule, q.schedule);
    return c;
}

/// Parses a job spec. The parallel rules are checked only when `parallel` is present.
inline parsed_job job_from_json(const nlohmann::json& j) {
    detail::object_reader r(j, "");
    parsed_job out;
    r.get("name", out.job.name);
    if (!r.has("model")) throw config_error("model is missing");
    out.job.model = model_from_json(r.raw("model"));
    if (r.has("training")) out.job.training = training_from_json(r.raw("training"));
    if (r.has("parallel") && !r.raw("parallel").is_null()) {
        out.job.parallel = parallel_from_json(r.raw("parallel"));
        out.has_parallel = true;
    }
    if (r.has("runtime")) out.job.runtime = runtime_from_json(r.raw("runtime"));
    r.finish();
    if (out.job.name.empty()) out.job.name = out.job.model.name;
    out.global_batch_stated = j.contains("training") && j["training"].is_object() && j["training"].contains("global_batch");
    out.framework_stated = j.contains("runtime") && j["runtime"].is_object() && j["runtime"].contains("framework");
    if (!out.framework_stated) out.job.runtime.framework = default_framework(out.job.training, out.job.parallel);
    if (!out.global_batch_stated) out.job.training.global_batch = out.job.training.micro_batch * out.job.parallel.dp;
    validate_bounds(out.job);  // also when the planner chooses the layout: bounds every number it will loop over
    validate(out.job.training);
    validate_finetune(out.job);
    if (out.has_parallel) validate(out.job);
    out.stated = stated_constraints(j, out.job);
    return out;
}

inline parsed_job load_job(const std::string& path) {
    const auto j = frenzy::read_json_file(path);  // its errors name the file already
    try {
        return job_from_json(j);
    } catch (const config_error& e) {
        throw config_error(frenzy::printable(path, 200) + ": " + e.what());
    }
}

/// The rotary spec: the base and share always, the scaling's fields with a scaling, Gemma 3's local base when set.
inline nlohmann::json to_json(const rope_spec& r) {
    nlohmann::json j{{"theta", r.theta}, {"fraction", r.fraction}, {"scaling", to_string(r.scaling)}};
    if (r.scaling != rope_scaling_kind::none)
        for (auto [k, v] : {std::pair{"factor", r.factor}, std::pair{"low_freq_factor", r.low_freq_factor},
                            std::pair{"high_freq_factor", r.high_freq_factor}, std::pair{"beta_fast", r.beta_fast},
                            std::pair{"beta_slow", r.beta_slow}, std::pair{"mscale", r.mscale},
                            std::pair{"mscale_all_dim", r.mscale_all_dim}})
            if (v != 0) j[k] = v;
    if (r.original_max_positions > 0) j["original_max_positions"] = r.original_max_positions;
    if (r.local_theta > 0) j["local_theta"] = r.local_theta;
    return j;
}

inline nlohmann::json to_json(const transformer_spec& m) {
    nlohmann::json j{{"name", m.name}, {"layers", m.layers}, {"hidden", m.hidden}, {"heads", m.heads},
                     {"kv_heads", m.kv_heads}, {"head_dim", m.head_dim}, {"ffn_hidden", m.ffn_hidden},
                     {"activation", to_string(m.activation)}, {"vocab", m.vocab},
                     {"tied_embeddings", m.tied_embeddings}, {"position_embedding", to_string(m.position_embedding)},
                     {"max_positions", m.max_positions}, {"norm", to_string(m.norm)}, {"bias", m.bias},
                     {"qkv_bias", m.qkv_bias}, {"embedding_norm", m.embedding_norm},
                     {"parallel_attention", m.parallel_attention}, {"norms_per_layer", m.norms_per_layer},
                     {"sliding_window", m.sliding_window}, {"global_layer_every", m.global_layer_every},
                     {"final_logit_softcap", m.final_logit_softcap}, {"attn_logit_softcap", m.attn_logit_softcap},
                     {"norm_eps", m.norm_eps}, {"qk_norm", m.qk_norm}};
    if (m.position_embedding == position_embedding::rope) j["rope"] = to_json(m.rope);
    if (m.is_moe())
        j["moe"] = {{"experts", m.moe.experts}, {"top_k", m.moe.top_k}, {"expert_ffn_hidden", m.expert_ffn()},
                    {"shared_experts", m.moe.shared_experts}, {"dense_layers", m.moe.dense_layers},
                    {"layer_step", m.moe.layer_step}};
    if (m.is_moe() && (m.moe.capacity_factor > 0 || m.moe.pad_to_capacity)) {
        j["moe"]["capacity_factor"] = m.moe.capacity_factor;
        j["moe"]["pad_to_capacity"] = m.moe.pad_to_capacity;
    }
    if (m.is_moe() && m.moe.custom_router()) {  // written only when set: outputs of other models stay as they were
        j["moe"]["score"] = to_string(m.moe.score);
        j["moe"]["expert_bias"] = m.moe.expert_bias;
        j["moe"]["groups"] = m.moe.groups;
        j["moe"]["group_top_k"] = m.moe.group_top_k;
        j["moe"]["topk_scaling"] = m.moe.topk_scaling;
    }
    if (m.attention_sinks) j["attention_sinks"] = true;
    if (m.swiglu_limit > 0) j["swiglu_limit"] = m.swiglu_limit;
    if (m.is_mla())
        j["mla"] = {{"q_lora_rank", m.mla.q_lora_rank}, {"kv_lora_rank", m.mla.kv_lora_rank},
                    {"qk_nope_head_dim", m.mla.qk_nope_head_dim}, {"qk_rope_head_dim", m.mla.qk_rope_head_dim},
                    {"v_head_dim", m.mla.v_head_dim}};
    return j;
}

inline nlohmann::json to_json(const parallel_config& p) {
    nlohmann::json out = {{"dp", p.dp}, {"tp", p.tp}, {"pp", p.pp}, {"vpp", p.vpp}, {"cp", p.cp}, {"ep", p.ep},
            {"sequence_parallel", p.sequence_parallel}, {"sharding", to_string(p.sharding)},
            {"recompute", to_string(p.recompute)}, {"recompute_method", to_string(p.recompute_method)},
            {"recompute_layers", p.recompute_layers}, {"pipeline_schedule", to_string(p.schedule)},
            {"etp", p.etp}, {"moe_dispatcher", to_string(p.dispatcher)}, {"grouped_gemm", p.grouped_gemm},
            {"first_stage_layers", p.first_stage_layers}, {"last_stage_layers", p.last_stage_layers},
            {"embedding_stage", p.embedding_stage}, {"loss_stage", p.loss_stage}};
    if (!p.stage_layers.empty()) out["stage_layers"] = p.stage_layers;  // a layout's own split (written only then)
    return out;
}

inline nlohmann::json to_json(const training_spec& t) {
    return {{"seq_len", t.seq_len}, {"micro_batch", t.micro_batch}, {"global_batch", t.global_batch},
            {"precision", to_string(t.precision)}, {"optimizer", to_string(t.optimizer)},
            {"total_tokens", t.total_tokens}, {"checkpoint_interval_s", t.checkpoint_interval_s},
            {"finetune", to_json(t.finetune)}};
}

inline nlohmann::json to_json(const runtime_spec& r) {
    nlohmann::json rt = {{"framework", to_string(r.framework)}, {"attention", to_string(r.attention)},
                         {"compile", r.compile}, {"loss_chunks", r.loss_chunks},
                         {"tp_comm_overlap", r.tp_comm_overlap}, {"overlap_grad_reduce", r.overlap_grad_reduce},
                         {"fp8_param_gather", r.fp8_param_gather}, {"grad_reduce_bf16", r.grad_reduce_bf16},
                         {"optimizer_impl", to_string(r.optimizer)},
                         {"offload", {{"optimizer", r.offload.optimizer},
                                      {"parameters", r.offload.parameters},
                                      {"activations", r.offload.activations}}}};
    // unset: the framework's profile (absent)
    for (auto [key, field] : {std::pair{"dropout", &r.dropout}, std::pair{"rope_fp32", &r.rope_fp32},
                              std::pair{"norm_fp32", &r.norm_fp32}, std::pair{"kv_repeat", &r.kv_repeat}})
        if (*field) rt[key] = **field;
    if (r.loss) rt["loss"] = to_string(*r.loss);
    if (!r.framework_version.empty()) rt["framework_version"] = r.framework_version;
    if (r.fp8_recipe) rt["fp8_recipe"] = to_string(*r.fp8_recipe);
    if (r.liger) rt["liger"] = true;  // absent: false
    if (r.paged_optimizer) rt["paged_optimizer"] = true;  // absent: false
    if (r.expandable_segments) rt["expandable_segments"] = true;  // absent: false
    if (r.empty_unused_memory_level != 0) rt["empty_unused_memory_level"] = r.empty_unused_memory_level;  // absent: 0
    return rt;
}

inline nlohmann::json to_json(const job_spec& j) {
    return {{"name", j.name}, {"model", to_json(j.model)}, {"training", to_json(j.training)},
            {"parallel", to_json(j.parallel)}, {"runtime", to_json(j.runtime)}};
}

/// ADL hooks in nlohmann's style, one codec pair per type through the functions above: `nlohmann::json j = job;`
/// and `j.get<frenzy::job_spec>()`, and the same for each part of a job.
inline void to_json(nlohmann::json& out, const job_spec& j) { out = to_json(j); }
inline void from_json(const nlohmann::json& in, job_spec& j) { j = job_from_json(in).job; }
inline void to_json(nlohmann::json& out, const transformer_spec& m) { out = to_json(m); }
inline void from_json(const nlohmann::json& in, transformer_spec& m) { m = model_from_json(in); }
inline void to_json(nlohmann::json& out, const training_spec& t) { out = to_json(t); }
inline void from_json(const nlohmann::json& in, training_spec& t) { t = training_from_json(in); }
inline void to_json(nlohmann::json& out, const parallel_config& p) { out = to_json(p); }
inline void from_json(const nlohmann::json& in, parallel_config& p) { p = parallel_from_json(in); }
inline void to_json(nlohmann::json& out, const runtime_spec& r) { out = to_json(r); }
inline void from_json(const nlohmann::json& in, runtime_spec& r) { r = runtime_from_json(in); }
inline void to_json(nlohmann::json& out, const finetune_spec& f) { out = to_json(f); }
inline void from_json(const nlohmann::json& in, finetune_spec& f) { f = finetune_from_json(in); }

}  // namespace frenzy
