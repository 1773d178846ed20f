// Gavel and Sia round-based policies on the simulator: hand-checked scenarios with exact JCTs.
#include <cmath>

#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "frenzy/sim/simulator.hpp"
#ifdef FRENZY_HAS_GLPK
#include "frenzy/sched/gavel.hpp"
#include "frenzy/sched/sia.hpp"

using namespace frenzy;
using namespace frenzy_test;

TEST_CASE("gavel: max-sum-throughput puts the job with the larger relative speed-up on the fast type") {
    // One A100 and one V100 (1 GPU nodes). J0: 400 tok/s on A100, 200 on V100 (normalised 1, 0.5);
    // J1: 400 and 100 (1, 0.25). Objective: J1->A100 + J0->V100 = 1.5 beats the swap (1.25): a unique vertex.
    const auto cluster = mk_cluster({{"a", "a100-80g", 1, 1}, {"v", "v100-32g", 1, 1}});
    const auto prov = table_provider({{1, {mk_plan("a100-80g", 1, 400), mk_plan("v100-32g", 1, 200)}},
                                      {2, {mk_plan("a100-80g", 1, 400), mk_plan("v100-32g", 1, 100)}}});
    const std::vector<trace_job> trace{mk_job("J0", 0, 1, 20000, 1), mk_job("J1", 0, 2, 20000, 1)};
    auto r = simulate(cluster, trace, prov, gavel_scheduler(gavel_options{.round_s = 1000}), opts());
    CHECK(rec(r, "J0").gpu == "v100-32g");
    CHECK(rec(r, "J1").gpu == "a100-80g");
    CHECK(rec(r, "J0").jct() == Approx(110).epsilon(eps));  // 10 + 20000 / 200
    CHECK(rec(r, "J1").jct() == Approx(60).epsilon(eps));   // 10 + 20000 / 400
}

TEST_CASE("gavel: a round with unchanged LP inputs reuses the last solution, a change solves again") {
    const auto cluster = mk_cluster({{"a", "a100-80g", 1, 1}, {"v", "v100-32g", 1, 1}});
    cluster_state cs(cluster);
    const std::vector<plan> plans{mk_plan("a100-80g", 1, 400), mk_plan("v100-32g", 1, 200)};
    job_view j;
    j.id = 0;
    j.plans = &plans;
    j.total_tokens = 1e6;
    j.requested_gpus = 1;
    std::vector<job_view> v{j};
    gavel_scheduler g(gavel_options{.round_s = 60});
    (void)g.schedule({0, &cs, v});
    (void)g.schedule({60, &cs, v});  // same jobs, sizes, throughputs, capacity
    CHECK(g.solves() == 1);
    job_view k = j;
    k.id = 1;
    v.push_back(k);
    (void)g.schedule({120, &cs, v});  // a new job: the LP changes
    CHECK(g.solves() == 2);
}

TEST_CASE("gavel: a job arriving mid-round waits for the next round") {
    const auto cluster = mk_cluster({{"a", "a100-80g", 4, 1}});
    const auto prov = table_provider({{1, {mk_plan("a100-80g", 4, 100)}}});
    const std::vector<trace_job> trace{mk_job("J0", 0, 1, 1000, 4), mk_job("J1", 5, 1, 1000, 4)};
    auto r = simulate(cluster, trace, prov, gavel_scheduler(gavel_options{.round_s = 100}), opts());
    CHECK(rec(r, "J0").jct() == Approx(20).epsilon(eps));   // round at 0: 0 -> 20
    CHECK(rec(r, "J1").jct() == Approx(115).epsilon(eps));  // round at 100: 100 -> 120
}

