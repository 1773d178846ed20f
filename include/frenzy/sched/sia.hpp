#pragma once
// Sia (Jayaram Subramanya et al., SOSP'23) as a round-based scheduling policy: every 60 s round, each active job
// lists its configurations (per GPU type: powers of two inside a node, then whole nodes; sia_config_shapes) with
// the goodput of the planner's plan of exactly that size (0 where it does not fit in memory: the same feasibility
// HAS uses), and the ILP of sched/sia_ilp.hpp (normalised goodput^p, p = -0.5, lambda = 1.1, restart penalty)
// picks one configuration per job or none. Jobs whose configuration changes are preempted and restarted.
// Needs GLPK: include only where frenzy::glpk is linked (FRENZY_HAS_GLPK).
// Departures (docs/baselines.md, "Sia rounds"): goodput is the planner's predicted throughput (no statistical
// efficiency model: LLM pre-training keeps its global batch); a round whose inputs (active jobs, running
// configurations, GPUs up) are unchanged since the last solve keeps the last decision instead of re-solving; a start
// the placement cannot realise is excluded and the round re-solved (sia_policy_options::resolves).
// Following the artifact: 64-GPU cap, growth limit and restart lock (sia_policy_options).
#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frenzy/sched/placement.hpp"
#include "frenzy/sched/scheduler.hpp"
#include "frenzy/sched/sia_ilp.hpp"

namespace frenzy {

struct sia_policy_options {
    /// The ILP is solved to optimality (with cuts, sia_options::cuts) or stops at 30,000 branch-and-bound
    /// subproblems (deterministic; about 2 s of GLPK on the development machine, where a 2 s wall-clock limit had
    /// stopped the searches at 25,000-40,000), with a 60 s wall-clock backstop that is counted when hit
    /// (solver_stats::timed_out). Not the artifact's relative gap of 1e-4 (sia-simulator/sia.py
    /// `allowablePercentageGap=sim_config.sia_solver_thresh*100`, simulator_config.py `sia_solver_thresh = 1e-4`):
    /// that gap exceeds the preference that keeps a running job over an equal waiting one (detail::sia_tie_keep),
    /// and with it equal jobs swapped again (docs/baselines.md, "Sia rounds").
    sia_options ilp{.p = -0.5, .lambda = 1.1, .restart_penalty_s = 30, .round_s = 60, .time_limit_s = 60, .node_limit = 30000};
    /// Largest configuration: CONFIGS_8GPU / CONFIGS_4GPU of siasosp23/artifacts sia-simulator/sia.py (commit
    /// 37c68be) end at 64 GPUs.
    int max_gpus = 64;
    /// Growth limit: a job may be given at most max(growth x the most GPUs it has run on, its smallest feasible
    /// count) GPUs (sia-simulator/cluster.py: max_replicas = max(2 x max_profiled_replicas, 1)). 0 = no limit.
    double growth = 2.0;
    /// Restart lock, as the artifact's default: a running job keeps its configuration while its launch (start-up or
    /// checkpoint-restore) is under way, i.e. while now < run_started_s + its launch cost. sia-simulator/sia.py at
    /// 37c68be ("hard constraint:: do not re-allocate a job if it is currently doing a checkpoint-restore
    /// operation": non_preemptible_jobnames, forced to their previous configuration in __solve_mip_rescaled) with
    /// simulator_config.py preserve_ckpt_allocs = True and cluster.py scaling_underway = job.rescale_time > 0; the
    /// countdown rescale_time is set at every (re)start (job.py reallocate / migrate) and run down by step(). Here
    /// the launch cost is startup_s for a job's first launch and job_view::restart_s after. false = no lock.
    bool restart_lock = true;
    /// Placement-aware re-solves per round: when the placement cannot realise a start the program chose (it does
    /// not re-pack running jobs, so 2 + 2 free GPUs on two nodes hold no tensor-parallel-4 job), that configuration
    /// is excluded and the program solved again, at most this many times. The artifact instead re-places every job
    /// of a type, so its choices are always realised. 0 = the start just waits.
    int resolves = 2;
    /// What a job's first launch costs the host, s (the simulator's sim_options::startup_s; policy_options_for
    /// passes it): the restart lock's length for a first launch.
    double startup_s = 30;
};

/// With its placement a policy (PlacementPolicy; default best fit, as the other schedulers).
template <PlacementPolicy P = best_fit_placement>
class basic_sia_scheduler {
public:
    template <PlacementPolicy P2> using with_placement = basic_sia_scheduler<P2>;
    explicit basic_sia_scheduler(sia_policy_options o = {}, P placement = {}) : opt_(o), place_(std::move(placement)) {
        if (opt_.resolves < 0) throw config_error("sia: options.resolves=" + std::to_string(opt_.resolves) + " must be >= 0");
    }
    std::string_view name() const { return "sia"; }
    double round_s() const { return opt_.ilp.round_s; }
    bool event_driven() const { return false; }
    /// ILP solves so far, how many GLPK proved optimal within the limits, how many stopped at the wall-clock one.
    solver_stats solver_effort() const { return effort_; }
    /// Wall seconds of the last round's ILP solves (0 if the round reused the last decision).
    double last_solve_s() const { return last_solve_s_; }

