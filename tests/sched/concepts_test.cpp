// Negative concept tests: each sched concept rejects a type that lacks a member or returns the wrong type, and
// accepts the library's own models (so a concept that accepted everything, or nothing, fails here).
#include <catch2/catch.hpp>

#include <optional>
#include <span>
#include <string_view>

#include "frenzy/sched/fcfs.hpp"
#include "frenzy/sched/has.hpp"
#include "frenzy/sched/placement.hpp"
#include "frenzy/sched/scheduler.hpp"
#include "frenzy/sched/tiresias.hpp"

using namespace frenzy;

namespace {
struct sched_ok {
    sched_decisions schedule(const sched_context&) { return {}; }
    std::string_view name() const { return "ok"; }
    double round_s() const { return 0; }
    bool event_driven() const { return true; }
};
struct sched_no_schedule {
    std::string_view name() const { return "x"; }
    double round_s() const { return 0; }
    bool event_driven() const { return true; }
};
struct sched_wrong_return {
    int schedule(const sched_context&) { return 0; }
    std::string_view name() const { return "x"; }
    double round_s() const { return 0; }
    bool event_driven() const { return true; }
};
struct sched_no_name {
    sched_decisions schedule(const sched_context&) { return {}; }
    double round_s() const { return 0; }
    bool event_driven() const { return true; }
};
struct sched_no_round {
    sched_decisions schedule(const sched_context&) { return {}; }
    std::string_view name() const { return "x"; }
    bool event_driven() const { return true; }
};
struct sched_no_event_driven {
    sched_decisions schedule(const sched_context&) { return {}; }
    std::string_view name() const { return "x"; }
    double round_s() const { return 0; }
};
struct sched_name_not_text {
    sched_decisions schedule(const sched_context&) { return {}; }
    int name() const { return 1; }
    double round_s() const { return 0; }
    bool event_driven() const { return true; }
};

struct place_ok {
    std::optional<allocation> place(const cluster_state&, std::span<const int>, const placement_request&) const { return {}; }
};
struct place_wrong_return {  // an allocation that cannot say "no room"
    allocation place(const cluster_state&, std::span<const int>, const placement_request&) const { return {}; }
};
struct place_not_const {  // placement is called on a const policy
    std::optional<allocation> place(const cluster_state&, std::span<const int>, const placement_request&) { return {}; }
};
struct place_no_member {};

struct order_ok {
    double key(const job_view&, double, double) const { return 0; }
};
struct order_wrong_args {
    double key(const job_view&) const { return 0; }
};
struct order_not_number {
    std::string_view key(const job_view&, double, double) const { return "a"; }
};
struct order_no_member {};
}  // namespace

TEST_CASE("concepts: Scheduler rejects a policy missing any of its four members") {
    STATIC_REQUIRE(Scheduler<sched_ok>);
    STATIC_REQUIRE_FALSE(Scheduler<sched_no_schedule>);
    STATIC_REQUIRE_FALSE(Scheduler<sched_wrong_return>);
    STATIC_REQUIRE_FALSE(Scheduler<sched_no_name>);
    STATIC_REQUIRE_FALSE(Scheduler<sched_no_round>);
    STATIC_REQUIRE_FALSE(Scheduler<sched_no_event_driven>);
    STATIC_REQUIRE_FALSE(Scheduler<sched_name_not_text>);
    STATIC_REQUIRE_FALSE(Scheduler<int>);
    STATIC_REQUIRE(Scheduler<has>);
    STATIC_REQUIRE(Scheduler<fcfs_scheduler>);
    STATIC_REQUIRE(Scheduler<tiresias_scheduler>);
    STATIC_REQUIRE(Scheduler<any_scheduler>);
}

TEST_CASE("concepts: PlacementPolicy rejects a wrong return type, a non-const place and a missing member") {
    STATIC_REQUIRE(PlacementPolicy<place_ok>);
    STATIC_REQUIRE(PlacementPolicy<best_fit_placement>);
    STATIC_REQUIRE_FALSE(PlacementPolicy<place_wrong_return>);
    STATIC_REQUIRE_FALSE(PlacementPolicy<place_not_const>);
    STATIC_REQUIRE_FALSE(PlacementPolicy<place_no_member>);
}

TEST_CASE("concepts: QueueOrder rejects wrong arguments, a non-numeric key and a missing member") {
    STATIC_REQUIRE(QueueOrder<order_ok>);
    STATIC_REQUIRE(QueueOrder<shortest_remaining_first>);
    STATIC_REQUIRE(QueueOrder<arrival_order>);
    STATIC_REQUIRE_FALSE(QueueOrder<order_wrong_args>);
    STATIC_REQUIRE_FALSE(QueueOrder<order_not_number>);
    STATIC_REQUIRE_FALSE(QueueOrder<order_no_member>);
}

TEST_CASE("concepts: the policy aliases swap one policy and keep the other") {
    STATIC_REQUIRE(std::is_same_v<has, has_scheduler<best_fit_placement, shortest_remaining_first>>);
    STATIC_REQUIRE(std::is_same_v<has::with_placement<place_ok>, has_scheduler<place_ok, shortest_remaining_first>>);
    STATIC_REQUIRE(std::is_same_v<has::with_queue_order<arrival_order>, has_scheduler<best_fit_placement, arrival_order>>);
    STATIC_REQUIRE(std::is_same_v<fcfs_scheduler::with_placement<place_ok>, basic_fcfs_scheduler<place_ok>>);
    STATIC_REQUIRE(std::is_same_v<tiresias_scheduler::with_placement<place_ok>, basic_tiresias_scheduler<place_ok>>);
}
