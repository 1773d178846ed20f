#pragma once
// First come, first served with the user's own request: the GPU type and count from the trace. Strict queue order
// (no backfilling), as a plain batch queue. A request that does not fit in memory crashes after its start-up and
// is resubmitted (to the back of the queue) with twice the GPUs, as users do.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frenzy/sched/placement.hpp"
#include "frenzy/sched/scheduler.hpp"

namespace frenzy {

namespace detail {
/// The GPU count a user asks for after `oom` out-of-memory crashes: the request, doubled per crash. Without a
/// request: the job's smallest plan on any type.
inline int user_gpus(const job_view& j) {
    int base = j.requested_gpus;
    if (base <= 0) {
        base = 1 << 30;
        for (const auto& p : j.one_type()) base = std::min(base, p.gpus);
    }
    for (int k = 0; k < j.oom_failures && base < (1 << 24); ++k) base *= 2;
    return base;
}

/// Starts `j` on `gpus` GPUs of type `t` placed by `place` (best fit by default), using the fastest plan that fits
/// in memory there (holding all `gpus` the user asked for), or as an out-of-memory launch if none fits. False if no
/// room.
template <PlacementPolicy P = best_fit_placement>
bool start_user_sized(const cluster_state& cs, std::vector<int>& free, std::vector<int>& type_free, const job_view& j,
                      int t, int gpus, sched_decisions& d, const P& place = {}) {
    if (type_free[static_cast<std::size_t>(t)] < gpus) return false;
    const std::string& gpu = cs.types()[static_cast<std::size_t>(t)];
    const plan* p = plan_for_request(j.one_type(), gpu, gpus);
    const int tp = p && gpus % p->parallel.tp == 0 ? static_cast<int>(p->parallel.tp) : 1;
    auto a = place.place(cs, free, {t, gpus, tp});
    if (!a) return false;
    take(free, *a);
    type_free[static_cast<std::size_t>(t)] -= gpus;
    start_decision s;
    s.job = j.id;
    s.alloc = std::move(*a);
    if (p) {
        s.p = *p;
        s.p.gpus = gpus;  // the user holds what they asked for; the extra GPUs do not speed the job up
    } else {
        s.p.gpu = gpu;
        s.p.gpus = gpus;
        s.oom = true;
    }
    d.start.push_back(std::move(s));
    return true;
}
}  // namespace detail

/// fcfs with its placement a policy (PlacementPolicy; default best fit, as the other schedulers).
template <PlacementPolicy P = best_fit_placement>
class basic_fcfs_scheduler {
public:
    template <PlacementPolicy P2> using with_placement = basic_fcfs_scheduler<P2>;
    explicit basic_fcfs_scheduler(P placement = {}) : place_(std::move(placement)) {}
    std::string_view name() const { return "fcfs"; }
    double round_s() const { return 0; }
    bool event_driven() const { return true; }

    sched_decisions schedule(const sched_context& c) {
        sched_decisions d;
        const auto& cs = *c.cluster;
        std::vector<const job_view*> q;
        for (const auto& j : c.jobs)
            if (!j.running) q.push_back(&j);
        std::stable_sort(q.begin(), q.end(), [](const job_view* a, const job_view* b) {
            return a->queued_since_s != b->queued_since_s ? a->queued_since_s < b->queued_since_s : a->id < b->id;
        });
        auto free = cs.free_vector();
        std::vector<int> type_free;
        for (std::size_t t = 0; t < cs.types().size(); ++t) type_free.push_back(cs.free_gpus(static_cast<int>(t)));
        for (const job_view* j : q) {
            const int gpus = detail::user_gpus(*j);
            std::vector<int> types;
            const int rt = cs.type_index(j->requested_type);
            if (rt >= 0) types.push_back(rt);
            else
                for (std::size_t t = 0; t < cs.types().size(); ++t) types.push_back(static_cast<int>(t));
            bool possible = false;
            for (int t : types) possible |= gpus <= cs.total_gpus(t);
            if (!possible) {
                d.reject.push_back({j->id, "requested " + std::to_string(gpus) + " GPUs" +
                                               (rt >= 0 ? " of " + cs.types()[static_cast<std::size_t>(rt)] : std::string{}) +
                                               (j->oom_failures > 0 ? " (after " + std::to_string(j->oom_failures) + " out-of-memory crashes)" : "") +
                                               ", more than the cluster has"});
                continue;
            }
            bool started = false;
            for (int t : types)
                if (detail::start_user_sized(cs, free, type_free, *j, t, gpus, d, place_)) { started = true; break; }
            if (!started) break;  // head-of-line blocking
        }
        return d;
    }

private:
    P place_;
};
using fcfs_scheduler = basic_fcfs_scheduler<>;
static_assert(Scheduler<fcfs_scheduler>);

}  // namespace frenzy
