// Activation terms against Korthikanti et al. 2022 and hand-derived values; in-flight micro-batches per schedule.
#include <catch2/catch.hpp>
#include <limits>

#include "frenzy/memory/activations.hpp"
#include "frenzy/memory/estimator.hpp"

using namespace frenzy;

namespace {
// The paper's 22B GPT (Korthikanti et al. 2022 Table 3): L 48, h 6144, a 64, s 2048, b 4, t 8 (row 44 of
// data/memory/measured_calibration.csv).
job_spec gpt22b() {
    job_spec j;
    j.model = {.name = "gpt-22b", .layers = 48, .hidden = 6144, .heads = 64, .ffn_hidden = 24576, .vocab = 51200};
    j.training = {.seq_len = 2048, .micro_batch = 4, .global_batch = 4, .precision = precision::fp16_mixed};
    j.parallel = {.tp = 8};
    j.runtime = {.framework = frameworks::megatron::handle, .attention = attention_impl::unfused};
    return j;
}
}  // namespace

TEST_CASE("Korthikanti et al. 2022: 22B GPT activations per layer (formula row 44, 0.5%)") {
    auto j = gpt22b();
    const auto f = profile_of(frameworks::megatron::handle);
    const double s = 2048, b = 4, h = 6144, a = 64, t = 8, L = 48;
    // TP only: sbh (10 + 24/t + 5as/(ht)) per layer -> 59.25 GiB for 48 layers.
    const auto tp = layer_activations(j, f, false);
    CHECK(tp.none == Approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t))).epsilon(1e-9));
    CHECK(tp.none * L / GiB == Approx(59.25).epsilon(0.005));
    // TP + SP + selective recompute: 34 sbh / t per layer -> 9.5625 GiB.
    j.parallel.sequence_parallel = true;
    const auto sp = layer_activations(j, f, false);
    CHECK(sp.selective == Approx(s * b * h * 34 / t).epsilon(1e-9));
    CHECK(sp.selective * L / GiB == Approx(9.5625).epsilon(0.005));
    // TP + SP without recompute: sbh (34/t + 5as/(ht)) (paper eq. 4).
    CHECK(sp.none == Approx(s * b * h * (34 / t + 5 * a * s / (h * t))).epsilon(1e-9));
    // Full recompute keeps only the layer input: 2sbh (/t with SP).
    CHECK(sp.full == Approx(2 * s * b * h / t));
}

TEST_CASE("flash attention drops the s^2 terms and keeps an fp32 log-sum-exp") {
    auto j = gpt22b();
    j.runtime.attention = attention_impl::flash;
    const auto f = profile_of(frameworks::megatron::handle);
    const double s = 2048, b = 4, h = 6144, a = 64, t = 8;
    CHECK(layer_activations(j, f, false).none == Approx(s * b * h * (10 + 24 / t) + 4 * a * s * b / t));
}

TEST_CASE("GQA shrinks K and V, SwiGLU stores gate, up and product, no dropout drops the masks") {
    job_spec j;
    // Llama-3-8B-like: h 4096, 32 heads, 8 kv heads, ffn 14336, no dropout (FSDP profile).
    j.model = {.name = "l", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .ffn_hidden = 14336,
               .activation = activation::swiglu, .vocab = 128256, .bias = false};
    j.training = {.seq_len = 8192, .micro_batch = 1, .global_batch = 1};
    j.runtime.framework = frameworks::fsdp::handle;
    j.runtime.compile = true;  // fused elementwise kernels: the eager extras are tested below
    const auto f = profile_of(j);
    const double sb = 8192, h = 4096, kv = 1024, ffn = 14336, a = 32;
    // ln1 in, qkv in, q, k, v, attention out, ln2 in, fc1 in: 2 bytes each; gate+up (2 x ffn) and product (ffn).
    const double expected = 2 * sb * (h + h + h + kv + kv + h + h + h) + 2 * sb * (2 * ffn) + 2 * sb * ffn + 4 * a * sb;
    CHECK(layer_activations(j, f, false).none == Approx(expected));
}

