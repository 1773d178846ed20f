// Planner search cost: a 70B model over a 12-type catalog, up to 1024 GPUs per plan (issue 11 target: < 10 ms CPU per
// search, every framework). `bench_plan_search [REPS] [FRAMEWORK]`: median of REPS runs, one framework alone if given.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "frenzy/plan/planner.hpp"

int main(int argc, char** argv) {
    using namespace frenzy;
    const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    const std::string only = argc > 2 ? argv[2] : "";  // one framework alone (for profiling), e.g. `megatron`
    job_spec job;
    // LLaMA-3.1-70B (meta-llama/Llama-3.1-70B config.json)
    job.model = {.name = "llama-3.1-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn_hidden = 28672,
                 .activation = activation::swiglu, .vocab = 128256, .position_embedding = position_embedding::rope,
                 .norm = norm_kind::rmsnorm, .bias = false};
    job.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 1024, .total_tokens = 1.5e13};
    cluster_spec cluster;
    for (const char* t : {"h100-80g", "h200", "a100-80g", "a100-40g", "a100-80g-pcie", "l40s", "rtx-4090", "rtx-3090",
                          "a10", "l4", "v100-32g", "mi300x"})
        cluster.nodes.push_back({t, t, 8, 128});  // 1024 GPUs of each type
    std::printf("70B (seq 4096, global batch 1024) on 12 GPU types x 1024 GPUs, plans up to 1024 GPUs\n");
    std::printf("%-10s %8s %8s %10s %12s %10s %10s %8s %8s\n", "framework", "ms", "cpu ms", "layouts", "configs", "mem est", "time est", "plans", "types");
    for (auto fw : {framework::megatron, framework::deepspeed, framework::fsdp}) {
        if (!only.empty() && only != to_string(fw)) continue;
        job.runtime.framework = fw;
        plan_options opt;
        opt.max_gpus = 1024;
        std::vector<double> ms, cpu;
        plan_stats st;
        plan_result r;
        for (int i = 0; i < reps; ++i) {
            st = {};
            timespec c0{}, c1{};
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);  // CPU time: what a shared, loaded machine does not inflate
            const auto t0 = std::chrono::steady_clock::now();
            r = planner{}.plan(job, cluster, opt, &st);
            ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
            cpu.push_back(1e3 * static_cast<double>(c1.tv_sec - c0.tv_sec) + 1e-6 * static_cast<double>(c1.tv_nsec - c0.tv_nsec));
        }
        std::sort(ms.begin(), ms.end());
        std::sort(cpu.begin(), cpu.end());
        std::printf("%-10s %8.1f %8.1f %10lld %12lld %10lld %10lld %8zu %8zu\n", std::string(to_string(fw)).c_str(),
                    ms[ms.size() / 2], cpu[cpu.size() / 2],
                    static_cast<long long>(st.layouts), static_cast<long long>(st.configurations),
                    static_cast<long long>(st.memory_estimates), static_cast<long long>(st.step_estimates), r.plans.size(),
                    12 - r.infeasible.size());
    }
    std::printf("(median of %d runs, wall and process CPU time; configurations = layouts x recompute levels x valid micro-batches, before pruning)\n", reps);
    return 0;
}
