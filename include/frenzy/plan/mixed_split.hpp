#pragma once
// The split of a two-group mixed plan (plan/mixed.hpp): the layers on the first group grow until its slowest stage is
// as slow as the second's (binary search on the time alone), then move to the nearest split both types' memory holds
// (best_split). Its evaluations are evaluate_mixed's, taken apart so that each split costs what it needs
// (split_evaluator): the time alone reads each group's slot, the memory each group's own stages, and only a split
// that fits is evaluated whole.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/perf/flops.hpp"
#include "frenzy/perf/gpu_facts.hpp"
#include "frenzy/perf/stage_load.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/plan/feasibility.hpp"
#include "frenzy/plan/mixed.hpp"
#include "frenzy/plan/options.hpp"
#include "frenzy/plan/policies.hpp"
#include "frenzy/train/attention.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy::detail {

/// validate(j) for a point of a mixed search: validate_layout where the search's job passed validate_inputs
/// (`inputs_checked`), which then throws exactly where validate does.
inline void validate_point(const job_spec& j, bool inputs_checked) {
    if (inputs_checked) validate_layout(j);
    else validate(j);
}

/// What the split searches of one layout shape (tp and the two groups' stage counts) share across its layouts' dp,
/// pairs of types and points (recompute levels x micro-batches: mixed_search::layout), filled as the splits are
/// tried: each group's bottleneck stage and its stages prepared for the memory model (`Prepared`:
/// memory/search.hpp prepared_stages) at each split, which read the shape and the split alone
/// (perf/stage_load.hpp bottleneck_stage; memory_search's stages_of), and the time-balanced split the last search
/// found, where the next one starts (a hint only: it moves little between a layout's points).
template <class Prepared>
struct split_stages {
    std::array<std::vector<std::optional<stage_load>>, 2> by_group{};  ///< [group][layers on the first group]
    std::array<std::vector<std::optional<Prepared>>, 2> memory{};      ///< [group][layers on the first group]
    std::int64_t balanced = -1;                                          ///< the last time-balanced split (-1: none)
};

/// The splits of one layout (the job's layout set but for its stage_layers) between a group of `sa` stages on `a`
/// and one of `sb` on `b`, evaluated as evaluate_mixed does; the job as each type runs it (job_on) and each group's
/// sends over the link are taken once, and the stage layers and prepared stages are rewritten in place.
template <MemoryModel M, StagedStepTimeModel T>
class split_evaluator {
public:
    using prepared = typename memory_check<M>::stages_type;
    using shared = split_stages<prepared>;
    /// `stages`: the layout's group stages, shared by its split searches (null: computed at each split).
    /// `inputs_checked`: the job's name, model and training but for the precision and micro-batch passed validate's
    /// checks of them (the planner's check_inputs), so that validate_layout answers as validate does.
    split_evaluator(job_spec& j, const gpu_pool& a, const gpu_pool& b, std::int64_t sa, std::int64_t sb, const M& mem,
                    const T& time, const plan_options& opt, shared* stages = nullptr, bool inputs_checked = false)
        : j_(j), shape_{{{&a, sa}, {&b, sb}}}, mem_(mem), time_(time), opt_(opt),
          flops_(forward_flops_per_token(j.model, j.training.seq_len)), stages_of_layout_(stages),
          inputs_checked_(inputs_checked) {
        for (std::size_t k = 0; k < 2; ++k) {
            const auto& g = shape_[k].pool->gpu;
            refused_[k] = !gpu_refuses(j, g).empty();
            if (refused_[k]) continue;
            on_[k] = job_on(j, g);
            capacity_[k] = usable_memory(g, opt.margin);  // group_of's
            if constexpr (prepares) facts_[k] = time_.prepare(g, topology_of(k));
            link_[k] = neighbour_link_GBps(shape_, k);
            boundary_[k] = link_[k] > 0 ? boundary_seconds(on_[k], link_[k]) : 0.0;
        }
    }

    /// The recompute level and micro-batch as the job (the constructor's `j`) has them now, the fields a layout's
    /// split searches change between its points (mixed_search::layout), so that one evaluator serves them all: each
    /// group's job and sends follow, and what was validated or estimated at the last point goes.
    void follow_point() {
        for (std::size_t k = 0; k < 2; ++k) {
            if (refused_[k]) continue;
            on_[k].parallel.recompute = j_.parallel.recompute;
            on_[k].training.micro_batch = j_.training.micro_batch;
            boundary_[k] = link_[k] > 0 ? boundary_seconds(on_[k], link_[k]) : 0.0;
        }
        checked_ = {};
        known_ = {};
    }

