#pragma once
// Gavel (Narayanan et al., OSDI'20) as a round-based scheduling policy: every round, the heterogeneity-aware
// max-sum-throughput LP or, with gavel_options::policy = las, the LAS (max-min fairness) LP (sched/gavel_lp.hpp)
// gives each job a fraction of time X_jt on each GPU type; the round mechanism (Gavel Sec. 5) runs jobs in
// decreasing priority X_jt / (share of time the job has received on t), at the size the user asked for. Jobs
// whose assignment changes are preempted (checkpoint) and restarted.
// Needs GLPK: include only where frenzy::glpk is linked (FRENZY_HAS_GLPK).
// Departures (docs/baselines.md, "Gavel rounds"): a job's size is its request, doubled until it fits in memory on
// some type (Gavel's throughput profiles would show the out-of-memory up front, so no crash is simulated);
// received time is counted per type in seconds rather than in rounds; space sharing is not modelled.
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "frenzy/core/checked.hpp"
#include "frenzy/sched/fcfs.hpp"
#include "frenzy/sched/gavel_lp.hpp"
#include "frenzy/sched/placement.hpp"
#include "frenzy/sched/scheduler.hpp"

namespace frenzy {

/// Which of Gavel's allocation LPs (sched/gavel_lp.hpp) a round solves.
enum class gavel_policy {
    max_sum_throughput,  ///< solve_gavel_max_sum_throughput; the policy is called "gavel"
    las,                 ///< solve_gavel_las (Gavel's heterogeneity-aware LAS, max-min fairness); "gavel-las"
};

struct gavel_options {
    double round_s = 360;  ///< Gavel's default round: 6 minutes
    gavel_policy policy = gavel_policy::max_sum_throughput;
};

/// With its placement a policy (PlacementPolicy; default best fit, as the other schedulers).
template <PlacementPolicy P = best_fit_placement>
class basic_gavel_scheduler {
public:
    template <PlacementPolicy P2> using with_placement = basic_gavel_scheduler<P2>;
    explicit basic_gavel_scheduler(gavel_options o = {}, P placement = {}) : opt_(o), place_(std::move(placement)) {
        check_bound("gavel_options.round_s", o.round_s, bounds::sched_round_s);
    }
    std::string_view name() const { return opt_.policy == gavel_policy::las ? "gavel-las" : "gavel"; }
    double round_s() const { return opt_.round_s; }
    bool event_driven() const { return false; }

    sched_decisions schedule(const sched_context& c) {
        sched_decisions d;
        account_received(c);
        round_rows r;
        size_jobs(c, r, d);
        if (r.jobs.empty()) return d;
        solve_if_changed(c, r);
        run_round(c, r, d);
        return d;
    }

private:
    /// The jobs of a round: their size (GPUs), and per type the plan behind their throughput row (null: cannot run).
    struct round_rows {
        std::vector<const job_view*> jobs;
        std::vector<int> scale;
        std::vector<std::vector<const plan*>> pl;
    };

    /// Accounts the time running jobs got on their type since the last round.
    void account_received(const sched_context& c) {
        const auto& cs = *c.cluster;
        const int ntypes = static_cast<int>(cs.types().size());
        // Account the time running jobs got since the last round.
        const double dt = last_ < 0 ? 0 : c.now - last_;
        last_ = c.now;
        for (const auto& j : c.jobs)
            if (j.running && j.alloc) {
                auto& r = received_[j.id];
                r.resize(static_cast<std::size_t>(ntypes), 0.0);
                r[static_cast<std::size_t>(j.alloc->type)] += dt;
            }
    }

    /// Sizes and the throughput matrix's plans: a running job keeps its size; a waiting one asks for its request,
    /// doubled until it fits on some type (rejected past the cluster).
    void size_jobs(const sched_context& c, round_rows& r, sched_decisions& d) {
        const auto& cs = *c.cluster;
        const int ntypes = static_cast<int>(cs.types().size());
        for (const auto& j : c.jobs) {
            // A running job keeps its size: its throughput row is for the GPUs it holds.
            int g = j.running ? j.alloc->gpus() : detail::user_gpus(j);
            std::vector<const plan*> row(static_cast<std::size_t>(ntypes), nullptr);
            int maxcap = 0;
            for (int t = 0; t < ntypes; ++t) maxcap = std::max(maxcap, cs.total_gpus(t));
            for (; g <= maxcap; g *= 2) {
                bool any = false;
                for (int t = 0; t < ntypes; ++t) {
                    row[static_cast<std::size_t>(t)] = g <= cs.total_gpus(t) ? plan_for_request(j.one_type(), cs.types()[static_cast<std::size_t>(t)], g) : nullptr;
                    any |= row[static_cast<std::size_t>(t)] != nullptr;
                }
                if (any || j.running) break;
            }
            if (g > maxcap) {
                if (!j.running) d.reject.push_back({j.id, "no GPU type fits the requested size (doubled up to the cluster)"});
                continue;
            }
            r.jobs.push_back(&j);
            r.scale.push_back(g);
            r.pl.push_back(std::move(row));
        }
    }

