// GPU catalog: the datasheet figures of the types added for issue 11 (each checked against the source cited in
// hw/gpu.hpp), structural rules of the datasheets, and the ordering of predicted speed that the peaks imply.
#include <catch2/catch.hpp>

#include <cmath>

#include "frenzy/hw/gpu.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/perf/step_time.hpp"

using namespace frenzy;

namespace {
const gpu_catalog cat;
}

TEST_CASE("new catalog types carry their datasheet figures") {
    const auto& h200 = cat.at("h200");
    CHECK(h200.mem_bw_GBps == 4800);
    CHECK(h200.fp8_tflops == 1979);
    CHECK(h200.chip == "gh100");
    const auto& nvl = cat.at("h200-nvl");
    CHECK(nvl.bf16_tflops == 835);
    CHECK(nvl.fp8_tflops == 1671);
    CHECK_FALSE(nvl.nvlink());  // the bridge joins 2-4 cards only: node-wide path is PCIe Gen5
    const auto& h20 = cat.at("h20");
    CHECK(h20.bf16_tflops == 148);
    CHECK(h20.fp8_tflops == 296);
    CHECK(h20.mem_bw_GBps == 4000);
    CHECK(cat.at("l40s").fp8_tflops == 733);
    CHECK(cat.at("b200").fp4_tflops == 9000);
    const auto& gb200 = cat.at("gb200");
    CHECK(gb200.fp4_tflops == 10000);
    CHECK(gb200.bf16_tflops == 2500);
    CHECK(gb200.gpus_per_node == 72);  // one NVL72 NVLink domain
    const auto& gb300 = cat.at("gb300");
    CHECK(gb300.fp4_tflops == 15000);
    CHECK(gb300.memory_mib * MiB == Approx(288e9).epsilon(1e-5));  // 288 GB HBM3e
    const auto& mi325 = cat.at("mi325x");
    CHECK(mi325.mem_bw_GBps == 6000);
    CHECK(mi325.memory_mib == 256 * 1024);
    CHECK(mi325.fp8_tflops == Approx(2 * mi325.bf16_tflops).epsilon(1e-3));
    // issue 52: B300 (HGX, DGX B300 datasheet per 8 GPUs) and MI355X (AMD datasheet; 256 CUs x 8,192 fp8 FLOP x 2.4 GHz)
    const auto& b300 = cat.at("b300");
    CHECK(b300.fp4_tflops * 8 == 108000);  // 108 PF fp4 dense per DGX B300
    CHECK(b300.fp8_tflops * 8 * 2 == 72000);  // 72 PF fp8 with sparsity
    CHECK(b300.chip == "gb110");
    CHECK(b300.memory_mib == gb300.memory_mib);  // 288 GB HBM3e, as GB300
    const auto& mi355 = cat.at("mi355x");
    CHECK(mi355.fp8_tflops == Approx(256 * 8192 * 2.4e9 / 1e12).epsilon(1e-4));
    CHECK(mi355.bf16_tflops * 2 == Approx(mi355.fp8_tflops).epsilon(1e-4));
    CHECK(mi355.fp4_tflops == Approx(2 * mi355.fp8_tflops).epsilon(1e-4));
    CHECK(mi355.memory_mib * MiB == Approx(288 * GiB).epsilon(1e-9));
    CHECK(mi355.tdp_w == 1400);
    CHECK(mi355.flash_attention());  // CK flash attention on CDNA
    // L40S and L4 checked against their datasheets (dense = half the sparse headline): L40S 362.05 bf16 / 1,466 fp8
    // sparse, 864 GB/s, 350 W; L4 242 bf16 / 485 fp8 sparse, 300 GB/s, 72 W
    CHECK(cat.at("l40s").bf16_tflops == Approx(362.05).epsilon(1e-3));
    CHECK(cat.at("l40s").tdp_w == 350);
    CHECK(cat.at("l4").bf16_tflops == 121);
    CHECK(cat.at("l4").fp8_tflops == Approx(485.0 / 2).epsilon(2e-3));
    CHECK(cat.at("l4").tdp_w == 72);
}

