#pragma once
// Cohere Command R / R+ / Aya (model_type "cohere") and Command R7B / Command A (model_type "cohere2"): the Hugging
// Face config.json reader of the family (keys and defaults as transformers sets them).
#include <string>

#include "frenzy/families/family.hpp"
#include "frenzy/io/hf_reader.hpp"

namespace frenzy::families::cohere {

/// Cohere (transformers modeling_cohere.py, configuration_cohere.py; Cohere2 in modeling_cohere2.py,
/// huggingface/transformers@008e5743 configuration_cohere2.py): one input LayerNorm a layer (weight only) read by
/// attention and the MLP side by side, whose outputs are added to the residual together (parallel attention), a
/// SwiGLU MLP (gate/up/down, silu), rotary positions, attention_bias (default false) on q/k/v/o, embeddings tied to
/// the LM head by default; the logits are scaled by logit_scale (no parameters). Command R+'s use_qk_norm adds a
/// per-head LayerNorm of q and k (heads x head_dim weights a layer, < 0.01%: not counted). Cohere2 alternates
/// sliding-window layers (sliding_window default 4096) with a global one every sliding_window_pattern (default 4)
/// layers, or as layer_types lists them. The shape keys (layers, widths, heads, vocabulary) are required: CohereConfig's
/// defaults are one size (Command R) and no published file omits them (issue 57).
inline transformer_spec read_hf(const hf_reader& r, const std::string& type) {
    transformer_spec s;
    s.layers = r.integer({"num_hidden_layers"});
    s.hidden = r.integer({"hidden_size"});
    s.heads = r.integer({"num_attention_heads"});
    s.kv_heads = r.integer({"num_key_value_heads"}, s.heads);
    if (s.kv_heads < 1) r.fail("num_key_value_heads=" + std::to_string(s.kv_heads) + " (model.kv_heads) must be at least 1");
    s.ffn_hidden = r.integer({"intermediate_size"});
    s.activation = hf_gated_activation(r);
    s.vocab = r.integer({"vocab_size"});
    s.tied_embeddings = r.boolean("tie_word_embeddings", true);
    s.position_embedding = position_embedding::rope;
    s.norm = norm_kind::layernorm;
    s.bias = false;
    s.qkv_bias = r.boolean("attention_bias", false);  // q/k/v/o biases (o_proj's hidden ones not counted)
    s.parallel_attention = true;
    s.norm_eps = r.number({"layer_norm_eps"}, 1e-5, bounds::norm_eps);
    s.rope = hf_rope(r, 1e4);
    s.qk_norm = r.boolean("use_qk_norm", false);
    if (type == "cohere2") {
        s.sliding_window = r.integer({"sliding_window"}, 4096);
        s.global_layer_every = r.integer({"sliding_window_pattern"}, 4);
        s.global_layer_every = hf_layer_types(r, s.layers, {"sliding_attention", "full_attention"}, s.global_layer_every);
    }
    return s;
}

inline constexpr model_family family{
    .name = "cohere",
    .model_types = {{
        {"cohere", "CohereForCausalLM"},
        {"cohere2", "Cohere2ForCausalLM"},
    }},
    .read_hf = read_hf,
};

}  // namespace frenzy::families::cohere
