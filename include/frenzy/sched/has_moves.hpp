#pragma once
// HAS's moves (issue 56; has_options::moves): after the waiting jobs are placed, a running job may be shrunk on its
// type so that a waiting job starts now, and a running job may be moved to another plan (more or fewer GPUs,
// another type) when that ends it earlier by a margin, the move's cost included (job_view::move_s: checkpoint save
// and resharding load, restart, start-up, lost work). A job moves at most max_moves times and not again before its
// last move has paid off. Moves are a preemption plus a start of the same job marked start_decision::move.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frenzy/sched/capacity_profile.hpp"
#include "frenzy/sched/detail/speed_ratios.hpp"
#include "frenzy/sched/has_options.hpp"
#include "frenzy/sched/placement.hpp"
#include "frenzy/sched/scheduler.hpp"

namespace frenzy::detail {

/// What the move decision reads and changes of HAS's state in one decision (references into the policy).
template <class Place, class Order>
struct move_state {
    const sched_context& c;
    const has_options& opt;
    const Place& place;
    std::vector<int>& free;                    ///< free GPUs per node, as HAS's decision has left them
    std::vector<int>& type_free;               ///< free GPUs per type, the same
    std::vector<capacity_profile>& profile;    ///< free GPUs per type over time, reservations claimed
    const speed_ratios& ratios;                ///< learned speed ratios
    Order& order;                              ///< waiting jobs in queue order: (key, index into c.jobs)
    std::vector<char>& started;                ///< per queue position: started by this decision
};

/// HAS's move decision and what it remembers of each job's moves.
class has_mover {
public:
    struct record {
        int moves = 0;
        double paid_off_s = 0;  ///< when the last move has paid off (a later move may be made from then on)
    };

    /// Shrinks, then moves (see the file's comment). `others_wait`: some waiting job did not start.
    template <class Place, class Order>
    void decide(move_state<Place, Order>& s, sched_decisions& d, bool others_wait) {
        collect_ends(s, d);
        if (others_wait) shrink_for_waiting(s, d);
        move_running(s, d, others_wait);
    }

    /// What this policy remembers of job `id`'s moves.
    record of(int id) const {
        auto it = book_.find(id);
        return it == book_.end() ? record{} : it->second;
    }

    /// Seconds moving `j` costs: its host's move cost, else its restart cost.
    static double cost(const job_view& j) { return j.move_s > 0 ? j.move_s : j.restart_s; }

    /// Whether running job `j` may move now: a plan on one type, not yet moved max_moves times, its last move
    /// paid off, and not preempted or restarted by this decision already.
    bool may_move(const job_view& j, const has_options& opt, double now, const sched_decisions& d) const {
        if (!j.running || !j.alloc || !j.current || !(j.current->tokens_per_s > 0)) return false;
        const record r = of(j.id);
        if (r.moves >= opt.max_moves || now < r.paid_off_s) return false;
        return std::find(d.preempt.begin(), d.preempt.end(), j.id) == d.preempt.end();
    }

    /// When a move of a job that would end `left` s from now, and instead computes `rem` s after a move of `cost`
    /// s, has paid off: when the new run's progress catches up with the old run's, cost x left / (left - rem) s
    /// after the move (equal progress: (T - cost) / rem = T / left).
    static double payoff_s(double now, double cost, double left, double rem) {
        return left > rem ? now + cost * left / (left - rem) : std::numeric_limits<double>::infinity();
    }

private:
    /// Predicted end and GPUs of every running job, per type, earliest first (when a type's GPUs free up).
    template <class Place, class Order>
    void collect_ends(move_state<Place, Order>& s, const sched_decisions& d) {
        ends_.assign(s.type_free.size(), {});
        for (const auto& j : s.c.jobs)
            if (j.running && j.alloc && std::find(d.preempt.begin(), d.preempt.end(), j.id) == d.preempt.end())
                ends_[static_cast<std::size_t>(j.alloc->type)].push_back({j.predicted_end_s, j.alloc->gpus()});
        for (auto& e : ends_) std::sort(e.begin(), e.end());
    }

    /// When `need` more GPUs than are free now free up on type `t` by the running jobs' predicted ends (a lower
    /// bound on a waiting job's start there: reservations are not counted, so the gain of a shrink is not inflated).
    double release_s(std::size_t t, int need, double now) const {
        int got = 0;
        for (const auto& [end, g] : ends_[t])
            if ((got += g) >= need) return std::max(now, end);
        return std::numeric_limits<double>::infinity();
    }

