#pragma once
// GPT-2: the Hugging Face config.json reader of the family (keys and defaults as transformers sets them).
#include <string>

#include "frenzy/families/family.hpp"
#include "frenzy/io/hf_reader.hpp"

namespace frenzy::families::gpt2 {

/// GPT-2 (configuration_gpt2.py: n_inner None -> 4 n_embd, activation_function gelu_new, tied).
inline transformer_spec read_hf(const hf_reader& r, const std::string& /*model_type*/) {
    transformer_spec s;
    s.layers = r.integer({"n_layer", "num_hidden_layers"});
    s.hidden = r.integer({"n_embd", "hidden_size"});
    s.heads = r.integer({"n_head", "num_attention_heads"});
    s.ffn_hidden = r.integer({"n_inner"}, 4 * s.hidden);
    s.activation = hf_plain_activation(r, "activation_function", r.string("activation_function", "gelu_new"));
    s.vocab = r.integer({"vocab_size"});
    s.tied_embeddings = r.boolean("tie_word_embeddings", true);
    s.position_embedding = position_embedding::learned;
    s.max_positions = r.integer({"n_positions", "max_position_embeddings"}, 1024);
    s.norm = norm_kind::layernorm;
    s.norm_eps = r.number({"layer_norm_epsilon"}, 1e-5, bounds::norm_eps);
    s.bias = true;
    return s;
}

inline constexpr model_family family{
    .name = "gpt2",
    .model_types = {{
        {"gpt2", "GPT2LMHeadModel"},
    }},
    .read_hf = read_hf,
};

}  // namespace frenzy::families::gpt2
