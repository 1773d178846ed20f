#pragma once
// What `frenzy serve`'s loop (service/loop.hpp) holds of each job and of Slurm between two ticks: the job with its
// plans (one GPU type, or a pipeline over several: plan/mixed.hpp) and the one it runs, squeue's jobs by id and by
// Frenzy's tag, and the planning of a posted job within its limits.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frenzy/backend/slurm.hpp"
#include "frenzy/plan/planner.hpp"
#include "frenzy/service/codecs.hpp"

namespace frenzy {

/// A job of the loop: its spec, limits and plans, and what it runs now.
struct live_job {
    job_spec spec;
    job_limits limits;
    plan_result plans;                    ///< everything the planner found
    /// within the limits, best first (what the policy chooses from): the one-type plans, then the pipelines over
    /// several GPU types (engine_options planning.mixed), as job_view::plans
    std::vector<plan> usable;
    std::string state;
    double submit_s = 0;
    int attempt = 0;
    std::int64_t slurm_id = 0;
    std::optional<plan> current;          ///< the plan it runs (one GPU type, or stage groups over several)
    double started_s = 0;
    bool cancel_requested = false;
    bool submit_timed = false;

    bool placed() const { return current.has_value(); }
    void unplace() { current.reset(); }
    /// The stored text of the plan it runs (service/codecs.hpp plan_text).
    std::string plan_text() const { return frenzy::plan_text(*current); }
    /// Takes the plan of a stored row's text, one GPU type or several; false if the text is neither.
    bool place_from_text(const std::string& text) {
        current = plan_from_text(text);
        return placed();
    }
    /// The GPU types its stage groups run on, in pipeline order (one for a single-type plan).
    std::vector<std::string> gpu_types() const {
        if (!current) return {};
        if (!current->mixed()) return {current->gpu};
        std::vector<std::string> t;
        for (const auto& g : current->groups) t.push_back(g.gpu);
        return t;
    }
    /// Predicted seconds of the plan it runs (0 = none).
    double est_time_s() const { return current ? current->est_time.value : 0.0; }
};

/// squeue's jobs by Slurm id and by our tag ("frenzy:ID:ATTEMPT" in the comment). A heterogeneous job is its first
/// component: the later ones carry the same comment (Slurm propagates it) and end with it.
struct slurm_index {
    std::map<std::int64_t, const slurm_job*> by_id;
    std::map<std::string, const slurm_job*> by_tag;
    explicit slurm_index(const std::vector<slurm_job>& sjobs) {
        for (const auto& s : sjobs) {
            if (s.het_follower()) continue;
            by_id[s.job_id] = &s;
            if (s.comment.rfind("frenzy:", 0) == 0) by_tag[s.comment] = &s;
        }
    }
};

/// Plans posted job `pj` on `c` within its limits (allowed GPU types, GPU count); `usable` gets the plans that meet
/// its deadline, best first, the one-type ones then the pipelines over several types (only with `o.mixed`).
inline plan_result plan_submission(const job_submission& pj, cluster_spec c, plan_options o, std::vector<plan>& usable) {
    if (!pj.limits.gpu_types.empty()) {
        std::vector<node_group> keep;
        for (const auto& g : c.nodes)
            if (std::find(pj.limits.gpu_types.begin(), pj.limits.gpu_types.end(), g.gpu) != pj.limits.gpu_types.end()) keep.push_back(g);
        if (keep.empty()) {
            auto r = plan_result_for(pj.job);
            for (const auto& t : pj.limits.gpu_types) r.infeasible.push_back({t, "the cluster has no " + t + " nodes (limits.gpu_types)"});
            return r;
        }
        c.nodes = std::move(keep);
    }
    o.constraints = pj.stated;
    if (pj.limits.max_gpus > 0) o.max_gpus = o.max_gpus > 0 ? std::min(o.max_gpus, pj.limits.max_gpus) : pj.limits.max_gpus;
    auto r = planner{}.plan(pj.job, c, o);
    const auto in_time = [&](double est_s) { return pj.limits.deadline_s <= 0 || est_s <= pj.limits.deadline_s; };
    for (const auto& p : r.plans)
        if (in_time(p.est_time.value)) usable.push_back(p);
    for (const auto& m : r.mixed)
        if (in_time(m.est_time.value)) usable.push_back(m);
    return r;
}

}  // namespace frenzy
