// FLOP counts of perf/flops.hpp against hand formulas and published figures.
#include <catch2/catch.hpp>

#include "frenzy/model/transformer.hpp"
#include "frenzy/perf/flops.hpp"

using namespace frenzy;

namespace {
// GPT of Narayanan et al. 2021: MHA, 4h GELU MLP, learned positions (no FLOPs), biases ignored by the formula.
transformer_spec gpt(std::int64_t l, std::int64_t h, std::int64_t heads, std::int64_t v) {
    return {.name = "gpt", .layers = l, .hidden = h, .heads = heads, .ffn_hidden = 4 * h, .activation = activation::gelu,
            .vocab = v, .position_embedding = position_embedding::learned, .bias = false};
}
job_spec gpt_job(const transformer_spec& m, std::int64_t s, std::int64_t b, recompute r) {
    job_spec j;
    j.model = m;
    j.training = {.seq_len = s, .micro_batch = b, .global_batch = b};
    j.parallel.recompute = r;
    return j;
}
}  // namespace

TEST_CASE("GPT step FLOPs equal Narayanan et al. 2021 eq. 3 (with and without full recompute)") {
    // eq. 3: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) with activation recomputation; without it the forward is not
    // repeated: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)). Exact up to floating-point rounding (1e-12).
    for (auto [l, h, heads, s, b, v] : {std::tuple{24, 1920, 15, 1024, 8, 51200}, std::tuple{96, 12288, 96, 2048, 1536, 51200},
                                        std::tuple{40, 5120, 40, 4096, 3, 50368}}) {
        const auto m = gpt(l, h, heads, v);
        const double L = l, H = h, S = s, B = b, V = v;
        const double with = 96 * B * S * L * H * H * (1 + S / (6 * H) + V / (16 * L * H));
        const double without = 72 * B * S * L * H * H * (1 + S / (6 * H) + V / (12 * L * H));
        CHECK(step_flops(gpt_job(m, s, b, recompute::full)).total().value == Approx(with).epsilon(1e-12));
        CHECK(step_flops(gpt_job(m, s, b, recompute::none)).total().value == Approx(without).epsilon(1e-12));
        CHECK(step_flops(gpt_job(m, s, b, recompute::none)).model().value == Approx(without).epsilon(1e-12));
    }
}

TEST_CASE("Megatron-LM's published 9.84 GFLOP/token for the 1.2B GPT with recompute") {
    // data/throughput/measured_calibration.csv row 270 metric_definition: "1B row gives 9.84 GFLOP/token"
    // (24 layers, h 1920, s 1024, V 51200). Published to 3 digits: 0.1% tolerance.
    const auto j = gpt_job(gpt(24, 1920, 15, 51200), 1024, 1, recompute::full);
    CHECK(step_flops(j).total().value / j.tokens_per_step() == Approx(9.84e9).epsilon(1e-3));
}

TEST_CASE("dense FLOPs are twice the non-embedding parameters per token (GQA, SwiGLU, MoE)") {
    // Each weight of a linear layer is one multiply-add per token: forward FLOPs without the attention core =
    // 2 x (parameters - word embedding - norms) with no biases, untied output layer. Exact (1e-12).
    transformer_spec llama{.name = "llama-3.1-8b-like", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8,
                           .ffn_hidden = 14336, .activation = activation::swiglu, .vocab = 128256,
                           .position_embedding = position_embedding::rope, .norm = norm_kind::rmsnorm, .bias = false};
    transformer_spec mixtral = llama;  // Mixtral-8x7B: 8 experts of 14336, top-2, 32000 vocab
    mixtral.vocab = 32000;
    mixtral.moe = {.experts = 8, .top_k = 2, .expert_ffn_hidden = 14336};
    for (const auto& m : {llama, mixtral}) {
        const auto c = count_parameters(m, m.vocab, 0);
        const double norms = static_cast<double>(m.layers) * c.layer_norms + c.final_norm;
        const double linear = active_parameters(m, 4096) - c.word_embedding - norms;
        const auto f = forward_flops_per_token(m, 4096);
        CHECK(f.layers_dense() + f.logits == Approx(2 * linear).epsilon(1e-12));
        // attention core: 4 s x heads x head_dim per layer
        CHECK(f.layers_attention() == Approx(32.0 * 4 * 4096 * 4096).epsilon(1e-12));
    }
    // the 8B model's forward is ~2 x 7.5e9 dense FLOPs per token (8.03e9 parameters minus the 0.525e9 embedding)
    CHECK(forward_flops_per_token(llama, 4096).layers_dense() + forward_flops_per_token(llama, 4096).logits ==
          Approx(2 * (8.03e9 - 128256.0 * 4096)).epsilon(2e-3));
}

TEST_CASE("backward is twice the forward, recompute adds the forward of what it recomputes") {
    const auto m = gpt(24, 2048, 16, 50368);
    const auto none = step_flops(gpt_job(m, 2048, 4, recompute::none));
    const auto sel = step_flops(gpt_job(m, 2048, 4, recompute::selective));
    const auto full = step_flops(gpt_job(m, 2048, 4, recompute::full));
    const double tokens = 4.0 * 2048;
    const auto f = forward_flops_per_token(m, 2048);
    CHECK(none.backward.value == Approx(2 * none.forward.value).epsilon(1e-15));
    CHECK(none.recompute.value == 0);
    // selective (Korthikanti et al. 2022): the attention core only: 4 s h per token and layer
    CHECK(sel.recompute.value == Approx(tokens * 24 * 4.0 * 2048 * 2048).epsilon(1e-12));
    // full: every layer's forward (not the logits)
    CHECK(full.recompute.value == Approx(tokens * (f.forward() - f.logits)).epsilon(1e-12));
    CHECK(full.model() == none.model());
    CHECK(full.attention.value == Approx(tokens * 4 * f.layers_attention()).epsilon(1e-12));
}
