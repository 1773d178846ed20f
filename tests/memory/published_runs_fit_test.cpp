// "Will it fit?" on runs that ran: every row of data/throughput/*.csv is a published or measured training run that
// completed on the stated GPUs with the stated layout and micro-batch (the FSDP rows at the largest micro-batch
// that fitted: llm-foundry's benchmark sweep, torchtitan's and this project's H200 grids). MARP must not call them
// "does not fit".
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "frenzy/hw/gpu.hpp"
#include "frenzy/io/throughput_csv.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/train/attention.hpp"

using namespace frenzy;

namespace {
struct ran_row {
    std::string id, framework;
    fit_verdict verdict;
    double allocated, capacity;
};

std::vector<ran_row> ran_rows() {
    const gpu_catalog cat;
    const memory_estimator est;
    std::vector<ran_row> out;
    for (const auto& entry : std::filesystem::directory_iterator(std::string(FRENZY_DATA_DIR) + "/throughput")) {
        if (entry.path().extension() != ".csv") continue;
        std::ifstream in(entry.path());
        for (const auto& s : read_throughput_csv(in, entry.path().filename().string(), cat)) {
            const auto& g = cat.at(s.gpu);
            const auto r = est.estimate(job_on(s.job, g));
            out.push_back({entry.path().filename().string() + ":" + s.id, std::string(s.job.runtime.framework.name()),
                           check_fit(r, g).verdict, r.peak_allocated.value, usable_memory(g, 0.0).value});
        }
    }
    return out;
}
}  // namespace

TEST_CASE("runs that ran are called fits or tight: every FSDP row, 95% of all") {
    const auto rows = ran_rows();
    REQUIRE(rows.size() >= 190);  // 130 llm-foundry, 31 torchtitan/FSDP2, 38 Megatron/NeMo rows on 2026-12-04
    std::map<std::string, int> total, refused;
    for (const auto& r : rows) {
        ++total[r.framework];
        if (r.verdict == fit_verdict::does_not_fit) {
            ++refused[r.framework];
            std::printf("does not fit: %s (%s)\n", r.id.c_str(), r.framework.c_str());
        }
        // The FSDP stacks (llm-foundry's benchmark sweep, torchtitan, the H200 grid) ran at the largest micro-batch
        // that fitted: never "does not fit", and the central allocated peak within the card (the caching allocator
        // flushes its cache before it raises out-of-memory, so the allocated peak is the one that must fit).
        // wild_2026-12.csv (held-out step-time rows of issue 52) is checked in the test case below.
        if ((r.framework == "llm-foundry" || r.framework == "fsdp") && r.id.rfind("wild_", 0) != 0) {
            INFO(r.id);
            CHECK(r.verdict != fit_verdict::does_not_fit);
            CHECK(r.allocated <= r.capacity);
        }
    }
    int all = 0, bad = 0;
    for (const auto& [fw, n] : total) {
        all += n;
        bad += refused[fw];
        std::printf("%-12s %3d runs, %d called does-not-fit\n", fw.c_str(), n, refused[fw]);
    }
    // Issue 23's acceptance: at least 95% of runs that ran are called fits or tight. The Megatron/NeMo rows that
    // are not (H100 NeMo performance-page layouts, printed above) are the known gap, docs/memory-model.md.
    CHECK(all - bad >= 0.95 * all);
}

TEST_CASE("runs that ran: the held-out 2026 rows MARP refuses today are the known ones") {
    // wild_2026-12.csv (issue 52): its expressible rows ran; MARP calls these does-not-fit today. torchtitan's
    // 2-layer Llama 4 Scout at micro-batch 8 x 8192 tokens (202,048-entry vocabulary, compiled loss) on B200, and
    // llm.q's Qwen2.5 runs on 24 GB RTX 4090s (its own CUDA engine: bf16 optimizer states, fused kernels, modelled
    // with DDP's and DeepSpeed's profiles). Memory-model gaps named for the issue that takes them up.
    std::set<std::string> refused;
    int wild = 0;
    for (const auto& r : ran_rows()) {
        if (r.id.rfind("wild_", 0) != 0) continue;
        ++wild;
        if (r.verdict == fit_verdict::does_not_fit) refused.insert(r.id);
    }
    CHECK(wild == 25);
    for (const auto& id : refused) std::printf("held-out row called does-not-fit: %s\n", id.c_str());
    CHECK(refused == std::set<std::string>{
        "wild_2026-12.csv:ao_moe_b200_bf16",
        "wild_2026-12.csv:ao_moe_b200_mxfp8_both",
        "wild_2026-12.csv:llmq_4090x1_q05_bf16",
        "wild_2026-12.csv:llmq_4090x1_q05_fp8",
        "wild_2026-12.csv:llmq_4090x1_q15_bf16",
        "wild_2026-12.csv:llmq_4090x1_q15_fp8",
        "wild_2026-12.csv:llmq_4090x4_q05_bf16"});
}
