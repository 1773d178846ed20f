#pragma once
// Resource prediction: for a job and a cluster, search GPU type x count x (dp, tp, pp, vpp, cp, ep, sharding,
// recompute, micro-batch), keep the configurations that fit in memory by the one fit rule (memory/fit.hpp) and
// respect the node shapes, predict their speed (perf/step_time.hpp) and rank them by an objective. Composed from
// four policies: memory model, step-time model, search space and objective; the fields a job pins
// (plan_constraints) are kept and the rest searched. The parts, one concern each: plan/options.hpp (what a call is
// asked for, GPU pools, statistics), plan/search_space.hpp (the axes and the job a point of them describes),
// plan/feasibility.hpp (precision fallback, the fit rule with the call's memo, why nothing fits),
// plan/layout_list.hpp (the points a pool's search visits, listed once for the pools that share them),
// plan/objective.hpp (objectives and ranking); this header is the search loop and the public entry.
//
// Pruning (each step keeps every configuration that can be optimal):
//  1. the memory model's own lower bound (its model states, when it offers `lower_bound`) rejects a layout before
//     the full estimate runs;
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
#include <array>
#include <cassert>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/core/units.hpp"
#include "frenzy/hw/cluster.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/breakdown.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/perf/flops.hpp"
#include "frenzy/perf/stage_load.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/plan/feasibility.hpp"
#include "frenzy/plan/layout_list.hpp"
#include "frenzy/plan/mixed_search.hpp"
#include "frenzy/plan/objective.hpp"
#include "frenzy/plan/options.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/plan/policies.hpp"
#include "frenzy/plan/search_space.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// The composed planner. Each policy can be replaced alone by name:
/// `planner::with_objective<my_objective>`, `planner::with_memory_model<my_estimator>`, ... (the others keep
/// their defaults).
template <MemoryModel M = memory_estimator, StepTimeModel T = step_time_model, SearchSpace S = divisor_search_space,
          Objective O = selectable_objective>
class basic_planner {
public:
    template <MemoryModel M2> using with_memory_model = basic_planner<M2, T, S, O>;
    template <StepTimeModel T2> using with_time_model = basic_planner<M, T2, S, O>;
    template <SearchSpace S2> using with_search_space = basic_planner<M, T, S2, O>;
    template <Objective O2> using with_objective = basic_planner<M, T, S, O2>;

    basic_planner() = default;
    explicit basic_planner(M memory, T time = {}, S space = {}, O objective = {})
        : mem_(std::move(memory)), time_(std::move(time)), space_(std::move(space)), obj_(std::move(objective)) {}

    const M& memory_model() const { return mem_; }
    const T& time_model() const { return time_; }
    const S& search_space() const { return space_; }
    const O& objective() const { return obj_; }

    /// Plans `job` on every GPU type of `cluster`, keeping the layout fields `opt.constraints` pins and searching
    /// the rest. Returns, for each GPU count of each type, the best configuration by the objective, all ranked
    /// best first (ties: the faster plan first), and the types that cannot run the job, with why.
    plan_result plan(const job_spec& job, const cluster_spec& cluster, const plan_options& opt = {},
                     plan_stats* stats = nullptr) const {
        check_inputs(job, opt);
        const auto pools = gpu_pools(cluster);
        check_prices(opt, pools);  // plan/options.hpp: the one check of "cost needs a price"
        auto r = plan_result_for(job);
        plan_stats local;
        search_context cx(mem_, stats ? *stats : local);
        cx.pools = pools.size();
        cx.memory.max_usable = 0;
        for (const auto& pool : pools) cx.memory.max_usable = std::max(cx.memory.max_usable, usable_memory(pool.gpu, opt.margin).value);
        for (const auto& pool : pools) plan_pool(job, pool, opt, r, cx);
        detail::rank_plans(r, opt, obj_);
        if (opt.mixed) plan_mixed_pools(job, pools, opt, r);
        return r;
    }

