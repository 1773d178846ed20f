#pragma once
// Resource prediction: for a job and a cluster, search GPU type x count x (dp, tp, pp, vpp, cp, ep, sharding,
// recompute, micro-batch), keep the configurations that fit in memory by the one fit rule (memory/fit.hpp) and
// respect the node shapes, predict their speed (perf/step_time.hpp) and rank them by an objective. Composed from
// four policies: memory model, step-time model, search space and objective; the fields a job pins
// (plan_constraints) are kept and the rest searched.
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
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/enum_names.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/units.hpp"
#include "frenzy/hw/cluster.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/breakdown.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/plan/policies.hpp"
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
    double margin = default_margin;        ///< fraction of GPU memory kept free (memory/fit.hpp)
    bool whole_node_billing = false;       ///< cost and GPU-hours objectives bill whole nodes (5 GPUs of 8 = 8)
    bool pin_precision = false;            ///< never offer another precision where a type lacks the job's
    std::int64_t max_gpus = 0;             ///< 0 = as many as the cluster has
    bool allow_tp_across_nodes = false;    ///< tensor parallelism normally stays inside a node (NVLink/PCIe)
    std::vector<framework> frameworks;     ///< empty = the job's runtime.framework
    std::int64_t max_pp = 0;               ///< 0 = up to model.layers
    std::int64_t max_vpp = 4;              ///< largest virtual pipeline size tried (Megatron interleaved)
    plan_constraints constraints;          ///< layout fields the job pins
    /// Turn on the communication overlap the plan's framework supports, as a tuned run would (Megatron-LM:
    /// --overlap-grad-reduce with data parallelism, --tp-comm-overlap with tp > 1 inside a node and sequence
    /// parallelism, which it requires: megatron/training/arguments.py). The predicted step time then reflects it
    /// (perf/step_time.hpp). False: the job's runtime flags as given. DDP, FSDP and DeepSpeed always overlap their
    /// gradient reduction (nothing to turn on).
    bool framework_overlap = true;
};

/// Where the GPUs of one type are: its catalog entry, node shape and how many nodes there are.
struct gpu_pool {
    gpu_type gpu;
    int gpus_per_node = 8;
    int nodes = 0;
    double network_gbps = 0;  ///< per node, GB/s
    std::int64_t gpus() const { return static_cast<std::int64_t>(gpus_per_node) * nodes; }
};

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
};

// ---- policies ------------------------------------------------------------------------------------------------

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



namespace detail {
/// Divisors of n in ascending order, up to `limit` when it is positive: O(sqrt n) (core/checked.hpp), so the work
/// does not follow the size of a number such as training.global_batch.
inline std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t limit = 0) { return divisors_of(n, limit); }
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
        for (auto t : detail::divisors(o.allow_tp_across_nodes ? std::max<std::int64_t>(tp_limit, 1) : pool.gpus_per_node, tp_limit))
            if (m.heads % t == 0 && m.kv() % t == 0 && m.ffn_hidden % t == 0 && (!m.is_moe() || m.expert_ffn() % t == 0))
                a.tp.push_back(t);
        if (c.tp) a.tp = {*c.tp};
        a.pp = detail::pinned_or(c.pp, detail::divisors(m.layers, std::min(o.max_pp > 0 ? o.max_pp : m.layers, avail)));
        a.dp = detail::pinned_or(c.dp, detail::divisors(j.training.global_batch, avail));
        a.micro_batch = detail::pinned_or(c.micro_batch, detail::divisors(j.training.global_batch));
        if (m.is_moe()) a.ep = detail::pinned_or(c.ep, detail::divisors(m.moe.experts));
        else if (c.ep) a.ep = {*c.ep};
        if (c.cp) a.cp = {*c.cp};
        a.vpp.clear();
        for (std::int64_t v = 1; v <= std::max<std::int64_t>(1, o.max_vpp); ++v) a.vpp.push_back(v);
        if (c.vpp) a.vpp = {*c.vpp};
        if (c.sharding) a.shardings = {*c.sharding};
        if (c.recompute) a.recomputes = {*c.recompute};
        a.sequence_parallel = c.sequence_parallel;
        return a;
    }
};
static_assert(SearchSpace<divisor_search_space>);

/// Default objective, chosen by plan_options::objective: time to finish, GPU-hours, or cost (billed GPU-hours x
/// price). With no token budget (total_tokens = 0) the same measures per token are used. Ties are broken by the
/// planner: the faster plan first.
struct selectable_objective {
    double score(const plan& p, const plan_options& o) const {
        const double per_token = p.tokens_per_s > 0 ? 1.0 / p.tokens_per_s : 1e300;
        const double billed = o.whole_node_billing ? static_cast<double>(p.nodes) * p.gpus_per_node : p.gpus;
        switch (o.objective) {
            case plan_objective::time: return per_token;
            case plan_objective::gpu_hours: return per_token * billed;
            case plan_objective::cost: {
                auto it = o.price_per_gpu_hour.find(p.gpu);
                const double price = it == o.price_per_gpu_hour.end() ? 0.0 : it->second;
                return per_token * billed * price;
            }
        }
        return per_token;
    }
};
static_assert(Objective<selectable_objective>);

