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
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/sched/capacity_profile.hpp"
#include "frenzy/sched/cluster_state.hpp"
#include "frenzy/sched/detail/sorted_on_demand.hpp"
#include "frenzy/sched/detail/speed_ratios.hpp"
#include "frenzy/sched/has_moves.hpp"
#include "frenzy/sched/has_options.hpp"
#include "frenzy/sched/placement.hpp"
#include "frenzy/sched/scheduler.hpp"

namespace frenzy {

/// HAS with its two policies as template parameters. Swap one without restating the other:
/// `has::with_placement<my_placement>`, `has::with_queue_order<arrival_order>` (as `planner::with_objective<>`).
template <PlacementPolicy P = best_fit_placement, QueueOrder Q = shortest_remaining_first>
class has_scheduler {
public:
    template <PlacementPolicy P2> using with_placement = has_scheduler<P2, Q>;
    template <QueueOrder Q2> using with_queue_order = has_scheduler<P, Q2>;
    explicit has_scheduler(has_options o = {}, P placement = {}, Q order = {})
        : opt_(o), place_(std::move(placement)), order_(std::move(order)) {
        validate(opt_);
    }

    std::string_view name() const { return "has"; }
    double round_s() const { return 0; }
    bool event_driven() const { return true; }
    const has_options& options() const { return opt_; }

    sched_decisions schedule(const sched_context& c) {
        sched_decisions d;
        const cluster_state& cs = *c.cluster;
        const std::size_t ntypes = cs.types().size();
        free_ = cs.free_vector();
        int total_free = 0;
        for (std::size_t t = 0; t < ntypes; ++t) total_free += cs.free_gpus(static_cast<int>(t));
        const bool may_preempt = opt_.preempt && opt_.preempt_scan > 0;
        if (total_free == 0 && !may_preempt && !opt_.moves) return d;  // nothing can start; reservations recomputed next time
        ratios_.learn(c, ntypes, opt_.learn, opt_.prior_jobs);
        build_profiles(c, ntypes);
        order_waiting(c);
        place_waiting(c, d, total_free);
        if (may_preempt && d.start.size() < order_buf_.size()) preempt_for_waiting(c, d);
        if (opt_.moves) {
            detail::move_state<P, decltype(order_buf_)> ms{c, opt_, place_, free_, type_free_, profile_, ratios_, order_buf_, started_};
            mover_.decide(ms, d, d.start.size() < order_buf_.size());
        } else if (opt_.expand_idle && total_free > 0 && (d.start.size() == order_buf_.size() || opt_.expand_while_waiting))
            expand(c, d, d.start.size() < order_buf_.size());
        return d;
    }

    /// Free-GPU profile per type over time: running jobs release at their predicted end.
    void build_profiles(const sched_context& c, std::size_t ntypes) {
        const cluster_state& cs = *c.cluster;
        releases_.assign(ntypes, {});
        for (const auto& j : c.jobs)
            if (j.running && j.alloc) {
                releases_[static_cast<std::size_t>(j.alloc->type)].push_back({j.predicted_end_s, j.alloc->gpus() - others(*j.alloc)});
                for (const auto& n : j.alloc->next) releases_[static_cast<std::size_t>(n.type)].push_back({j.predicted_end_s, n.gpus()});
            }
        profile_.resize(ntypes);
        for (std::size_t t = 0; t < ntypes; ++t) profile_[t].reset(c.now, cs.free_gpus(static_cast<int>(t)), releases_[t]);
    }

