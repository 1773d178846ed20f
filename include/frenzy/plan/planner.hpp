#pragma once
// Resource prediction: for a job and a cluster, search GPU type x count x (dp, tp, pp, vpp, sharding, recompute,
// micro-batch), keep the configurations that fit in memory (MARP) with a safety margin and respect the node
// shapes, predict their speed (perf/step_time.hpp) and rank them by an objective. Composed from four policies:
// memory model, step-time model, search space and objective.
//
// Pruning (each step keeps every configuration that can be optimal):
//  1. a lower bound on per-GPU model-state bytes (weights/gradients/optimizer of the stage, sharded) rejects a
//     layout before the estimator runs;
//  2. memory grows with the micro-batch and shrinks with recompute, so for each layout and recompute level the
//     micro-batches that fit are a prefix of the sorted divisors: found by binary search;
//  3. recompute only costs time, so a micro-batch that fits without recompute is not tried with it, and one that
//     fits with selective recompute is not tried with full recompute;
//  4. a layout that does not fit at micro-batch 1 with full recompute is dropped at once;
//  5. a layout (and recompute level) whose optimistic speed cannot beat the best plan found so far for the same
//     GPU count is skipped: every micro-batch at the largest micro-batch's (best) GEMM efficiency and exposed
//     gradient sync, the bubble at the smallest micro-batch. This needs an objective that does not get worse as
//     tokens/s grows at a fixed GPU count, and a step-time model whose step_breakdown is filled consistently
//     (one that leaves it zero simply gets no pruning).
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frenzy/core/enum_names.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/units.hpp"
#include "frenzy/hw/cluster.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/breakdown.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

enum class plan_objective { time, gpu_hours, cost };

template <> struct enum_names<plan_objective> {
    static constexpr std::array<std::pair<plan_objective, std::string_view>, 3> table{{
        {plan_objective::time, "time"}, {plan_objective::gpu_hours, "gpu-hours"}, {plan_objective::cost, "cost"}}};
};

/// What to optimise and which limits to respect.
struct plan_options {
    plan_objective objective = plan_objective::time;
    std::map<std::string, double> price_per_gpu_hour;  ///< by GPU type name (USD); needed for objective cost
    /// Usable share of each GPU's memory: a plan fits when the estimated peak allocated bytes are at most
    /// memory_safety x the GPU's memory. 0.9 leaves ~10% for the CUDA context, NCCL buffers and allocator
    /// fragmentation (MARP's peak_reserved is typically 2-10% above peak_allocated).
    double memory_safety = 0.9;
    std::int64_t max_gpus = 0;             ///< 0 = as many as the cluster has
    bool allow_tp_across_nodes = false;    ///< tensor parallelism normally stays inside a node (NVLink/PCIe)
    std::vector<framework> frameworks;     ///< empty = the job's runtime.framework
    std::int64_t max_pp = 0;               ///< 0 = up to model.layers
    std::int64_t max_vpp = 4;              ///< largest virtual pipeline size tried (Megatron interleaved)
};

/// Where the GPUs of one type are: its catalog entry, node shape and how many nodes there are.
struct gpu_pool {
    gpu_type gpu;
    int gpus_per_node = 8;
    int nodes = 0;
    double network_gbps = 0;  ///< per node, GB/s
    std::int64_t gpus() const { return static_cast<std::int64_t>(gpus_per_node) * nodes; }
};

/// The axes of the search for one job on one pool. Every combination is checked against validate(job).
struct search_axes {
    std::vector<framework> frameworks;
    std::vector<std::int64_t> tp, pp, dp, micro_batch;
    std::vector<std::int64_t> ep{1};  ///< expert-parallel degrees (MoE models); each must divide dp
    std::int64_t max_vpp = 1;
    std::vector<recompute> recomputes{recompute::none, recompute::selective, recompute::full};
};

// ---- policies ------------------------------------------------------------------------------------------------

