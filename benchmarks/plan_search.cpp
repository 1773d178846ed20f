// Planner search cost: a 70B model over a 12-type catalog, up to 1024 GPUs per plan (issue 11 target: < 10 ms CPU per
// search, every framework), and Megatron's search with mixed plans on (plan_options::mixed: pipelines over two
// types, plan/mixed.hpp), with its ratio to the plain Megatron search of the same run. `bench_plan_search [REPS]
// [FRAMEWORK]`: median of REPS runs, one framework alone if given (`megatron+mixed` for the mixed search).
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
    std::printf("%-15s %8s %8s %10s %12s %10s %10s %8s %8s\n", "framework", "ms", "cpu ms", "layouts", "configs", "mem est", "time est", "plans", "types");
    double megatron_cpu = 0;
    for (int row = 0; row < 4; ++row) {
        const framework fw = row == 1 ? frameworks::deepspeed::handle : row == 2 ? frameworks::fsdp::handle : frameworks::megatron::handle;
        const bool mixed = row == 3;
        const std::string name = std::string(to_string(fw)) + (mixed ? "+mixed" : "");
        if (!only.empty() && only != name) continue;
        job.runtime.framework = fw;
        plan_options opt;
        opt.max_gpus = 1024;
        opt.mixed = mixed;
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
        if (row == 0) megatron_cpu = cpu[cpu.size() / 2];
        std::printf("%-15s %8.1f %8.1f %10lld %12lld %10lld %10lld %8zu %8zu", name.c_str(),
                    ms[ms.size() / 2], cpu[cpu.size() / 2],
                    static_cast<long long>(st.layouts), static_cast<long long>(st.configurations),
                    static_cast<long long>(st.memory_estimates), static_cast<long long>(st.step_estimates), r.plans.size(),
                    12 - r.infeasible.size());
        if (mixed && megatron_cpu > 0)
            std::printf("  (%zu mixed plans; %.1fx the megatron search's CPU time)", r.mixed.size(),
                        cpu[cpu.size() / 2] / megatron_cpu);
        std::printf("\n");
    }
    std::printf("(median of %d runs, wall and process CPU time; configurations = layouts x recompute levels x valid micro-batches, before pruning)\n", reps);
    return 0;
}
