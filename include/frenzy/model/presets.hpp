#pragma once
// Presets of well-known models, with their published parameter counts.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/model/transformer.hpp"

namespace frenzy {

struct model_preset {
    transformer_spec spec;         ///< spec.name is the preset name
    double published_parameters;   ///< the publisher's figure
    const char* source;            ///< where the architecture and the figure come from
};

namespace detail {
inline const std::vector<model_preset>& preset_table() {
    using A = activation;
    using P = position_embedding;
    using N = norm_kind;
    static const std::vector<model_preset> v{
        {{.name = "gpt3-125m", .layers = 12, .hidden = 768, .heads = 12, .ffn_hidden = 3072, .activation = A::gelu,
          .vocab = 50257, .tied_embeddings = true, .position_embedding = P::learned, .max_positions = 2048,
          .norm = N::layernorm, .bias = true},
         125e6, "Brown et al. 2020 Table 2.1"},
        {{.name = "llama-3.1-8b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .ffn_hidden = 14336,
          .activation = A::swiglu, .vocab = 128256, .tied_embeddings = false, .position_embedding = P::rope,
          .norm = N::rmsnorm, .bias = false},
         8.03e9, "meta-llama/Llama-3.1-8B config.json; model card 8.03B"},
    };
    return v;
}
}  // namespace detail

inline std::span<const model_preset> model_presets() { return detail::preset_table(); }

/// The preset called `name`; the error lists the known names.
inline const transformer_spec& preset(std::string_view name) {
    for (const auto& p : model_presets())
        if (p.spec.name == name) return p.spec;
    std::string known;
    for (const auto& p : model_presets()) known += (known.empty() ? "" : ", ") + p.spec.name;
    throw config_error("model.preset=\"" + std::string(name) + "\" is not a known preset (known: " + known + ")");
}

}  // namespace frenzy
