#pragma once
// Results -> JSON: the one place the `--json` keys of `frenzy estimate`, `plan`, `import`, `gpus` and `models` are
// built (docs/formats.md lists them; `frenzy launch` is launch/launch_json.hpp, above io/ in the include graph). The Python module and the service serialise through these too. Sizes in bytes,
// times in seconds; a figure that does not exist (no GPU given, no token budget, no price) is null, never 0.
// The spec codecs (io/job_json.hpp, io/cluster_json.hpp) build nlohmann::json, whose keys are sorted: they enter
// these ordered documents by nlohmann's conversion between the two types (no text in between), keeping that order.
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "frenzy/io/cluster_json.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/memory/device.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/plan/dataset_fit.hpp"
#include "frenzy/plan/estimate.hpp"
#include "frenzy/plan/fit_advice.hpp"
#include "frenzy/plan/nearest_fit.hpp"
#include "frenzy/plan/plan.hpp"

namespace frenzy {

inline void to_json(nlohmann::ordered_json& out, const plan& p);  // below: estimate's advice holds plans

inline void to_json(nlohmann::ordered_json& out, const stage_memory& st) {
    out = {{"stage", st.stage},
           {"parameters", st.parameters},
           {"weights_bytes", st.breakdown.weights.value},
           {"gradients_bytes", st.breakdown.gradients.value},
           {"optimizer_bytes", st.breakdown.optimizer.value},
           {"activations_bytes", st.breakdown.activations.value},
           {"temporary_bytes", st.breakdown.temporary.value},
           {"peak_allocated_bytes", st.peak_allocated.value},
           {"peak_reserved_bytes", st.peak_reserved.value},
           {"in_flight_micro_batches", st.in_flight_micro_batches}};
}

inline void to_json(nlohmann::ordered_json& out, const memory_report& r) {
    out = {{"parameters", r.parameters},
           {"peak_allocated_bytes", r.peak_allocated.value},
           {"peak_reserved_bytes", r.peak_reserved.value},
           {"uncertainty", r.uncertainty},
           {"bottleneck_stage", r.bottleneck_stage},
           {"stages", r.stages}};
    if (r.host_per_gpu.value > 0) out["host_bytes_per_gpu"] = r.host_per_gpu.value;  // offload only
    if (r.paged.value > 0) out["paged_bytes"] = r.paged.value;  // runtime.paged_optimizer only
    // offloaded activations' pinned host memory (Unsloth's checkpoints, runtime.offload.activations) only
    if (r.host_activations.value > 0) out["host_activation_bytes_per_gpu"] = r.host_activations.value;
}

/// `estimate --json`'s `readouts` (memory/device.hpp): what each common readout would show at the peak.
inline void to_json(nlohmann::ordered_json& out, const device_footprint& d) {
    out = {{"allocated_bytes", d.allocated.value}, {"reserved_bytes", d.reserved.value},
           {"cuda_context_bytes", d.cuda_context.value}, {"nccl_bytes", d.nccl.value},
           {"paged_bytes", d.paged.value}, {"paged_resident_bytes", d.paged_resident.value},
           {"device_bytes", d.device.value}};
}

inline void to_json(nlohmann::ordered_json& out, const fit_check& f) {
    out = {{"fits", f.fits}, {"verdict", to_string(f.verdict)}, {"required_bytes", f.required.value},
           {"central_bytes", f.central.value}, {"capacity_bytes", f.capacity.value},
           {"allocated_required_bytes", f.allocated_required.value}, {"cache_flushes", f.cache_flushes}};
}

/// One element of `frenzy estimate --json`'s `nearest_fits`: the field changed, its old and new value, the verdict.
inline void to_json(nlohmann::ordered_json& out, const fit_suggestion& f) {
    out = {{"field", f.field}, {"from", f.from}, {"to", f.to}, {"gpus", f.job.parallel.gpus()}};
    nlohmann::ordered_json fit = f.fit;
    for (auto it = fit.begin(); it != fit.end(); ++it) out[it.key()] = it.value();
}

/// `frenzy estimate --json`: the job, its memory report, and with a GPU the fit and speed.
inline void to_json(nlohmann::ordered_json& out, const estimate_result& e) {
    out = nlohmann::ordered_json::object();
    out["job"] = nlohmann::ordered_json(to_json(e.job));  // sorted keys, as the job JSON is written
    nlohmann::ordered_json mem = e.memory;
    for (auto it = mem.begin(); it != mem.end(); ++it) out[it.key()] = it.value();
    // a mixture of experts: the parameters one token passes through (routed top-k, shared experts, dense layers)
    if (e.job.model.is_moe()) out["active_parameters"] = active_parameters(e.job.model, e.job.training.seq_len);
    out["gpus"] = e.job.parallel.gpus();
    out["margin"] = e.margin;
    if (!e.gpu) return;
    out["gpu"] = e.gpu->name;
    // the offload's host side on a node of the type's usual size (memory/fit.hpp)
    if (e.memory.host_per_gpu.value > 0)
        out["host_bytes_per_node"] = host_memory_per_node(e.memory, e.job.parallel.gpus(), e.gpu->gpus_per_node).value;
    if (e.memory.host_activations.value > 0)  // each of the node's processes pins its own
        out["host_activation_bytes_per_node"] = e.memory.host_activations.value *
                                                static_cast<double>(std::min<std::int64_t>(e.job.parallel.gpus(), e.gpu->gpus_per_node));
    nlohmann::ordered_json fit = *e.fit;
    for (auto it = fit.begin(); it != fit.end(); ++it) out[it.key()] = it.value();
    out["readouts"] = device_readouts(e.memory, *e.gpu);
    if (e.speed && e.speed->supported) {  // absent when there is no prediction (docs/formats.md: no nulls)
        out["step_time_s"] = e.speed->step_time.value;
        out["tokens_per_s"] = e.speed->tokens_per_s;
        out["mfu"] = e.speed->mfu;
        out["mfu_ceiling"] = e.speed->mfu_ceiling;
        out["above_mfu_ceiling"] = e.speed->above_mfu_ceiling;
        out["rel_error_band"] = e.speed->rel_error_band;
        out["error_regime"] = std::string(e.speed->error_regime);
        auto parts = nlohmann::ordered_json::array();  // shares of step_time_s (perf/step_time.hpp)
        for (const auto& part : step_time_parts(e.speed->parts))
            parts.push_back({{"part", std::string(part.name)}, {"seconds", part.seconds}});
        out["step_parts"] = std::move(parts);
    }
    if (e.speed && !e.speed->supported) out["perf_reason"] = e.speed->reason;
    if (e.advice) {
        out["nearest_fits"] = e.advice->changes;
        if (e.advice->planner.same_gpus) out["planner_same_gpus"] = *e.advice->planner.same_gpus;
        if (e.advice->planner.fewest_gpus) out["planner_fewest_gpus"] = *e.advice->planner.fewest_gpus;
        if (!e.advice->planner.none_reason.empty()) out["planner_none_reason"] = e.advice->planner.none_reason;
        out["planner_global_batch"] = e.advice->planner.global_batch;  // chosen by the planner unless the job states it
        out["planner_global_batch_chosen"] = e.advice->planner.global_batch_chosen;
        out["planner_max_gpus"] = e.advice->planner.max_gpus;
    }
}

/// A layout: the same keys as the job spec's `parallel` (io/job_json.hpp writes them; one place).
inline void to_json(nlohmann::ordered_json& out, const parallel_config& q) {
    out = nlohmann::ordered_json(to_json(q));
}

namespace detail {
inline void pipeline_to_json(nlohmann::ordered_json& out, const plan& p);  // below
inline void pipeline_from_json(const nlohmann::json& in, plan& p);
}  // namespace detail

/// One element of `frenzy plan --json`'s `plans`; a plan with stage groups is written as an element of its
/// `mixed_plans` (its groups, without the per-GPU keys of one type).
inline void to_json(nlohmann::ordered_json& out, const plan& p) {
    if (p.mixed()) return detail::pipeline_to_json(out, p);
    out = {{"gpu", p.gpu},
           {"gpus", p.gpus},
           {"nodes", p.nodes},
           {"gpus_per_node", p.gpus_per_node},
           {"framework", to_string(p.framework)},
           {"precision", to_string(p.precision)},
           {"precision_alternative", p.precision_alternative},
           {"parallel", p.parallel},
           {"micro_batch", p.micro_batch},
           {"overlap_grad_reduce", p.overlap_grad_reduce},
           {"tp_comm_overlap", p.tp_comm_overlap},
           {"peak_allocated_bytes", p.peak_allocated.value},
           {"peak_reserved_bytes", p.peak_reserved.value},
           {"required_bytes", p.required.value},
           {"capacity_bytes", p.capacity.value},
           {"step_time_s", p.step_time.value},
           {"tokens_per_s", p.tokens_per_s},
           {"mfu", p.mfu},
           {"mfu_ceiling", p.mfu_ceiling},
           {"rel_error_band", p.rel_error_band},
           {"error_regime", p.error_regime},
           {"attention", to_string(p.attention)}};
    if (p.uncapped_tokens_per_s > 0) out["uncapped_tokens_per_s"] = p.uncapped_tokens_per_s;  // capped at mfu_ceiling
    if (!p.has_budget) return;  // without a token budget there is no time, GPU-hours or cost: the keys are absent
    out["est_time_s"] = p.est_time.value;
    out["gpu_hours"] = p.gpu_hours;
    out["billed_gpu_hours"] = p.billed_gpu_hours;
    if (p.cost) out["cost"] = *p.cost;
}

namespace detail {
/// How a plan runs: framework, precision, layout, micro-batch, overlap flags.
inline void read_run_settings(object_reader& r, plan& p) {
    r.get("framework", p.framework);
    r.get("precision", p.precision);
    if (r.has("parallel")) p.parallel = parallel_from_json(r.raw("parallel"));
    r.get("micro_batch", p.micro_batch);
    r.get("overlap_grad_reduce", p.overlap_grad_reduce);
    r.get("tp_comm_overlap", p.tp_comm_overlap);
}
/// The budget keys of a plan (est_time_s, gpu_hours, billed_gpu_hours, cost), each optional: a plan
/// without a token budget has none, one without a price no cost.
inline void read_budget(object_reader& r, const nlohmann::json& in, plan& p) {
    p.has_budget = r.has("est_time_s") && !in.at("est_time_s").is_null();
    r.get("est_time_s", p.est_time.value);
    r.get("gpu_hours", p.gpu_hours);
    r.get("billed_gpu_hours", p.billed_gpu_hours);
    const bool costed = r.has("cost") && !in.at("cost").is_null();
    double cost = 0;
    r.get("cost", cost);
    if (costed) p.cost = cost;
}
}  // namespace detail

/// A plan back from the JSON to_json writes (the service's store keeps plans as this text), of either form (one
/// with `groups` is a pipeline over several types): every key to_json writes, the budget keys (est_time_s,
/// gpu_hours, billed_gpu_hours, cost) optional; unknown keys are errors. to_json -> from_json -> to_json gives the
/// same text.
inline void from_json(const nlohmann::json& in, plan& p) {
    if (in.is_object() && in.contains("groups")) return detail::pipeline_from_json(in, p);
    detail::object_reader r(in, "plan");
    p = plan{};
    r.get("gpu", p.gpu);
    r.get("gpus", p.gpus);
    r.get("nodes", p.nodes);
    r.get("gpus_per_node", p.gpus_per_node);
    detail::read_run_settings(r, p);
    r.get("precision_alternative", p.precision_alternative);
    r.get("peak_allocated_bytes", p.peak_allocated.value);
    r.get("peak_reserved_bytes", p.peak_reserved.value);
    r.get("required_bytes", p.required.value);
    r.get("capacity_bytes", p.capacity.value);
    r.get("step_time_s", p.step_time.value);
    r.get("tokens_per_s", p.tokens_per_s);
    r.get("mfu", p.mfu);
    r.get("mfu_ceiling", p.mfu_ceiling);
    r.get("rel_error_band", p.rel_error_band);
    r.get("error_regime", p.error_regime);
    r.get("attention", p.attention);
    r.get("uncapped_tokens_per_s", p.uncapped_tokens_per_s);
    detail::read_budget(r, in, p);
    r.finish();
}
inline void from_json(const nlohmann::ordered_json& in, plan& p) { from_json(nlohmann::json(in), p); }

inline void to_json(nlohmann::ordered_json& out, const infeasible_type& f) { out = {{"gpu", f.gpu}, {"reason", f.reason}}; }

/// One stage group of a mixed plan (plan/plan.hpp stage_group).
inline void to_json(nlohmann::ordered_json& out, const stage_group& g) {
    out = {{"gpu", g.gpu},
           {"gpus", g.gpus},
           {"nodes", g.nodes},
           {"gpus_per_node", g.gpus_per_node},
           {"first_stage", g.first_stage},
           {"stages", g.stages},
           {"layers", g.layers},
           {"peak_reserved_bytes", g.peak_reserved.value},
           {"required_bytes", g.required.value},
           {"capacity_bytes", g.capacity.value},
           {"slot_s", g.slot_s},
           {"tail_s", g.tail_s}};
}

namespace detail {
/// A plan over several GPU types (plan::groups); the budget keys as a single-type plan's.
inline void pipeline_to_json(nlohmann::ordered_json& out, const plan& p) {
    out = nlohmann::ordered_json::object();
    out["gpus"] = p.gpus;
    out["groups"] = p.groups;
    out["framework"] = to_string(p.framework);
    out["precision"] = to_string(p.precision);
    out["parallel"] = nlohmann::ordered_json(to_json(p.parallel));
    out["micro_batch"] = p.micro_batch;
    out["overlap_grad_reduce"] = p.overlap_grad_reduce;
    out["tp_comm_overlap"] = p.tp_comm_overlap;
    out["step_time_s"] = p.step_time.value;
    out["tokens_per_s"] = p.tokens_per_s;
    out["mfu"] = p.mfu;
    out["rel_error_band"] = p.rel_error_band;
    if (p.has_budget) {
        out["est_time_s"] = p.est_time.value;
        out["gpu_hours"] = p.gpu_hours;
        out["billed_gpu_hours"] = p.billed_gpu_hours;
        if (p.cost) out["cost"] = *p.cost;
    }
}
}  // namespace detail

/// A stage group back from to_json's JSON; every key required, unknown keys are errors.
inline void from_json(const nlohmann::json& in, stage_group& g) {
    detail::object_reader r(in, "groups[]");
    g = stage_group{};
    for (const char* k : {"gpu", "gpus", "nodes", "gpus_per_node", "first_stage", "stages", "layers", "peak_reserved_bytes",
                          "required_bytes", "capacity_bytes", "slot_s", "tail_s"})
        if (!r.has(k)) throw config_error(r.field(k) + " is missing");
    r.get("gpu", g.gpu);
    r.get("gpus", g.gpus);
    r.get("nodes", g.nodes);
    r.get("gpus_per_node", g.gpus_per_node);
    r.get("first_stage", g.first_stage);
    r.get("stages", g.stages);
    r.get("layers", g.layers);
    r.get("peak_reserved_bytes", g.peak_reserved.value);
    r.get("required_bytes", g.required.value);
    r.get("capacity_bytes", g.capacity.value);
    r.get("slot_s", g.slot_s);
    r.get("tail_s", g.tail_s);
    r.finish();
}

namespace detail {
/// A plan over several GPU types back from pipeline_to_json's JSON (the service's store keeps the plan of a job
/// that runs one as this text; errors name it `mixed_plan`, the key launch --json writes it under): the budget keys
/// optional as a single-type plan's, unknown keys errors; to_json -> from_json -> to_json gives the same text.
/// `gpus` must be the sum over the groups.
inline void pipeline_from_json(const nlohmann::json& in, plan& p) {
    object_reader r(in, "mixed_plan");
    p = plan{};
    if (!r.has("groups") || !in.at("groups").is_array() || in.at("groups").empty())
        throw config_error("mixed_plan.groups must be a non-empty array of stage groups");
    for (const auto& g : r.raw("groups")) p.groups.push_back(g.get<stage_group>());
    set_group_totals(p);
    int gpus = 0;
    r.get("gpus", gpus);
    if (gpus != p.gpus) throw config_error("mixed_plan.gpus=" + std::to_string(gpus) + " is not the sum over its groups, " + std::to_string(p.gpus));
    read_run_settings(r, p);
    r.get("step_time_s", p.step_time.value);
    r.get("tokens_per_s", p.tokens_per_s);
    r.get("mfu", p.mfu);
    r.get("rel_error_band", p.rel_error_band);
    read_budget(r, in, p);
    r.finish();
}
}  // namespace detail

/// `frenzy plan --json`: the first `top` plans (all when 0) and every infeasible type; with mixed plans asked for
/// (plan_options::mixed), the first `top` of them and why there are none.
inline nlohmann::ordered_json plan_result_json(const plan_result& r, std::size_t top = 0) {
    auto out = nlohmann::ordered_json::object();
    if (r.parameters > 0) out["parameters"] = r.parameters;  // the job's; a MoE's active ones too
    if (r.active_parameters > 0 && r.active_parameters != r.parameters) out["active_parameters"] = r.active_parameters;
    out["plans"] = nlohmann::ordered_json::array();
    out["infeasible"] = r.infeasible;
    const std::size_t n = top > 0 ? std::min(top, r.plans.size()) : r.plans.size();
    for (std::size_t i = 0; i < n; ++i) out["plans"].push_back(r.plans[i]);
    if (!r.mixed.empty() || !r.mixed_note.empty()) {
        out["mixed_plans"] = nlohmann::ordered_json::array();
        const std::size_t k = top > 0 ? std::min(top, r.mixed.size()) : r.mixed.size();
        for (std::size_t i = 0; i < k; ++i) out["mixed_plans"].push_back(r.mixed[i]);
        if (!r.mixed_note.empty()) out["mixed_note"] = r.mixed_note;
    }
    return out;
}
inline void to_json(nlohmann::ordered_json& out, const plan_result& r) { out = plan_result_json(r); }

/// `frenzy import --json`: the job read from a launcher configuration and what the reader did not use.
inline void to_json(nlohmann::ordered_json& out, const launcher_import& r) {
    out = nlohmann::ordered_json::object();
    out["job"] = nlohmann::ordered_json(to_json(r.job));
    out["ignored"] = r.ignored;
    out["not_understood"] = r.unknown;
    out["notes"] = r.notes;
}

/// One element of `frenzy gpus --json`.
inline void to_json(nlohmann::ordered_json& out, const gpu_type& t) {
    out = nlohmann::ordered_json(to_json(t));
    out["memory_bytes"] = t.memory().value;
}

/// One element of `frenzy models --json` (parameter counts are whole numbers).
inline void to_json(nlohmann::ordered_json& out, const model_preset& p) {
    const auto& m = p.spec;
    out = {{"name", m.name},
           {"parameters", std::llround(total_parameters(m))},
           {"active_parameters", std::llround(active_parameters(m))},
           {"published_parameters", std::llround(p.published_parameters)},
           {"layers", m.layers},
           {"hidden", m.hidden},
           {"heads", m.heads},
           {"kv_heads", m.kv()},
           {"head_dim", m.hdim()},
           {"ffn_hidden", m.ffn_hidden},
           {"activation", to_string(m.activation)},
           {"vocab", m.vocab},
           {"tied_embeddings", m.tied_embeddings},
           {"position_embedding", to_string(m.position_embedding)},
           {"max_positions", m.max_positions},
           {"norm", to_string(m.norm)},
           {"bias", m.bias},
           {"qkv_bias", m.qkv_bias},
           {"embedding_norm", m.embedding_norm}};
    if (m.is_moe())  // absent for a dense model
        out["moe"] = {{"experts", m.moe.experts}, {"top_k", m.moe.top_k}, {"expert_ffn_hidden", m.expert_ffn()},
                      {"shared_experts", m.moe.shared_experts}, {"dense_layers", m.moe.dense_layers}};
    out["source"] = p.source;
}

/// `frenzy estimate --max-micro-batch --json`'s `max_micro_batch`.
inline void to_json(nlohmann::ordered_json& out, const micro_batch_limit& m) {
    out = {{"fits", m.fits}, {"tight", m.tight}, {"largest_tried", m.tried}};
}

/// `frenzy estimate --seq-lengths FILE --json`'s `dataset` (plan/dataset_fit.hpp).
inline void to_json(nlohmann::ordered_json& out, const dataset_fit& d) {
    const auto& e = d.longest_batch;
    out = {{"batching", to_string(d.batching)}, {"samples", d.samples}, {"truncated", d.truncated},
           {"p50_tokens", d.p50}, {"p95_tokens", d.p95}, {"longest_tokens", d.longest},
           {"longest_batch_length", d.longest_batch_length},
           {"longest_batch_peak_reserved_bytes", e.memory.peak_reserved.value},
           {"longest_batch_verdict", to_string(e.fit->verdict)}, {"fit_length", d.fit_length},
           {"max_micro_batch", d.micro_batch}, {"steps_at_risk", d.steps_at_risk}};
}

}  // namespace frenzy
