// Step-time model: pipeline-bubble closed forms, collective volumes, unsupported precisions, consistency of the
// reported figures, and the effect of the intra-node link.
#include <catch2/catch.hpp>

#include "frenzy/hw/gpu.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/perf/step_time.hpp"

using namespace frenzy;

namespace {
job_spec llama8b(parallel_config p, std::int64_t mb = 1, std::int64_t gb = 64) {
    job_spec j;
    if (p.sharding == sharding::full || p.sharding == sharding::gradients) j.runtime.framework = framework::fsdp;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 4096, .micro_batch = mb, .global_batch = gb};
    j.parallel = p;
    validate(j);
    return j;
}
const gpu_catalog cat;
}  // namespace

TEST_CASE("pipeline bubble share equals the closed form of each schedule") {
    // Narayanan et al. 2021 Sec. 2.2: bubble time fraction (p - 1) / m for GPipe and 1F1B, (p - 1) / (m v) for
    // the interleaved schedule. Checked on the closed form and on the full model's step breakdown (exact).
    for (auto [pp, vpp, gb] : {std::tuple{2, 1, 64}, std::tuple{4, 1, 64}, std::tuple{8, 1, 32}, std::tuple{4, 2, 64},
                               std::tuple{8, 4, 64}}) {
        for (auto sched : {pipeline_schedule::one_f_one_b, pipeline_schedule::gpipe, pipeline_schedule::interleaved}) {
            if ((sched == pipeline_schedule::interleaved) != (vpp > 1)) continue;
            const auto j = llama8b({.dp = 1, .tp = 1, .pp = pp, .vpp = vpp, .schedule = sched}, 1, gb);
            const double m = static_cast<double>(j.micro_batches());
            const double closed = (pp - 1.0) / (m * vpp);
            CHECK(megatron_pipeline::bubble_fraction(j.parallel, j.micro_batches()) == Approx(closed).epsilon(1e-15));
            const auto b = step_time_model{}.predict(j, cat.at("a100-80g"), {}).parts;
            const double ideal = m * b.micro_batch;
            CHECK((b.pipeline - ideal) / ideal == Approx(closed).epsilon(1e-12));
        }
    }
    CHECK(megatron_pipeline::bubble_fraction({.pp = 1}, 8) == 0);
}

TEST_CASE("ring collectives move 2(n-1)/n (all-reduce) and (n-1)/n (gather, scatter) of the buffer") {
    const ring_collectives ring{.latency_s = 0};
    const double gb = 1e9;  // 1 GB at 100 GB/s = 10 ms
    CHECK(ring.seconds(collective::all_reduce, gb, 8, 100) == Approx(2.0 * 7 / 8 * 0.01).epsilon(1e-12));
    CHECK(ring.seconds(collective::all_gather, gb, 8, 100) == Approx(7.0 / 8 * 0.01).epsilon(1e-12));
    CHECK(ring.seconds(collective::reduce_scatter, gb, 4, 100) == Approx(3.0 / 4 * 0.01).epsilon(1e-12));
    CHECK(ring.seconds(collective::send_recv, gb, 2, 100) == Approx(0.01).epsilon(1e-12));
    CHECK(ring.seconds(collective::all_reduce, gb, 1, 100) == 0);
}

TEST_CASE("bf16 is not runnable on V100 (no bf16 tensor cores); fp16-mixed is") {
    auto j = llama8b({.dp = 8, .sharding = sharding::optimizer});
    const auto bf = predict_step(j, cat.at("v100-32g"), 8, 0);
    CHECK_FALSE(bf.supported);
    CHECK(bf.reason == "bf16-mixed not supported on v100-32g");
    j.training.precision = precision::fp16_mixed;
    const auto fp = predict_step(j, cat.at("v100-32g"), 8, 0);
    REQUIRE(fp.supported);
    CHECK(fp.tokens_per_s > 0);
}

TEST_CASE("reported tokens/s, MFU and step time are consistent") {
    const auto j = llama8b({.dp = 4, .tp = 2, .sequence_parallel = true, .sharding = sharding::optimizer,
                            .recompute = recompute::selective}, 2, 64);
    const auto& g = cat.at("h100-80g");
    const auto e = predict_step(j, g, 8, 0);
    REQUIRE(e.supported);
    CHECK(e.tokens_per_s * e.step_time.value == Approx(64.0 * 4096).epsilon(1e-12));
    CHECK(e.tokens_per_s_per_gpu == Approx(e.tokens_per_s / 8).epsilon(1e-12));
    // MFU convention: model FLOPs (forward + backward, no recompute) per token x tokens/s / (GPUs x peak)
    CHECK(e.mfu == Approx(model_flops_per_token(j.model, 4096) * e.tokens_per_s / (8 * 989e12)).epsilon(1e-12));
    // plausible range for a calibrated model on H100 (published Megatron/llm-foundry MFUs are 30-60%)
    CHECK(e.mfu > 0.25);
    CHECK(e.mfu < 0.65);
    // the step is the sum of its parts
    const auto& b = e.parts;
    CHECK(b.total == Approx(b.pipeline + b.dp_exposed + b.param_gather + b.optimizer).epsilon(1e-12));
}

