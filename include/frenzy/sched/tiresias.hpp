#pragma once
// Tiresias (Gu et al., NSDI'19): discretised two-dimensional least-attained-service (2D-LAS). A job's attained
// service is GPUs x time it has run; K priority queues split by thresholds on it, FIFO inside a queue, preemptive.
// Heterogeneity-unaware: a job's size is the user's request (doubled after an out-of-memory crash, as for fcfs)
// and the GPUs it gets are any type with room, in cluster order. Starvation: a job waiting longer than
// `promote_knob` x its executed time goes back to the highest queue for good, its service counted afresh
// (Tiresias' solve_starvation / PROMOTE_KNOB).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <string_view>
#include <utility>
#include <vector>

#include "frenzy/sched/fcfs.hpp"
#include "frenzy/sched/placement.hpp"
#include "frenzy/sched/scheduler.hpp"

namespace frenzy {

struct tiresias_options {
    std::vector<double> thresholds_gpu_s{3600.0, 36000.0};  ///< queue i holds attained service < thresholds[i]
    double round_s = 60;        ///< re-evaluation period (demotions happen between events)
    double promote_knob = 8;    ///< 0 disables promotion
};

/// Tiresias with its placement a policy (PlacementPolicy; default best fit, as the other schedulers).
template <PlacementPolicy P = best_fit_placement>
class basic_tiresias_scheduler {
public:
    template <PlacementPolicy P2> using with_placement = basic_tiresias_scheduler<P2>;
    explicit basic_tiresias_scheduler(tiresias_options o = {}, P placement = {}) : opt_(std::move(o)), place_(std::move(placement)) {}
    std::string_view name() const { return "tiresias"; }
    double round_s() const { return opt_.round_s; }
    bool event_driven() const { return true; }

    /// Queue of a job by its attained service alone (a job never promoted: service counted from zero).
    int queue_of(const job_view& j, double /*now*/) const { return queue_for(j.attained_gpu_s); }

    /// Following SymbioticLab/Tiresias simulator/run_sim.py (commit b0ef844, dlas_sim_jobs with gputime): queues
    /// are persistent; a running job is demoted when its GPU-time since its last promotion reaches the queue's
    /// limit; a pending job that has run and waited `promote_knob` x its executed time (since the last promotion)
    /// is promoted to queue 0 and its executed time reset to 0; jobs are admitted in queue order, within a queue in
    /// list order, where after every decision the pending jobs of a queue move behind its running ones (so running
    /// jobs come first within a queue). Admission counts GPUs per GPU type (run_sim's placement fits a job on real
    /// nodes; a type-blind job takes the first type in cluster order with room).
    sched_decisions schedule(const sched_context& c) {
        sched_decisions d;
        update_queues(c);
        order_jobs(c);
        pending_after_.clear();
        admit(c, d);
        requeue_pending();
        forget_departed(c);
        return d;
    }

    /// State of new jobs; demotion of running jobs past their queue's limit, promotion of starved pending ones.
    void update_queues(const sched_context& c) {
        for (const auto& j : c.jobs) {
            auto [it, fresh] = st_.try_emplace(j.id);
            auto& s = it->second;
            if (fresh) s.seq = next_++;
            const double svc = j.attained_gpu_s - s.base_gpu_s;
            if (j.running) {
                while (s.q < static_cast<int>(opt_.thresholds_gpu_s.size()) && svc >= opt_.thresholds_gpu_s[static_cast<std::size_t>(s.q)]) {
                    ++s.q;
                    s.seq = next_++;  // appended to its new queue
                }
            } else if (opt_.promote_knob > 0 && s.q > 0) {
                const double exec = j.executed_s - s.base_exec_s;
                if (exec > 0 && c.now - j.queued_since_s >= opt_.promote_knob * exec) {
                    s.q = 0;
                    s.base_gpu_s = j.attained_gpu_s;
                    s.base_exec_s = j.executed_s;
                    s.seq = next_++;
                    ++promotions_;
                }
            }
        }
    }

    /// order_: the jobs sorted on (queue, running first, list position), copied out of the state map once (no map
    /// look-ups in the comparator). Within a queue running jobs come first, so a waiting job never preempts one of
    /// its own queue, a job just demoted included (run_sim.py keeps running jobs ahead of a queue's pending ones).
    void order_jobs(const sched_context& c) {
        keyed_.clear();
        for (const auto& j : c.jobs) {
            const auto& s = st_.at(j.id);
            keyed_.push_back({2 * s.q + (j.running ? 0 : 1), s.seq, &j});
        }
        std::sort(keyed_.begin(), keyed_.end(), [](const auto& a, const auto& b) {
            return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) < std::get<0>(b) : std::get<1>(a) < std::get<1>(b);
        });
        order_.clear();
        for (const auto& k : keyed_) order_.push_back(std::get<2>(k));
    }