    sched_decisions schedule(const sched_context& c) {
        sched_decisions d;
        const auto& cs = *c.cluster;
        const int ntypes = static_cast<int>(cs.types().size());
        std::vector<int> gpus(static_cast<std::size_t>(ntypes)), nodes(static_cast<std::size_t>(ntypes));
        std::string sig = up_capacity(cs, gpus, nodes);
        round_in in;
        std::vector<int> kept(cs.nodes().size(), 0);  // per node: GPUs of running jobs the ILP does not see
        collect_jobs(c, in, kept, sig, d);
        last_solve_s_ = 0;
        if (in.jobs.empty()) return d;
        std::vector<sia_partial_nodes> partial(static_cast<std::size_t>(ntypes));
        ilp_capacity(cs, kept, gpus, nodes, partial);
        if (sig == last_sig_) return d;  // same inputs as the last solve: keep its decision
        last_sig_ = sig;
        sia_solution sol = solve_round(in, gpus, nodes, partial);
        const std::size_t starts0 = d.start.size(), preempts0 = d.preempt.size();
        for (int again = 0;; ++again) {
            const auto failed = apply_solution(c, in, sol, d);
            if (failed.empty() || again == opt_.resolves) break;
            for (std::size_t k : failed) in.jobs[k].configs[static_cast<std::size_t>(sol.choice[k])].excluded = true;
            d.start.erase(d.start.begin() + static_cast<std::ptrdiff_t>(starts0), d.start.end());
            d.preempt.erase(d.preempt.begin() + static_cast<std::ptrdiff_t>(preempts0), d.preempt.end());
            sol = solve_round(in, gpus, nodes, partial);
        }
        return d;
    }

private:
    /// The GPUs and nodes that are up, per type; returns them as the start of the round's signature.
    static std::string up_capacity(const cluster_state& cs, std::vector<int>& gpus, std::vector<int>& nodes) {
        std::string sig;
        for (int t = 0; t < static_cast<int>(gpus.size()); ++t) {
            for (int n : cs.nodes_of_type(t))
                if (cs.nodes()[static_cast<std::size_t>(n)].up) {
                    ++nodes[static_cast<std::size_t>(t)];
                    gpus[static_cast<std::size_t>(t)] += cs.nodes()[static_cast<std::size_t>(n)].gpus;
                }
            sig += std::to_string(gpus[static_cast<std::size_t>(t)]) + ",";
        }
        return sig;
    }

    /// What the ILP may hand out, per type: the whole nodes no kept job touches, and the GPUs left on the nodes
    /// a kept job holds in part (single-node configurations only).
    static void ilp_capacity(const cluster_state& cs, const std::vector<int>& kept, std::vector<int>& gpus,
                             std::vector<int>& nodes, std::vector<sia_partial_nodes>& partial) {
        for (int t = 0; t < static_cast<int>(gpus.size()); ++t) {
            const auto ut = static_cast<std::size_t>(t);
            gpus[ut] = nodes[ut] = 0;
            for (int n : cs.nodes_of_type(t)) {
                const auto& nd = cs.nodes()[static_cast<std::size_t>(n)];
                const int held = kept[static_cast<std::size_t>(n)];
                const int left = nd.up ? nd.gpus - held : 0;
                if (left <= 0) continue;
                gpus[ut] += left;
                if (held == 0) {
                    ++nodes[ut];
                } else {
                    partial[ut].gpus += left;
                    partial[ut].largest = std::max(partial[ut].largest, left);
                }
            }
        }
    }

