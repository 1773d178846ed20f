// MARP against the grid measured on one H200 (data/memory/h200_measured.csv, scripts/measure/fsdp2_grid.py):
// torchtitan's FSDP2 mechanism on PyTorch 2.11, Llama 3.2 1B / 3B and Llama 3.1 8B, sequence 2048-8192,
// micro-batch 1-8, no / selective / full recompute, fused and foreach AdamW; every row read as the table states it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "frenzy/hw/gpu.hpp"
#include "frenzy/io/measurements_csv.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;

namespace h200_grid {
std::vector<memory_measurement> fsdp2_rows() {
    auto rows = read_memory_measurements(std::string(FRENZY_DATA_DIR) + "/memory/h200_measured.csv");
    std::erase_if(rows, [](const memory_measurement& m) { return m.id.rfind("h200-fsdp2-", 0) != 0; });
    return rows;
}
/// CUDA's total memory of the card the grid ran on (torch.cuda.mem_get_info, data/measured/h200_2026-12-04).
constexpr double card_bytes = 150109880320.0;
}  // namespace h200_grid

TEST_CASE("MARP against the H200 FSDP2 grid: allocated and reserved peaks") {
    const memory_estimator est;
    const auto rows = h200_grid::fsdp2_rows();
    REQUIRE(rows.size() == 84);  // 31 + 11 runs that fitted, two metrics each
    double worst = 0;
    std::size_t compared = 0;
    for (const auto& m : rows) {
        const double p = compared_prediction(est.estimate(m.job), m);
        const double err = p / m.measured.value - 1.0;
        INFO(m.id << " (" << m.label << ", seq " << m.job.training.seq_len << ", mb " << m.job.training.micro_batch
                  << "): measured " << m.measured.value / GiB << " GiB, predicted " << p / GiB);
        // A reserved peak within 4% of the card is the caching allocator at its limit: it released its cache and
        // retried (num_alloc_retries 8-32 in data/measured/h200_2026-12-04/fsdp2_runs.jsonl), so the figure is the
        // card, not the job. Those runs fitted: the allocated prediction must say so.
        if (m.metric == memory_metric::reserved && m.measured.value >= 0.96 * h200_grid::card_bytes) {
            CHECK(est.estimate(m.job).peak_allocated.value < h200_grid::card_bytes);
            continue;
        }
        std::printf("%-28s %-9s %8.2f G %8.2f G %+6.1f%%\n", m.id.c_str(), to_string(m.metric),
                    m.measured.value / GiB, p / GiB, 100 * err);
        // The bound: under-prediction at most 5% (one row, 3B with full recompute at mb 1, is -3.8%: the first
        // layer's recompute overlaps the loss backward's buffers) and over-prediction at most 10% (the 1B rows at
        // micro-batch 1-2 are +7..+10%: their peak is small, 20-26 GiB, and 2 GiB of gathered-unit and workspace
        // terms weigh most there). Before the fused-RMSNorm, no-repeat-kv and fused-AdamW readings these rows were
        // +13..+23% allocated and up to +44% reserved.
        CHECK(err >= -0.05);
        CHECK(err <= 0.10);
        worst = std::max(worst, std::fabs(err));
        ++compared;
    }
    CHECK(compared >= 70);
    std::printf("%zu rows compared, worst |error| %.1f%%\n", compared, 100 * worst);
}

TEST_CASE("MARP calls the H200 runs that ran out of memory: the measured job with the one change that broke it") {
    const memory_estimator est;
    const auto rows = h200_grid::fsdp2_rows();
    auto find = [&](const char* id) {
        const auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& m) { return m.id == id; });
        REQUIRE(it != rows.end());
        return it->job;
    };
    // Row 26 (8B, seq 8192, mb 2, full recompute, fused AdamW) ran; mb 4 ran out of memory (fsdp2_runs.jsonl line 32).
    auto mb4 = find("h200-fsdp2-26a");
    CHECK(est.estimate(mb4).peak_allocated.value < h200_grid::card_bytes);
    mb4.training.micro_batch = 4;
    mb4.training.global_batch = 4;
    CHECK(est.estimate(mb4).peak_allocated.value > h200_grid::card_bytes);
    // Row 24 (8B, seq 4096, mb 1, full recompute) ran with fused AdamW; foreach AdamW ran out of memory (line 33):
    // its sqrt(v) for the whole group is one more fp32 copy of the 8B parameters (memory/overheads.hpp step_scratch).
    auto foreach_adam = find("h200-fsdp2-24a");
    CHECK(est.estimate(foreach_adam).peak_allocated.value < h200_grid::card_bytes);
    foreach_adam.runtime.optimizer = optimizer_impl::foreach;
    CHECK(est.estimate(foreach_adam).peak_allocated.value > h200_grid::card_bytes);
}

