#pragma once
// The search for heterogeneous pipeline plans (plan/mixed.hpp evaluates one): the layouts of each ordered pair of GPU
// types with their speed bound (mixed_search), the split of the layers between two stage groups for each
// (plan/mixed_split.hpp best_split), and the entry the planner calls with plan_options::mixed (plan_mixed). See
// plan/mixed.hpp for the model.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/perf/flops.hpp"
#include "frenzy/perf/stage_load.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/plan/feasibility.hpp"
#include "frenzy/plan/layer_rates.hpp"
#include "frenzy/plan/mixed.hpp"
#include "frenzy/plan/mixed_split.hpp"
#include "frenzy/plan/objective.hpp"
#include "frenzy/plan/options.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/plan/policies.hpp"
#include "frenzy/plan/search_space.hpp"
#include "frenzy/train/attention.hpp"
#include "frenzy/train/fp8_recipe.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

namespace detail {

/// The precision every type of a pair runs the job in: the job's own, else the nearest one both have
/// (fallback_precision: fp16-mixed for bf16 where a V100 or T4 takes part); none when the job pins its precision.
inline std::optional<precision> shared_precision(precision want, const gpu_type& a, const gpu_type& b, bool pin) {
    if (a.peak_flops(want) > 0 && b.peak_flops(want) > 0) return want;
    if (pin) return std::nullopt;
    for (const auto* g : {&a, &b})
        if (auto alt = fallback_precision(want, *g); alt && a.peak_flops(*alt) > 0 && b.peak_flops(*alt) > 0) return alt;
    return std::nullopt;
}

/// Stage counts of one group on `pool` into `out`: s stages of `stage_gpus` GPUs on whole nodes (or a part of one
/// node), within `avail` GPUs, at most `most`.
inline void group_stage_counts(const gpu_pool& pool, std::int64_t stage_gpus, std::int64_t avail, std::int64_t most,
                               std::vector<std::int64_t>& out) {
    out.clear();
    const std::int64_t gpn = pool.gpus_per_node;
    for (std::int64_t s = 1; s <= most && s * stage_gpus <= avail; ++s) {
        const auto n = s * stage_gpus;
        if (n % gpn == 0 || (n < gpn && gpn % n == 0)) out.push_back(s);
    }
}

}  // namespace detail

namespace detail {

/// The best score (selectable_objective, lower is better) of the single-type plans on each GPU type: what a mixed
/// plan of two types must beat.
struct single_type_bar {
    std::map<std::string, double> by_type;
    single_type_bar(const std::vector<plan>& plans, const plan_options& opt) {
        for (const auto& p : plans) {
            const double s = selectable_objective{}.score(p, opt);
            auto [it, fresh] = by_type.try_emplace(p.gpu, s);
            if (!fresh) it->second = std::min(it->second, s);
        }
    }
    /// The better of the two types' best scores (1e308 for a type without a plan).
    double of(const std::string& a, const std::string& b) const {
        auto score = [&](const std::string& t) {
            auto it = by_type.find(t);
            return it == by_type.end() ? 1e308 : it->second;
        };
        return std::min(score(a), score(b));
    }
};

}  // namespace detail

namespace detail {

/// The layers on the first group of a two-group split, from `lo` to `hi`.
struct split_window {
    std::int64_t lo = 0, hi = 0;
};

/// One layer of one sequence on each type of a pair and the sends of one sequence between them, at micro-batch mb.
struct micro_batch_rate {
    std::int64_t mb = 1;
    std::array<double, 2> layer{};
    double send = 0;
    /// the second type's compute alone of one layer and of the output layer and loss, one sequence (bare_seconds)
    std::array<double, 2> bare{};
};

/// One plan_mixed call: the job, the options, the models, the bar each pair must beat and the best plan per pair of
/// types found so far.
template <MemoryModel M, StagedStepTimeModel T>
class mixed_search {
public:
    mixed_search(const job_spec& job, framework fw, const plan_options& opt, const M& mem, const T& time,
                 const plan_result& r)
        : job_(job), fw_(fw), opt_(opt), mem_(mem), time_(time), bar_(r.plans, opt),
          most_stages_(std::min<std::int64_t>(job.model.layers, opt.max_pp > 0 ? opt.max_pp : opt.max_mixed_stages)),
          flops_(forward_flops_per_token(job.model, job.training.seq_len)), inputs_checked_(inputs_valid(job)) {}

    std::int64_t most_stages() const { return most_stages_; }

