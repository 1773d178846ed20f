// The attention kernel a job runs on a GPU type (train/attention.hpp): flash-style kernels need compute capability
// 8.0+, each framework's fallback below it, explicit kernels refused where they cannot run; the memory and step-time
// models see the resolved kernel; V100 and T4 plans never use flash attention (issue 25).
#include <catch2/catch.hpp>

#include "frenzy/model/presets.hpp"
#include "frenzy/plan/estimate.hpp"
#include "frenzy/plan/planner.hpp"
#include "frenzy/train/attention.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace attention_kernels {
const gpu_type& gpu(const char* name) {
    static const gpu_catalog catalog;  // the types live as long as the tests
    return catalog.at(name);
}

job_spec small_job(framework fw) {
    job_spec j;
    j.model = preset("gpt3-1.3b");
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 8, .precision = precision::fp16_mixed};
    j.runtime.framework = fw;
    return j;
}
}  // namespace attention_kernels
using namespace attention_kernels;

TEST_CASE("compute capability and flash attention by chip (NVIDIA's CUDA GPU table)") {
    CHECK(gpu("v100-32g").compute_capability() == 70);
    CHECK(gpu("t4").compute_capability() == 75);
    CHECK(gpu("a100-80g").compute_capability() == 80);
    CHECK(gpu("l40s").compute_capability() == 89);
    CHECK(gpu("h100-80g").compute_capability() == 90);
    CHECK(gpu("b200").compute_capability() == 100);
    for (const char* n : {"p100-16g", "v100-16g", "v100-32g", "t4", "rtx-2080ti", "titan-rtx"}) {
        INFO(n);
        CHECK_FALSE(gpu(n).flash_attention());
    }
    for (const char* n : {"a10", "a100-40g", "rtx-4090", "l4", "h100-80g", "h200", "b200", "gb300", "mi300x"}) {
        INFO(n);
        CHECK(gpu(n).flash_attention());
    }
    // a type of no known chip: bf16 tensor cores (every such NVIDIA part is sm80+) decide
    gpu_type custom = gpu("a100-80g");
    custom.chip.clear();
    CHECK(custom.flash_attention());
    custom.bf16_tflops = 0;
    CHECK_FALSE(custom.flash_attention());
}

TEST_CASE("auto resolves to flash on sm80+ and to the framework's fallback below") {
    CHECK(attention_on(small_job(frameworks::megatron::handle), gpu("a100-80g")) == attention_impl::flash);
    CHECK(attention_on(small_job(frameworks::megatron::handle), gpu("v100-32g")) == attention_impl::unfused);
    CHECK(attention_on(small_job(frameworks::fsdp::handle), gpu("t4")) == attention_impl::memory_efficient);
    CHECK(attention_on(small_job(frameworks::hf::handle), gpu("v100-32g")) == attention_impl::memory_efficient);
    auto j = small_job(frameworks::fsdp::handle);
    j.runtime.attention = attention_impl::unfused;  // asked for by name: kept
    CHECK(attention_on(j, gpu("h100-80g")) == attention_impl::unfused);
}

TEST_CASE("a kernel the type or framework cannot run is refused with the field named") {
    auto j = small_job(frameworks::megatron::handle);
    j.runtime.attention = attention_impl::flash;
    CHECK_THROWS_WITH(job_on(j, gpu("v100-32g")), Contains("runtime.attention=\"flash\"") && Contains("v100-32g is 7.0") &&
                                                      Contains("\"unfused\""));
    CHECK_THROWS_WITH(estimate(j, &gpu("t4")), Contains("t4 is 7.5"));
    j.runtime.attention = attention_impl::memory_efficient;
    CHECK_THROWS_WITH(validate(j), Contains("runtime.attention=\"memory-efficient\"") && Contains("megatron"));
}

TEST_CASE("the memory model sees the kernel the type runs: unfused keeps the scores") {
    // Megatron on V100 runs Transformer Engine's unfused attention: per layer and micro-batch it keeps the softmax
    // output (2 B), the dropout mask (1 B) and the dropout output (2 B) of every a x s x s score (GPT-3 XL: 16 heads), where flash keeps
    // its fp32 log-sum-exp (4 B x a x s) (memory/activations.hpp, Korthikanti et al. 2022 eq. 1).
    const auto j = small_job(frameworks::megatron::handle);
    const auto v = estimate(j, &gpu("v100-32g"));
    const auto a = estimate(j, &gpu("a100-80g"));
    CHECK(v.job.runtime.attention == attention_impl::unfused);
    CHECK(a.job.runtime.attention == attention_impl::flash);
    const double heads = 16, s = 2048, layers = 24;
    const double per_layer = heads * s * s * (2 + 1 + 2) - 4 * heads * s;
    const double dv = v.memory.stages[0].breakdown.activations.value - a.memory.stages[0].breakdown.activations.value;
    CHECK(dv == Approx(layers * per_layer).epsilon(1e-9));
}

TEST_CASE("unfused attention's score traffic and batched GEMMs in the step time") {
    // Per token and layer on one GPU: a/tp x s scores, 16-bit; forward 3 x 2 B + dropout (2 x 2 B + 1 B mask),
    // backward 4 x 2 B + dropout's backward (2 x 2 B + 1 B): 11 + 13 = 24 B per score with Megatron's dropout on
    // (perf/step_time.hpp unfused_score_bytes).
    auto j = small_job(frameworks::megatron::handle);
    j.training.precision = precision::bf16_mixed;
    j.parallel = {.tp = 2, .sequence_parallel = true};
    const auto& g = gpu("a100-80g");
    step_time_model t;
    auto fl = j;
    fl.runtime.attention = attention_impl::flash;
    auto un = j;
    un.runtime.attention = attention_impl::unfused;
    const auto bf = t.predict(fl, g, {8, 0}).parts, bu = t.predict(un, g, {8, 0}).parts;
    const double tokens = 2048, layers = 24, scores = 16.0 / 2 * 2048;
    CHECK(bu.memory_bytes_mb == bf.memory_bytes_mb);  // the layer's other element-wise kernels are the same
    CHECK(bu.work.stream_bytes == Approx(layers * tokens * scores * 24).epsilon(1e-9));
    CHECK(bf.work.stream_bytes == 0);
    CHECK(bu.work.unfused_attention);
    CHECK_FALSE(bu.work.te_attention);
    CHECK(bf.work.te_attention);  // Megatron-Core's flash attention is Transformer Engine's fused kernel
}

TEST_CASE("V100 and T4 plans never use flash attention") {
    for (auto fw : {frameworks::megatron::handle, frameworks::fsdp::handle, frameworks::ddp::handle}) {
        cluster_spec c;
        c.nodes = {{"v", "v100-32g", 8, 2}, {"t", "t4", 4, 2}, {"a", "a100-80g", 8, 1}};
        validate(c);
        const auto r = planner{}.plan(small_job(fw), c);
        INFO(to_string(fw));
        REQUIRE(!r.plans.empty());
        int old = 0;
        for (const auto& p : r.plans) {
            const bool pre_ampere = p.gpu == "v100-32g" || p.gpu == "t4";
            old += pre_ampere;
            if (pre_ampere)
                CHECK(p.attention == (fw == frameworks::megatron::handle ? attention_impl::unfused : attention_impl::memory_efficient));
            else
                CHECK(p.attention == attention_impl::flash);
        }
        CHECK(old > 0);
    }
}
