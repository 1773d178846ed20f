// Property tests on random clusters and traces, for every policy: orchestrator invariants hold after every event
// batch (the simulator re-checks and throws otherwise), every job completes or is reported infeasible with a
// reason, time never goes back, and the same seed gives the same output.
#include <random>

#include <catch2/catch.hpp>

#include "../sched/fixtures.hpp"
#include "every_policy.hpp"
#include "frenzy/sched/fcfs.hpp"
#include "frenzy/sched/has.hpp"
#include "frenzy/sched/tiresias.hpp"
#include "frenzy/sim/simulator.hpp"

using namespace frenzy;
using namespace frenzy_test;

namespace {
const std::vector<std::string> kTypes{"a100-80g", "v100-32g", "rtx-3090", "h100-80g"};

struct scenario {
    cluster_spec cluster;
    std::vector<trace_job> trace;
    plan_provider plans;
};

scenario random_scenario(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    auto uni = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<std::uint64_t>(hi - lo + 1)); };
    scenario s;
    const int ntypes = uni(1, 3);
    for (int t = 0; t < ntypes; ++t)
        s.cluster.nodes.push_back({"g" + std::to_string(t), kTypes[static_cast<std::size_t>(t)], uni(0, 1) ? 8 : 4, uni(1, 3)});
    std::map<std::int64_t, std::vector<plan>> table;
    const int classes = 6;
    for (int k = 1; k <= classes; ++k) {
        std::vector<plan> ps;
        if (k == classes) {  // a class with no plan at all
            table[k] = ps;
            continue;
        }
        for (int t = 0; t < ntypes; ++t) {
            if (uni(0, 4) == 0) continue;  // infeasible on this type
            const int min_gpus = 1 << uni(0, 3);
            const double speed = 50.0 * uni(1, 8);
            for (int g = min_gpus, i = 0; g <= 32; g *= 2, ++i)
                ps.push_back(mk_plan(kTypes[static_cast<std::size_t>(t)], g, speed * g * std::pow(0.9, i), g >= 8 && uni(0, 1) ? 2 : 1));
        }
        table[k] = ps;
    }
    s.plans = table_provider(table);
    const int njobs = uni(5, 40);
    double t = 0;
    for (int i = 0; i < njobs; ++i) {
        t += uni(0, 600);
        const int req = 1 << uni(0, 4);
        s.trace.push_back(mk_job("j" + std::to_string(i), t, uni(1, classes), 1e4 * uni(1, 2000), uni(0, 3) ? req : 0,
                                 uni(0, 3) ? kTypes[static_cast<std::size_t>(uni(0, ntypes - 1))] : std::string{}));
    }
    return s;
}

/// Each job's runs tell its life: they follow one another after its submission, hold the GPU-seconds the record
/// counts, and a completed job's last run ends at its completion; the timeline never holds more GPUs than the
/// cluster has nor a negative queue, and ends empty.
void check_runs(const sim_result& r, std::int64_t cluster_gpus) {
    for (const auto& j : r.jobs) {
        double held = 0, last_end = j.submit_s;
        for (const auto& run : j.runs) {
            CHECK(run.start_s >= last_end);
            CHECK(run.end_s >= run.start_s);
            CHECK_FALSE(run.ended.empty());
            held += (run.end_s - run.start_s) * run.gpus;
            last_end = run.end_s;
        }
        CHECK(held == Approx(j.gpu_seconds).epsilon(1e-9).margin(1e-6));
        CHECK(static_cast<int>(j.runs.size()) == j.launches);
        if (j.outcome == job_outcome::completed) {
            REQUIRE_FALSE(j.runs.empty());
            CHECK(j.runs.front().start_s == j.first_start_s);
            CHECK(j.runs.back().end_s == j.end_s);
            CHECK(j.runs.back().ended == "completed");
        }
    }
    const auto line = timeline(r.jobs);
    for (std::size_t i = 0; i < line.size(); ++i) {
        CHECK(line[i].queued >= 0);
        CHECK(line[i].busy_gpus >= 0);
        CHECK(line[i].busy_gpus <= cluster_gpus);
        if (i > 0) CHECK(line[i].t_s > line[i - 1].t_s);
    }
    if (!line.empty()) {
        CHECK(line.back().queued == 0);
        CHECK(line.back().busy_gpus == 0);
    }
}

}  // namespace