    /// Every layout with the embedding on `a` and the loss on `b`.
    void pair(const gpu_pool& a, const gpu_pool& b) {
        const auto prec = shared_precision(job_.training.precision, a.gpu, b.gpu, opt_.pin_precision);
        if (!prec) return;
        job_spec j0 = job_;
        j0.training.precision = *prec;
        if (*prec != precision::fp8_mixed) j0.runtime.fp8_recipe.reset();  // a recipe of fp8 casts only
        j0.runtime.framework = fw_;
        if (!fp8_recipe_rejected(j0, a.gpu).empty() || !fp8_recipe_rejected(j0, b.gpu).empty()) return;
        if (!attention_rejected(j0, a.gpu).empty() || !attention_rejected(j0, b.gpu).empty()) return;
        auto [at, fresh] = axes_.try_emplace(&a);  // they read the job's model, batch and framework, not its precision
        if (fresh) at->second = divisor_search_space{}.axes(j0, a, opt_);
        const auto& ax = at->second;
        const auto best = best_.find(key_of(a, b));
        beat_ = std::min(bar_.of(a.gpu.name, b.gpu.name), best != best_.end() ? best->second.first : 1e308);
        probe_.groups.assign(2, stage_group{});
        for (std::size_t k = 0; k < 2; ++k) {
            probe_.groups[k].gpu = (k == 0 ? a : b).gpu.name;
            probe_.groups[k].gpus_per_node = (k == 0 ? a : b).gpus_per_node;
        }
        for (auto tp : ax.tp) {
            if (a.gpus_per_node % tp != 0 || b.gpus_per_node % tp != 0) continue;
            const auto rate = sequence_layer_seconds(j0, ax, a, b, tp);
            rates_ = {&j0, &ax, &a, &b, tp, {}};  // the bound's rates, taken when the first layout needs them
            for (auto dpi = ax.dp.rbegin(); dpi != ax.dp.rend(); ++dpi) {  // most GPUs first: the bound then
                const auto dp = *dpi;                                          // prunes the rest sooner
                if (hopeless(tp, dp, rate)) continue;
                auto& [counts_a, counts_b] = counts_;
                group_stage_counts(a, tp * dp, avail(a), most_stages_ - 1, counts_a);
                group_stage_counts(b, tp * dp, avail(b), most_stages_ - 1, counts_b);
                for (auto sa = counts_a.rbegin(); sa != counts_a.rend(); ++sa)
                    for (auto sb = counts_b.rbegin(); sb != counts_b.rend(); ++sb)
                        if (*sa + *sb <= most_stages_ &&  // more: the speed bound refuses the layout at once
                            saturated(tp * dp, *sa == counts_a.back(), *sb == counts_b.back(), *sa + *sb))
                            if (const auto w = admitted(tp, dp, *sa, *sb, rate))
                                layout(j0, ax, a, b, tp, dp, *sa, *sb, *w);
            }
        }
    }

    /// The plans kept, best first.
    std::vector<plan> plans() {
        std::vector<plan> out;
        for (auto& [k, v] : best_) out.push_back(std::move(v.second));
        std::stable_sort(out.begin(), out.end(), [&](const plan& x, const plan& y) {
            const double sx = mixed_score(x, opt_) * (1.0 + band_weight * x.rel_error_band);
            const double sy = mixed_score(y, opt_) * (1.0 + band_weight * y.rel_error_band);
            if (sx != sy) return sx < sy;
            return x.gpus < y.gpus;
        });
        return out;
    }

private:
    using pair_key = std::pair<std::string, std::string>;
    static pair_key key_of(const gpu_pool& a, const gpu_pool& b) {
        return a.gpu.name < b.gpu.name ? pair_key{a.gpu.name, b.gpu.name} : pair_key{b.gpu.name, a.gpu.name};
    }
    std::int64_t avail(const gpu_pool& p) const { return opt_.max_gpus > 0 ? std::min(opt_.max_gpus, p.gpus()) : p.gpus(); }

