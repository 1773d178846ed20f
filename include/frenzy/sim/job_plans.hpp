#pragma once
// The plans a simulated job may run (sim/simulator.hpp): the planner's answer narrowed to this cluster, the
// horizon and the size regime, its mixed plans, or the reason it has none.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "frenzy/plan/plan.hpp"
#include "frenzy/sched/cluster_state.hpp"
#include "frenzy/sched/scheduler.hpp"
#include "frenzy/sim/options.hpp"
#include "frenzy/sim/trace.hpp"

namespace frenzy {

/// What a simulated job may run, and what policies see of its request.
struct sim_job_plans {
    /// feasible plans, best first: those on one type, then the pipelines over several (plan::groups;
    /// plan_options::mixed), as job_view::plans
    std::vector<plan> plans;
    std::vector<int> plan_types;    ///< cluster type index of each one-type plan
    std::vector<plan_rate> plan_rates;  ///< rate_of each one-type plan (sched/scheduler.hpp)
    std::vector<int> mixed_types;   ///< cluster type index of each group of each pipeline, in order
    int eff_gpus = 0;               ///< the request policies see (regime-adjusted)
    std::string eff_type;
    std::string reject_reason;      ///< why it has no plan ("" = it has one)
};

namespace detail {

/// The mixed plans job `j` may run: those whose every type the cluster has in number, that end within the
/// horizon, where the size regime lets a policy choose the type (native and free; in the requested regime a
/// job that names a type keeps it, and one that does not keeps the mixed plans of its requested count).
inline void set_up_mixed(sim_job_plans& j, const cluster_state& cs, const sim_options& opt, const trace_job& row, plan_result& pr) {
    if (opt.sizes == size_regime::requested && !j.eff_type.empty()) return;
    for (auto& m : pr.mixed) {
        bool ok = m.tokens_per_s > 0 && std::isfinite(m.tokens_per_s) && row.total_tokens / m.tokens_per_s <= sim_horizon_s / 4;
        for (const auto& g : m.groups) {
            const int t = cs.type_index(g.gpu);
            ok = ok && t >= 0 && g.gpus >= 1 && g.gpus <= cs.total_gpus(t);
        }
        if (ok && opt.sizes == size_regime::requested) ok = m.gpus == j.eff_gpus;
        if (ok) j.plans.push_back(std::move(m));  // after the one-type plans
    }
}

/// The plans job `j` may run on (those of this cluster that fit and end within the horizon, narrowed by the
/// size regime), or the reason it has none.
inline void set_up_plans(sim_job_plans& j, const cluster_state& cs, const sim_options& opt, const trace_job& row, plan_result pr) {
    std::string why;
    std::vector<plan> all;
    for (auto& p : pr.plans) {
        const int t = cs.type_index(p.gpu);
        if (t < 0 || !(p.tokens_per_s > 0) || !std::isfinite(p.tokens_per_s) || p.gpus < 1) continue;
        if (p.gpus > cs.total_gpus(t)) {
            why = "needs " + std::to_string(p.gpus) + " x " + p.gpu + ", cluster has " + std::to_string(cs.total_gpus(t));
            continue;
        }
        // Work bounded by the answer: a job that would run past the horizon even on this plan is skipped.
        if (row.total_tokens / p.tokens_per_s > sim_horizon_s / 4) {
            why = "would run for more than 7,900 years on " + std::to_string(p.gpus) + " x " + p.gpu;
            continue;
        }
        all.push_back(std::move(p));
    }
    j.eff_gpus = row.requested_gpus;
    j.eff_type = row.requested_type;
    if (opt.sizes == size_regime::native) {
        j.plans = std::move(all);
    } else if (opt.sizes == size_regime::free) {
        j.plans = std::move(all);
        j.eff_type.clear();
        j.eff_gpus = efficient_size(j.plans);
    } else {  // requested: the requested count (doubled until some plan fits), on the requested type if any
        int g = j.eff_gpus;
        if (g <= 0) {
            g = std::numeric_limits<int>::max();
            for (const auto& p : all)
                if (j.eff_type.empty() || p.gpu == j.eff_type) g = std::min(g, p.gpus);
        }
        for (; g <= cs.total_gpus() && j.plans.empty(); g *= 2)
            for (const auto& p : all)
                if (p.gpus == g && (j.eff_type.empty() || p.gpu == j.eff_type)) j.plans.push_back(p);
        if (!j.plans.empty()) j.eff_gpus = j.plans.front().gpus;
        else if (!all.empty())
            why = "no plan at the requested " + std::to_string(row.requested_gpus) + " GPUs (or a doubling of it)" +
                  (j.eff_type.empty() ? std::string{} : " on " + j.eff_type);
    }
    for (const auto& p : j.plans) {
        j.plan_types.push_back(cs.type_index(p.gpu));
        j.plan_rates.push_back(rate_of(p));
    }
    set_up_mixed(j, cs, opt, row, pr);
    for (const auto& m : j.plans)
        for (const auto& g : m.groups) j.mixed_types.push_back(cs.type_index(g.gpu));
    if (j.plans.empty()) {
        std::string r;
        for (const auto& x : pr.infeasible) r += (r.empty() ? "" : "; ") + x.gpu + ": " + x.reason;
        if (r.empty() || !why.empty()) r = why.empty() ? "no feasible plan on this cluster's GPU types" : why;
        j.reject_reason = "no feasible plan: " + r;
    }
}

}  // namespace detail

}  // namespace frenzy