TEST_CASE("timeline: the queue and busy GPUs after each change, by hand") {
    // a: submitted at 0, runs 8 GPUs 10-50, preempted, waits, runs 4 GPUs 60-100 and completes.
    // b: submitted at 5, runs 2 GPUs 10-30 and completes. c: refused on arrival at 7 (never queued).
    job_record a, b, c;
    a.submit_s = 0;
    a.runs = {{10, 50, "h100", 8, 1, "preempted"}, {60, 100, "h100", 4, 1, "completed"}};
    b.submit_s = 5;
    b.runs = {{10, 30, "a100", 2, 1, "completed"}};
    c.submit_s = 7;
    c.rejected_s = 7;
    const std::vector<timeline_point> want = {{0, 1, 0},  {5, 2, 0},  {10, 0, 10}, {30, 0, 8},
                                              {50, 1, 0}, {60, 0, 4}, {100, 0, 0}};
    CHECK(timeline({a, b, c}) == want);
}

TEST_CASE("simulator properties on random clusters and traces, every policy") {
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
        const auto sc = random_scenario(seed);
        for (auto& pol : every_policy()) {
            const bool lp = pol.name() == std::string_view("gavel") || pol.name() == std::string_view("gavel-las") ||
                            pol.name() == std::string_view("sia");
            if (lp && seed > 3) continue;  // the LP/ILP policies are slower; three random scenarios each
            INFO("seed " << seed << " policy " << pol.name());
            sim_options o;
            o.seed = seed;
            o.record_log = true;
            o.node_mtbf_s = seed % 2 ? 20000.0 : 0.0;
            o.node_repair_s = 1800;
            sim_result r;
            REQUIRE_NOTHROW(r = simulate(sc.cluster, sc.trace, sc.plans, pol, o));
            CHECK(r.metrics.completed + r.metrics.failed_jobs == static_cast<int>(sc.trace.size()));
            for (const auto& j : r.jobs) {
                if (j.outcome == job_outcome::completed) {
                    CHECK(j.first_start_s >= j.submit_s);
                    CHECK(j.end_s > j.first_start_s);
                    CHECK(j.gpu_seconds > 0);
                } else {
                    CHECK_FALSE(j.reason.empty());
                }
                if (j.model == "gpt3-125m" && j.outcome == job_outcome::infeasible && pol.name() == std::string_view("has"))
                    CHECK(j.reason.rfind("no feasible plan", 0) == 0);  // HAS runs every job that has a plan
            }
            check_runs(r, sc.cluster.total_gpus());
            for (std::size_t i = 1; i < r.log.size(); ++i) CHECK(r.log[i].t >= r.log[i - 1].t);
            CHECK(r.metrics.gpu_utilization <= 1.0 + 1e-9);
            // Same seed, same output (decision wall times aside).
            auto again = simulate(sc.cluster, sc.trace, sc.plans, pol, o);
            CHECK(again.jobs == r.jobs);
            CHECK(again.metrics.avg_jct_s == r.metrics.avg_jct_s);
            CHECK(again.metrics.sched_calls == r.metrics.sched_calls);
        }
    }
}