TEST_CASE("torchtitan per-op selective recompute saves every other matmul output") {
    job_spec j;
    j.model = {.name = "l", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .ffn_hidden = 14336,
               .activation = activation::swiglu, .vocab = 128256, .bias = false};
    j.training = {.seq_len = 8192, .micro_batch = 1, .global_batch = 1};
    j.parallel.recompute = recompute::selective;
    j.runtime.framework = frameworks::fsdp::handle;
    const double sb = 8192, h = 4096, kv = 1024, ffn = 14336, a = 32;
    // Saved: block input, wq out (#1), wv out (#3), attention out + lse, w1 out (#5), w2 out (#7).
    const double expected = 2 * sb * (h + h + kv + h + ffn + h) + 4 * a * sb;
    CHECK(layer_activations(j, profile_of(frameworks::fsdp::handle), false).selective == Approx(expected));
}

TEST_CASE("MoE layers store routed tokens for top_k experts") {
    job_spec j;
    j.model = {.name = "moe", .layers = 2, .hidden = 1024, .heads = 8, .ffn_hidden = 4096, .activation = activation::swiglu,
               .vocab = 1000, .bias = false, .moe = {.experts = 8, .top_k = 2, .expert_ffn_hidden = 2048}};
    j.training = {.seq_len = 1024, .micro_batch = 1, .global_batch = 1};
    j.runtime.framework = frameworks::fsdp::handle;
    const auto f = profile_of(frameworks::fsdp::handle);
    const double sb = 1024, h = 1024, k = 2, E = 8, ffn = 2048;
    const double dense = layer_activations(j, f, false).none;
    const double moe = layer_activations(j, f, true).none;
    // Dense MLP (bf16, eager SwiGLU): fc1 input 2sbh, w1|w3 outputs 2 x 2 sb ffn, product 2 sb ffn, eager silu 2 sb ffn.
    const double dense_mlp = 2 * sb * h + 2 * sb * 3 * 4096 + 2 * sb * 4096;
    // MoE MLP (Megatron-Core experts.py): router input 2sbh, fp32 scores + probs 8 sb E, each of the
    // T = sb x top_k x imbalance received tokens: input 2h, fc1 output 2 x 2 ffn, activation output and its product
    // with the probabilities 2 x 2 ffn, eager silu 2 ffn.
    const double T = sb * k * f.moe_imbalance;
    const double moe_mlp = 2 * sb * h + 8 * sb * E + 2 * T * h + 2 * T * 2 * ffn + 2 * 2 * T * ffn + 2 * T * ffn;
    CHECK(moe - dense == Approx(moe_mlp - dense_mlp).epsilon(1e-9));
}

