#pragma once
// The Prometheus text (exposition format 0.0.4) of `frenzy serve`'s GET /metrics: queue and running counts, GPUs
// busy and total per type, the scheduling pass's and the submission's latency summaries, Slurm's reachability and
// the sbatch count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "frenzy/sched/cluster_state.hpp"

namespace frenzy {

/// What the engine reports at one moment.
struct service_metrics {
    int queued = 0, running = 0, submitted = 0;
    const cluster_state* cluster = nullptr;  ///< null before the inventory was read
    std::vector<double> decision_latency_s;  ///< one per scheduling pass
    std::vector<double> submit_latency_s;    ///< acceptance -> first sbatch returning, one per job
    bool slurm_reachable = true;
    std::int64_t sbatch_calls = 0;
};

namespace detail {
inline std::string metric_number(double x) {
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", x);
    return b;
}
/// A summary with the 0.5 and 0.99 quantiles, its sum and count.
inline std::string metric_summary(const std::string& name, const std::string& help, std::vector<double> v) {
    std::string s = "# HELP " + name + " " + help + "\n# TYPE " + name + " summary\n";
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    for (double q : {0.5, 0.99}) {
        const double val = v.empty() ? 0.0 : v[static_cast<std::size_t>(std::min<double>(static_cast<double>(v.size() - 1), std::floor(q * static_cast<double>(v.size()))))];
        s += name + "{quantile=\"" + (q == 0.5 ? "0.5" : "0.99") + "\"} " + metric_number(val) + "\n";
    }
    return s + name + "_sum " + metric_number(sum) + "\n" + name + "_count " + std::to_string(v.size()) + "\n";
}
inline std::string gpu_metrics(const cluster_state* cs) {
    std::string s = "# HELP frenzy_gpus_busy GPUs held by Frenzy jobs, per GPU type.\n# TYPE frenzy_gpus_busy gauge\n";
    s += "# HELP frenzy_gpus_total GPUs of the cluster, per GPU type.\n";
    if (!cs) return s;
    for (std::size_t t = 0; t < cs->types().size(); ++t) {
        const int ti = static_cast<int>(t);
        s += "frenzy_gpus_busy{type=\"" + cs->types()[t] + "\"} " + std::to_string(cs->up_gpus(ti) - cs->free_gpus(ti)) + "\n";
    }
    s += "# TYPE frenzy_gpus_total gauge\n";
    for (std::size_t t = 0; t < cs->types().size(); ++t)
        s += "frenzy_gpus_total{type=\"" + cs->types()[t] + "\"} " + std::to_string(cs->total_gpus(static_cast<int>(t))) + "\n";
    return s;
}
}  // namespace detail

/// The exposition text of `m`.
inline std::string metrics_text(const service_metrics& m) {
    std::string s;
    s += "# HELP frenzy_queue_length Jobs accepted and waiting for GPUs.\n# TYPE frenzy_queue_length gauge\n";
    s += "frenzy_queue_length " + std::to_string(m.queued) + "\n";
    s += "# HELP frenzy_running_jobs Jobs running in Slurm.\n# TYPE frenzy_running_jobs gauge\n";
    s += "frenzy_running_jobs " + std::to_string(m.running) + "\n";
    s += "# HELP frenzy_submitted_jobs Jobs submitted to Slurm and not yet running.\n# TYPE frenzy_submitted_jobs gauge\n";
    s += "frenzy_submitted_jobs " + std::to_string(m.submitted) + "\n";
    s += detail::gpu_metrics(m.cluster);
    s += detail::metric_summary("frenzy_decision_latency_seconds", "Time of one HAS scheduling pass (plans in, decisions out).", m.decision_latency_s);
    s += detail::metric_summary("frenzy_submit_latency_seconds", "From acceptance of a job to its first sbatch returning.", m.submit_latency_s);
    s += "# HELP frenzy_slurm_reachable 1 when the last Slurm poll succeeded.\n# TYPE frenzy_slurm_reachable gauge\n";
    s += std::string("frenzy_slurm_reachable ") + (m.slurm_reachable ? "1" : "0") + "\n";
    s += "# HELP frenzy_sbatch_total sbatch calls made.\n# TYPE frenzy_sbatch_total counter\n";
    s += "frenzy_sbatch_total " + std::to_string(m.sbatch_calls) + "\n";
    return s;
}

}  // namespace frenzy
