#pragma once
// The model presets torchtune has builders for (pytorch/torchtune@bd2a0fc7 torchtune/models/<family>/__init__.py
// __all__; tests/data/launch/torchtune_keys.txt lists them as builder.torchtune.models.<family>.<name>), with the
// tokenizer builder and checkpointer model_type its recipe configs pair them with (recipes/configs/<family>/*.yaml;
// training/checkpointing/_utils.py ModelType). A preset absent here has no torchtune builder of that shape.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace frenzy::frameworks::torchtune {

struct builder_entry {
    std::string_view preset;      ///< Frenzy's preset name (model/presets.hpp)
    std::string_view family;      ///< torchtune.models.<family>
    std::string_view builder;     ///< full-weight builder; lora_<builder> and qlora_<builder> for the adapters
    std::string_view tokenizer;   ///< torchtune.models.<tokenizer>
    std::string_view model_type;  ///< FullModelHFCheckpointer model_type
    bool qlora = false;           ///< qlora_<builder> exists
    bool merges = false;          ///< the tokenizer needs merges_file (BPE: Qwen)
};

inline constexpr std::array<builder_entry, 19> builders{{
    {"llama-2-7b", "llama2", "llama2_7b", "llama2.llama2_tokenizer", "LLAMA2", true, false},
    {"llama-2-13b", "llama2", "llama2_13b", "llama2.llama2_tokenizer", "LLAMA2", true, false},
    {"llama-2-70b", "llama2", "llama2_70b", "llama2.llama2_tokenizer", "LLAMA2", true, false},
    {"llama-3.1-8b", "llama3_1", "llama3_1_8b", "llama3.llama3_tokenizer", "LLAMA3", true, false},
    {"llama-3.1-70b", "llama3_1", "llama3_1_70b", "llama3.llama3_tokenizer", "LLAMA3", true, false},
    {"llama-3.1-405b", "llama3_1", "llama3_1_405b", "llama3.llama3_tokenizer", "LLAMA3", true, false},
    {"llama-3.2-1b", "llama3_2", "llama3_2_1b", "llama3.llama3_tokenizer", "LLAMA3_2", true, false},
    {"llama-3.2-3b", "llama3_2", "llama3_2_3b", "llama3.llama3_tokenizer", "LLAMA3_2", true, false},
    {"mistral-7b", "mistral", "mistral_7b", "mistral.mistral_tokenizer", "MISTRAL", true, false},
    {"gemma-2b", "gemma", "gemma_2b", "gemma.gemma_tokenizer", "GEMMA", true, false},
    {"gemma-2-9b", "gemma2", "gemma2_9b", "gemma.gemma_tokenizer", "GEMMA2", true, false},
    {"qwen2.5-0.5b", "qwen2_5", "qwen2_5_0_5b", "qwen2_5.qwen2_5_tokenizer", "QWEN2", false, true},
    {"qwen2.5-1.5b", "qwen2_5", "qwen2_5_1_5b_base", "qwen2_5.qwen2_5_tokenizer", "QWEN2", false, true},
    {"qwen2.5-3b", "qwen2_5", "qwen2_5_3b", "qwen2_5.qwen2_5_tokenizer", "QWEN2", false, true},
    {"qwen2.5-7b", "qwen2_5", "qwen2_5_7b_base", "qwen2_5.qwen2_5_tokenizer", "QWEN2", false, true},
    {"qwen2.5-14b", "qwen2_5", "qwen2_5_14b_base", "qwen2_5.qwen2_5_tokenizer", "QWEN2", false, true},
    {"qwen2.5-32b", "qwen2_5", "qwen2_5_32b_base", "qwen2_5.qwen2_5_tokenizer", "QWEN2", false, true},
    {"qwen2.5-72b", "qwen2_5", "qwen2_5_72b_base", "qwen2_5.qwen2_5_tokenizer", "QWEN2", false, true},
    {"qwen3-1.7b", "qwen3", "qwen3_1_7b_base", "qwen3.qwen3_tokenizer", "QWEN3", false, true},
}};

/// The entry of preset `name`, if torchtune builds it.
inline std::optional<builder_entry> find_builder(std::string_view name) {
    for (const auto& b : builders)
        if (b.preset == name) return b;
    return std::nullopt;
}

/// The entry whose model component (full, lora_ or qlora_ builder of torchtune.models.<family>) is `component`,
/// with the prefix it carries ("", "lora_" or "qlora_").
inline std::optional<std::pair<builder_entry, std::string_view>> find_component(std::string_view component) {
    for (const auto& b : builders) {
        for (std::string_view prefix : {"", "lora_", "qlora_"})
            if (component == "torchtune.models." + std::string(b.family) + "." + std::string(prefix) + std::string(b.builder))
                return std::pair{b, prefix};
    }
    return std::nullopt;
}

}  // namespace frenzy::frameworks::torchtune