TEST_CASE("a power cap scales the clocks and so the peaks by the cube root of power, not the bandwidth") {
    auto b200 = cat.at("b200");
    const double bf16 = b200.peak_flops(precision::bf16_mixed), fp8 = b200.peak_flops(precision::fp8_mixed);
    CHECK(b200.clock_scale() == 1.0);  // no cap: the datasheet's peaks, bit for bit
    CHECK(bf16 == b200.bf16_tflops * 1e12);
    b200.power_limit_w = 750;  // of 1,000 W
    CHECK(b200.clock_scale() == Approx(std::cbrt(0.75)));
    CHECK(b200.peak_flops(precision::bf16_mixed) == Approx(0.9086 * bf16).epsilon(1e-4));
    CHECK(b200.peak_flops(precision::fp8_mixed) == Approx(0.9086 * fp8).epsilon(1e-4));
    CHECK(b200.non_gemm_peak_flops(precision::fp8_mixed) == Approx(0.9086 * bf16).epsilon(1e-4));
    CHECK(b200.datasheet_peak_flops(precision::bf16_mixed) == bf16);
    b200.power_limit_w = 1200;  // a cap above the board power changes nothing
    CHECK(b200.clock_scale() == 1.0);
    // a capped fleet is predicted slower, by less than the clock ratio (element-wise work is bandwidth-bound)
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 8192, .micro_batch = 1, .global_batch = 8, .precision = precision::bf16_mixed};
    j.parallel = {.dp = 8, .sharding = sharding::full, .recompute = recompute::selective};
    j.runtime.framework = frameworks::fsdp::handle;
    auto capped = cat.at("b200");
    capped.power_limit_w = 750;
    const double full = predict_step(j, cat.at("b200"), 8, 0).tokens_per_s;
    const double slow = predict_step(j, capped, 8, 0).tokens_per_s;
    CHECK(slow < full);
    CHECK(slow > 0.9086 * full);
}

TEST_CASE("datasheet structure: fp8 = 2 x bf16, fp4 = 2-6 x fp8 and only on Blackwell, every type validates") {
    for (const auto& t : cat.types()) {
        INFO(t.name);
        CHECK_NOTHROW(gpu_catalog::validate(t));
        CHECK_FALSE(t.chip.empty());
        // 2x within 2%: the L40S brief quotes 362.05 bf16 and 733 fp8 dense (2.02x)
        if (t.fp8_tflops > 0 && t.bf16_tflops > 0) CHECK(t.fp8_tflops == Approx(2 * t.bf16_tflops).epsilon(0.02));
        // fp4 GEMMs: NVIDIA Blackwell (NVFP4, MXFP4) and AMD CDNA 4 (MXFP4, MI355X)
        const bool blackwell = t.chip == "gb100" || t.chip == "gb110";
        CHECK((t.fp4_tflops > 0) == (blackwell || t.chip == "cdna4"));
        if (t.fp4_tflops > 0) {
            CHECK(t.fp4_tflops >= 2 * t.fp8_tflops);
            CHECK(t.fp4_tflops <= 6 * t.fp8_tflops);
            CHECK(t.peak_flops(precision::fp4_mixed) == t.fp4_tflops * 1e12);
            CHECK(t.non_gemm_peak_flops(precision::fp4_mixed) == t.bf16_tflops * 1e12);
        }
    }
}

TEST_CASE("predicted speed of one job follows the datasheets across generations") {
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 64};
    j.parallel = {.dp = 8, .sharding = sharding::optimizer};
    auto tps = [&](const char* name) {
        const auto& g = cat.at(name);
        return step_time_model{}.predict(j, g, {g.gpus_per_node == 72 ? 8 : g.gpus_per_node, 0}).tokens_per_s;
    };
    CHECK(tps("gb200") > tps("b200"));      // 2.5 vs 2.25 PF bf16, same bandwidth
    CHECK(tps("b200") > tps("h200"));       // 2.25 vs 0.99 PF
    CHECK(tps("h200") > tps("h100-80g"));   // same chip, 4.8 vs 3.35 TB/s: the element-wise part is faster
    CHECK(tps("h200") < 1.15 * tps("h100-80g"));  // but far less than the bandwidth ratio (compute-bound)
    CHECK(tps("h100-80g") > tps("a100-80g"));
    CHECK(tps("a100-80g") > tps("h20"));    // H20: 148 TFLOPS bf16
    CHECK(tps("mi325x") >= tps("mi300x"));  // same compute, more bandwidth
}