/// Memory model: MARP's interface (memory/estimator.hpp); throws config_error on invalid layouts.
template <class M>
concept MemoryModel = requires(const M& m, const job_spec& j) {
    { m.estimate(j) } -> std::same_as<memory_report>;
};
/// Step-time model: perf/step_time.hpp's interface.
template <class T>
concept StepTimeModel = requires(const T& t, const job_spec& j, const gpu_type& g, const topology& topo) {
    { t.predict(j, g, topo) } -> std::same_as<step_estimate>;
};
/// Search space: the axes to enumerate for a job on a pool.
template <class S>
concept SearchSpace = requires(const S& s, const job_spec& j, const gpu_pool& p, const plan_options& o) {
    { s.axes(j, p, o) } -> std::same_as<search_axes>;
};
/// Objective: lower is better.
template <class O>
concept Objective = requires(const O& o, const plan& p, const plan_options& opt) {
    { o.score(p, opt) } -> std::convertible_to<double>;
};

static_assert(MemoryModel<memory_estimator>);
static_assert(StepTimeModel<step_time_model>);

namespace detail {
inline std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t limit = 0) {
    std::vector<std::int64_t> d;
    for (std::int64_t i = 1; i <= n && (limit <= 0 || i <= limit); ++i)
        if (n % i == 0) d.push_back(i);
    return d;
}
}  // namespace detail

/// Default search space: tp among the divisors of the node size (or of the pool when tp may cross nodes) that
/// divide heads, kv_heads and the MLP widths; pp among the divisors of model.layers; dp and micro-batch among the
/// divisors of training.global_batch; for MoE models, ep among the divisors of the expert count (Megatron and
/// DeepSpeed only).
struct divisor_search_space {
    search_axes axes(const job_spec& j, const gpu_pool& pool, const plan_options& o) const {
        search_axes a;
        a.frameworks = o.frameworks.empty() ? std::vector<framework>{j.runtime.framework} : o.frameworks;
        const std::int64_t avail = o.max_gpus > 0 ? std::min(o.max_gpus, pool.gpus()) : pool.gpus();
        const auto& m = j.model;
        const std::int64_t tp_limit = o.allow_tp_across_nodes ? avail : std::min<std::int64_t>(pool.gpus_per_node, avail);
        for (auto t : detail::divisors(o.allow_tp_across_nodes ? std::max<std::int64_t>(tp_limit, 1) : pool.gpus_per_node, tp_limit))
            if (m.heads % t == 0 && m.kv() % t == 0 && m.ffn_hidden % t == 0 && (!m.is_moe() || m.expert_ffn() % t == 0))
                a.tp.push_back(t);
        a.pp = detail::divisors(m.layers, std::min(o.max_pp > 0 ? o.max_pp : m.layers, avail));
        a.dp = detail::divisors(j.training.global_batch, avail);
        a.micro_batch = detail::divisors(j.training.global_batch);
        if (m.is_moe()) a.ep = detail::divisors(m.moe.experts);
        a.max_vpp = std::max<std::int64_t>(1, o.max_vpp);
        return a;
    }
};
static_assert(SearchSpace<divisor_search_space>);

/// Default objective, chosen by plan_options::objective: time to finish, GPU-hours, or cost (GPU-hours x price).
/// With no token budget (total_tokens = 0) the same measures per token are used.
struct selectable_objective {
    double score(const plan& p, const plan_options& o) const {
        const double per_token = p.tokens_per_s > 0 ? 1.0 / p.tokens_per_s : 1e300;
        switch (o.objective) {
            case plan_objective::time: return per_token;
            case plan_objective::gpu_hours: return per_token * p.gpus;
            case plan_objective::cost: {
                auto it = o.price_per_gpu_hour.find(p.gpu);
                const double price = it == o.price_per_gpu_hour.end() ? 0.0 : it->second;
                return per_token * p.gpus * price;
            }
        }
        return per_token;
    }
};
static_assert(Objective<selectable_objective>);

/// Search statistics (for benchmarks and tests).
struct plan_stats {
    std::int64_t layouts = 0;          ///< (framework, tp, pp, vpp, sharding, dp) combinations considered
    std::int64_t configurations = 0;   ///< layouts x recompute x micro-batch represented (incl. pruned ones)
    std::int64_t memory_estimates = 0; ///< estimator calls
    std::int64_t step_estimates = 0;   ///< step-time model calls
};

