#pragma once
// What a simulation reports: each job's life (job_record), the `frenzy simulate` metrics (sim_metrics, their JSON)
// and the per-job CSV.
#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/sim/trace.hpp"

namespace frenzy {

enum class job_outcome { completed, infeasible, failed };

/// One run of a job: from its launch (start-up included) to its end.
struct job_run {
    double start_s = 0;
    double end_s = -1;  ///< -1 while it runs
    std::string gpu;
    int gpus = 0;
    int nodes = 0;
    std::string ended;  ///< completed, preempted, node failure, out of memory
    bool operator==(const job_run&) const = default;
};

/// One job's life in a run.
struct job_record {
    std::string job_id;
    std::string model;
    double submit_s = 0;
    double first_start_s = -1;
    double end_s = -1;
    job_outcome outcome = job_outcome::infeasible;
    std::string reason;        ///< why it could not run (infeasible) or did not finish (failed)
    std::string gpu;           ///< type of its last run
    int gpus = 0;              ///< GPUs of its last run
    int launches = 0;
    int preemptions = 0;
    int node_failures = 0;
    int oom_failures = 0;
    int moves = 0;             ///< moves to another plan (start_decision::move)
    double moving_s = 0;       ///< seconds it spent moving: each move's cost plus the work it lost
    double gpu_seconds = 0;    ///< GPU-seconds held (start-up and lost work included)
    std::vector<job_run> runs;  ///< every run, in order
    double rejected_s = -1;     ///< when the policy gave it up (infeasible or failed), -1 if it did not
    double jct() const { return end_s - submit_s; }
    bool operator==(const job_record&) const = default;
};

/// The `frenzy simulate` metrics (docs/formats.md).
struct sim_metrics {
    std::string policy;
    int jobs = 0;
    int completed = 0;
    double avg_jct_s = 0, p50_jct_s = 0, p99_jct_s = 0;
    double makespan_s = 0;       ///< last completion minus first submission
    double avg_queue_s = 0;      ///< mean of first start minus submission, completed jobs
    double gpu_utilization = 0;  ///< GPU-seconds held / (GPUs x span from first submission to last completion or failure)
    int failed_jobs = 0;         ///< jobs reported infeasible
    int sched_calls = 0;
    double sched_mean_us = 0, sched_p99_us = 0;
    /// Per-round programs solved, proved optimal, stopped at the wall-clock limit (Sia; 0 for others).
    int solver_solves = 0, solver_optimal = 0, solver_timed_out = 0;
    int moves = 0;          ///< moves of running jobs to another plan, all jobs
    double moving_s = 0;    ///< seconds jobs spent moving (no progress), all jobs
};

struct sim_log_entry {
    double t = 0;
    std::string what;  ///< arrival, start, complete, oom, preempt, node-fail, node-recover, reject, tick
    int job = -1;      ///< job index (or node index for node events)
};

struct sim_result {
    sim_metrics metrics;
    std::vector<job_record> jobs;     ///< in trace order (sorted by submission)
    std::vector<double> decision_us;  ///< CPU time of every scheduling decision (detail::thread_cpu_us)
    std::vector<sim_log_entry> log;   ///< when sim_options::record_log
};

inline nlohmann::json to_json(const sim_metrics& m) {
    return {{"policy", m.policy}, {"jobs", m.jobs}, {"completed", m.completed}, {"avg_jct_s", m.avg_jct_s},
            {"p50_jct_s", m.p50_jct_s}, {"p99_jct_s", m.p99_jct_s}, {"makespan_s", m.makespan_s},
            {"avg_queue_s", m.avg_queue_s}, {"gpu_utilization", m.gpu_utilization}, {"failed_jobs", m.failed_jobs},
            {"sched_calls", m.sched_calls}, {"sched_mean_us", m.sched_mean_us}, {"sched_p99_us", m.sched_p99_us},
            {"solver_solves", m.solver_solves}, {"solver_optimal", m.solver_optimal},
            {"solver_timed_out", m.solver_timed_out}, {"moves", m.moves}, {"moving_s", m.moving_s}};
}

inline const char* to_string(job_outcome o) {
    return o == job_outcome::completed ? "completed" : o == job_outcome::failed ? "failed" : "infeasible";
}

inline nlohmann::json to_json(const job_run& r) {
    return {{"start_s", r.start_s}, {"end_s", r.end_s}, {"gpu", r.gpu}, {"gpus", r.gpus}, {"nodes", r.nodes},
            {"ended", r.ended}};
}

/// One job of `frenzy simulate --json --runs`: its identity, outcome and every run.
inline nlohmann::json to_json(const job_record& j) {
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& r : j.runs) runs.push_back(to_json(r));
    return {{"job_id", j.job_id}, {"model", j.model}, {"submit_s", j.submit_s}, {"end_s", j.end_s},
            {"status", to_string(j.outcome)}, {"reason", j.reason}, {"runs", std::move(runs)}};
}