    /// Plans of one pool only (the helper a scheduler uses for "this job on that type").
    plan_result plan_on(const job_spec& job, const gpu_pool& pool, const plan_options& opt = {},
                        plan_stats* stats = nullptr) const {
        check_inputs(job, opt);
        auto r = plan_result_for(job);
        plan_stats local;
        search_context cx(mem_, stats ? *stats : local);
        cx.memory.max_usable = usable_memory(pool.gpu, opt.margin).value;
        plan_pool(job, pool, opt, r, cx);
        detail::rank_plans(r, opt, obj_);
        return r;
    }

private:
    /// Pipelines over two GPU types (plan/mixed.hpp), where the step-time model predicts a stage range
    /// (StagedStepTimeModel: the default's, or a host's that offers it) and the objective is the default's measures.
    void plan_mixed_pools(const job_spec& job, const std::vector<gpu_pool>& pools, const plan_options& opt,
                          plan_result& r) const {
        if constexpr (!StagedStepTimeModel<T>)
            r.mixed_note = "mixed plans need a step-time model that predicts a stage range (StagedStepTimeModel: "
                           "predict(job, gpu, topology, stage))";
        else if constexpr (!std::same_as<O, selectable_objective>)
            r.mixed_note = "mixed plans need the default objective (selectable_objective)";
        else
            plan_mixed(job, std::span<const gpu_pool>(pools), opt, mem_, time_, r);
    }

    struct candidate {
        job_spec job;
        /// predict's answer where consider took it (the parts gave no step), else taken for a kept plan only
        /// (add_plans): a best of its GPU count is often replaced, and predict's extras cost more than its parts
        std::optional<step_estimate> speed{};
        double tokens_per_s = 0;  ///< predict's tokens/s, bit for bit (the same quotient of the same step)
        double score = 0;
    };

    /// The best configuration per GPU count so far (by_count, ascending), each count's score also in a flat array
    /// that beaten and consider read without a tree search (scores: the search_context's, reused across pools).
    struct best_plans {
        explicit best_plans(detail::scores_by_count& storage) : scores(storage) { scores.clear(); }
        std::map<std::int64_t, candidate> by_count{};
        detail::scores_by_count& scores;
        bool empty() const { return by_count.empty(); }
        void keep(std::int64_t n, candidate c) {
            scores.set(n, c.score);
            by_count[n] = std::move(c);
        }
    };

    /// A layout at one dp: what search_hints searches again on the pools after the one that kept a plan of it.
    struct layout_point {
        framework fw = framework::by_default;
        std::int64_t tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1, dp = 1;
        sharding sh = sharding::none;
        bool operator==(const layout_point&) const = default;
    };