    /// The splits: layers on the first group from the first (a layer on each of its stages) to the last (one on
    /// each of the second group's).
    std::array<std::int64_t, 2> splits() const { return {shape_[0].stages, j_.model.layers - shape_[1].stages}; }
    /// Where the last split search of the layout found its time-balanced split (-1: none, or nothing shared).
    std::int64_t balanced_hint() const { return stages_of_layout_ ? stages_of_layout_->balanced : -1; }
    void set_balanced(std::int64_t na) {
        if (stages_of_layout_) stages_of_layout_->balanced = na;
    }

    /// Each group's slot at `na` layers on the first group (evaluate_mixed's slot_s), or nothing where evaluate_mixed
    /// gives no plan without its memory check.
    std::optional<std::array<double, 2>> slots(std::int64_t na) {
        std::array<double, 2> out{};
        std::int64_t first = 0;
        for (std::size_t k = 0; k < 2; first += shape_[k].stages, ++k) {
            if (refused_[k]) return std::nullopt;
            auto& jk = on_[k];
            split_group(na, k);
            const auto& pool = *shape_[k].pool;
            const auto& stage = group_stage(na, k, first);
            step_breakdown parts;
            if constexpr (prepares) parts = time_.step_parts(jk, stage, facts_[k]);
            else if constexpr (StepPartsModel<T>)
                parts = time_.step_parts(jk, pool.gpu, topology_of(k), stage);
            else parts = time_.predict(jk, pool.gpu, topology_of(k), stage).parts;
            if (!(parts.total > 0)) return std::nullopt;
            out[k] = parts.micro_batch + std::max(0.0, boundary_[k] - parts.pp_exposed_mb);
        }
        return out;
    }

    /// Whether group k is over its GPUs' usable memory at `na` layers on the first group: bit k of evaluate_mixed's
    /// `over`, from the group's own stages (a memory model that takes prepared stages estimates those alone and stops
    /// at the first one over). Nothing where evaluate_mixed stops without it: the type refuses the job, or the memory
    /// model rejects it.
    std::optional<bool> group_over(std::int64_t na, std::size_t k) {
        if (refused_[k]) return std::nullopt;
        auto& jk = on_[k];
        split_group(na, k);
        const std::int64_t first = k == 0 ? 0 : shape_[0].stages;
        const double capacity = capacity_[k].value;
        auto& known = known_[k];
        try {
            if constexpr (PreparedMemoryModel<M>) {
                const bool whole = na >= shape_[0].stages && na <= j_.model.layers - shape_[1].stages;
                if (whole && !valid(k)) return std::nullopt;  // the memory model rejects the job at every split
                const auto& stages = group_prepared(na, k, first);
                const memory_search<M> search(mem_);
                const auto r = whole ? search.estimate_validated(jk, stages, false, capacity)
                                     : search.estimate(jk, stages, false, capacity);
                known = {na, required_memory(r), r.peak_reserved};
            } else {
                auto grp = group_of(jk, shape_[k], first, opt_);
                set_group_memory(grp, mem_.estimate(jk));
                known = {na, grp.required, grp.peak_reserved};
            }
        } catch (const config_error&) {
            known.na = -1;
            return std::nullopt;
        }
        return known.required.value > capacity;
    }

    /// evaluate_mixed's memory verdict at `na`: 0 when both groups fit, else its `over` bits, or 4 where it stops
    /// without them. With `deciding` (a search that reads that group's bit alone, once both groups were estimated at a
    /// split of the layout: whatever stops evaluate_mixed stops it at every split), that group first, and the other
    /// only where it fits.
    unsigned memory_bits(std::int64_t na, std::optional<std::size_t> deciding = std::nullopt) {
        if (deciding) {
            for (auto k : {*deciding, 1 - *deciding}) {
                const auto over = group_over(na, k);
                if (!over) return 4u;
                if (*over) return 1u << k;
            }
            return 0u;
        }
        unsigned bits = 0;
        for (std::size_t k = 0; k < 2; ++k) {
            const auto over = group_over(na, k);
            if (!over) return bits != 0 ? bits : 4u;
            if (*over) bits |= 1u << k;
        }
        return bits;
    }