TEST_CASE("MARP against the H200 Hugging Face grid (framework hf): LoRA and full fine-tuning") {
    // transformers 5.17 LlamaForCausalLM in a Trainer-style loop, PEFT 0.21 LoRA r=16 on every linear with dropout
    // 0.05, full fine-tuning in pure bf16 and in fp32 + bf16 autocast, gradient checkpointing on and off
    // (scripts/measure/hf_peft_grid.py). Read as the table states it: the framework column names Hugging Face.
    const memory_estimator est;
    auto rows = read_memory_measurements(std::string(FRENZY_DATA_DIR) + "/memory/h200_measured.csv");
    std::erase_if(rows, [](const memory_measurement& m) { return m.id.rfind("h200-hf-", 0) != 0; });
    REQUIRE(rows.size() == 58);  // 29 runs x allocated, reserved
    for (const auto& m : rows) {
        REQUIRE(m.job.runtime.framework == frameworks::hf::handle);
        const double p = compared_prediction(est.estimate(m.job), m);
        const double err = p / m.measured.value - 1.0;
        INFO(m.id << " (" << m.label << ", seq " << m.job.training.seq_len << ", mb " << m.job.training.micro_batch
                  << ", " << to_string(m.job.training.finetune.method) << "): measured " << m.measured.value / GiB
                  << " GiB, predicted " << p / GiB);
        std::printf("%-16s %-9s %8.2f G %8.2f G %+6.1f%%\n", m.id.c_str(), to_string(m.metric),
                    m.measured.value / GiB, p / GiB, 100 * err);
        if (m.metric == memory_metric::allocated) {
            // Every mechanism derived from the code (PEFT's casting adapters, autocast's weight copies, the eager
            // LlamaRMSNorm, fused AdamW): -5.8% (1B full fine-tuning in fp32 + autocast, mb 4) .. +2.7%.
            CHECK(err >= -0.06);
            CHECK(err <= 0.04);
        } else {
            // The reserved model (0.15 of the activations left cached) is the known gap here: gradient
            // checkpointing's recompute churn leaves 5-8 GiB cached on full fine-tuning (-15.0 .. -17.6% on rows
            // 18, 20, 24) and LoRA without it is +7..+11%. Bounded as measured so that a change shows.
            CHECK(err >= -0.18);
            CHECK(err <= 0.12);
        }
    }
}

TEST_CASE("the fit rule on the H200 grid: every FSDP2 run that ran is not called does-not-fit, the two that did not are") {
    // Verdicts against the catalog's h200 (140.4 GiB, 5% kept free): the reserved peaks of the 8B runs are predicted
    // above the card while their allocated peaks fit, which is what the measured allocator did (memory/fit.hpp).
    const memory_estimator est;
    const auto h200 = gpu_catalog{}.at("h200");
    std::size_t flushes = 0;
    for (const auto& m : h200_grid::fsdp2_rows()) {
        if (m.metric != memory_metric::allocated) continue;
        const auto f = check_fit(est.estimate(m.job), h200);
        INFO(m.id << ": " << to_string(f.verdict) << ", reserved " << f.central.value / GiB << " GiB, allocated x band "
                  << f.allocated_required.value / GiB << " GiB, usable " << f.capacity.value / GiB);
        CHECK(f.verdict != fit_verdict::does_not_fit);
        flushes += f.cache_flushes ? 1 : 0;
    }
    CHECK(flushes >= 5);  // rows 26, 28, 30, 31 and the 8B 8192 ones: predicted reserved 139.8-156.5 GiB
    const auto rows = h200_grid::fsdp2_rows();
    const auto job_of = [&](const char* id) {
        return std::find_if(rows.begin(), rows.end(), [&](const auto& m) { return m.id == id; })->job;
    };
    auto mb4 = job_of("h200-fsdp2-26a");
    mb4.training.micro_batch = mb4.training.global_batch = 4;
    CHECK(check_fit(est.estimate(mb4), h200).verdict == fit_verdict::does_not_fit);
    auto foreach_adam = job_of("h200-fsdp2-24a");
    foreach_adam.runtime.optimizer = optimizer_impl::foreach;
    CHECK(check_fit(est.estimate(foreach_adam), h200).verdict == fit_verdict::does_not_fit);
}