    /// What one plan() call shares across GPU types: the memory checks with their memo (plan/feasibility.hpp), the
    /// valid micro-batches of the current pool, and the bottleneck stage of each layout (a staged time model).
    struct search_context {
        /// For a call whose inputs passed check_inputs (memory_check::inputs_checked).
        search_context(const M& mem, plan_stats& stats) : st(stats), memory(mem, stats) {
            memory.inputs_checked = true;
        }
        plan_stats& st;
        detail::memory_check<M> memory;
        double usable = 0;  ///< usable bytes of a GPU of the current pool (usable_memory with the call's margin)
        std::size_t pools = 1;  ///< GPU types the call searches
        /// The layouts each pool searches (plan/layout_list.hpp), one list per distinct set of what they depend on.
        std::vector<detail::layout_list> layouts{};
        std::vector<recompute> levels{};  ///< search_hints' recompute levels at the layout being searched, reused
        std::vector<std::int64_t> micro_batches{};  ///< search_hints' valid micro-batches at the layout, reused
        /// the current layout's bottleneck stage (a staged time model), an entry of `bottleneck`
        const stage_load* stage = nullptr;
        std::map<detail::stage_key, stage_load> bottleneck{};  ///< bottleneck stage by layout, across GPU types
        /// The step-time model's micro_batch_parts of the current layout on the current pool by recompute level and
        /// micro-batch of the axes (`mb_axis`), taken when first needed: they read neither dp nor the sharding, so
        /// the layout's dp and shardings share them (`mb_layout` is what they were taken for).
        std::vector<step_breakdown> mb_parts{};
        std::vector<std::uint32_t> mb_parts_taken{};  ///< the entry holds the current layout's parts: == mb_epoch
        std::uint32_t mb_epoch = 0;
        const std::vector<std::int64_t>* mb_axis = nullptr;
        std::array<std::int64_t, 6> mb_layout{};
        frenzy::plan probe{};  ///< the record the speed bound and the ranking score (detail::set_plan), reused
        /// The layouts of the plans kept on the last pool with plans (search_hints), and the best scores they
        /// reach on the current pool by GPU count: the speed bound's second bar (beaten).
        std::vector<layout_point> hints{};
        detail::scores_by_count bar{}, best_scores{}, found_scores{};  ///< bar; best_plans' storage
        gpu_facts facts{};  ///< the current pool's (plan_pool; gpu null outside its search or without `prepare`)
        /// the most tokens/s a GPU of the current pool is credited with (mfu_capped_tokens_per_s_per_gpu of the job
        /// in the pool's precision); infinity where nothing of its class was measured
        double capped_per_gpu = std::numeric_limits<double>::infinity();
        step_breakdown parts{};  ///< step_parts' answer where it is not a table entry
    };
    /// Takes the step-time model's facts of the pool's type and topology for the pool's search (plan_pool), where it
    /// offers them (PreparedStepTimeModel).
    void prepare_facts(const gpu_pool& pool, search_context& cx) const {
        const topology topo{pool.gpus_per_node, pool.network_GBps};
        if constexpr (PreparedStepTimeModel<T>) cx.facts = time_.prepare(pool.gpu, topo);
    }
    /// The step-time model's prediction: with the layout's bottleneck stage computed once per layout where the model
    /// takes it (StagedStepTimeModel), else as the StepTimeModel concept says.
    step_estimate predict(const job_spec& j, const gpu_type& g, const topology& topo, const search_context& cx) const {
        if constexpr (StagedStepTimeModel<T>)
            if (cx.stage) return time_.predict(j, g, topo, *cx.stage);
        return time_.predict(j, g, topo);
    }
    /// Whether the model gives predict's parts alone (StepPartsModel, with the layout's stage).
    bool has_step_parts(const search_context& cx) const {
        if constexpr (StepPartsModel<T>) return cx.stage != nullptr;
        return false;
    }
    /// predict's parts: without its extras (FLOPs, MFU, error band) where the model gives them alone, and from the
    /// layout's micro-batch parts (search_context::mb_parts) where the model takes the pool's facts: the table entry
    /// completed in place (complete_step_parts; valid until the next call), else a copy in cx.parts.
    const step_breakdown& step_parts(const job_spec& j, const gpu_type& g, const topology& topo, search_context& cx) const {
        if constexpr (PreparedStepTimeModel<T>) {
            if (auto* mb = cx.facts.gpu ? micro_batch_parts(j, cx) : nullptr) {
                assert(cx.facts.gpu == &g && cx.facts.topo == topo);
                time_.complete_step_parts(j, *cx.stage, cx.facts, *mb);
                return *mb;
            }
        }
        if constexpr (StepPartsModel<T>)
            if (cx.stage) return cx.parts = time_.step_parts(j, g, topo, *cx.stage);
        return cx.parts = predict(j, g, topo, cx).parts;
    }
    /// The micro-batch parts of `j` from the layout's table (filled when first asked, with the pool's facts), or
    /// null where `j`'s micro-batch is not on the axes.
    step_breakdown* micro_batch_parts(const job_spec& j, search_context& cx) const {
        if (!cx.stage || !cx.mb_axis) return nullptr;
        const auto& axis = *cx.mb_axis;
        const auto at = std::lower_bound(axis.begin(), axis.end(), j.training.micro_batch);
        if (at == axis.end() || *at != j.training.micro_batch) return nullptr;
        const auto k = static_cast<std::size_t>(j.parallel.recompute) * axis.size() + static_cast<std::size_t>(at - axis.begin());
        if (k >= cx.mb_parts.size()) return nullptr;
        if (cx.mb_parts_taken[k] != cx.mb_epoch) {
            cx.mb_parts[k] = time_.micro_batch_parts(j, *cx.stage, cx.facts);
            cx.mb_parts_taken[k] = cx.mb_epoch;
        }
        return &cx.mb_parts[k];
    }
    /// Starts the micro-batch parts' table of the layout of `j` unless it is the one the table holds (the same but
    /// for dp and the sharding; search_pool sets the other fields per pool).
    static void start_micro_batch_parts(const job_spec& j, const search_axes& ax, search_context& cx) {
        const auto& p = j.parallel;
        const std::array<std::int64_t, 6> layout{static_cast<std::int64_t>(catalog_index(j.runtime.framework)), p.tp, p.pp,
                                                 p.vpp, p.cp, p.ep};
        if (cx.mb_axis == &ax.micro_batch && cx.mb_layout == layout) return;
        cx.mb_axis = &ax.micro_batch;
        cx.mb_layout = layout;
        if (++cx.mb_epoch == 0 || cx.mb_parts.size() != 3 * ax.micro_batch.size()) {  // all entries stale
            cx.mb_epoch = 1;
            cx.mb_parts.resize(3 * ax.micro_batch.size());
            cx.mb_parts_taken.assign(cx.mb_parts.size(), 0);
        }
    }
    static void check_inputs(const job_spec& job, const plan_options& opt) {
        validate_inputs(job);
        validate_margin(opt.margin, "plan.margin");
    }

