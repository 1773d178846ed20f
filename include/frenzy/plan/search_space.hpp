#pragma once
// The planner's search space (candidate generation): the axes to enumerate for a job on a pool (search_axes, the
// SearchSpace policy and its default divisor_search_space), and the job a point of the axes describes: its layout
// (set_layout), whether the layout is searched at all (shape_allowed) and its valid micro-batches.
#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <optional>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/plan/options.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// The axes of the search for one job on one pool. Every combination is checked against the framework's rules
/// (framework_rejects) and validate(job).
struct search_axes {
    std::vector<framework> frameworks;
    std::vector<std::int64_t> tp, pp, dp, micro_batch;
    std::vector<std::int64_t> ep{1};   ///< expert-parallel degrees (MoE models); each must divide dp x cp
    std::vector<std::int64_t> cp{1};   ///< context-parallel degrees
    std::vector<std::int64_t> vpp{1};  ///< virtual pipeline sizes (used where pp > 1 and they divide the stage)
    std::vector<sharding> shardings{sharding::none, sharding::optimizer, sharding::gradients, sharding::full};
    std::vector<recompute> recomputes{recompute::none, recompute::selective, recompute::full};
    std::optional<bool> sequence_parallel;  ///< unset: default_sequence_parallel(framework, tp, seq_len)
    bool operator==(const search_axes&) const = default;
};

/// Search space: the axes to enumerate for a job on a pool.
template <class S>
concept SearchSpace = requires(const S& s, const job_spec& j, const gpu_pool& p, const plan_options& o) {
    { s.axes(j, p, o) } -> std::same_as<search_axes>;
};

namespace detail {
/// `pinned` alone when the job pins it (and it is among the allowed), else `all`.
template <class T>
std::vector<T> pinned_or(const std::optional<T>& pinned, std::vector<T> all) {
    if (pinned) return {*pinned};
    return all;
}
}  // namespace detail

/// Default search space: tp among the divisors of the node size (or of the pool when tp may cross nodes) that
/// divide heads, kv_heads and the MLP widths; pp among the divisors of model.layers; dp and micro-batch among the
/// divisors of training.global_batch; vpp up to plan_options::max_vpp; for MoE models, ep among the divisors of the
/// expert count (Megatron and DeepSpeed only); every sharding and recompute level. A field the job pins
/// (plan_options::constraints) is that value alone.
struct divisor_search_space {
    search_axes axes(const job_spec& j, const gpu_pool& pool, const plan_options& o) const {
        search_axes a;
        const auto& c = o.constraints;
        a.frameworks = o.frameworks.empty() ? std::vector<framework>{j.runtime.framework} : o.frameworks;
        const std::int64_t avail = o.max_gpus > 0 ? std::min(o.max_gpus, pool.gpus()) : pool.gpus();
        const auto& m = j.model;
        const std::int64_t tp_limit = o.allow_tp_across_nodes ? avail : std::min<std::int64_t>(pool.gpus_per_node, avail);
        for (auto t : divisors_of(o.allow_tp_across_nodes ? std::max<std::int64_t>(tp_limit, 1) : pool.gpus_per_node, tp_limit))
            if (m.heads % t == 0 && m.kv() % t == 0 && m.ffn_hidden % t == 0 && (!m.is_moe() || m.expert_ffn() % t == 0))
                a.tp.push_back(t);
        if (c.tp) a.tp = {*c.tp};
        a.pp = detail::pinned_or(c.pp, divisors_of(m.layers, std::min(o.max_pp > 0 ? o.max_pp : m.layers, avail)));
        a.dp = detail::pinned_or(c.dp, divisors_of(j.training.global_batch, avail));
        a.micro_batch = detail::pinned_or(c.micro_batch, divisors_of(j.training.global_batch));
        if (m.is_moe()) a.ep = detail::pinned_or(c.ep, divisors_of(m.moe.experts));
        else if (c.ep) a.ep = {*c.ep};
        if (c.cp) a.cp = {*c.cp};
        a.vpp.clear();
        for (std::int64_t v = 1; v <= std::max<std::int64_t>(1, o.max_vpp); ++v) a.vpp.push_back(v);
        if (c.vpp) a.vpp = {*c.vpp};
        if (!j.parallel.stage_layers.empty()) {  // a layout with its own layer count per stage fixes pp, vpp 1
            a.pp = {static_cast<std::int64_t>(j.parallel.stage_layers.size())};
            a.vpp = {1};
        }
        if (c.sharding) a.shardings = {*c.sharding};
        if (c.recompute) a.recomputes = {*c.recompute};
        a.sequence_parallel = c.sequence_parallel;
        return a;
    }
};
static_assert(SearchSpace<divisor_search_space>);