TEST_CASE("an expert capacity caps the routed tokens, padding to capacity fixes them") {
    // Megatron-LM@d98e8a64 moe_utils.py get_capacity / apply_router_token_dropping and token_dispatcher.py
    // drop_and_pad: per expert at most ceil(tokens x top_k / experts x capacity_factor) of a rank's tokens; padded,
    // exactly that many. Relative to balanced routing the received count is min(imbalance, cf), or cf padded.
    job_spec j;
    j.model = {.name = "moe", .layers = 2, .hidden = 1024, .heads = 8, .ffn_hidden = 4096, .activation = activation::swiglu,
               .vocab = 1000, .bias = false, .moe = {.experts = 8, .top_k = 2, .expert_ffn_hidden = 2048}};
    j.training = {.seq_len = 1024, .micro_batch = 1, .global_batch = 1};
    j.runtime.framework = frameworks::megatron::handle;
    const auto f = profile_of(frameworks::megatron::handle);
    REQUIRE(f.moe_imbalance == Approx(1.4));
    // Each received token saves its input (2h), fc1 output (2 x 2 ffn), the activation output and its product with
    // the probabilities (2 x 2 ffn) in bf16: 2h + 8 ffn bytes; the rest of the layer does not depend on T.
    const double per_token = 2 * 1024 + 8 * 2048.0;
    const double sb = 1024, k = 2;
    auto moe_saved = [&](double cf, bool pad) {
        j.model.moe.capacity_factor = cf;
        j.model.moe.pad_to_capacity = pad;
        validate(j.model);
        return layer_activations(j, f, true).none;
    };
    const double dropless = moe_saved(0, false);
    // cf 1.0 drops what exceeds the balanced share: 1.4 -> 1.0 of sb x top_k tokens.
    CHECK(dropless - moe_saved(1.0, false) == Approx(0.4 * sb * k * per_token).epsilon(1e-9));
    // cf 2.0 above the imbalance drops nothing.
    CHECK(moe_saved(2.0, false) == Approx(dropless).epsilon(1e-12));
    // Padded to cf 2.0: every expert receives its full capacity, 2.0 x the balanced share.
    CHECK(moe_saved(2.0, true) - dropless == Approx((2.0 - 1.4) * sb * k * per_token).epsilon(1e-9));
    // The band: padding removes the routing spread (uncertainty_band::moe_padded), dropping does not.
    j.model.moe = {.experts = 8, .top_k = 2, .expert_ffn_hidden = 2048, .capacity_factor = 1.0};
    const double drop_band = memory_uncertainty(j);
    j.model.moe.pad_to_capacity = true;
    CHECK(drop_band - memory_uncertainty(j) == Approx(uncertainty_band{}.moe - uncertainty_band{}.moe_padded));
    // Padding without a capacity, a negative or non-finite capacity, and a capacity on a dense model are errors.
    j.model.moe = {.experts = 8, .top_k = 2, .pad_to_capacity = true};
    CHECK_THROWS_WITH(validate(j.model), Catch::Contains("model.moe.pad_to_capacity"));
    j.model.moe = {.experts = 8, .top_k = 2, .capacity_factor = -1};
    CHECK_THROWS_WITH(validate(j.model), Catch::Contains("model.moe.capacity_factor"));
    j.model.moe = {.experts = 8, .top_k = 2, .capacity_factor = std::numeric_limits<double>::infinity()};
    CHECK_THROWS_WITH(validate(j.model), Catch::Contains("model.moe.capacity_factor"));
    j.model.moe = {.capacity_factor = 1.0};
    CHECK_THROWS_WITH(validate(j.model), Catch::Contains("capacity_factor"));
}

TEST_CASE("micro-batches in flight per schedule") {
    job_spec j;
    j.model = {.name = "m", .layers = 16, .hidden = 512, .heads = 8, .ffn_hidden = 2048, .vocab = 1000};
    j.training = {.seq_len = 128, .micro_batch = 1, .global_batch = 16};
    j.parallel = {.pp = 4};
    // 1F1B: stage s holds pp - s (Narayanan et al. 2021 sec. 2.2.1), capped by m = 16.
    CHECK(in_flight_micro_batches(j, 0) == 4);
    CHECK(in_flight_micro_batches(j, 3) == 1);
    // GPipe: all m micro-batches.
    j.parallel.schedule = pipeline_schedule::gpipe;
    CHECK(in_flight_micro_batches(j, 0) == 16);
    CHECK(in_flight_micro_batches(j, 3) == 16);
    // Interleaved with vpp = 2: stage 0 warms up (pp-1)*2 + (vpp-1)*pp = 10 chunks, +1 in flight = 11 chunks of
    // half a stage: 5.5 stage-micro-batches; last stage: 0*2 + 4 + 1 = 5 chunks -> 2.5.
    j.parallel.schedule = pipeline_schedule::interleaved;
    j.parallel.vpp = 2;
    CHECK(in_flight_micro_batches(j, 0) == Approx(5.5));
    CHECK(in_flight_micro_batches(j, 3) == Approx(2.5));
    // Few micro-batches cap the 1F1B warm-up.
    j.parallel = {.pp = 4};
    j.training.global_batch = 2;
    CHECK(in_flight_micro_batches(j, 0) == 2);
    // No pipeline: one micro-batch at a time (gradient accumulation frees between micro-batches).
    j.parallel = {.pp = 1};
    CHECK(in_flight_micro_batches(j, 0) == 1);
}