TEST_CASE("tensor parallelism over PCIe costs more than over NVLink by the bandwidth ratio") {
    // a100-80g (NVLink3, 600 GB/s) and a100-80g-pcie (PCIe4, 64 GB/s) share peak and efficiency: the tp
    // collective time scales with 1/bandwidth (latency set to 0 to compare volumes exactly).
    const auto j = llama8b({.dp = 1, .tp = 8}, 1, 8);
    basic_step_time_model<calibrated_compute, ring_collectives> model({}, ring_collectives{.latency_s = 0});
    const auto nv = model.predict(j, cat.at("a100-80g"), {8, 0}).parts;
    const auto pc = model.predict(j, cat.at("a100-80g-pcie"), {8, 0}).parts;
    CHECK(nv.compute_mb == Approx(pc.compute_mb).epsilon(1e-12));
    CHECK(pc.tp_mb / nv.tp_mb == Approx(600.0 / 64.0).epsilon(1e-12));
    // volume: 32 layers x 4 all-reduces of s x h x 2 bytes, ring factor 2 x 7/8, at 0.75 x 600/2 GB/s
    const double expect = 32 * 4 * (2.0 * 7 / 8) * (4096.0 * 4096 * 2) / (0.75 * 300e9);
    CHECK(nv.tp_mb == Approx(expect).epsilon(1e-12));
}

TEST_CASE("data-parallel traffic: all-reduce of the gradients, FSDP gathers per micro-batch, across nodes") {
    basic_step_time_model<calibrated_compute, ring_collectives> model({}, ring_collectives{.latency_s = 0});
    const auto& g = cat.at("a100-80g");
    // 16 GPUs on 2 nodes of 8 at 200 GB/s per node: a dp group filling both nodes gets 0.9 x 200 GB/s
    const auto ddp = model.predict(llama8b({.dp = 16}, 1, 64), g, {8, 200}).parts;
    const double params = detail::stage_parameters(preset("llama-3.1-8b"), {.dp = 16}, 4096);
    CHECK(params == Approx(8.03e9).epsilon(2e-3));  // whole model on one stage
    CHECK(ddp.dp_sync == Approx(2.0 * 15 / 16 * params * 2 / (0.9 * 200e9)).epsilon(1e-12));
    const auto fsdp = model.predict(llama8b({.dp = 16, .sharding = sharding::full}, 1, 64), g, {8, 200}).parts;
    CHECK(fsdp.shard_mb == Approx(3.0 * 15 / 16 * params * 2 / (0.9 * 200e9)).epsilon(1e-12));
    CHECK(fsdp.dp_sync == 0);
    // one node: NVLink (0.75 x 300 GB/s)
    const auto one = model.predict(llama8b({.dp = 8}, 1, 64), g, {8, 200}).parts;
    CHECK(one.dp_sync == Approx(2.0 * 7 / 8 * params * 2 / (0.75 * 300e9)).epsilon(1e-12));
}

TEST_CASE("optimizer step is a memory-bandwidth pass over the states") {
    // AdamW, bf16-mixed: bf16 weight 2 + fp32 master 4 + m, v 8 + fp32 main grad 4 = 18 bytes, read and written
    CHECK(detail::optimizer_pass_bytes(precision::bf16_mixed, optimizer_kind::adamw) == 36);
    CHECK(detail::optimizer_pass_bytes(precision::fp32, optimizer_kind::adam) == 2 * (4 + 8 + 4));
    const auto& g = cat.at("h100-80g");
    const auto none = step_time_model{}.predict(llama8b({.dp = 8}), g, {}).parts;
    const auto zero1 = step_time_model{}.predict(llama8b({.dp = 8, .sharding = sharding::optimizer}), g, {}).parts;
    CHECK(none.optimizer == Approx(8.03e9 * 36 / (0.8 * 3350e9)).epsilon(3e-3));
    CHECK(zero1.optimizer == Approx(none.optimizer / 8).epsilon(1e-12));
}

TEST_CASE("larger GEMMs run closer to peak; recompute costs time") {
    const auto& g = cat.at("a100-40g");
    const auto small = predict_step(llama8b({.dp = 8}, 1, 64), g, 8, 0);
    const auto big = predict_step(llama8b({.dp = 8}, 4, 64), g, 8, 0);
    CHECK(big.parts.compute_mb / 4 < small.parts.compute_mb);
    const auto full = predict_step(llama8b({.dp = 8, .recompute = recompute::full}, 1, 64), g, 8, 0);
    CHECK(full.step_time > small.step_time);
    CHECK(full.mfu < small.mfu);
}