TEST_CASE("gavel-las: max-min time-shares the fast type where max-sum gives it to one job") {
    // One A100 and one V100 (1-GPU nodes), rounds of 1000 s, start-up and restart 10 s. J0 runs only on the A100
    // (100 tok/s, 150,000 tokens); J1 at 300 tok/s on the A100 and 100 on the V100 (400,000 tokens). These are the
    // throughput rows of gavel_lp_test's "max-min and max-sum differ" case (T = [1, 0] and [3, 1] up to a unit).
    // max-sum: X = J0->A100, J1->V100. J0 ends at 10 + 150000/100 = 1510. At the 2000 s round J1 is alone and
    //   moves to the A100 (restart): 199,000 tokens done on the V100 (10..2000 s), 201,000 / 300 = 670 s more,
    //   so J1 ends at 2010 + 670 = 2680.
    // LAS: X = 1/2 everywhere. Priorities X / (time received on t / age), never-served pairs first, ties in job
    //   order: round 0: J0 on A100, J1 on V100 (99,000 tokens each by 1000 s); round 1000 s: J1 has never had
    //   the A100 and takes it (J0 waits): 990 s x 300 = 297,000, so 396,000 by 2000 s; round 2000 s: every
    //   priority is 0.5 / 0.5, J0 takes the A100 again (51,000 left: ends 2010 + 510 = 2520) and J1 the V100
    //   (4,000 left: ends 2010 + 40 = 2050).
    // (LAS's tie-break holds X within ~1e-11 of 1/2; that moves no priority across another here.)
    const auto cluster = mk_cluster({{"a", "a100-80g", 1, 1}, {"v", "v100-32g", 1, 1}});
    const auto prov = table_provider({{1, {mk_plan("a100-80g", 1, 100)}},
                                      {2, {mk_plan("a100-80g", 1, 300), mk_plan("v100-32g", 1, 100)}}});
    const std::vector<trace_job> trace{mk_job("J0", 0, 1, 150000, 1), mk_job("J1", 0, 2, 400000, 1)};
    auto sum = simulate(cluster, trace, prov, gavel_scheduler(gavel_options{.round_s = 1000}), opts());
    CHECK(rec(sum, "J0").jct() == Approx(1510).epsilon(eps));
    CHECK(rec(sum, "J1").jct() == Approx(2680).epsilon(eps));
    CHECK(rec(sum, "J1").launches == 2);
    auto las = simulate(cluster, trace, prov,
                        gavel_scheduler(gavel_options{.round_s = 1000, .policy = gavel_policy::las}), opts());
    CHECK(las.metrics.policy == "gavel-las");
    CHECK(rec(las, "J0").jct() == Approx(2520).epsilon(eps));
    CHECK(rec(las, "J1").jct() == Approx(2050).epsilon(eps));
    CHECK(rec(las, "J0").launches == 2);
    CHECK(rec(las, "J1").launches == 3);
}

TEST_CASE("sia: two equal jobs share a node as 2 + 2 GPUs rather than 4 + none") {
    // 4 A100 in one node: shapes 1, 2, 4 GPUs at 100, 190, 360 tok/s. Normalised by 100 and raised to p=-0.5:
    // 1, 0.7255, 0.5270. One job alone: 4 GPUs (0.527). Two jobs: 2+2 costs 1.451 < 4+idle 0.527+1.1 = 1.627.
    const auto cluster = mk_cluster({{"a", "a100-80g", 4, 1}});
    // The ILP's choice alone: no growth limit (tested below).
    const auto prov = table_provider({{1, {mk_plan("a100-80g", 1, 100), mk_plan("a100-80g", 2, 190),
                                           mk_plan("a100-80g", 4, 360)}}});
    sia_policy_options free_growth;
    free_growth.growth = 0;
    auto one = simulate(cluster, std::vector<trace_job>{mk_job("J0", 0, 1, 36000)}, prov, sia_scheduler{free_growth}, opts());
    CHECK(one.jobs[0].gpus == 4);
    CHECK(one.jobs[0].jct() == Approx(110).epsilon(eps));  // 10 + 36000 / 360
    auto two = simulate(cluster, std::vector<trace_job>{mk_job("J0", 0, 1, 36000), mk_job("J1", 0, 1, 36000)}, prov,
                        sia_scheduler{free_growth}, opts());
    for (const auto& j : two.jobs) {
        CHECK(j.gpus == 2);
        CHECK(j.launches == 1);  // no re-allocation while both run (restart factor < 1 makes moving worse)
        CHECK(j.jct() == Approx(10 + 36000.0 / 190).epsilon(eps));
    }
}