    /// Queue order of the waiting jobs (order_buf_), with the estimated remaining seconds of every plan of every
    /// waiting job computed once (rem_buf_ from rem_at_[i]).
    void order_waiting(const sched_context& c) {
        const cluster_state& cs = *c.cluster;
        order_buf_.clear();
        rem_buf_.clear();
        rem_at_.assign(c.jobs.size(), 0);
        mixed_types_.clear();
        mixed_at_.assign(c.jobs.size(), 0);
        for (std::size_t i = 0; i < c.jobs.size(); ++i) {
            const auto& j = c.jobs[i];
            if (j.running) continue;
            rem_at_[i] = rem_buf_.size();
            double best = std::numeric_limits<double>::infinity();
            const std::span<const int> pt = plan_types(j, cs);
            const double work = (1.0 - j.progress) * j.total_tokens;  // rem() with one division per plan
            const double* ratio = ratios_.all(j);  // rem()'s ratio by type index + 1
            const plan_rate* ps = plan_rates(j).data();
            const std::size_t n = pt.size();  // one_type()'s
            rem_buf_.resize(rem_at_[i] + n);
            double* out = rem_buf_.data() + rem_at_[i];
            for (std::size_t k = 0; k < n; ++k) {
                const double r = ps[k].tokens_per_s > 0 ? work / (ps[k].tokens_per_s * ratio[pt[k] + 1]) : 0.0;
                out[k] = r;
                best = std::min(best, r * ps[k].gpus);
            }
            if (const auto pipelines = j.pipelines(); !pipelines.empty()) {
                const int* types = mixed_types_of(j, i, cs);
                for (const auto& m : pipelines)
                    best = std::min(best, mixed_run(j, m, std::exchange(types, types + m.groups.size()), 0.0) * m.gpus);
            }
            order_buf_.push_back({order_.key(j, best, c.now), i});
        }
        // by key, equal keys in job order: the pairs' own order (their indices differ), the order of a stable sort
        // by key without its buffer; sorted as far as the walks read it
        order_buf_.ready();
    }

    /// Walks the waiting jobs in queue order: each starts on its earliest-completing candidate if that is now, or
    /// reserves its predicted start (conservative backfilling). Bounded by the reservation and idle-scan budgets.
    void place_waiting(const sched_context& c, sched_decisions& d, int& total_free) {
        const cluster_state& cs = *c.cluster;
        const std::size_t ntypes = cs.types().size();
        type_free_.assign(ntypes, 0);
        for (std::size_t t = 0; t < ntypes; ++t) type_free_[t] = cs.free_gpus(static_cast<int>(t));
        std::size_t left = order_buf_.size();
        int reservations = 0;
        started_.assign(order_buf_.size(), 0);
        fail_min_.assign(ntypes * kTpSlots, std::numeric_limits<int>::max());
        int misses = 0;
        for (std::size_t me = 0; me < order_buf_.size(); ++me) {
            if (total_free == 0) break;
            if (reservations >= opt_.max_reservations && opt_.max_idle_scan > 0) {
                if (me > 0 && !started_[me - 1]) ++misses;
                else misses = 0;
                if (misses > opt_.max_idle_scan) break;
            }
            const std::size_t idx = order_buf_[me].second;
            const job_view& j = c.jobs[idx];
            const std::size_t share_div = left--;
            // Nothing of it fits in the free GPUs and it may not reserve: it waits (bounds the cost per job), unless
            // a pipeline over several types starts it now.
            if (!collect_candidates(c, j, idx, share_div) && reservations >= opt_.max_reservations) {
                start_mixed(c, j, me, d, total_free, std::numeric_limits<double>::infinity(), share_div);
                continue;
            }
            time_candidates(c.now, reservations >= opt_.max_reservations);
            const double single = cands_.empty() ? std::numeric_limits<double>::infinity() : cands_.front().completion;
            const bool starts_now = !cands_.empty() && cands_.front().start == c.now;
            if (!starts_now && start_mixed(c, j, me, d, total_free, single, share_div)) continue;
            const bool waits = take_best(c, j, me, d, reservations, total_free);
            if (waits && !opt_.backfill) break;
        }
    }