/// The precision a GPU type offers in place of one it lacks, nearest first: pure or mixed bf16 -> fp16-mixed
/// (V100, T4, Turing cards have fp16 tensor cores but no bf16), fp8-mixed -> bf16-mixed -> fp16-mixed, fp4-mixed ->
/// fp8-mixed -> ... (fp4 tensor cores are Blackwell-only).
/// Empty when the type has the precision or nothing close.
inline std::optional<precision> fallback_precision(precision p, const gpu_type& g) {
    if (g.peak_flops(p) > 0) return std::nullopt;
    std::vector<precision> order;
    switch (p) {
        case precision::fp4_mixed: order = {precision::fp8_mixed, precision::bf16_mixed, precision::fp16_mixed}; break;
        case precision::fp8_mixed: order = {precision::bf16_mixed, precision::fp16_mixed}; break;
        case precision::bf16_mixed:
        case precision::bf16: order = {precision::fp16_mixed}; break;
        case precision::fp16_mixed: order = {precision::bf16_mixed}; break;
        case precision::fp32: break;
    }
    for (auto q : order)
        if (g.peak_flops(q) > 0) return q;
    return std::nullopt;
}

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
        if (opt.objective == plan_objective::cost)
            for (const auto& pool : gpu_pools(cluster))
                if (!opt.price_per_gpu_hour.contains(pool.gpu.name))
                    throw config_error("objective=cost needs a price for GPU type \"" + pool.gpu.name +
                                       "\" (price_per_gpu_hour has none; example_prices() has illustrative ones)");
        plan_result r;
        plan_stats local;
        search_context cx{stats ? *stats : local, {}, {}};
        const auto pools = gpu_pools(cluster);
        cx.max_usable = 0;
        for (const auto& pool : pools) cx.max_usable = std::max(cx.max_usable, usable_memory(pool.gpu, opt.margin).value);
        for (const auto& pool : pools) plan_pool(job, pool, opt, r, cx);
        rank(r, opt);
        return r;
    }

    /// Plans of one pool only (the helper a scheduler uses for "this job on that type").
    plan_result plan_on(const job_spec& job, const gpu_pool& pool, const plan_options& opt = {},
                        plan_stats* stats = nullptr) const {
        check_inputs(job, opt);
        plan_result r;
        plan_stats local;
        search_context cx{stats ? *stats : local, {}, {}};
        cx.max_usable = usable_memory(pool.gpu, opt.margin).value;
        plan_pool(job, pool, opt, r, cx);
        rank(r, opt);
        return r;
    }

