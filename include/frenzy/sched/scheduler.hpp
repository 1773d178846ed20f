#pragma once
// What a scheduling policy sees (the jobs waiting and running, the cluster) and what it decides (start a job on a
// plan and an allocation, preempt a job, reject a job with a reason). HAS and every baseline implement the
// `Scheduler` concept; `any_scheduler` erases the type for hosts that choose at run time.
#include <algorithm>
#include <concepts>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/sched/cluster_state.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// Ranked plans of a job: the planner's answer, or any host's own.
using plan_provider = std::function<plan_result(const job_spec&)>;

/// What a scheduler reads of every plan of every waiting job at each decision, packed (job_view::plan_rates): 16
/// bytes where a plan record spreads them over two of its cache lines.
struct plan_rate {
    double tokens_per_s = 0;
    int gpus = 0;
    int tp = 1;  ///< parallel.tp
};
inline plan_rate rate_of(const plan& p) { return {p.tokens_per_s, p.gpus, static_cast<int>(p.parallel.tp)}; }

/// One job as a scheduler sees it at the time of a decision.
struct job_view {
    int id = 0;
    double submit_s = 0;
    /// Feasible plans, best first (never null for an active job): those on one GPU type, then the pipelines over
    /// several types (plans with stage groups, plan_options::mixed), best first among themselves. one_type() and
    /// pipelines() are the two parts; a policy that does not run pipelines reads one_type().
    const std::vector<plan>* plans = nullptr;
    double total_tokens = 0;
    int requested_gpus = 0;                    ///< the user's request (0 = none)
    std::string_view requested_type;           ///< the user's request ("" = none)
    bool running = false;
    double progress = 0;          ///< fraction of total_tokens done, counting only checkpointed work when waiting
    double attained_gpu_s = 0;    ///< GPU-seconds computed so far, launch overheads excluded (Tiresias' 2D service)
    double executed_s = 0;        ///< wall seconds run so far
    double queued_since_s = 0;    ///< when it last entered the queue (waiting jobs)
    int oom_failures = 0;         ///< launches that ran out of memory (baselines that honour user requests)
    int launches = 0;
    // running jobs only:
    const plan* current = nullptr;        ///< its plan on one GPU type; null while it runs a pipeline over several
    const allocation* alloc = nullptr;
    double run_started_s = 0;     ///< when the current run was launched
    double predicted_end_s = 0;   ///< with the current plan (its measured speed once observed), start-up included
    double restart_s = 0;         ///< what one more launch of this job costs (checkpoint save + load, relaunch), s
    /// What moving this running job to another plan now costs before it computes again, s: checkpoint save and
    /// resharding load, restart and framework start-up (the host's hw/cluster.hpp move_costs); 0 = the host states
    /// none, and a policy takes restart_s.
    double move_s = 0;
    /// Fraction of total_tokens a move now loses (the work since its last checkpoint; 0 when it checkpoints on the
    /// move's signal): done again after the move.
    double move_lost = 0;
    /// Per GPU type index of the cluster: this job's observed tokens/s over the predicted tokens/s of the plan it
    /// ran, on that type (0 = never measured there). A running job is measured once it has computed for
    /// sim_options::measure_after_s; the value is kept after the run ends. Empty = nothing measured.
    std::span<const double> measured_ratio;
    /// Cluster type index of each plan in one_type() (a host's cache; empty = policies look the types up).
    std::span<const int> plan_types;
    /// rate_of each plan in one_type() (a host's cache; empty = policies read the plans).
    std::span<const plan_rate> plan_rates;
    /// Cluster type index of each stage group of each plan in pipelines(), in order (a host's cache; empty =
    /// policies look the types up).
    std::span<const int> mixed_types;

    /// The plans on one GPU type: the leading part of *plans.
    std::span<const plan> one_type() const { return {plans->data(), plans->size() - pipeline_count()}; }
    /// The pipelines over several GPU types: the trailing part of *plans (empty when none).
    std::span<const plan> pipelines() const {
        const std::size_t n = pipeline_count();
        return {plans->data() + (plans->size() - n), n};
    }
    /// How many plans at the end of *plans have stage groups (read from the end: a pipeline-free list costs one look).
    std::size_t pipeline_count() const {
        std::size_t n = 0;
        while (n < plans->size() && (*plans)[plans->size() - 1 - n].mixed()) ++n;
        return n;
    }