TEST_CASE("sia: growth limit, a job grows at most 2x per re-allocation (sia-simulator cluster.py)") {
    // Same node and plans, one job, default growth 2: round 0 it may take 1 GPU (it has run on none; smallest
    // feasible 1); at the 60 s round it has run on 1 -> may take 2; at 120 s -> 4. Work: 0..10 start-up, 10..60 at
    // 100 tok/s = 5000 tokens; restart 10 s, 70..120 at 190 = 9500; restart, 130.. at 360: 36000 - 14500 = 21500
    // tokens in 59.72 s -> ends at 189.72 s, after 3 launches, on 4 GPUs.
    const auto cluster = mk_cluster({{"a", "a100-80g", 4, 1}});
    const auto prov = table_provider({{1, {mk_plan("a100-80g", 1, 100), mk_plan("a100-80g", 2, 190),
                                           mk_plan("a100-80g", 4, 360)}}});
    auto r = simulate(cluster, std::vector<trace_job>{mk_job("J0", 0, 1, 36000)}, prov, sia_scheduler{}, opts());
    CHECK(r.jobs[0].gpus == 4);
    CHECK(r.jobs[0].launches == 3);
    CHECK(r.jobs[0].jct() == Approx(130 + 21500.0 / 360).epsilon(eps));
}
namespace {
/// One round of Sia on a 4-GPU A100 node where job 0 runs on `j0_gpus` (4 or 2) GPUs (launched at `run_started`,
/// its `launches`-th launch, restart cost `restart_s`) and job 1 (submitted at 610 s) waits.
sched_decisions sia_round_with_a_running_job(const sia_policy_options& o, double now, double run_started, int launches,
                                            double restart_s, int j0_gpus = 4) {
    const auto spec = mk_cluster({{"a", "a100-80g", 4, 1}});
    cluster_state cs(spec);
    static const std::vector<plan> plans{mk_plan("a100-80g", 1, 100), mk_plan("a100-80g", 2, 190),
                                         mk_plan("a100-80g", 4, 360)};
    cs.allocate(0, "a100-80g", {0, {{0, j0_gpus}}});
    job_view j0;
    j0.id = 0;
    j0.submit_s = 0;
    j0.plans = &plans;
    j0.total_tokens = 1e9;
    j0.progress = 0.1;
    j0.running = true;
    j0.current = &plans[j0_gpus == 4 ? 2 : 1];
    j0.alloc = cs.holding(0);
    j0.run_started_s = run_started;
    j0.launches = launches;
    j0.restart_s = restart_s;
    job_view j1;
    j1.id = 1;
    j1.submit_s = 610;
    j1.plans = &plans;
    j1.total_tokens = 1e9;
    j1.restart_s = restart_s;
    const std::vector<job_view> v{j0, j1};
    sia_scheduler s{o};
    return s.schedule({now, &cs, v});
}

bool reconfigured_to_two_plus_two(const sched_decisions& d) {
    if (d.preempt != std::vector<int>{0} || d.start.size() != 2) return false;
    for (const auto& st : d.start)
        if (st.alloc.gpus() != 2) return false;
    return (d.start[0].job == 0 && d.start[1].job == 1) || (d.start[0].job == 1 && d.start[1].job == 0);
}
}  // namespace