    /// The candidate plans of waiting job `j` (cands_): per type, the efficient plans and, with idle GPUs, those
    /// within the job's share of them, capped by max_share and equipartition. True if some plan fits the free GPUs.
    bool collect_candidates(const sched_context& c, const job_view& j, std::size_t idx, std::size_t share_div) {
        const cluster_state& cs = *c.cluster;
        const std::size_t ntypes = cs.types().size();
        cands_.clear();
        least_.assign(ntypes, std::numeric_limits<double>::infinity());
        min_gpus_.assign(ntypes, std::numeric_limits<int>::max());
        const std::span<const int> pt = plan_types(j, cs);
        const double* rj = rem_buf_.data() + rem_at_[idx];
        const plan_rate* pr = plan_rates(j).data();
        bool startable = false;
        const std::span<const plan> one_type = j.one_type();
        for (std::size_t k = 0; k < one_type.size(); ++k) {
            const auto& p = pr[k];
            const int t = pt[k];
            if (t < 0) continue;
            const auto ut = static_cast<std::size_t>(t);
            least_[ut] = std::min(least_[ut], rj[k] * p.gpus);
            min_gpus_[ut] = std::min(min_gpus_[ut], p.gpus);
            startable |= p.gpus <= type_free_[ut] && !known_bad(t, p.gpus, p.tp);
        }
        const double launch_s = j.launches > 0 ? j.restart_s : opt_.startup_s;
        // per type, what the plans of one type share: the job's share of the idle GPUs, its cap
        idle_share_.resize(ntypes);
        share_cap_.resize(ntypes);
        for (std::size_t t = 0; t < ntypes; ++t) {
            idle_share_[t] = static_cast<double>(type_free_[t]) / static_cast<double>(share_div);
            const int ti = static_cast<int>(t);
            double cap = opt_.max_share * cs.total_gpus(ti);
            if (opt_.equi_share > 0) cap = std::min(cap, opt_.equi_share * cs.total_gpus(ti) / static_cast<double>(c.jobs.size()));
            share_cap_[t] = std::max(static_cast<double>(min_gpus_[t]), cap);
        }
        for (std::size_t k = 0; k < one_type.size(); ++k) {
            const int t = pt[k];
            if (t < 0) continue;
            const auto ut = static_cast<std::size_t>(t);
            const int gpus = pr[k].gpus;
            const double r = rj[k];
            const double gs = r * gpus;
            const bool efficient = gs <= (1.0 + opt_.efficiency_slack) * least_[ut] * (1 + 1e-12);
            const bool uses_idle = opt_.idle_slack > 0 && gpus <= idle_share_[ut] &&
                                   gs <= (1.0 + opt_.idle_slack) * least_[ut] * (1 + 1e-12);
            if ((efficient || uses_idle) && gpus <= share_cap_[ut]) cands_.push_back({0.0, 0.0, &one_type[k], t, launch_s + r});
        }
        return startable;
    }

    /// Predicted completion of each candidate: at the earliest time its GPUs are free for its whole run without
    /// delaying any job that already holds a reservation (conservative backfilling); sorted, earliest first. Past
    /// the reservation budget (`deep`) only the fastest option that must wait is timed: one profile scan per job
    /// instead of one per option bounds the decision cost.
    void time_candidates(double now, bool deep) {
        double best_now = std::numeric_limits<double>::infinity();
        for (auto& cd : cands_) {
            const double run = cd.run;
            cd.start = cd.p->gpus <= type_free_[static_cast<std::size_t>(cd.type)] &&
                               profile_[static_cast<std::size_t>(cd.type)].fits_now(cd.p->gpus, run)
                           ? now
                           : -1;
            if (cd.start == now) best_now = std::min(best_now, run);
        }
        const cand* only = nullptr;
        if (deep)
            for (const auto& cd : cands_)
                if (cd.start != now && (!only || cd.run < only->run)) only = &cd;
        for (auto& cd : cands_) {
            const double run = cd.run;
            if (cd.start == now) cd.completion = now + run;
            else if (run >= best_now || (only && &cd != only)) cd.completion = std::numeric_limits<double>::infinity();
            else {
                cd.start = profile_[static_cast<std::size_t>(cd.type)].earliest(cd.p->gpus, run);
                cd.completion = cd.start + run;
            }
        }
        // Stable insertion sort: a job has few candidates, and std::stable_sort would allocate per job.
        for (std::size_t a = 1; a < cands_.size(); ++a)
            for (std::size_t b = a; b > 0 && cands_[b].completion < cands_[b - 1].completion; --b) std::swap(cands_[b], cands_[b - 1]);
    }