    /// Seconds of one layer of one sequence on each type at tp, at the largest micro-batch without recompute; zeros
    /// where the step-time model offers no step_parts (then nothing is skipped by the bound).
    std::array<double, 2> sequence_layer_seconds(const job_spec& j0, const search_axes& ax, const gpu_pool& a,
                                                 const gpu_pool& b, std::int64_t tp) {
        std::array<double, 2> out{0, 0};
        job_spec jt = j0;
        set_layout(jt, job_.runtime, ax, fw_, tp, 2, 1, 1, sharding::none, 1, 1, opt_);
        jt.training.micro_batch = ax.micro_batch.empty() ? 1 : ax.micro_batch.back();
        top_micro_batch_ = static_cast<double>(jt.training.micro_batch);
        jt.parallel.recompute = recompute::none;
        if constexpr (StepPartsModel<T>)
            out = {type_layer_seconds(jt, a), type_layer_seconds(jt, b)};
        return out;
    }
    /// One layer of one sequence on `pool`'s type for `jt` at its micro-batch (layer_seconds): what every pair with
    /// the type reads, taken once per type, precision, tp and micro-batch. The same figure as type_rates' entry at the
    /// largest micro-batch without recompute, kept apart: the whole table (every micro-batch, with bare_seconds) for
    /// every pair's tp cost the 70B benchmark 1.8 M instructions more, most pairs being bounded before their rates.
    double type_layer_seconds(const job_spec& jt, const gpu_pool& pool) {
        const auto key = std::make_tuple(&pool, jt.training.precision, jt.parallel.tp, jt.training.micro_batch);
        auto [it, fresh] = layer_seconds_.try_emplace(key, 0.0);
        if (fresh) {
            const double mb = static_cast<double>(jt.training.micro_batch);
            it->second = layer_seconds(job_on(jt, pool.gpu), pool.gpu, time_, flops_) / mb;
        }
        return it->second;
    }

    /// A pipeline over two types goes past what one type holds: one of them gives all the stages it can (`all_a`,
    /// `all_b`: no further stage of it fits its free GPUs on whole nodes), or the plan is at the stage or GPU limit.
    /// Otherwise a stage more of each type fits, and the plan is a smaller version of one that is.
    bool saturated(std::int64_t stage_gpus, bool all_a, bool all_b, std::int64_t stages) const {
        return all_a || all_b || stages == most_stages_ || (opt_.max_gpus > 0 && (stages + 1) * stage_gpus > opt_.max_gpus);
    }

    /// Seconds per step at least, n sequences per data-parallel rank in micro-batches of mb over sa + sb stages
    /// (see plan_mixed), t = one layer of one sequence on each type and `send` the sends of one sequence on every
    /// stage: with x layers on the first group, every micro-batch passes the slowest stage, at least
    /// max(x t_a / s_a, (L - x) t_b / s_b) + send per sequence (no stage beats its type's rate), and the fill and
    /// drain pass every stage once, x t_a + (L - x) t_b + (s_a + s_b) send per sequence: (n - mb) x slowest +
    /// mb x fill. Convex and piecewise linear in x: lowest at x = s_a, x = L - s_b (every stage holds a layer at
    /// least) or where the two groups' stages balance.
    double pipeline_floor(double n, double mb, double sa, double sb, const std::array<double, 2>& t, double send) const {
        const double L = static_cast<double>(job_.model.layers);
        double out = 1e308;
        for (double x : {sa, L - sb, std::clamp(balance_point(sa, sb, t), sa, L - sb)})
            out = std::min(out, floor_at(x, n, mb, sa, sb, t, send));
        return out;
    }
    /// The floor at x layers on the first group (pipeline_floor's terms).
    double floor_at(double x, double n, double mb, double sa, double sb, const std::array<double, 2>& t, double send) const {
        const double L = static_cast<double>(job_.model.layers);
        const double slowest = std::max(x * t[0] / sa, (L - x) * t[1] / sb) + send;
        return (n - mb) * slowest + mb * (x * t[0] + (L - x) * t[1] + (sa + sb) * send);
    }
    /// floor_at with whole layers per stage, where every layer is alike (a dense model). A group's slot is its
    /// bottleneck stage's (the most forward FLOPs: perf/stage_load.hpp). On the first group that is a stage with the
    /// most layers, ceil(x / s_a) at least, each at the type's rate. The second holds the output layer on its last
    /// stage, which gets floor((L - x) / s_b) layers (spread_layers gives the rest to the others) and is the
    /// bottleneck or not: its slot is at least those layers' and the output layer's compute (bare_seconds), another
    /// stage's its ceil((L - x) / s_b) layers at the rate. Without whole layers (MoE), floor_at.
    double stage_floor_at(std::int64_t x, double n, double mb, std::int64_t sa, std::int64_t sb,
                          const micro_batch_rate& r) const {
        const std::int64_t L = job_.model.layers;
        if (job_.model.is_moe())
            return floor_at(static_cast<double>(x), n, mb, static_cast<double>(sa), static_cast<double>(sb), r.layer, r.send);
        const auto most_a = static_cast<double>((x + sa - 1) / sa);
        const std::int64_t base = (L - x) / sb, rest = (L - x) % sb;
        double slot_b = static_cast<double>(base) * r.bare[0] + r.bare[1];  // the last stage
        if (rest > 0) slot_b = std::min(slot_b, static_cast<double>(base + 1) * r.layer[1]);  // or another
        const double slowest = std::max(most_a * r.layer[0], slot_b) + r.send;
        const double xd = static_cast<double>(x), Ld = static_cast<double>(L);
        return (n - mb) * slowest + mb * (xd * r.layer[0] + (Ld - xd) * r.layer[1] + static_cast<double>(sa + sb) * r.send);
    }
    /// Where the two groups' stages balance: x t_a / s_a = (L - x) t_b / s_b.
    double balance_point(double sa, double sb, const std::array<double, 2>& t) const {
        return static_cast<double>(job_.model.layers) * (t[1] / sb) / (t[0] / sa + t[1] / sb);
    }