    /// Plans of `job` on one pool into `r`: the job in the type's precision (or why not), its axes searched, the
    /// best configuration per GPU count recorded, or why nothing fits.
    void plan_pool(const job_spec& job, const gpu_pool& pool, const plan_options& opt, plan_result& r,
                   search_context& cx) const {
        const auto& g = pool.gpu;
        std::string why;
        const auto job0 = detail::job_for_type(job, g, opt, why);
        if (!job0) {
            r.infeasible.push_back({g.name, why});
            return;
        }
        const std::int64_t avail = opt.max_gpus > 0 ? std::min(opt.max_gpus, pool.gpus()) : pool.gpus();
        auto ax = space_.axes(*job0, pool, opt);
        for (auto* v : {&ax.tp, &ax.pp, &ax.dp, &ax.micro_batch, &ax.ep, &ax.cp, &ax.vpp})
            std::sort(v->begin(), v->end());  // pruning needs ascending axes
        std::sort(ax.recomputes.begin(), ax.recomputes.end());
        best_plans best(cx.best_scores);  // by GPU count
        cx.usable = usable_memory(g, opt.margin).value;
        cx.memory.host_memory_GiB = pool.host_memory_GiB;  // the offload's host side (memory/fit.hpp)
        cx.memory.gpus_per_node = pool.gpus_per_node;
        prepare_facts(pool, cx);
        cx.capped_per_gpu = mfu_capped_tokens_per_s_per_gpu(*job0, g);
        const auto& layouts = layouts_of(*job0, pool, ax, avail, opt, cx);
        search_hints(*job0, pool, ax, avail, opt, cx);
        search_pool(*job0, pool, ax, opt, layouts, best, cx);
        cx.facts = {};
        cx.bar.clear();
        if (!best.empty()) cx.hints.clear();  // hints for the next pool: the layouts of this one's plans
        for (const auto& [n, c] : best.by_count) {
            const auto& p = c.job.parallel;
            const layout_point h{c.job.runtime.framework, p.tp, p.pp, p.vpp, p.cp, p.ep, p.dp, p.sharding};
            if (std::find(cx.hints.begin(), cx.hints.end(), h) == cx.hints.end()) cx.hints.push_back(h);
        }
        if (best.empty()) r.infeasible.push_back({g.name, detail::infeasible_reason(*job0, pool, avail, ax, opt, cx.memory)});
        else add_plans(job, pool, opt, best.by_count, r, cx);
        cx.memory.host_memory_GiB = 0;  // this pool's only (mixed plans span two pools and do not check it)
    }

    /// The layouts of `job0`'s axes `ax` on `pool` within `avail` GPUs (plan/layout_list.hpp): the list of an earlier
    /// pool with the same inputs, else listed now.
    const detail::layout_list& layouts_of(const job_spec& job0, const gpu_pool& pool, const search_axes& ax,
                                          std::int64_t avail, const plan_options& opt, search_context& cx) const {
        for (const auto& l : cx.layouts)
            if (l.lists(job0, ax, pool.gpus_per_node, avail)) return l;
        const topology topo{pool.gpus_per_node, pool.network_GBps};
        const auto flops = forward_flops_per_token(job0.model, job0.training.seq_len);
        auto stage_of = [&](const job_spec& j) {
            prepare_stage(j, pool.gpu, topo, flops, cx);
            return cx.stage;
        };
        detail::list_layouts(job0, pool, ax, avail, opt, stage_of, cx.layouts.emplace_back());
        cx.stage = nullptr;
        // The memo sized for the call from its first list: about one memory estimate per point on the first pool and
        // fewer on each further one (the memo answers the points it has seen): four per point held every search of
        // the 70B benchmark over 1, 2, 4 and 12 types (1.2, 1.7, 2.3 and 5.5 estimates per point of the first list:
        // the table rounds up to a power of two), one floor per point at most.
        if (cx.layouts.size() == 1) {
            const auto points = cx.layouts.back().points.size();
            cx.memory.reserve(points * std::min<std::size_t>(cx.pools, 4), points);
        }
        return cx.layouts.back();
    }

