// Every baseline takes its placement as a policy: the default (best fit) is today's behaviour, and a swapped one
// changes where jobs go and nothing else. Hand scenario: 2 nodes x 4 A100, all free, one job of 1 GPU. Best fit
// takes the tightest node, the first on a tie: node 0. The "last fit" placement below takes the last node with room:
// node 1.
#include <catch2/catch.hpp>

#include <optional>
#include <span>
#include <vector>

#include "fixtures.hpp"
#include "frenzy/sched/fcfs.hpp"
#include "frenzy/sched/has.hpp"
#include "frenzy/sched/tiresias.hpp"
#ifdef FRENZY_HAS_GLPK
#include "frenzy/sched/gavel.hpp"
#include "frenzy/sched/sia.hpp"
#endif

using namespace frenzy;
using namespace frenzy_test;

namespace {
/// The last node (in cluster order) with room for the whole request on one node.
struct last_fit_placement {
    std::optional<allocation> place(const cluster_state& c, std::span<const int> free, const placement_request& r) const {
        const auto& nodes = c.nodes_of_type(r.type);
        for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
            if (free[static_cast<std::size_t>(*it)] >= r.gpus) return allocation{r.type, {{*it, r.gpus}}};
        return std::nullopt;
    }
};

struct scenario {
    cluster_spec spec = mk_cluster({{"a", "a100-80g", 4, 2}});
    cluster_state cs{spec};
    std::vector<plan> plans{mk_plan("a100-80g", 1, 100)};
    std::vector<job_view> views;
    scenario() {
        job_view j;
        j.id = 0;
        j.plans = &plans;
        j.total_tokens = 1e6;
        j.requested_gpus = 1;
        views.push_back(j);
    }
    /// The node the first start decision of `s` goes to (-1 when it starts nothing).
    template <class S>
    int node_of(S s) {
        const auto d = s.schedule({0, &cs, views});
        return d.start.empty() ? -1 : d.start[0].alloc.parts.at(0).node;
    }
};
}  // namespace

TEST_CASE("placement swap: fcfs") {
    scenario sc;
    CHECK(sc.node_of(fcfs_scheduler{}) == 0);
    CHECK(sc.node_of(fcfs_scheduler::with_placement<last_fit_placement>{}) == 1);
}

TEST_CASE("placement swap: tiresias") {
    scenario sc;
    CHECK(sc.node_of(tiresias_scheduler{}) == 0);
    CHECK(sc.node_of(tiresias_scheduler::with_placement<last_fit_placement>{}) == 1);
}

#ifdef FRENZY_HAS_GLPK
TEST_CASE("placement swap: gavel") {
    scenario sc;
    CHECK(sc.node_of(gavel_scheduler{}) == 0);
    CHECK(sc.node_of(gavel_scheduler::with_placement<last_fit_placement>{}) == 1);
}

TEST_CASE("placement swap: sia") {
    scenario sc;
    CHECK(sc.node_of(sia_scheduler{}) == 0);
    CHECK(sc.node_of(sia_scheduler::with_placement<last_fit_placement>{}) == 1);
}
#endif

TEST_CASE("placement swap: has") {
    scenario sc;
    CHECK(sc.node_of(has{}) == 0);
    CHECK(sc.node_of(has::with_placement<last_fit_placement>{}) == 1);
}
