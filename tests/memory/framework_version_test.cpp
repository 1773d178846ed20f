// runtime.framework_version (train/framework.hpp framework_version, frameworks/fsdp/traits.hpp versions): a torchtitan
// release up to v0.2.1 repeats k and v to every query head before SDPA (torchtitan/models/llama3/model/model.py
// repeat_kv); from v0.2.2 on, and by default, it does not. Hand derivation on Llama 3.1 70B, unknown versions refused
// by name, the job JSON round trip.
#include <catch2/catch.hpp>

#include "frenzy/io/job_json.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace framework_version_test {
job_spec titan_70b(const std::string& version) {
    job_spec j;
    j.model = preset("llama-3.1-70b");
    j.training = {.seq_len = 8192, .micro_batch = 1, .global_batch = 64, .precision = precision::bf16_mixed};
    j.parallel = {.dp = 64, .sharding = sharding::full};
    j.runtime.framework = frameworks::fsdp::handle;
    j.runtime.attention = attention_impl::flash;
    j.runtime.framework_version = version;
    return j;
}
}  // namespace framework_version_test
using namespace framework_version_test;

TEST_CASE("framework_version: torchtitan up to 0.2.1 repeats k and v, the default and 0.2.2 do not") {
    // Llama 3.1 70B: 64 query heads and 8 kv heads of 128; repeat_kv materialises k and v for the 56 heads more,
    // which SDPA saves: 2 (k, v) x 2 B x 8192 tokens x 56 x 128 = 234,881,024 B a layer, x 80 layers (no
    // checkpointing) = 17.5 GiB, exact in doubles.
    const double per_layer = 2.0 * 2.0 * 8192 * 56 * 128;
    CHECK(per_layer == 234881024.0);
    const auto main = memory_estimator{}.estimate(titan_70b(""));
    for (const std::string old : {"0.1.0", "0.2.0", "0.2.1"}) {
        INFO(old);
        validate(titan_70b(old));
        CHECK(profile_of(titan_70b(old)).gqa_kv_repeat);
        CHECK(memory_estimator{}.estimate(titan_70b(old)).stages[0].breakdown.activations.value -
                  main.stages[0].breakdown.activations.value ==
              Approx(80 * per_layer).epsilon(1e-12));
    }
    CHECK(memory_estimator{}.estimate(titan_70b("0.2.2")).peak_allocated == main.peak_allocated);
    CHECK(memory_estimator{}.estimate(titan_70b("main")).peak_allocated == main.peak_allocated);
    // > 5% of the peak: why the version is a field
    CHECK(memory_estimator{}.estimate(titan_70b("0.2.0")).peak_allocated.value > 1.05 * main.peak_allocated.value);
    // the job's own runtime.kv_repeat wins over the version's default
    auto j = titan_70b("0.2.0");
    j.runtime.kv_repeat = false;
    CHECK(memory_estimator{}.estimate(j).peak_allocated == main.peak_allocated);
}

TEST_CASE("framework_version: unknown versions and frameworks without versions are refused naming the field") {
    CHECK_THROWS_WITH(validate(titan_70b("0.3.0")), Contains("runtime.framework_version=\"0.3.0\"") &&
                                                       Contains("\"main\" (default)") && Contains("\"0.2.1\""));
    auto j = titan_70b("4.50");
    j.runtime.framework = frameworks::hf::handle;
    j.parallel.sharding = sharding::none;
    CHECK_THROWS_WITH(validate(j), Contains("runtime.framework_version=\"4.50\"") && Contains("runtime.framework=\"hf\""));
    // the job JSON carries it (absent when unset)
    const auto back = job_from_json(to_json(titan_70b("0.2.1"))).job;
    CHECK(back.runtime.framework_version == "0.2.1");
    CHECK_FALSE(to_json(titan_70b("")).at("runtime").contains("framework_version"));
}
