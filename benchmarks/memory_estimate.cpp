// Time of one MARP estimate (target: under 1 microsecond), for a dense and a pipelined MoE job.
#include <chrono>
#include <cstdio>

#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;

namespace {
template <class F>
double ns_per_call(F&& f, int iters) {
    double sink = 0;
    for (int i = 0; i < iters / 10; ++i) sink += f();  // warm-up
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) sink += f();
    const auto t1 = std::chrono::steady_clock::now();
    if (sink == 42.0) std::puts("");  // keep the results alive
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / iters;
}
}  // namespace

int main() {
    const memory_estimator est;
    job_spec dense;
    dense.model = preset("llama-3.1-8b");
    dense.training = {.seq_len = 8192, .micro_batch = 2, .global_batch = 16};
    dense.parallel = {.dp = 8, .sharding = sharding::optimizer, .recompute = recompute::selective};
    job_spec moe;
    moe.model = {.name = "moe-8x7b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .ffn_hidden = 14336,
                 .activation = activation::swiglu, .vocab = 32000, .bias = false, .moe = {.experts = 8, .top_k = 2}};
    moe.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 64};
    moe.parallel = {.dp = 8, .tp = 2, .pp = 4, .ep = 8, .sequence_parallel = true, .sharding = sharding::optimizer,
                    .recompute = recompute::selective};
    const int iters = 200000;
    const double a = ns_per_call([&] { return est.estimate(dense).peak_allocated.value; }, iters);
    const double b = ns_per_call([&] { return est.estimate(moe).peak_allocated.value; }, iters);
    std::printf("memory_estimate: dense llama-3.1-8b (1 stage): %.0f ns per estimate\n", a);
    std::printf("memory_estimate: MoE 8x7B, pp=4 (4 stages):   %.0f ns per estimate\n", b);
    std::printf("target < 1000 ns: %s\n", (a < 1000 && b < 1000) ? "met" : "missed");
    return 0;
}
