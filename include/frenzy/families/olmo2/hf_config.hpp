#pragma once
// OLMo 2: the Hugging Face config.json reader of the family (keys and defaults as transformers sets them).
#include <string>

#include "frenzy/families/family.hpp"
#include "frenzy/families/llama/hf_config.hpp"
#include "frenzy/io/hf_reader.hpp"

namespace frenzy::families::olmo2 {

/// OLMo 2 (transformers modeling_olmo2.py): the Llama layout with the norms after attention and MLP (still two a
/// layer) and RMSNorm q_norm/k_norm over the full query and key widths (heads x head_dim + kv_heads x head_dim
/// weights a layer, 0.004% of OLMo-2-7B: not counted).
inline transformer_spec read_hf(const hf_reader& r, const std::string& /*model_type*/) {
    transformer_spec s = families::llama::read_hf(r, "llama");
    s.qkv_bias = false;
    s.bias = false;
    s.norm_eps = r.number({"rms_norm_eps"}, 1e-5, bounds::norm_eps);  // Olmo2Config default
    s.qk_norm = true;
    return s;
}

inline constexpr model_family family{
    .name = "olmo2",
    .model_types = {{
        {"olmo2", "Olmo2ForCausalLM"},
    }},
    .read_hf = read_hf,
};

}  // namespace frenzy::families::olmo2
