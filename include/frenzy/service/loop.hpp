#pragma once
// The scheduling loop of `frenzy serve`: the jobs it holds (each with its spec, limits and plans), the scheduling
// policy chosen by name (sched/policy_registry.hpp; HAS by default, submitter priorities first) deciding what runs
// where, the Slurm backend submitting it, and reconciliation with what Slurm knows, at start-up (after a crash) and
// on every tick (node failures, job ends, lost submissions). The engine (service/engine.hpp) adds the HTTP-shaped
// requests on top. Thread-safe: the HTTP threads and the loop thread share one mutex.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/backend/slurm.hpp"
#include "frenzy/plan/planner.hpp"
#include "frenzy/sched/policy_registry.hpp"
#include "frenzy/service/codecs.hpp"
#include "frenzy/service/live_job.hpp"
#include "frenzy/service/store.hpp"

namespace frenzy {

struct engine_options {
    plan_options planning{};       ///< with planning.mixed, HAS may also run a job as a pipeline over several GPU types
    std::string policy = "has";    ///< the scheduling policy by name (sched/policy_registry.hpp)
    /// Its knobs. serve never restarts a running Slurm job on more GPUs (has.expand_idle is turned off) and
    /// applies no preemption; submitter priorities reach HAS through policy_options::priority.
    policy_options policies{};
    std::string decision_log;      ///< JSON-lines path ("" = none)
    double tick_s = 1.0;
};

class serve_loop : private submission_journal {
public:
    serve_loop(const slurm_api& slurm, job_store& store, gres_map map, engine_options o = {}, gpu_catalog catalog = {})
        : slurm_(&slurm), store_(&store), map_(std::move(map)), opt_(std::move(o)), catalog_(std::move(catalog)),
          policy_(make_policy(opt_, priority_)) {
        if (!opt_.decision_log.empty()) {
            log_.open(opt_.decision_log, std::ios::app);
            if (!log_) throw config_error("decision_log " + opt_.decision_log + ": cannot open for appending");
        }
    }
    serve_loop(const serve_loop&) = delete;
    serve_loop& operator=(const serve_loop&) = delete;

    /// Reads the inventory (throws io_error if Slurm cannot be reached), then reconciles the store with Slurm.
    void start() {
        std::lock_guard lk(m_);
        inv_ = inventory_from_nodes(slurm_->nodes(), map_, catalog_);
        if (inv_.spec.nodes.empty()) {
            std::string why;
            for (const auto& s : inv_.skipped) why += "; " + s;
            throw config_error("the Slurm cluster has no node with a GPU GRES that maps to a catalog type" + why);
        }
        backend_ = std::make_unique<slurm_backend>(*slurm_, inv_, static_cast<submission_journal*>(this));
        orch_ = std::make_unique<orchestrator>(inv_.spec, *backend_);
        reconcile_startup();
    }

    /// One round: poll Slurm, follow nodes and jobs, act on cancellations, schedule, submit.
    void tick() {
        std::vector<slurm_node> nodes;
        std::vector<slurm_job> sjobs;
        try {
            nodes = slurm_->nodes();
            sjobs = slurm_->jobs();
        } catch (const error& e) {
            std::lock_guard lk(m_);
            if (slurm_up_) log_decision({{"decision", "slurm-unreachable"}, {"why", e.what()}});
            slurm_up_ = false;
            return;
        }
        std::lock_guard lk(m_);
        if (!slurm_up_) log_decision({{"decision", "slurm-reachable"}});
        slurm_up_ = true;
        const double now = unix_now();
        last_nodes_.clear();
        for (auto& n : nodes) last_nodes_[n.name] = n;
        const slurm_index idx(sjobs);
        follow_nodes(now);
        follow_jobs(now, idx);
        do_cancels(now);
        schedule(now);
    }