    /// Takes the earliest-completing candidate: starts it now where it places, else (best is to wait) reserves its
    /// predicted start. Returns whether the job waits.
    bool take_best(const sched_context& c, const job_view& j, std::size_t me, sched_decisions& d, int& reservations, int& total_free) {
        const cluster_state& cs = *c.cluster;
        for (const auto& cd : cands_) {
            if (!std::isfinite(cd.completion)) break;
            const auto t = static_cast<std::size_t>(cd.type);
            const double run = cd.completion - cd.start;
            if (cd.start > c.now) {
                // Best is to wait for this type: reserve it, so that later jobs do not delay this one.
                if (reservations < opt_.max_reservations) {
                    profile_[t].claim(cd.start, run, cd.p->gpus);
                    ++reservations;
                }
                return true;
            }
            // Free GPUs only shrink in this pass, so a request that failed to place fails again at the same or
            // a larger size with the same tensor-parallel group (remembered: bounds the placement work).
            const int tp = static_cast<int>(cd.p->parallel.tp);
            if (known_bad(cd.type, cd.p->gpus, tp)) continue;
            auto a = place_plan(cs, *cd.p, &cd.type);
            if (!a) {
                if (tp >= 1 && (tp & (tp - 1)) == 0 && tp < (1 << (kTpSlots - 1))) {
                    auto& f = fail_min_[fail_slot(cd.type, tp)];
                    f = std::min(f, cd.p->gpus);
                }
                continue;  // fragmented: try the next option
            }
            type_free_[t] -= cd.p->gpus;
            profile_[t].claim(c.now, run, cd.p->gpus);
            total_free -= cd.p->gpus;
            d.start.push_back({j.id, *cd.p, std::move(*a), false});
            started_[me] = 1;
            return false;
        }
        return false;
    }

    /// GPUs of an allocation outside its first component (a mixed plan's later stage groups).
    static int others(const allocation& a) {
        int g = 0;
        for (const auto& n : a.next) g += n.gpus();
        return g;
    }

    /// Estimated seconds the rest of `j` takes on mixed plan `m`, launch cost `launch_s` included: its predicted
    /// speed, corrected (with learning on) by the lowest speed ratio of its types, since a pipeline moves at the pace
    /// of its slowest stage group. `types`: the cluster type of each of its groups (mixed_types_).
    double mixed_run(const job_view& j, const plan& m, const int* types, double launch_s) const {
        double ratio = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < m.groups.size(); ++k) {
            const int t = types[k];
            ratio = std::min(ratio, ratios_.of(j, t));
        }
        const double work = (1.0 - j.progress) * j.total_tokens;
        return launch_s + (m.tokens_per_s > 0 && ratio > 0 ? work / (m.tokens_per_s * ratio) : std::numeric_limits<double>::infinity());
    }

    /// Starts waiting job `j` now on the first of its mixed plans (best first) that ends before `single` (the
    /// earliest completion of its one-type candidates, waits included), is a candidate by the one-type rules
    /// (mixed_candidate) and places. True if it started. Called only when the best one-type candidate waits: a mixed plan
    /// takes two types' GPUs, and preferred to a one-type option that runs now it crowds the queue behind (measured,
    /// docs/results.md "Mixed plans").
    bool start_mixed(const sched_context& c, const job_view& j, std::size_t me, sched_decisions& d, int& total_free, double single,
                     std::size_t share_div) {
        const std::span<const plan> pipelines = j.pipelines();
        if (pipelines.empty()) return false;
        const cluster_state& cs = *c.cluster;
        const double launch_s = j.launches > 0 ? j.restart_s : opt_.startup_s;
        const int* types = mixed_types_at(j, static_cast<std::size_t>(&j - c.jobs.data()));
        for (const auto& m : pipelines) {
            const int* mt = std::exchange(types, types + m.groups.size());  // this plan's groups' types
            const double run = mixed_run(j, m, mt, launch_s);
            if (!(c.now + run < single) || !mixed_candidate(c, m, mt, run, run - launch_s, share_div)) continue;
            auto a = place_plan(cs, m, mt);
            if (!a) continue;
            for (const auto& comp : a->components()) {
                type_free_[static_cast<std::size_t>(comp.type)] -= comp.gpus();
                profile_[static_cast<std::size_t>(comp.type)].claim(c.now, run, comp.gpus());
            }
            total_free -= m.gpus;
            d.start.push_back({j.id, m, std::move(*a), false});
            started_[me] = 1;
            return true;
        }
        return false;
    }