    /// Admission in order, counting GPUs per type: a running job keeps its GPUs while its type has room for it
    /// (else it is preempted), a pending one takes the first type with room; then the admitted ones are placed.
    /// Jobs left waiting go to pending_after_.
    void admit(const sched_context& c, sched_decisions& d) {
        const auto& cs = *c.cluster;
        const std::size_t ntypes = cs.types().size();
        std::vector<int> room(ntypes);
        for (std::size_t t = 0; t < ntypes; ++t) room[t] = cs.up_gpus(static_cast<int>(t));
        int maxcap = 0;
        for (std::size_t t = 0; t < ntypes; ++t) maxcap = std::max(maxcap, cs.total_gpus(static_cast<int>(t)));
        std::vector<std::pair<const job_view*, int>> want;
        auto free = cs.free_vector();
        std::vector<int> type_free(ntypes);
        for (std::size_t t = 0; t < ntypes; ++t) type_free[t] = cs.free_gpus(static_cast<int>(t));
        for (const job_view* j : order_) {
            if (j->running) {
                const auto t = static_cast<std::size_t>(j->alloc->type);
                if (room[t] >= j->alloc->gpus()) room[t] -= j->alloc->gpus();
                else {
                    d.preempt.push_back(j->id);
                    pending_after_.push_back(j);
                    detail::give(free, *j->alloc);
                    type_free[t] += j->alloc->gpus();
                }
                continue;
            }
            const int g = detail::user_gpus(*j);
            const int rt = cs.type_index(j->requested_type);
            if (g > (rt >= 0 ? cs.total_gpus(rt) : maxcap)) {
                d.reject.push_back({j->id, "requested " + std::to_string(g) + " GPUs" +
                                               (rt >= 0 ? " of " + cs.types()[static_cast<std::size_t>(rt)] : std::string{}) +
                                               ", more than the cluster has"});
                continue;
            }
            int pick = -1;
            for (std::size_t t = 0; t < ntypes && pick < 0; ++t)
                if ((rt < 0 || static_cast<int>(t) == rt) && room[t] >= g) pick = static_cast<int>(t);
            if (pick < 0) {
                pending_after_.push_back(j);
                continue;
            }
            room[static_cast<std::size_t>(pick)] -= g;
            want.push_back({j, pick});
        }
        for (const auto& [j, t] : want) {
            const int g = detail::user_gpus(*j);
            if (!detail::start_user_sized(cs, free, type_free, *j, t, g, d, place_)) pending_after_.push_back(j);  // fragmented
        }
    }

    /// Pending jobs move behind the running ones of their queue, keeping their order.
    void requeue_pending() {
        std::stable_sort(pending_after_.begin(), pending_after_.end(), [&](const job_view* a, const job_view* b) {
            const auto& sa = st_.at(a->id);
            const auto& sb = st_.at(b->id);
            return sa.q != sb.q ? sa.q < sb.q : sa.seq < sb.seq;
        });
        for (const job_view* j : pending_after_) st_.at(j->id).seq = next_++;
    }

    /// Forgets jobs that left (bounded state).
    void forget_departed(const sched_context& c) {
        if (st_.size() > 2 * c.jobs.size() + 64) {
            std::map<int, state> keep;
            for (const auto& j : c.jobs) keep.emplace(j.id, st_.at(j.id));
            st_.swap(keep);
        }
    }

    /// Promotions to queue 0 so far (starvation relief).
    int promotions() const { return promotions_; }

private:
    int queue_for(double svc) const {
        int q = 0;
        while (q < static_cast<int>(opt_.thresholds_gpu_s.size()) && svc >= opt_.thresholds_gpu_s[static_cast<std::size_t>(q)]) ++q;
        return q;
    }
    struct state {
        int q = 0;
        std::uint64_t seq = 0;
        double base_gpu_s = 0, base_exec_s = 0;  // service and executed time at the last promotion
    };
    tiresias_options opt_;
    P place_;
    std::map<int, state> st_;
    std::uint64_t next_ = 0;
    int promotions_ = 0;
    std::vector<const job_view*> order_, pending_after_;
    std::vector<std::tuple<int, std::uint64_t, const job_view*>> keyed_;
};
using tiresias_scheduler = basic_tiresias_scheduler<>;
static_assert(Scheduler<tiresias_scheduler>);

}  // namespace frenzy
