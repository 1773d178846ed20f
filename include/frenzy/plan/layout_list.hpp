#pragma once
// The layouts a pool's search visits (the planner's search_pool): every point of the search axes that the node
// shape, the framework's rules and the planner's dp rules allow, in the search's order, with what the search reads
// of it that no GPU type changes: its layout fields, recompute levels, valid micro-batches, memo key and bottleneck
// stage. What they depend on is the job as planned on the type, the axes, the node size and the GPU limit, so one
// plan() call lists them once per distinct set of those and searches every pool that shares it from the same list
// (the listing was a fifth of the Megatron benchmark's instructions, repeated for each of its 12 types).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "frenzy/perf/stage_load.hpp"
#include "frenzy/plan/memo.hpp"
#include "frenzy/plan/options.hpp"
#include "frenzy/plan/search_space.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy::detail {

/// The recompute levels of the axes that the framework's rules accept at a dp (rules_verdicts), in the axes'
/// (ascending) order, into `out`.
inline void allowed_levels(const rule_verdicts& rules, std::int64_t dp, const std::vector<recompute>& levels,
                           std::vector<recompute>& out) {
    out.clear();
    for (const auto rc : levels)
        if (rules.allows(dp, rc)) out.push_back(rc);
}

/// A layout of the axes at the axes' first dp, as set_layout sets it on the job, and the dps it is searched at.
struct listed_layout {
    framework fw = framework::by_default;
    parallel_config parallel{};                                ///< set_layout's fields
    bool overlap_grad_reduce = false, tp_comm_overlap = false;  ///< set_overlap's
    std::array<std::vector<recompute>, 2> levels{};            ///< allowed_levels at dp = 1 and at dp > 1
    const stage_load* stage = nullptr;  ///< its bottleneck stage (the planner's, for the default time model)
    std::uint32_t first = 0, last = 0;  ///< its points: layout_list::points[first, last)
    /// Sets the layout on `j`, a job equal to the list's but for the fields a search varies: set_layout's result.
    void set_on(job_spec& j) const {
        j.runtime.framework = fw;
        j.parallel = parallel;
        j.runtime.overlap_grad_reduce = overlap_grad_reduce;
        j.runtime.tp_comm_overlap = tp_comm_overlap;
    }
};
/// A layout at one dp with levels and micro-batches to search.
struct listed_point {
    std::int64_t dp = 1;
    layout_key key{};                ///< the memo's key of the layout at this dp (layout_key_of)
    std::uint32_t micro_batches = 0;  ///< its valid micro-batches: layout_list::micro_batches[this]
};

/// The layouts of one set of inputs, in search_pool's order (framework, tp, pp, vpp, cp, sharding, ep, dp).
struct layout_list {
    job_spec job{};
    search_axes axes{};
    int gpus_per_node = 0;
    std::int64_t avail = 0;
    std::vector<listed_layout> layouts{};
    std::vector<listed_point> points{};
    std::vector<std::vector<std::int64_t>> micro_batches{};
    /// Points the rules and dp rules allow that have no recompute level or no valid micro-batch: the search counts
    /// them (plan_stats::layouts) and searches nothing there.
    std::int64_t idle_points = 0;
    bool lists(const job_spec& j, const search_axes& ax, int gpn, std::int64_t av) const {
        return gpn == gpus_per_node && av == avail && ax == axes && j == job;
    }
};

/// The valid micro-batches (valid_micro_batches) of each (dp, pp, interleaved) of the axes, listed when first asked.
class micro_batch_table {
public:
    micro_batch_table(const search_axes& ax, layout_list& out)
        : ax_(ax), out_(out), slot_(ax.dp.size() * ax.pp.size() * 2, -1) {}
    std::uint32_t at(const job_spec& j, std::size_t di, std::size_t pi) {
        const auto s = (di * ax_.pp.size() + pi) * 2 + (j.parallel.schedule == pipeline_schedule::interleaved ? 1 : 0);
        if (slot_[s] < 0) {
            slot_[s] = static_cast<std::int64_t>(out_.micro_batches.size());
            valid_micro_batches(j, ax_, out_.micro_batches.emplace_back());
        }
        return static_cast<std::uint32_t>(slot_[s]);
    }

private:
    const search_axes& ax_;
    layout_list& out_;
    std::vector<std::int64_t> slot_;
};

/// The dps of the layout on `j` (pp the `pi`-th of the axes) within `avail` GPUs that the planner's dp rules
/// allow (ep divides dp x cp, sharding needs dp > 1), as points of `l` in `out`.
inline void list_dps(job_spec& j, const search_axes& ax, std::size_t pi, std::int64_t avail, listed_layout& l,
                     micro_batch_table& mbs, layout_list& out) {
    const auto& p = j.parallel;
    std::optional<layout_key> key;  // packed at the first dp, moved along the others
    l.first = static_cast<std::uint32_t>(out.points.size());
    for (std::size_t di = 0; di < ax.dp.size(); ++di) {
        const auto dp = ax.dp[di];
        if (dp * p.tp * p.pp * p.cp > avail) break;
        if ((dp * p.cp) % p.ep != 0 || (dp == 1 && p.sharding != sharding::none)) continue;
        j.parallel.dp = dp;
        key = key ? layout_key_at_dp(*key, j) : layout_key_of(j);
        const auto m = mbs.at(j, di, pi);
        if (out.micro_batches[m].empty() || l.levels[dp > 1 ? 1 : 0].empty()) ++out.idle_points;
        else out.points.push_back({dp, *key, m});
    }
    l.last = static_cast<std::uint32_t>(out.points.size());
}

/// The layouts of the axes `ax` for `job0` on `pool` within `avail` GPUs into `out` (with its inputs): those the
/// node shape (shape_allowed) and the framework's rules at some dp and level (rules_verdicts) allow, with at least
/// one point. `stage_of(j)`: the bottleneck stage the search takes for the layout on `j` (null for none).
template <class StageOf>
void list_layouts(const job_spec& job0, const gpu_pool& pool, const search_axes& ax, std::int64_t avail,
                  const plan_options& opt, StageOf&& stage_of, layout_list& out) {
    out = {.job = job0, .axes = ax, .gpus_per_node = pool.gpus_per_node, .avail = avail};
    micro_batch_table mbs(ax, out);
    job_spec j = job0;
    for (auto fw : ax.frameworks)
        for (auto tp : ax.tp)
            for (std::size_t pi = 0; pi < ax.pp.size(); ++pi)
                for (auto vpp : ax.vpp)
                    for (auto cp : ax.cp)
                        for (auto sh : ax.shardings)
                            for (auto ep : ax.ep) {
                                const auto pp = ax.pp[pi];
                                if (tp * pp * cp > avail) break;
                                set_layout(j, job0.runtime, ax, fw, tp, pp, vpp, cp, sh, ep, ax.dp.front(), opt);
                                if (!shape_allowed(j, pool, opt)) continue;
                                const auto rules = rules_verdicts(j, ax.dp, ax.recomputes);
                                if (!rules.any) continue;
                                listed_layout l{.fw = fw, .parallel = j.parallel,
                                                .overlap_grad_reduce = j.runtime.overlap_grad_reduce,
                                                .tp_comm_overlap = j.runtime.tp_comm_overlap};
                                allowed_levels(rules, 1, ax.recomputes, l.levels[0]);
                                allowed_levels(rules, 2, ax.recomputes, l.levels[1]);
                                list_dps(j, ax, pi, avail, l, mbs, out);
                                if (l.first == l.last) continue;
                                l.stage = stage_of(j);
                                out.layouts.push_back(std::move(l));
                            }
}

}  // namespace frenzy::detail