    /// evaluate_mixed at `na`, the job's stage_layers set to the split; each group's memory from its last
    /// group_over at `na` where there is one (the same figures: the fullest stage's, with its whole group walked).
    mixed_evaluation evaluate(std::int64_t na) {
        split_layers(na, j_.parallel.stage_layers);
        const std::span<const stage_group_shape> shape(shape_);
        if (known_[0].na != na || known_[1].na != na) return evaluate_mixed(j_, shape, mem_, time_, opt_, true);
        const auto memory = [&](std::size_t k, const job_spec&, stage_group& grp) -> std::optional<std::string> {
            grp.required = known_[k].required;
            grp.peak_reserved = known_[k].peak_reserved;
            return std::nullopt;
        };
        const auto stage = [&](std::size_t k) -> const stage_load& {
            split_group(na, k);
            return group_stage(na, k, k == 0 ? 0 : shape_[0].stages);
        };
        // the job as group k's type runs it: job_on(j_, the type), as follow_point and split_group keep it
        const auto jobs = [&](std::size_t k) -> const job_spec& {
            split_group(na, k);
            return on_[k];
        };
        return evaluate_groups(j_, shape, time_, opt_, &memory, &stage, &jobs);
    }

private:
    topology topology_of(std::size_t k) const { return {shape_[k].pool->gpus_per_node, shape_[k].pool->network_GBps}; }
    /// The step-time model takes the type's facts prepared once (PreparedStepTimeModel), as the planner's pools do:
    /// the slots read them so.
    static constexpr bool prepares = PreparedStepTimeModel<T>;

    /// Group k's bottleneck stage at `na` layers on the first group (on_[k] split so), from the layout's shared
    /// stages where given.
    const stage_load& group_stage(std::int64_t na, std::size_t k, std::int64_t first) {
        const auto& jk = on_[k];
        const auto last = first + shape_[k].stages;
        if (!stages_of_layout_) return last_stage_ = bottleneck_stage(jk, flops_, first, last);
        auto& at = stages_of_layout_->by_group[k];
        if (at.size() <= static_cast<std::size_t>(na)) at.resize(static_cast<std::size_t>(na) + 1);
        auto& s = at[static_cast<std::size_t>(na)];
        if (!s) s = bottleneck_stage(jk, flops_, first, last);
        return *s;
    }

    /// Group k's stages prepared for the memory model at `na` layers on the first group (on_[k] split so), from the
    /// layout's shared ones where given.
    const prepared& group_prepared(std::int64_t na, std::size_t k, std::int64_t first) {
        auto prepare = [&](prepared& out) { memory_search<M>(mem_).stages_of(on_[k], out, first, first + shape_[k].stages); };
        if (!stages_of_layout_) return prepare(stages_), stages_;
        auto& at = stages_of_layout_->memory[k];
        if (at.size() <= static_cast<std::size_t>(na)) at.resize(static_cast<std::size_t>(na) + 1);
        auto& s = at[static_cast<std::size_t>(na)];
        if (!s) prepare(s.emplace());
        return *s;
    }

    /// Whether validate passes for group k's job at the split it holds, one with at least one layer per stage:
    /// validate reads the split (parallel.stage_layers) only through validate_stage_layers, which every such split
    /// passes, and framework_rejects, which reads whether there is one (the frameworks' rejects_layout rules read
    /// the degrees and the sharding), so one check answers for all of them.
    bool valid(std::size_t k) {
        if (!checked_[k]) {
            checked_[k] = true;
            try {
                validate_point(on_[k], inputs_checked_);
                valid_[k] = true;
            } catch (const config_error&) {
                valid_[k] = false;
            }
        }
        return valid_[k];
    }

    void split_layers(std::int64_t na, std::vector<std::int64_t>& out) const {
        spread_layers(std::array{na, j_.model.layers - na}, std::array{shape_[0].stages, shape_[1].stages}, out);
    }
    /// Group k's job split at `na` (split_layers; nothing to do where it is split so already).
    void split_group(std::int64_t na, std::size_t k) {
        if (split_at_[k] == na) return;
        split_layers(na, on_[k].parallel.stage_layers);
        split_at_[k] = na;
    }

    job_spec& j_;
    std::array<stage_group_shape, 2> shape_;
    const M& mem_;
    const T& time_;
    const plan_options& opt_;
    token_flops flops_;
    shared* stages_of_layout_ = nullptr;        ///< the layout's group stages, shared by its split searches
    bool inputs_checked_ = false;               ///< validate_layout answers as validate (the constructor's)
    stage_load last_stage_{};                   ///< group_stage's answer where nothing is shared
    std::array<bool, 2> refused_{};      ///< the group's type refuses the job (precision or attention kernel)
    std::array<job_spec, 2> on_{};       ///< the job as each group's type runs it (job_on)
    std::array<std::int64_t, 2> split_at_{-1, -1};  ///< the split each on_[k]'s stage_layers hold (-1: the job's own)
    std::array<gpu_facts, 2> facts_{};   ///< what the step-time model reads of each group's type (prepare)
    std::array<double, 2> link_{};       ///< each group's link to its neighbour (GB/s per rank; 0: none)
    std::array<bytes, 2> capacity_{};    ///< the usable memory of one GPU of each group's type (group_of)
    std::array<double, 2> boundary_{};   ///< each group's sends over its link (boundary_seconds)
    prepared stages_{};  ///< prepared stages of the group being estimated, where none are shared
    std::array<bool, 2> checked_{}, valid_{};            ///< validate of each group's job, once (valid)
    /// Each group's memory at the split its last group_over estimated (na = -1: none).
    struct group_memory {
        std::int64_t na = -1;
        bytes required{}, peak_reserved{};
    };
    std::array<group_memory, 2> known_{};
};