TEST_CASE("sia: restart lock, a job (re)started in round k keeps its configuration until its launch is done") {
    // sia-simulator (37c68be) sia.py keeps jobs whose checkpoint-restore countdown (rescale_time) is running on
    // their configuration. Node: 4 A100, plans 1/2/4 GPUs at 100/190/360 tok/s, normalised by 100 and raised to
    // p = -0.5: 1, 0.7255, 0.5270; lambda 1.1; restart penalty delta = 30 s (Sia's default here); no growth limit.
    // Job 0 was restarted at round k = 600 s on 4 GPUs (its 2nd launch), restart cost 100 s: locked until 700 s.
    // Job 1 arrived at 610 s and waits.
    // Unlocked at time t, Sia compares (restart factor r = (t - 1 x 30) / (t + 30) for job 0, age t):
    //   job 0 stays on 4, job 1 waits:       0.5270 + 1.1                 = 1.627
    //   both on 2 GPUs (job 0 restarts):     (1.9 r)^-0.5 + 0.7255
    //     t = 660: r = 630/690 = 0.9130 -> 0.7592 + 0.7255 = 1.485 < 1.627: re-allocate
    //     t = 720: r = 690/750 = 0.9200 -> 0.7564 + 0.7255 = 1.482 < 1.627: re-allocate
    //   (job 0 on 1 + job 1 on 2: >= 1.03 + 0.7255 = 1.76, and the other mixes are worse still)
    sia_policy_options o;
    o.growth = 0;
    SECTION("round k+1 (660 s): still restoring, kept; round k+2 (720 s): lock over, both on 2 GPUs") {
        const auto k1 = sia_round_with_a_running_job(o, 660, 600, 2, 100);
        CHECK(k1.preempt.empty());
        CHECK(k1.start.empty());  // job 1 waits: no GPU is free
        CHECK(reconfigured_to_two_plus_two(sia_round_with_a_running_job(o, 720, 600, 2, 100)));
        // The countdown runs out at 700 s exactly (rescale_time > 0 is the artifact's test): free again there.
        CHECK(reconfigured_to_two_plus_two(sia_round_with_a_running_job(o, 700, 600, 2, 100)));
    }
    SECTION("without the lock the same round k+1 re-allocates") {
        o.restart_lock = false;
        CHECK(reconfigured_to_two_plus_two(sia_round_with_a_running_job(o, 660, 600, 2, 100)));
    }
    SECTION("a first launch is locked for the start-up cost, not the restart cost") {
        // First launch at 600 s: start-up 30 s (the default, policy_options_for passes the simulator's) -> free at
        // 660 s although restart_s = 100 (r = 660/690 = 0.9565 for job 0 with no restarts: 0.7418 + 0.7255 = 1.467).
        CHECK(reconfigured_to_two_plus_two(sia_round_with_a_running_job(o, 660, 600, 1, 100)));
        // Start-up 90 s: still starting at 660 s, kept.
        o.startup_s = 90;
        const auto d = sia_round_with_a_running_job(o, 660, 600, 1, 10);
        CHECK(d.preempt.empty());
        CHECK(d.start.empty());
    }
    SECTION("a locked job on part of a node leaves the rest of that node to the ILP") {
        // Job 0 holds 2 of the node's 4 GPUs and is locked (660 < 600 + 100). The ILP sees 2 GPUs on 1 node (a
        // whole-node count of 0 with 2 GPUs would be an invalid program); job 1's choice among them: 2 GPUs
        // (0.7255) beats 1 (1.0) and waiting (1.1).
        const auto d = sia_round_with_a_running_job(o, 660, 600, 2, 100, 2);
        CHECK(d.preempt.empty());
        REQUIRE(d.start.size() == 1);
        CHECK(d.start[0].job == 1);
        CHECK(d.start[0].alloc.gpus() == 2);
    }
}