    /// What one round asks the ILP: the jobs, the plan behind each configuration, and the views.
    struct round_in {
        std::vector<sia_job> jobs;
        std::vector<std::vector<const plan*>> plans;
        std::vector<const job_view*> views;
    };

    /// One solve of the round's ILP, counted in the solver effort and the round's solve time.
    sia_solution solve_round(const round_in& in, const std::vector<int>& gpus, const std::vector<int>& nodes,
                             const std::vector<sia_partial_nodes>& partial) {
        const sia_solution sol = solve_sia(in.jobs, gpus, nodes, opt_.ilp, partial);
        last_solve_s_ += sol.solve_s;
        ++effort_.solves;
        effort_.optimal += sol.optimal ? 1 : 0;
        effort_.timed_out += sol.timed_out ? 1 : 0;
        return sol;
    }

    /// Each active job's configurations per type (Sia's shapes, capped at max_gpus and the growth limit) with the
    /// planner's throughput of exactly that size; running jobs in a shape Sia would not pick keep their GPUs, which
    /// leave the pool. Appends every input to `sig` (a round with the same signature keeps the last decision).
    void collect_jobs(const sched_context& c, round_in& r, std::vector<int>& kept, std::string& sig, sched_decisions& d) {
        const auto& cs = *c.cluster;
        const int ntypes = static_cast<int>(cs.types().size());
        for (const auto& j : c.jobs) {
            sia_job sj;
            std::vector<const plan*> ps;
            int& seen = max_seen_[j.id];
            if (j.running && j.alloc) seen = std::max(seen, j.alloc->gpus());
            if (j.running && j.alloc && locked(j, c.now)) {
                // Restart lock: the artifact forces the job's previous configuration in the ILP; the objective is a
                // sum over jobs, so that is the same as leaving it out and taking its GPUs from the pool (the nodes
                // it holds in part then offer their other GPUs to single-node configurations only).
                keep_running(j, kept, sig, 'l');
                continue;
            }
            int min_feasible = std::numeric_limits<int>::max();
            for (const auto& p : j.one_type()) min_feasible = std::min(min_feasible, p.gpus);
            const double cap = opt_.growth > 0 ? std::max(opt_.growth * seen, static_cast<double>(min_feasible))
                                               : std::numeric_limits<double>::infinity();
            for (int t = 0; t < ntypes; ++t) {
                const std::string& gpu = cs.types()[static_cast<std::size_t>(t)];
                auto shapes = sia_config_shapes(cs.gpus_per_node(t), static_cast<int>(cs.nodes_of_type(t).size()));
                // A count outside Sia's shapes (a user-sized request, --sizes requested) is offered as it is.
                for (const auto& p : j.one_type())
                    if (p.gpu == gpu && std::none_of(shapes.begin(), shapes.end(), [&](const auto& sh) { return sh.first == p.gpus; }) &&
                        (p.gpus < cs.gpus_per_node(t) || p.gpus % cs.gpus_per_node(t) == 0))
                        shapes.push_back({p.gpus, std::max(1, p.gpus / cs.gpus_per_node(t))});
                for (auto [g, n] : shapes) {
                    if (g > std::max(opt_.max_gpus, min_feasible) || g > cap) continue;
                    const plan* best = nullptr;
                    for (const auto& p : j.one_type())
                        if (p.gpu == gpu && p.gpus == g && (!best || p.tokens_per_s > best->tokens_per_s)) best = &p;
                    if (!best) continue;
                    if (j.running && j.alloc->type == t && j.alloc->gpus() == g) sj.current = static_cast<int>(sj.configs.size());
                    sj.configs.push_back({t, g, n, best->tokens_per_s});
                    ps.push_back(best);
                }
            }
            if (j.running && sj.current < 0) {  // running in a shape Sia would not pick (or none is offered): keep it
                keep_running(j, kept, sig, 'k');
                continue;
            }
            if (sj.configs.empty()) {
                d.reject.push_back({j.id, "no Sia configuration (power-of-two or whole-node size) fits in memory"});
                continue;
            }
            sj.age_s = std::max(0.0, c.now - j.submit_s);
            sj.restarts = std::max(0, j.launches - 1);
            sig += std::to_string(j.id) + (j.running ? "r" + std::to_string(sj.current) : "w") + ";";
            r.jobs.push_back(std::move(sj));
            r.plans.push_back(std::move(ps));
            r.views.push_back(&j);
        }
    }

