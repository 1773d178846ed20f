#pragma once
// HAS, the heterogeneity-aware scheduler. On every arrival, completion or failure it walks the waiting jobs in the
// order of a QueueOrder policy and gives each the plan that the cluster can satisfy now with the earliest predicted
// completion, placed by a PlacementPolicy. A job whose best option is to wait for busy GPUs waits and holds a
// reservation at its predicted start; later jobs are backfilled only where they delay no reservation, the head
// job's first of all (conservative backfilling, Mu'alem & Feitelson, IEEE TPDS 2001). Predictions use the running
// jobs' predicted ends. Aging lets long-waiting jobs move forward.
#include <algorithm>
#include <cmath>
#include <concepts>
#include <limits>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "frenzy/sched/cluster_state.hpp"
#include "frenzy/sched/placement.hpp"
#include "frenzy/sched/scheduler.hpp"

namespace frenzy {

/// Queue order: lower key goes first (ties keep arrival order). `best_remaining_gpu_s` is the least GPU-seconds
/// the job still needs over all its plans.
template <class Q>
concept QueueOrder = requires(const Q& q, const job_view& j, double best_remaining_gpu_s, double now) {
    { q.key(j, best_remaining_gpu_s, now) } -> std::convertible_to<double>;
};

/// Smallest remaining GPU-time first (the SRPT rule for average completion time, in its "area" form for jobs of
/// several GPUs), aged: a job that has waited `aging_s` since submission counts as half its size.
struct shortest_remaining_first {
    double aging_s = 4 * 3600.0;
    double key(const job_view& j, double best_remaining_gpu_s, double now) const {
        const double wait = std::max(0.0, now - j.submit_s);
        return best_remaining_gpu_s / (1.0 + (aging_s > 0 ? wait / aging_s : 0.0));
    }
};
static_assert(QueueOrder<shortest_remaining_first>);

/// First come, first served.
struct arrival_order {
    double key(const job_view& j, double, double) const { return j.submit_s; }
};
static_assert(QueueOrder<arrival_order>);

struct has_options {
    /// On each GPU type, plans using up to (1 + slack) x the least GPU-seconds of the job on that type are
    /// candidates: scale out only while it stays efficient.
    double efficiency_slack = 0.25;
    /// When GPUs would otherwise idle, a job may also take a plan using up to (1 + idle_slack) x its least
    /// GPU-seconds, if that plan needs no more than its share of the type's free GPUs (free / jobs still to place).
    /// 0 turns this off.
    double idle_slack = 1.0;
    /// A job takes at most this share of a type's GPUs (unless its smallest plan there needs more): a
    /// non-preemptive scheduler must not let one job scale over a whole pool that later arrivals then wait for.
    double max_share = 1.0;
    /// Equipartition: a job takes at most equi_share x (the type's GPUs / jobs in the system), unless its smallest
    /// plan there needs more, so that jobs are wide when few are in the system and narrow under load (EQUI for
    /// moldable jobs, cf. McCann, Vaswani & Zahorjan, ACM TOCS 1993). 0 turns this off.
    double equi_share = 16.0;
    /// With nobody waiting, restart running jobs on more of the idle GPUs of their type when that ends them at
    /// least expand_gain of their remaining time earlier (within idle_slack and the share caps).
    bool expand_idle = true;
    double expand_gain = 0.2;
    bool backfill = true;       ///< false: strict priority order, nothing starts past a waiting head job
    /// Waiting jobs (in queue order) that hold a reservation; later ones that choose to wait do not reserve (they
    /// still start only where they delay no reservation). Bounds the decision cost with hundreds of waiting jobs.
    int max_reservations = 32;
    double startup_s = 30;      ///< launch cost assumed in predictions (the simulator's own value is what counts)
};

template <PlacementPolicy P = best_fit_placement, QueueOrder Q = shortest_remaining_first>
class has_scheduler {
public:
    explicit has_scheduler(has_options o = {}, P placement = {}, Q order = {})
        : opt_(o), place_(std::move(placement)), order_(std::move(order)) {}

    std::string_view name() const { return "has"; }
    double round_s() const { return 0; }
    bool event_driven() const { return true; }
    const has_options& options() const { return opt_; }

    sched_decisions schedule(const sched_context& c) {
        sched_decisions d;
        const cluster_state& cs = *c.cluster;
        const double now = c.now;
        const std::size_t ntypes = cs.types().size();
        free_ = cs.free_vector();
        int total_free = 0;
        for (std::size_t t = 0; t < ntypes; ++t) total_free += cs.free_gpus(static_cast<int>(t));
        if (total_free == 0) return d;  // nothing can start; reservations are recomputed at the next decision

        // Free-GPU profile per type over time: running jobs release at their predicted end.
        releases_.assign(ntypes, {});
        for (const auto& j : c.jobs)
            if (j.running && j.alloc)
                releases_[static_cast<std::size_t>(j.alloc->type)].push_back({j.predicted_end_s, j.alloc->gpus()});
        profile_.resize(ntypes);
        for (std::size_t t = 0; t < ntypes; ++t) profile_[t].reset(now, cs.free_gpus(static_cast<int>(t)), releases_[t]);

        // Queue order.
        order_buf_.clear();
        for (std::size_t i = 0; i < c.jobs.size(); ++i) {
            const auto& j = c.jobs[i];
            if (j.running) continue;
            double best = std::numeric_limits<double>::infinity();
            for (const auto& p : *j.plans) best = std::min(best, j.remaining_s(p) * p.gpus);
            order_buf_.push_back({order_.key(j, best, now), i});
        }
        std::stable_sort(order_buf_.begin(), order_buf_.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });

