// fcfs and tiresias: hand-checked scenarios with exact JCTs (derivations in comments).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "frenzy/sched/fcfs.hpp"
#include "frenzy/sched/tiresias.hpp"
#include "frenzy/sim/simulator.hpp"

using namespace frenzy;
using namespace frenzy_test;

TEST_CASE("fcfs: out-of-memory request crashes after start-up and is resubmitted with twice the GPUs") {
    // 4 A100. Class 6 does not fit on 1 GPU: plans on 2 GPUs (100 tok/s) and 4 GPUs (180 tok/s).
    const auto cluster = mk_cluster({{"a", "a100-80g", 4, 1}});
    const auto prov = table_provider({{6, {mk_plan("a100-80g", 2, 100), mk_plan("a100-80g", 4, 180)}},
                                      {1, {mk_plan("a100-80g", 4, 100)}}});
    const std::vector<trace_job> trace{
        mk_job("J0", 0, 6, 1000, 1, "a100-80g"),  // 1 GPU: OOM at t=10; resubmitted with 2 GPUs (to the tail)
        mk_job("J1", 1, 1, 1000, 4, "a100-80g"),  // blocked (3 free) until t=10, then 10 -> 30
    };
    auto r = simulate(cluster, trace, prov, fcfs_scheduler{}, opts());
    CHECK(rec(r, "J0").oom_failures == 1);
    CHECK(rec(r, "J0").gpus == 2);
    CHECK(rec(r, "J0").jct() == Approx(50).epsilon(eps));  // restarts at 30 on 2 GPUs: 30 + 10 + 1000/100
    CHECK(rec(r, "J1").jct() == Approx(29).epsilon(eps));
    CHECK(rec(r, "J0").launches == 2);
}

TEST_CASE("fcfs: strict arrival order with head-of-line blocking, on the requested type") {
    // 4 A100 + 4 RTX 3090. Everyone asks for the 3090s even though the A100s are idle.
    const auto cluster = mk_cluster({{"a", "a100-80g", 4, 1}, {"r", "rtx-3090", 4, 1}});
    const auto prov = table_provider({{2, {mk_plan("rtx-3090", 2, 100), mk_plan("a100-80g", 2, 400)}},
                                      {1, {mk_plan("rtx-3090", 4, 100), mk_plan("a100-80g", 4, 400)}}});
    const std::vector<trace_job> trace{
        mk_job("J0", 0, 2, 1000, 2, "rtx-3090"),  // 0 -> 20
        mk_job("J1", 1, 1, 1000, 4, "rtx-3090"),  // needs all 4: waits for J0, 20 -> 40
        mk_job("J2", 2, 2, 1000, 2, "rtx-3090"),  // 2 free at t=2 but J1 is ahead: 40 -> 60
    };
    auto r = simulate(cluster, trace, prov, fcfs_scheduler{}, opts());
    CHECK(rec(r, "J0").jct() == Approx(20).epsilon(eps));
    CHECK(rec(r, "J1").jct() == Approx(39).epsilon(eps));
    CHECK(rec(r, "J2").jct() == Approx(58).epsilon(eps));
    for (const auto& j : r.jobs) CHECK(j.gpu == "rtx-3090");
}

TEST_CASE("fcfs: a request larger than the cluster is reported infeasible with a reason") {
    const auto cluster = mk_cluster({{"a", "a100-80g", 4, 1}});
    const auto prov = table_provider({{1, {mk_plan("a100-80g", 4, 100)}}});
    auto r = simulate(cluster, std::vector<trace_job>{mk_job("J0", 0, 1, 1000, 8, "a100-80g")}, prov, fcfs_scheduler{}, opts());
    CHECK(r.metrics.failed_jobs == 1);
    CHECK(r.jobs[0].outcome == job_outcome::infeasible);
    CHECK(r.jobs[0].reason.find("requested 8 GPUs of a100-80g") != std::string::npos);
}

TEST_CASE("tiresias: a new job preempts one that has left the first queue (2D-LAS)") {
    // 4 A100, one threshold at 100 GPU-s. J0 (4 GPUs) has 200 GPU-s at t=50 -> queue 1; J1 arrives in queue 0.
    const auto cluster = mk_cluster({{"a", "a100-80g", 4, 1}});
    const auto prov = table_provider({{1, {mk_plan("a100-80g", 4, 100)}}});
    const std::vector<trace_job> trace{
        mk_job("J0", 0, 1, 10000, 4),  // runs 0..50 (progress (50-10)/100 = 0.4), preempted, resumes at 70
        mk_job("J1", 50, 1, 1000, 4),  // 50 -> 70
    };
    tiresias_options to;
    to.thresholds_gpu_s = {100};
    to.round_s = 1000;
    auto r = simulate(cluster, trace, prov, tiresias_scheduler(to), opts());
    CHECK(rec(r, "J1").jct() == Approx(20).epsilon(eps));
    CHECK(rec(r, "J0").jct() == Approx(140).epsilon(eps));  // 70 + 10 restart + 0.6 x 100 s
    CHECK(rec(r, "J0").preemptions == 1);
    CHECK(rec(r, "J0").launches == 2);
}

TEST_CASE("tiresias: queue order is by attained GPU-seconds, FIFO inside a queue") {
    tiresias_scheduler t(tiresias_options{.thresholds_gpu_s = {100, 1000}, .round_s = 60, .promote_knob = 0});
    job_view j;
    j.attained_gpu_s = 99;
    CHECK(t.queue_of(j, 0) == 0);
    j.attained_gpu_s = 100;
    CHECK(t.queue_of(j, 0) == 1);
    j.attained_gpu_s = 5000;
    CHECK(t.queue_of(j, 0) == 2);
}

