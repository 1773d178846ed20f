// Hostile input to the throughput CSV reader (io/throughput_csv.hpp) and the calibration file reader
// (io/calibration_json.hpp): every error names file:line (or the JSON path), the column and the value; nothing is
// clamped, rounded from infinity or shifted to another column.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "frenzy/io/calibration_json.hpp"
#include "frenzy/io/throughput_csv.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace {
const std::string header =
    "gpu_type,num_layers,hidden,heads,ffn_hidden,vocab,seq_len,micro_batch,global_batch_seqs,dp,tp,pp,"
    "tokens_per_s_per_gpu,step_time_s\n";
// A valid row: Llama-2-7B-like on 8 A100s; 64 x 4096 tokens / (3000 tokens/s x 8 GPUs) = 10.92 s a step.
const std::string good = "a100-80g,32,4096,32,11008,32000,4096,1,64,8,1,1,3000,\n";

std::string error_of(const std::string& text) {
    std::istringstream in(text);
    try {
        (void)read_throughput_csv(in, "user.csv");
    } catch (const frenzy::error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("throughput CSV: the valid row reads (the baseline the hostile rows differ from)") {
    std::istringstream in(header + good);
    const auto s = read_throughput_csv(in, "user.csv");
    REQUIRE(s.size() == 1);
    CHECK(s[0].job.model.layers == 32);
    CHECK(s[0].tokens_per_s_per_gpu == 3000);
}

TEST_CASE("throughput CSV: hostile numbers are errors naming file:line, the column and the value") {
    SECTION("1e400 overflows a double") {
        CHECK_THAT(error_of(header + "a100-80g,32,1e400,32,11008,32000,4096,1,64,8,1,1,3000,\n"),
                   Contains("user.csv:2: hidden=1e400 is outside the range of a double"));
    }
    SECTION("1e30 layers is not a count (llround of it would be undefined)") {
        CHECK_THAT(error_of(header + "a100-80g,1e30,4096,32,11008,32000,4096,1,64,8,1,1,3000,\n"),
                   Contains("user.csv:2: num_layers=1e+30 is not an integer count"));
    }
    SECTION("a count inside int64 but past the documented bound") {
        CHECK_THAT(error_of(header + "a100-80g,32,4096,32,11008,32000,4096,1,64,8,1,1048577,3000,\n"),
                   Contains("user.csv:2") && Contains("parallel.pp=1048577 must be in 1..1048576"));
    }
    SECTION("inf and nan are not numbers") {
        CHECK_THAT(error_of(header + "a100-80g,32,4096,32,11008,32000,4096,1,64,8,1,1,3000,inf\n"),
                   Contains("user.csv:2: step_time_s=inf must be a finite number"));
        CHECK_THAT(error_of(header + "a100-80g,32,4096,32,11008,32000,4096,1,64,8,1,1,NaN,\n"),
                   Contains("user.csv:2: tokens_per_s_per_gpu=NaN must be a finite number"));
    }
    SECTION("a negative or absurd step time") {
        CHECK_THAT(error_of(header + "a100-80g,32,4096,32,11008,32000,4096,1,64,8,1,1,3000,-5\n"),
                   Contains("user.csv:2: step_time_s=-5 must be in [0, 10000000000]"));
    }
    SECTION("absurd tokens/s") {
        CHECK_THAT(error_of(header + "a100-80g,32,4096,32,11008,32000,4096,1,64,8,1,1,1e300,\n"),
                   Contains("user.csv:2: tokens_per_s_per_gpu=1e+300 must be in"));
    }
}

TEST_CASE("throughput CSV: columns are strict") {
    SECTION("a short row would shift columns") {
        CHECK_THAT(error_of(header + "a100-80g,32,4096,32,11008,32000,4096,1,64,8,1,1\n"),
                   Contains("user.csv:2: row has 12 fields but the header has 14 columns"));
    }
    SECTION("a repeated column") {
        CHECK_THAT(error_of("hidden," + header + "1," + good), Contains("column \"hidden\" appears twice"));
    }
    SECTION("a line number counts comment lines before the header") {
        CHECK_THAT(error_of("# a comment\n" + header + "a100-80g,32,lots,32,11008,32000,4096,1,64,8,1,1,3000,\n"),
                   Contains("user.csv:3: hidden=\"lots\" is not a number"));
    }
    SECTION("free text is printable in messages") {
        CHECK_THAT(error_of(header + "a\xff\x01,32,4096,32,11008,32000,4096,1,64,8,1,1,3000,\n"),
                   Contains("gpu_type=\"a\\xFF\\x01\""));
    }
}

TEST_CASE("free-text numbers: leading_number parses what stod did, without its failure modes") {
    using detail::number_from_text;
    CHECK(number_from_text("1.5e3 tokens", "") == 1500);
    CHECK(number_from_text("8e", "") == 8);  // no digits after 'e': the number is 8
    CHECK(number_from_text(".5", "") == 0.5);
    CHECK_THROWS_WITH(number_from_text("inf", "", "x"), Contains("x=inf must be a finite number"));  // stod: infinity
    CHECK_THROWS_WITH(number_from_text(" -Infinity", "", "x"), Contains("must be a finite number"));
    CHECK(std::isnan(number_from_text("info: not stated", "")));  // text, not a number: the caller's default
    CHECK_THROWS_WITH(number_from_text("1e999", "", "vocab"), Contains("vocab=1e999 is outside the range of a double"));
    // "8x 200 Gb/s" = 1600 Gbit/s = 200 GB/s
    CHECK(detail::network_from_text("8x 200 Gb/s HDR") == Approx(200).epsilon(1e-12));
}

TEST_CASE("calibration file: coefficients are finite and bounded, errors name the JSON path and value") {
    auto cal = to_json(efficiency_model{});
    SECTION("the default model round-trips") { CHECK(efficiency_from_json(cal).default_inverse == 2.0); }
    SECTION("an inverse efficiency below 1 (faster than peak)") {
        cal["default_inverse_efficiency"] = 0.5;
        CHECK_THROWS_WITH(efficiency_from_json(cal),
                          Contains("calibration.default_inverse_efficiency must be at least 1 (got 0.5)"));
    }
    SECTION("1e308 would make every step time inf") {
        cal["memory_inverse_efficiency"] = 1e308;
        CHECK_THROWS_WITH(efficiency_from_json(cal), Contains("calibration.memory_inverse_efficiency=1e+308 must be in [1, 1000000]"));
    }
    SECTION("a per-GPU entry") {
        cal["gpus"] = nlohmann::json::array({{{"gpu", "h100-80g"}, {"inverse_efficiency", -3.0}}});
        CHECK_THROWS_WITH(efficiency_from_json(cal), Contains("calibration.gpus[0].inverse_efficiency must be at least 1 (got -3)"));
    }
    SECTION("the wrong format names the value printably") {
        cal["format"] = std::string("x\xff");
        CHECK_THROWS_WITH(efficiency_from_json(cal), Contains("calibration.format=\"x\\xFF\""));
    }
}