        type_free_.assign(ntypes, 0);
        for (std::size_t t = 0; t < ntypes; ++t) type_free_[t] = cs.free_gpus(static_cast<int>(t));
        std::size_t left = order_buf_.size();
        int reservations = 0;
        for (const auto& [key, idx] : order_buf_) {
            if (total_free == 0) break;
            const job_view& j = c.jobs[idx];
            const std::size_t share_div = left--;
            cands_.clear();
            // Efficient plans per type.
            least_.assign(ntypes, std::numeric_limits<double>::infinity());
            min_gpus_.assign(ntypes, std::numeric_limits<int>::max());
            ptype_.clear();
            for (const auto& p : *j.plans) {
                const int t = cs.type_index(p.gpu);
                ptype_.push_back(t);
                if (t < 0) continue;
                const auto ut = static_cast<std::size_t>(t);
                least_[ut] = std::min(least_[ut], j.remaining_s(p) * p.gpus);
                min_gpus_[ut] = std::min(min_gpus_[ut], p.gpus);
            }
            for (std::size_t k = 0; k < j.plans->size(); ++k) {
                const auto& p = (*j.plans)[k];
                const int t = ptype_[k];
                if (t < 0) continue;
                const auto ut = static_cast<std::size_t>(t);
                const double gs = j.remaining_s(p) * p.gpus;
                const bool efficient = gs <= (1.0 + opt_.efficiency_slack) * least_[ut] * (1 + 1e-12);
                const bool uses_idle = opt_.idle_slack > 0 && p.gpus <= static_cast<double>(type_free_[ut]) / static_cast<double>(share_div) &&
                                       gs <= (1.0 + opt_.idle_slack) * least_[ut] * (1 + 1e-12);
                double cap = opt_.max_share * cs.total_gpus(t);
                if (opt_.equi_share > 0) cap = std::min(cap, opt_.equi_share * cs.total_gpus(t) / static_cast<double>(c.jobs.size()));
                const bool within_share = p.gpus <= std::max(static_cast<double>(min_gpus_[ut]), cap);
                if ((efficient || uses_idle) && within_share) cands_.push_back({0.0, 0.0, &p, t});
            }
            // Predicted completion of each: at the earliest time its GPUs are free for its whole run without
            // delaying any job that already holds a reservation (conservative backfilling).
            double best_now = std::numeric_limits<double>::infinity();
            for (auto& cd : cands_) {
                const double run = opt_.startup_s + j.remaining_s(*cd.p);
                cd.start = profile_[static_cast<std::size_t>(cd.type)].fits_now(cd.p->gpus, run) ? now : -1;
                if (cd.start == now) best_now = std::min(best_now, run);
            }
            for (auto& cd : cands_) {
                const double run = opt_.startup_s + j.remaining_s(*cd.p);
                if (cd.start == now) cd.completion = now + run;
                else if (run >= best_now) cd.completion = std::numeric_limits<double>::infinity();  // cannot beat now
                else {
                    cd.start = profile_[static_cast<std::size_t>(cd.type)].earliest(cd.p->gpus, run);
                    cd.completion = cd.start + run;
                }
            }
            std::stable_sort(cands_.begin(), cands_.end(),
                             [](const cand& a, const cand& b) { return a.completion < b.completion; });
            bool waits = false;
            for (const auto& cd : cands_) {
                if (!std::isfinite(cd.completion)) break;
                const auto t = static_cast<std::size_t>(cd.type);
                const double run = cd.completion - cd.start;
                if (cd.start > now) {
                    // Best is to wait for this type: reserve it, so that later jobs do not delay this one.
                    if (reservations < opt_.max_reservations) {
                        profile_[t].claim(cd.start, run, cd.p->gpus);
                        ++reservations;
                    }
                    waits = true;
                    break;
                }
                auto a = place_.place(cs, free_, {cd.type, cd.p->gpus, static_cast<int>(cd.p->parallel.tp)});
                if (!a) continue;  // fragmented: try the next option
                detail::take(free_, *a);
                type_free_[t] -= cd.p->gpus;
                profile_[t].claim(now, run, cd.p->gpus);
                total_free -= cd.p->gpus;
                d.start.push_back({j.id, *cd.p, std::move(*a), false});
                break;
            }
            if (waits && !opt_.backfill) break;
        }
        if (opt_.expand_idle && d.start.size() == order_buf_.size() && total_free > 0) expand(c, d);
        return d;
    }