    /// Every layout of the list (the layouts of the axes the framework rules, node shape and dp rules allow, within
    /// the pool's GPUs), each at its dps.
    void search_pool(const job_spec& job0, const gpu_pool& pool, const search_axes& ax, const plan_options& opt,
                     const detail::layout_list& layouts, best_plans& best, search_context& cx) const {
        const topology topo{pool.gpus_per_node, pool.network_GBps};
        cx.st.layouts += layouts.idle_points;
        job_spec j = job0;  // one job for the whole search: only the layout fields, micro-batch and recompute change
        for (const auto& l : layouts.layouts) {
            l.set_on(j);
            cx.stage = l.stage;
            start_micro_batch_parts(j, ax, cx);
            frontier known;  // largest micro-batch known to fit per recompute level at a smaller dp
            for (auto k = l.first; k < l.last; ++k) {
                const auto& pt = layouts.points[k];
                j.parallel.dp = pt.dp;
                search_layout(j, pool.gpu, topo, opt, best, cx, known, layouts.micro_batches[pt.micro_batches],
                              l.levels[pt.dp > 1 ? 1 : 0], pt.key);
            }
        }
        cx.stage = nullptr;
        cx.mb_axis = nullptr;
    }

    /// The bottleneck stage of the layout of `j` for a staged time model (StagedStepTimeModel, perf/stage_load.hpp):
    /// independent of dp, sharding, the precision and the GPU, so computed once per layout across GPU types.
    void prepare_stage(const job_spec& j, const gpu_type&, const topology&, const token_flops& flops,
                       search_context& cx) const {
        if constexpr (StagedStepTimeModel<T>) {
            auto [it, fresh] = cx.bottleneck.try_emplace(detail::stage_key_of(j));
            if (fresh) it->second = bottleneck_stage(j, flops);
            cx.stage = &it->second;
        }
    }

    /// Before a pool's search: the layouts of the plans the last pool with plans kept (cx.hints; those of every
    /// pool before, tried too, cost DeepSpeed's and FSDP's searches more than they saved), searched on this pool
    /// alone, each at its dp, exactly as search_pool searches them (the same checks and the same search_layout,
    /// only with other pruning bars). The best score found per GPU count is a score some configuration of this
    /// pool reaches (cx.bar), so a layout whose speed bound exceeds it cannot be kept (beaten): the bound bites from
    /// the first layout on. Strictly exceeds: a configuration that could tie with the pool's best is still tried,
    /// so the plans kept and their ties are those of the search without the bar, bit for bit.
    void search_hints(const job_spec& job0, const gpu_pool& pool, const search_axes& ax, std::int64_t avail,
                      const plan_options& opt, search_context& cx) const {
        cx.bar.clear();
        if (cx.hints.empty()) return;
        const topology topo{pool.gpus_per_node, pool.network_GBps};
        const auto flops = forward_flops_per_token(job0.model, job0.training.seq_len);
        const auto layouts = cx.st.layouts, configurations = cx.st.configurations;  // the search space's, not these
        best_plans found(cx.found_scores);
        job_spec j = job0;
        auto at = [](const auto& axis, auto v) {
            return static_cast<std::size_t>(std::find(axis.begin(), axis.end(), v) - axis.begin());
        };
        for (const auto& h : cx.hints) {
            if (at(ax.pp, h.pp) == ax.pp.size() || at(ax.dp, h.dp) == ax.dp.size() ||
                at(ax.frameworks, h.fw) == ax.frameworks.size() || at(ax.tp, h.tp) == ax.tp.size() ||
                at(ax.vpp, h.vpp) == ax.vpp.size() || at(ax.cp, h.cp) == ax.cp.size() ||
                at(ax.shardings, h.sh) == ax.shardings.size() || at(ax.ep, h.ep) == ax.ep.size())
                continue;  // not a point of this pool's axes
            if (h.dp * h.tp * h.pp * h.cp > avail || (h.dp * h.cp) % h.ep != 0 || (h.dp == 1 && h.sh != sharding::none))
                continue;  // list_layouts' and list_dps' checks
            detail::set_layout(j, job0.runtime, ax, h.fw, h.tp, h.pp, h.vpp, h.cp, h.sh, h.ep, ax.dp.front(), opt);
            if (!detail::shape_allowed(j, pool, opt)) continue;
            const auto rules = detail::rules_verdicts(j, ax.dp, ax.recomputes);
            if (!rules.any) continue;
            prepare_stage(j, pool.gpu, topo, flops, cx);
            start_micro_batch_parts(j, ax, cx);
            j.parallel.dp = h.dp;
            detail::allowed_levels(rules, h.dp, ax.recomputes, cx.levels);
            detail::valid_micro_batches(j, ax, cx.micro_batches);
            frontier known;
            search_layout(j, pool.gpu, topo, opt, found, cx, known, cx.micro_batches, cx.levels,
                          detail::layout_key_of(j));
        }
        cx.st.layouts = layouts;
        cx.st.configurations = configurations;
        for (const auto& [n, c] : found.by_count) cx.bar.set(n, c.score);
    }

