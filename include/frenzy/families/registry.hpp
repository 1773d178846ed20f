#pragma once
// The model families Frenzy reads from Hugging Face configs, one line each (include/frenzy/families/<family>/), in
// the order messages list their model types. A new family is one folder and one line here.
#include <array>
#include <string>
#include <string_view>

#include "frenzy/families/bloom/hf_config.hpp"
#include "frenzy/families/cohere/hf_config.hpp"
#include "frenzy/families/deepseek/hf_config.hpp"
#include "frenzy/families/falcon/hf_config.hpp"
#include "frenzy/families/family.hpp"
#include "frenzy/families/gemma/hf_config.hpp"
#include "frenzy/families/gpt2/hf_config.hpp"
#include "frenzy/families/gpt_neox/hf_config.hpp"
#include "frenzy/families/gpt_oss/hf_config.hpp"
#include "frenzy/families/llama/hf_config.hpp"
#include "frenzy/families/llama4/hf_config.hpp"
#include "frenzy/families/olmo2/hf_config.hpp"
#include "frenzy/families/opt/hf_config.hpp"

namespace frenzy {

inline constexpr std::array<const model_family*, 12> model_families{
    &families::llama::family,  &families::gemma::family, &families::olmo2::family, &families::deepseek::family,
    &families::falcon::family, &families::llama4::family, &families::cohere::family, &families::gpt2::family,
    &families::opt::family,    &families::gpt_neox::family, &families::bloom::family, &families::gpt_oss::family,
};

/// A config.json model_type and the family that reads it.
struct family_match {
    const model_family* family = nullptr;
    const hf_model_type* type = nullptr;
};

/// The family entry of `model_type`, or none.
inline family_match find_model_type(std::string_view model_type) {
    for (const auto* f : model_families)
        for (const auto& t : f->model_types)
            if (!t.model_type.empty() && t.model_type == model_type) return {f, &t};
    return {};
}

/// The model_type whose architectures[0] class is `architecture`, or "".
inline std::string_view model_type_of_architecture(std::string_view architecture) {
    for (const auto* f : model_families)
        for (const auto& t : f->model_types)
            if (!t.model_type.empty() && t.architecture == architecture) return t.model_type;
    return {};
}

/// "llama, mistral, ...": every model_type the families read, for messages.
inline std::string supported_model_types() {
    std::string s;
    for (const auto* f : model_families)
        for (const auto& t : f->model_types)
            if (!t.model_type.empty()) s += (s.empty() ? "" : ", ") + std::string(t.model_type);
    return s;
}

}  // namespace frenzy