    /// When nobody waits and GPUs idle: restart running jobs on a larger plan of the same type (longest remaining
    /// first) if that ends them at least `expand_gain` of their remaining time earlier, restart cost included.
    void expand(const sched_context& c, sched_decisions& d) {
        const cluster_state& cs = *c.cluster;
        std::vector<const job_view*> run;
        for (const auto& j : c.jobs)
            if (j.running && j.alloc && j.current && j.current->tokens_per_s > 0) run.push_back(&j);
        std::stable_sort(run.begin(), run.end(), [&](const job_view* a, const job_view* b) {
            return a->predicted_end_s > b->predicted_end_s;
        });
        for (const job_view* j : run) {
            const int t = j->alloc->type;
            const auto ut = static_cast<std::size_t>(t);
            if (type_free_[ut] <= 0) continue;
            const double left = j->predicted_end_s - c.now;
            const int have = j->alloc->gpus();
            double least = std::numeric_limits<double>::infinity();
            for (const auto& p : *j->plans)
                if (p.gpu == j->current->gpu) least = std::min(least, j->remaining_s(p) * p.gpus);
            const double cap = std::min(opt_.max_share * cs.total_gpus(t),
                                        opt_.equi_share > 0 ? opt_.equi_share * cs.total_gpus(t) / static_cast<double>(c.jobs.size())
                                                            : std::numeric_limits<double>::infinity());
            const plan* best = nullptr;
            double best_end = left * (1.0 - opt_.expand_gain);
            for (const auto& p : *j->plans) {
                if (p.gpu != j->current->gpu || p.gpus <= have || p.gpus > have + type_free_[ut] || p.gpus > cap) continue;
                if (j->remaining_s(p) * p.gpus > (1.0 + opt_.idle_slack) * least * (1 + 1e-12)) continue;
                const double end = opt_.startup_s + j->remaining_s(p);
                if (end < best_end) {
                    best_end = end;
                    best = &p;
                }
            }
            if (!best) continue;
            detail::give(free_, *j->alloc);
            auto a = place_.place(cs, free_, {t, best->gpus, static_cast<int>(best->parallel.tp)});
            if (!a) {
                detail::take(free_, *j->alloc);
                continue;
            }
            detail::take(free_, *a);
            type_free_[ut] -= best->gpus - have;
            d.preempt.push_back(j->id);
            d.start.push_back({j->id, *best, std::move(*a), false});
        }
    }

    /// Free GPUs of one type as a step function of time.
    class capacity_profile {
    public:
        void reset(double now, int free_now, std::vector<std::pair<double, int>>& releases) {
            std::sort(releases.begin(), releases.end());
            t_.assign(1, now);
            f_.assign(1, free_now);
            for (const auto& [when, g] : releases) {
                const double w = std::max(now, when);
                if (w == t_.back()) f_.back() += g;
                else {
                    t_.push_back(w);
                    f_.push_back(f_.back() + g);
                }
            }
        }
        bool fits_now(int g, double dur) const { return fits_from(0, g, dur); }
        /// Earliest step start at which `g` GPUs stay free for `dur` seconds; infinity if never. Linear: a window
        /// that fails at step k cannot start anywhere before k + 1.
        double earliest(int g, double dur) const {
            std::size_t i = 0;
            while (i < t_.size()) {
                if (f_[i] < g) {
                    ++i;
                    continue;
                }
                const double end = t_[i] + dur;
                std::size_t k = i + 1;
                while (k < t_.size() && t_[k] < end && f_[k] >= g) ++k;
                if (k == t_.size() || t_[k] >= end) return t_[i];
                i = k + 1;
            }
            return std::numeric_limits<double>::infinity();
        }
        void claim(double s, double dur, int g) {
            const std::size_t a = split(s), b = split(s + dur);
            for (std::size_t i = a; i < b; ++i) f_[i] -= g;
        }

    private:
        bool fits_from(std::size_t i, int g, double dur) const {
            const double end = t_[i] + dur;
            for (std::size_t k = i; k < t_.size() && (k == i || t_[k] < end); ++k)
                if (f_[k] < g) return false;
            return true;
        }
        std::size_t split(double x) {
            auto it = std::lower_bound(t_.begin(), t_.end(), x);
            const auto k = static_cast<std::size_t>(it - t_.begin());
            if (it != t_.end() && *it == x) return k;
            t_.insert(it, x);
            f_.insert(f_.begin() + static_cast<std::ptrdiff_t>(k), f_[k - 1]);
            return k;
        }
        std::vector<double> t_;
        std::vector<int> f_;
    };

private:
    struct cand {
        double completion;
        double start;
        const plan* p;
        int type;
    };

    has_options opt_;
    P place_;
    Q order_;
    std::vector<int> free_, type_free_;
    std::vector<std::vector<std::pair<double, int>>> releases_;
    std::vector<capacity_profile> profile_;
    std::vector<std::pair<double, std::size_t>> order_buf_;
    std::vector<cand> cands_;
    std::vector<double> least_;
    std::vector<int> min_gpus_;
    std::vector<int> ptype_;
};
static_assert(Scheduler<has_scheduler<>>);

}  // namespace frenzy