    /// The plan records of the best configuration per GPU count, with their memory figures.
    void add_plans(const job_spec& job, const gpu_pool& pool, const plan_options& opt,
                   const std::map<std::int64_t, candidate>& best, plan_result& r, search_context& cx) const {
        const auto& g = pool.gpu;
        const topology topo{pool.gpus_per_node, pool.network_GBps};
        for (const auto& [n, c] : best) {
            memory_report rep;
            cx.memory.fits(c.job, g, opt, &rep);
            if (!c.speed) prepare_stage(c.job, g, topo, forward_flops_per_token(c.job.model, c.job.training.seq_len), cx);
            const step_estimate speed = c.speed ? *c.speed : predict(c.job, g, topo, cx);  // as consider would have
            // c.tokens_per_s: the speed consider ranked, below predict's where capped at the measured MFU ceiling
            const bool capped = c.tokens_per_s < speed.tokens_per_s;
            frenzy::plan pl = detail::make_plan(c.job, g, pool.gpus_per_node,
                                                capped ? c.job.tokens_per_step() / c.tokens_per_s : speed.step_time.value,
                                                capped ? c.tokens_per_s : speed.tokens_per_s, opt);
            if (capped) pl.uncapped_tokens_per_s = speed.tokens_per_s;
            const auto fit = check_fit(rep, g, opt.margin);
            pl.precision_alternative = pl.precision != job.training.precision;
            pl.peak_allocated = rep.peak_allocated;
            pl.peak_reserved = rep.peak_reserved;
            pl.required = fit.required;
            pl.capacity = fit.capacity;
            pl.mfu = capped ? speed.mfu * (c.tokens_per_s / speed.tokens_per_s) : speed.mfu;  // the ceiling where capped
            pl.mfu_ceiling = speed.mfu_ceiling;
            pl.rel_error_band = speed.rel_error_band;
            pl.error_regime = std::string(speed.error_regime);
            r.plans.push_back(std::move(pl));
        }
    }

    /// Per recompute level, the largest micro-batch that fitted at a smaller dp (>= 2) of the same layout: per-GPU
    /// memory does not grow with dp from 2 on (sharded states shrink, fewer micro-batches are in flight), so every
    /// micro-batch up to it fits at a larger dp too.
    struct frontier {
        std::array<std::int64_t, 3> fits_mb{};  ///< by recompute level (none, selective, full); 0 = none known
        /// the memory model's floor (model states alone, which shrink with dp too) fitted at a smaller dp >= 2
        bool floor_fits = false;
        std::int64_t& operator[](recompute r) { return fits_mb[static_cast<std::size_t>(r)]; }
    };

