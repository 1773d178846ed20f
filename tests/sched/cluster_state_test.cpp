// Orchestrator: allocation accounting, invariant violations refused, node failure and recovery.
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "frenzy/sched/cluster_state.hpp"

using namespace frenzy;
using namespace frenzy_test;

namespace {
struct recording_backend : cluster_backend {
    std::vector<std::string> calls;
    void launch(int job, const job_spec& spec, const plan& p, const allocation& a) override {
        calls.push_back("launch " + std::to_string(job) + " " + spec.name + " " + p.gpu + " " + std::to_string(a.gpus()));
    }
    void stop(int job) override { calls.push_back("stop " + std::to_string(job)); }
};
}  // namespace

TEST_CASE("cluster_state: expands node groups and keeps per-type accounting") {
    cluster_state cs(mk_cluster({{"a", "a100-80g", 8, 2}, {"v", "v100-32g", 4, 3}, {"a2", "a100-80g", 4, 1}}));
    REQUIRE(cs.types() == std::vector<std::string>{"a100-80g", "v100-32g"});
    CHECK(cs.nodes().size() == 6);
    CHECK(cs.total_gpus(0) == 20);
    CHECK(cs.total_gpus(1) == 12);
    CHECK(cs.gpus_per_node(0) == 8);
    CHECK(cs.nodes_of_type(0) == std::vector<int>{0, 1, 5});
    cs.allocate(7, "a100-80g", {0, {{0, 8}, {5, 2}}});
    CHECK(cs.free_gpus(0) == 10);
    CHECK(cs.nodes()[5].free == 2);
    CHECK(cs.check_invariants().empty());
    auto a = cs.release(7);
    CHECK(a.gpus() == 10);
    CHECK(cs.free_gpus(0) == 20);
}

TEST_CASE("cluster_state: refuses to hold a GPU twice, wrong types, down nodes") {
    cluster_state cs(mk_cluster({{"a", "a100-80g", 4, 2}, {"v", "v100-32g", 4, 1}}));
    cs.allocate(1, "a100-80g", {0, {{0, 3}}});
    CHECK_THROWS_WITH(cs.allocate(2, "a100-80g", {0, {{0, 2}}}), Catch::Contains("which has 1 free"));
    CHECK_THROWS_WITH(cs.allocate(1, "a100-80g", {0, {{1, 1}}}), Catch::Contains("already holds"));
    CHECK_THROWS_WITH(cs.allocate(3, "a100-80g", {0, {{2, 1}}}), Catch::Contains("of type v100-32g"));
    CHECK_THROWS_WITH(cs.allocate(3, "v100-32g", {0, {{2, 1}}}), Catch::Contains("does not match"));
    CHECK_THROWS_WITH(cs.allocate(3, "h100-80g", {0, {{1, 1}}}), Catch::Contains("does not have"));
    CHECK_THROWS_WITH(cs.release(9), Catch::Contains("holds no GPUs"));
    CHECK(cs.free_gpus(0) == 5);  // failed calls changed nothing
    CHECK(cs.check_invariants().empty());
}

TEST_CASE("cluster_state: node failure takes its GPUs away until recovery") {
    cluster_state cs(mk_cluster({{"a", "a100-80g", 4, 2}}));
    cs.allocate(1, "a100-80g", {0, {{0, 2}, {1, 2}}});
    cs.allocate(2, "a100-80g", {0, {{1, 2}}});
    auto hit = cs.fail(1);
    CHECK(hit == std::vector<int>{1, 2});
    CHECK(cs.free_gpus(0) == 2);  // node 0's two free GPUs
    CHECK_THROWS(cs.allocate(3, "a100-80g", {0, {{1, 1}}}));
    cs.release(2);
    CHECK(cs.free_gpus(0) == 2);  // released GPUs of a down node stay unavailable
    cs.recover(1);
    CHECK(cs.free_gpus(0) == 4);  // node 1: 4 GPUs minus job 1's 2
    cs.release(1);
    CHECK(cs.free_gpus(0) == 8);
    CHECK(cs.check_invariants().empty());
}

TEST_CASE("orchestrator: drives the backend and refuses plans that do not fit") {
    recording_backend be;
    orchestrator o(mk_cluster({{"a", "a100-80g", 4, 1}}), be);
    auto p = mk_plan("a100-80g", 2, 100);
    job_spec spec;
    spec.name = "llama-7b";
    o.start(1, spec, p, {0, {{0, 2}}});
    CHECK_THROWS_WITH(o.start(2, spec, p, {0, {{0, 3}}}), Catch::Contains("allocation has 3"));
    plan big = p;
    big.required = bytes{90e9};  // what the fit rule compares (memory/fit.hpp)
    big.capacity = bytes{80e9};
    CHECK_THROWS_WITH(o.start(2, spec, big, {0, {{0, 2}}}), Catch::Contains("does not fit"));
    o.adopt(3, p, {0, {{0, 2}}});  // a job the backend already runs: held, not launched again
    CHECK(o.state().free_gpus(0) == 0);
    o.finished(3);
    o.stop(1);
    CHECK(be.calls == std::vector<std::string>{"launch 1 llama-7b a100-80g 2", "stop 1"});
    CHECK(o.state().free_gpus(0) == 4);
}
