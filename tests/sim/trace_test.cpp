// Trace CSV: round trip, sorting, and errors that name the line and the column.
#include <sstream>

#include <catch2/catch.hpp>

#include "frenzy/sim/trace.hpp"

using namespace frenzy;

TEST_CASE("trace: reads, sorts by submit time, writes back identically") {
    std::istringstream in(
        "job_id,submit_s,model,seq_len,global_batch,total_tokens,requested_gpus,requested_type\n"
        "b,20,gpt3-125m,2048,256,1e9,8,a100-80g\n"
        "# comment\n"
        "a,5.5,llama-3.1-8b,4096,64,2.5e10,,\n");
    auto t = read_trace(in, "t.csv");
    REQUIRE(t.size() == 2);
    CHECK(t[0].job_id == "a");
    CHECK(t[0].submit_s == 5.5);
    CHECK(t[0].requested_gpus == 0);
    CHECK(t[0].requested_type.empty());
    CHECK(t[1].requested_gpus == 8);
    CHECK(t[1].total_tokens == 1e9);
    std::ostringstream out;
    write_trace(out, t);
    std::istringstream again(out.str());
    CHECK(read_trace(again) == t);
    auto j = to_job_spec(t[0]);
    CHECK(j.model.name == "llama-3.1-8b");
    CHECK(j.training.seq_len == 4096);
    CHECK(j.training.total_tokens == 2.5e10);
}

TEST_CASE("trace: errors name the line and the column") {
    auto err = [](const std::string& body) {
        std::istringstream in("job_id,submit_s,model,seq_len,global_batch,total_tokens,requested_gpus,requested_type\n" + body);
        try {
            read_trace(in, "x.csv");
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(err("a,0,gpt3-125m,abc,1,1e9,,\n") == "x.csv line 2: seq_len=\"abc\" is not a number");
    CHECK(err("a,0,gpt3-125m,2048,1,1e9,,\nb,1,gpt3-125m,2048,1\n") == "x.csv line 3: expected 8 columns, found 5");
    CHECK(err("a,-1,gpt3-125m,2048,1,1e9,,\n") == "x.csv line 2: submit_s must not be negative");
    CHECK(err("a,0,gpt3-125m,2048,1,0,,\n") == "x.csv line 2: total_tokens must be positive");
    CHECK(err("a,0,gpt3-125m,2048,1,1e9,0,\n") == "x.csv line 2: requested_gpus must be at least 1 (or empty)");
    CHECK(err("a,0,m,2048,1,1e9,,\na,1,m,2048,1,1e9,,\n") == "x.csv line 3: job_id \"a\" appears twice");
    std::istringstream bad("id,submit\n");
    CHECK_THROWS_WITH(read_trace(bad, "y.csv"), Catch::StartsWith("y.csv line 1: header must be"));
    trace_job t;
    t.job_id = "q";
    t.model = "no-such-model";
    CHECK_THROWS_WITH(to_job_spec(t), Catch::StartsWith("trace job q: model.preset=\"no-such-model\""));
}

TEST_CASE("trace: a 10^5-job trace reads in linear time and a late duplicate id names its line") {
    std::ostringstream o;
    o << trace_header << '\n';
    for (int i = 0; i < 100000; ++i) o << "j" << i << ',' << i << ",gpt3-125m,2048,256,1e9,1,\n";
    o << "j7,5,gpt3-125m,2048,256,1e9,1,\n";
    std::istringstream in(o.str());
    // 10^5 x 10^5 / 2 string comparisons (the old quadratic check) would take minutes; a hash set takes ms.
    CHECK_THROWS_WITH(read_trace(in, "big.csv"), Catch::Contains("big.csv line 100002: job_id \"j7\" appears twice"));
}
