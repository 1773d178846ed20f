#pragma once
// The JSON of `frenzy serve`: a posted job (a job spec with optional "limits"), the rows GET /v1/jobs answers, and
// the plan and allocation the store keeps as text. Durations and plans are read through io/ (io/duration.hpp,
// io/result_json.hpp's from_json), the job spec through io/job_json.hpp.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/backend/slurm.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/io/duration.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/io/result_json.hpp"
#include "frenzy/service/store.hpp"

namespace frenzy {

/// Optional limits a submitter puts on a job.
struct job_limits {
    std::vector<std::string> gpu_types;  ///< allowed catalog types (empty = any)
    std::int64_t max_gpus = 0;           ///< 0 = no limit
    double deadline_s = 0;               ///< the plan must finish within this many seconds of acceptance (0 = none)
    int priority = 0;                    ///< higher goes first
};

/// limits.deadline: a number of seconds, or a duration text (io/duration.hpp: "90", "30m", "2h", "1d"); positive.
inline double deadline_from_json(const nlohmann::json& v) {
    std::optional<double> s;
    if (v.is_number()) s = v.get<double>();
    else if (v.is_string()) {
        try {
            s = parse_duration(v.get<std::string>(), "limits.deadline");
        } catch (const config_error&) {
        }
    }
    if (!s || !(*s > 0)) throw config_error("limits.deadline=" + v.dump() + " must be a positive duration (seconds, or 30m, 2h, 1d)");
    return *s;
}

/// The "limits" object of a posted job (null = none); every field checked, unknown fields refused.
inline job_limits limits_from_json(const nlohmann::json& j, const gpu_catalog& catalog) {
    job_limits l;
    if (j.is_null()) return l;
    if (!j.is_object()) throw config_error("limits must be an object");
    for (auto it = j.begin(); it != j.end(); ++it) {
        const auto& k = it.key();
        const auto& v = it.value();
        if (k == "gpu_types") {
            if (!v.is_array()) throw config_error("limits.gpu_types must be an array of GPU type names");
            for (const auto& t : v) {
                if (!t.is_string()) throw config_error("limits.gpu_types must be an array of GPU type names");
                catalog.at(t.get<std::string>(), "limits.gpu_types[]");
                l.gpu_types.push_back(t.get<std::string>());
            }
        } else if (k == "max_gpus") {
            if (!v.is_number_integer() || v.get<std::int64_t>() < 1) throw config_error("limits.max_gpus=" + v.dump() + " must be a positive integer");
            l.max_gpus = v.get<std::int64_t>();
        } else if (k == "deadline") {
            l.deadline_s = deadline_from_json(v);
        } else if (k == "priority") {
            if (!v.is_number_integer() || !within(v.get<std::int64_t>(), bounds::priority))
                throw config_error("limits.priority=" + v.dump() + " must be an integer in [" +
                                   std::to_string(bounds::priority.min) + ", " + std::to_string(bounds::priority.max) + "]");
            l.priority = v.get<int>();
        } else throw config_error("limits." + k + " is not a known field (known: gpu_types, max_gpus, deadline, priority)");
    }
    return l;
}

/// A posted job: the spec, the layout fields it pins, its limits.
struct job_submission {
    job_spec job;
    plan_constraints stated;  ///< layout fields the spec pins (the planner searches the rest)
    job_limits limits;
};

/// Reads a posted body (a job spec, optionally with "limits"); config_error says what is wrong.
inline job_submission submission_from_json(const nlohmann::json& body, const gpu_catalog& catalog) {
    if (!body.is_object()) throw config_error("body must be a JSON object (a job spec, optionally with \"limits\")");
    nlohmann::json spec = body;
    nlohmann::json limits;
    if (spec.contains("limits")) {
        limits = spec["limits"];
        spec.erase("limits");
    }
    if (spec.contains("model") && spec["model"].is_object() && spec["model"].contains("hf_config"))
        throw config_error("model.hf_config is not accepted by frenzy serve (it names a file on the server); give the model's fields or a preset");
    job_submission p;
    auto pj = job_from_json(spec);
    pj.choose_global_batch();  // as `frenzy plan` does
    p.job = std::move(pj.job);
    p.stated = pj.stated;
    p.limits = limits_from_json(limits, catalog);
    if (p.limits.deadline_s > 0 && !(p.job.training.total_tokens > 0))
        throw config_error("limits.deadline needs training.total_tokens (without a token budget no plan has a duration)");
    return p;
}

/// A plan as `frenzy plan --json` writes it (io/result_json.hpp), one element of its plans or mixed_plans; the store
/// keeps this text.
inline std::string plan_text(const plan& p) { return nlohmann::ordered_json(p).dump(); }
/// The plan of a stored row's text (one GPU type or a pipeline over several), or nullopt if the text is not one.
inline std::optional<plan> plan_from_text(const std::string& text) {
    try {
        return nlohmann::json::parse(text).get<plan>();
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

/// An allocation as [[node name, gpus], ...] (Slurm's node names of the inventory); a mixed plan's components one
/// after the other, in pipeline order (each node's GPU type tells its component).
inline nlohmann::ordered_json allocation_json(const allocation& a, const slurm_inventory& inv) {
    nlohmann::ordered_json v = nlohmann::ordered_json::array();
    for (const auto& c : a.components())
        for (const auto& p : c.parts) v.push_back({inv.nodes.at(static_cast<std::size_t>(p.node)).name, p.gpus});
    return v;
}
/// The allocation of allocation_json's text for a plan whose stage groups run on `types` in order (one type index
/// of the cluster per group; one for a single-type plan): each node goes to the component of its GPU type. Nullopt if
/// a node is gone, its type is none of `types`, a component is empty or the text is bad.
inline std::optional<allocation> allocation_from_text(const std::string& text, const std::vector<int>& types,
                                                      const slurm_inventory& inv, const cluster_state& cs) {
    std::vector<allocation> comps(types.size());
    for (std::size_t k = 0; k < types.size(); ++k) {
        if (types[k] < 0) return std::nullopt;
        comps[k].type = types[k];
    }
    try {
        for (const auto& e : nlohmann::json::parse(text)) {
            const int n = inv.index(e.at(0).get<std::string>());
            if (n < 0) return std::nullopt;
            const int type = cs.nodes()[static_cast<std::size_t>(n)].type;
            const auto k = std::find(types.begin(), types.end(), type) - types.begin();
            if (k == static_cast<std::ptrdiff_t>(types.size())) return std::nullopt;
            comps[static_cast<std::size_t>(k)].parts.push_back({n, e.at(1).get<int>()});
        }
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (comps.empty()) return std::nullopt;
    for (const auto& c : comps)
        if (c.parts.empty()) return std::nullopt;
    allocation a = std::move(comps.front());
    a.next.assign(std::make_move_iterator(comps.begin() + 1), std::make_move_iterator(comps.end()));
    return a;
}

/// One job of GET /v1/jobs: a stored row ("submitting" shown as submitted), its name from the posted spec (else
/// `fallback_name`), and the figures known so far (absent until known: docs/formats.md has no nulls).
inline nlohmann::ordered_json job_row_json(const stored_job& r, const std::string& fallback_name = {}) {
    nlohmann::ordered_json j{{"id", r.id}, {"state", r.state == job_states::submitting ? job_states::submitted : r.state},
                             {"submit_time", r.submit_s}, {"attempt", r.attempt}};
    try {
        auto spec = nlohmann::ordered_json::parse(r.spec);
        j["name"] = spec.contains("name") && spec["name"].is_string() ? spec["name"].get<std::string>() : std::string{};
        if (spec.contains("limits") && !spec["limits"].is_null()) j["limits"] = spec["limits"];
    } catch (const std::exception&) {
    }
    if (j.contains("name") && j["name"] == "") j["name"] = fallback_name;
    if (r.slurm_id > 0) j["slurm_job_id"] = r.slurm_id;
    if (!r.plan.empty()) j["plan"] = nlohmann::ordered_json::parse(r.plan);
    if (!r.alloc.empty()) j["allocation"] = nlohmann::ordered_json::parse(r.alloc);
    if (!r.reason.empty()) j["reason"] = r.reason;
    if (r.cancel_requested && !job_states::terminal(r.state)) j["cancel_requested"] = true;
    return j;
}

}  // namespace frenzy
