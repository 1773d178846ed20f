#pragma once
// The Frenzy presets LitGPT has a model config for (Lightning-AI/litgpt@26857050 litgpt/config.py `configs`): the
// config name `litgpt pretrain` takes (model_name), the Hugging Face repository `litgpt download` saves under
// checkpoints/ORG/NAME (the checkpoint_dir of the finetune commands), and the config's n_layer and n_embd, which
// tests/launch/litgpt_test.cpp checks against tests/data/launch/litgpt_models.txt (read from config.py by
// tests/data/launch/extract_framework_keys.py litgpt-models) and against the preset.
// Left out: presets LitGPT has no config for (GPT-2/3, OPT, BLOOM, MPT, LLaMA 1, DeepSeek, GPT-NeoX-20B, Qwen1.5-MoE),
// and Gemma-2 (gemma-2-9b): its attention_logit_softcapping makes CausalSelfAttention run the eager
// q @ k.mT softmax path instead of SDPA (model.py scaled_dot_product_attention), which the litgpt profile does not count.
#include <array>
#include <cstdint>
#include <string_view>

namespace frenzy::frameworks::litgpt {

struct litgpt_model {
    std::string_view preset;     ///< Frenzy's preset name (model/presets.hpp)
    std::string_view config;     ///< litgpt/config.py `name` (with the family's "{}" formatted as "")
    std::string_view repo;       ///< hf_config org/name: checkpoints/<repo> after `litgpt download <repo>`
    std::int64_t layers = 0;     ///< n_layer
    std::int64_t hidden = 0;     ///< n_embd
};

inline constexpr std::array<litgpt_model, 27> models{{
    {"llama-2-7b", "Llama-2-7b-hf", "meta-llama/Llama-2-7b-hf", 32, 4096},
    {"llama-2-13b", "Llama-2-13b-hf", "meta-llama/Llama-2-13b-hf", 40, 5120},
    {"llama-2-70b", "Llama-2-70b-hf", "meta-llama/Llama-2-70b-hf", 80, 8192},
    {"llama-3.1-8b", "Llama-3.1-8B", "meta-llama/Meta-Llama-3.1-8B", 32, 4096},
    {"llama-3.1-70b", "Llama-3.1-70B", "meta-llama/Meta-Llama-3.1-70B", 80, 8192},
    {"llama-3.1-405b", "Llama-3.1-405B", "meta-llama/Meta-Llama-3.1-405B", 126, 16384},
    {"llama-3.2-1b", "Llama-3.2-1B", "meta-llama/Llama-3.2-1B", 16, 2048},
    {"llama-3.2-3b", "Llama-3.2-3B", "meta-llama/Llama-3.2-3B", 28, 3072},
    {"mistral-7b", "Mistral-7B-v0.1", "mistralai/Mistral-7B-v0.1", 32, 4096},
    {"mixtral-8x7b", "Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-v0.1", 32, 4096},
    {"mixtral-8x22b", "Mixtral-8x22B-v0.1", "mistralai/Mixtral-8x22B-v0.1", 56, 6144},
    {"qwen2.5-0.5b", "Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B", 24, 896},
    {"qwen2.5-1.5b", "Qwen2.5-1.5B", "Qwen/Qwen2.5-1.5B", 28, 1536},
    {"qwen2.5-3b", "Qwen2.5-3B", "Qwen/Qwen2.5-3B", 36, 2048},
    {"qwen2.5-7b", "Qwen2.5-7B", "Qwen/Qwen2.5-7B", 28, 3584},
    {"qwen2.5-14b", "Qwen2.5-14B", "Qwen/Qwen2.5-14B", 48, 5120},
    {"qwen2.5-32b", "Qwen2.5-32B", "Qwen/Qwen2.5-32B", 64, 5120},
    {"qwen2.5-72b", "Qwen2.5-72B", "Qwen/Qwen2.5-72B", 80, 8192},
    {"qwen3-1.7b", "Qwen3-1.7B", "Qwen/Qwen3-1.7B", 28, 2048},
    {"pythia-1b", "pythia-1b", "EleutherAI/pythia-1b", 16, 2048},
    {"pythia-6.9b", "pythia-6.9b", "EleutherAI/pythia-6.9b", 32, 4096},
    {"pythia-12b", "pythia-12b", "EleutherAI/pythia-12b", 36, 5120},
    {"gemma-2b", "Gemma-2b", "google/gemma-2b", 18, 2048},
    {"phi-3.5-mini", "Phi-3.5-mini-instruct", "microsoft/Phi-3.5-mini-instruct", 32, 3072},
    {"phi-4-mini", "Phi-4-mini-instruct", "microsoft/Phi-4-mini-instruct", 32, 3072},
    {"olmo-2-7b", "OLMo-2-1124-7B", "allenai/OLMo-2-1124-7B", 32, 4096},
    {"falcon-7b", "falcon-7b", "tiiuae/falcon-7b", 32, 4544},
}};

/// The LitGPT model of a preset name, or nullptr.
inline const litgpt_model* model_of_preset(std::string_view preset) {
    for (const auto& m : models)
        if (m.preset == preset) return &m;
    return nullptr;
}

/// The LitGPT model whose config name or checkpoints/ORG/NAME path (repo) is `name`, or nullptr.
inline const litgpt_model* model_of_litgpt_name(std::string_view name) {
    for (const auto& m : models)
        if (m.config == name || m.repo == name) return &m;
    return nullptr;
}

}  // namespace frenzy::frameworks::litgpt