    /// Per micro-batch of the axes: one layer of one sequence on each type at tp with recompute level `rc` (the
    /// fewest seconds a layer takes at that level or above), and the sends of one sequence between the types
    /// (mixed.hpp boundary_seconds at the smallest buffer, 1/tp; with its latency spread over the micro-batch): the
    /// rates of the tighter bound. Empty without step_parts, and for full recompute by Megatron's block method,
    /// which leaves a stage's later layers alone (a layer then costs less than a one-layer stage's).
    std::vector<micro_batch_rate> micro_batch_rates(const job_spec& j0, const search_axes& ax, const gpu_pool& a,
                                                    const gpu_pool& b, std::int64_t tp, recompute rc) {
        std::vector<micro_batch_rate> out;
        job_spec jt = j0;
        set_layout(jt, job_.runtime, ax, fw_, tp, 2, 1, 1, sharding::none, 1, 1, opt_);
        jt.parallel.recompute = rc;
        if (rc == recompute::full && jt.parallel.recompute_method != recompute_method::uniform) return out;
        if constexpr (StepPartsModel<T>) {
            const auto& on_a = type_rates(jt, a, ax);
            const auto& on_b = type_rates(jt, b, ax);
            jt.parallel.sequence_parallel = true;  // the sends' smallest buffer
            const double link = link_GBps(a, b);
            out.reserve(ax.micro_batch.size());
            for (std::size_t i = 0; i < ax.micro_batch.size(); ++i) {
                const auto mb = ax.micro_batch[i];
                jt.training.micro_batch = mb;
                out.push_back({mb, {on_a[i][0], on_b[i][0]}, boundary_seconds(jt, link) / static_cast<double>(mb),
                               {on_b[i][1], on_b[i][2]}});
            }
        }
        return out;
    }
    /// Per micro-batch of the axes, one sequence's layer_seconds and bare_seconds on `pool`'s type for `jt` (its
    /// layout, precision and recompute set, the micro-batch left to vary): what every pair with the type reads,
    /// taken once per type, precision, tp and recompute level.
    const std::vector<std::array<double, 3>>& type_rates(const job_spec& jt, const gpu_pool& pool, const search_axes& ax) {
        const auto key = std::make_tuple(&pool, jt.training.precision, jt.parallel.tp, jt.parallel.recompute);
        auto [it, fresh] = type_rates_.try_emplace(key);
        if (!fresh) return it->second;
        job_spec on = job_on(jt, pool.gpu);
        it->second.reserve(ax.micro_batch.size());
        for (auto mb : ax.micro_batch) {
            on.training.micro_batch = mb;
            const double m = static_cast<double>(mb);
            const auto bare = bare_seconds(on, pool.gpu, time_, flops_);
            it->second.push_back({layer_seconds(on, pool.gpu, time_, flops_) / m, bare[0] / m, bare[1] / m});
        }
        return it->second;
    }

    /// The bound at each micro-batch that divides the n = global batch / dp sequences (its own GEMM efficiency and
    /// sends): true when none gives a step shorter than `step` seconds (false without rates to bound with).
    bool slower_everywhere(std::int64_t dp, double sa, double sb, const std::vector<micro_batch_rate>& by_mb,
                           double step) const {
        const double n = static_cast<double>(job_.training.global_batch) / static_cast<double>(dp);
        for (const auto& r : by_mb) {
            if (job_.training.global_batch % (r.mb * dp) != 0) continue;
            if (!(r.layer[0] > 0 && r.layer[1] > 0)) return false;
            if (!(pipeline_floor(n, static_cast<double>(r.mb), sa, sb, r.layer, r.send) >= step)) return false;
        }
        return !by_mb.empty();
    }

