#pragma once
// The planner's ranking: the Objective policy (lower is better) and its default selectable_objective (time,
// GPU-hours or cost), the plan record an objective scores (make_plan) and the ranking of a result.
#include <algorithm>
#include <concepts>
#include <cstdint>
#include <string>

#include "frenzy/core/units.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/plan/options.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// Objective: lower is better.
template <class O>
concept Objective = requires(const O& o, const plan& p, const plan_options& opt) {
    { o.score(p, opt) } -> std::convertible_to<double>;
};

/// Default objective, chosen by plan_options::objective: time to finish, GPU-hours, or cost (billed GPU-hours x
/// price). With no token budget (total_tokens = 0) the same measures per token are used. Ties are broken by the
/// planner: the faster plan first.
struct selectable_objective {
    double score(const plan& p, const plan_options& o) const {
        return score_of(p.tokens_per_s, p.gpus, p.nodes, p.gpus_per_node, p.gpu, o);
    }
    /// score() from the fields of the plan it reads (the planner's search scores its configurations without filling
    /// a plan record: plan/planner.hpp).
    static double score_of(double tokens_per_s, int gpus, int nodes, int gpus_per_node, const std::string& gpu,
                           const plan_options& o) {
        const double per_token = tokens_per_s > 0 ? 1.0 / tokens_per_s : 1e300;
        const double billed = o.whole_node_billing ? static_cast<double>(nodes) * gpus_per_node : gpus;
        switch (o.objective) {
            case plan_objective::time: return per_token;
            case plan_objective::gpu_hours: return per_token * billed;
            case plan_objective::cost: {
                auto it = o.price_per_gpu_hour.find(gpu);
                const double price = it == o.price_per_gpu_hour.end() ? 0.0 : it->second;
                return per_token * billed * price;
            }
        }
        return per_token;
    }
};
static_assert(Objective<selectable_objective>);

namespace detail {

/// Sets the fields make_plan fills on `pl` (a plan record reused as a probe keeps its storage).
inline void set_plan(frenzy::plan& pl, const job_spec& j, const gpu_type& g, int gpus_per_node, double step_s,
                     double tokens_per_s, const plan_options& opt) {
    const auto n = j.parallel.gpus();
    pl.gpu = g.name;
    pl.gpus = static_cast<int>(n);
    pl.gpus_per_node = gpus_per_node;
    pl.nodes = static_cast<int>((n + gpus_per_node - 1) / gpus_per_node);
    pl.parallel = j.parallel;
    pl.framework = j.runtime.framework;
    pl.overlap_grad_reduce = j.runtime.overlap_grad_reduce;
    pl.tp_comm_overlap = j.runtime.tp_comm_overlap;
    pl.precision = j.training.precision;
    pl.micro_batch = j.training.micro_batch;
    pl.attention = j.runtime.attention;
    pl.step_time = seconds{step_s};
    pl.tokens_per_s = tokens_per_s;
    const double tokens = j.training.total_tokens;
    pl.has_budget = tokens > 0;
    pl.est_time = seconds{tokens > 0 && tokens_per_s > 0 ? tokens / tokens_per_s : 0.0};
    pl.gpu_hours = pl.est_time.value * static_cast<double>(n) / 3600.0;
    const double billed_gpus = opt.whole_node_billing ? static_cast<double>(pl.nodes) * gpus_per_node : static_cast<double>(n);
    pl.billed_gpu_hours = pl.est_time.value * billed_gpus / 3600.0;
    pl.cost.reset();
    if (auto price = opt.price_per_gpu_hour.find(g.name); price != opt.price_per_gpu_hour.end())
        pl.cost = pl.billed_gpu_hours * price->second;
}
/// A plan record (without its memory figures) for a job with its layout: what the objective scores.
inline frenzy::plan make_plan(const job_spec& j, const gpu_type& g, int gpus_per_node, double step_s,
                              double tokens_per_s, const plan_options& opt) {
    frenzy::plan pl;
    set_plan(pl, j, g, gpus_per_node, step_s, tokens_per_s, opt);
    return pl;
}

/// What near-ties are broken by: a plan's score counts `band_weight` x its error band more, so of two plans within a
/// fraction of a percent the better-calibrated one ranks first (a 35% band on a chip without data against a 10%
/// one: 0.25%), while any real difference in the objective still decides.
inline constexpr double band_weight = 0.01;

/// Ranks the plans of `r` best first by `objective` weighed by their error band (band_weight; ties: the faster
/// plan, then fewer GPUs, then the GPU type's name), keeping the order of equal plans.
template <class O>
void rank_plans(plan_result& r, const plan_options& opt, const O& objective) {
    std::stable_sort(r.plans.begin(), r.plans.end(), [&](const frenzy::plan& a, const frenzy::plan& b) {
        const double sa = objective.score(a, opt) * (1.0 + band_weight * a.rel_error_band);
        const double sb = objective.score(b, opt) * (1.0 + band_weight * b.rel_error_band);
        if (sa != sb) return sa < sb;
        if (a.tokens_per_s != b.tokens_per_s) return a.tokens_per_s > b.tokens_per_s;
        if (a.gpus != b.gpus) return a.gpus < b.gpus;
        return a.gpu < b.gpu;
    });
}

}  // namespace detail

}  // namespace frenzy
