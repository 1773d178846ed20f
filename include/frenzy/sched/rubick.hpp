#pragma once
// A Rubick-like re-planner (baseline; Zhang et al., "Rubick: Exploiting Job Reconfigurability for Deep Learning
// Cluster Scheduling", arXiv 2408.08586): jobs start in arrival order (with backfilling) on the fastest plan within
// their requested GPUs, and at every decision the parallel layout and size of each running job are re-planned on its
// current GPU type, within its GPUs plus the type's idle ones: a job restarts on the plan that ends it earliest when
// that is at least `gain` of its remaining time earlier, its move cost (job_view::move_s) included. Unlike HAS's
// moves it never changes a job's GPU type and never shrinks a job for another.
#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/sched/fcfs.hpp"
#include "frenzy/sched/placement.hpp"
#include "frenzy/sched/scheduler.hpp"

namespace frenzy {

struct rubick_options {
    double gain = 0.1;       ///< a re-plan must end the job this fraction of its remaining time earlier
    double round_s = 300;    ///< re-plans also every this many seconds (besides arrivals and completions)
    double lock_factor = 10; ///< a job is not re-planned within this x its move cost of its last launch
};

inline void validate(const rubick_options& o) {
    check_bound("rubick.gain", o.gain, bounds::fraction);
    check_bound("rubick.round_s", o.round_s, bounds::sched_round_s);
    check_bound("rubick.lock_factor", o.lock_factor, bounds::rate);
}

class rubick_scheduler {
public:
    explicit rubick_scheduler(rubick_options o = {}) : opt_(o) { validate(opt_); }
    std::string_view name() const { return "rubick"; }
    double round_s() const { return opt_.round_s; }
    bool event_driven() const { return true; }

    sched_decisions schedule(const sched_context& c) {
        sched_decisions d;
        const cluster_state& cs = *c.cluster;
        free_ = cs.free_vector();
        type_free_.assign(cs.types().size(), 0);
        for (std::size_t t = 0; t < cs.types().size(); ++t) type_free_[t] = cs.free_gpus(static_cast<int>(t));
        for (const auto& j : c.jobs)
            if (!j.running) start_waiting(cs, j, d);
        for (const auto& j : c.jobs)
            if (j.running && j.alloc && j.current && j.current->tokens_per_s > 0) replan(c, j, d);
        return d;
    }

private:
    static double cost(const job_view& j) { return j.move_s > 0 ? j.move_s : j.restart_s; }

    /// Starts waiting job `j` on its fastest plan within its requested GPUs (its requested type, if any) that
    /// places now; it waits otherwise, and later jobs may start past it (backfilling).
    void start_waiting(const cluster_state& cs, const job_view& j, sched_decisions& d) {
        const int gpus = detail::user_gpus(j);
        const plan* best = nullptr;
        std::optional<allocation> where;
        for (const auto& p : j.one_type()) {
            const int t = cs.type_index(p.gpu);
            if (t < 0 || p.gpus > gpus || p.gpus > type_free_[static_cast<std::size_t>(t)]) continue;
            if (!j.requested_type.empty() && p.gpu != j.requested_type) continue;
            if (best && p.tokens_per_s * j.ratio_on(t) <= best->tokens_per_s * j.ratio_on(cs.type_index(best->gpu))) continue;
            auto a = place_.place(cs, free_, {t, p.gpus, static_cast<int>(p.parallel.tp)});
            if (a) {
                best = &p;
                where = std::move(a);
            }
        }
        if (!best) return;
        detail::take(free_, *where);
        type_free_[static_cast<std::size_t>(where->type)] -= best->gpus;
        d.start.push_back({j.id, *best, std::move(*where), false, false});
    }

    /// Re-plans running job `j` on its type within its GPUs plus the type's free ones (see the file's comment).
    void replan(const sched_context& c, const job_view& j, sched_decisions& d) {
        const cluster_state& cs = *c.cluster;
        if (c.now - j.run_started_s < opt_.lock_factor * cost(j)) return;
        const int t = j.alloc->type;
        const auto ut = static_cast<std::size_t>(t);
        const int have = j.alloc->gpus();
        const double left = j.predicted_end_s - c.now;
        const double ratio = j.ratio_on(t);
        const plan* best = nullptr;
        double best_end = left * (1.0 - opt_.gain);
        for (const auto& p : j.one_type()) {
            if (p.gpu != j.current->gpu || p.gpus > have + type_free_[ut] || !(p.tokens_per_s > 0)) continue;
            if (p.gpus == have && p.parallel == j.current->parallel) continue;
            const double end = cost(j) + j.remaining_s(p) / ratio * j.redo_factor();
            if (end < best_end) {
                best_end = end;
                best = &p;
            }
        }
        if (!best) return;
        detail::give(free_, *j.alloc);
        auto a = place_.place(cs, free_, {t, best->gpus, static_cast<int>(best->parallel.tp)});
        if (!a) {
            detail::take(free_, *j.alloc);
            return;
        }
        detail::take(free_, *a);
        type_free_[ut] += have - best->gpus;
        d.preempt.push_back(j.id);
        d.start.push_back({j.id, *best, std::move(*a), false, true});
    }

    rubick_options opt_;
    best_fit_placement place_;
    std::vector<int> free_, type_free_;
};
static_assert(Scheduler<rubick_scheduler>);

}  // namespace frenzy