    /// Seconds the rest of the job takes with plan `p` (start-up excluded), by the prediction.
    double remaining_s(const plan& p) const {
        return p.tokens_per_s > 0 ? (1.0 - progress) * total_tokens / p.tokens_per_s : 0.0;
    }
    /// Factor on a plan's remaining time after a move: the work the move loses is done again.
    double redo_factor() const { return progress < 1 ? (1.0 - progress + move_lost) / (1.0 - progress) : 1.0; }
    /// Observed/predicted speed ratio of this job on type `t`, or `fallback` when never measured there.
    double ratio_on(int t, double fallback = 1.0) const {
        const auto ut = static_cast<std::size_t>(t);
        return t >= 0 && ut < measured_ratio.size() && measured_ratio[ut] > 0 ? measured_ratio[ut] : fallback;
    }
};

/// What a host knows of one of its jobs. make_job_view turns it into the view policies decide on, so hosts do not
/// rebuild job_view themselves (which fields a running job needs, how its predicted end follows).
struct job_facts {
    int id = 0;
    double submit_s = 0;
    const std::vector<plan>* plans = nullptr;  ///< the job's feasible plans, best first, as job_view::plans
    double total_tokens = 0;
    int requested_gpus = 0;                    ///< the user's request (0 = none)
    std::string_view requested_type;           ///< the user's request ("" = none)
    double progress = 0;                       ///< fraction of total_tokens done (checkpointed, when waiting)
    int launches = 0;                          ///< launches so far (0: its next launch pays start-up, not restart)
    double restart_s = 30;                     ///< what one more launch costs, s
    double queued_since_s = 0;                 ///< when it last entered the queue (waiting jobs)
    // running jobs only (current == nullptr: waiting):
    const plan* current = nullptr;             ///< the plan it runs
    double run_started_s = 0;                  ///< when the current run was launched
    double launch_s = 0;                       ///< start-up or restart of the current run, before it computes, s
};

/// The view of `f` at time `now`: a running job's allocation is what `cluster` says it holds, and its predicted end
/// is when its launch cost is paid plus the rest of its tokens at its plan's predicted speed. Throws frenzy::error
/// if `f.plans` is null, or a running job holds no GPUs in `cluster` (host and cluster state disagree).
inline job_view make_job_view(const job_facts& f, const cluster_state& cluster, double now) {
    if (!f.plans) throw error("make_job_view: job " + std::to_string(f.id) + " has no plan list (job_facts::plans is null)");
    job_view v;
    v.id = f.id;
    v.submit_s = f.submit_s;
    v.plans = f.plans;
    v.total_tokens = f.total_tokens;
    v.requested_gpus = f.requested_gpus;
    v.requested_type = f.requested_type;
    v.progress = f.progress;
    v.launches = f.launches;
    v.restart_s = f.restart_s;
    v.queued_since_s = f.queued_since_s;
    if (!f.current) return v;
    v.alloc = cluster.holding(f.id);
    if (!v.alloc) throw error("make_job_view: job " + std::to_string(f.id) + " runs but holds no GPUs in the cluster state");
    v.running = true;
    v.current = f.current;
    v.run_started_s = f.run_started_s;
    v.executed_s = std::max(0.0, now - f.run_started_s);
    v.predicted_end_s = std::max(now, f.run_started_s + f.launch_s) + v.remaining_s(*f.current);
    return v;
}

/// The state a decision is made on.
struct sched_context {
    double now = 0;
    const cluster_state* cluster = nullptr;
    std::span<const job_view> jobs;  ///< active jobs (waiting and running), in arrival order
};

struct start_decision {
    int job = 0;
    plan p;              ///< one of the job's plans or mixed plans; for a launch that will run out of memory, see `oom`
    allocation alloc;    ///< one component per stage group when `p` has groups (plan::mixed)
    bool oom = false;    ///< the request does not fit in memory: the launch crashes after its start-up
    /// A move: the job runs and is preempted by the same decision, and restarts on `p` at its move cost
    /// (job_view::move_s) rather than its restart cost.
    bool move = false;
};
struct reject_decision {
    int job = 0;
    std::string reason;
};

/// Preemptions are applied before starts.
struct sched_decisions {
    std::vector<int> preempt;
    std::vector<start_decision> start;
    std::vector<reject_decision> reject;
};

/// Optimisation effort of a policy that solves a program per decision (Sia's ILP): solves, how many the solver
/// proved optimal (the rest stopped at a limit with the best schedule found), and how many of those stopped at the
/// wall-clock limit (whose answer depends on the machine). A policy reports it with a `solver_effort()` member;
/// any_scheduler returns zeros for the others.
struct solver_stats {
    int solves = 0;
    int optimal = 0;
    int timed_out = 0;
};