    /// A waiting job's fastest plan per the efficiency rule, as HAS's preemption picks it; null if none.
    template <class Place, class Order>
    const plan* waiting_plan(move_state<Place, Order>& s, const job_view& w, int& type, double& run) const {
        const cluster_state& cs = *s.c.cluster;
        const double launch = w.launches > 0 ? w.restart_s : s.opt.startup_s;
        const plan* best = nullptr;
        for (const auto& p : w.one_type()) {
            const int t = cs.type_index(p.gpu);
            if (t < 0) continue;
            const double gs = s.ratios.rem(w, p, t) * p.gpus;
            bool efficient = true;
            for (const auto& q : w.one_type())
                if (q.gpu == p.gpu && s.ratios.rem(w, q, t) * q.gpus * (1.0 + s.opt.efficiency_slack) * (1 + 1e-12) < gs) efficient = false;
            const double r = launch + s.ratios.rem(w, p, t);
            if (efficient && r < run) { run = r; best = &p; type = t; }
        }
        return best;
    }

    /// For the first preempt_scan waiting jobs that did not start: shrink one running job on the waiting job's
    /// type when its earlier start outweighs the shrunk job's delay by move_gain of that job's remaining time.
    template <class Place, class Order>
    void shrink_for_waiting(move_state<Place, Order>& s, sched_decisions& d) {
        int scanned = 0;
        for (std::size_t k = 0; k < s.order.size() && scanned < s.opt.preempt_scan; ++k) {
            if (s.started[k]) continue;
            ++scanned;
            const job_view& w = s.c.jobs[s.order[k].second];
            int t = -1;
            double run = std::numeric_limits<double>::infinity();
            const plan* pw = waiting_plan(s, w, t, run);
            if (!pw) continue;
            const auto ut = static_cast<std::size_t>(t);
            const int need = pw->gpus - s.type_free[ut];
            if (need <= 0) continue;  // it did not start for fragmentation or a reservation: not a shrink's work
            const double gain = release_s(ut, need, s.c.now) - s.c.now;
            if (!(gain > 0)) continue;
            if (shrink_one(s, d, w, *pw, t, need, gain)) s.started[k] = 1;
        }
    }

    /// The running job on type `t` whose shrink by `need` GPUs delays it least, if its delay plus the margin is
    /// below `gain`: shrinks it and starts `w` on `pw` (true).
    template <class Place, class Order>
    bool shrink_one(move_state<Place, Order>& s, sched_decisions& d, const job_view& w, const plan& pw, int t, int need, double gain) {
        const job_view* victim = nullptr;
        const plan* to = nullptr;
        double best_net = 0;
        for (const auto& v : s.c.jobs) {
            if (!may_move(v, s.opt, s.c.now, d) || v.alloc->type != t || v.id == w.id) continue;
            if (s.c.now - v.run_started_s < std::max(s.opt.preempt_lock_s, 10 * v.restart_s)) continue;
            const int keep = v.alloc->gpus() - need;
            const double left = v.predicted_end_s - s.c.now;
            for (const auto& q : v.one_type()) {
                if (q.gpu != v.current->gpu || q.gpus > keep) continue;
                const double delay = cost(v) + s.ratios.rem(v, q, t) * v.redo_factor() - left;
                const double net = gain - delay - s.opt.move_gain * left;
                if (net > best_net) { best_net = net; victim = &v; to = &q; }
            }
        }
        if (!victim) return false;
        return shrink_and_start(s, d, *victim, *to, w, pw, t);
    }

    /// Places `v` on `to` and `w` on `pw` in `v`'s GPUs plus the free ones; undone when either does not place.
    template <class Place, class Order>
    bool shrink_and_start(move_state<Place, Order>& s, sched_decisions& d, const job_view& v, const plan& to,
                          const job_view& w, const plan& pw, int t) {
        const cluster_state& cs = *s.c.cluster;
        give(s.free, *v.alloc);
        auto av = s.place.place(cs, s.free, {t, to.gpus, static_cast<int>(to.parallel.tp)});
        if (av) take(s.free, *av);
        auto aw = av ? s.place.place(cs, s.free, {t, pw.gpus, static_cast<int>(pw.parallel.tp)}) : std::nullopt;
        if (!aw) {
            if (av) give(s.free, *av);
            take(s.free, *v.alloc);
            return false;
        }
        take(s.free, *aw);
        s.type_free[static_cast<std::size_t>(t)] -= pw.gpus + to.gpus - v.alloc->gpus();
        d.preempt.push_back(v.id);
        d.start.push_back({v.id, to, std::move(*av), false, true});
        d.start.push_back({w.id, pw, std::move(*aw), false, false});
        auto& r = book_[v.id];
        r.moves++;
        r.paid_off_s = s.c.now + cost(v);  // paid by the started job: the shrunk one may move once it computes again
        return true;
    }

