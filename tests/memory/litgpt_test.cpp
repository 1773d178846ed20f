// The litgpt framework's memory profile (frameworks/litgpt/traits.hpp, Lightning-AI/litgpt@26857050): a small LoRA
// job derived term by term, and LitGPT's own measured LoRA/QLoRA table read with the profile alone.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "litgpt_table.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/frameworks/registry.hpp"

using namespace frenzy;

namespace {
/// validate(j)'s message, or "" when the job is valid.
std::string litgpt_why_invalid(const job_spec& j) {
    try {
        validate(j);
    } catch (const config_error& e) {
        return e.what();
    }
    return {};
}

job_spec litgpt_small_lora() {
    job_spec j;
    j.model = preset("llama-3.2-1b");  // 16 layers, hidden 2048, 32 q heads / 8 kv heads of 64, ffn 8192, vocab 128256
    j.training = {.seq_len = 512, .micro_batch = 1, .global_batch = 16, .precision = precision::bf16};  // bf16-true
    j.runtime.framework = frameworks::litgpt::handle;
    // finetune_lora's defaults (finetune/lora.py@26857050 setup): lora_r 8, lora_alpha 16, query and value
    j.training.finetune = {.method = finetune_method::lora, .rank = 8, .alpha = 16, .targets = lora_q | lora_v};
    return j;
}
}  // namespace

TEST_CASE("a small LitGPT LoRA job, term by term (Llama-3.2-1B, r 8 on q and v, bf16-true, one device)") {
    const auto j = litgpt_small_lora();
    const auto r = memory_estimator{}.estimate(j);
    REQUIRE(r.stages.size() == 1);
    const auto& b = r.stages[0].breakdown;
    // Parameters: embedding 128256 x 2048 = 262,668,288 (tied with the head); a layer q 2048^2 + k, v 2048 x 512 each +
    // o 2048^2 + MLP 3 x 2048 x 8192 + 2 norms x 2048 = 60,821,504, x 16 = 973,144,064; final norm 2048.
    CHECK(r.parameters == 262668288.0 + 973144064.0 + 2048.0);
    // Adapters: q r x (2048 + 2048) = 32,768 and v r x (2048 + 512) = 20,480 a layer, x 16 = 851,968.
    const double adapters = 16 * (8.0 * (2048 + 2048) + 8.0 * (2048 + 512));
    // bf16-true: base and adapters in bf16 (2 B); gradients of the adapters only (mark_only_lora_as_trainable), bf16;
    // AdamW's exp_avg and exp_avg_sq are zeros_like(param): 2 x 2 B. Exact: each is a count times a byte size.
    CHECK(b.weights.value == 2.0 * (1235814400.0 + adapters));
    CHECK(b.gradients.value == 2.0 * adapters);
    CHECK(b.optimizer.value == 4.0 * adapters);
    // The cuBLAS workspace (CUBLAS_WORKSPACE_CONFIG :4096:8): 32 MiB.
    CHECK(b.temporary.value == 32.0 * 1024 * 1024);

    // k.repeat_interleave(q_per_kv) before SDPA (model.py CausalSelfAttention.forward): k and v saved at 32 heads
    // instead of 8: 2 x (2048 - 512) x 2 B a token and layer, x 512 tokens x 16 layers = 50,331,648 B, exactly.
    auto no_repeat = j;
    no_repeat.runtime.kv_repeat = false;
    CHECK(b.activations.value - memory_estimator{}.estimate(no_repeat).stages[0].breakdown.activations.value ==
          2.0 * (2048 - 512) * 2 * 512 * 16);

    // The 128-token loss chunks (lm_head_chunk_size=128, chunked_cross_entropy chunk_size=128): 512 / 128 = 4
    // chunks, the loss's transient is max(2 + 4/4, 8/4) = 3 B a logit instead of max(2 + 4, 8) = 8 B unchunked:
    // 5 B x 512 x 128256 logits = 328,335,360 B less, exactly.
    static framework_traits unchunked = frameworks::litgpt::traits;
    unchunked.memory.loss_chunk_tokens = 0;
    auto u = j;
    u.runtime.framework = framework(unchunked);
    CHECK(memory_estimator{}.estimate(u).peak_allocated.value - r.peak_allocated.value == 5.0 * 512 * 128256);
}