    /// Runs tick() every opt.tick_s until `stop` becomes true.
    void run(const std::atomic<bool>& stop) {
        while (!stop) {
            const auto t0 = std::chrono::steady_clock::now();
            try {
                tick();
            } catch (const std::exception& e) {
                std::lock_guard lk(m_);
                log_decision({{"decision", "tick-error"}, {"why", e.what()}});
            }
            while (!stop && std::chrono::steady_clock::now() - t0 < std::chrono::duration<double>(opt_.tick_s)) {
                std::unique_lock lk(m_);
                if (dirty_) {
                    dirty_ = false;
                    break;
                }
                lk.unlock();
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        }
    }

    const slurm_inventory& inventory() const { return inv_; }
    std::vector<double> decision_latencies() const {
        std::lock_guard lk(m_);
        return decision_lat_;
    }
    /// The scheduling policy's name (engine_options::policy).
    std::string_view policy() const { return policy_.name(); }

protected:
    static any_scheduler make_policy(const engine_options& o, const std::map<int, int>& priority) {
        auto po = o.policies;
        po.has.expand_idle = false;  // restarting a Slurm job on more GPUs costs a requeue
        po.priority = [p = &priority](int job) {
            auto it = p->find(job);
            return it == p->end() ? 0 : it->second;
        };
        return make_scheduler(checked_policy_name(o.policy, "policy", false), po);
    }

    /// The allocation of a stored row's text for the plan `j` runs (one component per stage group of a mixed plan).
    std::optional<allocation> alloc_from_text(const std::string& text, const live_job& j) const {
        std::vector<int> types;
        for (const auto& t : j.gpu_types()) types.push_back(orch_->state().type_index(t));
        if (types.empty()) return std::nullopt;
        return allocation_from_text(text, types, inv_, orch_->state());
    }

    /// The backend's journal (submission_journal): before sbatch, the intent of job `id`'s next attempt on the
    /// plan it was placed on (j.current) is made durable; its tag goes to Slurm. Should sbatch
    /// then fail, the intent stays, and the next tick asks Slurm whether it took the job.
    std::string intent(int id, const allocation& a) override {
        auto& j = jobs_.at(id);
        j.attempt += 1;
        store_->record_intent(id, j.attempt, j.plan_text(), allocation_json(a, inv_).dump(), unix_now());
        j.state = job_states::submitting;
        ++sbatch_calls_;
        return slurm_tag(id, j.attempt);
    }
    /// ... and after it, the Slurm id.
    void submitted(int id, std::int64_t slurm_id) override {
        auto& j = jobs_.at(id);
        const double now = unix_now();
        store_->record_submitted(id, slurm_id, now);
        j.state = job_states::submitted;
        j.slurm_id = slurm_id;
        j.started_s = now;
        if (!j.submit_timed) {
            submit_lat_.push_back(now - j.submit_s);
            j.submit_timed = true;
        }
    }

    /// Holds the GPUs of a job Slurm already runs (or ran) on `a` in the accounting, without a new sbatch.
    bool hold_adopted(int id, const live_job& j, const allocation& a) {
        if (!j.placed()) return false;
        try {
            orch_->adopt(id, *j.current, a);
        } catch (const error&) {
            return false;
        }
        backend_->adopt(id, j.slurm_id);
        return true;
    }

    /// Loads the store's active jobs and reconciles each with Slurm: a "submitting" job whose tag Slurm knows is
    /// adopted (it was submitted before the crash), else requeued; a submitted or running job Slurm still knows
    /// is adopted on its nodes, else requeued. Slurm jobs of ours that match no current attempt are cancelled.
    void reconcile_startup() {
        const double now = unix_now();
        const std::vector<slurm_job> sjobs = slurm_->jobs();
        const slurm_index idx(sjobs);
        std::set<std::string> current_tags;
        for (const auto& row : store_->active()) {
            live_job* j = load_row(row, now);
            if (!j) continue;
            if (const slurm_job* sj = reconcile_row(row, *j, idx, now)) {
                j->slurm_id = sj->job_id;
                current_tags.insert(sj->comment);
                if (!row.plan.empty()) j->place_from_text(row.plan);
                adopt(static_cast<int>(row.id), *j, row.alloc, now);
            }
        }
        cancel_orphans(sjobs, current_tags);
        dirty_ = true;
    }

    /// The live job of a stored row, planned again on today's inventory; null (and the row failed) if it cannot be.
    live_job* load_row(const stored_job& row, double now) {
        job_submission pj;
        std::vector<plan> usable;
        plan_result pr;
        try {
            pj = submission_from_json(nlohmann::json::parse(row.spec), catalog_);
            pr = plan_submission(pj, inv_.spec, opt_.planning, usable);
        } catch (const std::exception& e) {
            store_->set_state(row.id, job_states::failed, now, std::string("cannot be planned after restart: ") + e.what(), e.what());
            return nullptr;
        }
        if (usable.empty()) {
            store_->set_state(row.id, job_states::failed, now, "no plan on the cluster after restart", "no feasible plan");
            return nullptr;
        }
        live_job lj;
        lj.spec = std::move(pj.job);
        lj.limits = std::move(pj.limits);
        lj.plans = std::move(pr);
        lj.usable = std::move(usable);
        lj.submit_s = row.submit_s;
        lj.attempt = row.attempt;
        lj.state = row.state;
        lj.cancel_requested = row.cancel_requested;
        lj.submit_timed = row.attempt > 0;
        priority_[static_cast<int>(row.id)] = lj.limits.priority;
        return &jobs_.insert_or_assign(static_cast<int>(row.id), std::move(lj)).first->second;
    }

    /// The Slurm job a stored row's current attempt is (null: none; the row is queued again where it had one).
    const slurm_job* reconcile_row(const stored_job& row, live_job& j, const slurm_index& idx, double now) {
        if (row.state == job_states::submitting) {
            const std::string tag = slurm_tag(row.id, row.attempt);
            if (auto t = idx.by_tag.find(tag); t != idx.by_tag.end()) {
                store_->record_submitted(row.id, t->second->job_id, now, "(reconciled after restart: found " + tag + " in Slurm)");
                j.state = job_states::submitted;
                return t->second;
            }
            store_->set_state(row.id, job_states::queued, now, "reconciled after restart: " + tag + " not in Slurm, queued again");
            j.state = job_states::queued;
            log_decision({{"decision", "requeue"}, {"job", static_cast<int>(row.id)}, {"why", "intent " + tag + " never reached Slurm"}});
        } else if (row.state == job_states::submitted || row.state == job_states::running) {
            if (auto s = idx.by_id.find(row.slurm_id); s != idx.by_id.end() && s->second->comment == slurm_tag(row.id, row.attempt))
                return s->second;
            store_->set_state(row.id, job_states::queued, now, "reconciled after restart: slurm job " + std::to_string(row.slurm_id) + " unknown to Slurm, queued again");
            j.state = job_states::queued;
        }
        return nullptr;
    }

    /// Cancels the running Slurm jobs of ours (our tag and name prefix) that are no current attempt of a job.
    void cancel_orphans(const std::vector<slurm_job>& sjobs, const std::set<std::string>& current_tags) {
        for (const auto& s : sjobs)
            if (!s.finished() && !s.het_follower() && s.comment.rfind("frenzy:", 0) == 0 && !current_tags.count(s.comment) &&
                s.name.rfind(slurm_->options().job_prefix + "-", 0) == 0) {
                try {
                    slurm_->scancel(s.job_id);
                    log_decision({{"decision", "cancel-orphan"}, {"slurm_job", s.job_id}, {"why", s.comment + " is no current attempt of an active job"}});
                } catch (const error&) {
                }
            }
    }

    /// Registers a job Slurm already runs (or ran) on its recorded allocation, without a new sbatch.
    void adopt(int id, live_job& j, const std::string& alloc_text, double now) {
        const std::optional<allocation> a = alloc_from_text(alloc_text, j);
        if (!(a && hold_adopted(id, j, *a))) {
            // Its nodes are gone or down: cancel it in Slurm and place it again.
            try {
                slurm_->scancel(j.slurm_id);
            } catch (const error&) {
            }
            requeue_state(id, j, now, "its recorded nodes are no longer usable after restart");
        }
        j.started_s = now;
    }

    void requeue_state(int id, live_job& j, double now, const std::string& why) {
        store_->set_state(id, job_states::queued, now, why, why);
        j.state = job_states::queued;
        j.slurm_id = 0;
        j.unplace();
        if (backend_) backend_->forget(id);
        log_decision({{"decision", "requeue"}, {"job", id}, {"why", why}});
    }

    void follow_nodes(double now) {
        const auto& cs = orch_->state();
        for (std::size_t i = 0; i < inv_.nodes.size(); ++i) {
            const auto& name = inv_.nodes[i].name;
            auto it = last_nodes_.find(name);
            const bool usable = it != last_nodes_.end() && it->second.usable();
            const bool up = cs.nodes()[i].up;
            if (!usable && up) {
                const std::string what = it == last_nodes_.end() ? "missing from sinfo"
                                                                  : it->second.state + (it->second.flags.empty() ? "" : "+" + join(it->second.flags));
                log_decision({{"decision", "node-down"}, {"node", name}, {"state", what}});
                for (int job : orch_->node_failed(static_cast<int>(i))) {
                    auto& j = jobs_.at(job);
                    try {
                        if (j.slurm_id > 0) slurm_->scancel(j.slurm_id);
                    } catch (const error&) {
                    }
                    requeue_state(job, j, now, "node " + name + " is " + what + ": requeued by Frenzy");
                }
                dirty_ = true;
            } else if (usable && !up) {
                orch_->node_recovered(static_cast<int>(i));
                log_decision({{"decision", "node-up"}, {"node", name}});
                dirty_ = true;
            }
        }
    }

    /// sbatch failed or timed out after the intent was recorded: did Slurm take it? Adopted if so, else requeued.
    void confirm_submission(int id, live_job& j, const slurm_index& idx, double now) {
        const std::string tag = slurm_tag(id, j.attempt);
        auto t = idx.by_tag.find(tag);
        if (t == idx.by_tag.end()) return requeue_state(id, j, now, "submission " + tag + " did not reach Slurm");
        store_->record_submitted(id, t->second->job_id, now, "(confirmed from squeue)");
        j.state = job_states::submitted;
        j.slurm_id = t->second->job_id;
        backend_->adopt(id, j.slurm_id);
        // The allocation was released when sbatch failed; take it again.
        auto row = store_->get(id);
        if (row)
            if (auto a = alloc_from_text(row->alloc, j)) (void)hold_adopted(id, j, *a);
    }

    /// Follows one submitted or running job by what Slurm says of it; true when it has ended for good.
    bool follow_slurm_job(int id, live_job& j, const slurm_job& sj, double now) {
        if (sj.state == "RUNNING" && j.state == job_states::submitted) {
            store_->set_state(id, job_states::running, now, "on " + join(sj.nodes) + " (" + sj.tres_per_node + sj.tres_per_job + ")");
            j.state = job_states::running;
            j.started_s = now;
        }
        if (!sj.finished()) return false;
        if (orch_->state().holding(id)) orch_->finished(id);
        dirty_ = true;
        const std::string slurm_job_text = "slurm job " + std::to_string(sj.job_id);
        if (sj.state == "COMPLETED") {
            store_->set_state(id, job_states::completed, now, slurm_job_text + " completed");
        } else if (sj.state == "NODE_FAIL" || sj.state == "BOOT_FAIL" || sj.state == "PREEMPTED") {
            requeue_state(id, j, now, slurm_job_text + " ended " + sj.state + ": requeued by Frenzy");
            return false;
        } else if (sj.state == "CANCELLED" && j.cancel_requested) {
            store_->set_state(id, job_states::cancelled, now, "scancelled");
        } else {
            const std::string why = slurm_job_text + " ended " + sj.state + " (exit code " + std::to_string(sj.exit_code) + ")";
            store_->set_state(id, sj.state == "CANCELLED" ? job_states::cancelled : job_states::failed, now, why, why);
        }
        return true;
    }

    void follow_jobs(double now, const slurm_index& idx) {
        std::vector<int> done;
        for (auto& [id, j] : jobs_) {
            if (j.state == job_states::queued) continue;
            if (j.state == job_states::submitting) {
                confirm_submission(id, j, idx, now);
                dirty_ = true;
                continue;
            }
            auto s = idx.by_id.find(j.slurm_id);
            if (s == idx.by_id.end()) {
                if (orch_->state().holding(id)) orch_->finished(id);
                requeue_state(id, j, now, "slurm job " + std::to_string(j.slurm_id) + " vanished from Slurm");
                dirty_ = true;
                continue;
            }
            if (follow_slurm_job(id, j, *s->second, now)) done.push_back(id);
        }
        forget_jobs(done);
    }

    void do_cancels(double now) {
        std::vector<int> done;
        for (auto& [id, j] : jobs_) {
            if (!j.cancel_requested) continue;
            if (j.state == job_states::queued) {
                store_->set_state(id, job_states::cancelled, now, "cancelled while queued");
                done.push_back(id);
            } else if (j.slurm_id > 0) {
                try {
                    slurm_->scancel(j.slurm_id);
                } catch (const error&) {
                    continue;  // next tick
                }
                if (orch_->state().holding(id)) orch_->finished(id);
                backend_->forget(id);
                store_->set_state(id, job_states::cancelled, now, "scancel " + std::to_string(j.slurm_id));
                done.push_back(id);
            }
        }
        forget_jobs(done);
    }

    void forget_jobs(const std::vector<int>& ids) {
        for (int id : ids) {
            jobs_.erase(id);
            priority_.erase(id);
        }
    }

    /// What the policy decides on: the queued jobs, and the running ones with their plan and allocation (jobs in
    /// flux between the two are not the policy's to move).
    std::vector<job_view> job_views() const {
        std::vector<job_view> views;
        views.reserve(jobs_.size());
        for (const auto& [id, j] : jobs_) {
            job_view v;
            v.id = id;
            v.submit_s = j.submit_s;
            v.plans = &j.usable;
            v.total_tokens = j.spec.training.total_tokens > 0 ? j.spec.training.total_tokens
                                                              : static_cast<double>(j.spec.training.global_batch * j.spec.training.seq_len);
            v.queued_since_s = j.submit_s;
            v.launches = j.attempt;
            const auto* held = orch_->state().holding(id);
            if (j.state != job_states::queued && held && j.placed()) {
                v.running = true;
                v.alloc = held;
                v.current = j.current->mixed() ? nullptr : &*j.current;
                v.predicted_end_s = j.started_s + opt_.policies.has.startup_s + j.est_time_s();
            } else if (j.state != job_states::queued) continue;
            views.push_back(v);
        }
        return views;
    }

    void schedule(double now) {
        bool any_queued = false;
        for (const auto& [id, j] : jobs_) any_queued = any_queued || j.state == job_states::queued;
        if (!any_queued) return;
        const auto views = job_views();
        sched_context ctx{now, &orch_->state(), views};
        const auto t0 = std::chrono::steady_clock::now();
        auto d = policy_.schedule(ctx);
        decision_lat_.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (decision_lat_.size() > 100000) decision_lat_.erase(decision_lat_.begin(), decision_lat_.begin() + 50000);
        const std::string who = policy_.name() == "has" ? "HAS" : std::string(policy_.name());
        for (const auto& r : d.reject) {
            store_->set_state(r.job, job_states::failed, now, "rejected by " + who + ": " + r.reason, r.reason);
            log_decision({{"decision", "reject"}, {"job", r.job}, {"why", r.reason}});
            jobs_.at(r.job).state = job_states::failed;
        }
        for (const auto& s : d.start) start_job(s);  // preemptions are not applied: serve never stops a running job
        std::vector<int> gone;
        for (auto& [id, j] : jobs_)
            if (j.state == job_states::failed) gone.push_back(id);
        for (int id : gone) jobs_.erase(id);
    }

    /// A start decision: the orchestrator holds the GPUs and launches the job through the Slurm backend (intent,
    /// sbatch, Slurm id: intent() and submitted()); a failed sbatch is logged and left to the next tick. A mixed
    /// plan is one Slurm heterogeneous job.
    void start_job(const start_decision& s) {
        auto it = jobs_.find(s.job);
        if (it == jobs_.end() || it->second.state != job_states::queued) return;  // restarts (expansion) are not used here
        auto& j = it->second;
        if (s.oom) {  // a baseline's launch on a type none of the job's plans fits: Slurm would only see it crash
            log_decision({{"decision", "not-submitted"}, {"job", s.job}, {"why", std::string(policy_.name()) + " chose " + s.p.gpu + ", where no plan of the job fits"}});
            return;
        }
        try {
            j.unplace();
            j.current = s.p;
            orch_->start(s.job, j.spec, *j.current, s.alloc);
            log_decision({{"decision", "start"}, {"job", s.job}, {"name", j.spec.name},
                          {"plan", nlohmann::ordered_json(s.p)},
                          {"allocation", allocation_json(s.alloc, inv_)}, {"slurm_job", j.slurm_id}, {"alternatives", alternatives(j, s)},
                          {"why", start_reason(s)}});
        } catch (const error& e) {
            // sbatch failed after the intent was committed: the next tick asks Slurm whether it took the job.
            if (orch_->state().holding(s.job)) orch_->finished(s.job);
            log_decision({{"decision", "submit-failed"}, {"job", s.job}, {"why", e.what()}});
            if (j.state != job_states::submitting) {
                j.state = job_states::queued;
                j.unplace();
            }
        }
    }

    /// The decision log's alternatives of a start: up to five other single-type plans of the job, best first.
    static nlohmann::ordered_json alternatives(const live_job& j, const start_decision& s) {
        nlohmann::ordered_json alts = nlohmann::ordered_json::array();
        for (const auto& p : j.usable) {
            if (alts.size() >= 5) break;
            if (p.mixed() || p == s.p) continue;
            nlohmann::ordered_json alt{{"gpu", p.gpu}, {"gpus", p.gpus}, {"nodes", p.nodes}};
            if (p.has_budget) alt["est_time_s"] = p.est_time.value;  // absent without a token budget, as in plan --json
            alt["tokens_per_s"] = p.tokens_per_s;
            alts.push_back(std::move(alt));
        }
        return alts;
    }

    /// The decision log's "why" of a start: the policy's rule.
    std::string start_reason(const start_decision& s) const {
        if (policy_.name() == "has" && s.p.mixed())
            return "HAS: no plan on one GPU type starts now; this pipeline over several types ends sooner than waiting for one";
        if (policy_.name() == "has") return "HAS: earliest predicted completion among the efficient plans that the free GPUs allow now";
        const auto* e = find_policy(policy_.name());
        return std::string(policy_.name()) + ": " + (e ? std::string(e->description) : std::string{});
    }

    /// A decision: appended to the decision log (when one is open) and kept among the recent ones (GET
    /// /v1/decisions, the live page). Called with m_ held.
    void log_decision(nlohmann::ordered_json j) {
        j["t"] = unix_now();
        recent_.push_back(j);
        if (recent_.size() > recent_decisions) recent_.pop_front();
        if (!log_.is_open()) return;
        log_ << j.dump() << '\n';
        log_.flush();
    }
    static std::string join(const std::vector<std::string>& v) {
        std::string s;
        for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
        return s;
    }

    const slurm_api* slurm_;
    job_store* store_;
    gres_map map_;
    engine_options opt_;
    gpu_catalog catalog_;
    mutable std::mutex m_;
    slurm_inventory inv_;
    std::unique_ptr<slurm_backend> backend_;
    std::unique_ptr<orchestrator> orch_;
    std::map<int, int> priority_;
    any_scheduler policy_;
    std::map<int, live_job> jobs_;
    std::map<std::string, slurm_node> last_nodes_;
    std::vector<double> decision_lat_, submit_lat_;
    std::int64_t sbatch_calls_ = 0;
    bool slurm_up_ = true;
    bool dirty_ = false;
    std::ofstream log_;
    static constexpr std::size_t recent_decisions = 100;
    std::deque<nlohmann::ordered_json> recent_;  ///< the last recent_decisions decisions, oldest first
};

}  // namespace frenzy