TEST_CASE("simulator properties with mixed plans: HAS on random clusters of two types or more, failures on") {
    // Every job class with a plan also gets a pipeline over the first two types (one node's GPUs of each) at 0.75 x
    // its fastest one-type plan: sometimes worth starting, sometimes not. The simulator checks the orchestrator's
    // invariants after every event (each component on its own type, no GPU held twice, failures hit mixed jobs).
    int mixed_runs = 0, scenarios = 0;
    for (std::uint64_t seed = 1; seed <= 40 && scenarios < 12; ++seed) {
        const auto sc = random_scenario(seed);
        if (sc.cluster.nodes.size() < 2) continue;
        ++scenarios;
        const auto& n0 = sc.cluster.nodes[0];
        const auto& n1 = sc.cluster.nodes[1];
        const plan_provider plans = [&](const job_spec& j) {
            auto r = sc.plans(j);
            double fastest = 0;
            for (const auto& p : r.plans) fastest = std::max(fastest, p.tokens_per_s);
            if (fastest > 0) {
                plan m;
                m.groups.resize(2);
                m.groups[0].gpu = n0.gpu;
                m.groups[0].gpus = n0.gpus_per_node;
                m.groups[1].gpu = n1.gpu;
                m.groups[1].gpus = n1.gpus_per_node;
                m.parallel.tp = 1;
                m.tokens_per_s = 0.75 * fastest;
                set_group_totals(m);
                r.mixed.push_back(m);
            }
            return r;
        };
        INFO("seed " << seed);
        sim_options o;
        o.seed = seed;
        o.check_invariants = true;
        o.node_mtbf_s = seed % 2 ? 20000.0 : 0.0;
        o.node_repair_s = 1800;
        sim_result r;
        REQUIRE_NOTHROW(r = simulate(sc.cluster, sc.trace, plans, has{}, o));
        CHECK(r.metrics.completed + r.metrics.failed_jobs == static_cast<int>(sc.trace.size()));
        for (const auto& j : r.jobs) {
            if (j.outcome != job_outcome::completed) CHECK_FALSE(j.reason.empty());
            for (const auto& run : j.runs) mixed_runs += run.gpu == n0.gpu + "+" + n1.gpu;
        }
        check_runs(r, sc.cluster.total_gpus());
        CHECK(simulate(sc.cluster, sc.trace, plans, has{}, o).jobs == r.jobs);
    }
    CHECK(scenarios == 12);
    CHECK(mixed_runs > 0);  // the mixed path ran
}

TEST_CASE("simulator: node failure restarts a job from its last checkpoint (exact)") {
    // One node of 4 A100, one job of 10000 s compute (1e6 tokens at 100 tok/s) after a 10 s start-up; checkpoints
    // every 1000 s of compute; a failed node is back after 100 s; restart costs 10 s. For a run with exactly one
    // failure at tf, the job keeps floor((tf - 10) / 1000) x 1000 s of work and ends at
    // tf + 100 + 10 + (10000 - kept).
    const auto cluster = mk_cluster({{"a", "a100-80g", 4, 1}});
    const auto prov = table_provider({{1, {mk_plan("a100-80g", 4, 100)}}});
    int checked = 0;
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
        sim_options o;
        o.startup_s = 10;
        o.restart_s = 10;
        o.node_mtbf_s = 8000;
        o.node_repair_s = 100;
        o.checkpoint_interval_s = 1000;
        o.seed = seed;
        o.record_log = true;
        auto r = simulate(cluster, std::vector<trace_job>{mk_job("J0", 0, 1, 1e6)}, prov, has_scheduler<>{}, o);
        REQUIRE(r.metrics.completed == 1);
        const auto& j = r.jobs[0];
        CHECK(j.launches == j.node_failures + 1);
        if (j.node_failures != 1) continue;
        double tf = -1;
        for (const auto& e : r.log)
            if (e.what == "node-fail") { tf = e.t; break; }
        REQUIRE(tf > 0);
        if (tf < 10) continue;  // failed during start-up: nothing to keep, still exact below
        const double kept = std::floor((tf - 10) / 1000) * 1000;
        INFO("seed " << seed << " failure at " << tf);
        CHECK(j.end_s == Approx(tf + 110 + (10000 - kept)).epsilon(1e-12));
        ++checked;
    }
    CHECK(checked >= 3);  // with MTBF 8000 s over ~10000 s runs, single failures are common
}