TEST_CASE("LitGPT's measured LoRA / QLoRA table with the litgpt profile alone") {
    // data/memory/litgpt/resource_table.csv (Lightning-AI/litgpt tutorials/resource-tables.md@b732986, A100 40GB,
    // torch.cuda.max_memory_allocated() / 1e9, --precision bf16-true), the rows tests/memory/methods_test.cpp reads
    // with the ddp profile and hand-set runtime options (rope_fp32 off, loss_chunks 11). Here nothing is set but runtime.framework = litgpt: the profile gives
    // the 16-bit RoPE, and the loss chunks follow from 1304 tokens / 128 -> 11.
    for (const auto& x : litgpt_table::rows()) {
        job_spec j;
        j.model = preset(x.model);
        j.training = {.seq_len = 1304, .micro_batch = x.micro_batch, .global_batch = 128, .precision = precision::bf16};
        j.runtime.framework = frameworks::litgpt::handle;
        j.training.finetune = {.method = x.method, .rank = 8, .alpha = 16, .targets = lora_q | lora_v, .dropout = 0.05,
                               .qlora_saves_inputs = x.method == finetune_method::qlora, .double_quant = x.double_quant};
        REQUIRE(litgpt_why_invalid(j).empty());
        const double gb = memory_estimator{}.estimate(j).peak_allocated.value / 1e9;
        const double err = gb / x.measured_gb - 1;
        std::printf("litgpt %-12s %-6s mb %lld: %.2f GB vs %.2f measured (%+.1f%%)\n", x.model.c_str(),
                    std::string(to_string(x.method)).c_str(), static_cast<long long>(x.micro_batch), gb, x.measured_gb, 100 * err);
        INFO(x.model << " " << to_string(x.method) << " mb " << x.micro_batch);
        // The project's bounds for these methods (memory/methods.hpp method_uncertainty): LoRA 3%; QLoRA 6%, whose
        // rows under-predict by 4.5-5.2% (the residual is unexplained, tests/memory/methods_test.cpp).
        CHECK(std::fabs(err) <= (x.method == finetune_method::lora ? 0.03 : 0.06));
    }
}

TEST_CASE("litgpt rules: the layouts LitGPT's scripts build, refusals naming the field") {
    auto j = litgpt_small_lora();
    CHECK(litgpt_why_invalid(j).empty());
    auto bad = j;
    bad.parallel = {.dp = 2, .tp = 2, .sharding = sharding::full, .recompute = recompute::full};
    CHECK_THAT(litgpt_why_invalid(bad), Catch::Contains("data parallel only") && Catch::Contains("tp=2"));
    bad = j;
    bad.parallel = {.dp = 4, .sharding = sharding::none, .recompute = recompute::full};
    CHECK_THAT(litgpt_why_invalid(bad), Catch::Contains("parallel.sharding=\"none\""));
    bad.parallel.sharding = sharding::full;
    CHECK(litgpt_why_invalid(bad).empty());  // finetune_lora on 4 GPUs: FSDP2 + checkpoint_wrapper per Block
    bad.parallel.recompute = recompute::none;
    CHECK_THAT(litgpt_why_invalid(bad), Catch::Contains("parallel.recompute=\"none\"") && Catch::Contains("fine-tune"));
    bad = j;
    bad.parallel.recompute = recompute::full;
    CHECK_THAT(litgpt_why_invalid(bad), Catch::Contains("parallel.dp=1"));
    bad = j;
    bad.training.finetune.method = finetune_method::qlora;
    bad.parallel = {.dp = 2, .sharding = sharding::full, .recompute = recompute::full};
    CHECK_THAT(litgpt_why_invalid(bad), Catch::Contains("method=\"qlora\"") && Catch::Contains("parallel.dp=2"));
    bad = j;
    bad.training.finetune.method = finetune_method::qlora;
    bad.training.precision = precision::bf16_mixed;
    CHECK_THAT(litgpt_why_invalid(bad), Catch::Contains("training.precision=\"bf16-mixed\""));
    bad = j;
    bad.training.finetune.targets = lora_q | lora_v | lora_up;
    CHECK_THAT(litgpt_why_invalid(bad), Catch::Contains("training.finetune.target_modules"));
    bad = j;
    bad.training.finetune = {.method = finetune_method::full, .frozen_layers = 4};
    CHECK_THAT(litgpt_why_invalid(bad), Catch::Contains("training.finetune.frozen_layers=4"));
    // pretraining (no fine-tune settings) on 8 GPUs: pretrain.py's FSDPStrategy without checkpointing
    bad = j;
    bad.training.finetune = {};
    bad.parallel = {.dp = 8, .sharding = sharding::full};
    CHECK(litgpt_why_invalid(bad).empty());
    bad.parallel.recompute = recompute::full;
    CHECK_THAT(litgpt_why_invalid(bad), Catch::Contains("pretraining"));
    // a full fine-tune on 8 GPUs is finetune_full's: FULL_SHARD with every Block checkpointed (finetune/full.py)
    bad.training.finetune.method = finetune_method::full;
    CHECK(litgpt_why_invalid(bad).empty());
    bad.parallel.recompute = recompute::none;
    CHECK_THAT(litgpt_why_invalid(bad), Catch::Contains("parallel.recompute=\"none\""));
    bad = j;
    bad.runtime.offload.optimizer = true;
    CHECK_THAT(litgpt_why_invalid(bad), Catch::Contains("runtime.offload"));
}