/// Pools of a cluster, one per GPU type (node groups of the same type and node size are merged; for a type with
/// several node sizes, the size with the most GPUs).
inline std::vector<gpu_pool> gpu_pools(const cluster_spec& c) {
    std::vector<gpu_pool> pools;
    for (const auto& g : c.nodes) {
        const auto& t = c.catalog.at(g.gpu);
        auto it = std::find_if(pools.begin(), pools.end(), [&](const gpu_pool& p) { return p.gpu.name == g.gpu; });
        if (it == pools.end()) {
            pools.push_back({t, g.gpus_per_node, g.count, network_gbps(g, t)});
        } else if (it->gpus_per_node == g.gpus_per_node) {
            it->nodes += g.count;
            it->network_gbps = std::min(it->network_gbps, network_gbps(g, t));
        } else if (static_cast<std::int64_t>(g.gpus_per_node) * g.count > it->gpus()) {
            *it = {t, g.gpus_per_node, g.count, network_gbps(g, t)};
        }
    }
    return pools;
}

/// The composed planner.
template <MemoryModel M = memory_estimator, StepTimeModel T = step_time_model, SearchSpace S = divisor_search_space,
          Objective O = selectable_objective>
class basic_planner {
public:
    basic_planner() = default;
    explicit basic_planner(M memory, T time = {}, S space = {}, O objective = {})
        : mem_(std::move(memory)), time_(std::move(time)), space_(std::move(space)), obj_(std::move(objective)) {}

    const M& memory_model() const { return mem_; }
    const T& time_model() const { return time_; }
    const O& objective() const { return obj_; }

    /// Plans `job` (its `parallel` is ignored) on every GPU type of `cluster`. Returns, for each GPU count of each
    /// type, the best configuration by the objective, all ranked best first (so the first plan of each type is
    /// its best, the smallest-count one its minimum-GPU plan), and the types that cannot run the job, with why.
    plan_result plan(const job_spec& job, const cluster_spec& cluster, const plan_options& opt = {},
                     plan_stats* stats = nullptr) const {
        validate(job.model);
        validate(job.training);
        if (!(opt.memory_safety > 0 && opt.memory_safety <= 1))
            throw config_error("plan.memory_safety=" + std::to_string(opt.memory_safety) + " must be in (0, 1]");
        if (opt.objective == plan_objective::cost)
            for (const auto& pool : gpu_pools(cluster))
                if (!opt.price_per_gpu_hour.contains(pool.gpu.name))
                    throw config_error("objective cost needs a price for GPU type \"" + pool.gpu.name + "\" (--price " +
                                       pool.gpu.name + "=USD_PER_HOUR)");
        plan_result r;
        plan_stats local;
        plan_stats& st = stats ? *stats : local;
        for (const auto& pool : gpu_pools(cluster)) plan_pool(job, pool, opt, r, st);
        std::stable_sort(r.plans.begin(), r.plans.end(), [&](const frenzy::plan& a, const frenzy::plan& b) {
            const double sa = obj_.score(a, opt), sb = obj_.score(b, opt);
            if (sa != sb) return sa < sb;
            if (a.gpus != b.gpus) return a.gpus < b.gpus;
            return a.gpu < b.gpu;
        });
        return r;
    }

    /// Plans of one pool only (the helper a scheduler uses for "this job on that type").
    plan_result plan_on(const job_spec& job, const gpu_pool& pool, const plan_options& opt = {},
                        plan_stats* stats = nullptr) const {
        plan_result r;
        plan_stats local;
        plan_pool(job, pool, opt, r, stats ? *stats : local);
        std::stable_sort(r.plans.begin(), r.plans.end(),
                         [&](const frenzy::plan& a, const frenzy::plan& b) { return obj_.score(a, opt) < obj_.score(b, opt); });
        return r;
    }

private:
    struct candidate {
        job_spec job;
        step_estimate speed;
        double score = 0;
    };

    static bool framework_allows(framework fw, sharding s, const parallel_config& p) {
        switch (fw) {
            case framework::megatron: return true;  // none, distributed optimizer, Megatron-FSDP (gradients, full)
            case framework::deepspeed: return p.pp == 1 || s == sharding::none || s == sharding::optimizer;
            case framework::fsdp: return s != sharding::optimizer && p.vpp == 1;
            case framework::ddp: return s == sharding::none && p.tp == 1 && p.pp == 1;
        }
        return false;
    }

