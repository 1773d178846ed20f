// HAS with pipelines over two GPU types (issue 27): the orchestrator holds one allocation component per stage group
// on its own type, HAS starts a waiting job on a mixed plan only when its best one-type option is to wait and the
// mixed plan ends it sooner (the wait included), and the simulator runs it at the pace of its slowest type. Every time
// below is derived by hand from the plans' tokens/s (binary fractions apart from the divisions, eps of fixtures).
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "frenzy/sched/has.hpp"
#include "frenzy/sim/simulator.hpp"

using namespace frenzy;
using namespace frenzy_test;

namespace has_mixed {

/// 1 node of 8 A100-80G (type 0, node 0) and 1 node of 8 V100-32G (type 1, node 1).
cluster_spec two_types() { return mk_cluster({{"a100", "a100-80g", 8, 1}, {"v100", "v100-32g", 8, 1}}); }

/// Stage group 0 on 4 A100s and group 1 on 4 V100s, at `tokens_per_s` for the whole job.
plan a100_v100(double tokens_per_s) {
    plan m;
    m.groups.resize(2);
    m.groups[0].gpu = "a100-80g";
    m.groups[0].gpus = 4;
    m.groups[0].stages = 1;
    m.groups[1].gpu = "v100-32g";
    m.groups[1].gpus = 4;
    m.groups[1].stages = 1;
    m.groups[1].first_stage = 1;
    m.parallel.tp = 1;
    m.parallel.dp = 4;
    m.parallel.pp = 2;
    m.tokens_per_s = tokens_per_s;
    set_group_totals(m);
    return m;
}

/// Job A runs on 4 of the 8 A100s until its predicted end at 10,010 s; job B (1e7 tokens) waits at t = 1 with
/// one-type plans 8 x A100 at 1,000 tokens/s and 8 x V100 at 300, and the mixed plans given.
struct waiting_b {
    cluster_state cs{two_types()};
    std::vector<plan> a_plans{mk_plan("a100-80g", 4, 1000)};
    std::vector<plan> b_plans{mk_plan("a100-80g", 8, 1000), mk_plan("v100-32g", 8, 300)};
    std::vector<plan> b_mixed;
    std::vector<plan> b_all;  // b_plans then b_mixed: job_view::plans
    std::vector<job_view> views;
    explicit waiting_b(std::vector<plan> mixed) : b_mixed(std::move(mixed)) {
        b_all = b_plans;
        b_all.insert(b_all.end(), b_mixed.begin(), b_mixed.end());
        cs.allocate(0, "a100-80g", allocation{0, {{0, 4}}});
        job_view a;
        a.id = 0;
        a.plans = &a_plans;
        a.total_tokens = 1e7;
        a.running = true;
        a.current = &a_plans[0];
        a.alloc = cs.holding(0);
        a.launches = 1;
        a.predicted_end_s = 10010;
        job_view b;
        b.id = 1;
        b.submit_s = 1;
        b.plans = &b_all;
        b.total_tokens = 1e7;
        views = {a, b};
    }
    sched_decisions decide() {
        has h;
        return h.schedule({1.0, &cs, views});
    }
};

}  // namespace has_mixed

TEST_CASE("cluster_state: a mixed allocation holds one component per stage group, each on its own type") {
    cluster_state cs(has_mixed::two_types());
    allocation a{0, {{0, 4}}};
    a.next.push_back({1, {{1, 4}}});
    CHECK(a.gpus() == 8);
    CHECK(a.nodes() == 2);
    REQUIRE(a.components().size() == 2);
    CHECK(a.components()[1].type == 1);
    // the types in pipeline order must be the components' types
    CHECK_THROWS_WITH(cs.allocate(7, std::vector<std::string_view>{"v100-32g", "a100-80g"}, a),
                      Catch::Contains("allocation type does not match plan GPU \"v100-32g\""));
    CHECK_THROWS_WITH(cs.allocate(7, "a100-80g", a), Catch::Contains("its allocation spans several"));
    cs.allocate(7, std::vector<std::string_view>{"a100-80g", "v100-32g"}, a);
    CHECK(cs.free_gpus(0) == 4);
    CHECK(cs.free_gpus(1) == 4);
    CHECK(cs.check_invariants().empty());
    // a failure of the V100 node hits the job through its second component; release gives back both
    CHECK(cs.fail(1) == std::vector<int>{7});
    cs.release(7);
    CHECK(cs.free_gpus(0) == 8);
    CHECK(cs.free_gpus(1) == 0);  // down: its GPUs stay unavailable
    cs.recover(1);
    CHECK(cs.free_gpus(1) == 8);
    CHECK(cs.check_invariants().empty());
}

