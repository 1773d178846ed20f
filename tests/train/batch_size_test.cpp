// The global batch a plan uses when the job states neither it nor dp (train/batch_size.hpp): DeepSeek LLM's
// batch-size law, checked on hand-derived values.
#include <catch2/catch.hpp>

#include "frenzy/model/presets.hpp"
#include "frenzy/train/batch_size.hpp"

using namespace frenzy;

namespace {
job_spec unbatched(const char* preset_name, std::int64_t seq, double tokens, std::int64_t micro_batch = 1) {
    job_spec j;
    j.model = preset(preset_name);
    j.training = {.seq_len = seq, .micro_batch = micro_batch, .global_batch = micro_batch, .total_tokens = tokens};
    return j;
}
}  // namespace

TEST_CASE("DeepSeek LLM's law: B_opt = 0.2920 C^0.3271 tokens") {
    // by hand: 0.292 x (1e20)^0.3271 = 0.292 x 10^6.542 = 0.292 x 3.483e6 = 1.017e6 tokens
    CHECK(deepseek_batch_tokens(1e20) == Approx(1.017e6).epsilon(0.002));
    // C = 6 N D: Llama 3.1 8B (8.03e9 parameters, dense: all active) on 1T tokens is 4.82e22 FLOPs
    const auto llama8b = unbatched("llama-3.1-8b", 2048, 1e12);
    CHECK(training_flops(llama8b) == Approx(6 * 8.03e9 * 1e12).epsilon(0.001));
}

TEST_CASE("the default global batch: B_opt in sequences, down to a power of two, a multiple of the micro-batch") {
    // 8B on 1T tokens: 0.292 x (4.82e22)^0.3271 = 7.67e6 tokens = 3746 sequences of 2048 -> 2048
    CHECK(default_global_batch(unbatched("llama-3.1-8b", 2048, 1e12)) == 2048);
    // the same at 8192 tokens per sequence: 936 sequences -> 512
    CHECK(default_global_batch(unbatched("llama-3.1-8b", 8192, 1e12)) == 512);
    // no budget: Chinchilla's 20 tokens per parameter. GPT-2 small (1.24e8): C = 6 x 1.24e8 x 2.49e9 = 1.86e18,
    // B = 2.76e5 tokens = 269 sequences of 1024 -> 256
    CHECK(default_global_batch(unbatched("gpt2", 1024, 0)) == 256);
    // a stated micro-batch of 3: the largest multiple of 3 below 2048
    CHECK(default_global_batch(unbatched("llama-3.1-8b", 2048, 1e12, 3)) == 2046);
    // a micro-batch above B_opt: one micro-batch per step
    CHECK(default_global_batch(unbatched("gpt2", 1024, 0, 512)) == 512);
    // a mixture of experts counts the parameters a token passes through: Mixtral 8x7B (12.9B active of 46.7B) on
    // 1T tokens: C = 6 x 1.288e10 x 1e12 = 7.73e22, B = 8.96e6 tokens = 4373 sequences -> 4096
    CHECK(default_global_batch(unbatched("mixtral-8x7b", 2048, 1e12)) == 4096);
}

TEST_CASE("the law against published batches: within the factor its extrapolation allows") {
    // Llama 2 7B: 2T tokens at 4096, published global batch 4M tokens = 1024 sequences (Touvron et al. 2023,
    // section 2.2). The law, fitted up to 3e20 FLOPs, gives 2219 -> 2048 at 8.1e22: within 2x, and the planner
    // states the batch it chose so a user who has one gives it.
    const auto b = default_global_batch(unbatched("llama-2-7b", 4096, 2e12));
    CHECK(b == 2048);
    CHECK(b / 1024.0 <= 2.0);
}

TEST_CASE("a fine-tune's default global batch is a fine-tuning recipe's, not the pretraining law's (issue 55)") {
    // LoRA on Llama 3.1 8B at 4096 without a budget: the law gave 1024 sequences (4M tokens a step, a pretraining
    // batch); fine-tunes take 128 (LitGPT's LoRA recipe, alpaca-lora), whatever the budget
    auto j = unbatched("llama-3.1-8b", 4096, 0);
    CHECK(default_global_batch(j) == 1024);
    j.training.finetune.method = finetune_method::lora;
    CHECK(default_global_batch(j) == 128);
    j.training.finetune.method = finetune_method::full;
    j.training.total_tokens = 1e12;
    CHECK(default_global_batch(j) == 128);
    // still a multiple of the micro-batch: 3 -> 126
    auto q = unbatched("llama-3.1-8b", 4096, 0, 3);
    q.training.finetune.method = finetune_method::qlora;
    CHECK(default_global_batch(q) == 126);
}