    /// Lower bound on the bottleneck stage's model-state bytes per GPU, below what any framework profile holds:
    /// 16-bit weights and gradients, and for Adam two moments of the compute precision plus an fp32 master copy in
    /// mixed precision (FSDP's sharded fp32 parameters count as that copy), each sharded as far as the layout
    /// shards it. Cheaper than the estimator and never above its answer.
    static double state_lower_bound(const job_spec& j) {
        const auto& p = j.parallel;
        const auto& t = j.training;
        const double params = detail::stage_parameters(j.model, p, t.seq_len);
        const double dp = static_cast<double>(p.dp);
        const double w = 2.0, gr = 2.0;
        const bool mixed = t.precision != precision::bf16 && t.precision != precision::fp32;
        const bool adam = t.optimizer == optimizer_kind::adam || t.optimizer == optimizer_kind::adamw;
        // Adam moments: fp32 except in pure bf16; mixed precision's fp32 master adds 4 B, of which 2 may be the
        // weights themselves (FSDP keeps only the sharded fp32 parameters): count 2
        const double o = adam ? (t.precision == precision::bf16 ? 4.0 : 8.0) + (mixed ? 2.0 : 0.0) : 0.0;
        return params * (w / (p.sharding == sharding::full ? dp : 1.0) +
                         gr / (p.sharding >= sharding::gradients ? dp : 1.0) +
                         o / (p.sharding >= sharding::optimizer ? dp : 1.0));
    }

    bool fits(const job_spec& j, double capacity, plan_stats& st, memory_report* out = nullptr) const {
        ++st.memory_estimates;
        try {
            auto r = mem_.estimate(j);
            const bool ok = r.peak_allocated.value <= capacity;
            if (out) *out = std::move(r);
            return ok;
        } catch (const config_error&) {
            return false;
        }
    }

    void plan_pool(const job_spec& job0, const gpu_pool& pool, const plan_options& opt, plan_result& r,
                   plan_stats& st) const {
        const auto& g = pool.gpu;
        const std::string& name = g.name;
        if (!(g.peak_flops(job0.training.precision) > 0)) {
            const std::string prec(to_string(job0.training.precision));
            const std::string base = prec.substr(0, prec.find('-'));
            const bool bf = job0.training.precision == precision::bf16_mixed || job0.training.precision == precision::bf16;
            r.infeasible.push_back({name, prec + " not supported on " + name + " (no " + base + " tensor cores" +
                                              (bf && g.fp16_tflops > 0 ? "; use fp16-mixed)" : ")")});
            return;
        }
        const double capacity = opt.memory_safety * g.memory().value;
        const std::int64_t avail = opt.max_gpus > 0 ? std::min(opt.max_gpus, pool.gpus()) : pool.gpus();
        auto ax = space_.axes(job0, pool, opt);
        for (auto* v : {&ax.tp, &ax.pp, &ax.dp, &ax.micro_batch, &ax.ep}) std::sort(v->begin(), v->end());  // pruning needs ascending axes
        const topology topo{pool.gpus_per_node, pool.network_gbps};
        std::map<std::int64_t, candidate> best;  // by GPU count
        for (auto fw : ax.frameworks)
            for (auto tp : ax.tp)
                for (auto pp : ax.pp)
                    for (std::int64_t vpp = 1; vpp <= (pp > 1 ? ax.max_vpp : 1); ++vpp) {
                        if ((job0.model.layers / pp) % vpp != 0) continue;
                        for (auto sh : {sharding::none, sharding::optimizer, sharding::gradients, sharding::full})
                          for (auto ep : ax.ep) {
                            if (ep > 1 && fw != framework::megatron && fw != framework::deepspeed) continue;
                            frontier known;  // largest micro-batch known to fit per recompute level at a smaller dp
                            for (auto dp : ax.dp) {
                                const std::int64_t n = dp * tp * pp;
                                if (n > avail) break;
                                if (dp % ep != 0) continue;
                                if (!opt.allow_tp_across_nodes && pool.gpus_per_node % tp != 0) continue;
                                if (opt.allow_tp_across_nodes && tp > pool.gpus_per_node && tp % pool.gpus_per_node != 0) continue;
                                if (dp == 1 && sh != sharding::none) continue;  // nothing to shard over
                                job_spec j = job0;
                                j.runtime.framework = fw;
                                auto& p = j.parallel;
                                p = parallel_config{};
                                p.dp = dp;
                                p.tp = tp;
                                p.pp = pp;
                                p.vpp = vpp;
                                p.schedule = vpp > 1 ? pipeline_schedule::interleaved : pipeline_schedule::one_f_one_b;
                                p.ep = ep;
                                p.sharding = sh;
                                p.sequence_parallel = tp > 1 && fw == framework::megatron && j.training.seq_len % tp == 0;
                                if (!framework_allows(fw, sh, p)) continue;
                                search_layout(j, g, topo, capacity, ax, opt, best, st, known);
                            }
                        }
                    }
        if (best.empty()) {
            r.infeasible.push_back({name, infeasible_reason(job0, pool, avail, ax, opt, st)});
            return;
        }
        for (auto& [n, c] : best) {
            memory_report rep;
            fits(c.job, capacity, st, &rep);
            frenzy::plan pl = make_plan(c.job, g, pool.gpus_per_node, c.speed.step_time.value, c.speed.tokens_per_s, opt);
            pl.peak_allocated = rep.peak_allocated;
            pl.capacity = bytes{capacity};
            pl.mfu = c.speed.mfu;
            r.plans.push_back(std::move(pl));
        }
    }

