// Validation rules of job_spec: each rule rejects a bad value with a message naming the fields.
#include <catch2/catch.hpp>

#include "frenzy/model/presets.hpp"
#include "frenzy/train/job.hpp"

using namespace frenzy;

namespace {
job_spec base_job() {
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 64};
    j.parallel = {.dp = 8};
    return j;
}
std::string error_of(const job_spec& j) {
    try {
        validate(j);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("a valid job passes validation") { REQUIRE(error_of(base_job()).empty()); }

TEST_CASE("each framework rule names its fields") {
    using Catch::Matchers::Contains;
    auto j = base_job();
    SECTION("tp divides heads") {
        j.parallel.tp = 3;
        j.parallel.dp = 1;
        j.training.global_batch = 8;
        CHECK_THAT(error_of(j), Contains("parallel.tp=3") && Contains("model.heads=32"));
    }
    SECTION("tp divides kv_heads") {
        j.parallel.tp = 16;
        CHECK_THAT(error_of(j), Contains("parallel.tp=16") && Contains("model.kv_heads=8"));
    }
    SECTION("layers split over pp x vpp") {
        j.parallel.pp = 3;
        CHECK_THAT(error_of(j), Contains("model.layers=32") && Contains("parallel.pp=3"));
    }
    SECTION("global batch splits into micro-batches over dp") {
        j.training.global_batch = 12;
        CHECK_THAT(error_of(j), Contains("training.global_batch=12") && Contains("parallel.dp=8"));
    }
    SECTION("cp divides the sequence") {
        j.parallel.cp = 3;
        j.training.seq_len = 4100;
        CHECK_THAT(error_of(j), Contains("training.seq_len=4100") && Contains("parallel.cp=3"));
    }
    SECTION("ep needs MoE") {
        j.parallel.ep = 2;
        CHECK_THAT(error_of(j), Contains("parallel.ep=2") && Contains("model.moe.experts"));
    }
    SECTION("ep divides experts") {
        j.model.moe = {.experts = 8, .top_k = 2};
        j.parallel.ep = 3;
        j.parallel.dp = 6;
        j.training.global_batch = 60;
        CHECK_THAT(error_of(j), Contains("parallel.ep=3") && Contains("model.moe.experts=8"));
    }
    SECTION("ep divides dp x cp") {
        j.model.moe = {.experts = 8, .top_k = 2};
        j.parallel.ep = 8;
        j.parallel.dp = 4;
        CHECK_THAT(error_of(j), Contains("parallel.ep=8") && Contains("parallel.dp=4"));
    }
    SECTION("vpp needs interleaved schedule") {
        j.parallel.pp = 2;
        j.parallel.vpp = 2;
        CHECK_THAT(error_of(j), Contains("parallel.vpp=2") && Contains("pipeline_schedule"));
    }
    SECTION("interleaved needs vpp") {
        j.parallel.pp = 2;
        j.parallel.schedule = pipeline_schedule::interleaved;
        CHECK_THAT(error_of(j), Contains("interleaved") && Contains("vpp"));
    }
    SECTION("interleaved needs micro-batches divisible by pp") {
        j.parallel = {.dp = 2, .pp = 4, .vpp = 2, .schedule = pipeline_schedule::interleaved};
        j.training.global_batch = 12;  // 6 micro-batches, pp=4
        CHECK_THAT(error_of(j), Contains("micro-batches") && Contains("parallel.pp=4"));
    }
    SECTION("sequence parallel needs tp > 1") {
        j.parallel.sequence_parallel = true;
        CHECK_THAT(error_of(j), Contains("sequence_parallel") && Contains("tp=1"));
    }
    SECTION("megatron's ZeRO-3 is Megatron-FSDP, which supports sgd and adam only") {
        // megatron/training/arguments.py @d98e8a64: --use-megatron-fsdp asserts optimizer in ('sgd', 'adam').
        j.parallel.sharding = sharding::full;
        CHECK_NOTHROW(validate(j));
        j.training.optimizer = optimizer_kind::adafactor;
        CHECK_THAT(error_of(j), Contains("parallel.sharding=\"full\"") && Contains("adafactor"));
    }
    SECTION("deepspeed pipeline needs ZeRO 0/1") {
        j.runtime.framework = frameworks::deepspeed::handle;
        j.parallel.pp = 2;
        j.parallel.sharding = sharding::gradients;
        CHECK_THAT(error_of(j), Contains("parallel.sharding=\"gradients\"") && Contains("parallel.pp=2"));
    }
    SECTION("fsdp has no optimizer-only sharding") {
        j.runtime.framework = frameworks::fsdp::handle;
        j.parallel.sharding = sharding::optimizer;
        CHECK_THAT(error_of(j), Contains("parallel.sharding=\"optimizer\"") && Contains("fsdp"));
    }
    SECTION("ddp is data parallel only") {
        j.runtime.framework = frameworks::ddp::handle;
        j.parallel.tp = 2;
        j.parallel.dp = 4;
        j.training.global_batch = 64;
        CHECK_THAT(error_of(j), Contains("ddp") && Contains("tp=2"));
    }
    SECTION("degrees are at least one") {
        j.parallel.pp = 0;
        CHECK_THAT(error_of(j), Contains("parallel.pp=0"));
    }
    SECTION("training fields are positive") {
        j.training.micro_batch = 0;
        CHECK_THAT(error_of(j), Contains("training.micro_batch=0"));
    }
    SECTION("model kv_heads divides heads") {
        j.model.kv_heads = 5;
        CHECK_THAT(error_of(j), Contains("model.kv_heads=5") && Contains("model.heads=32"));
    }
    SECTION("MoE top_k within experts") {
        j.model.moe = {.experts = 8, .top_k = 9};
        CHECK_THAT(error_of(j), Contains("model.moe.top_k=9"));
    }
}
