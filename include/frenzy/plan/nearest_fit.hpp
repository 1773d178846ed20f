#pragma once
// "It does not fit: what is the smallest change that makes it fit?" One change at a time to a job with a stated
// layout on one GPU type, in the order of how little each changes the run: a smaller micro-batch (the same global
// batch with more gradient accumulation), more activation recompute, more sharding of the model states, optimizer
// offload, more tensor (else pipeline, else context) parallelism on the same GPUs (dp shrinks by as much), and only
// when none of those fits, more GPUs (data parallel when the states are sharded, else tensor then pipeline
// parallel). Each changed job must pass the framework's own rules (validate) and the one fit rule (memory/fit.hpp)
// with its band.
// Also the largest micro-batch that fits a layout (`frenzy estimate --max-micro-batch`).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/plan/estimate.hpp"
#include "frenzy/plan/fit_advice.hpp"
#include "frenzy/plan/planner.hpp"
#include "frenzy/plan/policies.hpp"
#include "frenzy/train/batch_size.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// The largest micro-batch that fits with a job's layout, and the largest that fits at the central estimate only.
struct micro_batch_limit {
    std::int64_t fits = 0;    ///< largest micro-batch whose verdict is fits (0: none, not even 1)
    std::int64_t tight = 0;   ///< largest whose verdict is fits or tight (>= fits)
    std::int64_t tried = 0;   ///< the largest tried: global_batch / dp (every micro-batch that divides it is tried)
};