    /// A plan record (without its memory figures) for a job with its layout: what the objective scores.
    static frenzy::plan make_plan(const job_spec& j, const gpu_type& g, int gpus_per_node, double step_s,
                                  double tokens_per_s, const plan_options& opt) {
        frenzy::plan pl;
        const auto n = j.parallel.gpus();
        pl.gpu = g.name;
        pl.gpus = static_cast<int>(n);
        pl.nodes = static_cast<int>((n + gpus_per_node - 1) / gpus_per_node);
        pl.parallel = j.parallel;
        pl.framework = j.runtime.framework;
        pl.micro_batch = j.training.micro_batch;
        pl.step_time = seconds{step_s};
        pl.tokens_per_s = tokens_per_s;
        const double tokens = j.training.total_tokens;
        pl.est_time = seconds{tokens > 0 && tokens_per_s > 0 ? tokens / tokens_per_s : 0.0};
        pl.gpu_hours = pl.est_time.value * static_cast<double>(n) / 3600.0;
        auto price = opt.price_per_gpu_hour.find(g.name);
        pl.cost = price == opt.price_per_gpu_hour.end() ? 0.0 : pl.gpu_hours * price->second;
        return pl;
    }

    /// Tries every recompute level and micro-batch of one layout (pruned as described at the top of the file).
    /// Per recompute level, the largest micro-batch that fitted at a smaller dp (>= 2) of the same layout: per-GPU
    /// memory does not grow with dp from 2 on (sharded states shrink, fewer micro-batches are in flight), so every
    /// micro-batch up to it fits at a larger dp too.
    struct frontier {
        std::map<recompute, std::int64_t> fits_mb;
    };

