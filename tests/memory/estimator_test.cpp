// The composed estimator: stage layout, composition of the policies, bottleneck, reserved, replaceable policies.
#include <catch2/catch.hpp>

#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;

namespace {
job_spec llama8b_pp4() {
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 32};
    j.parallel = {.dp = 2, .tp = 2, .pp = 4, .sequence_parallel = true, .sharding = sharding::optimizer,
                  .recompute = recompute::selective};
    return j;
}
}  // namespace

TEST_CASE("stage layouts partition the model's parameters") {
    auto j = llama8b_pp4();
    const auto f = profile_of(frameworks::megatron::handle);
    const auto layouts = stage_layouts(j, f);
    REQUIRE(layouts.size() == 4);
    double sum = 0;
    for (const auto& l : layouts) {
        CHECK(l.layers == 8);
        sum += l.params();
    }
    CHECK(layouts.front().first);
    CHECK(layouts.back().last);
    // tp = 2 shards everything but the norms; untied embedding: no duplicate. Sum x tp ~ whole model (norms
    // replicated: 2 x 32 x 4096 x 2 + 4096 extra, < 0.01%).
    auto m = j.model;
    m.vocab = framework_vocab(j, f);
    CHECK(sum * 2 == Approx(total_parameters(m)).epsilon(1e-4));
    // 128256 is already a multiple of 128 x 2.
    CHECK(framework_vocab(j, f) == 128256);
}

TEST_CASE("the peak is the sum of the breakdown, and the bottleneck is the largest stage") {
    const memory_estimator est;
    const auto r = est.estimate(llama8b_pp4());
    REQUIRE(r.stages.size() == 4);
    double worst = 0;
    for (const auto& st : r.stages) {
        CHECK(st.peak_allocated.value == Approx(st.breakdown.total().value));
        worst = std::max(worst, st.peak_allocated.value);
    }
    CHECK(r.peak_allocated.value == Approx(worst));
    CHECK(r.stages[static_cast<std::size_t>(r.bottleneck_stage)].peak_allocated.value == Approx(worst));
    // 1F1B: stage 0 holds 4 micro-batches, the last one 1 (but the loss): in-flight counts are reported.
    CHECK(r.stages[0].in_flight_micro_batches == 4);
    CHECK(r.stages[3].in_flight_micro_batches == 1);
    CHECK(r.peak_reserved >= r.peak_allocated);
}

TEST_CASE("more sharding, recompute and parallelism never increase the peak") {
    const memory_estimator est;
    auto j = llama8b_pp4();
    const double base = est.estimate(j).peak_allocated.value;
    auto k = j;
    k.parallel.recompute = recompute::full;
    CHECK(est.estimate(k).peak_allocated.value < base);
    k = j;
    k.parallel.sharding = sharding::none;
    CHECK(est.estimate(k).peak_allocated.value > base);
    k = j;
    k.training.micro_batch = 2;
    CHECK(est.estimate(k).peak_allocated.value > base);
}

TEST_CASE("the estimator validates the job") {
    auto j = llama8b_pp4();
    j.parallel.tp = 3;
    CHECK_THROWS_AS(memory_estimator{}.estimate(j), config_error);
}

namespace {
// A host's own activation policy: everything offloaded to the CPU.
struct offloaded_activations {
    activation_bytes activations(const job_spec&, const stage_layout&, const framework_profile&) const { return {}; }
};
struct not_a_policy {};
}  // namespace

TEST_CASE("policies are replaceable and checked by concepts") {
    static_assert(ActivationPolicy<offloaded_activations>);
    static_assert(!ActivationPolicy<not_a_policy>);
    static_assert(!ModelStatePolicy<not_a_policy>);
    static_assert(!OverheadPolicy<not_a_policy>);
    const basic_memory_estimator<sharded_model_states, offloaded_activations> est;
    const auto j = llama8b_pp4();
    const auto r = est.estimate(j);
    const auto full = memory_estimator{}.estimate(j);
    for (std::size_t s = 0; s < r.stages.size(); ++s) {
        CHECK(r.stages[s].breakdown.activations.value == 0);
        CHECK(r.stages[s].breakdown.model_states().value == Approx(full.stages[s].breakdown.model_states().value));
    }
}