    /// Whether mixed plan `m` (`run` s with its launch, `rem` s of compute) may start now by the rules of a one-type
    /// candidate (collect_candidates), its least GPU-seconds being the lower of its types' (least_): every stage
    /// group has free GPUs of its type for the whole run without delaying a reservation and stays within the share
    /// caps, and the plan is efficient (within 1 + efficiency_slack of that least) or uses idle GPUs (each group
    /// within the job's share of its type's free GPUs, and within 1 + idle_slack of that least).
    bool mixed_candidate(const sched_context& c, const plan& m, const int* types, double run, double rem,
                         std::size_t share_div) const {
        const cluster_state& cs = *c.cluster;
        double least = std::numeric_limits<double>::infinity();
        bool within_free_share = true;
        for (std::size_t k = 0; k < m.groups.size(); ++k) {
            const auto& g = m.groups[k];
            const int t = types[k];
            if (t < 0) return false;
            const auto ut = static_cast<std::size_t>(t);
            if (g.gpus > type_free_[ut] || !profile_[ut].fits_now(g.gpus, run)) return false;
            double cap = opt_.max_share * cs.total_gpus(t);
            if (opt_.equi_share > 0) cap = std::min(cap, opt_.equi_share * cs.total_gpus(t) / static_cast<double>(c.jobs.size()));
            if (g.gpus > cap) return false;
            within_free_share &= g.gpus <= static_cast<double>(type_free_[ut]) / static_cast<double>(share_div);
            if (ut < least_.size()) least = std::min(least, least_[ut]);
        }
        if (!std::isfinite(least)) return true;  // no one-type plan on either type: nothing to be efficient against
        const double gs = rem * m.gpus;
        const bool efficient = gs <= (1.0 + opt_.efficiency_slack) * least * (1 + 1e-12);
        const bool uses_idle = opt_.idle_slack > 0 && within_free_share && gs <= (1.0 + opt_.idle_slack) * least * (1 + 1e-12);
        return efficient || uses_idle;
    }

    /// Places plan `m` by the placement policy and takes its GPUs from free_: a one-type plan's GPUs on nodes of
    /// type types[0], a pipeline's every stage group on nodes of its type types[k] (undone when one group does not
    /// place), the first group's allocation with the later ones in `next`.
    std::optional<allocation> place_plan(const cluster_state& cs, const plan& m, const int* types) {
        std::optional<allocation> out;
        const std::size_t parts = m.mixed() ? m.groups.size() : 1;
        for (std::size_t k = 0; k < parts; ++k) {
            const int gpus = m.mixed() ? m.groups[k].gpus : m.gpus;
            auto a = place_.place(cs, free_, {types[k], gpus, static_cast<int>(m.parallel.tp)});
            if (!a) {
                if (out) detail::give(free_, *out);
                return std::nullopt;
            }
            detail::take(free_, *a);
            if (!out) out = std::move(*a);
            else out->next.push_back(std::move(*a));
        }
        return out;
    }

    /// Smallest size that failed to place, per type and tensor-parallel degree (log2 slot; odd degrees share
    /// the last slot, which only makes the memo conservative: it is then not consulted).
    static constexpr std::size_t kTpSlots = 8;
    std::size_t fail_slot(int t, int tp) const {
        std::size_t k = 0;
        while (k + 1 < kTpSlots && (1 << k) < tp) ++k;
        return static_cast<std::size_t>(t) * kTpSlots + k;
    }
    bool known_bad(int t, int gpus, int tp) const {
        if (tp < 1 || (tp & (tp - 1)) != 0 || tp >= (1 << (kTpSlots - 1))) return false;
        return gpus >= fail_min_[fail_slot(t, tp)];
    }

    /// Cluster type index of each group of each of waiting job `j`'s mixed plans (`i` its index): the view's
    /// (job_view::mixed_types), else looked up once per decision into mixed_types_ (from mixed_at_[i]).
    const int* mixed_types_of(const job_view& j, std::size_t i, const cluster_state& cs) {
        if (const int* view = view_mixed_types(j)) return view;
        mixed_at_[i] = mixed_types_.size();
        for (const auto& m : j.pipelines())
            for (const auto& g : m.groups) mixed_types_.push_back(cs.type_index(g.gpu));
        return mixed_types_.data() + mixed_at_[i];
    }
    /// The same once order_waiting has looked them up.
    const int* mixed_types_at(const job_view& j, std::size_t i) const {
        const int* view = view_mixed_types(j);
        return view ? view : mixed_types_.data() + mixed_at_[i];
    }
    static const int* view_mixed_types(const job_view& j) {
        std::size_t groups = 0;
        for (const auto& m : j.pipelines()) groups += m.groups.size();
        return j.mixed_types.size() == groups && groups > 0 ? j.mixed_types.data() : nullptr;
    }