TEST_CASE("the hf framework runs what Trainer runs: data parallel, whole-layer checkpointing, no selective recompute, sharded back ends") {
    job_spec j;
    j.model = preset("llama-3.2-1b");
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 8};
    j.runtime.framework = frameworks::hf::handle;
    j.parallel = {.dp = 8, .recompute = recompute::full};
    CHECK_NOTHROW(validate(j));
    j.parallel.recompute = recompute::selective;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("parallel.recompute=\"selective\"") && Catch::Contains("hf"));
    j.parallel = {.dp = 4, .tp = 2};
    CHECK_THROWS_WITH(validate(j), Catch::Contains("data parallel only"));
    // sharded layouts run accelerate's back ends (frameworks/hf/traits.hpp backend_of; tests/memory/hf_sharded_test.cpp)
    j.parallel = {.dp = 8, .sharding = sharding::full};
    CHECK_NOTHROW(validate(j));
}

TEST_CASE("MARP against the H200 llm-foundry grid: MPT on FSDP1 with flash-attn's cross entropy") {
    // scripts/measure/mpt_fsdp1_grid.py: MPT-125m..3b at the llm-foundry benchmark tables' micro-batches, one GPU
    // (FSDP1 runs NO_SHARD at world size 1), no and full recompute, the fused loss (13 runs) and the upcast one (2).
    const memory_estimator est;
    auto rows = read_memory_measurements(std::string(FRENZY_DATA_DIR) + "/memory/h200_measured.csv");
    std::erase_if(rows, [](const memory_measurement& m) { return m.id.rfind("h200-mpt-", 0) != 0; });
    REQUIRE(rows.size() == 30);
    for (const auto& m : rows) {
        REQUIRE(m.job.runtime.framework == frameworks::llm_foundry::handle);
        const double p = compared_prediction(est.estimate(m.job), m);
        const double err = p / m.measured.value - 1.0;
        INFO(m.id << " (seq " << m.job.training.seq_len << ", mb " << m.job.training.micro_batch << "): measured "
                  << m.measured.value / GiB << " GiB, predicted " << p / GiB);
        std::printf("%-16s %-9s %8.2f G %8.2f G %+6.1f%%\n", m.id.c_str(), to_string(m.metric), m.measured.value / GiB,
                    p / GiB, 100 * err);
        if (m.metric == memory_metric::allocated) {
            // -5.6% .. -0.1%. The fused-loss rows are ~1.2 GiB under for a reason of the measurement: the emulated
            // kernel's backward works 2048 rows at a time in fp32 (3 x 2048 x 50368 x 4 B transients), which the
            // Triton kernel, working in on-chip memory, does not allocate; the upcast rows are within 0.1%.
            CHECK(err >= -0.06);
            CHECK(err <= 0.03);
        } else if (m.job.parallel.recompute == recompute::none) {
            // -9.6% .. +5.4% with FSDP1's post-backward stream holding the fp32 gradients (side_stream_all_reduce).
            CHECK(err >= -0.10);
            CHECK(err <= 0.06);
        } else {
            // Full recompute leaves 6-15 GiB more cached than the model says (-16 .. -20%; the allocated peaks are
            // right): the known reserved gap, docs/memory-model.md. Bounded as measured so that a change shows.
            CHECK(err >= -0.21);
            CHECK(err <= 0.0);
        }
    }
    // The loss by implementation: the same MPT-125m job with the upcast loss needed 18.8 GiB more (46.27 against
    // 27.44 GiB allocated), as saved fp32 log-softmax and fp32 backward temporaries over 53,248 x 50,368 logits.
    const auto find = [&](const char* id) {
        return *std::find_if(rows.begin(), rows.end(), [&](const auto& m) { return m.id == id; });
    };
    const auto fused = find("h200-mpt-01a"), upcast = find("h200-mpt-13a");
    const double measured = upcast.measured.value - fused.measured.value;
    const double predicted = est.estimate(upcast.job).peak_allocated.value - est.estimate(fused.job).peak_allocated.value;
    CHECK(predicted == Approx(measured).epsilon(0.08));
}