TEST_CASE("gradient lifetime: persistent buffers vs set_to_none, and the optimizer-step peak") {
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 8};
    j.parallel = {.dp = 8, .sharding = sharding::full, .recompute = recompute::full};
    j.runtime.framework = frameworks::fsdp::handle;
    const memory_estimator est;
    // One micro-batch per step, torch zero_grad(set_to_none): no gradients at the forward/loss peak.
    const auto one = est.estimate(j).stages[0];
    // Two micro-batches: the second forward runs with the first one's gradients accumulated.
    j.training.global_batch = 16;
    const auto two = est.estimate(j).stages[0];
    CHECK(two.peak_allocated.value - one.peak_allocated.value ==
          Approx(two.breakdown.gradients.value).epsilon(1e-9));
    CHECK(two.breakdown.gradients.value == Approx(8.03e9 * 4 / 8).epsilon(0.01));
    // Megatron's grad buffer is always there.
    job_spec m = j;
    m.training.global_batch = 8;
    m.parallel.sharding = sharding::optimizer;
    m.runtime.framework = frameworks::megatron::handle;
    CHECK(est.estimate(m).stages[0].breakdown.gradients.value > 0);
}

TEST_CASE("torch foreach AdamW's step temporary can set the peak, a fused optimizer removes it") {
    job_spec j;
    j.model = preset("llama-3.2-3b");
    j.training = {.seq_len = 512, .micro_batch = 1, .global_batch = 1, .precision = precision::bf16};
    j.parallel = {.recompute = recompute::full};
    j.runtime = {.framework = frameworks::ddp::handle, .loss_chunks = 8};
    const memory_estimator est;
    const auto foreach_peak = est.estimate(j).stages[0];
    j.runtime.optimizer = optimizer_impl::fused;
    const auto fused_peak = est.estimate(j).stages[0];
    const double params = fused_peak.parameters;
    // Pure bf16 AdamW: params 2 + grads 2 + moments 4 bytes; foreach adds sqrt(v): 2 bytes per parameter.
    CHECK(foreach_peak.breakdown.temporary.value - fused_peak.breakdown.temporary.value == Approx(2 * params).epsilon(0.01));
    CHECK(foreach_peak.breakdown.activations.value == 0);  // the step is the peak: activations are gone
    CHECK(foreach_peak.peak_allocated.value == Approx(8 * params + 2 * params + 32.0 * MiB).epsilon(0.01));
}

TEST_CASE("per-GPU parameters of a tensor-parallel shard, by hand") {
    // Megatron toy of data/memory/measured_calibration.csv row 16: h 512, 8 heads, ffn 2048, GELU, biases,
    // LayerNorm, vocab 50688 (padded), tied, learned positions (1024), tp 4.
    job_spec j;
    j.model = {.name = "toy", .layers = 12, .hidden = 512, .heads = 8, .ffn_hidden = 2048, .vocab = 50688,
               .tied_embeddings = true};
    j.training = {.seq_len = 1024, .micro_batch = 4, .global_batch = 32};
    j.parallel = {.dp = 2, .tp = 4};
    const auto l = stage_layouts(j, profile_of(frameworks::megatron::handle)).at(0);
    // attention: QKV 512x1536 + bias 1536 sharded /4, proj 512x512 /4 + replicated bias 512 -> 263,040
    // MLP: 512x2048 + 2048 bias, 2048x512 /4 + replicated bias 512 -> 525,312; two LayerNorms 2,048
    const double layer = 263040 + 525312 + 2048;
    // word embedding 50688 x 512 / 4, positions 1024 x 512 (replicated), final LayerNorm 1,024; tied head: none
    const double expected = 12 * layer + 50688.0 * 512 / 4 + 1024.0 * 512 + 1024;
    CHECK(l.params() == expected);
    CHECK(expected == 16498176);
}

TEST_CASE("optimizer fused into backward: no full set of gradients, no step phase") {
    job_spec j;
    j.model = preset("llama-3.2-3b");
    j.training = {.seq_len = 512, .micro_batch = 1, .global_batch = 1, .precision = precision::bf16};
    j.parallel = {.recompute = recompute::full};
    j.runtime = {.framework = frameworks::ddp::handle, .loss_chunks = 8, .optimizer = optimizer_impl::fused};
    const memory_estimator est;
    const auto fused = est.estimate(j).stages[0];
    j.runtime.optimizer = optimizer_impl::in_backward;
    const auto in_bwd = est.estimate(j).stages[0];
    // With full recompute and a short sequence the fused optimizer's step (params + grads + states) is the peak;
    // in backward, the peak is the forward/loss one without gradients.
    CHECK(fused.breakdown.activations.value == 0);
    CHECK(in_bwd.breakdown.gradients.value == 0);
    CHECK(in_bwd.breakdown.activations.value > 0);
    CHECK(in_bwd.peak_allocated < fused.peak_allocated);
    // It cannot accumulate gradients over micro-batches.
    j.training.global_batch = 2;
    CHECK_THROWS_WITH(est.estimate(j), Catch::Matchers::Contains("in-backward"));
}
