#pragma once
// HAS's knobs and its queue orders (sched/has.hpp is the policy): has_options with its validation, the QueueOrder
// concept, shortest_remaining_first (the default) and arrival_order.
#include <algorithm>
#include <concepts>

#include "frenzy/core/checked.hpp"
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
    /// Past the reservations, the scan stops after this many waiting jobs in a row could not start (the decision
    /// cost then does not grow with a long queue of jobs that do not fit the fragments left). 0 = scan all.
    int max_idle_scan = 32;
    double startup_s = 30;      ///< launch cost assumed in predictions (the simulator's own value is what counts)
    /// Learning: a job's measured speed ratio (job_view::measured_ratio) replaces the prediction for that job on that
    /// type; for jobs not yet measured on a type, the type's ratio is the geometric mean of the ratios measured
    /// there, shrunk towards 1 as if `prior_jobs` jobs had measured exactly the prediction. false = predictions only.
    bool learn = true;
    double prior_jobs = 4;
    /// Preemptive shortest-remaining-time: a waiting job among the first `preempt_scan` in queue order that cannot
    /// start now takes the GPUs of running jobs on one type whose remaining time exceeds preempt_factor x (its own
    /// run + the victim's restart cost), longest remaining first; a job is not preempted in its first
    /// max(preempt_lock_s, 10 x its restart cost) of a run (the restart lock that stops thrashing).
    bool preempt = true;
    double preempt_factor = 2.0;
    int preempt_scan = 8;
    double preempt_lock_s = 600;
    /// Expansion onto GPUs that stay idle after placing the waiting jobs, only where it delays no reservation.
    bool expand_while_waiting = true;
    /// Moves (issue 56; sched/has_moves.hpp): a running job is moved to another plan (more or fewer GPUs, another
    /// type) when its predicted end, the move's cost included (job_view::move_s), comes at least move_gain of its
    /// remaining time earlier; a running job is shrunk on its type to start one of the first preempt_scan waiting
    /// jobs when the waiting job's earlier start exceeds the shrunk job's delay by move_gain of its remaining time.
    /// A job moves at most max_moves times, and not again before its last move has paid off (the time saved has
    /// caught up with the move's cost). On, moves replace expand_idle.
    bool moves = false;
    double move_gain = 0.2;
    int max_moves = 2;
};

/// Checks every number of `o` (finite, in range); config_error naming the field (has_options.efficiency_slack=nan).
inline void validate(const has_options& o) {
    check_bound("has_options.efficiency_slack", o.efficiency_slack, bounds::rate);
    check_bound("has_options.idle_slack", o.idle_slack, bounds::rate);
    check_bound("has_options.max_share", o.max_share, bounds::fraction);
    check_bound("has_options.equi_share", o.equi_share, bounds::rate);
    check_bound("has_options.expand_gain", o.expand_gain, bounds::fraction);
    check_bound("has_options.startup_s", o.startup_s, bounds::sim_seconds);
    check_bound("has_options.prior_jobs", o.prior_jobs, bounds::rate);
    check_bound("has_options.preempt_factor", o.preempt_factor, bounds::preempt_factor);
    check_bound("has_options.preempt_lock_s", o.preempt_lock_s, bounds::sim_seconds);
    check_bound("has_options.max_reservations", o.max_reservations, bounds::scan);
    check_bound("has_options.max_idle_scan", o.max_idle_scan, bounds::scan);
    check_bound("has_options.preempt_scan", o.preempt_scan, bounds::scan);
    check_bound("has_options.move_gain", o.move_gain, bounds::fraction);
    check_bound("has_options.max_moves", o.max_moves, bounds::scan);
}

}  // namespace frenzy
