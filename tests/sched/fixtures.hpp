#pragma once
// Test helpers: small clusters and a plan provider with hand-set plans (no dependence on the planner).
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "frenzy/hw/cluster.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/sched/scheduler.hpp"
#include "frenzy/sim/simulator.hpp"
#include "frenzy/sim/trace.hpp"

namespace frenzy_test {

inline frenzy::plan mk_plan(const std::string& gpu, int gpus, double tokens_per_s, int tp = 1) {
    frenzy::plan p;
    p.gpu = gpu;
    p.gpus = gpus;
    p.nodes = 1;
    p.parallel.tp = tp;
    p.parallel.dp = gpus / tp;
    p.tokens_per_s = tokens_per_s;
    return p;
}

inline frenzy::cluster_spec mk_cluster(std::vector<frenzy::node_group> groups) {
    frenzy::cluster_spec c;
    c.nodes = std::move(groups);
    return c;
}

/// Plans keyed by a job class; a job's class is its global_batch (the model is always gpt3-125m, a label only).
inline frenzy::plan_provider table_provider(std::map<std::int64_t, std::vector<frenzy::plan>> table) {
    return [table = std::move(table)](const frenzy::job_spec& j) {
        frenzy::plan_result r;
        auto it = table.find(j.training.global_batch);
        if (it != table.end()) r.plans = it->second;
        else r.infeasible.push_back({"*", "no plans in the test table"});
        return r;
    };
}

inline frenzy::trace_job mk_job(const std::string& id, double submit, std::int64_t cls, double tokens,
                                int req_gpus = 0, const std::string& req_type = "") {
    frenzy::trace_job t;
    t.job_id = id;
    t.submit_s = submit;
    t.model = "gpt3-125m";
    t.seq_len = 2048;
    t.global_batch = cls;
    t.total_tokens = tokens;
    t.requested_gpus = req_gpus;
    t.requested_type = req_type;
    return t;
}

/// Event times in the hand-checked scenarios are sums of exact binary fractions of small integers; 1e-9 absorbs
/// the division in rate = tokens_per_s / tokens.
inline constexpr double eps = 1e-9;

/// Simulator options of the hand-checked scenarios: 10 s start-up and restart.
inline frenzy::sim_options opts() {
    frenzy::sim_options o;
    o.startup_s = 10;
    o.restart_s = 10;
    return o;
}

/// The record of job `id` in a simulation result.
inline const frenzy::job_record& rec(const frenzy::sim_result& r, const std::string& id) {
    for (const auto& j : r.jobs)
        if (j.job_id == id) return j;
    throw std::runtime_error("no job " + id);
}

}  // namespace frenzy_test