namespace detail {

/// The framework's rules (train/job.hpp framework_rejects) on a layout at each recompute level, for one device and
/// for several: a framework's rules read dp only as dp = 1 against dp > 1 (framework_rules::rejects_layout), so the
/// smallest dp > 1 of the axes stands for every other. Asked once per layout: a rejection builds its message, which
/// costs more than the rest of the layout's checks (LitGPT shards and checkpoints only on several devices; hf and
/// llm-foundry have no selective recompute).
struct rule_verdicts {
    std::array<std::array<bool, 3>, 2> ok{};  ///< [dp > 1][recompute level]
    bool any = false;
    bool allows(std::int64_t dp, recompute rc) const { return ok[dp > 1 ? 1 : 0][static_cast<std::size_t>(rc)]; }
};
inline rule_verdicts rules_verdicts(const job_spec& j, const std::vector<std::int64_t>& dps, const std::vector<recompute>& levels) {
    rule_verdicts v;
    auto p = j.parallel;
    const bool one = std::find(dps.begin(), dps.end(), 1) != dps.end() && p.sharding == sharding::none;  // sharding needs dp > 1
    const auto several = std::find_if(dps.begin(), dps.end(), [](std::int64_t d) { return d > 1; });
    for (std::size_t many = 0; many < 2; ++many) {
        if (many == 0 ? !one : several == dps.end()) continue;
        p.dp = many == 0 ? 1 : *several;
        for (const auto rc : levels) {
            p.recompute = rc;
            const bool ok = framework_rejects(j.runtime.framework, p, j.training).empty();
            v.ok[many][static_cast<std::size_t>(rc)] = ok;
            v.any = v.any || ok;
        }
    }
    return v;
}

/// Whether a layout is searched at all, on the fields other than dp and recompute: node shape and the
/// virtual-pipeline split. The framework's rules (rules_verdicts) and the planner's dp rules (ep divides dp x cp,
/// sharding needs dp > 1) are asked in the search.
inline bool shape_allowed(const job_spec& j, const gpu_pool& pool, const plan_options& opt) {
    const auto& p = j.parallel;
    if (!opt.allow_tp_across_nodes && pool.gpus_per_node % p.tp != 0) return false;
    if (opt.allow_tp_across_nodes && p.tp > pool.gpus_per_node && p.tp % pool.gpus_per_node != 0) return false;
    return p.pp > 1 ? (j.model.layers / p.pp) % p.vpp == 0 : p.vpp == 1;
}

/// The overlap flags of a plan (plan_options::framework_overlap): the job's own, plus what its framework
/// supports for the layout. Megatron's gradient-reduce overlap matters only with dp x cp > 1 (the step-time
/// model ignores it otherwise); --tp-comm-overlap needs sequence parallelism and Transformer Engine's
/// userbuffers inside one node (megatron/core/model_parallel_config.py tp_comm_overlap).
inline void set_overlap(job_spec& j, const runtime_spec& base, const plan_options& opt) {
    const auto& p = j.parallel;
    j.runtime.overlap_grad_reduce = base.overlap_grad_reduce;
    j.runtime.tp_comm_overlap = base.tp_comm_overlap;
    if (!opt.framework_overlap || !j.runtime.framework->perf.plannable_overlap_flags) return;
    j.runtime.overlap_grad_reduce = true;
    if (p.tp > 1 && p.sequence_parallel && !opt.allow_tp_across_nodes) j.runtime.tp_comm_overlap = true;
}

/// Sets the layout a point of the axes describes on `j` in place (no copy of the job's strings per layout):
/// framework `fw`, the degrees, sharding `sh`, the schedule the pinned fields or vpp imply, sequence parallelism
/// and the overlap flags (set_overlap) over `base`, the job's own runtime.
inline void set_layout(job_spec& j, const runtime_spec& base, const search_axes& ax, framework fw, std::int64_t tp,
                       std::int64_t pp, std::int64_t vpp, std::int64_t cp, sharding sh, std::int64_t ep,
                       std::int64_t dp, const plan_options& opt) {
    j.runtime.framework = fw;
    auto& p = j.parallel;
    // The axes are rewritten on every call; what the job states beyond them (expert tensor parallelism, MoE
    // dispatch, uneven or embedding/loss splits, the full-recompute unit) never changes in a search: kept.
    const parallel_config job_fields = p;
    p = parallel_config{};
    p.etp = job_fields.etp;
    p.dispatcher = job_fields.dispatcher;
    p.grouped_gemm = job_fields.grouped_gemm;
    p.first_stage_layers = job_fields.first_stage_layers;
    p.last_stage_layers = job_fields.last_stage_layers;
    p.embedding_stage = job_fields.embedding_stage;
    p.loss_stage = job_fields.loss_stage;
    if (static_cast<std::int64_t>(job_fields.stage_layers.size()) == pp) p.stage_layers = job_fields.stage_layers;
    p.recompute_method = job_fields.recompute_method;
    p.recompute_layers = job_fields.recompute_layers;
    p.dp = dp;
    p.tp = tp;
    p.pp = pp;
    p.vpp = vpp;
    p.cp = cp;
    p.ep = ep;
    p.sharding = sh;
    p.schedule = opt.constraints.schedule.value_or(vpp > 1 ? pipeline_schedule::interleaved
                                                           : pipeline_schedule::one_f_one_b);
    p.sequence_parallel = ax.sequence_parallel.value_or(default_sequence_parallel(fw, tp, j.training.seq_len));
    set_overlap(j, base, opt);
}
/// The job with the layout a point of the axes describes (set_layout on a copy).
inline job_spec layout_job(const job_spec& job0, const search_axes& ax, framework fw, std::int64_t tp,
                           std::int64_t pp, std::int64_t vpp, std::int64_t cp, sharding sh, std::int64_t ep,
                           std::int64_t dp, const plan_options& opt) {
    job_spec j = job0;
    set_layout(j, job0.runtime, ax, fw, tp, pp, vpp, cp, sh, ep, dp, opt);
    return j;
}
/// The micro-batches of `ax` that divide the layout's share of the global batch (and, interleaved, give a
/// multiple of pp micro-batches), ascending, into `out`.
inline void valid_micro_batches(const job_spec& j, const search_axes& ax, std::vector<std::int64_t>& out) {
    const auto& p = j.parallel;
    out.clear();
    for (auto mb : ax.micro_batch) {
        if (j.training.global_batch % (mb * p.dp) != 0) continue;
        const auto m = j.training.global_batch / (mb * p.dp);
        if (p.schedule == pipeline_schedule::interleaved && m % p.pp != 0) continue;
        out.push_back(mb);
    }
}

/// Scores by GPU count in a flat array (the planner's best score per count and its bar): a lookup per speed bound
/// check without a tree search. find(n): the score set for n, or null.
struct scores_by_count {
    std::vector<double> score{};
    std::vector<char> set_at{};
    const double* find(std::int64_t n) const {
        const auto k = static_cast<std::size_t>(n);
        return n >= 0 && k < set_at.size() && set_at[k] ? &score[k] : nullptr;
    }
    void set(std::int64_t n, double s) {
        const auto k = static_cast<std::size_t>(n);
        if (k >= set_at.size()) {
            score.resize(k + 1, 0.0);
            set_at.resize(k + 1, 0);
        }
        score[k] = s;
        set_at[k] = 1;
    }
    void clear() {
        score.clear();
        set_at.clear();
    }
};

/// Largest k in (lo, hi) with fits(k), given fits(lo) (or lo = -1) and !fits(hi): the micro-batches that fit
/// are a prefix (2.), so a binary search, after lo + 1 alone: where a recompute level adds no micro-batch (a
/// large model below full recompute, the usual case) one estimate settles it instead of log2(hi - lo).
template <class Fits>
std::int64_t largest_fitting(Fits&& fits, std::int64_t lo, std::int64_t hi) {
    if (hi - lo > 1 && !fits(lo + 1)) return lo;
    while (hi - lo > 1) {
        const auto mid = (lo + hi) / 2;
        if (fits(mid)) lo = mid; else hi = mid;
    }
    return lo;
}

}  // namespace detail

}  // namespace frenzy
