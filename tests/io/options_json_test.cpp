// The options codec (io/options_json.hpp): plan_options from Python's frenzy.plan keywords as JSON, every key, the
// errors that name a key and its value, and the writer read back to the same options; "cost needs a price" is
// checked once, in plan/options.hpp check_prices, in the caller's words.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "frenzy/io/options_json.hpp"
#include "frenzy/plan/options.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {
std::string plan_options_error(const json& j) {
    try {
        plan_options_from_json(j);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("plan options from JSON: every key of frenzy.plan's keywords, omitted keys at their defaults") {
    const auto o = plan_options_from_json(json{{"objective", "gpu-hours"}, {"margin", 0.1}, {"max_gpus", 64},
                                               {"prices", {{"a100-80g", 2.5}}}, {"frameworks", {"megatron", "fsdp"}},
                                               {"tp_across_nodes", true}, {"whole_nodes", true}, {"pin_precision", true},
                                               {"framework_overlap", false}, {"mixed", true}});
    CHECK(o.objective == plan_objective::gpu_hours);
    CHECK(o.margin == 0.1);
    CHECK(o.max_gpus == 64);
    CHECK(o.price_per_gpu_hour == std::map<std::string, double>{{"a100-80g", 2.5}});
    REQUIRE(o.frameworks.size() == 2);
    CHECK(o.frameworks[0] == frameworks::megatron::handle);
    CHECK(o.frameworks[1] == frameworks::fsdp::handle);
    CHECK(o.allow_tp_across_nodes);
    CHECK(o.whole_node_billing);
    CHECK(o.pin_precision);
    CHECK(!o.framework_overlap);
    CHECK(o.mixed);
    const auto d = plan_options_from_json(json::object());
    CHECK(d.objective == plan_objective::time);
    CHECK(d.margin == default_margin);
    CHECK(d.framework_overlap);
    CHECK(d.max_mixed_stages == 16);
    CHECK(plan_options_from_json(json(nullptr)).max_gpus == 0);
    // "example": the built-in prices, as the CLI's --price example
    CHECK(plan_options_from_json(json{{"prices", "example"}}).price_per_gpu_hour.at("h100-80g") > 0);
}

TEST_CASE("plan options from JSON: each bad value is refused naming its key, in Python's words") {
    CHECK(plan_options_error({{"objective", "fast"}}) == "objective=\"fast\" is not one of: time | gpu-hours | cost");
    CHECK_THAT(plan_options_error({{"margin", 1.5}}), Contains("margin=1.500000 must be a fraction of GPU memory kept free"));
    CHECK(plan_options_error({{"max_gpus", -1}}) == "max_gpus=-1 must not be negative");
    CHECK(plan_options_error({{"max_gpus", 1.5}}) == "max_gpus=1.5 must be a whole number");
    CHECK(plan_options_error({{"prices", "cheap"}}) == "prices=\"cheap\" must be a dict {type: USD per GPU-hour} or \"example\"");
    CHECK(plan_options_error({{"prices", {{"a100-80g", "x"}}}}) == "prices[\"a100-80g\"]=\"x\" is not a number");
    CHECK_THAT(plan_options_error({{"prices", {{"a100-80g", -1}}}}), Contains("prices[\"a100-80g\"] must be a finite number of USD"));
    CHECK_THAT(plan_options_error({{"prices", {{"warp-drive", 1}}}}), Contains("warp-drive"));
    CHECK_THAT(plan_options_error({{"frameworks", {"jax"}}}), Contains("frameworks=\"jax\" is not one of"));
    CHECK(plan_options_error({{"mixed", 1}}) == "mixed=1 must be true or false");
    CHECK_THAT(plan_options_error({{"objectve", "time"}}), Contains("plan option \"objectve\" is not one of: objective, margin"));
    CHECK(plan_options_error(json::array()) == "plan options must be an object");
}

TEST_CASE("plan options to JSON and back: the same options") {
    plan_options o;
    o.objective = plan_objective::cost;
    o.margin = 0.07;
    o.max_gpus = 128;
    o.price_per_gpu_hour = {{"h100-80g", 3.0}, {"a100-80g", 1.75}};
    o.frameworks = {frameworks::deepspeed::handle};
    o.whole_node_billing = true;
    o.mixed = true;
    o.framework_overlap = false;
    const json j = o;
    CHECK(j.at("objective") == "cost");
    CHECK(j.at("prices").at("a100-80g") == 1.75);
    CHECK(j.at("frameworks") == json{"deepspeed"});
    const auto back = j.get<plan_options>();
    CHECK(back.objective == o.objective);
    CHECK(back.margin == o.margin);
    CHECK(back.max_gpus == o.max_gpus);
    CHECK(back.price_per_gpu_hour == o.price_per_gpu_hour);
    CHECK(back.frameworks == o.frameworks);
    CHECK(back.whole_node_billing == o.whole_node_billing);
    CHECK(back.allow_tp_across_nodes == o.allow_tp_across_nodes);
    CHECK(back.pin_precision == o.pin_precision);
    CHECK(back.framework_overlap == o.framework_overlap);
    CHECK(back.mixed == o.mixed);
}

TEST_CASE("cost needs a price: one check, the first type without one named in the caller's words") {
    cluster_spec c;
    c.nodes = {{"a", "a100-80g", 8, 1}, {"h", "h100-80g", 8, 1}};
    plan_options o;
    o.objective = plan_objective::cost;
    o.price_per_gpu_hour = {{"a100-80g", 2.0}};
    auto message = [&](const price_wording& w) {
        try {
            check_prices(o, gpu_pools(c), w);
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(message({}) == "objective=cost needs a price for GPU type \"h100-80g\" (price_per_gpu_hour has none; "
                         "example_prices() has illustrative ones)");
    const price_wording flags{"--objective cost", [](const std::string& t) { return "--price " + t + "=USD"; }};
    CHECK(message(flags) == "--objective cost needs a price for GPU type \"h100-80g\" (--price h100-80g=USD)");
    o.price_per_gpu_hour["h100-80g"] = 3.0;
    CHECK(message({}).empty());
    o.price_per_gpu_hour.clear();
    o.objective = plan_objective::time;  // other objectives need none
    CHECK(message({}).empty());
}