TEST_CASE("recompute modes order: none > selective > full, per layer") {
    auto j = gpt22b();
    const auto r = layer_activations(j, profile_of(frameworks::megatron::handle), false);
    CHECK(r.none > r.selective);
    CHECK(r.selective > r.full);
    // Selective (Megatron) removes exactly the 5as^2b/t attention-core terms.
    CHECK(r.none - r.selective == Approx(5.0 * 64 * 2048 * 2048 * 4 / 8));
}

TEST_CASE("eager PyTorch saves an fp32 norm input and silu's output, compile fuses them away") {
    job_spec j;
    j.model = {.name = "l", .layers = 2, .hidden = 1024, .heads = 8, .ffn_hidden = 4096, .activation = activation::swiglu,
               .vocab = 1000, .norm = norm_kind::rmsnorm, .bias = false};
    j.training = {.seq_len = 512, .micro_batch = 2, .global_batch = 2};
    j.runtime.framework = frameworks::fsdp::handle;
    j.runtime.norm_fp32 = true;  // an eager RMSNorm of the model's own (torchtune, HF, torchtitan before 2025-03)
    const double sb = 1024, h = 1024, ffn = 4096;
    const double eager = layer_activations(j, profile_of(j), false).none;
    j.runtime.compile = true;
    const double fused = layer_activations(j, profile_of(j), false).none;
    // Two RMSNorms x (4-byte fp32 copy; the normalised tensor replaces the fused kernel's saved input) + silu out.
    CHECK(eager - fused == Approx(2 * 4 * sb * h + 2 * sb * ffn));
    // torch.nn.RMSNorm on PyTorch >= 2.9 (the fsdp profile's default): one kernel, only the SwiGLU term is eager
    j.runtime.norm_fp32.reset();
    j.runtime.compile = false;
    CHECK(layer_activations(j, profile_of(j), false).none - fused == Approx(2 * sb * ffn));
    j.runtime.norm_fp32 = true;
    // LayerNorm is one native kernel even in eager mode: only the SwiGLU term remains.
    j.model.norm = norm_kind::layernorm;
    j.runtime.compile = false;
    const double ln_eager = layer_activations(j, profile_of(j), false).none;
    j.runtime.compile = true;
    CHECK(ln_eager - layer_activations(j, profile_of(j), false).none == Approx(2 * sb * ffn));
}

TEST_CASE("the loss on the last stage: saved fp32 softmax plus the working set, chunked or not") {
    job_spec j;
    j.model = {.name = "l", .layers = 2, .hidden = 1024, .heads = 8, .ffn_hidden = 4096, .vocab = 32000};
    j.training = {.seq_len = 1024, .micro_batch = 1, .global_batch = 1};
    j.parallel.recompute = recompute::full;  // make the loss the largest transient
    j.runtime.framework = frameworks::fsdp::handle;
    const stage_layout last{.stage = 0, .layers = 2, .first = true, .last = true};
    const double logits = 1024.0 * 32000;
    auto act = [&] { return transformer_activations{}.activations(j, last, profile_of(j)); };
    // Upcast path: fp32 log-softmax saved (4 B); backward holds fp32 grads of its output and input (8 B).
    CHECK(act().transient.value == Approx(8 * logits));
    // Eight chunks: forward holds the bf16 logits and one fp32 chunk: 2 + 4/8 B.
    j.runtime.loss_chunks = 8;
    CHECK(act().transient.value == Approx(2.5 * logits));
    // Megatron's fused vocab-parallel cross entropy: the 16-bit logits beside the in-place fp32 softmax.
    j.runtime = {.framework = frameworks::megatron::handle};
    CHECK(act().transient.value == Approx(2 * logits));
}

