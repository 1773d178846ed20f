#pragma once
// A model family as Frenzy reads it from Hugging Face: the config.json model_type values (and architectures[0]
// classes) it covers and its reader, with the keys and defaults transformers' configuration_<model>.py sets. One
// folder per family, include/frenzy/families/<family>/hf_config.hpp; families/registry.hpp lists them.
#include <array>
#include <string>
#include <string_view>

#include "frenzy/io/hf_reader.hpp"
#include "frenzy/model/transformer.hpp"

namespace frenzy {

/// One config.json model_type: the architectures[0] class that implies it, and for a multimodal wrapper the
/// model_type of the language model it nests in text_config ("" for a plain language model).
struct hf_model_type {
    std::string_view model_type;
    std::string_view architecture;
    std::string_view text_model_type{};
};

struct model_family {
    std::string_view name;
    std::array<hf_model_type, 12> model_types{};  ///< the first ones set, the rest empty
    /// The spec of a config.json of one of its (non-wrapper) model types.
    transformer_spec (*read_hf)(const hf_reader& r, const std::string& model_type) = nullptr;
};

}  // namespace frenzy