    /// 5. The speed bound: true when no micro-batch up to `mb_top` of this layout at recompute level `rc` can beat
    /// the best plan found so far for its GPU count. Optimistic: every micro-batch's work at `mb_top`'s efficiency
    /// (best GEMM shape, fewest slots, least exposed gradient sync), exposed tp/ep traffic counted but not pp's,
    /// and the bubble at the smallest micro-batch `mb_low` at that per-token compute rate.
    bool beaten(job_spec& j, const gpu_type& g, const topology& topo, const plan_options& opt, recompute rc,
                std::int64_t mb_low, std::int64_t mb_top, const best_plans& best,
                search_context& cx) const {
        auto& st = cx.st;
        const double* kept = best.scores.find(j.parallel.gpus());
        const double* bar = cx.bar.find(j.parallel.gpus());
        if (!kept && !bar) return false;
        j.parallel.recompute = rc;
        j.training.micro_batch = mb_top;
        ++st.step_estimates;
        const step_breakdown& b = step_parts(j, g, topo, cx);
        const double mb_ratio = static_cast<double>(mb_low) / static_cast<double>(mb_top);
        // the exposed tp traffic: compute + exposed tp falls with the GEMM time per token (perf/step_time.hpp hides
        // at most the GEMM time), so its value at mb_top bounds every smaller micro-batch's from below
        const double work = static_cast<double>(b.micro_batches) * std::max(b.compute_mb + b.tp_exposed_mb + b.ep_mb, b.shard_mb) +
                            b.bubble_slots * b.compute_mb * mb_ratio + b.dp_exposed + b.param_gather + b.optimizer;
        if (!(work > 0)) return false;
        const double s = score_of(j, g, topo.gpus_per_node, work, j.tokens_per_step() / work, opt, cx);
        return (kept && s >= *kept) || (bar && s > *bar);
    }

    /// The objective's score of `j` on `g` at that step time and tokens/s: the default objective's from the fields
    /// it reads (selectable_objective::score_of), another's from the plan record make_plan would fill (`cx.probe`).
    double score_of(const job_spec& j, const gpu_type& g, int gpus_per_node, [[maybe_unused]] double step_s,
                    double tokens_per_s, const plan_options& opt, [[maybe_unused]] search_context& cx) const {
        if constexpr (std::same_as<O, selectable_objective>) {
            const auto n = j.parallel.gpus();  // as set_plan fills gpus and nodes
            const auto nodes = static_cast<int>((n + gpus_per_node - 1) / gpus_per_node);
            return O::score_of(tokens_per_s, static_cast<int>(n), nodes, gpus_per_node, g.name, opt);
        } else {
            detail::set_plan(cx.probe, j, g, gpus_per_node, step_s, tokens_per_s, opt);
            return obj_.score(cx.probe, opt);
        }
    }

    /// Tries the recompute levels and micro-batches of one layout (pruned as described at the top of the file):
    /// the memory model's floor (1.), then the speed bound (5.: a step estimate is cheaper than a memory estimate
    /// the layout may not need), then the most frugal point (4.), both memory checks shared across GPU types; then,
    /// per level, the micro-batches that fit with it and not with a cheaper level (3.), found by binary search
    /// (2.). (Bounding the speed at the largest micro-batch that fits with full recompute
    /// instead of the largest valid one was tried: tighter, but the extra memory estimates cost more than the
    /// step estimates it saves.) `mbs`: the layout's valid micro-batches, ascending; `levels`: the recompute levels
    /// the framework's rules accept at its dp, ascending (none < selective < full: memory falls, time grows); `key`:
    /// the memo's key of the layout but for the level and micro-batch (layout_key_of).
    void search_layout(job_spec& j, const gpu_type& g, const topology& topo, const plan_options& opt,
                       best_plans& best, search_context& cx, frontier& known, const std::vector<std::int64_t>& mbs,
                       const std::vector<recompute>& levels, const detail::layout_key& key) const {
        auto& st = cx.st;
        ++st.layouts;
        st.configurations += static_cast<std::int64_t>(mbs.size() * levels.size());
        if (mbs.empty() || levels.empty()) return;
        const recompute frugal = levels.back();
        j.parallel.recompute = frugal;
        j.training.micro_batch = mbs.front();
        const bool reuse = j.parallel.dp > 1;  // frontier entries come from dp >= 2 only
        if (!(reuse && known.floor_fits) && !cx.memory.may_fit(j, key, cx.usable)) return;
        known.floor_fits = known.floor_fits || reuse;
        auto fits_at = [&](recompute rc, std::int64_t k) {
            const auto mb = mbs[static_cast<std::size_t>(k)];
            if (reuse && mb <= known[rc]) return true;
            j.parallel.recompute = rc;
            j.training.micro_batch = mb;
            const bool ok = cx.memory.fits(j, key, cx.usable);
            if (ok && reuse) known[rc] = std::max(known[rc], mb);
            return ok;
        };
        const auto n = static_cast<std::int64_t>(mbs.size());
        if (beaten(j, g, topo, opt, levels.front(), mbs.front(), mbs.back(), best, cx)) return;
        if (!fits_at(frugal, 0)) return;  // the most frugal point: if it does not fit, nothing in this layout does
        std::int64_t covered = -1;  // micro-batch indices <= covered already fit with a cheaper recompute level
        for (auto rc : levels) {
            if (covered + 1 >= n) break;
            // a later level adds a configuration only where the next micro-batch fits with it: checked before its
            // speed bound (a memoised memory check, shared across GPU types, costs less than a step estimate)
            const bool later = rc != levels.front();
            if (later && !fits_at(rc, covered + 1)) continue;
            if (later && beaten(j, g, topo, opt, rc, mbs.front(), mbs.back(), best, cx))
                break;  // more recompute only adds work
            // what fits with less recompute fits with more; the frugal level fits at index 0, a later one at covered + 1
            const auto lo = detail::largest_fitting([&](std::int64_t k) { return fits_at(rc, k); },
                                                    std::max<std::int64_t>(later ? covered + 1 : covered, rc == frugal ? 0 : -1), n);
            if (lo >= 0 && reuse) known[rc] = std::max(known[rc], mbs[static_cast<std::size_t>(lo)]);
            for (std::int64_t k = covered + 1; k <= lo; ++k) {
                j.parallel.recompute = rc;
                j.training.micro_batch = mbs[static_cast<std::size_t>(k)];
                consider(j, g, topo, opt, best, cx);
            }
            covered = std::max(covered, lo);
        }
    }