private:
    struct candidate {
        job_spec job;
        step_estimate speed;
        double score = 0;
    };

    /// What one plan() call shares across GPU types. The memory model sees only the job (MemoryModel), and the
    /// jobs of one call differ only in the fields layout_job sets, the precision (a type's fallback) and the
    /// micro-batch, so each estimate is made once and its required bytes (memory/fit.hpp required_memory) reused
    /// for every type: the fit rule is then a comparison with that type's usable memory.
    using memo_key = std::array<std::int64_t, 19>;
    struct memo_hash {
        std::size_t operator()(const memo_key& k) const noexcept {  // FNV-1a over the fields
            std::uint64_t h = 1469598103934665603ull;
            for (auto v : k) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
            return static_cast<std::size_t>(h);
        }
    };
    /// The same fields packed into 5 words (21 bits per degree, 6 per enum, 1 per flag, the micro-batch whole), one to
    /// one wherever each field fits its width: every layout the planner builds. A job with a field outside its
    /// width goes to the full key instead, so the memo stays exact for any input.
    using packed_key = std::array<std::uint64_t, 5>;
    struct packed_hash {
        std::size_t operator()(const packed_key& k) const noexcept {
            std::uint64_t h = 0x9e3779b97f4a7c15ull;
            for (auto v : k) h = (h ^ v) * 0xff51afd7ed558ccdull;
            h ^= h >> 33;  // MurmurHash3's finaliser: the table below takes the low bits
            h *= 0xc4ceb9fe1a85ec53ull;
            return static_cast<std::size_t>(h ^ (h >> 33));
        }
    };
    static bool pack_key(const job_spec& j, packed_key& out) {
        const auto& p = j.parallel;
        auto u = [](auto v) { return static_cast<std::uint64_t>(v); };  // a negative value has its top bits set
        const std::uint64_t wide = u(p.dp) | u(p.tp) | u(p.pp) | u(p.vpp) | u(p.cp) | u(p.ep) | u(p.etp) |
                                   u(p.first_stage_layers) | u(p.last_stage_layers);
        const std::uint64_t narrow = u(p.sharding) | u(p.recompute) | u(p.schedule) | u(p.dispatcher) |
                                     u(j.runtime.framework) | u(j.training.precision);
        if ((wide >> 21) != 0 || (narrow >> 6) != 0) return false;
        out[0] = u(p.dp) | u(p.tp) << 21 | u(p.pp) << 42;
        out[1] = u(p.vpp) | u(p.cp) << 21 | u(p.ep) << 42;
        out[2] = u(p.etp) | u(p.first_stage_layers) << 21 | u(p.last_stage_layers) << 42;
        out[3] = u(p.sharding) | u(p.recompute) << 6 | u(p.schedule) << 12 | u(p.dispatcher) << 18 |
                 u(j.runtime.framework) << 24 | u(j.training.precision) << 30 | u(p.sequence_parallel) << 36 |
                 u(p.grouped_gemm) << 37 | u(p.embedding_stage) << 38 | u(p.loss_stage) << 39;
        out[4] = u(j.training.micro_batch);
        return true;
    }
    /// Bytes by job: the packed key where it applies, else the full one.
    /// Open addressing over packed keys (linear probing, at most half full): one allocation per growth, not one
    /// per entry.
    struct packed_table {
        struct slot {
            packed_key key{};
            double value = 0;
            bool used = false;
        };
        std::vector<slot> slots;
        std::size_t count = 0;
        std::pair<double*, bool> try_emplace(const packed_key& k, double init) {
            if (2 * (count + 1) > slots.size()) grow();
            const std::size_t mask = slots.size() - 1;
            for (std::size_t i = packed_hash{}(k) & mask;; i = (i + 1) & mask) {
                auto& s = slots[i];
                if (!s.used) {
                    s = {k, init, true};
                    ++count;
                    return {&s.value, true};
                }
                if (s.key == k) return {&s.value, false};
            }
        }
        void grow() {
            std::vector<slot> old(std::max<std::size_t>(1024, 2 * slots.size()));
            old.swap(slots);
            const std::size_t mask = slots.size() - 1;
            for (const auto& o : old) {
                if (!o.used) continue;
                std::size_t i = packed_hash{}(o.key) & mask;
                while (slots[i].used) i = (i + 1) & mask;
                slots[i] = o;
            }
        }
    };
    struct memo {
        packed_table packed;
        std::unordered_map<memo_key, double, memo_hash> full;
        /// The entry of `j` and whether it is new (then set to `init`); valid until the next new entry.
        std::pair<double*, bool> try_emplace(const job_spec& j, double init) {
            packed_key k;
            if (pack_key(j, k)) return packed.try_emplace(k, init);
            auto [it, fresh] = full.try_emplace(key_of(j), init);
            return {&it->second, fresh};
        }
    };
    /// The fields the pipeline stages of a job's layout depend on (train/geometry.hpp for_each_stage_layout, with
    /// the framework's vocabulary padding), within one plan() call, where the model and sequence length are fixed:
    /// what keys the stage walks shared across dp, sharding, recompute, micro-batches, precisions and GPU types.
    using stage_key = std::array<std::int64_t, 9>;
    static stage_key stage_key_of(const job_spec& j) {
        const auto& p = j.parallel;
        return {static_cast<std::int64_t>(j.runtime.framework), p.tp, p.etp, p.ep, p.pp, p.vpp, p.first_stage_layers,
                p.last_stage_layers, static_cast<std::int64_t>(p.embedding_stage) * 2 + static_cast<std::int64_t>(p.loss_stage)};
    }
    static constexpr bool takes_stages = requires(const M& m, const job_spec& j) {
        { m.estimate(j, m.stages_of(j), false, 0.0) } -> std::same_as<memory_report>;
        { m.lower_bound(j, m.stages_of(j)) } -> std::same_as<bytes>;
    };
    template <class P> struct stage_cache {
        std::optional<stage_key> key{};  ///< whose stages `stages` holds
        P stages{};
    };
    struct no_stages {};
    template <class MM> static auto stages_probe(int) -> decltype(std::declval<const MM&>().stages_of(std::declval<const job_spec&>()));
    template <class MM> static no_stages stages_probe(...);
    using stages_type = decltype(stages_probe<M>(0));
    struct search_context {
        plan_stats& st;
        memo required;  ///< bytes the fit rule requires; < 0: the model rejects the layout
        memo floor;     ///< the memory model's lower bound; < 0: it rejects the layout
        /// The valid micro-batches of the current pool (valid_micro_batches) by dp, pp and whether the schedule is
        /// interleaved: what they depend on, filled when first needed.
        std::vector<std::vector<std::int64_t>> micro_batches{};
        std::vector<char> micro_batches_ready{};
        std::optional<stage_load> stage{};  ///< the current layout's bottleneck stage (default time model)
        std::map<stage_key, stage_load> bottleneck{};  ///< bottleneck stage by layout, across GPU types
        stage_cache<stages_type> stages{};          ///< the current layout's stages (memory models that take them)
        double max_usable = std::numeric_limits<double>::infinity();  ///< most usable bytes of a GPU of the call
    };
    /// The memory model's estimate and floor; the default model takes the layout's stages, prepared once per
    /// layout (memory/estimator.hpp stages_of), a host's model is called as the MemoryModel concept says.
    const stages_type& stages_for(const job_spec& j, search_context& cx) const {
        const auto k = stage_key_of(j);
        if (cx.stages.key != k) {
            cx.stages.key.reset();
            cx.stages.stages = mem_.stages_of(j);
            cx.stages.key = k;
        }
        return cx.stages.stages;
    }
    double required_of(const job_spec& j, search_context& cx) const {
        // the walk stops once the job fits no GPU of the call: the memo answers for all of them (fits())
        if constexpr (takes_stages) return required_memory(mem_.estimate(j, stages_for(j, cx), false, cx.max_usable)).value;
        else return required_memory(mem_.estimate(j)).value;
    }
    bytes floor_of(const job_spec& j, search_context& cx) const {
        if constexpr (takes_stages) return mem_.lower_bound(j, stages_for(j, cx));
        else return mem_.lower_bound(j);
    }
    /// The step-time model's prediction; the default model takes the layout's bottleneck stage computed once per
    /// layout (perf/step_time.hpp), a host's model is called as the StepTimeModel concept says.
    step_estimate predict(const job_spec& j, const gpu_type& g, const topology& topo, const search_context& cx) const {
        if constexpr (requires { time_.predict(j, g, topo, *cx.stage); })
            if (cx.stage) return time_.predict(j, g, topo, *cx.stage);
        return time_.predict(j, g, topo);
    }
    static memo_key key_of(const job_spec& j) {
        const auto& p = j.parallel;
        auto e = [](auto v) { return static_cast<std::int64_t>(v); };
        return {p.dp, p.tp, p.pp, p.vpp, p.cp, p.ep, p.etp, e(p.sequence_parallel), e(p.sharding), e(p.recompute),
                e(p.schedule), e(p.dispatcher), e(p.grouped_gemm), p.first_stage_layers, p.last_stage_layers,
                e(p.embedding_stage) * 2 + e(p.loss_stage), e(j.runtime.framework), e(j.training.precision),
                j.training.micro_batch};
    }

    static void check_inputs(const job_spec& job, const plan_options& opt) {
        validate_bounds(job);
        validate(job.model);
        validate(job.training);
        validate_margin(opt.margin, "plan.margin");
    }

    void rank(plan_result& r, const plan_options& opt) const {
        std::stable_sort(r.plans.begin(), r.plans.end(), [&](const frenzy::plan& a, const frenzy::plan& b) {
            const double sa = obj_.score(a, opt), sb = obj_.score(b, opt);
            if (sa != sb) return sa < sb;
            if (a.tokens_per_s != b.tokens_per_s) return a.tokens_per_s > b.tokens_per_s;
            if (a.gpus != b.gpus) return a.gpus < b.gpus;
            return a.gpu < b.gpu;
        });
    }

    /// The fit rule (memory/fit.hpp), with the estimate when asked for. A layout the memory model rejects does
    /// not fit.
    bool fits(const job_spec& j, const gpu_type& g, const plan_options& opt, search_context& cx) const {
        auto [v, fresh] = cx.required.try_emplace(j, -1.0);
        if (fresh) {
            ++cx.st.memory_estimates;
            try {
                *v = required_of(j, cx);
            } catch (const config_error&) {
                *v = -1.0;
            }
        }
        return *v >= 0 && *v <= usable_memory(g, opt.margin).value;
    }
    bool fits(const job_spec& j, const gpu_type& g, const plan_options& opt, plan_stats& st,
              memory_report* out) const {
        ++st.memory_estimates;
        try {
            auto r = mem_.estimate(j);
            const bool ok = check_fit(r, g, opt.margin).fits;
            if (out) *out = std::move(r);
            return ok;
        } catch (const config_error&) {
            return false;
        }
    }

    /// False when the memory model's own floor already exceeds the capacity (a model without a floor: true).
    bool may_fit(const job_spec& j, const gpu_type& g, const plan_options& opt, search_context& cx) const {
        if constexpr (BoundedMemoryModel<M>) {
            auto [v, fresh] = cx.floor.try_emplace(j, -1.0);
            if (fresh) {
                try {
                    *v = floor_of(j, cx).value;
                } catch (const config_error&) {
                    *v = -1.0;
                }
            }
            return *v >= 0 && *v <= usable_memory(g, opt.margin).value;
        } else {
            return true;
        }
    }
    /// The job as planned on `g`: its own precision, or the nearest one the type has (a marked alternative), or
    /// nothing with the reason.
    static std::optional<job_spec> job_for_type(const job_spec& job, const gpu_type& g, const plan_options& opt,
                                                std::string& why) {
        const precision want = job.training.precision;
        if (g.peak_flops(want) > 0) return job;
        const std::string prec(to_string(want));
        why = prec + " is not supported on " + g.name + " (no " + prec.substr(0, prec.find('-')) + " tensor cores)";
        const auto alt = fallback_precision(want, g);
        if (!alt) return std::nullopt;
        if (opt.pin_precision) {
            why += "; the job pins its precision (without the pin, " + std::string(to_string(*alt)) + " is offered)";
            return std::nullopt;
        }
        job_spec j = job;
        j.training.precision = *alt;
        return j;
    }

    /// Whether a layout is searched at all, on the fields other than dp: node shape, the virtual-pipeline split
    /// and the framework's rules (train/job.hpp framework_rejects, which reads no dp). The planner's dp rules
    /// (ep divides dp x cp, sharding needs dp > 1) are checked per dp in plan_pool.
    static bool shape_allowed(const job_spec& j, const gpu_pool& pool, const plan_options& opt) {
        const auto& p = j.parallel;
        if (!opt.allow_tp_across_nodes && pool.gpus_per_node % p.tp != 0) return false;
        if (opt.allow_tp_across_nodes && p.tp > pool.gpus_per_node && p.tp % pool.gpus_per_node != 0) return false;
        if (p.pp > 1 ? (j.model.layers / p.pp) % p.vpp != 0 : p.vpp != 1) return false;
        return framework_rejects(j.runtime.framework, p, j.training.optimizer).empty();
    }

    /// The layout a point of the axes describes.
    static job_spec layout_job(const job_spec& job0, const search_axes& ax, framework fw, std::int64_t tp,
                               std::int64_t pp, std::int64_t vpp, std::int64_t cp, sharding sh, std::int64_t ep,
                               std::int64_t dp, const plan_options& opt) {
        job_spec j = job0;
        set_layout(j, job0.runtime, ax, fw, tp, pp, vpp, cp, sh, ep, dp, opt);
        return j;
    }
    /// The same, in place (no copy of the job's strings per layout).
    static void set_layout(job_spec& j, const runtime_spec& base, const search_axes& ax, framework fw, std::int64_t tp,
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
    /// The overlap flags of a plan (plan_options::framework_overlap): the job's own, plus what its framework
    /// supports for the layout. Megatron's gradient-reduce overlap matters only with dp x cp > 1 (the step-time
    /// model ignores it otherwise); --tp-comm-overlap needs sequence parallelism and Transformer Engine's
    /// userbuffers inside one node (megatron/core/model_parallel_config.py tp_comm_overlap).
    static void set_overlap(job_spec& j, const runtime_spec& base, const plan_options& opt) {
        const auto& p = j.parallel;
        j.runtime.overlap_grad_reduce = base.overlap_grad_reduce;
        j.runtime.tp_comm_overlap = base.tp_comm_overlap;
        if (!opt.framework_overlap || j.runtime.framework != framework::megatron) return;
        j.runtime.overlap_grad_reduce = true;
        if (p.tp > 1 && p.sequence_parallel && !opt.allow_tp_across_nodes) j.runtime.tp_comm_overlap = true;
    }

    void plan_pool(const job_spec& job, const gpu_pool& pool, const plan_options& opt, plan_result& r,
                   search_context& cx) const {
        const auto& g = pool.gpu;
        std::string why;
        const auto job0 = job_for_type(job, g, opt, why);
        if (!job0) {
            r.infeasible.push_back({g.name, why});
            return;
        }
        const std::int64_t avail = opt.max_gpus > 0 ? std::min(opt.max_gpus, pool.gpus()) : pool.gpus();
        auto ax = space_.axes(*job0, pool, opt);
        for (auto* v : {&ax.tp, &ax.pp, &ax.dp, &ax.micro_batch, &ax.ep, &ax.cp, &ax.vpp})
            std::sort(v->begin(), v->end());  // pruning needs ascending axes
        std::sort(ax.recomputes.begin(), ax.recomputes.end());
        const topology topo{pool.gpus_per_node, pool.network_gbps};
        std::map<std::int64_t, candidate> best;  // by GPU count
        const auto flops = forward_flops_per_token(job0->model, job0->training.seq_len);
        job_spec j = *job0;  // one job for the whole search: only the layout fields, micro-batch and recompute change
        cx.micro_batches.assign(ax.dp.size() * ax.pp.size() * 2, {});
        cx.micro_batches_ready.assign(cx.micro_batches.size(), 0);
        for (auto fw : ax.frameworks)
            for (auto tp : ax.tp)
                for (std::size_t pi = 0; pi < ax.pp.size(); ++pi)
                    for (auto vpp : ax.vpp)
                        for (auto cp : ax.cp)
                            for (auto sh : ax.shardings)
                                for (auto ep : ax.ep) {
                                    const auto pp = ax.pp[pi];
                                    if (tp * pp * cp > avail) break;
                                    set_layout(j, job0->runtime, ax, fw, tp, pp, vpp, cp, sh, ep, ax.dp.front(), opt);
                                    if (!shape_allowed(j, pool, opt)) continue;
                                    if constexpr (requires { time_.predict(j, g, topo, stage_load{}); }) {
                                        // independent of dp, sharding, the precision and the GPU: once per layout
                                        auto [it, fresh] = cx.bottleneck.try_emplace(stage_key_of(j));
                                        if (fresh) it->second = bottleneck_stage(j, flops);
                                        cx.stage = it->second;
                                    }
                                    frontier known;  // largest micro-batch known to fit per recompute level at a smaller dp
                                    for (std::size_t di = 0; di < ax.dp.size(); ++di) {
                                        const auto dp = ax.dp[di];
                                        if (dp * tp * pp * cp > avail) break;
                                        if ((dp * cp) % ep != 0 || (dp == 1 && sh != sharding::none)) continue;
                                        j.parallel.dp = dp;
                                        const auto slot = (di * ax.pp.size() + pi) * 2 +
                                                          (j.parallel.schedule == pipeline_schedule::interleaved ? 1 : 0);
                                        if (!cx.micro_batches_ready[slot]) {
                                            valid_micro_batches(j, ax, cx.micro_batches[slot]);
                                            cx.micro_batches_ready[slot] = 1;
                                        }
                                        search_layout(j, g, topo, ax, opt, best, cx, known, cx.micro_batches[slot]);
                                    }
                                }
        cx.stage.reset();
        if (best.empty()) {
            r.infeasible.push_back({g.name, infeasible_reason(*job0, pool, avail, ax, opt, cx)});
            return;
        }
        for (auto& [n, c] : best) {
            memory_report rep;
            fits(c.job, g, opt, cx.st, &rep);
            frenzy::plan pl = make_plan(c.job, g, pool.gpus_per_node, c.speed.step_time.value, c.speed.tokens_per_s, opt);
            const auto fit = check_fit(rep, g, opt.margin);
            pl.precision_alternative = pl.precision != job.training.precision;
            pl.peak_allocated = rep.peak_allocated;
            pl.peak_reserved = rep.peak_reserved;
            pl.required = fit.required;
            pl.capacity = fit.capacity;
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
        pl.gpus_per_node = gpus_per_node;
        pl.nodes = static_cast<int>((n + gpus_per_node - 1) / gpus_per_node);
        pl.parallel = j.parallel;
        pl.framework = j.runtime.framework;
        pl.overlap_grad_reduce = j.runtime.overlap_grad_reduce;
        pl.tp_comm_overlap = j.runtime.tp_comm_overlap;
        pl.precision = j.training.precision;
        pl.micro_batch = j.training.micro_batch;
        pl.step_time = seconds{step_s};
        pl.tokens_per_s = tokens_per_s;
        const double tokens = j.training.total_tokens;
        pl.has_budget = tokens > 0;
        pl.est_time = seconds{tokens > 0 && tokens_per_s > 0 ? tokens / tokens_per_s : 0.0};
        pl.gpu_hours = pl.est_time.value * static_cast<double>(n) / 3600.0;
        const double billed_gpus = opt.whole_node_billing ? static_cast<double>(pl.nodes) * gpus_per_node : static_cast<double>(n);
        pl.billed_gpu_hours = pl.est_time.value * billed_gpus / 3600.0;
        if (auto price = opt.price_per_gpu_hour.find(g.name); price != opt.price_per_gpu_hour.end())
            pl.cost = pl.billed_gpu_hours * price->second;
        return pl;
    }

    /// Per recompute level, the largest micro-batch that fitted at a smaller dp (>= 2) of the same layout: per-GPU
    /// memory does not grow with dp from 2 on (sharded states shrink, fewer micro-batches are in flight), so every
    /// micro-batch up to it fits at a larger dp too.
    struct frontier {
        std::array<std::int64_t, 3> fits_mb{};  ///< by recompute level (none, selective, full); 0 = none known
        std::int64_t& operator[](recompute r) { return fits_mb[static_cast<std::size_t>(r)]; }
    };

    /// The micro-batches of `ax` that divide the layout's share of the global batch (and, interleaved, give a
    /// multiple of pp micro-batches), ascending, into `out`.
    static void valid_micro_batches(const job_spec& j, const search_axes& ax, std::vector<std::int64_t>& out) {
        const auto& p = j.parallel;
        out.clear();
        for (auto mb : ax.micro_batch) {
            if (j.training.global_batch % (mb * p.dp) != 0) continue;
            const auto m = j.training.global_batch / (mb * p.dp);
            if (p.schedule == pipeline_schedule::interleaved && m % p.pp != 0) continue;
            out.push_back(mb);
        }
    }

    /// 5. The speed bound: true when no micro-batch up to `mb_top` of this layout at recompute level `rc` can beat
    /// the best plan found so far for its GPU count. Optimistic: every micro-batch's work at `mb_top`'s efficiency
    /// (best GEMM shape, fewest slots, least exposed gradient sync), exposed tp/ep traffic counted but not pp's,
    /// and the bubble at the smallest micro-batch `mb_low` at that per-token compute rate.
    bool beaten(job_spec& j, const gpu_type& g, const topology& topo, const plan_options& opt, recompute rc,
                std::int64_t mb_low, std::int64_t mb_top, const std::map<std::int64_t, candidate>& best,
                search_context& cx) const {
        auto& st = cx.st;
        auto it = best.find(j.parallel.gpus());
        if (it == best.end()) return false;
        j.parallel.recompute = rc;
        j.training.micro_batch = mb_top;
        ++st.step_estimates;
        step_breakdown b;
        if constexpr (requires { time_.step_parts(j, g, topo, *cx.stage); }) {
            if (cx.stage) b = time_.step_parts(j, g, topo, *cx.stage);  // predict's parts, without its extras
            else b = predict(j, g, topo, cx).parts;
        } else {
            b = predict(j, g, topo, cx).parts;
        }
        const double mb_ratio = static_cast<double>(mb_low) / static_cast<double>(mb_top);
        const double work = static_cast<double>(b.micro_batches) * std::max(b.compute_mb + b.tp_mb + b.ep_mb, b.shard_mb) +
                            b.bubble_slots * b.compute_mb * mb_ratio + b.dp_exposed + b.param_gather + b.optimizer;
        if (!(work > 0)) return false;
        const auto probe = make_plan(j, g, topo.gpus_per_node, work, j.tokens_per_step() / work, opt);
        return obj_.score(probe, opt) >= it->second.score;
    }

    /// Largest k in (lo, hi) with fits(k), given fits(lo) (or lo = -1) and !fits(hi): the micro-batches that fit
    /// are a prefix (2.), so a binary search.
    template <class Fits>
    static std::int64_t largest_fitting(Fits&& fits, std::int64_t lo, std::int64_t hi) {
        while (hi - lo > 1) {
            const auto mid = (lo + hi) / 2;
            if (fits(mid)) lo = mid; else hi = mid;
        }
        return lo;
    }

    /// Tries the recompute levels and micro-batches of one layout (pruned as described at the top of the file):
    /// the memory model's floor (1.), then the speed bound (5.: a step estimate is cheaper than a memory estimate
    /// the layout may not need), then the most frugal point (4.), both memory checks shared across GPU types; then,
    /// per level, the micro-batches that fit with it and not with a cheaper level (3.), found by binary search
    /// (2.). (Bounding the speed at the largest micro-batch that fits with full recompute
    /// instead of the largest valid one was tried: tighter, but the extra memory estimates cost more than the
    /// step estimates it saves.)
    void search_layout(job_spec& j, const gpu_type& g, const topology& topo, const search_axes& ax,
                       const plan_options& opt, std::map<std::int64_t, candidate>& best, search_context& cx,
                       frontier& known, const std::vector<std::int64_t>& mbs) const {
        auto& st = cx.st;
        ++st.layouts;
        const auto& levels = ax.recomputes;  // ascending: none < selective < full, memory falls and time grows
        st.configurations += static_cast<std::int64_t>(mbs.size() * levels.size());
        if (mbs.empty() || levels.empty()) return;
        const recompute frugal = levels.back();
        j.parallel.recompute = frugal;
        j.training.micro_batch = mbs.front();
        if (!may_fit(j, g, opt, cx)) return;
        const bool reuse = j.parallel.dp > 1;  // frontier entries come from dp >= 2 only
        auto fits_at = [&](recompute rc, std::int64_t k) {
            const auto mb = mbs[static_cast<std::size_t>(k)];
            if (reuse && mb <= known[rc]) return true;
            j.parallel.recompute = rc;
            j.training.micro_batch = mb;
            const bool ok = fits(j, g, opt, cx);
            if (ok && reuse) known[rc] = std::max(known[rc], mb);
            return ok;
        };
        const auto n = static_cast<std::int64_t>(mbs.size());
        if (beaten(j, g, topo, opt, levels.front(), mbs.front(), mbs.back(), best, cx)) return;
        if (!fits_at(frugal, 0)) return;  // the most frugal point: if it does not fit, nothing in this layout does
        std::int64_t covered = -1;  // micro-batch indices <= covered already fit with a cheaper recompute level
        for (auto rc : levels) {
            if (covered + 1 >= n) break;
            if (rc != levels.front() && beaten(j, g, topo, opt, rc, mbs.front(), mbs.back(), best, cx))
                break;  // more recompute only adds work
            // what fits with less recompute fits with more; the frugal level fits at index 0
            const auto lo = largest_fitting([&](std::int64_t k) { return fits_at(rc, k); },
                                            std::max<std::int64_t>(covered, rc == frugal ? 0 : -1), n);
            if (lo >= 0 && reuse) known[rc] = std::max(known[rc], mbs[static_cast<std::size_t>(lo)]);
            for (std::int64_t k = covered + 1; k <= lo; ++k) {
                j.parallel.recompute = rc;
                j.training.micro_batch = mbs[static_cast<std::size_t>(k)];
                consider(j, g, topo, opt, best, cx);
            }
            covered = std::max(covered, lo);
        }
    }

    void consider(const job_spec& j, const gpu_type& g, const topology& topo, const plan_options& opt,
                  std::map<std::int64_t, candidate>& best, search_context& cx) const {
        ++cx.st.step_estimates;
        auto speed = predict(j, g, topo, cx);
        if (!speed.supported || !(speed.tokens_per_s > 0)) return;
        const auto probe = make_plan(j, g, topo.gpus_per_node, speed.step_time.value, speed.tokens_per_s, opt);
        const double s = obj_.score(probe, opt);
        auto it = best.find(j.parallel.gpus());
        if (it == best.end() || s < it->second.score ||
            (s == it->second.score && speed.tokens_per_s > it->second.speed.tokens_per_s))
            best[j.parallel.gpus()] = candidate{j, std::move(speed), s};
    }

    /// The most frugal sharding framework `fw` offers for a layout (what the infeasibility search tries).
    static sharding frugal_sharding(framework fw, std::int64_t dp, std::int64_t pp) {
        if (dp == 1) return sharding::none;
        for (auto sh : {sharding::full, sharding::gradients, sharding::optimizer}) {
            parallel_config p;
            p.dp = dp;
            p.pp = pp;
            p.sharding = sh;
            if (framework_rejects(fw, p).empty()) return sh;
        }
        return sharding::none;
    }

    /// Why nothing fits: the smallest GPU count that would fit with the most frugal settings (keeping what the job
    /// pins), if any, up to 2^16 GPUs.
    std::string infeasible_reason(const job_spec& job0, const gpu_pool& pool, std::int64_t avail, const search_axes& ax,
                                  const plan_options& opt, search_context& cx) const {
        const auto& g = pool.gpu;
        const auto& c = opt.constraints;
        const std::string gib = std::to_string(static_cast<long long>(std::llround(g.memory().value / GiB)));
        const std::string have = std::to_string(pool.nodes) + (pool.nodes == 1 ? " node of " : " nodes of ") +
                                 std::to_string(pool.gpus_per_node) + " available";
        bool can_full = false;
        for (auto fw : ax.frameworks) can_full = can_full || frugal_sharding(fw, 2, 1) == sharding::full;
        const std::string how = std::string(can_full ? "full sharding and recompute" : "tensor+pipeline parallelism, sharded optimizer and full recompute") +
                                (c == plan_constraints{} ? "" : " (keeping the layout fields the job pins)");
        std::int64_t need = 0;
        std::string layout;
        const std::int64_t limit = 1 << 16;
        for (auto fw : ax.frameworks)
            for (auto tp : ax.tp)
                for (auto pp : detail::pinned_or(c.pp, detail::divisors(job0.model.layers)))
                    for (auto dp : detail::pinned_or(c.dp, detail::divisors(job0.training.global_batch))) {
                        const auto n = dp * tp * pp * ax.cp.back();
                        if (n > limit || (need > 0 && n >= need)) continue;
                        std::int64_t ep = 1;
                        for (auto e : ax.ep)
                            if ((dp * ax.cp.back()) % e == 0) ep = std::max(ep, e);
                        job_spec j = layout_job(job0, ax, fw, tp, pp, ax.vpp.front(), ax.cp.back(),
                                                c.sharding.value_or(frugal_sharding(fw, dp, pp)), ep, dp, opt);
                        j.training.micro_batch = c.micro_batch.value_or(1);
                        j.parallel.recompute = c.recompute.value_or(recompute::full);
                        if (!framework_rejects(fw, j.parallel, j.training.optimizer).empty() || !may_fit(j, g, opt, cx)) continue;
                        if (fits(j, g, opt, cx)) {
                            need = n;
                            layout = "dp=" + std::to_string(dp) + " tp=" + std::to_string(tp) + " pp=" + std::to_string(pp) +
                                     (j.parallel.ep > 1 ? " ep=" + std::to_string(j.parallel.ep) : "") +
                                     (ax.frameworks.size() > 1 ? " " + std::string(to_string(fw)) : "");
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