    void search_layout(job_spec& j, const gpu_type& g, const topology& topo, double capacity, const search_axes& ax,
                       const plan_options& opt, std::map<std::int64_t, candidate>& best, plan_stats& st,
                       frontier& known) const {
        ++st.layouts;
        const auto& p = j.parallel;
        std::vector<std::int64_t> mbs;  // valid micro-batches, ascending
        for (auto mb : ax.micro_batch) {
            if (j.training.global_batch % (mb * p.dp) != 0) continue;
            const auto m = j.training.global_batch / (mb * p.dp);
            if (p.schedule == pipeline_schedule::interleaved && m % p.pp != 0) continue;
            mbs.push_back(mb);
        }
        st.configurations += static_cast<std::int64_t>(mbs.size() * ax.recomputes.size());
        if (mbs.empty()) return;
        std::vector<recompute> levels = ax.recomputes;
        std::sort(levels.begin(), levels.end());  // none < selective < full: memory decreasing, time increasing
        // 5. speed bound: no micro-batch of this layout and recompute level beats all micro-batches' work at the
        //    largest micro-batch's efficiency (best GEMM shape) without bubble or exposed communication
        auto beaten = [&](recompute rc) {
            auto it = best.find(p.gpus());
            if (it == best.end()) return false;
            j.parallel.recompute = rc;
            j.training.micro_batch = mbs.back();
            ++st.step_estimates;
            const auto e = time_.predict(j, g, topo);
            const auto& b = e.parts;
            // at the largest micro-batch: fewest slots, best GEMM efficiency, least exposed gradient sync; the
            // bubble is at least its slots x the smallest micro-batch at that per-token compute rate
            const double mb_ratio = static_cast<double>(mbs.front()) / static_cast<double>(mbs.back());
            const double work = static_cast<double>(b.micro_batches) * std::max(b.compute_mb + b.tp_mb + b.ep_mb, b.shard_mb) +
                                b.bubble_slots * b.compute_mb * mb_ratio + b.dp_exposed + b.param_gather + b.optimizer;
            if (!(work > 0)) return false;
            const double tps = j.tokens_per_step() / work;
            const auto probe = make_plan(j, g, topo.gpus_per_node, work, tps, opt);
            return obj_.score(probe, opt) >= it->second.score;
        };
        if (beaten(levels.front())) return;
        if (state_lower_bound(j) > capacity) return;
        const bool reuse = p.dp > 1;  // frontier entries come from dp >= 2 only
        auto fits_at = [&](recompute rc, std::size_t k) {
            if (reuse)
                if (auto it = known.fits_mb.find(rc); it != known.fits_mb.end() && mbs[k] <= it->second) return true;
            j.parallel.recompute = rc;
            j.training.micro_batch = mbs[k];
            const bool ok = fits(j, capacity, st);
            if (ok && reuse) known.fits_mb[rc] = std::max(known.fits_mb[rc], mbs[k]);
            return ok;
        };
        // most frugal point first: if it does not fit, nothing in this layout does
        if (!fits_at(levels.back(), 0)) return;
        std::int64_t covered = -1;  // micro-batch indices <= covered already fit with a cheaper recompute level
        for (auto rc : levels) {
            if (covered + 1 >= static_cast<std::int64_t>(mbs.size())) break;
            if (rc != levels.front() && beaten(rc)) break;  // more recompute only adds work
            // largest index that fits (prefix property), by binary search
            std::int64_t lo = -1, hi = static_cast<std::int64_t>(mbs.size());  // fits(lo) or lo=-1; !fits(hi)
            if (rc == levels.back()) lo = 0;
            lo = std::max(lo, covered);  // what fits with less recompute fits with more
            while (hi - lo > 1) {
                const auto mid = (lo + hi) / 2;
                if (fits_at(rc, static_cast<std::size_t>(mid))) lo = mid; else hi = mid;
            }
            if (lo >= 0 && reuse) known.fits_mb[rc] = std::max(known.fits_mb[rc], mbs[static_cast<std::size_t>(lo)]);
            for (std::int64_t k = covered + 1; k <= lo; ++k) {
                j.parallel.recompute = rc;
                j.training.micro_batch = mbs[static_cast<std::size_t>(k)];
                consider(j, g, topo, opt, best, st);
            }
            covered = std::max(covered, lo);
        }
    }

    void consider(const job_spec& j, const gpu_type& g, const topology& topo, const plan_options& opt,
                  std::map<std::int64_t, candidate>& best, plan_stats& st) const {
        ++st.step_estimates;
        auto speed = time_.predict(j, g, topo);
        if (!speed.supported || !(speed.tokens_per_s > 0)) return;
        const auto probe = make_plan(j, g, topo.gpus_per_node, speed.step_time.value, speed.tokens_per_s, opt);
        const double s = obj_.score(probe, opt);
        auto it = best.find(j.parallel.gpus());
        if (it == best.end() || s < it->second.score ||
            (s == it->second.score && speed.tokens_per_s > it->second.speed.tokens_per_s))
            best[j.parallel.gpus()] = candidate{j, std::move(speed), s};
    }

