#pragma once
// Job spec <-> JSON, in the format of DESIGN.md ("Job spec"). Unknown fields and values are errors.
#include <string>

#include <nlohmann/json.hpp>

#include "frenzy/io/json_reader.hpp"
#include "frenzy/model/hf_config.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

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
    if (r.has("moe") && !r.raw("moe").is_null()) {
        detail::object_reader e(r.raw("moe"), r.field("moe"));
        e.get("experts", m.moe.experts);
        e.get("top_k", m.moe.top_k);
        e.get("expert_ffn_hidden", m.moe.expert_ffn_hidden);
        e.get("shared_experts", m.moe.shared_experts);
        e.get("dense_layers", m.moe.dense_layers);
        e.finish();
    }
}

/// `model`: {"preset": NAME} | {"hf_config": PATH} | explicit fields; explicit fields override a preset.
inline transformer_spec model_from_json(const nlohmann::json& j, const std::string& path = "model") {
    if (j.is_string()) return preset(j.get<std::string>());
    detail::object_reader r(j, path);
    transformer_spec m;
    std::string preset_name, hf;
    r.get("preset", preset_name);
    r.get("hf_config", hf);
    if (!preset_name.empty() && !hf.empty()) throw config_error(path + ": give either preset or hf_config, not both");
    if (!preset_name.empty()) m = preset(preset_name);
    if (!hf.empty()) m = load_hf_config(hf);
    read_model_fields(r, m);
    r.finish();
    if (m.name.empty()) m.name = "custom";
    validate(m);
    return m;
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
    r.get("pipeline_schedule", p.schedule);
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
    r.get("optimizer_impl", rt.optimizer);
    r.finish();
    return rt;
}

/// A parsed job; `has_parallel` is false when the spec leaves the layout to the planner.
struct parsed_job {
    job_spec job;
    bool has_parallel = false;
};

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
    validate_bounds(out.job);  // also when the planner chooses the layout: bounds every number it will loop over
    validate(out.job.training);
    if (out.has_parallel) validate(out.job);
    return out;
}

inline parsed_job load_job(const std::string& path) {
    const auto j = detail::read_json_file(path);  // its errors name the file already
    try {
        return job_from_json(j);
    } catch (const config_error& e) {
        throw config_error(detail::printable(path, 200) + ": " + e.what());
    }
}

inline nlohmann::json to_json(const transformer_spec& m) {
    nlohmann::json j{{"name", m.name}, {"layers", m.layers}, {"hidden", m.hidden}, {"heads", m.heads},
                     {"kv_heads", m.kv_heads}, {"head_dim", m.head_dim}, {"ffn_hidden", m.ffn_hidden},
                     {"activation", to_string(m.activation)}, {"vocab", m.vocab},
                     {"tied_embeddings", m.tied_embeddings}, {"position_embedding", to_string(m.position_embedding)},
                     {"max_positions", m.max_positions}, {"norm", to_string(m.norm)}, {"bias", m.bias},
                     {"qkv_bias", m.qkv_bias}, {"embedding_norm", m.embedding_norm}};
    if (m.is_moe())
        j["moe"] = {{"experts", m.moe.experts}, {"top_k", m.moe.top_k}, {"expert_ffn_hidden", m.expert_ffn()},
                    {"shared_experts", m.moe.shared_experts}, {"dense_layers", m.moe.dense_layers}};
    return j;
}

inline nlohmann::json to_json(const parallel_config& p) {
    return {{"dp", p.dp}, {"tp", p.tp}, {"pp", p.pp}, {"vpp", p.vpp}, {"cp", p.cp}, {"ep", p.ep},
            {"sequence_parallel", p.sequence_parallel}, {"sharding", to_string(p.sharding)},
            {"recompute", to_string(p.recompute)}, {"pipeline_schedule", to_string(p.schedule)}};
}

inline nlohmann::json to_json(const training_spec& t) {
    return {{"seq_len", t.seq_len}, {"micro_batch", t.micro_batch}, {"global_batch", t.global_batch},
            {"precision", to_string(t.precision)}, {"optimizer", to_string(t.optimizer)},
            {"total_tokens", t.total_tokens}, {"checkpoint_interval_s", t.checkpoint_interval_s}};
}

inline nlohmann::json to_json(const job_spec& j) {
    return {{"name", j.name}, {"model", to_json(j.model)}, {"training", to_json(j.training)},
            {"parallel", to_json(j.parallel)},
            {"runtime", {{"framework", to_string(j.runtime.framework)}, {"attention", to_string(j.runtime.attention)},
                         {"compile", j.runtime.compile}, {"loss_chunks", j.runtime.loss_chunks},
                         {"optimizer_impl", to_string(j.runtime.optimizer)}}}};
}

}  // namespace frenzy