/// The cluster's state after each instant at which it changed: jobs waiting for GPUs and GPUs held by runs.
struct timeline_point {
    double t_s = 0;
    int queued = 0;
    int busy_gpus = 0;
    bool operator==(const timeline_point&) const = default;
};

/// The queue and the busy GPUs over time, from the jobs' records: a job waits from its submission to its first
/// run, between runs, and after a run that did not complete until the next or until it is given up.
inline std::vector<timeline_point> timeline(const std::vector<job_record>& jobs) {
    struct change { double t; int queued, busy; };
    std::vector<change> ch;
    for (const auto& j : jobs) {
        if (j.runs.empty() && j.rejected_s >= 0 && j.rejected_s <= j.submit_s) continue;  // refused on arrival
        ch.push_back({j.submit_s, 1, 0});
        for (const auto& r : j.runs) {
            ch.push_back({r.start_s, -1, r.gpus});
            if (r.end_s >= 0) ch.push_back({r.end_s, r.ended == "completed" ? 0 : 1, -r.gpus});
        }
        if (j.rejected_s >= 0) ch.push_back({j.rejected_s, -1, 0});
    }
    std::stable_sort(ch.begin(), ch.end(), [](const change& a, const change& b) { return a.t < b.t; });
    std::vector<timeline_point> out;
    timeline_point now;
    for (std::size_t i = 0; i < ch.size(); ++i) {
        now.queued += ch[i].queued;
        now.busy_gpus += ch[i].busy;
        now.t_s = ch[i].t;
        if (i + 1 == ch.size() || ch[i + 1].t > ch[i].t) out.push_back(now);
    }
    return out;
}

inline nlohmann::json to_json(const timeline_point& p) {
    return {{"t_s", p.t_s}, {"queued", p.queued}, {"busy_gpus", p.busy_gpus}};
}

/// Per-job CSV: one row per job.
inline void write_jobs_csv(std::ostream& out, const sim_result& r) {
    out << "policy,job_id,model,submit_s,first_start_s,end_s,jct_s,status,gpu,gpus,launches,preemptions,"
           "node_failures,oom_failures,gpu_seconds,reason\n";
    for (const auto& j : r.jobs) {
        std::string reason = j.reason;
        std::replace(reason.begin(), reason.end(), ',', ';');
        out << r.metrics.policy << ',' << j.job_id << ',' << j.model << ',' << csv_decimal(j.submit_s) << ','
            << csv_decimal(j.first_start_s) << ',' << csv_decimal(j.end_s) << ','
            << (j.outcome == job_outcome::completed ? csv_decimal(j.jct()) : std::string{}) << ','
            << to_string(j.outcome) << ',' << j.gpu << ',' << j.gpus << ','
            << j.launches << ',' << j.preemptions << ',' << j.node_failures << ',' << j.oom_failures << ','
            << csv_decimal(j.gpu_seconds) << ',' << reason << '\n';
    }
}

namespace detail {
/// Nearest-rank percentile of sorted values.
inline double percentile(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return 0;
    const auto n = sorted.size();
    auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
    k = std::clamp<std::size_t>(k, 1, n);
    return sorted[k - 1];
}
}  // namespace detail

}  // namespace frenzy
