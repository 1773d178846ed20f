#pragma once
// GPT-NeoX / Pythia: the Hugging Face config.json reader of the family (keys and defaults as transformers sets them).
#include <string>

#include "frenzy/families/family.hpp"
#include "frenzy/io/hf_reader.hpp"

namespace frenzy::families::gpt_neox {

/// GPT-NeoX / Pythia (configuration_gpt_neox.py: untied embed_out, biases, rotary on part of each head).
inline transformer_spec read_hf(const hf_reader& r, const std::string& /*model_type*/) {
    transformer_spec s;
    s.layers = r.integer({"num_hidden_layers"});
    s.hidden = r.integer({"hidden_size"});
    s.heads = r.integer({"num_attention_heads"});
    s.ffn_hidden = r.integer({"intermediate_size"});
    s.activation = hf_plain_activation(r, "hidden_act", r.string("hidden_act", "gelu"));
    s.vocab = r.integer({"vocab_size"});
    s.tied_embeddings = r.boolean("tie_word_embeddings", false);
    s.position_embedding = position_embedding::rope;
    s.norm = norm_kind::layernorm;
    s.norm_eps = r.number({"layer_norm_eps"}, 1e-5, bounds::norm_eps);
    s.rope = hf_rope(r, 1e4, 0.25);  // GPTNeoXConfig: rotary_emb_base 10000, rotary_pct 0.25
    s.rope.theta = r.number({"rotary_emb_base"}, s.rope.theta, bounds::rope_theta);
    s.bias = r.boolean("attention_bias", true);  // MLP biases are always there; attention_bias is on by default
    return s;
}

inline constexpr model_family family{
    .name = "gpt_neox",
    .model_types = {{
        {"gpt_neox", "GPTNeoXForCausalLM"},
    }},
    .read_hf = read_hf,
};

}  // namespace frenzy::families::gpt_neox