    /// Why nothing fits: the smallest GPU count that would fit with the most frugal settings, if any.
    std::string infeasible_reason(const job_spec& job0, const gpu_pool& pool, std::int64_t avail, const search_axes& ax,
                                  const plan_options& opt, plan_stats& st) const {
        const auto& g = pool.gpu;
        const double capacity = opt.memory_safety * g.memory().value;
        const std::string gib = std::to_string(static_cast<long long>(std::llround(g.memory().value / GiB)));
        const std::string have = std::to_string(pool.nodes) + (pool.nodes == 1 ? " node of " : " nodes of ") +
                                 std::to_string(pool.gpus_per_node) + " available";
        bool can_full = false;
        for (auto fw : ax.frameworks) can_full = can_full || fw == framework::fsdp || fw == framework::deepspeed;
        const std::string how = can_full ? "full sharding and recompute" : "tensor+pipeline parallelism, sharded optimizer and full recompute";
        // frugal layouts: largest tp, any pp, dp from the divisors of the global batch, micro-batch 1
        std::int64_t need = 0;
        std::string layout;
        const std::int64_t limit = 1 << 16;
        for (auto fw : ax.frameworks)
            for (auto tp : ax.tp)
                for (auto pp : detail::divisors(job0.model.layers))
                    for (auto dp : detail::divisors(job0.training.global_batch)) {
                        const auto n = dp * tp * pp;
                        if (n > limit || (need > 0 && n >= need)) continue;
                        job_spec j = job0;
                        j.runtime.framework = fw;
                        j.training.micro_batch = 1;
                        j.parallel = parallel_config{};
                        j.parallel.dp = dp;
                        j.parallel.tp = tp;
                        j.parallel.pp = pp;
                        j.parallel.recompute = recompute::full;
                        j.parallel.sequence_parallel = tp > 1 && fw == framework::megatron && job0.training.seq_len % tp == 0;
                        if (fw == framework::megatron || fw == framework::deepspeed)
                            for (auto ep : ax.ep)
                                if (dp % ep == 0) j.parallel.ep = std::max(j.parallel.ep, ep);
                        const sharding sh = dp == 1 ? sharding::none
                                            : (fw == framework::fsdp || (fw == framework::deepspeed && pp == 1))
                                                ? sharding::full
                                                : (fw == framework::ddp ? sharding::none : sharding::optimizer);
                        j.parallel.sharding = sh;
                        if (!framework_allows(fw, sh, j.parallel)) continue;
                        if (state_lower_bound(j) > capacity) continue;
                        if (fits(j, capacity, st)) {
                            need = n;
                            layout = "dp=" + std::to_string(dp) + " tp=" + std::to_string(tp) + " pp=" + std::to_string(pp) +
                                     (j.parallel.ep > 1 ? " ep=" + std::to_string(j.parallel.ep) : "") +
                                     (fw != ax.frameworks.front() || ax.frameworks.size() > 1 ? " " + std::string(to_string(fw)) : "");
                        }
                    }
        if (need == 0)
            return "does not fit on " + gib + " GiB cards even with " + how + " at micro-batch 1 (up to " +
                   std::to_string(limit) + " GPUs)";
        if (need <= avail)
            return "no layout satisfies the framework rules and node shape (" + std::to_string(pool.gpus_per_node) +
                   " GPUs per node) within " + std::to_string(avail) + " GPUs";
        return "needs " + std::to_string(need) + " x " + gib + " GiB even with " + how + " (" + layout + "); " + have +
               (opt.max_gpus > 0 && opt.max_gpus < pool.gpus() ? " (max_gpus " + std::to_string(opt.max_gpus) + ")" : "");
    }

    M mem_{};
    T time_{};
    S space_{};
    O obj_{};
};

using planner = basic_planner<>;

/// For one GPU type: its plan with the fewest GPUs (the fastest among those) and its fastest plan.
struct type_summary {
    std::string gpu;
    plan minimum;
    plan fastest;
};

/// Per-type minimum-GPU and fastest plans of a result, in the order the types first appear in it (best first).
inline std::vector<type_summary> summarize_by_type(const plan_result& r) {
    std::vector<type_summary> out;
    for (const auto& p : r.plans) {
        auto it = std::find_if(out.begin(), out.end(), [&](const type_summary& t) { return t.gpu == p.gpu; });
        if (it == out.end()) {
            out.push_back({p.gpu, p, p});
            continue;
        }
        if (p.gpus < it->minimum.gpus || (p.gpus == it->minimum.gpus && p.tokens_per_s > it->minimum.tokens_per_s))
            it->minimum = p;
        if (p.tokens_per_s > it->fastest.tokens_per_s) it->fastest = p;
    }
    return out;
}

/// Plans of `job` on each GPU type of `cluster`, best first by the objective (a scheduler's helper):
/// equivalent to planner{}.plan(job, cluster, options).
inline plan_result plans_by_type(const job_spec& job, const cluster_spec& cluster, const plan_options& opt = {}) {
    return planner{}.plan(job, cluster, opt);
}

}  // namespace frenzy
