// HAS: hand-checked scenarios with exact JCTs (derivations in comments), plus placement and queue-order units.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "fixtures.hpp"
#include "frenzy/sched/has.hpp"
#include "frenzy/sim/simulator.hpp"

using namespace frenzy;
using namespace frenzy_test;

namespace {
has_options hopts(bool backfill = true) {
    has_options h;
    h.startup_s = 10;
    h.backfill = backfill;
    return h;
}
double jct(const sim_result& r, const std::string& id) {
    for (const auto& j : r.jobs)
        if (j.job_id == id) return j.jct();
    FAIL("no job " << id);
    return 0;
}
}  // namespace

TEST_CASE("HAS: shortest remaining GPU-time first, head reservation and backfill (exact JCTs)") {
    // One node of 4 A100. Class 1: 4 GPUs at 100 tok/s; class 4: 2 GPUs at 100 tok/s. Start-up 10 s.
    const auto cluster = mk_cluster({{"a", "a100-80g", 4, 1}});
    const auto prov = table_provider({{1, {mk_plan("a100-80g", 4, 100)}}, {4, {mk_plan("a100-80g", 2, 100)}}});
    const std::vector<trace_job> trace{
        mk_job("J0", 0, 4, 9000),    // 0 -> 10 + 90 = 100 on 2 GPUs
        mk_job("J1", 1, 1, 100),     // head: needs 4, only 2 free -> reserved at t=100; runs 100 -> 111
        mk_job("J2", 2, 4, 1000),    // ends 2 + 10 + 10 = 22 <= 100: backfilled
        mk_job("J3", 30, 4, 10000),  // would end 30 + 110 = 140 > 100 and no spare GPUs at 100: must wait
        mk_job("J4", 31, 4, 5000),   // ends 31 + 60 = 91 <= 100: backfilled past J3
    };
    SECTION("with backfilling") {
        auto r = simulate(cluster, trace, prov, has_scheduler<>(hopts(true)), opts());
        CHECK(r.metrics.completed == 5);
        CHECK(jct(r, "J0") == Approx(100).epsilon(eps));
        CHECK(jct(r, "J1") == Approx(110).epsilon(eps));  // 100 + 10 + 1 - 1
        CHECK(jct(r, "J2") == Approx(20).epsilon(eps));
        CHECK(jct(r, "J3") == Approx(191).epsilon(eps));  // starts 111 after J1: 111 + 110 - 30
        CHECK(jct(r, "J4") == Approx(60).epsilon(eps));
    }
    SECTION("without backfilling nothing passes the waiting head") {
        auto r = simulate(cluster, trace, prov, has_scheduler<>(hopts(false)), opts());
        CHECK(jct(r, "J1") == Approx(110).epsilon(eps));
        CHECK(jct(r, "J2") == Approx(129).epsilon(eps));  // 111 -> 131
        CHECK(jct(r, "J4") == Approx(140).epsilon(eps));  // 111 -> 171 (100 gpu-s < J3's 200)
        CHECK(jct(r, "J3") == Approx(211).epsilon(eps));  // 131 -> 241
    }
}

TEST_CASE("HAS: waits for a faster GPU type when that finishes earlier than starting now on a slower one") {
    // 4 A100 + 4 RTX 3090; each job runs at 400 tok/s on one A100 or 100 tok/s on one 3090.
    const auto cluster = mk_cluster({{"a", "a100-80g", 4, 1}, {"r", "rtx-3090", 4, 1}});
    const auto prov = table_provider({{5, {mk_plan("a100-80g", 1, 400), mk_plan("rtx-3090", 1, 100)}}});
    std::vector<trace_job> trace;
    for (int i = 0; i < 5; ++i) trace.push_back(mk_job("J" + std::to_string(i), 0, 5, 4000));
    auto r = simulate(cluster, trace, prov, has_scheduler<>(hopts()), opts());
    // J0..J3: A100, 10 + 10 = 20. J4: 3090 now would end at 10 + 40 = 50; the A100s free at 20 -> 20 + 20 = 40.
    for (int i = 0; i < 4; ++i) CHECK(jct(r, "J" + std::to_string(i)) == Approx(20).epsilon(eps));
    CHECK(jct(r, "J4") == Approx(40).epsilon(eps));
    CHECK(r.jobs[4].gpu == "a100-80g");
    // Nine jobs: J4..J7 reserve the second A100 wave (20 -> 40); J8's earliest A100 slot is then 40 -> 60, while a
    // 3090 now ends at 50, so J8 alone goes to a 3090.
    for (int i = 5; i < 9; ++i) trace.push_back(mk_job("J" + std::to_string(i), 0, 5, 4000));
    r = simulate(cluster, trace, prov, has_scheduler<>(hopts()), opts());
    int on3090 = 0;
    for (const auto& j : r.jobs) on3090 += j.gpu == "rtx-3090";
    CHECK(on3090 == 1);
    CHECK(r.metrics.makespan_s == Approx(50).epsilon(eps));
}

