// io/'s codecs of the service path: durations (io/duration.hpp) and plans (io/result_json.hpp's from_json beside
// to_json), which the CLI and `frenzy serve` share.
#include <catch2/catch.hpp>

#include <string>

#include "frenzy/io/cluster_json.hpp"
#include "frenzy/io/duration.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/io/result_json.hpp"
#include "frenzy/plan/planner.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/plan/prices.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace {
std::string duration_error(const std::string& text) {
    try {
        (void)parse_duration(text, "--repair");
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
std::string plan_codec_error(const char* text) {
    try {
        (void)nlohmann::json::parse(text).get<plan>();
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("parse_duration: a bare number is seconds, s, m, h and d are units, decimals are allowed") {
    CHECK(parse_duration("90", "x") == 90);
    CHECK(parse_duration("90s", "x") == 90);
    CHECK(parse_duration("30m", "x") == 1800);
    CHECK(parse_duration("2h", "x") == 7200);
    CHECK(parse_duration("1d", "x") == 86400);
    CHECK(parse_duration("1.5d", "x") == 129600);
    CHECK(parse_duration("0", "x") == 0);
    CHECK(parse_duration("1e3", "x") == 1000);
    CHECK(parse_duration("3.2e9", "x") == 3.2e9);
}

TEST_CASE("parse_duration: errors name the field and the text, and say what is wrong") {
    CHECK(duration_error("") == "--repair=\"\" is empty: give a duration such as 30s, 10m, 2h or 1d");
    for (const char* t : {"0x10", "abc", "h", "2 h", " 2h", "2hh", "1w", "2H"})
        CHECK(duration_error(t) == std::string("--repair=\"") + t + "\" is not a duration (a number with an optional unit s, m, h or d)");
    for (const char* t : {"-1", "-5m", "inf", "nan", "1e400"})
        CHECK(duration_error(t) == std::string("--repair=\"") + t + "\" must be a finite, non-negative duration");
    CHECK(duration_error("101y").find("is not a duration") != std::string::npos);
    CHECK(duration_error("37038d") == "--repair=\"37038d\" is longer than 100 years");
    CHECK(duration_error("3.3e9") == "--repair=\"3.3e9\" is longer than 100 years");
}

TEST_CASE("plan codec: to_json -> from_json -> to_json is the same text, on the planner's plans") {
    const auto cluster = load_cluster(std::string(FRENZY_SOURCE_DIR) + "/examples/clusters/five-type.json");
    int checked = 0;
    for (const char* job : {"plan-gpt3-125m.json", "plan-llama-2-7b-fp16.json", "plan-mixtral-8x7b.json", "llama-3.1-8b-fsdp.json"}) {
        auto j = load_job(std::string(FRENZY_SOURCE_DIR) + "/examples/jobs/" + job).job;
        plan_options o;
        o.price_per_gpu_hour = example_prices();
        for (bool budget : {true, false}) {
            if (!budget) j.training.total_tokens = 0;
            for (const auto& p : planner{}.plan(j, cluster, o).plans) {
                const nlohmann::ordered_json first = p;
                const plan back = first.get<plan>();
                CHECK(nlohmann::ordered_json(back).dump() == first.dump());
                // and through the plain json the store's text is parsed into
                CHECK(nlohmann::ordered_json(nlohmann::json::parse(first.dump()).get<plan>()).dump() == first.dump());
                // the same plan, field for field, where the text holds every field (without a budget the planner
                // may leave a cost of 0 that the text, rightly, does not carry)
                if (p.has_budget) CHECK(back == p);
                ++checked;
            }
        }
    }
    CHECK(checked > 20);
}

TEST_CASE("plan codec: unknown keys and wrong types are errors naming the field") {
    CHECK_THAT(plan_codec_error(R"({"gpu": "t4", "gpuz": 1})"), Contains("plan.gpuz is not a known field"));
    CHECK_THAT(plan_codec_error(R"({"gpu": "t4", "gpus": "8"})"), Contains("plan.gpus"));
    CHECK_THAT(plan_codec_error(R"({"gpu": "t4", "parallel": {"tpp": 2}})"), Contains("parallel.tpp is not a known field"));
    CHECK(plan_codec_error(R"({"gpu": "t4", "gpus": 4, "cost": null})").empty());
}

namespace {
std::string mixed_codec_error(const std::string& text) {
    try {
        plan p;
        detail::pipeline_from_json(nlohmann::json::parse(text), p);  // the reader of a plan with "groups"
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
/// The planner's mixed plans of a 13B and a 14B job on the A100/V100/T4 cluster (both kinds of budget).
std::vector<plan> codec_mixed_plans() {
    const auto cluster = load_cluster(std::string(FRENZY_SOURCE_DIR) + "/examples/clusters/a100-v100-t4.json");
    std::vector<plan> out;
    for (const char* model : {"llama-2-13b", "qwen2.5-14b"}) {
        job_spec j;
        j.model = preset(model);
        j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 8, .precision = precision::fp16_mixed, .total_tokens = 1e6};
        j.runtime.framework = frameworks::megatron::handle;
        plan_options o;
        o.mixed = true;
        o.price_per_gpu_hour = example_prices();
        for (bool budget : {true, false}) {
            if (!budget) j.training.total_tokens = 0;
            for (auto& m : planner{}.plan(j, cluster, o).mixed) out.push_back(std::move(m));
        }
    }
    return out;
}
}  // namespace

TEST_CASE("mixed plan codec: to_json -> from_json -> to_json is the same text, on the planner's mixed plans") {
    const auto plans = codec_mixed_plans();
    REQUIRE(plans.size() >= 2);  // with and without a budget: the store keeps either
    for (const auto& m : plans) {
        const nlohmann::ordered_json first = m;
        const auto back = nlohmann::json::parse(first.dump()).get<plan>();
        CHECK(nlohmann::ordered_json(back).dump() == first.dump());
        REQUIRE(back.groups.size() == m.groups.size());
        CHECK(back.parallel.stage_layers == m.parallel.stage_layers);  // the layout Megatron is launched with
        if (m.has_budget) CHECK(back == m);
        // the one plan type reads either form: a mixed plan's text is a plan with its stage groups, written back as
        // the same text (the store keeps one column for both)
        const auto one = nlohmann::json::parse(first.dump()).get<plan>();
        CHECK(one.mixed());
        CHECK(one == back);
        CHECK(nlohmann::ordered_json(one).dump() == first.dump());
    }
}

TEST_CASE("mixed plan codec: missing groups, a wrong GPU total and unknown keys are errors naming the field") {
    const auto m = codec_mixed_plans().front();
    nlohmann::json good = nlohmann::json::parse(nlohmann::ordered_json(m).dump());
    CHECK(mixed_codec_error(good.dump()).empty());
    auto bad = good;
    bad.erase("groups");
    CHECK(mixed_codec_error(bad.dump()) == "mixed_plan.groups must be a non-empty array of stage groups");
    bad = good;
    bad["gpus"] = m.gpus + 1;
    CHECK(mixed_codec_error(bad.dump()) == "mixed_plan.gpus=" + std::to_string(m.gpus + 1) + " is not the sum over its groups, " + std::to_string(m.gpus));
    bad = good;
    bad["groups"][0].erase("stages");
    CHECK(mixed_codec_error(bad.dump()) == "groups[].stages is missing");
    bad = good;
    bad["groups"][0]["gpuz"] = 1;
    CHECK_THAT(mixed_codec_error(bad.dump()), Contains("groups[].gpuz is not a known field"));
    bad = good;
    bad["layout"] = "x";
    CHECK_THAT(mixed_codec_error(bad.dump()), Contains("mixed_plan.layout is not a known field"));
    CHECK(mixed_codec_error(R"({"gpu": "t4", "gpus": 4})") == "mixed_plan.groups must be a non-empty array of stage groups");
}