namespace detail {

/// What the single changes are checked against: the GPU type, the margin kept free, the memory model, and whether
/// a changed job's global batch follows micro_batch x dp (advice_options::global_batch_stated false).
template <MemoryModel M>
struct fit_target {
    const gpu_type& g;
    double margin;
    const M& memory;
    bool batch_follows;
};

/// The verdict of `j` on `g` when the framework accepts `j`, else nothing.
template <MemoryModel M>
std::optional<fit_check> fit_if_valid(const job_spec& j, const gpu_type& g, double margin, const M& memory) {
    try {
        validate(j);
    } catch (const config_error&) {
        return std::nullopt;
    }
    return check_fit(memory.estimate(j), g, margin);
}

/// The first of `values` (tried in order) that makes the job, changed by `set`, fit: as a suggestion.
template <class T, class Set, MemoryModel M>
std::optional<fit_suggestion> first_fitting(const job_spec& j, const fit_target<M>& t, const char* field,
                                            const std::string& from, const std::vector<T>& values, Set set) {
    for (const auto& v : values) {
        job_spec c = j;
        const std::string to = set(c, v);
        if (t.batch_follows) c.training.global_batch = c.training.micro_batch * c.parallel.dp;
        const auto f = fit_if_valid(c, t.g, t.margin, t.memory);
        if (f && f->fits) return fit_suggestion{field, from, to, c, *f};
    }
    return std::nullopt;
}

/// Powers of two times `from`, above it, at most `limit`.
inline std::vector<std::int64_t> doublings(std::int64_t from, std::int64_t limit) {
    std::vector<std::int64_t> out;
    for (std::int64_t v = from * 2; v <= limit; v *= 2) out.push_back(v);
    return out;
}

/// The doublings of a model-parallel degree `from` (at most `limit`) whose factor divides `dp`: those that keep the
/// GPU count when dp shrinks by that factor.
inline std::vector<std::int64_t> within_dp(std::int64_t from, std::int64_t limit, std::int64_t dp) {
    std::vector<std::int64_t> out;
    for (const auto v : doublings(from, limit))
        if (dp % (v / from) == 0) out.push_back(v);
    return out;
}

/// Tensor, else pipeline, else context parallelism raised on the job's own GPUs: dp shrinks by the same factor. A
/// raised tp turns sequence parallelism on where the framework's planned layouts do (Megatron-LM).
template <MemoryModel M>
std::optional<fit_suggestion> same_gpus_model_parallel(const job_spec& j, const fit_target<M>& t) {
    const auto& p = j.parallel;
    auto s = first_fitting(j, t, "parallel.tp", std::to_string(p.tp), within_dp(p.tp, t.g.gpus_per_node, p.dp),
                           [&p](job_spec& c, std::int64_t v) {
                               c.parallel.dp = p.dp * p.tp / v;
                               c.parallel.tp = v;
                               c.parallel.sequence_parallel = p.sequence_parallel ||
                                   default_sequence_parallel(c.runtime.framework, v, c.training.seq_len);
                               return std::to_string(v);
                           });
    if (s) return s;
    s = first_fitting(j, t, "parallel.pp", std::to_string(p.pp), within_dp(p.pp, j.model.layers, p.dp),
                      [&p](job_spec& c, std::int64_t v) {
                          c.parallel.dp = p.dp * p.pp / v;
                          c.parallel.pp = v;
                          return std::to_string(v);
                      });
    if (s) return s;
    return first_fitting(j, t, "parallel.cp", std::to_string(p.cp), within_dp(p.cp, p.cp * p.dp, p.dp),
                         [&p](job_spec& c, std::int64_t v) {
                             c.parallel.dp = p.dp * p.cp / v;
                             c.parallel.cp = v;
                             return std::to_string(v);
                         });
}

/// More GPUs of the same type, the last resort: data parallel when the model states are sharded (they shrink with
/// dp; a stated global batch must stay a multiple of dp x micro_batch), else tensor parallel inside a node, else
/// pipeline, with dp kept.
template <MemoryModel M>
std::optional<fit_suggestion> more_gpus(const job_spec& j, const fit_target<M>& t) {
    const auto& p = j.parallel;
    if (p.sharding != sharding::none) {
        std::vector<std::int64_t> dps;
        for (const auto dp : doublings(p.dp, bounds::gpus.max / std::max<std::int64_t>(p.gpus() / p.dp, 1)))
            if (t.batch_follows || j.training.global_batch % (dp * j.training.micro_batch) == 0) dps.push_back(dp);
        auto s = first_fitting(j, t, "parallel.dp", std::to_string(p.dp), dps, [](job_spec& c, std::int64_t v) {
            c.parallel.dp = v;
            return std::to_string(v);
        });
        if (s) return s;
    }
    auto tp = first_fitting(j, t, "parallel.tp", std::to_string(p.tp), doublings(p.tp, t.g.gpus_per_node),
                            [](job_spec& c, std::int64_t v) {
                                c.parallel.tp = v;
                                c.parallel.sequence_parallel = c.parallel.sequence_parallel ||
                                    default_sequence_parallel(c.runtime.framework, v, c.training.seq_len);
                                return std::to_string(v);
                            });
    if (tp) return tp;
    return first_fitting(j, t, "parallel.pp", std::to_string(p.pp), doublings(p.pp, j.model.layers),
                         [](job_spec& c, std::int64_t v) {
                             c.parallel.pp = v;
                             return std::to_string(v);
                         });
}

/// The states' and activations' single changes: a smaller micro-batch, more recompute, more sharding, optimizer
/// offload (each the smallest of its kind that fits).
template <MemoryModel M>
void memory_changes(const job_spec& job, const fit_target<M>& t, std::vector<fit_suggestion>& out) {
    const auto& tr = job.training;
    const auto& p = job.parallel;
    auto keep = [&](std::optional<fit_suggestion> s) {
        if (s) out.push_back(std::move(*s));
    };
    std::vector<std::int64_t> smaller_mb;
    for (std::int64_t mb = tr.micro_batch - 1; mb >= 1; --mb)
        if ((tr.global_batch / p.dp) % mb == 0) smaller_mb.push_back(mb);
    keep(first_fitting(job, t, "training.micro_batch", std::to_string(tr.micro_batch), smaller_mb,
                       [](job_spec& c, std::int64_t v) {
                           c.training.micro_batch = v;
                           return std::to_string(v);
                       }));
    std::vector<recompute> more_recompute;
    for (auto r : {recompute::selective, recompute::full})
        if (r > p.recompute) more_recompute.push_back(r);
    keep(first_fitting(job, t, "parallel.recompute", std::string(to_string(p.recompute)), more_recompute,
                       [](job_spec& c, recompute v) {
                           c.parallel.recompute = v;
                           return std::string(to_string(v));
                       }));
    std::vector<sharding> more_sharding;
    for (auto s : {sharding::optimizer, sharding::gradients, sharding::full})
        if (s > p.sharding) more_sharding.push_back(s);
    keep(first_fitting(job, t, "parallel.sharding", std::string(to_string(p.sharding)), more_sharding,
                       [](job_spec& c, sharding v) {
                           c.parallel.sharding = v;
                           return std::string(to_string(v));
                       }));
    if (!job.runtime.offload.optimizer)
        keep(first_fitting(job, t, "runtime.offload.optimizer", "false", std::vector<bool>{true}, [](job_spec& c, bool) {
            c.runtime.offload.optimizer = true;
            return std::string("true");
        }));
}

}  // namespace detail