    /// True when no stage counts at tp and dp can beat the pair's bar or its best plan: every layout the speed bound
    /// admits has at most most_stages_ stages, so its floor (at mb = 1 and the largest micro-batch, as `beaten`
    /// takes it) is at least that of most_stages_ balanced stages at the faster type's rate, and it bills at least
    /// one stage of each type.
    bool hopeless(std::int64_t tp, std::int64_t dp, const std::array<double, 2>& rate) {
        if (!(rate[0] > 0 && rate[1] > 0)) return false;
        const double n = static_cast<double>(job_.training.global_batch) / static_cast<double>(dp);
        const double per_layout = static_cast<double>(job_.model.layers) * std::min(rate[0], rate[1]);
        auto floor = [&](double mb) { return (n - mb) * per_layout / static_cast<double>(most_stages_) + mb * per_layout; };
        const double step = std::min(floor(1.0), floor(std::min(n, top_micro_batch_)));
        for (auto& g : probe_.groups) {
            g.gpus = static_cast<int>(tp * dp);
            g.nodes = (g.gpus + g.gpus_per_node - 1) / g.gpus_per_node;
        }
        probe_.tokens_per_s = n * static_cast<double>(dp * job_.training.seq_len) / step;
        return mixed_score(probe_, opt_) >= beat_;
    }

    /// The layers on the first group (a range, as its floor is convex in them) at which a split of sa + sb stages
    /// can still beat the pair's bar or its best plan: every integer x of [sa, L - sb] where some micro-batch that
    /// divides n has its floor (pipeline_floor's terms at x, with its own rates and sends) below `step` seconds,
    /// a relative 1e-9 added against rounding; all of them without rates to bound with.
    split_window floor_window(std::int64_t dp, std::int64_t sa, std::int64_t sb, const std::vector<micro_batch_rate>& by_mb,
                              double step) const {
        const std::int64_t lo = sa, hi = job_.model.layers - sb;
        const double n = static_cast<double>(job_.training.global_batch) / static_cast<double>(dp);
        const double sa_d = static_cast<double>(sa), sb_d = static_cast<double>(sb), limit = step * (1.0 + 1e-9);
        split_window w{hi + 1, lo - 1};
        for (const auto& r : by_mb) {
            if (job_.training.global_batch % (r.mb * dp) != 0) continue;
            if (!(r.layer[0] > 0 && r.layer[1] > 0)) return {lo, hi};
            const double mb = static_cast<double>(r.mb);
            auto below = [&](std::int64_t x) {
                return floor_at(static_cast<double>(x), n, mb, sa_d, sb_d, r.layer, r.send) < limit;
            };
            // the lowest integer point: next to the balance point or at an end
            const auto x0 = std::clamp(static_cast<std::int64_t>(balance_point(sa_d, sb_d, r.layer)), lo, hi);
            std::int64_t m = x0;
            for (auto x : {lo, hi, std::min(x0 + 1, hi)})
                if (floor_at(static_cast<double>(x), n, mb, sa_d, sb_d, r.layer, r.send) <
                    floor_at(static_cast<double>(m), n, mb, sa_d, sb_d, r.layer, r.send)) m = x;
            if (!below(m)) continue;
            std::int64_t x = lo, y = m;  // the first point below the limit: the floor falls up to m
            while (x < y) { const auto mid = x + (y - x) / 2; if (below(mid)) y = mid; else x = mid + 1; }
            const auto first = x;
            x = m, y = hi;  // the last point below the limit: the floor rises from m
            while (x < y) { const auto mid = y - (y - x) / 2; if (below(mid)) x = mid; else y = mid - 1; }
            // whole layers: some stage of each group holds at least its mean rounded up
            auto whole_below = [&](std::int64_t at) { return stage_floor_at(at, n, mb, sa, sb, r) < limit; };
            for (x = first; x <= y && !whole_below(x);) ++x;
            while (y >= x && !whole_below(y)) --y;
            if (x > y) continue;
            w.lo = std::min(w.lo, x);
            w.hi = std::max(w.hi, y);
        }
        return by_mb.empty() ? split_window{lo, hi} : w;
    }