TEST_CASE("HAS starts a job on a mixed plan when that ends it before waiting for one type would") {
    // B's options at t = 1 (HAS's own launch cost, 30 s): 8 x A100 from A's end, 10,010 + 30 + 1e7 / 1,000 = 20,040;
    // 8 x V100 now, 1 + 30 + 33,333.3 = 33,364.3; the mixed plan at 700 tokens/s now, 1 + 30 + 14,285.7 = 14,316.7.
    // Its GPU-seconds, 8 x 14,285.7 = 114,286, are within (1 + idle_slack 1) x the least one-type 8 x 10,000.
    has_mixed::waiting_b s({has_mixed::a100_v100(700)});
    const auto d = s.decide();
    REQUIRE(d.start.size() == 1);
    const auto& st = d.start[0];
    CHECK(st.job == 1);
    REQUIRE(st.p.mixed());
    CHECK(st.p == s.b_mixed[0]);
    const auto comps = st.alloc.components();
    REQUIRE(comps.size() == 2);
    CHECK(comps[0].type == 0);  // group 0 on the A100 node's free 4
    CHECK(comps[0].parts == std::vector<node_share>{{0, 4}});
    CHECK(comps[1].type == 1);
    CHECK(comps[1].parts == std::vector<node_share>{{1, 4}});
}

TEST_CASE("HAS keeps a job off its mixed plan when waiting for one type ends it sooner, or one type starts it now") {
    // at 400 tokens/s the mixed plan ends at 1 + 30 + 25,000 = 25,031 > 20,040: B reserves the A100s
    has_mixed::waiting_b slow({has_mixed::a100_v100(400)});
    CHECK(slow.decide().start.empty());
    // a mixed plan wider than its types hold free now (8 A100s: 4 are A's) is not started either
    auto wide = has_mixed::a100_v100(900);
    wide.groups[0].gpus = 8;
    set_group_totals(wide);
    has_mixed::waiting_b busy({wide});
    CHECK(busy.decide().start.empty());
    // when B's best one-type option starts now (A is gone: 8 x A100 end at 1 + 30 + 10,000), even a faster mixed
    // plan (2,000 tokens/s: 1 + 30 + 5,000) is not started: it would take a second type's GPUs from the queue
    has_mixed::waiting_b idle({has_mixed::a100_v100(2000)});
    idle.cs.release(0);
    idle.views.erase(idle.views.begin());
    const auto d = idle.decide();
    REQUIRE(d.start.size() == 1);
    CHECK_FALSE(d.start[0].p.mixed());
    CHECK(d.start[0].p.gpu == "a100-80g");
    CHECK(d.start[0].p.gpus == 8);
}

TEST_CASE("simulator: a mixed run is recorded on both types, at the pace of its plan, and its GPUs come back") {
    // A: 4 x A100 at 1,000 tokens/s, 1e7 tokens from t = 0: ends 10 + 10,000 = 10,010 (10 s start-up, fixtures).
    // B (t = 1): as in the HAS case, starts on the mixed plan at once: ends 1 + 10 + 1e7 / 700 = 14,296.714.
    // Without the mixed plan B waits for the A100s: 10,010 + 10 + 10,000 = 20,020.
    std::map<std::int64_t, std::vector<plan>> table{{1, {mk_plan("a100-80g", 4, 1000)}},
                                                    {2, {mk_plan("a100-80g", 8, 1000), mk_plan("v100-32g", 8, 300)}}};
    const std::vector<trace_job> trace{mk_job("A", 0, 1, 1e7), mk_job("B", 1, 2, 1e7)};
    auto provider = [&](bool mixed) -> plan_provider {
        return [table, mixed](const job_spec& j) {
            auto r = table_provider(table)(j);
            if (mixed && j.training.global_batch == 2) r.mixed = {has_mixed::a100_v100(700)};
            return r;
        };
    };
    sim_options o = opts();
    o.check_invariants = true;
    const auto with = simulate(has_mixed::two_types(), trace, provider(true), has{}, o);
    const auto& b = rec(with, "B");
    REQUIRE(b.runs.size() == 1);
    CHECK(b.runs[0].gpu == "a100-80g+v100-32g");
    CHECK(b.runs[0].gpus == 8);
    CHECK(b.runs[0].nodes == 2);
    CHECK(b.end_s == Approx(1 + 10 + 1e7 / 700).epsilon(eps));
    CHECK(rec(with, "A").end_s == Approx(10010).epsilon(eps));
    const auto without = simulate(has_mixed::two_types(), trace, provider(false), has{}, o);
    CHECK(rec(without, "B").end_s == Approx(20020).epsilon(eps));
    CHECK(rec(without, "B").runs[0].gpu == "a100-80g");
}
