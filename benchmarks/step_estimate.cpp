// Cost of one step-time prediction (target of issue 11: under 1 microsecond): LLaMA-3.1-70B with tp 8, interleaved
// pp 4, dp 32, fp8 on H100, and an FSDP + CP layout, each predicted many times.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "frenzy/model/presets.hpp"
#include "frenzy/perf/step_time.hpp"

int main(int argc, char** argv) {
    using namespace frenzy;
    const int reps = argc > 1 ? std::atoi(argv[1]) : 200000;
    const gpu_catalog cat;
    job_spec a;
    a.model = preset("llama-3.1-70b");
    a.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 1024, .precision = precision::fp8_mixed};
    a.parallel = {.dp = 32, .tp = 8, .pp = 4, .vpp = 5, .sequence_parallel = true, .sharding = sharding::optimizer,
                  .schedule = pipeline_schedule::interleaved};
    a.runtime.tp_comm_overlap = a.runtime.overlap_grad_reduce = true;
    job_spec b = a;
    b.training.precision = precision::bf16_mixed;
    b.training.seq_len = 65536;
    b.training.global_batch = 32;
    b.parallel = {.dp = 4, .cp = 8, .sharding = sharding::full};
    b.runtime.framework = frameworks::fsdp::handle;
    const step_time_model model;
    const auto& g = cat.at("h100-80g");
    double sink = 0;
    for (const auto* j : {&a, &b}) {
        std::vector<double> ns;
        for (int k = 0; k < 5; ++k) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < reps; ++i) sink += model.predict(*j, g, {8, 0}).step_time.value;
            ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / reps);
        }
        std::sort(ns.begin(), ns.end());
        std::printf("%-28s %8.1f ns per predict (median of 5 x %d)\n", j == &a ? "70B tp8 pp4x5 dp32 fp8" : "70B fsdp cp8 seq 65536",
                    ns[2], reps);
    }
    std::printf("(checksum %.3g)\n", sink);
    return 0;
}