    /// The speed bound (plan_mixed): nothing when no split of sa + sb stages can beat the pair's bar or its best
    /// plan, else the layers on the first group where one might (floor_window).
    std::optional<split_window> admitted(std::int64_t tp, std::int64_t dp, std::int64_t sa, std::int64_t sb,
                                         const std::array<double, 2>& rate) {
        if (beaten(tp, dp, sa, sb, rate)) return std::nullopt;
        if (!(window_step_ > 0)) return split_window{sa, job_.model.layers - sb};
        const auto w = floor_window(dp, sa, sb, rates_at(recompute::none), window_step_);
        if (w.lo > w.hi) return std::nullopt;
        return w;
    }

    /// The speed bound (plan_mixed): true when no split of sa + sb stages can beat the pair's bar or its best plan.
    bool beaten(std::int64_t tp, std::int64_t dp, std::int64_t sa, std::int64_t sb, const std::array<double, 2>& rate) {
        window_step_ = 0;
        if (sa + sb > most_stages_ || (opt_.constraints.pp && *opt_.constraints.pp != sa + sb)) return true;
        const std::int64_t stage_gpus = tp * dp;
        if (opt_.max_gpus > 0 && (sa + sb) * stage_gpus > opt_.max_gpus) return true;
        if (!(rate[0] > 0 && rate[1] > 0)) return false;
        const double n = static_cast<double>(job_.training.global_batch) / static_cast<double>(dp);
        const double sa_d = static_cast<double>(sa), sb_d = static_cast<double>(sb);
        // lowest at mb = 1 or at the largest micro-batch, whose rates are the best
        const double step = std::min(pipeline_floor(n, 1.0, sa_d, sb_d, rate, 0.0),
                                     pipeline_floor(n, std::min(n, top_micro_batch_), sa_d, sb_d, rate, 0.0));
        for (std::size_t k = 0; k < 2; ++k) {  // the layout's GPUs and nodes (probe_ names the pair's types)
            auto& g = probe_.groups[k];
            g.gpus = static_cast<int>((k == 0 ? sa : sb) * stage_gpus);
            g.nodes = (g.gpus + g.gpus_per_node - 1) / g.gpus_per_node;
        }
        probe_.tokens_per_s = n * static_cast<double>(dp * job_.training.seq_len) / step;
        const double bound = mixed_score(probe_, opt_);
        if (bound >= beat_) return true;
        // the score is proportional to the step: the step at which a plan of this layout scores beat_
        window_step_ = step * beat_ / bound;
        score_per_step_ = bound / step;
        return slower_everywhere(dp, sa_d, sb_d, rates_at(recompute::none), window_step_);
    }

    /// One layout (tp, dp, stage counts): the lowest recompute level at which a micro-batch fits, the largest such
    /// micro-batch by binary search (what fits is a prefix of the micro-batches), and smaller ones while they are
    /// faster (a smaller bubble against less efficient GEMMs). Once a level fits no micro-batch, the most frugal
    /// point (full recompute, the smallest micro-batch): if no split fits there, none fits anywhere in the layout.
    void layout(const job_spec& j0, const search_axes& ax, const gpu_pool& a, const gpu_pool& b, std::int64_t tp,
                std::int64_t dp, std::int64_t sa, std::int64_t sb, split_window w) {
        job_spec j = j0;
        set_layout(j, job_.runtime, ax, fw_, tp, sa + sb, 1, 1, dp > 1 ? sharding::optimizer : sharding::none,
                   1, dp, opt_);
        if (opt_.constraints.sharding) j.parallel.sharding = *opt_.constraints.sharding;
        if (!framework_rejects(fw_, j.parallel, j.training).empty()) return;
        std::vector<std::int64_t> mbs;
        valid_micro_batches(j, ax, mbs);
        if (mbs.empty() || ax.recomputes.empty()) return;
        // one evaluator for the layout's points, each group's stages by split shared with its layout shape's
        split_evaluator<M, T> ev(j, a, b, sa, sb, mem_, time_, opt_, &shapes_[{tp, sa, sb}], inputs_checked_);
        if (outside_memory(j, ev, ax.recomputes.back(), mbs.front(), w)) return;
        auto at = [&](recompute rc, std::size_t k) {
            j.parallel.recompute = rc;
            j.training.micro_batch = mbs[k];
            spread_layers(std::array{j.model.layers}, std::array{sa + sb}, j.parallel.stage_layers);
            try {
                validate_point(j, inputs_checked_);
            } catch (const config_error&) {
                return std::optional<plan>{};
            }
            ev.follow_point();
            return best_split(ev);
        };
        std::optional<std::optional<plan>> frugal;  // taken when a level first fits nothing
        for (auto rc : ax.recomputes) {
            if (level_beaten(dp, sa, sb, rc, w)) return;  // no plan at this level or above can win
            auto first = rc == ax.recomputes.back() && frugal ? *frugal : at(rc, 0);
            if (!first) {
                if (!frugal) frugal = at(ax.recomputes.back(), 0);
                if (!*frugal) return;
                continue;
            }
            std::size_t lo = 0, hi = mbs.size();  // mbs[lo] fits, mbs[hi] does not (hi = size: none known)
            auto top = first;                      // the plan at mbs[lo]
            while (hi - lo > 1) {
                const auto mid = (lo + hi) / 2;
                if (auto pl = at(rc, mid)) {
                    lo = mid;
                    top = std::move(pl);
                } else {
                    hi = mid;
                }
            }
            double last = 0;
            for (auto k = lo + 1; k-- > 0;) {
                auto pl = k == lo ? std::move(top) : k == 0 ? first : at(rc, k);
                if (!pl || pl->tokens_per_s <= last) break;
                last = pl->tokens_per_s;
                keep(a, b, std::move(*pl));
            }
            return;
        }
    }