    /// Gavel's LP on this round's rows, solved again only when its inputs changed (last_x_).
    void solve_if_changed(const sched_context& c, const round_rows& r) {
        const auto& cs = *c.cluster;
        const int ntypes = static_cast<int>(cs.types().size());
        const auto& jobs = r.jobs;
        const auto& scale = r.scale;
        const auto& pl = r.pl;
        gavel_input in;
        in.throughput = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(jobs.size()), ntypes);
        for (std::size_t k = 0; k < jobs.size(); ++k)
            for (int t = 0; t < ntypes; ++t)
                if (const plan* p = pl[k][static_cast<std::size_t>(t)]) in.throughput(static_cast<Eigen::Index>(k), t) = p->tokens_per_s;
        in.scale_factor = scale;
        for (int t = 0; t < ntypes; ++t) in.capacity.push_back(cs.up_gpus(t));
        // The LP depends only on (jobs, their scale factors and throughput rows, capacities): a round where none of
        // them changed reuses the last solution instead of solving again (the same answer, deterministically).
        std::string sig;
        // (appends only: GCC 12 reports a false -Wrestrict on "," + std::string temporaries)
        for (int t = 0; t < ntypes; ++t) {
            sig += std::to_string(in.capacity[static_cast<std::size_t>(t)]);
            sig += ',';
        }
        for (std::size_t k = 0; k < jobs.size(); ++k) {
            sig += std::to_string(jobs[k]->id);
            sig += ':';
            sig += std::to_string(scale[k]);
            for (int t = 0; t < ntypes; ++t) {
                const plan* p = pl[k][static_cast<std::size_t>(t)];
                sig += ',';
                if (!p) {
                    sig += '-';
                    continue;
                }
                sig += std::to_string(p->gpus);
                sig += '/';
                sig += std::to_string(p->tokens_per_s);
            }
            sig += ';';
        }
        if (sig != last_sig_) {
            last_x_ = opt_.policy == gavel_policy::las ? solve_gavel_las(in) : solve_gavel_max_sum_throughput(in);
            last_sig_ = std::move(sig);
            ++solves_;
        }
    }

    /// Round mechanism: jobs by priority X_jt / received share, given their type while it has GPUs; running jobs
    /// that change type or lose their slot are preempted, newcomers placed.
    void run_round(const sched_context& c, const round_rows& r, sched_decisions& d) {
        const auto& cs = *c.cluster;
        const int ntypes = static_cast<int>(cs.types().size());
        const auto& jobs = r.jobs;
        const auto& scale = r.scale;
        const auto& pl = r.pl;
        const gavel_allocation& x = last_x_;

        // Round mechanism: priority X_jt / received share on t, highest first.
        struct entry {
            double prio;
            std::size_t k;
            int t;
        };
        std::vector<entry> order;
        for (std::size_t k = 0; k < jobs.size(); ++k) {
            const auto* j = jobs[k];
            const double age = std::max(opt_.round_s, c.now - j->submit_s);
            auto it = received_.find(j->id);
            for (int t = 0; t < ntypes; ++t) {
                const double xv = x.x(static_cast<Eigen::Index>(k), t);
                if (xv <= 1e-9 || !pl[k][static_cast<std::size_t>(t)]) continue;
                const double got = it == received_.end() ? 0.0 : it->second[static_cast<std::size_t>(t)] / age;
                order.push_back({got > 0 ? xv / got : 1e18 * xv, k, t});
            }
        }
        std::stable_sort(order.begin(), order.end(), [](const entry& a, const entry& b) { return a.prio > b.prio; });
        std::vector<int> assigned(jobs.size(), -1), cap(static_cast<std::size_t>(ntypes));
        for (int t = 0; t < ntypes; ++t) cap[static_cast<std::size_t>(t)] = cs.up_gpus(t);
        for (const auto& e : order) {
            if (assigned[e.k] >= 0 || cap[static_cast<std::size_t>(e.t)] < scale[e.k]) continue;
            assigned[e.k] = e.t;
            cap[static_cast<std::size_t>(e.t)] -= scale[e.k];
        }
        // Keep jobs that stay on their type; preempt the others; place the newcomers.
        auto free = cs.free_vector();
        for (std::size_t k = 0; k < jobs.size(); ++k) {
            const auto* j = jobs[k];
            if (j->running && assigned[k] != j->alloc->type) {
                d.preempt.push_back(j->id);
                detail::give(free, *j->alloc);
            }
        }
        for (std::size_t k = 0; k < jobs.size(); ++k) {
            const auto* j = jobs[k];
            if (assigned[k] < 0 || (j->running && assigned[k] == j->alloc->type)) continue;
            const plan* p = pl[k][static_cast<std::size_t>(assigned[k])];
            const int tp = scale[k] % p->parallel.tp == 0 ? static_cast<int>(p->parallel.tp) : 1;
            auto a = place_.place(cs, free, {assigned[k], scale[k], tp});
            if (!a) continue;  // fragmented this round
            detail::take(free, *a);
            start_decision s{j->id, *p, std::move(*a), false};
            s.p.gpus = scale[k];
            d.start.push_back(std::move(s));
        }
    }

    gavel_options opt_;
    P place_;
    double last_ = -1;
    std::map<int, std::vector<double>> received_;
    std::string last_sig_;
    gavel_allocation last_x_;
    int solves_ = 0;

public:
    /// LP solves so far (rounds with unchanged inputs reuse the last solution).
    int solves() const { return solves_; }
};
using gavel_scheduler = basic_gavel_scheduler<>;
static_assert(Scheduler<gavel_scheduler>);

}  // namespace frenzy