/// The time-balanced split: the smallest na in [lo, hi) whose first-group slot reaches the second's (hi where none
/// does), nothing where a slot cannot be evaluated (the type refuses the job: at every split). The first group's slot
/// grows with its layers and the second's shrinks, so the splits that reach form a suffix: a binary search finds its
/// start, within a bracket grown from `hint` by doubling steps (two slot evaluations where the hint is right, as
/// from the split search at a layout's neighbouring point) or over the whole range without one.
template <class E>
std::optional<std::int64_t> time_balanced(E& ev, std::int64_t lo, std::int64_t hi, std::int64_t hint) {
    bool failed = false;
    auto reaches = [&](std::int64_t na) {
        const auto s = ev.slots(na);
        failed = failed || !s;
        return s && (*s)[0] >= (*s)[1];
    };
    std::int64_t l = lo, h = hi;  // the start lies in [l, h]
    if (hint >= lo && hint < hi) {
        if (reaches(hint)) {
            h = hint;
            for (std::int64_t step = 1; !failed && h - step >= l; step *= 2)
                if (reaches(h - step)) h -= step;
                else { l = h - step + 1; break; }
        } else {
            l = hint + 1;
            for (std::int64_t step = 1; !failed && l - 1 + step < h; step *= 2)
                if (reaches(l - 1 + step)) { h = l - 1 + step; break; }
                else l += step;
        }
    }
    while (!failed && l < h) {
        const auto mid = (l + h) / 2;
        if (reaches(mid)) h = mid; else l = mid + 1;
    }
    if (failed) return std::nullopt;
    return l;
}

/// The best split of the layers between `ev`'s two groups at its job's point: the time-balanced split moved to the
/// nearest one both types' memory holds (see the top of the file).
template <MemoryModel M, StagedStepTimeModel T>
std::optional<plan> best_split(split_evaluator<M, T>& ev) {
    const auto [lo, hi] = ev.splits();  // layers on the first group
    if (lo > hi) return std::nullopt;
    const auto balanced = time_balanced(ev, lo, hi, ev.balanced_hint());
    if (!balanced) return std::nullopt;
    ev.set_balanced(*balanced);
    const std::int64_t l = *balanced;
    std::optional<plan> best;
    // the memory bits of `na` (0: it fits, and `best` keeps the faster); `deciding`: memory_bits'
    auto check = [&](std::int64_t na, std::optional<std::size_t> deciding = std::nullopt) {
        if (const unsigned bits = ev.memory_bits(na, deciding); bits != 0) return bits;
        auto e = ev.evaluate(na);
        if (e.plan && (!best || e.plan->tokens_per_s > best->tokens_per_s)) best = std::move(e.plan);
        return e.plan ? 0u : e.over != 0 ? e.over : 4u;
    };
    unsigned at = check(l);
    // the second group over at l is over at l - 1 too (its stages fill as their layers grow): nothing to learn there
    if (l - 1 >= lo && (at & 2u) == 0) at |= check(l - 1);
    if (best || at == 0 || (at & 4u) || at == 3u) return best;
    // too full on one side of the balance point: the nearest split that side holds (its stages fill as their
    // layers grow), found by binary search; the other side only empties on the way
    if (at == 1u) {  // the first group: fewer layers there, the largest na in [lo, l - 2] it holds
        std::int64_t x = lo, y = l - 2;
        while (x <= y) {
            const auto mid = (x + y) / 2;
            if ((check(mid, 0) & 1u) == 0) x = mid + 1; else y = mid - 1;
        }
    } else {  // the second group: more layers on the first, the smallest na in [l + 1, hi] the second holds
        std::int64_t x = l + 1, y = hi;
        while (x <= y) {
            const auto mid = (x + y) / 2;
            if ((check(mid, 1) & 2u) == 0) y = mid - 1; else x = mid + 1;
        }
    }
    return best;
}

}  // namespace frenzy::detail
