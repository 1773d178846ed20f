// runtime.framework "unsloth" (frameworks/unsloth/traits.hpp) against hand derivations from Unsloth's code
// (unslothai/unsloth@015bdef0, unslothai/unsloth-zoo@ce232d6c): offloaded gradient checkpointing and the chunked
// fused cross-entropy.
#include <catch2/catch.hpp>

#include "frenzy/io/job_json.hpp"
#include "frenzy/memory/estimator.hpp"

using namespace frenzy;

namespace {
// A Llama-3.2-1B-shaped model (16 layers, h 2048, GQA 32/8, ffn 8192, vocab 128256, tied) under Unsloth, LoRA.
job_spec unsloth_job() {
    job_spec j;
    j.model = {.name = "u", .layers = 16, .hidden = 2048, .heads = 32, .kv_heads = 8, .ffn_hidden = 8192,
               .activation = activation::swiglu, .vocab = 128256, .tied_embeddings = true,
               .position_embedding = position_embedding::rope, .norm = norm_kind::rmsnorm, .bias = false};
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 1};
    j.training.finetune = {.method = finetune_method::lora};
    j.parallel.recompute = recompute::full;
    j.runtime.framework = find_framework("runtime.framework", "unsloth");
    return j;
}
double unsloth_stored(const job_spec& j, const framework_profile& f) {
    const auto l = stage_layouts(j, f).front();
    return transformer_activations{}.activations(j, l, f).stored.value;
}
}  // namespace

TEST_CASE("unsloth: offloaded checkpoints keep the last layer's input and two staging buffers on the GPU") {
    // unsloth_zoo/gradient_checkpointing.py UnslothCheckpointFunction: every checkpointed input above MINIMUM_SIZE
    // (2 MiB) goes to pinned host memory but the last layer's (LAST_GC_INDEX); GPU_BUFFERS and GPU_BUFFERS_B hold one
    // input each. s x b x h = 2048 x 2048 x 2 B = 8 MiB > 2 MiB: 16 inputs -> 3 inputs' worth stay.
    auto j = unsloth_job();
    validate(j);
    const auto f = profile_of(j);
    CHECK(f.offloaded_checkpoints);
    auto plain = f;
    plain.offloaded_checkpoints = false;
    const double input = 2.0 * 2048 * 2048;
    CHECK(unsloth_stored(j, plain) - unsloth_stored(j, f) == Approx((16 - 3) * input));
    // 256 tokens: 256 x 2048 x 2 B = 1 MiB, not above MINIMUM_SIZE: nothing is offloaded.
    j.training.seq_len = 256;
    CHECK(unsloth_stored(j, plain) == Approx(unsloth_stored(j, f)));
    // Without recompute there is no checkpoint to offload.
    j = unsloth_job();
    j.parallel.recompute = recompute::none;
    CHECK(unsloth_stored(j, plain) == Approx(unsloth_stored(j, f)));
}

TEST_CASE("unsloth: the fused cross-entropy keeps no logits, one chunk sized to a 4 GiB fp32 budget") {
    // unsloth_zoo/fused_losses/cross_entropy_loss.py get_chunk_size with target_gb at its 4 GiB cap: n = 1 when
    // tokens x V x 4 B fit the target, else the multiple of 4 at or above it; torch.chunk rows ceil(tokens / n).
    auto j = unsloth_job();
    const double h = 2048, v = 128256;
    auto last = [&] { return detail::last_stage_activations(j, profile_of(j)); };
    // 2048 tokens: 2048 x 128256 x 4 B = 0.98 GiB <= 4 GiB: one chunk of all 2048 rows.
    CHECK(last().second == Approx(2048 * v * 4));
    // Saved (LoRA: the head is frozen, no grad_lm_head): the final norm's 16-bit input and fp32 copy (hf's eager
    // LlamaRMSNorm) and grad_inputs in the head input's place: (2 + 4 + 2) B per token x h.
    CHECK(last().first == Approx(8 * 2048 * h));
    // 8192 x 2 = 16384 tokens: 7.83 GiB / 4 GiB = 1.96 -> 4 chunks of 4096 rows.
    j.training.seq_len = 8192;
    j.training.micro_batch = 2;
    j.training.global_batch = 2;
    CHECK(last().second == Approx(4096 * v * 4));
    // 40000 tokens: 19.1 GiB / 4 GiB = 4.78 -> 8 chunks of 5000 rows.
    j.training.seq_len = 20000;
    CHECK(last().second == Approx(5000 * v * 4));
    // A full fine-tune trains the head: grad_lm_head = zeros_like(weight), fp32 weights under bf16-mixed (hf).
    j = unsloth_job();
    j.training.finetune = {};
    CHECK(last().first == Approx(8 * 2048 * h + v * h * 4));
}