TEST_CASE("FSDP with tensor parallelism uses DTensor loss-parallel cross entropy") {
    job_spec j;
    j.model = {.name = "l", .layers = 2, .hidden = 1024, .heads = 8, .ffn_hidden = 4096, .vocab = 32000};
    j.training = {.seq_len = 1024, .micro_batch = 1, .global_batch = 1};
    j.parallel = {.tp = 2, .recompute = recompute::full};
    j.runtime.framework = frameworks::fsdp::handle;
    CHECK(profile_of(j).loss == loss_style::dtensor_loss_parallel);
    const stage_layout last{.stage = 0, .layers = 2, .first = true, .last = true};
    const double logits = 1024.0 * 32000 / 2;  // vocabulary-sharded over tp
    // Backward of the composed log-softmax: grad_out, exp(out) and their product beside the saved output.
    CHECK(transformer_activations{}.activations(j, last, profile_of(j)).transient.value == Approx(12 * logits));
    j.parallel.tp = 1;
    CHECK(profile_of(j).loss == loss_style::upcast_log_softmax);
}

TEST_CASE("flash-attn's fused cross entropy keeps the 16-bit logits and allocates their 16-bit gradient") {
    // llm-foundry's default loss (frameworks/llm_foundry/traits.hpp): Dao-AILab/flash-attention@08124c8f
    // ops/triton/cross_entropy.py saves the logits and an fp32 lse per row; backward allocates the gradient
    // (inplace_backward=False). Hand-derived: stored 2 B and transient 2 B per logit, against the upcast path's
    // 4 B stored (fp32 log-softmax) and 8 B transient (fp32 gradients of its output and input).
    job_spec j;
    j.model = {.name = "l", .layers = 2, .hidden = 1024, .heads = 8, .ffn_hidden = 4096, .vocab = 32000};
    j.training = {.seq_len = 1024, .micro_batch = 1, .global_batch = 1};
    j.parallel.recompute = recompute::full;
    j.runtime.framework = frameworks::llm_foundry::handle;
    const stage_layout last{.stage = 0, .layers = 2, .first = true, .last = true};
    const double logits = 1024.0 * 32000;
    auto act = [&] { return transformer_activations{}.activations(j, last, profile_of(j)); };
    CHECK(profile_of(j).loss == loss_style::fused_cross_entropy);
    const auto fused = act();
    CHECK(fused.transient.value == Approx(2 * logits));
    // The same job with the upcast loss (runtime.loss = "upcast", llm-foundry's loss_fn torch_crossentropy on
    // logits.float()): 2 B more stored per logit.
    j.runtime.loss = loss_style::upcast_log_softmax;
    const auto upcast = act();
    CHECK(upcast.stored.value - fused.stored.value == Approx(2 * logits));
    CHECK(upcast.transient.value == Approx(8 * logits));
}

TEST_CASE("runtime.loss: each framework's own losses only, named in the error") {
    job_spec j;
    j.model = {.name = "l", .layers = 2, .hidden = 1024, .heads = 8, .ffn_hidden = 4096, .vocab = 32000};
    j.training = {.seq_len = 1024, .micro_batch = 1, .global_batch = 1};
    j.runtime.framework = frameworks::megatron::handle;
    j.runtime.loss = loss_style::fused_cross_entropy;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("runtime.loss=\"fused\"") && Catch::Contains("\"vocab-parallel\" only"));
    j.runtime.loss = loss_style::fused_vocab_parallel;
    CHECK_NOTHROW(validate(j));
    j.runtime.framework = frameworks::hf::handle;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("runtime.loss=\"vocab-parallel\"") && Catch::Contains("\"upcast\" or \"fused\""));
    j.runtime.loss = loss_style::dtensor_loss_parallel;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("not a setting"));
    j.runtime.loss = loss_style::fused_cross_entropy;
    CHECK_NOTHROW(validate(j));
    // the Hugging Face stack with flash-attn's loss swapped in: the fused profile term
    CHECK(profile_of(j).loss == loss_style::fused_cross_entropy);
}

namespace {
// A small Llama-style model under transformers' Trainer (runtime.framework "hf": fp32 weights under autocast).
job_spec liger_job() {
    job_spec j;
    j.model = {.name = "l", .layers = 2, .hidden = 1024, .heads = 8, .ffn_hidden = 4096, .activation = activation::swiglu,
               .vocab = 32000, .position_embedding = position_embedding::rope, .norm = norm_kind::rmsnorm, .bias = false};
    j.training = {.seq_len = 1024, .micro_batch = 1, .global_batch = 1};
    j.runtime.framework = frameworks::hf::handle;
    j.runtime.liger = true;
    return j;
}
}  // namespace

