#pragma once
// The engine of `frenzy serve`: the requests of its HTTP API (service/http.hpp) on top of the scheduling loop
// (service/loop.hpp). Accepting a job plans it on the live inventory (the planner) within its limits and records it
// durably (service/store.hpp) before answering; the loop places it with the chosen policy and submits it to Slurm.
// The JSON it reads and answers is service/codecs.hpp's, the Prometheus text service/metrics.hpp's.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/service/codecs.hpp"
#include "frenzy/service/loop.hpp"
#include "frenzy/service/metrics.hpp"

namespace frenzy {

/// HTTP-shaped answer of an engine call.
struct api_reply {
    int status = 200;
    nlohmann::ordered_json body;
};

class serve_engine : public serve_loop {
public:
    using serve_loop::serve_loop;

    /// POST /v1/jobs.
    api_reply submit(const std::string& body) {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(body);
        } catch (const nlohmann::json::parse_error& e) {
            return {400, {{"error", std::string("body is not valid JSON: ") + e.what()}}};
        }
        job_submission parsed_job;
        try {
            parsed_job = submission_from_json(j, catalog_);
        } catch (const config_error& e) {
            return {400, {{"error", e.what()}}};
        }
        cluster_spec c;
        {
            std::lock_guard lk(m_);
            if (!orch_) return {503, {{"error", "not ready: the Slurm inventory has not been read yet"}}};
            c = inv_.spec;
        }
        plan_result pr;
        std::vector<plan> usable;
        try {
            pr = plan_submission(parsed_job, c, opt_.planning, usable);
        } catch (const config_error& e) {
            return {400, {{"error", e.what()}}};
        }
        if (usable.empty()) return refuse(parsed_job, pr);
        // the name the job runs under is stored with it: a job posted without one keeps its model's name once it
        // has ended and only the store remembers it
        if (!j.contains("name") || !j["name"].is_string() || j["name"].get_ref<const std::string&>().empty())
            j["name"] = parsed_job.job.name;
        return accept(j.dump(), std::move(parsed_job), std::move(pr), std::move(usable));
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

    /// GET /v1/cluster: every node (Frenzy's view and Slurm's) and every GPU type's counts.
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

    /// GET /v1/decisions: the most recent scheduling decisions (at most 100), newest first, as the decision log
    /// writes them (decision, job, why, t).
    api_reply decisions() const {
        std::lock_guard lk(m_);
        nlohmann::ordered_json a = nlohmann::ordered_json::array();
        for (auto it = recent_.rbegin(); it != recent_.rend(); ++it) a.push_back(*it);
        return {200, {{"decisions", a}}};
    }

    /// GET /metrics: Prometheus text exposition format 0.0.4 (service/metrics.hpp).
    std::string metrics() const {
        std::lock_guard lk(m_);
        service_metrics m;
        for (const auto& [id, j] : jobs_) {
            if (j.state == job_states::queued) ++m.queued;
            else if (j.state == job_states::running) ++m.running;
            else ++m.submitted;
        }
        m.cluster = orch_ ? &orch_->state() : nullptr;
        m.decision_latency_s = decision_lat_;
        m.submit_latency_s = submit_lat_;
        m.slurm_reachable = slurm_up_;
        m.sbatch_calls = sbatch_calls_;
        return metrics_text(m);
    }

private:
    /// 422: no GPU type of the cluster can run the job (within its limits); the planner's reasons per type.
    api_reply refuse(const job_submission& job, const plan_result& pr) {
        auto infeasible = pr.infeasible;  // serialised as `frenzy plan --json`'s infeasible (io/result_json.hpp)
        if ((!pr.plans.empty() || !pr.mixed.empty()) && job.limits.deadline_s > 0)
            infeasible.push_back({"*", "no plan finishes within limits.deadline=" + std::to_string(job.limits.deadline_s) + " s"});
        const nlohmann::ordered_json reasons = infeasible;
        std::lock_guard lk(m_);
        log_decision({{"decision", "refuse"}, {"name", job.job.name}, {"why", "no GPU type of the cluster can run it"}, {"reasons", reasons}});
        return {422, {{"error", "no GPU type of the cluster can run this job"}, {"infeasible", reasons}}};
    }

    /// 201: the job is stored (durable before the answer) and queued for the loop.
    api_reply accept(const std::string& body, job_submission job, plan_result pr, std::vector<plan> usable) {
        std::lock_guard lk(m_);
        const double now = unix_now();
        const auto id = store_->add_job(body, now);
        live_job lj;
        lj.spec = std::move(job.job);
        lj.limits = std::move(job.limits);
        lj.plans = std::move(pr);
        lj.usable = std::move(usable);
        lj.submit_s = now;
        lj.state = job_states::queued;
        priority_[static_cast<int>(id)] = lj.limits.priority;
        jobs_.emplace(static_cast<int>(id), std::move(lj));
        dirty_ = true;
        return {201, {{"id", id}}};
    }

    nlohmann::ordered_json row_json(const stored_job& r) const {
        auto it = jobs_.find(static_cast<int>(r.id));
        return job_row_json(r, it == jobs_.end() ? std::string{} : it->second.spec.name);
    }
};

}  // namespace frenzy