TEST_CASE("unsloth: a whole estimate is below hf's by the offloaded inputs and the logits") {
    // Same job, hf against unsloth: the stored activations differ by 13 offloaded inputs and by the loss (hf: the
    // fp32 log-softmax, 4 B per logit, saved; unsloth: none), the rest of the states being the same.
    auto j = unsloth_job();
    const auto u = memory_estimator{}.estimate(j);
    j.runtime.framework = frameworks::hf::handle;
    const auto hf = memory_estimator{}.estimate(j);
    CHECK(u.peak_allocated < hf.peak_allocated);
    CHECK(u.stages.front().breakdown.weights == hf.stages.front().breakdown.weights);
    CHECK(u.stages.front().breakdown.optimizer == hf.stages.front().breakdown.optimizer);
}

TEST_CASE("unsloth: layouts and options it does not run are refused, naming the field") {
    auto j = unsloth_job();
    j.parallel.dp = 2;
    j.training.global_batch = 2;
    CHECK_NOTHROW(validate(j));  // torchrun + DDP
    j.parallel.sharding = sharding::full;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("parallel.sharding=\"full\" is not supported by runtime.framework=\"unsloth\""));
    j = unsloth_job();
    j.parallel.tp = 2;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("runtime.framework=\"unsloth\" is data parallel only"));
    j = unsloth_job();
    j.runtime.offload.activations = true;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("runtime.offload is not supported by runtime.framework=\"unsloth\""));
    j = unsloth_job();
    j.training.precision = precision::fp8_mixed;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("training.precision=\"fp8-mixed\" is not supported by runtime.framework=\"unsloth\""));
    j = unsloth_job();
    j.runtime.loss = loss_style::unsloth_fused;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("runtime.loss=\"unsloth-fused\" is not a setting"));
    j = unsloth_job();
    j.runtime.liger = true;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("runtime.liger needs runtime.framework="));
    // A job file names it like any framework.
    const auto parsed = job_from_json(nlohmann::json::parse(
        R"({"model": {"preset": "llama-3.2-1b"}, "training": {"finetune": {"method": "qlora"}},
            "parallel": {"recompute": "full"}, "runtime": {"framework": "unsloth"}})"));
    CHECK(parsed.job.runtime.framework.name() == "unsloth");
}

TEST_CASE("unsloth: the offloaded checkpoints' pinned host memory, per GPU and in the report") {
    // unsloth_zoo@ce232d6c gradient_checkpointing.py: initialisation pins 200 buffers of 128 Ki bf16 elements
    // (256 KiB: 50 MiB); the first pass grows one buffer per layer to its input (all 16 layers: FIRST_PASS offloads the
    // last one too), 2048 x 2048 x 2 B = 8 MiB, already a power of two for the caching host allocator: 16 x 8 MiB +
    // 50 MiB = 178 MiB. Exact in doubles.
    auto j = unsloth_job();
    const auto r = memory_estimator{}.estimate(j);
    CHECK(r.host_activations.value == Approx(178.0 * MiB).epsilon(1e-12));
    CHECK(r.host_per_gpu.value == 0);  // not the offloaded states the planner checks
    // 1536 tokens: a 6 MiB input takes an 8 MiB pinned block (power-of-two rounding): the same 178 MiB
    j.training.seq_len = 1536;
    CHECK(memory_estimator{}.estimate(j).host_activations.value == Approx(178.0 * MiB).epsilon(1e-12));
    // DPO's pair doubles the micro-batch: 16 MiB inputs, 16 x 16 + 50 = 306 MiB
    j = unsloth_job();
    j.training.finetune.objective = finetune_objective::dpo;
    CHECK(memory_estimator{}.estimate(j).host_activations.value == Approx(306.0 * MiB).epsilon(1e-12));
    // 256 tokens (1 MiB inputs, not above MINIMUM_SIZE): only the 200 initial buffers; no recompute: nothing
    j = unsloth_job();
    j.training.seq_len = 256;
    CHECK(memory_estimator{}.estimate(j).host_activations.value == Approx(50.0 * MiB).epsilon(1e-12));
    j = unsloth_job();
    j.parallel.recompute = recompute::none;
    CHECK(memory_estimator{}.estimate(j).host_activations.value == 0);
}
