#pragma once
// Discrete-event, trace-driven cluster simulator. It is the `cluster_backend` of an `orchestrator` and drives any
// `Scheduler` (HAS or a baseline). Deterministic: events at equal times run in insertion order, randomness (node
// failures) comes only from the explicit seed. Models job start-up and restart costs, checkpoint-based restart
// after node failures, out-of-memory crashes of user-sized requests, and times every scheduling decision. Its
// options are sim/options.hpp, its results sim/result.hpp, the memoised plan provider sim/plan_cache.hpp.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <functional>
#include <limits>
#include <map>
#include <ostream>
#include <queue>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/core/error.hpp"
#include "frenzy/hw/cluster.hpp"
#include "frenzy/memory/model_states.hpp"
#include "frenzy/model/transformer.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/sched/cluster_state.hpp"
#include "frenzy/sched/scheduler.hpp"
#include "frenzy/sim/job_plans.hpp"
#include "frenzy/sim/options.hpp"
#include "frenzy/sim/plan_cache.hpp"
#include "frenzy/sim/result.hpp"
#include "frenzy/sim/trace.hpp"

namespace frenzy {

namespace detail {

/// CPU time of the calling thread, microseconds: decision cost that does not count time the thread waited for a
/// CPU on a loaded machine (POSIX CLOCK_THREAD_CPUTIME_ID; steady wall clock where that is unavailable).
inline double thread_cpu_us() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
#endif
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class simulation final : public cluster_backend {
public:
    simulation(const cluster_spec& cluster, std::span<const trace_job> trace, const plan_provider& plans,
               any_scheduler& sched, const sim_options& opt)
        : orch_(cluster, *this), sched_(sched), opt_((validate(opt), opt)), moves_(cluster.moves), rng_(opt.seed),
          truth_rng_(opt.seed ^ 0x9e3779b97f4a7c15ULL) {
        const auto& cs = orch_.state();
        ntypes_ = cs.types().size();
        jobs_.resize(trace.size());
        for (std::size_t i = 0; i < trace.size(); ++i) {
            set_up_job(i, trace, plans);
            push(trace[i].submit_s, ev_arrival, static_cast<int>(i), 0);
        }
        if (opt.node_mtbf_s > 0)
            for (std::size_t n = 0; n < cs.nodes().size(); ++n)
                push(exp_sample(opt.node_mtbf_s), ev_node_fail, static_cast<int>(n), 0);
    }

    sim_result run() {
        const double round = sched_.round_s();
        std::uint64_t events = 0;
        while (!events_.empty() && finished_ < static_cast<int>(jobs_.size())) {
            const double t = events_.top().t;
            if (!(t >= now_)) throw error("simulator: time went back from " + std::to_string(now_) + " to " + std::to_string(t));
            if (t > sim_horizon_s)
                throw error("simulator: simulated time passed 1e12 s (31,700 years) with " +
                            std::to_string(jobs_.size() - static_cast<std::size_t>(finished_)) + " jobs unfinished");
            now_ = t;
            bool changed = false, tick = false;
            while (!events_.empty() && events_.top().t == t) {
                const event e = events_.top();
                events_.pop();
                if (++events > opt_.max_events)
                    throw error("simulator: more than " + std::to_string(opt_.max_events) + " events (max_events) at " +
                                "simulated time " + csv_decimal(now_) + " s with " +
                                std::to_string(jobs_.size() - static_cast<std::size_t>(finished_)) + " jobs unfinished");
                switch (e.kind) {
                    case ev_arrival: changed |= on_arrival(e.a); break;
                    case ev_complete: changed |= on_complete(e.a, e.gen); break;
                    case ev_oom: changed |= on_oom(e.a, e.gen); break;
                    case ev_node_fail: changed |= on_node_fail(e.a); break;
                    case ev_node_recover: changed |= on_node_recover(e.a); break;
                    case ev_tick:
                        tick_pending_ = false;
                        tick = true;
                        log("tick", -1);
                        break;
                }
            }
            if (finished_ == static_cast<int>(jobs_.size())) break;
            const bool active = running_ + waiting_ > 0;
            bool started = false, decided = false;
            if (active && ((changed && sched_.event_driven()) || tick)) {
                started = decide();
                decided = true;
            }
            if (round > 0 && running_ + waiting_ > 0 && !tick_pending_) {
                push(tick ? now_ + round : std::ceil(now_ / round) * round, ev_tick, -1, 0);
                tick_pending_ = true;
            }
            if (opt_.check_invariants) verify();
            if (decided && waiting_ > 0 && running_ == 0 && !started && pending_progress_events_ == 0) {
                // Nothing runs, nothing will arrive or recover: the waiting jobs can never start.
                const std::vector<int> act = active_;
                for (int i : act)
                    if (jobs_[static_cast<std::size_t>(i)].ph == phase::waiting)
                        reject(i, "policy " + std::string(sched_.name()) + " could not place it on the idle cluster");
            }
            if (opt_.progress) opt_.progress(static_cast<double>(finished_) / static_cast<double>(jobs_.size()), now_);
        }
        return finish();
    }

    // cluster_backend
    /// A pipeline over several types (plan::groups) runs at the pace of its slowest stage group: its true speed is
    /// the prediction times the lowest true/predicted ratio of its types. The run is recorded on "type+type" (first
    /// group first).
    void launch(int id, const job_spec&, const plan& p, const allocation& a) override {
        auto& j = jobs_[static_cast<std::size_t>(id)];
        j.cur = p;
        j.on_mixed = p.mixed();
        if (!j.on_mixed) return begin_run(id, p.gpu, a, p.tokens_per_s, j.truth[static_cast<std::size_t>(a.type)]);
        std::string label;
        double truth = std::numeric_limits<double>::infinity();
        for (const auto& c : a.components()) {
            label += (label.empty() ? "" : "+") + orch_.state().types()[static_cast<std::size_t>(c.type)];
            truth = std::min(truth, j.truth[static_cast<std::size_t>(c.type)]);
        }
        begin_run(id, label, a, p.tokens_per_s, truth);
    }
    void stop(int id) override {  // preemption: the job checkpoints, then stops (a move loses its work since one)
        auto& j = jobs_[static_cast<std::size_t>(id)];
        j.lost_s = j.moving ? lost_s(j) : 0.0;
        j.progress = progress_at(j, now_ - j.lost_s);
        end_run(j, j.moving ? "moved" : "preempted");
        if (!j.moving) j.rec.preemptions++;
        log("preempt", id);
    }

private:
    /// The bookkeeping of a launch on `a` (of `gpu`, a type or "type+type"): start-up or restart cost, the run
    /// record, and its completion at the true speed (`tokens_per_s` predicted x `truth`), or its out-of-memory crash.
    void begin_run(int id, const std::string& gpu, const allocation& a, double tokens_per_s, double truth) {
        auto& j = jobs_[static_cast<std::size_t>(id)];
        const double cost = j.moving ? j.move_s : j.rec.launches == 0 ? opt_.startup_s : j.restart_s;
        if (std::exchange(j.moving, false)) {  // no progress during a move, and its lost work is done again
            j.rec.moves++;
            j.rec.moving_s += cost + j.lost_s;
        }
        j.rec.launches++;
        if (j.rec.first_start_s < 0) j.rec.first_start_s = now_;
        j.ph = phase::running;
        j.alloc = a;
        j.run_start = now_;
        j.compute_start = now_ + cost;
        j.rec.gpu = gpu;
        j.rec.gpus = a.gpus();
        j.rec.runs.push_back({now_, -1, gpu, a.gpus(), a.nodes(), {}});
        ++j.gen;
        ++running_;
        --waiting_;
        if (launch_oom_) {
            j.oom_run = true;
            push(now_ + cost, ev_oom, id, j.gen);
        } else {
            j.oom_run = false;
            j.pred_rate = tokens_per_s / j.row->total_tokens;
            j.rate = tokens_per_s * truth / j.row->total_tokens;
            push(j.compute_start + (1.0 - j.progress) / j.rate, ev_complete, id, j.gen);
        }
        ++pending_progress_events_;
        log(launch_oom_ ? "start-oom" : "start", id);
    }

    enum ev_kind { ev_arrival, ev_complete, ev_oom, ev_node_fail, ev_node_recover, ev_tick };
    struct event {
        double t;
        std::uint64_t seq;
        ev_kind kind;
        int a;
        std::uint64_t gen;
        bool operator>(const event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
    };
    enum class phase { pending, waiting, running, done };
    struct job : sim_job_plans {
        const trace_job* row = nullptr;
        job_spec spec;  // what its launches receive (to_job_spec of its row)
        phase ph = phase::pending;
        double ckpt_s = 3600;
        double progress = 0;  // checkpointed progress at the start of the current run
        double attained = 0, executed = 0;
        double queued_since = 0;
        int oom = 0;
        // current run
        plan cur;
        bool on_mixed = false;  // cur is a pipeline over several types (cur.groups)
        allocation alloc;
        bool oom_run = false;
        double run_start = 0, compute_start = 0, rate = 0, pred_rate = 0;  // rate: true; pred_rate: predicted
        double restart_s = 30;
        double move_s = 0;      // a move's cost before it computes again (move_costs: save, restart, start-up, load)
        bool moving = false;    // preempted by a move, restarting on its new plan
        double lost_s = 0;      // compute seconds the current move lost (since the last checkpoint)
        std::vector<double> truth;     // true / predicted speed per type
        std::vector<double> measured;  // what policies have observed of `truth` (0 = not yet)
        std::uint64_t gen = 0;
        job_record rec;
    };

    /// Job i of the trace: its record, checks of its row, restart cost, true speeds, and its plans (set_up_plans).
    void set_up_job(std::size_t i, std::span<const trace_job> trace, const plan_provider& plans) {
        const auto& cs = orch_.state();
        const auto& opt = opt_;
        auto& j = jobs_[i];
        j.row = &trace[i];
        j.rec.job_id = trace[i].job_id;
        j.rec.model = trace[i].model;
        j.rec.submit_s = trace[i].submit_s;
        if (!(trace[i].submit_s >= 0 && trace[i].submit_s <= sim_horizon_s))
            throw config_error("trace job " + trace[i].job_id + ": submit_s=" + csv_decimal(trace[i].submit_s) +
                               " must be in [0, " + bound_text(bounds::sim_horizon_s.max) + "]");
        if (!trace[i].requested_type.empty() && cs.type_index(trace[i].requested_type) < 0) {
            std::string known;
            for (const auto& t : cs.types()) known += (known.empty() ? "" : ", ") + t;
            throw config_error("trace job " + trace[i].job_id + ": requested_type=\"" + trace[i].requested_type +
                               "\" is not a GPU type of the cluster (" + known + ")");
        }
        j.spec = to_job_spec(trace[i]);
        const job_spec& spec = j.spec;
        j.ckpt_s = opt.checkpoint_interval_s > 0 ? opt.checkpoint_interval_s : spec.training.checkpoint_interval_s;
        j.restart_s = opt.restart_s;
        if (opt.checkpoint_GBps > 0)
            j.restart_s += 2.0 * checkpoint_bytes(total_parameters(spec.model, spec.training.seq_len)) / (opt.checkpoint_GBps * 1e9);
        j.move_s = move_seconds(moves_, checkpoint_state_bytes(spec));
        // Truth: one log-normal factor per job x type, drawn for every job so the draws do not depend on
        // which plans exist (Box-Muller on explicit mt19937_64 bits: identical on every standard library).
        j.truth.assign(ntypes_, 1.0);
        j.measured.assign(ntypes_, 0.0);
        for (std::size_t t = 0; t < ntypes_; ++t) {
            const double z = normal_sample();
            if (opt.speed_error > 0)
                j.truth[t] = std::clamp(std::exp(opt.speed_error * z), 1 / max_speed_factor, max_speed_factor);
        }
        set_up_plans(j, orch_.state(), opt_, trace[i], plans(spec));
    }

    void push(double t, ev_kind k, int a, std::uint64_t gen) { events_.push({t, seq_++, k, a, gen}); }
    double normal_sample() {  // Box-Muller on explicit bits
        const double u1 = (static_cast<double>(truth_rng_() >> 11) + 0.5) * 0x1.0p-53;
        const double u2 = static_cast<double>(truth_rng_() >> 11) * 0x1.0p-53;
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }
    /// Records what a run has shown of the job's true speed once it has computed long enough.
    void observe(job& j) {
        if (j.ph != phase::running || j.oom_run || j.on_mixed) return;  // a mixed run measures no one type
        if (now_ - j.compute_start >= opt_.measure_after_s && j.pred_rate > 0)
            j.measured[static_cast<std::size_t>(j.alloc.type)] = j.rate / j.pred_rate;
    }
    void deactivate(int id) {
        auto it = std::lower_bound(active_.begin(), active_.end(), id);
        if (it != active_.end() && *it == id) active_.erase(it);
    }
    double exp_sample(double mean) {  // inverse-CDF on mt19937_64 bits: identical on every standard library
        const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
        return -std::log1p(-u) * mean;
    }
    void log(const char* what, int id) {
        if (opt_.record_log) log_.push_back({now_, what, id});
    }
    /// Compute seconds of `j`'s current run since its last checkpoint (0 when it checkpoints on the move's signal).
    double lost_s(const job& j) const {
        const double ran = j.oom_run ? 0.0 : std::max(0.0, now_ - j.compute_start);
        return moves_.checkpoint_interval_s > 0 ? std::fmod(ran, moves_.checkpoint_interval_s) : 0.0;
    }
    double progress_at(const job& j, double t) const {
        if (j.ph != phase::running || j.oom_run) return j.progress;
        return std::min(1.0, j.progress + j.rate * std::max(0.0, t - j.compute_start));
    }
    /// Seconds the current run has computed (its start-up or restart excluded; 0 for a launch that runs out of
    /// memory): the service Tiresias counts. Counting the launch overhead as service demotes a job of g GPUs after
    /// 3,600/g s of a 1 GPU-hour queue, inside a 300 s restart, and two such jobs then preempt each other forever.
    double served_s(const job& j) const { return j.oom_run ? 0.0 : std::max(0.0, now_ - j.compute_start); }
    /// Common bookkeeping when a run ends (any reason); the job goes back to the queue.
    void end_run(job& j, const char* why) {
        observe(j);
        j.rec.runs.back().end_s = now_;
        j.rec.runs.back().ended = why;
        const double held = now_ - j.run_start;
        j.attained += served_s(j) * j.alloc.gpus();
        j.executed += held;
        j.rec.gpu_seconds += held * j.alloc.gpus();
        busy_gpu_s_ += held * j.alloc.gpus();
        j.ph = phase::waiting;
        j.queued_since = now_;
        ++j.gen;  // invalidates its pending completion/oom event
        --running_;
        ++waiting_;
        --pending_progress_events_;
    }

    bool on_arrival(int id) {
        auto& j = jobs_[static_cast<std::size_t>(id)];
        log("arrival", id);
        active_.insert(std::upper_bound(active_.begin(), active_.end(), id), id);
        if (!j.reject_reason.empty()) {
            j.ph = phase::waiting;
            ++waiting_;
            reject(id, j.reject_reason);
            return false;
        }
        j.ph = phase::waiting;
        j.queued_since = now_;
        ++waiting_;
        return true;
    }
    bool on_complete(int id, std::uint64_t gen) {
        auto& j = jobs_[static_cast<std::size_t>(id)];
        if (j.gen != gen || j.ph != phase::running) return false;
        orch_.finished(id);
        j.progress = 1;
        end_run(j, "completed");
        --waiting_;
        j.ph = phase::done;
        j.rec.outcome = job_outcome::completed;
        j.rec.end_s = now_;
        ++finished_;
        deactivate(id);
        log("complete", id);
        return true;
    }
    bool on_oom(int id, std::uint64_t gen) {
        auto& j = jobs_[static_cast<std::size_t>(id)];
        if (j.gen != gen || j.ph != phase::running) return false;
        orch_.finished(id);
        end_run(j, "out of memory");
        j.oom++;
        j.rec.oom_failures++;
        log("oom", id);
        return true;
    }
    bool on_node_fail(int node) {
        log("node-fail", node);
        auto hit = orch_.node_failed(node);
        for (int id : hit) {
            auto& j = jobs_[static_cast<std::size_t>(id)];
            if (!j.oom_run) {
                // Restart from the last checkpoint: checkpoints are written every ckpt_s of computing.
                const double ran = std::max(0.0, now_ - j.compute_start);
                const double kept = std::floor(ran / j.ckpt_s) * j.ckpt_s;
                j.progress = std::min(1.0, j.progress + j.rate * kept);
            }
            end_run(j, "node failure");
            j.rec.node_failures++;
        }
        push(now_ + opt_.node_repair_s, ev_node_recover, node, 0);  // validate() bounds node_repair_s
        ++pending_progress_events_;
        return true;
    }
    bool on_node_recover(int node) {
        log("node-recover", node);
        orch_.node_recovered(node);
        --pending_progress_events_;
        if (finished_ < static_cast<int>(jobs_.size())) push(now_ + exp_sample(opt_.node_mtbf_s), ev_node_fail, node, 0);
        return true;
    }
    void reject(int id, const std::string& why, job_outcome how = job_outcome::infeasible) {
        auto& j = jobs_[static_cast<std::size_t>(id)];
        if (j.ph != phase::waiting) throw error("simulator: policy rejected job " + j.rec.job_id + " which is not waiting");
        j.ph = phase::done;
        --waiting_;
        j.rec.outcome = how;
        j.rec.reason = why;
        if (how == job_outcome::failed) j.rec.end_s = now_;
        j.rec.rejected_s = now_;
        ++finished_;
        deactivate(id);
        log(how == job_outcome::failed ? "fail" : "reject", id);
    }

    /// One scheduling decision: build the views, time the policy, apply its decisions. True if anything started.
    bool decide() {
        build_views();
        sched_context ctx{now_, &orch_.state(), views_};
        const double t0 = thread_cpu_us();
        sched_decisions d = sched_.schedule(ctx);
        decision_us_.push_back(thread_cpu_us() - t0);
        return apply(d);
    }

    /// views_: what the policy may know of every active job (predictions, observed progress, measured speeds).
    void build_views() {
        views_.clear();
        for (int id : active_) {
            const auto i = static_cast<std::size_t>(id);
            auto& j = jobs_[i];
            if (j.ph != phase::waiting && j.ph != phase::running) continue;
            observe(j);
            job_view v;
            v.id = static_cast<int>(i);
            v.submit_s = j.row->submit_s;
            v.plans = &j.plans;
            v.total_tokens = j.row->total_tokens;
            v.requested_gpus = j.eff_gpus;
            v.requested_type = j.eff_type;
            v.restart_s = j.restart_s;
            v.move_s = j.move_s;
            v.measured_ratio = j.measured;
            v.plan_types = j.plan_types;
            v.plan_rates = j.plan_rates;
            v.mixed_types = j.mixed_types;
            v.running = j.ph == phase::running;
            v.progress = progress_at(j, now_);
            const double held = v.running ? now_ - j.run_start : 0.0;
            v.attained_gpu_s = j.attained + (v.running ? served_s(j) * j.alloc.gpus() : 0.0);
            v.executed_s = j.executed + held;
            v.queued_since_s = j.queued_since;
            v.oom_failures = j.oom;
            v.launches = j.rec.launches;
            if (v.running) {
                v.current = j.on_mixed ? nullptr : &j.cur;
                v.run_started_s = j.run_start;
                v.move_lost = v.progress - progress_at(j, now_ - lost_s(j));
                v.alloc = &j.alloc;
                // What a policy can know: the measured speed once observed, else the prediction.
                const bool seen = !j.on_mixed && j.measured[static_cast<std::size_t>(j.alloc.type)] > 0;
                v.predicted_end_s = j.oom_run ? j.compute_start
                                              : std::max(now_, j.compute_start) + (1.0 - v.progress) / (seen ? j.rate : j.pred_rate);
            }
            views_.push_back(v);
        }
    }

    /// Applies a decision: rejections, then preemptions, then starts (each checked). True if anything started.
    bool apply(const sched_decisions& d) {
        for (const auto& r : d.reject) reject(r.job, r.reason);
        for (const auto& s : d.start)
            if (s.move) jobs_.at(static_cast<std::size_t>(s.job)).moving = std::find(d.preempt.begin(), d.preempt.end(), s.job) != d.preempt.end();
        for (int id : d.preempt) {
            auto& j = jobs_.at(static_cast<std::size_t>(id));
            if (j.ph != phase::running) throw error("simulator: policy preempted job " + j.rec.job_id + " which is not running");
            orch_.stop(id);
        }
        for (const auto& s : d.start) {
            auto& j = jobs_.at(static_cast<std::size_t>(s.job));
            if (j.ph != phase::waiting) throw error("simulator: policy started job " + j.rec.job_id + " which is not waiting");
            if (s.p.mixed() && std::find(j.plans.begin(), j.plans.end(), s.p) == j.plans.end())
                throw error("simulator: policy started job " + j.rec.job_id + " on a mixed plan that is not one of its own");
            if (!s.p.mixed() && !s.oom && std::find(j.plans.begin(), j.plans.end(), s.p) == j.plans.end()) {
                // A policy may hold more GPUs than a plan uses (user-sized requests); the plan itself must be one
                // of the job's feasible plans on that type.
                bool ok = false;
                for (const auto& q : j.plans)
                    if (q.gpu == s.p.gpu && q.gpus <= s.p.gpus && q.tokens_per_s == s.p.tokens_per_s && q.parallel == s.p.parallel) ok = true;
                if (!ok) throw error("simulator: policy started job " + j.rec.job_id + " on a plan that is not one of its feasible plans");
            }
            if (j.rec.node_failures + j.rec.oom_failures >= opt_.max_failures) {
                reject(s.job, "failed: too many restarts (" + std::to_string(j.rec.node_failures + j.rec.oom_failures) +
                                  " runs ended in a failure, limit " + std::to_string(opt_.max_failures) + ")", job_outcome::failed);
                continue;
            }
            launch_oom_ = s.oom;
            orch_.start(s.job, j.spec, s.p, s.alloc);
            launch_oom_ = false;
        }
        return !d.start.empty();
    }

    void verify() const {
        const auto& cs = orch_.state();
        if (auto e = cs.check_invariants(); !e.empty()) throw error("simulator: orchestrator invariant broken: " + e);
        int running = 0;
        if (cs.holdings().size() != static_cast<std::size_t>(running_))
            throw error("simulator: " + std::to_string(cs.holdings().size()) + " jobs hold GPUs, " + std::to_string(running_) + " run");
        for (int id : active_) {
            const auto& j = jobs_[static_cast<std::size_t>(id)];
            const auto* h = cs.holding(id);
            if (j.ph == phase::running) {
                ++running;
                if (!h) throw error("simulator: running job " + j.rec.job_id + " holds no GPUs");
                if (!holds_its_plan(j, *h)) throw error("simulator: job " + j.rec.job_id + " holds GPUs other than its plan's types and counts");
            } else if (h) {
                throw error("simulator: job " + j.rec.job_id + " holds GPUs while not running");
            }
        }
        if (running != running_) throw error("simulator: running job count out of balance");
    }

    /// Whether allocation `h` is the GPU type(s) and count(s) of the plan `j` runs (each stage group's, mixed).
    bool holds_its_plan(const job& j, const allocation& h) const {
        const auto& types = orch_.state().types();
        if (!j.on_mixed) return h.next.empty() && types[static_cast<std::size_t>(h.type)] == j.cur.gpu && h.gpus() == j.cur.gpus;
        const auto comps = h.components();
        if (comps.size() != j.cur.groups.size()) return false;
        for (std::size_t k = 0; k < comps.size(); ++k)
            if (types[static_cast<std::size_t>(comps[k].type)] != j.cur.groups[k].gpu || comps[k].gpus() != j.cur.groups[k].gpus)
                return false;
        return true;
    }

    sim_result finish() {
        sim_result r;
        auto& m = r.metrics;
        m.policy = std::string(sched_.name());
        m.jobs = static_cast<int>(jobs_.size());
        std::vector<double> jct;
        double queue = 0, first = std::numeric_limits<double>::infinity(), last = 0, last_any = 0;
        for (auto& j : jobs_) {
            first = std::min(first, j.row->submit_s);
            if (j.rec.outcome == job_outcome::failed) last_any = std::max(last_any, j.rec.end_s);
            if (j.rec.outcome == job_outcome::completed) {
                jct.push_back(j.rec.jct());
                queue += j.rec.first_start_s - j.rec.submit_s;
                last = std::max(last, j.rec.end_s);
            } else {
                ++m.failed_jobs;
            }
            r.jobs.push_back(j.rec);
        }
        m.completed = static_cast<int>(jct.size());
        if (!jct.empty()) {
            double s = 0;
            for (double x : jct) s += x;
            m.avg_jct_s = s / static_cast<double>(jct.size());
            m.avg_queue_s = queue / static_cast<double>(jct.size());
            std::sort(jct.begin(), jct.end());
            m.p50_jct_s = percentile(jct, 0.50);
            m.p99_jct_s = percentile(jct, 0.99);
            m.makespan_s = last - first;
            // Over the span to the last completion or failure: failed jobs held GPUs too.
            const double cap = static_cast<double>(orch_.state().total_gpus()) * (std::max(last, last_any) - first);
            m.gpu_utilization = cap > 0 ? busy_gpu_s_ / cap : 0;
        }
        for (const auto& j : jobs_) {
            m.moves += j.rec.moves;
            m.moving_s += j.rec.moving_s;
        }
        m.solver_solves = sched_.solver_effort().solves;
        m.solver_optimal = sched_.solver_effort().optimal;
        m.solver_timed_out = sched_.solver_effort().timed_out;
        m.sched_calls = static_cast<int>(decision_us_.size());
        if (!decision_us_.empty()) {
            double s = 0;
            for (double x : decision_us_) s += x;
            m.sched_mean_us = s / static_cast<double>(decision_us_.size());
            auto sorted = decision_us_;
            std::sort(sorted.begin(), sorted.end());
            m.sched_p99_us = percentile(sorted, 0.99);
        }
        r.decision_us = std::move(decision_us_);
        r.log = std::move(log_);
        return r;
    }

    orchestrator orch_;
    any_scheduler& sched_;
    sim_options opt_;
    move_costs moves_;
    std::mt19937_64 rng_;
    std::mt19937_64 truth_rng_;  // speed errors: a stream apart from the failures', so failures do not move
    std::size_t ntypes_ = 0;
    std::vector<job> jobs_;
    std::vector<int> active_;    // waiting and running jobs, ascending index (= arrival order)
    std::vector<job_view> views_;
    std::priority_queue<event, std::vector<event>, std::greater<event>> events_;
    std::uint64_t seq_ = 0;
    double now_ = 0;
    int finished_ = 0, running_ = 0, waiting_ = 0;
    int pending_progress_events_ = 0;  // completions, OOM crashes and recoveries still to come
    bool tick_pending_ = false;
    bool launch_oom_ = false;
    double busy_gpu_s_ = 0;
    std::vector<double> decision_us_;
    std::vector<sim_log_entry> log_;
};

}  // namespace detail

/// Replays `trace` on `cluster` under `sched`. Jobs whose model has no feasible plan, and jobs a policy rejects or
/// can never place, are reported infeasible with a reason; every other job completes.
inline sim_result simulate(const cluster_spec& cluster, std::span<const trace_job> trace, const plan_provider& plans,
                           any_scheduler sched, const sim_options& opt = {}) {
    detail::simulation s(cluster, trace, plans, sched, opt);
    return s.run();
}

}  // namespace frenzy
