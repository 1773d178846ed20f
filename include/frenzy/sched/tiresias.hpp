#pragma once
// Tiresias (Gu et al., NSDI'19): discretised two-dimensional least-attained-service (2D-LAS). A job's attained
// service is GPUs x time it has run; K priority queues split by thresholds on it, FIFO inside a queue, preemptive.
// Heterogeneity-unaware: a job's size is the user's request (doubled after an out-of-memory crash, as for fcfs)
// and the GPUs it gets are any type with room, in cluster order. Starvation: a job waiting longer than
// `promote_knob` x its executed time goes back to the highest queue (Tiresias' PROMOTE_KNOB).
#include <algorithm>
#include <string_view>
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

class tiresias_scheduler {
public:
    explicit tiresias_scheduler(tiresias_options o = {}) : opt_(std::move(o)) {}
    std::string_view name() const { return "tiresias"; }
    double round_s() const { return opt_.round_s; }
    bool event_driven() const { return true; }

    int queue_of(const job_view& j, double now) const {
        if (opt_.promote_knob > 0 && !j.running && j.executed_s > 0 && now - j.queued_since_s > opt_.promote_knob * j.executed_s)
            return 0;
        int q = 0;
        while (q < static_cast<int>(opt_.thresholds_gpu_s.size()) && j.attained_gpu_s >= opt_.thresholds_gpu_s[static_cast<std::size_t>(q)]) ++q;
        return q;
    }

    sched_decisions schedule(const sched_context& c) {
        sched_decisions d;
        const auto& cs = *c.cluster;
        std::vector<const job_view*> all;
        for (const auto& j : c.jobs) all.push_back(&j);
        std::vector<int> qs(c.jobs.size());
        for (std::size_t i = 0; i < c.jobs.size(); ++i) qs[i] = queue_of(c.jobs[i], c.now);
        auto qof = [&](const job_view* j) { return qs[static_cast<std::size_t>(j - c.jobs.data())]; };
        std::stable_sort(all.begin(), all.end(), [&](const job_view* a, const job_view* b) {
            if (qof(a) != qof(b)) return qof(a) < qof(b);
            return a->submit_s != b->submit_s ? a->submit_s < b->submit_s : a->id < b->id;
        });
        int total_up = 0;
        for (std::size_t t = 0; t < cs.types().size(); ++t) total_up += cs.up_gpus(static_cast<int>(t));
        // The jobs that should run: greedily in priority order while the cluster (as one pool) has room.
        int used = 0;
        std::vector<const job_view*> keep, want;
        for (const job_view* j : all) {
            const int g = j->running ? j->alloc->gpus() : detail::user_gpus(*j);
            bool possible = false;
            for (std::size_t t = 0; t < cs.types().size(); ++t) possible |= g <= cs.total_gpus(static_cast<int>(t));
            if (!j->running && !possible) {
                d.reject.push_back({j->id, "requested " + std::to_string(g) + " GPUs, more than any GPU type of the cluster has"});
                continue;
            }
            if (used + g <= total_up) {
                used += g;
                (j->running ? keep : want).push_back(j);
            } else if (j->running) {
                d.preempt.push_back(j->id);
            }
        }
        auto free = cs.free_vector();
        std::vector<int> type_free;
        for (std::size_t t = 0; t < cs.types().size(); ++t) type_free.push_back(cs.free_gpus(static_cast<int>(t)));
        for (int id : d.preempt)
            for (const auto& j : c.jobs)
                if (j.id == id) {
                    detail::give(free, *j.alloc);
                    type_free[static_cast<std::size_t>(j.alloc->type)] += j.alloc->gpus();
                }
        for (const job_view* j : want) {
            const int g = detail::user_gpus(*j);
            for (std::size_t t = 0; t < cs.types().size(); ++t)
                if (detail::start_user_sized(cs, free, type_free, *j, static_cast<int>(t), g, d)) break;
        }
        return d;
    }

private:
    tiresias_options opt_;
};
static_assert(Scheduler<tiresias_scheduler>);

}  // namespace frenzy