    /// True when no plan of the layout at recompute level `rc` or above can beat the pair's bar or its best plan:
    /// at every point of the window `w` (admitted: the others cannot, at any level) and every micro-batch that
    /// divides n, the whole-layer floor (stage_floor_at) with the rates at `rc` (a layer takes at least as long with
    /// more recompute) reaches the step at which the layout scores that. The search tries the levels from the least
    /// recompute up, so once one is known not to fit, the rest are bounded at the next.
    bool level_beaten(std::int64_t dp, std::int64_t sa, std::int64_t sb, recompute rc, split_window w) {
        if (!(score_per_step_ > 0) || job_.model.is_moe()) return false;
        const auto& rates = rates_at(rc);
        const double n = static_cast<double>(job_.training.global_batch) / static_cast<double>(dp);
        const double limit = beat_ / score_per_step_ * (1.0 + 1e-9);
        for (const auto& r : rates) {
            if (job_.training.global_batch % (r.mb * dp) != 0) continue;
            if (!(r.layer[0] > 0 && r.layer[1] > 0)) return false;
            for (auto x = w.lo; x <= w.hi; ++x)
                if (stage_floor_at(x, n, static_cast<double>(r.mb), sa, sb, r) < limit) return false;
        }
        return !rates.empty();
    }

    /// True when the window of layers on the first group where the layout might beat its bar (admitted) lies past
    /// what memory allows at the most frugal point (recompute `rc`, micro-batch `mb`), where every split that fits
    /// anywhere in the layout fits too: the first group is over at the window's low end (and above: its stages fill
    /// as its layers grow) or the second at its high end (and below). Two group estimates instead of the layout's
    /// splits.
    bool outside_memory(job_spec& j, split_evaluator<M, T>& ev, recompute rc, std::int64_t mb, split_window w) const {
        const auto [lo, hi] = ev.splits();
        if (w.lo <= lo && w.hi >= hi) return false;  // the whole range: best_split's own checks decide
        j.parallel.recompute = rc;
        j.training.micro_batch = mb;
        ev.follow_point();
        return (w.lo > lo && ev.group_over(w.lo, 0) == true) || (w.hi < hi && ev.group_over(w.hi, 1) == true);
    }

    void keep(const gpu_pool& a, const gpu_pool& b, plan&& pl) {
        const double s = mixed_score(pl, opt_);
        if (s >= bar_.of(a.gpu.name, b.gpu.name)) return;
        auto [it, fresh] = best_.try_emplace(key_of(a, b), s, pl);
        if (!fresh && s < it->second.first) it->second = {s, std::move(pl)};
        beat_ = std::min(beat_, s);
    }

