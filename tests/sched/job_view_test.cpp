// make_job_view: the view a host gets from what it knows of a job (no host rebuilds job_view itself).
#include <catch2/catch.hpp>

#include <vector>

#include "fixtures.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/sched/scheduler.hpp"

using namespace frenzy;
using namespace frenzy_test;

TEST_CASE("make_job_view: a running job's allocation comes from the cluster and its end from its plan") {
    const auto spec = mk_cluster({{"a", "a100-80g", 4, 1}});
    cluster_state cs(spec);
    const std::vector<plan> plans{mk_plan("a100-80g", 2, 100), mk_plan("a100-80g", 4, 180)};
    const allocation a{0, {{0, 2}}};
    cs.allocate(7, "a100-80g", a);
    job_facts f;
    f.id = 7;
    f.submit_s = 5;
    f.plans = &plans;
    f.total_tokens = 10000;
    f.progress = 0.25;
    f.current = &plans[0];
    f.run_started_s = 100;
    f.launch_s = 30;
    // At t = 110 the launch is still being paid (until 130); then 0.75 x 10000 tokens at 100 tokens/s = 75 s: 205.
    const job_view v = make_job_view(f, cs, 110);
    CHECK(v.running);
    REQUIRE(v.alloc != nullptr);
    CHECK(v.alloc->gpus() == 2);
    CHECK(v.predicted_end_s == Approx(205).epsilon(1e-12));
    CHECK(v.executed_s == Approx(10).epsilon(1e-12));
    // At t = 150 (launch paid; progress as the host reports it, still 0.25): 150 + 75 = 225.
    CHECK(make_job_view(f, cs, 150).predicted_end_s == Approx(225).epsilon(1e-12));
}

TEST_CASE("make_job_view: a waiting job has no allocation, host and cluster disagreeing is an error") {
    const auto spec = mk_cluster({{"a", "a100-80g", 4, 1}});
    cluster_state cs(spec);
    const std::vector<plan> plans{mk_plan("a100-80g", 2, 100)};
    job_facts f;
    f.id = 3;
    f.plans = &plans;
    f.total_tokens = 1000;
    const job_view w = make_job_view(f, cs, 0);
    CHECK_FALSE(w.running);
    CHECK(w.alloc == nullptr);
    CHECK(w.plans == &plans);
    f.current = &plans[0];  // the host says it runs, the cluster says it holds nothing
    CHECK_THROWS_AS(make_job_view(f, cs, 0), error);
    f.plans = nullptr;
    CHECK_THROWS_AS(make_job_view(f, cs, 0), error);
}