/// A scheduling policy. `round_s() > 0` asks to be called every round; `event_driven()` asks to be called after
/// every arrival, completion and failure.
template <class S>
concept Scheduler = requires(S& s, const sched_context& c) {
    { s.schedule(c) } -> std::same_as<sched_decisions>;
    { s.name() } -> std::convertible_to<std::string_view>;
    { s.round_s() } -> std::convertible_to<double>;
    { s.event_driven() } -> std::convertible_to<bool>;
};

/// Type-erased scheduler, for hosts that pick the policy at run time. Copies are deep: each copy has its own
/// policy state (round-based policies remember what jobs received).
class any_scheduler {
public:
    template <Scheduler S>
        requires(!std::same_as<std::remove_cvref_t<S>, any_scheduler>)
    any_scheduler(S s) : self_(std::make_unique<model<S>>(std::move(s))) {}  // NOLINT: implicit by design
    any_scheduler(const any_scheduler& o) : self_(o.self_->clone()) {}
    any_scheduler(any_scheduler&&) noexcept = default;
    any_scheduler& operator=(const any_scheduler& o) {
        if (this != &o) self_ = o.self_->clone();
        return *this;
    }
    any_scheduler& operator=(any_scheduler&&) noexcept = default;
    sched_decisions schedule(const sched_context& c) { return self_->schedule(c); }
    std::string_view name() const { return self_->name(); }
    double round_s() const { return self_->round_s(); }
    bool event_driven() const { return self_->event_driven(); }
    solver_stats solver_effort() const { return self_->solver_effort(); }

private:
    struct concept_t {
        virtual ~concept_t() = default;
        virtual sched_decisions schedule(const sched_context&) = 0;
        virtual std::string_view name() const = 0;
        virtual double round_s() const = 0;
        virtual bool event_driven() const = 0;
        virtual solver_stats solver_effort() const = 0;
        virtual std::unique_ptr<concept_t> clone() const = 0;
    };
    template <class S>
    struct model final : concept_t {
        S s;
        explicit model(S x) : s(std::move(x)) {}
        sched_decisions schedule(const sched_context& c) override { return s.schedule(c); }
        std::string_view name() const override { return s.name(); }
        double round_s() const override { return static_cast<double>(s.round_s()); }
        bool event_driven() const override { return s.event_driven(); }
        solver_stats solver_effort() const override {
            if constexpr (requires(const S& x) { { x.solver_effort() } -> std::same_as<solver_stats>; }) return s.solver_effort();
            else return {};
        }
        std::unique_ptr<concept_t> clone() const override { return std::make_unique<model<S>>(s); }
    };
    std::unique_ptr<concept_t> self_;
};
static_assert(Scheduler<any_scheduler>);

/// Fastest plan of a job on GPU type `gpu` using at most `max_gpus` GPUs; null if none (the job does not fit in
/// `max_gpus` GPUs of that type). Baselines that honour a user's GPU count use this.
inline const plan* plan_for_request(std::span<const plan> plans, std::string_view gpu, int max_gpus) {
    const plan* best = nullptr;
    for (const auto& p : plans)
        if (p.gpu == gpu && p.gpus <= max_gpus && (!best || p.tokens_per_s > best->tokens_per_s)) best = &p;
    return best;
}

/// The GPU count a policy that does not size jobs itself uses when counts are free (sim size_regime::free): that
/// of the fastest plan whose GPU-seconds stay within (1 + slack) of the least GPU-seconds of the job on that plan's
/// type (scale out only while efficient; HAS's efficiency rule, has_options::efficiency_slack). 0 without plans.
inline int efficient_size(std::span<const plan> plans, double slack = 0.25) {
    std::vector<std::pair<std::string_view, double>> least;  // per type: least GPUs / (tokens/s)
    for (const auto& p : plans) {
        if (!(p.tokens_per_s > 0)) continue;
        const double gs = p.gpus / p.tokens_per_s;
        auto it = std::find_if(least.begin(), least.end(), [&](const auto& e) { return e.first == p.gpu; });
        if (it == least.end()) least.push_back({p.gpu, gs});
        else it->second = std::min(it->second, gs);
    }
    const plan* best = nullptr;
    for (const auto& p : plans) {
        if (!(p.tokens_per_s > 0)) continue;
        auto it = std::find_if(least.begin(), least.end(), [&](const auto& e) { return e.first == p.gpu; });
        if (p.gpus / p.tokens_per_s > (1.0 + slack) * it->second * (1 + 1e-12)) continue;
        if (!best || p.tokens_per_s > best->tokens_per_s || (p.tokens_per_s == best->tokens_per_s && p.gpus < best->gpus)) best = &p;
    }
    return best ? best->gpus : 0;
}

}  // namespace frenzy