    const job_spec& job_;
    framework fw_;  ///< one whose rules state a layer count per stage (Megatron-LM)
    const plan_options& opt_;
    const M& mem_;
    const T& time_;
    single_type_bar bar_;
    std::int64_t most_stages_;
    token_flops flops_;
    /// The job passes validate_inputs (as the planner's check_inputs asks): its points are checked by
    /// validate_layout, which then throws exactly where validate does (validate_point).
    bool inputs_checked_ = false;
    static bool inputs_valid(const job_spec& j) {
        try {
            validate_inputs(j);
        } catch (const config_error&) {
            return false;
        }
        return true;
    }
    double top_micro_batch_ = 1;  ///< the micro-batch the rates were taken at (the largest of the axes)
    std::map<pair_key, std::pair<double, plan>> best_;
    std::array<std::vector<std::int64_t>, 2> counts_{};  ///< each group's stage counts at the tp and dp in hand
    double beat_ = 1e308;  ///< the score a plan of the pair in hand must beat: its bar, or its best plan so far
    double window_step_ = 0;  ///< the step at which the layout last bounded scores beat_ (0: none)
    double score_per_step_ = 0;  ///< the score of the layout last bounded per second of its step (0: none)
    /// The pair and tp in hand and the bound's rates at each recompute level (micro_batch_rates), taken when first
    /// needed (rates_at).
    struct pair_rates {
        const job_spec* j0 = nullptr;
        const search_axes* ax = nullptr;
        const gpu_pool *a = nullptr, *b = nullptr;
        std::int64_t tp = 1;
        std::array<std::optional<std::vector<micro_batch_rate>>, 3> by_level{};
    };
    pair_rates rates_{};
    std::map<std::tuple<const gpu_pool*, precision, std::int64_t, recompute>, std::vector<std::array<double, 3>>> type_rates_{};
    std::map<std::tuple<const gpu_pool*, precision, std::int64_t, std::int64_t>, double> layer_seconds_{};
    std::map<const gpu_pool*, search_axes> axes_{};  ///< each first type's axes
    const std::vector<micro_batch_rate>& rates_at(recompute rc) {
        auto& r = rates_.by_level[static_cast<std::size_t>(rc)];
        if (!r) r = micro_batch_rates(*rates_.j0, *rates_.ax, *rates_.a, *rates_.b, rates_.tp, rc);
        return *r;
    }
    plan probe_;     ///< the speed bound's plan of the pair in hand (its types; the layout's GPUs)
    /// The split searches' shared stages of each layout shape (tp, sa, sb): a group's stages read the layout's tp,
    /// its stage counts and the split, not dp, the types or the points (mixed_split.hpp split_stages).
    std::map<std::array<std::int64_t, 3>, typename split_evaluator<M, T>::shared> shapes_{};
};

}  // namespace detail

/// Mixed plans of `job` over the pools, best first by mixed_score, into `r.mixed` (or why there are none into
/// `r.mixed_note`). Megatron-LM only: the framework that runs an uneven layout per stage as written. A mixed plan of
/// two types is kept only when it beats every single-type plan of `r.plans` on either type (otherwise one type
/// alone does better, and the other's GPUs stay free for other jobs), and a layout is skipped without a memory
/// estimate when its speed bound already cannot: no stage runs its layers faster than its type's compute alone (t_k:
/// one layer of one sequence on type k without recompute), and every stage holds a layer at least, so with x layers
/// on the first group a pipeline of n = global batch / dp sequences in micro-batches of mb takes at least
/// (n - mb) x max(x t_a / s_a, (L - x) t_b / s_b) + mb x (x t_a + (L - x) t_b) seconds (every micro-batch passes
/// the slowest stage; the fill and drain pass every layer once), lowest over x at x = s_a, L - s_b or the balance
/// point (mixed_search::pipeline_floor). First with the rates of the largest micro-batch (its best GEMM
/// efficiency) at mb = 1 and at that micro-batch; a layout that passes is bounded again at each micro-batch that
/// divides n, with that micro-batch's own rates and the sends between the types every stage's slot carries
/// (mixed.hpp boundary_seconds). The bound needs the step-time model's parts (step_parts), as the single-type
/// search's speed bound does.
template <MemoryModel M, StagedStepTimeModel T>
void plan_mixed(const job_spec& job, std::span<const gpu_pool> pools, const plan_options& opt, const M& mem,
                const T& time, plan_result& r) {
    const auto fw = opt.frameworks.empty() ? job.runtime.framework : opt.frameworks.front();
    if (!fw->rules.stage_layer_layout) {
        r.mixed_note = "mixed plans need Megatron-LM (--pipeline-model-parallel-layout runs a different layer count "
                       "on each stage); the job's framework is " + std::string(to_string(fw));
        return;
    }
    if (pools.size() < 2) {
        r.mixed_note = "mixed plans need a cluster with two GPU types or more";
        return;
    }
    detail::mixed_search<M, T> search(job, fw, opt, mem, time, r);
    for (const auto& a : pools)
        for (const auto& b : pools)
            if (&a != &b) search.pair(a, b);
    r.mixed = search.plans();
    if (r.mixed.empty())
        r.mixed_note = "no pipeline over two GPU types (at most " + std::to_string(search.most_stages()) +
                       " stages) both fits the job's memory and beats every plan on one of its two types alone";
}

}  // namespace frenzy