    /// Moves running jobs (longest remaining first) to the plan that ends them earliest, when that is at least
    /// move_gain of their remaining time earlier, cost included. While others wait, only plans within the
    /// efficiency slack, on GPUs free of every reservation for the whole new run.
    template <class Place, class Order>
    void move_running(move_state<Place, Order>& s, sched_decisions& d, bool others_wait) {
        run_.clear();
        for (const auto& j : s.c.jobs)
            if (may_move(j, s.opt, s.c.now, d)) run_.push_back(&j);
        std::stable_sort(run_.begin(), run_.end(), [](const job_view* a, const job_view* b) { return a->predicted_end_s > b->predicted_end_s; });
        for (const job_view* j : run_) {
            int t = -1;
            double end = 0;
            const plan* p = best_move(s, *j, others_wait, t, end);
            if (p) relocate(s, d, *j, *p, t, end, others_wait);
        }
    }

    /// The plan of `j` that ends it earliest after a move (end: seconds from now, cost included; t: its type),
    /// if at least move_gain of its remaining time earlier than staying; null otherwise.
    template <class Place, class Order>
    const plan* best_move(move_state<Place, Order>& s, const job_view& j, bool others_wait, int& t_out, double& end_out) {
        const cluster_state& cs = *s.c.cluster;
        const double left = j.predicted_end_s - s.c.now;
        const double slack = others_wait ? s.opt.efficiency_slack : s.opt.idle_slack;
        least_.assign(s.type_free.size(), std::numeric_limits<double>::infinity());
        for (const auto& p : j.one_type())
            if (const int t = cs.type_index(p.gpu); t >= 0) least_[static_cast<std::size_t>(t)] = std::min(least_[static_cast<std::size_t>(t)], s.ratios.rem(j, p, t) * p.gpus);
        const plan* best = nullptr;
        double best_end = left * (1.0 - s.opt.move_gain);
        for (const auto& p : j.one_type()) {
            const int t = cs.type_index(p.gpu);
            if (t < 0 || (p.gpu == j.current->gpu && p.gpus == j.alloc->gpus() && p.parallel == j.current->parallel)) continue;
            const auto ut = static_cast<std::size_t>(t);
            const int own = t == j.alloc->type ? j.alloc->gpus() : 0;
            if (p.gpus > s.type_free[ut] + own || p.gpus > share_cap(s, t)) continue;
            const double rem = s.ratios.rem(j, p, t);
            if (rem * p.gpus > (1.0 + slack) * least_[ut] * (1 + 1e-12)) continue;
            const double end = cost(j) + rem * j.redo_factor();
            if (others_wait && p.gpus > own && !s.profile[ut].fits_now(p.gpus - own, end)) continue;
            if (end < best_end) { best_end = end; best = &p; t_out = t; }
        }
        end_out = best_end;
        return best;
    }

    /// HAS's share cap of one job on type `t` (max_share and equipartition).
    template <class Place, class Order>
    static double share_cap(const move_state<Place, Order>& s, int t) {
        const cluster_state& cs = *s.c.cluster;
        double cap = s.opt.max_share * cs.total_gpus(t);
        if (s.opt.equi_share > 0) cap = std::min(cap, s.opt.equi_share * cs.total_gpus(t) / static_cast<double>(s.c.jobs.size()));
        return cap;
    }

    /// Moves `j` to plan `p` of type `t` (ending `end` s from now) where it places; records the move.
    template <class Place, class Order>
    void relocate(move_state<Place, Order>& s, sched_decisions& d, const job_view& j, const plan& p, int t, double end, bool others_wait) {
        const cluster_state& cs = *s.c.cluster;
        give(s.free, *j.alloc);
        auto a = s.place.place(cs, s.free, {t, p.gpus, static_cast<int>(p.parallel.tp)});
        if (!a) {
            take(s.free, *j.alloc);
            return;
        }
        take(s.free, *a);
        const auto ut = static_cast<std::size_t>(t);
        const int own = t == j.alloc->type ? j.alloc->gpus() : 0;
        s.type_free[static_cast<std::size_t>(j.alloc->type)] += j.alloc->gpus();
        s.type_free[ut] -= p.gpus;
        if (others_wait && p.gpus > own) s.profile[ut].claim(s.c.now, end, p.gpus - own);
        d.preempt.push_back(j.id);
        d.start.push_back({j.id, p, std::move(*a), false, true});
        auto& r = book_[j.id];
        r.moves++;
        r.paid_off_s = payoff_s(s.c.now, cost(j), j.predicted_end_s - s.c.now, end - cost(j));
    }

    std::unordered_map<int, record> book_;
    std::vector<std::vector<std::pair<double, int>>> ends_;
    std::vector<const job_view*> run_;
    std::vector<double> least_;
};

}  // namespace frenzy::detail