    /// rate_of each of the job's plans: the view's (job_view::plan_rates), else read from the plans.
    std::span<const plan_rate> plan_rates(const job_view& j) {
        const std::span<const plan> one_type = j.one_type();
        if (j.plan_rates.size() == one_type.size()) return j.plan_rates;
        prate_.clear();
        for (const auto& p : one_type) prate_.push_back(rate_of(p));
        return prate_;
    }
    /// Cluster type index of each of the job's plans: the view's (job_view::plan_types), else looked up.
    std::span<const int> plan_types(const job_view& j, const cluster_state& cs) {
        const std::span<const plan> one_type = j.one_type();
        if (j.plan_types.size() == one_type.size()) return j.plan_types;
        ptype_.clear();
        for (const auto& p : one_type) ptype_.push_back(cs.type_index(p.gpu));
        return ptype_;
    }

    /// Preemptive SRPT for the first waiting jobs that did not start (see has_options::preempt).
    void preempt_for_waiting(const sched_context& c, sched_decisions& d) {
        const cluster_state& cs = *c.cluster;
        collect_victims(c);
        if (victims_.empty()) return;
        taken_.assign(victims_.size(), 0);
        int scanned = 0;
        for (std::size_t k = 0; k < order_buf_.size() && scanned < opt_.preempt_scan; ++k) {
            if (started_[k]) continue;
            ++scanned;
            const job_view& w = c.jobs[order_buf_[k].second];
            int best_t = -1;
            double best_run = std::numeric_limits<double>::infinity();
            const plan* best = fastest_efficient_plan(w, cs, best_t, best_run);
            if (!best || !choose_victims(best_t, best->gpus, best_run)) continue;
            if (start_over_victims(cs, w, *best, best_t, d)) started_[k] = 1;
        }
    }

    /// The running jobs that may be preempted (running long enough since their start), longest remaining first.
    void collect_victims(const sched_context& c) {
        victims_.clear();
        for (const auto& j : c.jobs)
            if (j.running && j.alloc && j.current && j.current->tokens_per_s > 0 &&
                c.now - j.run_started_s >= std::max(opt_.preempt_lock_s, 10 * j.restart_s))
                victims_.push_back({j.predicted_end_s - c.now, &j});
        std::sort(victims_.begin(), victims_.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second->id < b.second->id;
        });
    }

    /// A waiting job's fastest efficient plan per type (the same efficiency rule as placement), launch included;
    /// its type and run time go to best_t and best_run. Null when it has none.
    const plan* fastest_efficient_plan(const job_view& w, const cluster_state& cs, int& best_t, double& best_run) {
        const double launch_s = w.launches > 0 ? w.restart_s : opt_.startup_s;
        const plan* best = nullptr;
        least_.assign(cs.types().size(), std::numeric_limits<double>::infinity());
        for (const auto& p : w.one_type()) {
            const int t = cs.type_index(p.gpu);
            if (t >= 0) least_[static_cast<std::size_t>(t)] = std::min(least_[static_cast<std::size_t>(t)], ratios_.rem(w, p, t) * p.gpus);
        }
        for (const auto& p : w.one_type()) {
            const int t = cs.type_index(p.gpu);
            if (t < 0 || ratios_.rem(w, p, t) * p.gpus > (1.0 + opt_.efficiency_slack) * least_[static_cast<std::size_t>(t)] * (1 + 1e-12)) continue;
            const double run = launch_s + ratios_.rem(w, p, t);
            if (run < best_run) { best_run = run; best = &p; best_t = t; }
        }
        return best;
    }

    /// The victims not yet taken on type `t` whose remaining time exceeds preempt_factor x `run` plus their restart,
    /// into chosen_, until the type's free GPUs and theirs reach `gpus`; false when they do not.
    bool choose_victims(int t, int gpus, double run) {
        int have = type_free_[static_cast<std::size_t>(t)];
        chosen_.clear();
        for (std::size_t v = 0; v < victims_.size() && have < gpus; ++v) {
            const auto& [left, vj] = victims_[v];
            if (taken_[v] || vj->alloc->type != t) continue;
            if (left <= opt_.preempt_factor * run + vj->restart_s) break;  // sorted: the rest are shorter
            chosen_.push_back(v);
            have += vj->alloc->gpus();
        }
        return have >= gpus;
    }

    /// Places `w` on plan `best` (type `t`) in the free GPUs plus the chosen victims'; on success preempts them and
    /// starts `w` (true), else gives their GPUs back to them (false).
    bool start_over_victims(const cluster_state& cs, const job_view& w, const plan& best, int t, sched_decisions& d) {
        const auto ut = static_cast<std::size_t>(t);
        for (std::size_t v : chosen_) detail::give(free_, *victims_[v].second->alloc);
        auto a = place_.place(cs, free_, {t, best.gpus, static_cast<int>(best.parallel.tp)});
        if (!a) {
            for (std::size_t v : chosen_) detail::take(free_, *victims_[v].second->alloc);
            return false;
        }
        detail::take(free_, *a);
        for (std::size_t v : chosen_) {
            taken_[v] = 1;
            d.preempt.push_back(victims_[v].second->id);
            type_free_[ut] += victims_[v].second->alloc->gpus();
        }
        type_free_[ut] -= best.gpus;
        d.start.push_back({w.id, best, std::move(*a), false});
        return true;
    }

    /// When nobody waits and GPUs idle: restart running jobs on a larger plan of the same type (longest remaining
    /// first) if that ends them at least `expand_gain` of their remaining time earlier, restart cost included.
    void expand(const sched_context& c, sched_decisions& d, bool others_wait = false) {
        const cluster_state& cs = *c.cluster;
        std::vector<const job_view*> run;
        for (const auto& j : c.jobs)
            if (j.running && j.alloc && j.current && j.current->tokens_per_s > 0 &&
                std::find(d.preempt.begin(), d.preempt.end(), j.id) == d.preempt.end())
                run.push_back(&j);
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
            for (const auto& p : j->one_type())
                if (p.gpu == j->current->gpu) least = std::min(least, ratios_.rem(*j, p, t) * p.gpus);
            const double cap = std::min(opt_.max_share * cs.total_gpus(t),
                                        opt_.equi_share > 0 ? opt_.equi_share * cs.total_gpus(t) / static_cast<double>(c.jobs.size())
                                                            : std::numeric_limits<double>::infinity());
            const plan* best = nullptr;
            double best_end = left * (1.0 - opt_.expand_gain);
            for (const auto& p : j->one_type()) {
                if (p.gpu != j->current->gpu || p.gpus <= have || p.gpus > have + type_free_[ut] || p.gpus > cap) continue;
                if (ratios_.rem(*j, p, t) * p.gpus > (1.0 + opt_.idle_slack) * least * (1 + 1e-12)) continue;
                const double end = j->restart_s + ratios_.rem(*j, p, t);
                // While others wait, the added GPUs must stay free of every reservation for the whole new run.
                if (others_wait && !profile_[ut].fits_now(p.gpus - have, end)) continue;
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
            if (others_wait) profile_[ut].claim(c.now, best_end, best->gpus - have);
            d.preempt.push_back(j->id);
            d.start.push_back({j->id, *best, std::move(*a), false});
        }
    }

