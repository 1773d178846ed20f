// Prices per GPU-hour (io/prices.hpp): the one reader behind the CLI's --price and Python's prices=, its forms
// and its errors; and the GPU-type file reader the CLI's --gpu-types uses (io/cluster_json.hpp).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "frenzy/io/cluster_json.hpp"
#include "frenzy/io/prices.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace {
std::string prices_error_of(const std::vector<std::string>& items) {
    try {
        prices_from_text(items, gpu_catalog{});
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("prices: TYPE=USD items and `example`, a later price replacing an earlier one") {
    const gpu_catalog cat;
    const auto p = prices_from_text({"a100-80g=2", "v100-32g=0.5", "a100-80g=2.5"}, cat);
    REQUIRE(p.size() == 2);
    CHECK(p.at("a100-80g") == 2.5);
    CHECK(p.at("v100-32g") == 0.5);
    const auto ex = prices_from_text({"a100-80g=9", "example"}, cat);  // example keeps the prices already given
    CHECK(ex.at("a100-80g") == 9);
    CHECK(ex.at("h100-80g") == example_prices().at("h100-80g"));
    CHECK(ex.size() == example_prices().size());
    CHECK(prices_from_text({}, cat).empty());
    CHECK(prices_from_text({"t4=0", "l4=1e6"}, cat).at("l4") == 1e6);  // both ends of bounds::price
}

TEST_CASE("prices: errors name the item and the rule (the CLI's wording, tests/cli asserts it)") {
    CHECK(prices_error_of({"a100-80g"}) == "--price \"a100-80g\" must be TYPE=USD_PER_HOUR or example");
    CHECK(prices_error_of({"=2"}) == "--price \"=2\" must be TYPE=USD_PER_HOUR or example");
    CHECK(prices_error_of({"a100-80g=2x"}) == "--price \"a100-80g=2x\": the price is not a number");
    CHECK(prices_error_of({"a100-80g="}) == "--price \"a100-80g=\": the price is not a number");
    CHECK(prices_error_of({"a100-80g=-1"}) ==
          "--price \"a100-80g=-1\": the price must be a finite number of USD in [0, 1e6]");
    CHECK(prices_error_of({"a100-80g=inf"}) ==
          "--price \"a100-80g=inf\": the price must be a finite number of USD in [0, 1e6]");
    CHECK(prices_error_of({"a100-80g=1000001"}) ==
          "--price \"a100-80g=1000001\": the price must be a finite number of USD in [0, 1e6]");
    CHECK_THAT(prices_error_of({"a100-81g=2"}), Contains("a100-81g") && Contains("--price"));
    // An unknown type is named before its price is read.
    CHECK_THAT(prices_error_of({"a100-81g=x"}), Contains("a100-81g") && !Contains("not a number"));
}

TEST_CASE("prices: add_price and check_price, as Python's prices={type: USD} uses them") {
    const gpu_catalog cat;
    price_table t;
    add_price(t, cat, "a100-80g", 2, "prices", "prices[\"a100-80g\"]");
    CHECK(t.at("a100-80g") == 2);
    CHECK_THROWS_WITH(add_price(t, cat, "a100-80g", -1, "prices", "prices[\"a100-80g\"]"),
                      "prices[\"a100-80g\"] must be a finite number of USD in [0, 1e6]");
    CHECK_THROWS_WITH(add_price(t, cat, "nope", 1, "prices", "prices[\"nope\"]"), Contains("prices") && Contains("nope"));
    CHECK(check_price("x", bounds::price.max) == bounds::price.max);
    CHECK_THROWS(check_price("x", std::nan("")));
}

TEST_CASE("load_gpu_types: an array or {\"gpu_types\": [...]}, upserted into the catalog, errors name the file") {
    const std::string path = "frenzy_prices_test_gpu_types.json";
    {
        std::ofstream f(path);
        f << R"({"nodes": [], "gpu_types": [{"name": "my-card", "memory_mib": 49152, "bf16_tflops": 200,
                 "fp16_tflops": 200, "fp32_tflops": 50, "mem_bw_GBps": 900, "link_GBps": 50}, {"name": "t4", "memory_mib": 100}]})";
    }
    const auto cat = load_gpu_types(path);
    CHECK(cat.at("my-card").memory_mib == 49152);
    CHECK(cat.at("t4").memory_mib == 100);
    CHECK(cat.at("t4").fp16_tflops == gpu_catalog{}.at("t4").fp16_tflops);  // fields left out keep the catalog's
    CHECK(load_gpu_types("").types().size() == gpu_catalog{}.types().size());
    {
        std::ofstream f(path);
        f << R"({"gpu_types": 7})";
    }
    CHECK_THROWS_WITH(load_gpu_types(path), path + ": expected an array of GPU types or {\"gpu_types\": [...]}");
    {
        std::ofstream f(path);
        f << R"([{"name": "x", "memory_mib": -1}])";
    }
    CHECK_THROWS_WITH(load_gpu_types(path), Contains(path + ": gpu_types[0].memory_mib=-1"));
    std::remove(path.c_str());
}

TEST_CASE("load_gpu_types: a power cap is a field of a GPU type entry, read and written back") {
    const std::string path = "frenzy_prices_test_power_cap.json";
    {
        std::ofstream f(path);  // torchao's power-limited B200 fleet, at a cap of 750 W; a card of no known TDP
        f << R"([{"name": "b200", "power_limit_w": 750}, {"name": "b300", "power_limit_w": 900, "tdp_w": 1100}])";
    }
    const auto cat = load_gpu_types(path);
    const auto& b200 = cat.at("b200");
    CHECK(b200.power_limit_w == 750);
    CHECK(b200.tdp_w == 1000);  // the catalog's
    CHECK(b200.peak_flops(precision::bf16_mixed) == Approx(std::cbrt(0.75) * 2250e12));
    CHECK(cat.at("b300").clock_scale() == Approx(std::cbrt(900.0 / 1100)));
    // written as `frenzy gpus --json` writes it and read back: the same type (the cap is applied once, at use)
    const auto back = gpu_type_from_json(to_json(b200), "gpu_types[0]", gpu_catalog{});
    CHECK(back == b200);
    {
        std::ofstream f(path);  // the catalog has no board power for b300: a cap alone cannot be scaled
        f << R"([{"name": "b300", "power_limit_w": 900}])";
    }
    CHECK_THROWS_WITH(load_gpu_types(path), Contains("power_limit_w=900") && Contains("needs tdp_w"));
    {
        std::ofstream f(path);
        f << R"([{"name": "b200", "power_limit_w": -5}])";
    }
    CHECK_THROWS_WITH(load_gpu_types(path), Contains("power_limit_w"));
    std::remove(path.c_str());
}
