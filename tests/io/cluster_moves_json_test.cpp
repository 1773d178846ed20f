// The cluster file's "moves" object (hw/cluster.hpp move_costs, io/cluster_json.hpp): defaults for old files, a
// round trip through cluster_to_json, and bad values refused with the field named.
#include <catch2/catch.hpp>

#include "frenzy/io/cluster_json.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace cluster_moves_json_test {
std::string moves_error_of(const char* text) {
    try {
        cluster_from_json(nlohmann::json::parse(text));
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace cluster_moves_json_test

using namespace cluster_moves_json_test;

TEST_CASE("cluster moves: an old cluster file (no \"moves\") takes the documented defaults") {
    const auto c = cluster_from_json(nlohmann::json::parse(R"({"nodes": [{"gpu": "a100-80g", "count": 2}]})"));
    CHECK(c.moves.storage_GBps == 5);
    CHECK(c.moves.restart_s == 30);
    CHECK(c.moves.startup_s == 30);
    CHECK(c.moves.checkpoint_interval_s == 0);
    // a file that sets one field keeps the others' defaults
    const auto d = cluster_from_json(nlohmann::json::parse(R"({"nodes": [{"gpu": "t4"}], "moves": {"storage_GBps": 0.5}})"));
    CHECK(d.moves.storage_GBps == 0.5);
    CHECK(d.moves.restart_s == 30);
}

TEST_CASE("cluster moves: every field round-trips through cluster_to_json") {
    const auto c = cluster_from_json(nlohmann::json::parse(R"({
      "nodes": [{"name": "a", "gpu": "a100-80g", "gpus_per_node": 8, "count": 2, "network_GBps": 200}],
      "moves": {"storage_GBps": 12.5, "restart_s": 45, "startup_s": 90, "checkpoint_interval_s": 1800}})"));
    CHECK(c.moves == move_costs{12.5, 45, 90, 1800});
    const auto back = cluster_from_json(cluster_to_json(c));
    CHECK(back.moves == c.moves);
    CHECK(back.nodes == c.nodes);
    // the ADL pair
    move_costs m = nlohmann::json(c.moves).get<move_costs>();
    CHECK(m == c.moves);
}

TEST_CASE("cluster moves: bad values are refused, naming the field") {
    CHECK_THAT(moves_error_of(R"({"nodes": [{"gpu": "t4"}], "moves": {"storage_GBps": 0}})"), Contains("cluster.moves.storage_GBps"));
    CHECK_THAT(moves_error_of(R"({"nodes": [{"gpu": "t4"}], "moves": {"restart_s": -1}})"), Contains("cluster.moves.restart_s"));
    CHECK_THAT(moves_error_of(R"({"nodes": [{"gpu": "t4"}], "moves": {"startup_s": "soon"}})"), Contains("cluster.moves.startup_s"));
    CHECK_THAT(moves_error_of(R"({"nodes": [{"gpu": "t4"}], "moves": {"checkpoint_interval_s": 1e12}})"),
               Contains("cluster.moves.checkpoint_interval_s"));
    CHECK_THAT(moves_error_of(R"({"nodes": [{"gpu": "t4"}], "moves": {"storage_gbps": 5}})"), Contains("cluster.moves.storage_gbps") && Contains("not a known field"));
    CHECK_THAT(moves_error_of(R"({"nodes": [{"gpu": "t4"}], "moves": 5})"), Contains("cluster.moves"));
}