TEST_CASE("Liger's fused linear cross-entropy keeps no logits: the head's weight gradient and one chunk instead") {
    // linkedin/Liger-Kernel@ead96b6 ops/fused_linear_cross_entropy.py, hand-derived. sb = 1024 tokens, h = 1024,
    // V = 32000: inc_factor = ceil(V / h) = 32, chunk = next_pow2(ceil(1024 / 32)) = 32 rows of logits.
    auto j = liger_job();
    validate(j);
    const double sb = 1024, h = 1024, v = 32000;
    auto last = [&] { return detail::last_stage_activations(j, profile_of(j)); };
    // bf16-mixed: fp32 weights, so grad_weight = zeros_like(weight) is V x h x 4 B, saved for backward; the final
    // norm's 16-bit input and grad_input (the head's input's place) 2 B each per token x h; no fp32 norm copy (Liger's
    // RMSNorm). Transient: one 32-row chunk of 16-bit logits (the fp32 grad_weight takes addmm's in-place path).
    CHECK(last().first == Approx(2 * sb * h + 2 * sb * h + v * h * 4));
    CHECK(last().second == Approx(32 * v * 2));
    // Pure bf16 (weights bf16): grad_weight is 2 B per element, and each chunk's V x h product and its fp32 copy are
    // allocated (grad_weight += torch.mm(...).float()): 2 + 4 B per element on top of the chunk.
    j.training.precision = precision::bf16;
    CHECK(last().first == Approx(4 * sb * h + v * h * 2));
    CHECK(last().second == Approx(32 * v * 2 + v * h * 6));
    // LoRA: the head is frozen (weight_needs_grad false), so no grad_weight and no product.
    j.training.precision = precision::bf16_mixed;
    j.training.finetune.method = finetune_method::lora;
    CHECK(last().first == Approx(4 * sb * h));
    CHECK(last().second == Approx(32 * v * 2));
    // 3,000 tokens: ceil(3000 / 32) = 94 rows, rounded up to 128.
    j.training.seq_len = 3000;
    CHECK(last().second == Approx(128 * v * 2));
    // Without Liger, the Trainer's loss on logits.float(): the fp32 log-softmax saved (4 B per logit), the final
    // RMSNorm's fp32 input copy (4 B x sb x h), and the backward's fp32 gradients of one chunk (8 B per logit).
    j = liger_job();
    j.runtime.liger = false;
    CHECK(last().first == Approx(2 * sb * h + 4 * sb * h + 2 * sb * h + 4 * sb * v));
    CHECK(last().second == Approx(8 * sb * v));
}

TEST_CASE("Liger's RMSNorm, SwiGLU and RoPE save what the fused kernels save") {
    // ops/rms_norm.py saves X and the row rstd, ops/swiglu.py its two inputs, ops/rope.py cos/sin: against the hf
    // stack's eager layers, 2 RMSNorms x 4 B fp32 copies per token x h and silu's 16-bit output per token x ffn less.
    auto j = liger_job();
    const double sb = 1024, h = 1024, ffn = 4096;
    const double liger = layer_activations(j, profile_of(j), false).none;
    j.runtime.liger = false;
    const double eager = layer_activations(j, profile_of(j), false).none;
    CHECK(eager - liger == Approx(2 * 4 * sb * h + 2 * sb * ffn));
}

TEST_CASE("runtime.liger is refused where Trainer would not apply it, naming the field") {
    auto j = liger_job();
    j.runtime.framework = frameworks::megatron::handle;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("runtime.liger needs runtime.framework=\"hf\""));
    j = liger_job();
    j.model.norm = norm_kind::layernorm;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("model.norm=\"layernorm\""));
    j = liger_job();
    j.runtime.loss = loss_style::upcast_log_softmax;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("contradicts runtime.liger=true"));
    j.runtime.liger = false;
    j.runtime.loss = loss_style::liger_fused_linear;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("runtime.liger=true turns on"));
}