TEST_CASE("best_fit_placement: exact, tightest, then spread keeping tp groups in a node") {
    const auto cluster = mk_cluster({{"a", "a100-80g", 8, 3}});
    cluster_state cs(cluster);
    best_fit_placement bf;
    std::vector<int> free{3, 5, 8};
    auto a = bf.place(cs, free, {0, 5, 1});
    REQUIRE(a);
    CHECK(a->parts == std::vector<node_share>{{1, 5}});  // exact match
    a = bf.place(cs, free, {0, 2, 1});
    REQUIRE(a);
    CHECK(a->parts == std::vector<node_share>{{0, 2}});  // tightest: node 0 leaves 1
    free = {6, 6, 6};
    a = bf.place(cs, free, {0, 12, 4});  // no node has 12: spread, 4 per node (tp=4 groups stay whole)
    REQUIRE(a);
    CHECK(a->gpus() == 12);
    for (const auto& p : a->parts) CHECK(p.gpus % 4 == 0);
    free = {3, 3, 3};
    CHECK_FALSE(bf.place(cs, free, {0, 8, 4}));  // 9 free, but no node holds a whole tp=4 group
    a = bf.place(cs, free, {0, 4, 2});           // one tp=2 group on each of two nodes
    REQUIRE(a);
    CHECK(a->parts == std::vector<node_share>{{0, 2}, {1, 2}});
}

TEST_CASE("shortest_remaining_first ages waiting jobs") {
    shortest_remaining_first q{.aging_s = 100};
    job_view j;
    j.submit_s = 0;
    CHECK(q.key(j, 1000, 0) == Approx(1000));
    CHECK(q.key(j, 1000, 100) == Approx(500));  // waited aging_s: counts as half
    CHECK(q.key(j, 1000, 300) == Approx(250));
}

namespace {
struct not_a_placement {
    int place(int) const { return 0; }
};
struct not_an_order {
    double key(const job_view&) const { return 0; }
};
struct missing_round {
    sched_decisions schedule(const sched_context&) { return {}; }
    std::string_view name() const { return "x"; }
    bool event_driven() const { return true; }
};
}  // namespace

TEST_CASE("policy concepts accept the policies and reject look-alikes") {
    STATIC_REQUIRE(PlacementPolicy<best_fit_placement>);
    STATIC_REQUIRE_FALSE(PlacementPolicy<not_a_placement>);
    STATIC_REQUIRE(QueueOrder<shortest_remaining_first>);
    STATIC_REQUIRE(QueueOrder<arrival_order>);
    STATIC_REQUIRE_FALSE(QueueOrder<not_an_order>);
    STATIC_REQUIRE(Scheduler<has_scheduler<best_fit_placement, arrival_order>>);
    STATIC_REQUIRE_FALSE(Scheduler<missing_round>);
    STATIC_REQUIRE_FALSE(Scheduler<int>);
}

TEST_CASE("scheduler options are checked: NaN and out-of-range knobs name the field (issue 28)") {
    has_options o;
    o.efficiency_slack = std::nan("");
    CHECK_THROWS_WITH(has_scheduler<>(o), Catch::Matchers::Contains("has_options.efficiency_slack") &&
                                              Catch::Matchers::Contains("must be a finite number"));
    o = {};
    o.max_share = 1.5;  // a share of a type's GPUs
    CHECK_THROWS_WITH(has_scheduler<>(o), Catch::Matchers::Contains("has_options.max_share=1.5 must be in [0, 1]"));
    o = {};
    o.equi_share = -1;
    CHECK_THROWS_WITH(has_scheduler<>(o), Catch::Matchers::Contains("has_options.equi_share=-1"));
    CHECK_NOTHROW(has_scheduler<>(has_options{}));
}

