// Step time of offloading to the host (issue 25, "costs that are free today"): the optimizer step over the host link
// and the CPU's memory, parameters uploaded before their gathers; host links by GPU type. Hand-derived values.
#include <catch2/catch.hpp>

#include "frenzy/model/presets.hpp"
#include "frenzy/perf/step_time.hpp"

using namespace frenzy;

namespace offload_step {
const gpu_type& gpu(const char* name) {
    static const gpu_catalog catalog;
    return catalog.at(name);
}
job_spec zero2(bool offload) {
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 8, .precision = precision::bf16_mixed};
    j.parallel = {.dp = 8, .sharding = sharding::gradients};
    j.runtime.framework = frameworks::deepspeed::handle;
    j.runtime.offload.optimizer = offload;
    return j;
}
}  // namespace offload_step
using namespace offload_step;

TEST_CASE("host links: PCIe generation by card or chip, NVLink-C2C on Grace modules") {
    CHECK(gpu("v100-32g").host_link_GBps() == 15.75);  // SXM2 on PCIe gen3 x16
    CHECK(gpu("a100-80g").host_link_GBps() == 31.5);   // gen4
    CHECK(gpu("h100-80g").host_link_GBps() == 63.0);   // gen5
    CHECK(gpu("t4").host_link_GBps() == 15.75);        // a PCIe gen3 card
    CHECK(gpu("l40s").host_link_GBps() == 31.5);       // a PCIe gen4 card
    CHECK(gpu("mi300x").host_link_GBps() == 63.0);
    CHECK(gpu("gb200").host_link_GBps() == 450.0);     // NVLink-C2C, 900 GB/s both ways
    CHECK(gpu("b200").host_link_GBps() == 63.0);       // the same chip on an x86 HGX board
}

TEST_CASE("optimizer offload: gradients down, CPU Adam, parameters up") {
    // ZeRO-2 over 8 H100s: each GPU's optimizer shard is P / 8 parameters. DeepSpeed reduces bf16 gradients (2 B);
    // down and up at 80% of PCIe gen5's 63 GB/s; CPU Adam moves 30 B per parameter through the GPU's share of a
    // DDR5 host: 0.7 x 614.4 / 8 = 53.76 GB/s.
    const auto& h100 = gpu("h100-80g");
    const double shard = bottleneck_stage(zero2(true)).params / 8;
    const double expected = shard * 2 / (0.8 * 63e9) + shard * 30 / (53.76e9) + shard * 2 / (0.8 * 63e9);
    step_time_model t;
    const auto on = t.predict(zero2(true), h100, {8, 0}).parts;
    const auto off = t.predict(zero2(false), h100, {8, 0}).parts;
    CHECK(on.optimizer == Approx(expected).epsilon(1e-12));
    CHECK(on.optimizer > 10 * off.optimizer);  // the host pass is an order of magnitude slower than HBM
    CHECK(on.total - off.total == Approx(on.optimizer - off.optimizer).epsilon(1e-9));
    // a Grace host: C2C at 450 GB/s, half of a Grace's 512 GB/s LPDDR5X per GB200 GPU
    const auto grace = t.predict(zero2(true), gpu("gb200"), {72, 0}).parts;
    CHECK(grace.optimizer == Approx(shard * 2 / (0.8 * 450e9) * 2 + shard * 30 / (0.7 * 256e9)).epsilon(1e-12));
}

TEST_CASE("parameter offload uploads each GPU's shard before the forward and the backward gathers") {
    auto j = zero2(true);
    j.parallel.sharding = sharding::full;
    auto up = j;
    up.runtime.offload.parameters = true;
    const auto& h100 = gpu("h100-80g");
    step_time_model t;
    const double shard_bytes = bottleneck_stage(j).params * 2 / 8;
    CHECK(t.predict(up, h100, {8, 0}).parts.shard_mb - t.predict(j, h100, {8, 0}).parts.shard_mb ==
          Approx(2 * shard_bytes / (0.8 * 63e9)).epsilon(1e-9));
}
