// Trace synthesis from Philly rows: arrivals kept (scaled by the load factor), GPU counts kept, durations matched
// on the requested GPUs, seeded determinism, and the timestamp arithmetic.
#include <cstdio>
#include <fstream>

#include <catch2/catch.hpp>

#include "../sched/fixtures.hpp"
#include "frenzy/sim/synth.hpp"

using namespace frenzy;
using namespace frenzy_test;

namespace {
// Every preset fits on 1+ GPUs of a100-80g; on rtx-3090 only models named gpt3-* fit, and only on >= 2 GPUs.
plan_provider fake_planner() {
    return [](const job_spec& j) {
        plan_result r;
        const double speed = 1e6 / (1.0 + static_cast<double>(j.model.layers * j.model.hidden) / 1e4);
        for (int g = 1; g <= 64; g *= 2) {
            r.plans.push_back(mk_plan("a100-80g", g, speed * g * 4));
            if (j.model.name.rfind("gpt3-", 0) == 0 && g >= 2) r.plans.push_back(mk_plan("rtx-3090", g, speed * g));
        }
        return r;
    };
}
}  // namespace

TEST_CASE("synth: timestamps become seconds exactly") {
    // 1970-01-02 00:00:01 is 86401 s; 2017-10-09 07:01:55 UTC is 1507532515 s (date -u -d ... +%s).
    CHECK(detail::parse_timestamp("1970-01-02 00:00:01", "x") == 86401);
    CHECK(detail::parse_timestamp("2017-10-09 07:01:55", "x") == 1507532515);
    CHECK_THROWS_WITH(detail::parse_timestamp("yesterday", "f line 3"), Catch::StartsWith("f line 3: timestamp"));
    // No such dates: February 30th; February 29th outside a leap year; hour 24; trailing text.
    CHECK_THROWS_WITH(detail::parse_timestamp("2017-02-30 00:00:00", "x"), Catch::Contains("month 2 of 2017 has 28"));
    CHECK_THROWS(detail::parse_timestamp("2017-02-29 00:00:00", "x"));
    CHECK_THROWS(detail::parse_timestamp("1900-02-29 00:00:00", "x"));  // 1900 is not a leap year
    CHECK(detail::parse_timestamp("2016-02-29 00:00:00", "x") == 1456704000);  // date -u -d 2016-02-29 +%s
    CHECK_THROWS(detail::parse_timestamp("2017-10-09 24:00:00", "x"));
    CHECK_THROWS(detail::parse_timestamp("2017-10-09 07:01:55x", "x"));
}

TEST_CASE("synth: arrivals, sizes and durations as in the trace") {
    const std::string path = "synth_test_philly.csv";
    {
        std::ofstream f(path);
        f << "timestamp,duration,num_gpus,gpu_time,cluster\n"
             "2017-10-09 07:00:00,5.0,1,5.0,a\n"            // dropped: shorter than 60 s
             "2017-10-09 07:00:10,3600.0,1,3600.0,a\n"
             "2017-10-09 07:01:10,7200.0,8,57600.0,b\n"
             "2017-10-09 07:02:10,600.0,128,76800.0,a\n"    // dropped: more GPUs than any type
             "2017-10-09 07:03:10,1800.0,2,3600.0,a\n";
    }
    const auto rows = load_philly(path);
    std::remove(path.c_str());
    REQUIRE(rows.size() == 5);
    const auto cluster = mk_cluster({{"a", "a100-80g", 8, 4}, {"r", "rtx-3090", 8, 4}});
    const auto prov = fake_planner();
    synth_options o;
    o.jobs = 10;
    o.load = 2;
    synth_report rep;
    const auto t = synth_trace(rows, cluster, prov, o, &rep);
    REQUIRE(t.size() == 3);
    CHECK(rep.dropped_too_large == 1);
    CHECK(t[0].submit_s == 0);
    CHECK(t[1].submit_s == 30);   // 60 s later in the trace, load 2
    CHECK(t[2].submit_s == 90);
    CHECK(t[0].requested_gpus == 1);
    CHECK(t[1].requested_gpus == 8);
    CHECK(t[2].requested_gpus == 2);
    const double dur[] = {3600, 7200, 1800};
    for (std::size_t i = 0; i < t.size(); ++i) {
        const auto pr = prov(to_job_spec(t[i]));
        const plan* p = plan_for_request(pr.plans, t[i].requested_type, t[i].requested_gpus);
        REQUIRE(p);
        // The job runs exactly its trace duration on its request (relative 1e-12: one multiply and one divide).
        CHECK(t[i].total_tokens / p->tokens_per_s == Approx(dur[i]).epsilon(1e-12));
        const auto& cls = synth_models_for(t[i].requested_gpus);
        CHECK(std::find(cls.begin(), cls.end(), t[i].model) != cls.end());
        if (t[i].requested_type == "rtx-3090") CHECK(t[i].model.rfind("gpt3-", 0) == 0);
    }
    CHECK(synth_trace(rows, cluster, prov, o) == t);  // same seed, same trace
    o.seed = 99;
    bool differs = false;
    for (std::uint64_t s = 2; s < 12 && !differs; ++s) {
        o.seed = s;
        differs = synth_trace(rows, cluster, prov, o) != t;
    }
    CHECK(differs);  // the seed drives the type and model draws
}