    /// Caps a speed at the pool's measured MFU ceiling (search_context::capped_per_gpu): time, cost and rank then
    /// count what measured runs support, never more. Slower only, so the speed bound (beaten) stays a bound.
    static void capped_speed(const job_spec& j, double& step, double& tokens_per_s, const search_context& cx) {
        const double most = cx.capped_per_gpu * static_cast<double>(j.parallel.gpus());
        if (tokens_per_s > most) tokens_per_s = most, step = j.tokens_per_step() / most;
    }

    /// Keeps `j` as the best plan of its GPU count when it beats the one kept (ties: the faster). Scored from the
    /// step's parts where the model gives them alone (predict's step time and tokens/s, bit for bit); predict's
    /// extras are computed for the plans the search ends with only (add_plans), not for every best replaced later.
    void consider(const job_spec& j, const gpu_type& g, const topology& topo, const plan_options& opt,
                  best_plans& best, search_context& cx) const {
        ++cx.st.step_estimates;
        std::optional<step_estimate> speed;
        double step = 0, tokens_per_s = 0;
        if (has_step_parts(cx)) step = step_parts(j, g, topo, cx).total;
        if (step > 0 && std::isfinite(step)) {  // else predict says why not, or what a zero or endless step gives
            tokens_per_s = j.tokens_per_step() / step;
        } else {
            speed = predict(j, g, topo, cx);
            if (!speed->supported || !(speed->tokens_per_s > 0)) return;
            step = speed->step_time.value;
            tokens_per_s = speed->tokens_per_s;
        }
        capped_speed(j, step, tokens_per_s, cx);
        const double s = score_of(j, g, topo.gpus_per_node, step, tokens_per_s, opt, cx);
        const auto n = j.parallel.gpus();
        const double* kept = best.scores.find(n);
        if (!kept || s < *kept || (s == *kept && tokens_per_s > best.by_count.at(n).tokens_per_s))
            best.keep(n, candidate{j, std::move(speed), tokens_per_s, s});
    }

    M mem_{};
    T time_{};
    S space_{};
    O obj_{};
};

using planner = basic_planner<>;

/// Plans of `job` on each GPU type of `cluster`, best first by the objective (a scheduler's helper):
/// equivalent to planner{}.plan(job, cluster, options).
inline plan_result plans_by_type(const job_spec& job, const cluster_spec& cluster, const plan_options& opt = {}) {
    return planner{}.plan(job, cluster, opt);
}

}  // namespace frenzy