TEST_CASE("tiresias: promotion is persistent and resets service (run_sim.py solve_starvation)") {
    // One A100. A runs with 150 GPU-s (> the 100 GPU-s limit): demoted to queue 1. At t=100 A has waited 50 s since
    // it was preempted at 50 after executing 10 s: 50 >= 2 x 10, so it is promoted to queue 0 with its service
    // reset (a job outside the views holds the GPU then). At t=110 B arrives (queue 0, behind A in list order) and one GPU is free: A, not B, starts. Were the
    // queue recomputed from attained service alone (150 GPU-s: queue 1), B would start.
    const auto cluster = mk_cluster({{"a", "a100-80g", 1, 1}});
    cluster_state cs(cluster);
    const std::vector<plan> plans{mk_plan("a100-80g", 1, 100)};
    tiresias_scheduler t(tiresias_options{.thresholds_gpu_s = {100}, .round_s = 60, .promote_knob = 2});
    allocation a{0, {{0, 1}}};
    cs.allocate(0, "a100-80g", a);
    job_view A;
    A.id = 0;
    A.plans = &plans;
    A.total_tokens = 1e6;
    A.requested_gpus = 1;
    A.running = true;
    A.alloc = &a;
    A.current = &plans[0];
    A.attained_gpu_s = 150;
    A.executed_s = 10;
    std::vector<job_view> v1{A};
    auto d1 = t.schedule({40, &cs, v1});
    CHECK(d1.preempt.empty());  // alone, it keeps running (in queue 1)
    cs.release(0);
    A.running = false;
    A.alloc = nullptr;
    A.current = nullptr;
    A.queued_since_s = 50;
    cs.allocate(9, "a100-80g", a);  // a job outside the views holds the GPU at t=100: A cannot start yet
    std::vector<job_view> v2{A};
    auto d2 = t.schedule({100, &cs, v2});
    CHECK(d2.start.empty());
    CHECK(t.promotions() == 1);
    cs.release(9);
    job_view B = A;
    B.id = 1;
    B.attained_gpu_s = 0;
    B.executed_s = 0;
    B.queued_since_s = 110;
    B.submit_s = 110;
    std::vector<job_view> v3{A, B};
    auto d3 = t.schedule({110, &cs, v3});
    REQUIRE(d3.start.size() == 1);
    CHECK(d3.start[0].job == 0);
    CHECK(t.promotions() == 1);  // not promoted again: already in queue 0
}

TEST_CASE("tiresias: service counts computed GPU-seconds, not the launch overhead") {
    // 4 A100, one threshold at 100 GPU-s, start-up 10 s. J0 (4 GPUs, 100 s of computing) started at 0; when J1
    // arrives at 30, J0 has computed 20 s = 80 GPU-s < 100 (the 10 s start-up is not service): it stays in queue 0,
    // running ahead of J1, and completes at 110; J1 then runs 110 + 10 + 10 = 130. Counting the start-up as service
    // (120 GPU-s) would demote J0 and let J1 preempt it.
    const auto cluster = mk_cluster({{"a", "a100-80g", 4, 1}});
    const auto prov = table_provider({{1, {mk_plan("a100-80g", 4, 100)}}});
    const std::vector<trace_job> trace{mk_job("J0", 0, 1, 10000, 4), mk_job("J1", 30, 1, 1000, 4)};
    tiresias_options to;
    to.thresholds_gpu_s = {100};
    to.round_s = 1000;
    auto r = simulate(cluster, trace, prov, tiresias_scheduler(to), opts());
    CHECK(rec(r, "J0").preemptions == 0);
    CHECK(rec(r, "J0").jct() == Approx(110).epsilon(eps));
    CHECK(rec(r, "J1").jct() == Approx(100).epsilon(eps));
}

TEST_CASE("tiresias: wide jobs under a 300 s restart finish without a preemption cycle inside the restart") {
    // 16 A100 on one node; eight 16-GPU jobs of 3,600 s of computing arrive 600 s apart; start-up and restart 300 s,
    // default queues (1 and 10 GPU-hours) and promotion. A 16-GPU job uses up the 1 GPU-hour queue in 225 s: with
    // the restart counted as service and demoted jobs queued behind pending ones (the rules before this test), a
    // run could be demoted and preempted before it computed. Measured with those rules: 112 preemptions, last end
    // 56,760 s; with these: 45 and 44,400 s (serial: 8 x 3,900 = 31,200 s). The bounds below pin the measured
    // values with ~7% / ~1.5% slack (simulated times are deterministic; the slack only absorbs legitimate changes in
    // tie order), and the old rules fail both.
    const auto cluster = mk_cluster({{"a", "a100-80g", 16, 1}});
    const auto prov = table_provider({{1, {mk_plan("a100-80g", 16, 1600)}}});
    std::vector<trace_job> trace;
    for (int i = 0; i < 8; ++i) trace.push_back(mk_job("J" + std::to_string(i), 600.0 * i, 1, 1600 * 3600.0, 16));
    sim_options o;
    o.startup_s = 300;
    o.restart_s = 300;
    o.max_events = 200000;
    auto r = simulate(cluster, trace, prov, tiresias_scheduler{}, o);
    CHECK(r.metrics.completed == 8);
    double last = 0;
    int preemptions = 0;
    for (const auto& j : r.jobs) {
        preemptions += j.preemptions;
        last = std::max(last, j.end_s);
    }
    CHECK(preemptions <= 48);
    CHECK(last <= 45000);
}
