#pragma once
// TEMPORARY, until include/frenzy/io/result_json.hpp lands on main: the JSON the CLI's --json prints today
// (examples/frenzy/cmd_estimate.cpp, cmd_plan.cpp, cmd_models.cpp at 8a51572). Deleted at the merge.
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "frenzy/io/job_json.hpp"
#include "frenzy/memory/breakdown.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/plan/plan.hpp"

namespace frenzy_py::pending {

struct estimate_view {
    const frenzy::job_spec* job;
    const frenzy::memory_report* report;
    const frenzy::gpu_type* gpu;  // may be null
    bool fits;
    double capacity;
    const std::optional<frenzy::step_estimate>* perf;
};

inline nlohmann::json estimate_json(const estimate_view& v) {
    const auto& r = *v.report;
    nlohmann::json out{{"job", frenzy::to_json(*v.job)},
                       {"parameters", r.parameters},
                       {"peak_allocated_bytes", r.peak_allocated.value},
                       {"peak_reserved_bytes", r.peak_reserved.value},
                       {"bottleneck_stage", r.bottleneck_stage},
                       {"gpus", v.job->parallel.gpus()}};
    auto& stages = out["stages"] = nlohmann::json::array();
    for (const auto& st : r.stages)
        stages.push_back({{"stage", st.stage},
                          {"parameters", st.parameters},
                          {"weights_bytes", st.breakdown.weights.value},
                          {"gradients_bytes", st.breakdown.gradients.value},
                          {"optimizer_bytes", st.breakdown.optimizer.value},
                          {"activations_bytes", st.breakdown.activations.value},
                          {"temporary_bytes", st.breakdown.temporary.value},
                          {"peak_allocated_bytes", st.peak_allocated.value},
                          {"in_flight_micro_batches", st.in_flight_micro_batches}});
    if (v.gpu) {
        const auto& perf = *v.perf;
        out["gpu"] = v.gpu->name;
        out["fits"] = v.fits;
        out["capacity_bytes"] = v.capacity;
        if (perf && perf->supported) {
            out["step_time_s"] = perf->step_time.value;
            out["tokens_per_s"] = perf->tokens_per_s;
            out["mfu"] = perf->mfu;
        } else {
            out["step_time_s"] = nullptr;
            out["tokens_per_s"] = nullptr;
            if (perf) out["perf_reason"] = perf->reason;
        }
    }
    return out;
}

inline nlohmann::ordered_json plan_json(const frenzy::plan& p) {
    const auto& q = p.parallel;
    const nlohmann::ordered_json par{{"dp", q.dp}, {"tp", q.tp}, {"pp", q.pp}, {"vpp", q.vpp}, {"cp", q.cp}, {"ep", q.ep},
                                     {"sequence_parallel", q.sequence_parallel},
                                     {"sharding", frenzy::to_string(q.sharding)},
                                     {"recompute", frenzy::to_string(q.recompute)},
                                     {"pipeline_schedule", frenzy::to_string(q.schedule)}};
    return {{"gpu", p.gpu},
            {"gpus", p.gpus},
            {"nodes", p.nodes},
            {"parallel", par},
            {"micro_batch", p.micro_batch},
            {"peak_allocated_bytes", std::llround(p.peak_allocated.value)},
            {"capacity_bytes", std::llround(p.capacity.value)},
            {"step_time_s", p.step_time.value},
            {"tokens_per_s", p.tokens_per_s},
            {"est_time_s", p.est_time.value},
            {"gpu_hours", p.gpu_hours}};
}

inline nlohmann::ordered_json plan_result_json(const frenzy::plan_result& r, std::size_t shown) {
    nlohmann::ordered_json out{{"plans", nlohmann::ordered_json::array()}, {"infeasible", nlohmann::ordered_json::array()}};
    for (std::size_t i = 0; i < shown && i < r.plans.size(); ++i) out["plans"].push_back(plan_json(r.plans[i]));
    for (const auto& f : r.infeasible) out["infeasible"].push_back({{"gpu", f.gpu}, {"reason", f.reason}});
    return out;
}

inline nlohmann::ordered_json preset_json(const frenzy::model_preset& p) {
    const auto& m = p.spec;
    nlohmann::ordered_json j{{"name", m.name},
                             {"parameters", std::llround(frenzy::total_parameters(m))},
                             {"active_parameters", std::llround(frenzy::active_parameters(m))},
                             {"published_parameters", std::llround(p.published_parameters)},
                             {"layers", m.layers},
                             {"hidden", m.hidden},
                             {"heads", m.heads},
                             {"kv_heads", m.kv()},
                             {"head_dim", m.hdim()},
                             {"ffn_hidden", m.ffn_hidden},
                             {"activation", frenzy::to_string(m.activation)},
                             {"vocab", m.vocab},
                             {"tied_embeddings", m.tied_embeddings},
                             {"position_embedding", frenzy::to_string(m.position_embedding)},
                             {"max_positions", m.max_positions},
                             {"norm", frenzy::to_string(m.norm)},
                             {"bias", m.bias},
                             {"qkv_bias", m.qkv_bias},
                             {"embedding_norm", m.embedding_norm},
                             {"moe", nullptr},
                             {"source", p.source}};
    if (m.is_moe())
        j["moe"] = {{"experts", m.moe.experts}, {"top_k", m.moe.top_k}, {"expert_ffn_hidden", m.expert_ffn()},
                    {"shared_experts", m.moe.shared_experts}, {"dense_layers", m.moe.dense_layers}};
    return j;
}

}  // namespace frenzy_py::pending
