#pragma once
// The global batch a plan uses when the job states neither it nor a data-parallel degree. The global batch is a
// training hyperparameter, not a layout choice; left to the planner it would otherwise be micro_batch x dp of the
// unstated dp = 1, one sequence per step, and every plan would be dp = 1. The default is the batch size that is
// near-optimal for the run's compute budget by DeepSeek LLM's fitted law (DeepSeek-AI, "DeepSeek LLM: Scaling
// Open-Source Language Models with Longtermism", arXiv:2401.02954, section 3.1, eq. 1):
//
//     B_opt = 0.2920 * C^0.3271 tokens,  C = 6 * N * D FLOPs
//
// with N the parameters one token passes through (model/transformer.hpp active_parameters) and D the training
// budget in tokens (training.total_tokens; without one, Chinchilla's compute-optimal 20 tokens per parameter:
// Hoffmann et al., "Training Compute-Optimal Large Language Models", arXiv:2203.15556). The paper fits C in
// non-embedding FLOPs up to 3e20; 6ND is the usual stand-in, and beyond that range the law is an extrapolation: it
// gives 7.7M tokens for 8B parameters on 1T tokens and 67M for 405B on 15T, against 4M (Llama 2 7B) and 4-16M
// (Llama 3 405B) published, so it is a default to start from, stated as such, never a fitted row.
//
// A fine-tune is not a pretraining run: the law (fitted on pretraining compute) gave a LoRA job without a budget
// 1024 sequences of 4096 tokens. Fine-tunes default to 128 sequences, the global batch of LitGPT's LoRA and full
// fine-tuning recipes (Lightning-AI/litgpt@01fe959 litgpt/finetune/lora.py TrainArgs(global_batch_size=128,
// micro_batch_size=4), on Alpaca) and of alpaca-lora (tloen/alpaca-lora finetune.py batch_size=128).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "frenzy/core/checked.hpp"
#include "frenzy/model/transformer.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// Tokens of DeepSeek LLM's near-optimal batch size for `flops` of training compute (0.2920 x C^0.3271).
inline double deepseek_batch_tokens(double flops) { return 0.2920 * std::pow(std::max(flops, 1.0), 0.3271); }

/// The training compute the batch-size law reads: 6 x active parameters x tokens (the budget, else 20 tokens per
/// parameter).
inline double training_flops(const job_spec& j) {
    const double n = active_parameters(j.model, j.training.seq_len);
    const double d = j.training.total_tokens > 0 ? j.training.total_tokens : 20.0 * total_parameters(j.model, j.training.seq_len);
    return 6.0 * n * d;
}

/// The global batch, in sequences, for a job that states neither it nor dp: B_opt / seq_len (a fine-tune: 128)
/// rounded down to a power of two, at least one micro-batch, a multiple of the micro-batch, and within bounds::global_batch.
inline constexpr std::int64_t finetune_global_batch = 128;

inline std::int64_t default_global_batch(const job_spec& j) {
    const double sequences = j.training.finetune.pretrained()
                                 ? static_cast<double>(finetune_global_batch)
                                 : deepseek_batch_tokens(training_flops(j)) / static_cast<double>(std::max<std::int64_t>(1, j.training.seq_len));
    std::int64_t b = 1;
    while (b * 2 <= bounds::global_batch.max && static_cast<double>(b * 2) <= sequences) b *= 2;
    const std::int64_t mb = std::max<std::int64_t>(1, j.training.micro_batch);
    b = std::max(mb, b / mb * mb);
    return std::min(b, bounds::global_batch.max / mb * mb);
}

}  // namespace frenzy