private:
    struct cand {
        double completion;
        double start;
        const plan* p;
        int type;
        double run;  // launch cost + estimated remaining seconds
    };

    has_options opt_;
    P place_;
    Q order_;
    std::vector<int> free_, type_free_;
    std::vector<std::vector<std::pair<double, int>>> releases_;
    std::vector<capacity_profile> profile_;
    detail::sorted_on_demand<std::pair<double, std::size_t>> order_buf_;  ///< (queue key, job index), ascending
    std::vector<cand> cands_;
    std::vector<double> least_, idle_share_, share_cap_;  ///< per type, for the job being placed (collect_candidates)
    std::vector<int> min_gpus_, ptype_;
    std::vector<plan_rate> prate_;
    detail::speed_ratios ratios_;  ///< learned speed ratios by type (sched/detail/speed_ratios.hpp)
    std::vector<double> rem_buf_;
    std::vector<std::size_t> rem_at_;
    std::vector<int> mixed_types_;           ///< cluster type of each group of each waiting job's mixed plans
    std::vector<std::size_t> mixed_at_;      ///< where a waiting job's start in mixed_types_
    std::vector<int> fail_min_;
    std::vector<char> started_, taken_;
    std::vector<std::pair<double, const job_view*>> victims_;
    std::vector<std::size_t> chosen_;
    detail::has_mover mover_;  ///< moves (has_options::moves) and what it remembers of each job's moves
};
/// HAS with its default policies (best-fit placement, shortest remaining first), as `planner` is the planner's.
using has = has_scheduler<>;
static_assert(Scheduler<has>);

}  // namespace frenzy
