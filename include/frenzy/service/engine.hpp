#pragma once
// The scheduling engine of `frenzy serve`: accepted jobs (durable in job_store), their plans (the planner on the
// live Slurm inventory), HAS deciding what runs where, the Slurm backend submitting it, and reconciliation with
// what Slurm knows, at start-up (after a crash) and on every tick (node failures, job ends, lost submissions).
// Thread-safe: the HTTP threads and the loop thread share one mutex.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
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
#include "frenzy/io/job_json.hpp"
#include "frenzy/io/result_json.hpp"
#include "frenzy/plan/planner.hpp"
#include "frenzy/sched/has.hpp"
#include "frenzy/service/store.hpp"

namespace frenzy {

/// Optional limits a submitter puts on a job.
struct job_limits {
    std::vector<std::string> gpu_types;  ///< allowed catalog types (empty = any)
    std::int64_t max_gpus = 0;           ///< 0 = no limit
    double deadline_s = 0;               ///< the plan must finish within this many seconds of acceptance (0 = none)
    int priority = 0;                    ///< higher goes first
};

struct engine_options {
    plan_options planning{};
    has_options has{};
    std::string decision_log;            ///< JSON-lines path ("" = none)
    double tick_s = 1.0;
};

/// HTTP-shaped answer of an engine call.
struct api_reply {
    int status = 200;
    nlohmann::ordered_json body;
};

namespace detail {

// A plan as `frenzy plan --json` writes it (io/result_json.hpp); the store keeps this text.
inline nlohmann::ordered_json service_plan_json(const plan& p) { return nlohmann::ordered_json(p); }

inline std::optional<double> seconds_value(const nlohmann::json& v) {
    if (v.is_number()) return v.get<double>();
    if (!v.is_string()) return std::nullopt;
    const auto s = v.get<std::string>();
    if (s.empty()) return std::nullopt;
    double mult = 1;
    std::string num = s;
    switch (s.back()) {
        case 's': num.pop_back(); break;
        case 'm': mult = 60, num.pop_back(); break;
        case 'h': mult = 3600, num.pop_back(); break;
        case 'd': mult = 86400, num.pop_back(); break;
        default: break;
    }
    try {
        std::size_t used = 0;
        const double x = std::stod(num, &used);
        if (used != num.size()) return std::nullopt;
        return x * mult;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

inline job_limits limits_from_json(const nlohmann::json& j, const gpu_catalog& catalog) {
    job_limits l;
    if (j.is_null()) return l;
    if (!j.is_object()) throw config_error("limits must be an object");
    for (auto it = j.begin(); it != j.end(); ++it) {
        const auto& k = it.key();
        const auto& v = it.value();
        if (k == "gpu_types") {
            if (!v.is_array()) throw config_error("limits.gpu_types must be an array of GPU type names");
            for (const auto& t : v) {
                if (!t.is_string()) throw config_error("limits.gpu_types must be an array of GPU type names");
                catalog.at(t.get<std::string>(), "limits.gpu_types[]");
                l.gpu_types.push_back(t.get<std::string>());
            }
        } else if (k == "max_gpus") {
            if (!v.is_number_integer() || v.get<std::int64_t>() < 1) throw config_error("limits.max_gpus=" + v.dump() + " must be a positive integer");
            l.max_gpus = v.get<std::int64_t>();
        } else if (k == "deadline") {
            auto s = seconds_value(v);
            if (!s || !(*s > 0)) throw config_error("limits.deadline=" + v.dump() + " must be a positive duration (seconds, or 30m, 2h, 1d)");
            l.deadline_s = *s;
        } else if (k == "priority") {
            if (!v.is_number_integer() || std::abs(v.get<std::int64_t>()) > 1000000)
                throw config_error("limits.priority=" + v.dump() + " must be an integer in [-1000000, 1000000]");
            l.priority = v.get<int>();
        } else throw config_error("limits." + k + " is not a known field (known: gpu_types, max_gpus, deadline, priority)");
    }
    return l;
}

/// HAS's queue order with submitter priorities first: higher priority, then smallest remaining GPU-time (aged).
struct priority_order {
    const std::map<int, int>* priority = nullptr;
    shortest_remaining_first base{};
    double key(const job_view& j, double best_remaining_gpu_s, double now) const {
        int p = 0;
        if (priority)
            if (auto it = priority->find(j.id); it != priority->end()) p = it->second;
        return base.key(j, best_remaining_gpu_s, now) - static_cast<double>(p) * 1e15;
    }
};
static_assert(QueueOrder<priority_order>);

}  // namespace detail

class serve_engine {
public:
    serve_engine(const slurm_api& slurm, job_store& store, gres_map map, engine_options o = {}, gpu_catalog catalog = {})
        : slurm_(&slurm), store_(&store), map_(std::move(map)), opt_(std::move(o)), catalog_(std::move(catalog)),
          has_(without_expansion(opt_.has), {}, detail::priority_order{&priority_}) {
        if (!opt_.decision_log.empty()) {
            log_.open(opt_.decision_log, std::ios::app);
            if (!log_) throw config_error("decision_log " + opt_.decision_log + ": cannot open for appending");
        }
    }

    /// Reads the inventory (throws io_error if Slurm cannot be reached), then reconciles the store with Slurm.
    void start() {
        std::lock_guard lk(m_);
        inv_ = inventory_from_nodes(slurm_->nodes(), map_, catalog_);
        if (inv_.spec.nodes.empty()) {
            std::string why;
            for (const auto& s : inv_.skipped) why += "; " + s;
            throw config_error("the Slurm cluster has no node with a GPU GRES that maps to a catalog type" + why);
        }
        backend_ = std::make_unique<slurm_backend>(*slurm_, inv_);
        backend_->before_submit = [this](int job, const plan& p, const allocation& a) { return on_before_submit(job, p, a); };
        backend_->after_submit = [this](int job, std::int64_t id) { on_after_submit(job, id); };
        backend_->job_name = [this](int job) {
            auto it = jobs_.find(job);
            return it == jobs_.end() ? std::string{} : it->second.spec.name;
        };
        backend_->job_spec_of = [this](int job) {
            auto it = jobs_.find(job);
            return it == jobs_.end() ? std::nullopt : std::optional<job_spec>(it->second.spec);
        };
        adopter_ = std::make_unique<adopting_backend>(*backend_);
        orch_ = std::make_unique<orchestrator>(inv_.spec, *adopter_);
        reconcile_startup();
    }

    /// POST /v1/jobs.
    api_reply submit(const std::string& body) {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(body);
        } catch (const nlohmann::json::parse_error& e) {
            return {400, {{"error", std::string("body is not valid JSON: ") + e.what()}}};
        }
        parsed parsed_job;
        try {
            parsed_job = parse(j);
        } catch (const config_error& e) {
            return {400, {{"error", e.what()}}};
        }
        plan_result pr;
        std::vector<plan> usable;
        {
            std::lock_guard lk(m_);
            if (!orch_) return {503, {{"error", "not ready: the Slurm inventory has not been read yet"}}};
        }
        cluster_spec c;
        {
            std::lock_guard lk(m_);
            c = inv_.spec;
        }
        try {
            pr = make_plans(parsed_job, c, usable);
        } catch (const config_error& e) {
            return {400, {{"error", e.what()}}};
        }
        if (usable.empty()) {
            auto infeasible = pr.infeasible;  // serialised as `frenzy plan --json`'s infeasible (io/result_json.hpp)
            if (!pr.plans.empty() && parsed_job.limits.deadline_s > 0)
                infeasible.push_back({"*", "no plan finishes within limits.deadline=" + std::to_string(parsed_job.limits.deadline_s) + " s"});
            const nlohmann::ordered_json reasons = infeasible;
            log_decision({{"decision", "refuse"}, {"name", parsed_job.job.name}, {"why", "no GPU type of the cluster can run it"}, {"reasons", reasons}});
            return {422, {{"error", "no GPU type of the cluster can run this job"}, {"infeasible", reasons}}};
        }
        std::lock_guard lk(m_);
        const double now = unix_now();
        const auto id = store_->add_job(body, now);  // durable before the 201
        live_job lj;
        lj.spec = std::move(parsed_job.job);
        lj.limits = std::move(parsed_job.limits);
        lj.plans = std::move(pr);
        lj.usable = std::move(usable);
        lj.submit_s = now;
        lj.state = job_states::queued;
        priority_[static_cast<int>(id)] = lj.limits.priority;
        jobs_.emplace(static_cast<int>(id), std::move(lj));
        dirty_ = true;
        return {201, {{"id", id}}};
    }

    api_reply job(std::int64_t id) const {
        std::lock_guard lk(m_);
        auto row = store_->get(id);
        if (!row) return {404, {{"error", "no job " + std::to_string(id)}}};
        auto j = row_json(*row);
        nlohmann::ordered_json ev = nlohmann::ordered_json::array();
        for (const auto& e : store_->events(id)) ev.push_back({{"t", e.t}, {"kind", e.kind}, {"detail", e.detail}});
        j["events"] = ev;
        return {200, j};
    }
    api_reply list() const {
        std::lock_guard lk(m_);
        nlohmann::ordered_json a = nlohmann::ordered_json::array();
        for (const auto& r : store_->all()) a.push_back(row_json(r));
        return {200, {{"jobs", a}}};
    }
    /// DELETE /v1/jobs/ID: a queued job is cancelled at once; a submitted or running one is scancelled by the loop.
    api_reply cancel(std::int64_t id) {
        std::lock_guard lk(m_);
        auto row = store_->get(id);
        if (!row) return {404, {{"error", "no job " + std::to_string(id)}}};
        if (job_states::terminal(row->state)) return {409, {{"error", "job " + std::to_string(id) + " is already " + row->state}}};
        const double now = unix_now();
        auto it = jobs_.find(static_cast<int>(id));
        if (row->state == job_states::queued) {
            store_->set_state(id, job_states::cancelled, now, "cancelled while queued");
            if (it != jobs_.end()) jobs_.erase(it);
            return {200, {{"id", id}, {"state", job_states::cancelled}}};
        }
        store_->request_cancel(id, now);
        if (it != jobs_.end()) it->second.cancel_requested = true;
        dirty_ = true;
        return {202, {{"id", id}, {"state", "cancelling"}}};
    }

    api_reply cluster() const {
        std::lock_guard lk(m_);
        if (!orch_) return {503, {{"error", "not ready"}}};
        const auto& cs = orch_->state();
        nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
        for (std::size_t i = 0; i < inv_.nodes.size(); ++i) {
            const auto& n = last_nodes_.count(inv_.nodes[i].name) ? last_nodes_.at(inv_.nodes[i].name) : inv_.nodes[i];
            const auto& st = cs.nodes()[i];
            nodes.push_back({{"name", n.name}, {"gpu", inv_.spec.nodes[i].gpu}, {"gres_type", inv_.gres_types[i]},
                             {"gpus", st.gpus}, {"free", st.free}, {"up", st.up}, {"slurm_state", n.state},
                             {"slurm_flags", n.flags}, {"slurm_gpus_used", n.gpus_used()}, {"reason", n.reason}});
        }
        nlohmann::ordered_json types = nlohmann::ordered_json::array();
        for (std::size_t t = 0; t < cs.types().size(); ++t)
            types.push_back({{"gpu", cs.types()[t]}, {"gpus", cs.total_gpus(static_cast<int>(t))},
                             {"up", cs.up_gpus(static_cast<int>(t))}, {"free", cs.free_gpus(static_cast<int>(t))}});
        return {200, {{"nodes", nodes}, {"types", types}, {"skipped", inv_.skipped}, {"slurm_reachable", slurm_up_}}};
    }

    /// Prometheus text exposition format 0.0.4.
    std::string metrics() const {
        std::lock_guard lk(m_);
        int queued = 0, running = 0, submitted = 0;
        for (const auto& [id, j] : jobs_) {
            if (j.state == job_states::queued) ++queued;
            else if (j.state == job_states::running) ++running;
            else ++submitted;
        }
        std::string s;
        s += "# HELP frenzy_queue_length Jobs accepted and waiting for GPUs.\n# TYPE frenzy_queue_length gauge\n";
        s += "frenzy_queue_length " + std::to_string(queued) + "\n";
        s += "# HELP frenzy_running_jobs Jobs running in Slurm.\n# TYPE frenzy_running_jobs gauge\n";
        s += "frenzy_running_jobs " + std::to_string(running) + "\n";
        s += "# HELP frenzy_submitted_jobs Jobs submitted to Slurm and not yet running.\n# TYPE frenzy_submitted_jobs gauge\n";
        s += "frenzy_submitted_jobs " + std::to_string(submitted) + "\n";
        s += "# HELP frenzy_gpus_busy GPUs held by Frenzy jobs, per GPU type.\n# TYPE frenzy_gpus_busy gauge\n";
        s += "# HELP frenzy_gpus_total GPUs of the cluster, per GPU type.\n";
        if (orch_) {
            const auto& cs = orch_->state();
            for (std::size_t t = 0; t < cs.types().size(); ++t) {
                const int ti = static_cast<int>(t);
                s += "frenzy_gpus_busy{type=\"" + cs.types()[t] + "\"} " + std::to_string(cs.up_gpus(ti) - cs.free_gpus(ti)) + "\n";
            }
            s += "# TYPE frenzy_gpus_total gauge\n";
            for (std::size_t t = 0; t < cs.types().size(); ++t)
                s += "frenzy_gpus_total{type=\"" + cs.types()[t] + "\"} " + std::to_string(cs.total_gpus(static_cast<int>(t))) + "\n";
        }
        auto summary = [&](const std::string& name, const std::string& help, std::vector<double> v) {
            s += "# HELP " + name + " " + help + "\n# TYPE " + name + " summary\n";
            std::sort(v.begin(), v.end());
            double sum = 0;
            for (double x : v) sum += x;
            for (double q : {0.5, 0.99}) {
                const double val = v.empty() ? 0.0 : v[static_cast<std::size_t>(std::min<double>(static_cast<double>(v.size() - 1), std::floor(q * static_cast<double>(v.size()))))];
                s += name + "{quantile=\"" + (q == 0.5 ? "0.5" : "0.99") + "\"} " + fmt_double(val) + "\n";
            }
            s += name + "_sum " + fmt_double(sum) + "\n" + name + "_count " + std::to_string(v.size()) + "\n";
        };
        summary("frenzy_decision_latency_seconds", "Time of one HAS scheduling pass (plans in, decisions out).", decision_lat_);
        summary("frenzy_submit_latency_seconds", "From acceptance of a job to its first sbatch returning.", submit_lat_);
        s += "# HELP frenzy_slurm_reachable 1 when the last Slurm poll succeeded.\n# TYPE frenzy_slurm_reachable gauge\n";
        s += std::string("frenzy_slurm_reachable ") + (slurm_up_ ? "1" : "0") + "\n";
        s += "# HELP frenzy_sbatch_total sbatch calls made.\n# TYPE frenzy_sbatch_total counter\n";
        s += "frenzy_sbatch_total " + std::to_string(sbatch_calls_) + "\n";
        return s;
    }

    /// One round: poll Slurm, follow nodes and jobs, act on cancellations, schedule with HAS, submit.
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
        std::map<std::int64_t, const slurm_job*> by_id;
        std::map<std::string, const slurm_job*> by_tag;
        for (const auto& s : sjobs) {
            by_id[s.job_id] = &s;
            if (s.comment.rfind("frenzy:", 0) == 0) by_tag[s.comment] = &s;
        }
        follow_nodes(now);
        follow_jobs(now, by_id, by_tag);
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

private:
    /// Restarting a Slurm job on more GPUs costs a requeue; serve never expands running jobs.
    static has_options without_expansion(has_options o) {
        o.expand_idle = false;
        return o;
    }
    struct live_job {
        job_spec spec;
        job_limits limits;
        plan_result plans;          ///< everything the planner found
        std::vector<plan> usable;   ///< within the limits, best first (what HAS chooses from)
        std::string state;
        double submit_s = 0;
        int attempt = 0;
        std::int64_t slurm_id = 0;
        std::optional<plan> current;
        double started_s = 0;
        bool cancel_requested = false;
        bool submit_timed = false;
    };
    struct parsed {
        job_spec job;
        plan_constraints stated;  ///< layout fields the spec pins (the planner searches the rest)
        job_limits limits;
    };

    /// Lets the orchestrator take a job that already runs in Slurm (reconciliation) without submitting it again.
    class adopting_backend : public cluster_backend {
    public:
        explicit adopting_backend(slurm_backend& b) : b_(&b) {}
        std::int64_t adopt_id = 0;
        void launch(int job, const plan& p, const allocation& a) override {
            if (adopt_id > 0) b_->adopt(job, adopt_id);
            else b_->launch(job, p, a);
        }
        void stop(int job) override { b_->stop(job); }

    private:
        slurm_backend* b_;
    };

    parsed parse(const nlohmann::json& body) const {
        if (!body.is_object()) throw config_error("body must be a JSON object (a job spec, optionally with \"limits\")");
        nlohmann::json spec = body;
        nlohmann::json limits;
        if (spec.contains("limits")) {
            limits = spec["limits"];
            spec.erase("limits");
        }
        if (spec.contains("model") && spec["model"].is_object() && spec["model"].contains("hf_config"))
            throw config_error("model.hf_config is not accepted by frenzy serve (it names a file on the server); give the model's fields or a preset");
        parsed p;
        auto pj = job_from_json(spec);
        p.job = std::move(pj.job);
        p.stated = pj.stated;
        p.limits = detail::limits_from_json(limits, catalog_);
        if (p.limits.deadline_s > 0 && !(p.job.training.total_tokens > 0))
            throw config_error("limits.deadline needs training.total_tokens (without a token budget no plan has a duration)");
        return p;
    }

    plan_result make_plans(const parsed& pj, cluster_spec c, std::vector<plan>& usable) const {
        if (!pj.limits.gpu_types.empty()) {
            std::vector<node_group> keep;
            for (const auto& g : c.nodes)
                if (std::find(pj.limits.gpu_types.begin(), pj.limits.gpu_types.end(), g.gpu) != pj.limits.gpu_types.end()) keep.push_back(g);
            if (keep.empty()) {
                plan_result r;
                for (const auto& t : pj.limits.gpu_types) r.infeasible.push_back({t, "the cluster has no " + t + " nodes (limits.gpu_types)"});
                return r;
            }
            c.nodes = std::move(keep);
        }
        plan_options o = opt_.planning;
        o.constraints = pj.stated;
        if (pj.limits.max_gpus > 0) o.max_gpus = o.max_gpus > 0 ? std::min(o.max_gpus, pj.limits.max_gpus) : pj.limits.max_gpus;
        auto r = planner{}.plan(pj.job, c, o);
        for (const auto& p : r.plans)
            if (pj.limits.deadline_s <= 0 || p.est_time.value <= pj.limits.deadline_s) usable.push_back(p);
        return r;
    }

    nlohmann::ordered_json row_json(const stored_job& r) const {
        nlohmann::ordered_json j{{"id", r.id}, {"state", r.state == job_states::submitting ? job_states::submitted : r.state},
                         {"submit_time", r.submit_s}, {"attempt", r.attempt}};
        try {
            auto spec = nlohmann::ordered_json::parse(r.spec);
            j["name"] = spec.contains("name") && spec["name"].is_string() ? spec["name"].get<std::string>() : std::string{};
            if (spec.contains("limits")) j["limits"] = spec["limits"];
        } catch (const std::exception&) {
        }
        if (auto it = jobs_.find(static_cast<int>(r.id)); it != jobs_.end() && j["name"] == "") j["name"] = it->second.spec.name;
        // absent until known (docs/formats.md: a figure that does not exist is an absent key, never null)
        if (r.slurm_id > 0) j["slurm_job_id"] = r.slurm_id;
        if (!r.plan.empty()) j["plan"] = nlohmann::ordered_json::parse(r.plan);
        if (!r.alloc.empty()) j["allocation"] = nlohmann::ordered_json::parse(r.alloc);
        if (!r.reason.empty()) j["reason"] = r.reason;
        if (r.cancel_requested && !job_states::terminal(r.state)) j["cancel_requested"] = true;
        return j;
    }

    nlohmann::ordered_json alloc_json(const allocation& a) const {
        nlohmann::ordered_json v = nlohmann::ordered_json::array();
        for (const auto& p : a.parts) v.push_back({inv_.nodes.at(static_cast<std::size_t>(p.node)).name, p.gpus});
        return v;
    }
    std::optional<allocation> alloc_from_json(const std::string& text, const std::string& gpu) const {
        allocation a;
        a.type = orch_->state().type_index(gpu);
        if (a.type < 0) return std::nullopt;
        try {
            for (const auto& e : nlohmann::json::parse(text)) {
                const int n = inv_.index(e.at(0).get<std::string>());
                if (n < 0) return std::nullopt;
                a.parts.push_back({n, e.at(1).get<int>()});
            }
        } catch (const std::exception&) {
            return std::nullopt;
        }
        if (a.parts.empty()) return std::nullopt;
        return a;
    }

    std::string on_before_submit(int job, const plan& p, const allocation& a) {
        auto& lj = jobs_.at(job);
        lj.attempt += 1;
        store_->record_intent(job, lj.attempt, detail::service_plan_json(p).dump(), alloc_json(a).dump(), unix_now());
        lj.state = job_states::submitting;
        lj.current = p;
        ++sbatch_calls_;
        return slurm_tag(job, lj.attempt);
    }
    void on_after_submit(int job, std::int64_t id) {
        auto& lj = jobs_.at(job);
        const double now = unix_now();
        store_->record_submitted(job, id, now);
        lj.state = job_states::submitted;
        lj.slurm_id = id;
        lj.started_s = now;
        if (!lj.submit_timed) {
            submit_lat_.push_back(now - lj.submit_s);
            lj.submit_timed = true;
        }
    }

    /// Loads the store's active jobs and reconciles each with Slurm: a "submitting" job whose tag Slurm knows is
    /// adopted (it was submitted before the crash), else requeued; a submitted or running job Slurm still knows
    /// is adopted on its nodes, else requeued. Slurm jobs of ours that match no current attempt are cancelled.
    void reconcile_startup() {
        const double now = unix_now();
        std::vector<slurm_job> sjobs = slurm_->jobs();
        std::map<std::string, const slurm_job*> by_tag;
        std::map<std::int64_t, const slurm_job*> by_id;
        for (const auto& s : sjobs) {
            by_id[s.job_id] = &s;
            if (s.comment.rfind("frenzy:", 0) == 0) by_tag[s.comment] = &s;
        }
        std::set<std::string> current_tags;
        for (const auto& row : store_->active()) {
            const int id = static_cast<int>(row.id);
            parsed pj;
            std::vector<plan> usable;
            plan_result pr;
            try {
                pj = parse(nlohmann::json::parse(row.spec));
                pr = make_plans(pj, inv_.spec, usable);
            } catch (const std::exception& e) {
                store_->set_state(row.id, job_states::failed, now, std::string("cannot be planned after restart: ") + e.what(), e.what());
                continue;
            }
            if (usable.empty()) {
                store_->set_state(row.id, job_states::failed, now, "no plan on the cluster after restart", "no feasible plan");
                continue;
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
            priority_[id] = lj.limits.priority;
            auto [it, ok] = jobs_.emplace(id, std::move(lj));
            auto& j = it->second;
            const slurm_job* sj = nullptr;
            if (row.state == job_states::submitting) {
                const std::string tag = slurm_tag(row.id, row.attempt);
                if (auto t = by_tag.find(tag); t != by_tag.end()) {
                    sj = t->second;
                    store_->record_submitted(row.id, sj->job_id, now, "(reconciled after restart: found " + tag + " in Slurm)");
                    j.state = job_states::submitted;
                } else {
                    store_->set_state(row.id, job_states::queued, now, "reconciled after restart: " + tag + " not in Slurm, queued again");
                    j.state = job_states::queued;
                    log_decision({{"decision", "requeue"}, {"job", id}, {"why", "intent " + tag + " never reached Slurm"}});
                }
            } else if (row.state == job_states::submitted || row.state == job_states::running) {
                if (auto s = by_id.find(row.slurm_id); s != by_id.end() && s->second->comment == slurm_tag(row.id, row.attempt)) sj = s->second;
                else {
                    store_->set_state(row.id, job_states::queued, now, "reconciled after restart: slurm job " + std::to_string(row.slurm_id) + " unknown to Slurm, queued again");
                    j.state = job_states::queued;
                }
            }
            if (sj) {
                j.slurm_id = sj->job_id;
                current_tags.insert(sj->comment);
                if (!row.plan.empty()) j.current = plan_from_row(row, j);
                adopt(id, j, row.alloc, now);
            }
        }
        for (const auto& s : sjobs)
            if (!s.finished() && s.comment.rfind("frenzy:", 0) == 0 && !current_tags.count(s.comment) &&
                s.name.rfind(slurm_->options().job_prefix + "-", 0) == 0) {
                try {
                    slurm_->scancel(s.job_id);
                    log_decision({{"decision", "cancel-orphan"}, {"slurm_job", s.job_id}, {"why", s.comment + " is no current attempt of an active job"}});
                } catch (const error&) {
                }
            }
        dirty_ = true;
    }

    std::optional<plan> plan_from_row(const stored_job& row, const live_job& j) const {
        try {
            const auto pj = nlohmann::json::parse(row.plan);
            for (const auto& p : j.plans.plans)
                if (detail::service_plan_json(p).dump() == row.plan) return p;
            // Not among today's plans (the model changed): keep what HAS needs.
            plan p;
            p.gpu = pj.at("gpu").get<std::string>();
            p.gpus = pj.at("gpus").get<int>();
            p.nodes = pj.at("nodes").get<int>();
            p.parallel = parallel_from_json(pj.at("parallel"));
            p.micro_batch = pj.at("micro_batch").get<std::int64_t>();
            p.tokens_per_s = pj.at("tokens_per_s").get<double>();
            p.gpus_per_node = pj.value("gpus_per_node", 0);
            if (pj.at("est_time_s").is_number()) {
                p.est_time = seconds{pj.at("est_time_s").get<double>()};
                p.has_budget = true;
            }
            return p;
        } catch (const std::exception&) {
            return std::nullopt;
        }
    }

    /// Registers a job Slurm already runs (or ran) on its recorded allocation, without a new sbatch.
    void adopt(int id, live_job& j, const std::string& alloc_text, double now) {
        std::optional<allocation> a;
        if (j.current) a = alloc_from_json(alloc_text, j.current->gpu);
        bool ok = false;
        if (a && j.current) {
            try {
                adopter_->adopt_id = j.slurm_id;
                orch_->start(id, *j.current, *a);
                ok = true;
            } catch (const error&) {
            }
            adopter_->adopt_id = 0;
        }
        if (!ok) {
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
        j.current.reset();
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

    void follow_jobs(double now, const std::map<std::int64_t, const slurm_job*>& by_id,
                     const std::map<std::string, const slurm_job*>& by_tag) {
        std::vector<int> done;
        for (auto& [id, j] : jobs_) {
            if (j.state == job_states::queued) continue;
            if (j.state == job_states::submitting) {
                // sbatch failed or timed out after the intent was recorded: did Slurm take it?
                const std::string tag = slurm_tag(id, j.attempt);
                if (auto t = by_tag.find(tag); t != by_tag.end()) {
                    store_->record_submitted(id, t->second->job_id, now, "(confirmed from squeue)");
                    j.state = job_states::submitted;
                    j.slurm_id = t->second->job_id;
                    backend_->adopt(id, j.slurm_id);
                    // The allocation was released when sbatch failed; take it again.
                    auto row = store_->get(id);
                    if (row && j.current) {
                        if (auto a = alloc_from_json(row->alloc, j.current->gpu)) {
                            try {
                                adopter_->adopt_id = j.slurm_id;
                                orch_->start(id, *j.current, *a);
                            } catch (const error&) {
                            }
                            adopter_->adopt_id = 0;
                        }
                    }
                } else {
                    requeue_state(id, j, now, "submission " + tag + " did not reach Slurm");
                }
                dirty_ = true;
                continue;
            }
            auto s = by_id.find(j.slurm_id);
            if (s == by_id.end()) {
                if (orch_->state().holding(id)) orch_->finished(id);
                requeue_state(id, j, now, "slurm job " + std::to_string(j.slurm_id) + " vanished from Slurm");
                dirty_ = true;
                continue;
            }
            const slurm_job& sj = *s->second;
            if (sj.state == "RUNNING" && j.state == job_states::submitted) {
                store_->set_state(id, job_states::running, now, "on " + join(sj.nodes) + " (" + sj.tres_per_node + sj.tres_per_job + ")");
                j.state = job_states::running;
                j.started_s = now;
            }
            if (!sj.finished()) continue;
            if (orch_->state().holding(id)) orch_->finished(id);
            dirty_ = true;
            if (sj.state == "COMPLETED") {
                store_->set_state(id, job_states::completed, now, "slurm job " + std::to_string(sj.job_id) + " completed");
                done.push_back(id);
            } else if (sj.state == "NODE_FAIL" || sj.state == "BOOT_FAIL" || sj.state == "PREEMPTED") {
                requeue_state(id, j, now, "slurm job " + std::to_string(sj.job_id) + " ended " + sj.state + ": requeued by Frenzy");
            } else if (sj.state == "CANCELLED" && j.cancel_requested) {
                store_->set_state(id, job_states::cancelled, now, "scancelled");
                done.push_back(id);
            } else {
                const std::string why = "slurm job " + std::to_string(sj.job_id) + " ended " + sj.state + " (exit code " + std::to_string(sj.exit_code) + ")";
                store_->set_state(id, sj.state == "CANCELLED" ? job_states::cancelled : job_states::failed, now, why, why);
                done.push_back(id);
            }
        }
        for (int id : done) {
            jobs_.erase(id);
            priority_.erase(id);
        }
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
        for (int id : done) {
            jobs_.erase(id);
            priority_.erase(id);
        }
    }

    void schedule(double now) {
        bool any_queued = false;
        for (const auto& [id, j] : jobs_) any_queued = any_queued || j.state == job_states::queued;
        if (!any_queued) return;
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
            if (j.state != job_states::queued && held && j.current) {
                v.running = true;
                v.alloc = held;
                v.current = &*j.current;
                v.predicted_end_s = j.started_s + opt_.has.startup_s + j.current->est_time.value;
            } else if (j.state != job_states::queued) continue;  // in flux: not the scheduler's to move
            views.push_back(v);
        }
        sched_context ctx{now, &orch_->state(), views};
        const auto t0 = std::chrono::steady_clock::now();
        auto d = has_.schedule(ctx);
        decision_lat_.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (decision_lat_.size() > 100000) decision_lat_.erase(decision_lat_.begin(), decision_lat_.begin() + 50000);
        for (const auto& r : d.reject) {
            auto& j = jobs_.at(r.job);
            store_->set_state(r.job, job_states::failed, now, "rejected by HAS: " + r.reason, r.reason);
            log_decision({{"decision", "reject"}, {"job", r.job}, {"why", r.reason}});
            j.state = job_states::failed;
        }
        for (const auto& s : d.start) {
            auto it = jobs_.find(s.job);
            if (it == jobs_.end() || it->second.state != job_states::queued) continue;  // HAS restarts (expansion) are not used here
            auto& j = it->second;
            nlohmann::ordered_json alts = nlohmann::ordered_json::array();
            for (const auto& p : j.usable) {
                if (alts.size() >= 5) break;
                if (p == s.p) continue;
                alts.push_back({{"gpu", p.gpu}, {"gpus", p.gpus}, {"nodes", p.nodes}, {"est_time_s", p.est_time.value}, {"tokens_per_s", p.tokens_per_s}});
            }
            try {
                orch_->start(s.job, s.p, s.alloc);
                log_decision({{"decision", "start"}, {"job", s.job}, {"name", j.spec.name}, {"plan", detail::service_plan_json(s.p)},
                              {"allocation", alloc_json(s.alloc)}, {"slurm_job", j.slurm_id}, {"alternatives", alts},
                              {"why", "HAS: earliest predicted completion among the efficient plans that the free GPUs allow now"}});
            } catch (const error& e) {
                // sbatch failed after the intent was committed: the next tick asks Slurm whether it took the job.
                if (orch_->state().holding(s.job)) orch_->finished(s.job);
                log_decision({{"decision", "submit-failed"}, {"job", s.job}, {"why", e.what()}});
                if (j.state != job_states::submitting) j.state = job_states::queued;
            }
        }
        std::vector<int> gone;
        for (auto& [id, j] : jobs_)
            if (j.state == job_states::failed) gone.push_back(id);
        for (int id : gone) jobs_.erase(id);
    }

    void log_decision(nlohmann::ordered_json j) {
        if (!log_.is_open()) return;
        j["t"] = unix_now();
        log_ << j.dump() << '\n';
        log_.flush();
    }
    static std::string join(const std::vector<std::string>& v) {
        std::string s;
        for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
        return s;
    }
    static std::string fmt_double(double x) {
        char b[64];
        std::snprintf(b, sizeof b, "%.9g", x);
        return b;
    }

    const slurm_api* slurm_;
    job_store* store_;
    gres_map map_;
    engine_options opt_;
    gpu_catalog catalog_;
    mutable std::mutex m_;
    slurm_inventory inv_;
    std::unique_ptr<slurm_backend> backend_;
    std::unique_ptr<adopting_backend> adopter_;
    std::unique_ptr<orchestrator> orch_;
    std::map<int, int> priority_;
    has_scheduler<best_fit_placement, detail::priority_order> has_;
    std::map<int, live_job> jobs_;
    std::map<std::string, slurm_node> last_nodes_;
    std::vector<double> decision_lat_, submit_lat_;
    std::int64_t sbatch_calls_ = 0;
    bool slurm_up_ = true;
    bool dirty_ = false;
    std::ofstream log_;
};

}  // namespace frenzy