    /// Whether running job `j` is still in the launch its current run began with (the restart lock).
    bool locked(const job_view& j, double now) const {
        if (!opt_.restart_lock) return false;
        const double launch = j.launches <= 1 ? opt_.startup_s : j.restart_s;
        return now < j.run_started_s + launch;
    }

    /// A running job the ILP does not see: its GPUs leave the pool (`kept`, per node); `why` marks it in the signature.
    static void keep_running(const job_view& j, std::vector<int>& kept, std::string& sig, char why) {
        for (const auto& part : j.alloc->parts) kept[static_cast<std::size_t>(part.node)] += part.gpus;
        sig += std::to_string(j.id);
        sig += why;
        sig += ';';
    }

    /// Places the newly chosen configurations and preempts the running jobs that move. A running job the program
    /// stops, or moves to a configuration the placement cannot realise, keeps running where no start took its
    /// GPUs (the artifact's placement realises every choice, so it never stops a job for a start that cannot
    /// happen; and keeping a job whose GPUs would stay idle only lowers Sia's objective). Returns the jobs (indices
    /// into `r`) whose chosen start could not be placed.
    std::vector<std::size_t> apply_solution(const sched_context& c, const round_in& r, const sia_solution& sol,
                                            sched_decisions& d) {
        const auto& cs = *c.cluster;
        auto free = cs.free_vector();
        std::vector<std::size_t> changed;
        for (std::size_t k = 0; k < r.views.size(); ++k)
            if (r.views[k]->running && sol.choice[k] != r.jobs[k].current) {
                detail::give(free, *r.views[k]->alloc);
                changed.push_back(k);
            }
        auto failed = place_starts(cs, r, sol, free, d);
        for (std::size_t k : changed) {
            const auto* j = r.views[k];
            const bool restarts = std::any_of(d.start.begin(), d.start.end(), [&](const auto& s) { return s.job == j->id; });
            const auto& parts = j->alloc->parts;
            const bool idle = std::all_of(parts.begin(), parts.end(), [&](const auto& part) {
                return free[static_cast<std::size_t>(part.node)] >= part.gpus;
            });
            if (!restarts && idle)
                detail::take(free, *j->alloc);  // keep it running
            else
                d.preempt.push_back(j->id);
        }
        return failed;
    }

    /// Places the newly chosen configurations, multi-node first (they need whole nodes), on `free`; returns the
    /// jobs whose configuration could not be placed.
    std::vector<std::size_t> place_starts(const cluster_state& cs, const round_in& r, const sia_solution& sol,
                                          std::vector<int>& free, sched_decisions& d) {
        const auto& in = r.jobs;
        const auto& jobs = r.views;
        std::vector<std::size_t> idx;
        for (std::size_t k = 0; k < jobs.size(); ++k)
            if (sol.choice[k] >= 0 && !(jobs[k]->running && sol.choice[k] == in[k].current)) idx.push_back(k);
        std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
            return in[a].configs[static_cast<std::size_t>(sol.choice[a])].gpus > in[b].configs[static_cast<std::size_t>(sol.choice[b])].gpus;
        });
        std::vector<std::size_t> failed;
        for (std::size_t k : idx) {
            const auto& cf = in[k].configs[static_cast<std::size_t>(sol.choice[k])];
            const plan* p = r.plans[k][static_cast<std::size_t>(sol.choice[k])];
            auto a = place_.place(cs, free, {cf.type, cf.gpus, static_cast<int>(p->parallel.tp)});
            // Not placeable on the nodes as they are (schedule() may exclude it and solve again; past that the job
            // waits: the same inputs would give the same choice, and the nodes only change with what changes the
            // inputs, a start, stop or finish).
            if (!a) {
                failed.push_back(k);
                continue;
            }
            detail::take(free, *a);
            d.start.push_back({jobs[k]->id, *p, std::move(*a), false});
        }
        return failed;
    }

    sia_policy_options opt_;
    P place_;
    std::map<int, int> max_seen_;  // most GPUs each job has run on (growth limit)
    std::string last_sig_;
    double last_solve_s_ = 0;
    solver_stats effort_;
};
using sia_scheduler = basic_sia_scheduler<>;
static_assert(Scheduler<sia_scheduler>);

}  // namespace frenzy