TEST_CASE("sorted_on_demand reads in std::sort's order however far it is read") {
    // HAS's queue (has.hpp order_buf_): (key, job index) pairs, distinct because the indices are. The reference is
    // std::sort of the same pairs; keys drawn from a few values so that equal keys are frequent (then the index
    // decides, as in the queue). Exact equality: the same items in the same order.
    std::mt19937_64 rng(7);
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{17}, std::size_t{500}}) {
        frenzy::detail::sorted_on_demand<std::pair<double, std::size_t>> q;
        std::vector<std::pair<double, std::size_t>> ref;
        for (int round = 0; round < 2; ++round) {  // reused, as HAS reuses it at every decision
            q.clear();
            ref.clear();
            for (std::size_t i = 0; i < n; ++i) {
                const std::pair<double, std::size_t> item{static_cast<double>(rng() % 7) * 0.5, i};
                q.push_back(item);
                ref.push_back(item);
            }
            q.ready();
            std::sort(ref.begin(), ref.end());
            REQUIRE(q.size() == n);
            const std::size_t part = n / 3;  // a walk that stops early, then one that reads all (preempt_for_waiting)
            for (std::size_t k = 0; k < part; ++k) REQUIRE(q[k] == ref[k]);
            for (std::size_t k = 0; k < n; ++k) REQUIRE(q[k] == ref[k]);
            REQUIRE(q.size() == n);
        }
    }
}

TEST_CASE("HAS decides the same from a host's packed plan rates as from the plans") {
    // job_view::plan_rates (sched/scheduler.hpp): what HAS reads of every plan at each decision, packed by the host
    // (the simulator does). The decisions must be those HAS takes reading the plans themselves: the same jobs
    // started on the same plans and GPUs, in the same order. 40 waiting jobs with 1-16 GPU plans on two types, 8
    // running jobs holding part of the cluster, so that some start, some reserve and some wait.
    const auto c = mk_cluster({{"a", "a100-80g", 8, 3}, {"v", "v100-32g", 8, 2}});
    std::mt19937_64 rng(11);
    std::vector<std::vector<plan>> plans(48);
    std::vector<std::vector<int>> types(48);
    std::vector<std::vector<plan_rate>> rates(48);
    cluster_state cs(c);
    for (std::size_t k = 0; k < plans.size(); ++k) {
        for (int t = 0; t < 2; ++t)
            for (int g = 1 << (rng() % 3); g <= 16; g *= 2)
                plans[k].push_back(mk_plan(t == 0 ? "a100-80g" : "v100-32g", g,
                                           static_cast<double>(1000 + rng() % 9000) * g * (t == 0 ? 2.0 : 1.0), g >= 2 ? 2 : 1));
        for (const auto& p : plans[k]) {
            types[k].push_back(cs.type_index(p.gpu));
            rates[k].push_back(rate_of(p));
        }
    }
    std::vector<job_view> plain(plans.size()), packed;
    for (std::size_t k = 0; k < plans.size(); ++k) {
        auto& v = plain[k];
        v.id = static_cast<int>(k);
        v.submit_s = static_cast<double>(k);
        v.plans = &plans[k];
        v.plan_types = types[k];
        v.total_tokens = 1e9 * static_cast<double>(1 + rng() % 50);
    }
    for (std::size_t k = 0; k < 8; ++k) {  // running: holding one plan's GPUs each, where they place
        const auto& p = plans[k].front();
        auto free = cs.free_vector();
        const auto a = best_fit_placement{}.place(cs, free, {cs.type_index(p.gpu), p.gpus, static_cast<int>(p.parallel.tp)});
        if (!a) continue;
        cs.allocate(static_cast<int>(k), p.gpu, *a);
        plain[k].running = true;
        plain[k].current = &p;
        plain[k].alloc = cs.holding(static_cast<int>(k));
        plain[k].predicted_end_s = 500.0 + 100.0 * static_cast<double>(k);
    }
    packed = plain;
    for (std::size_t k = 0; k < plans.size(); ++k) packed[k].plan_rates = rates[k];
    has h1, h2;
    const auto a = h1.schedule({.now = 60, .cluster = &cs, .jobs = plain});
    const auto b = h2.schedule({.now = 60, .cluster = &cs, .jobs = packed});
    REQUIRE(a.start.size() == b.start.size());
    CHECK(!a.start.empty());
    for (std::size_t i = 0; i < a.start.size(); ++i) {
        CHECK(a.start[i].job == b.start[i].job);
        CHECK(a.start[i].p == b.start[i].p);
        CHECK(a.start[i].alloc == b.start[i].alloc);
    }
    CHECK(a.preempt == b.preempt);
}