TEST_CASE("sia: a job stopped for a start the placement cannot realise keeps running") {
    // 2 nodes x 4 A100. Running: job 0 on node 0 (2 GPUs; its plans 1 GPU at 100 and 2 at 150 tok/s, so its term
    // on 2 is 1.5^-.5 = 0.8165), jobs 1 and 2 on node 1 (2 GPUs each, their only plan: term 1). Waiting: job 3, 2
    // GPUs at 100 or 4 GPUs (tensor parallel 4) at 400 tok/s (terms 1 and 0.5). Lambda 1.1. Best program: stop job
    // 1 or 2 (equal) and run job 3 on 4: 0.8165 + 1 + 1.1 + 0.5 = 3.4165, against 3.8165 with job 3 on the 2 free
    // GPUs of node 0 and 3.6 with job 0 stopped. The GPUs it frees are on node 1, so 2 + 2 are free, and 4 GPUs
    // in one tensor-parallel group fit on no node: job 3 cannot start, and the stopped job keeps running.
    // With re-solves off that is the round's answer. With them on (the default), the 4-GPU configuration is
    // excluded and the program solved again: job 3 on the 2 free GPUs of node 0 (3.8165) beats leaving it waiting
    // (0.8165 + 1 + 1 + 1.1 = 3.9165), and stopping job 1 or 2 for it gains nothing, so job 3 starts there.
    const auto spec = mk_cluster({{"a", "a100-80g", 4, 2}});
    cluster_state cs(spec);
    static const std::vector<plan> p0{mk_plan("a100-80g", 1, 100), mk_plan("a100-80g", 2, 150)};
    static const std::vector<plan> p12{mk_plan("a100-80g", 2, 100)};
    static const std::vector<plan> p3{mk_plan("a100-80g", 2, 100), mk_plan("a100-80g", 4, 400, 4)};
    cs.allocate(0, "a100-80g", {0, {{0, 2}}});
    cs.allocate(1, "a100-80g", {0, {{1, 2}}});
    cs.allocate(2, "a100-80g", {0, {{1, 2}}});
    std::vector<job_view> v(4);
    for (int k = 0; k < 4; ++k) {
        auto& j = v[static_cast<std::size_t>(k)];
        j.id = k;
        j.plans = k == 0 ? &p0 : k == 3 ? &p3 : &p12;
        j.total_tokens = 1e9;
        j.restart_s = 30;
        if (k == 3) {
            j.submit_s = 600;
            continue;
        }
        j.running = true;
        j.current = &j.plans->back();
        j.alloc = cs.holding(k);
        j.run_started_s = 0;
        j.launches = 1;
    }
    sia_policy_options o;
    o.growth = 0;
    o.resolves = 0;
    sia_scheduler s{o};
    const auto d = s.schedule({660, &cs, v});
    CHECK(d.preempt.empty());
    CHECK(d.start.empty());
    CHECK(s.solver_effort().solves == 1);

    o.resolves = 2;
    sia_scheduler again{o};
    const auto e = again.schedule({660, &cs, v});
    CHECK(e.preempt.empty());
    REQUIRE(e.start.size() == 1);
    CHECK(e.start[0].job == 3);
    CHECK(e.start[0].p.gpus == 2);
    REQUIRE(e.start[0].alloc.parts.size() == 1);
    CHECK(e.start[0].alloc.parts[0].node == 0);
    CHECK(again.solver_effort().solves == 2);
    o.resolves = -1;
    CHECK_THROWS_WITH(sia_scheduler{o}, Catch::Contains("options.resolves=-1"));
}
#endif  // without GLPK (never in scripts/setup.sh's builds) there is nothing here to test

#ifdef FRENZY_HAS_GLPK
TEST_CASE("Gavel's round has a lower bound: 1 ms rounds ran for minutes (issue 28)") {
    CHECK_THROWS_WITH(gavel_scheduler(gavel_options{.round_s = 0.001}),
                      Catch::Matchers::Contains("gavel_options.round_s=0.001 must be in [10, 1000000]"));
    CHECK_THROWS_WITH(gavel_scheduler(gavel_options{.round_s = std::nan("")}), Catch::Matchers::Contains("must be a finite number"));
    CHECK(gavel_scheduler(gavel_options{.round_s = 10}).round_s() == 10);
}
#endif