/// The single changes that make `job` fit GPU type `g` with `margin` kept free, least disruptive first (see the
/// top of this file); at most one per kind of change, each the smallest of its kind. All keep the job's GPU count
/// but the last resort (more GPUs), offered only when nothing fits on them. Empty when `job` fits already or no
/// single change makes it fit (then the planner's minimum-GPU plan is the answer).
template <MemoryModel M = memory_estimator>
std::vector<fit_suggestion> nearest_fits(const job_spec& job, const gpu_type& g, double margin = default_margin,
                                         const M& memory = {}, advice_options o = {}) {
    validate(job);
    std::vector<fit_suggestion> out;
    if (check_fit(memory.estimate(job), g, margin).fits) return out;
    const detail::fit_target<M> t{g, margin, memory, !o.global_batch_stated};
    detail::memory_changes(job, t, out);
    if (auto s = detail::same_gpus_model_parallel(job, t)) out.push_back(std::move(*s));
    if (out.empty())
        if (auto s = detail::more_gpus(job, t)) out.push_back(std::move(*s));
    return out;
}

/// The planner on GPU type `g` alone, for `job` (its model, batch, precision, framework; the layout is the
/// planner's, and so is the global batch when the job does not state it: advice_options): its fastest plan with at
/// most the job's GPUs, and its plan with the fewest GPUs among up to `max_gpus` (rounded up to whole nodes of
/// g.gpus_per_node).
inline planner_fits planner_alternatives(const job_spec& job, const gpu_type& g, double margin = default_margin,
                                         std::int64_t max_gpus = 1024, advice_options opt = {}) {
    cluster_spec c;
    c.catalog.upsert(g);
    const std::int64_t need = std::max<std::int64_t>(max_gpus, job.parallel.gpus());
    const int nodes = static_cast<int>((need + g.gpus_per_node - 1) / g.gpus_per_node);
    c.nodes.push_back({"nodes", g.name, g.gpus_per_node, nodes, 0});
    job_spec j = job;
    if (!opt.global_batch_stated) j.training.global_batch = default_global_batch(j);  // as `frenzy plan` chooses it
    plan_options o;
    o.margin = margin;
    planner_fits out;
    out.global_batch = j.training.global_batch;
    out.global_batch_chosen = !opt.global_batch_stated;
    out.max_gpus = static_cast<std::int64_t>(nodes) * g.gpus_per_node;
    const auto all = plans_by_type(j, c, o);
    if (const auto t = summarize_by_type(all); !t.empty()) out.fewest_gpus = t.front().minimum;
    else if (!all.infeasible.empty()) out.none_reason = all.infeasible.front().reason;
    for (const auto& p : all.plans)
        if (p.gpus <= job.parallel.gpus() && (!out.same_gpus || p.tokens_per_s > out.same_gpus->tokens_per_s))
            out.same_gpus = p;
    return out;
}

/// The largest micro-batch that fits `job`'s layout on `g` (every divisor of global_batch / dp is tried, with the
/// global batch kept), and the largest that fits at the central estimate (tight).
template <MemoryModel M = memory_estimator>
micro_batch_limit max_micro_batch(const job_spec& job, const gpu_type& g, double margin = default_margin,
                                  const M& memory = {}) {
    validate(job);
    micro_batch_limit out;
    const std::int64_t per_replica = job.training.global_batch / job.parallel.dp;
    out.tried = per_replica;
    for (const auto mb : divisors_of(per_replica)) {
        job_spec c = job;
        c.training.micro_batch = mb;
        const auto f = detail::fit_if_valid(c, g, margin, memory);
        if (!f) continue;
        if (f->fits) out.fits = mb;
        if (f->verdict != fit_verdict::does_not_fit) out.tight = mb;
    }
    return out;
}

/// What would make `e`'s job fit its GPU type (nearest_fits, then planner_alternatives); nothing without a GPU or
/// when it fits. `frenzy estimate` and frenzy.estimate add it, so their outputs agree.
inline std::optional<fit_advice> advise(const estimate_result& e, advice_options o = {}) {
    if (!e.gpu || !e.fit || e.fit->verdict == fit_verdict::fits) return std::nullopt;
    return fit_advice{nearest_fits(e.job, *e.gpu, e.margin, memory_estimator{}, o),
                      planner_alternatives(e.job, *e.gpu, e.margin, 1024, o)};
}

}  // namespace frenzy
