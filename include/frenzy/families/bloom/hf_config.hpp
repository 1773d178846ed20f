#pragma once
// BLOOM: the Hugging Face config.json reader of the family (keys and defaults as transformers sets them).
#include <string>

#include "frenzy/families/family.hpp"
#include "frenzy/io/hf_reader.hpp"

namespace frenzy::families::bloom {

/// BLOOM (configuration_bloom.py: n_embed is an alias of hidden_size; MLP 4 h; word_embeddings_layernorm).
inline transformer_spec read_hf(const hf_reader& r, const std::string& /*model_type*/) {
    transformer_spec s;
    s.layers = r.integer({"n_layer", "num_hidden_layers"});
    s.hidden = r.integer({"hidden_size", "n_embed"});
    s.heads = r.integer({"n_head", "num_attention_heads"});
    s.ffn_hidden = 4 * s.hidden;
    s.activation = activation::gelu;
    s.vocab = r.integer({"vocab_size"});
    s.tied_embeddings = r.boolean("tie_word_embeddings", true);
    s.position_embedding = position_embedding::alibi;
    s.norm = norm_kind::layernorm;
    s.norm_eps = r.number({"layer_norm_epsilon"}, 1e-5, bounds::norm_eps);
    s.bias = true;
    s.embedding_norm = true;
    return s;
}

inline constexpr model_family family{
    .name = "bloom",
    .model_types = {{
        {"bloom", "BloomForCausalLM"},
    }},
    .read_hf = read_hf,
};

}  // namespace frenzy::families::bloom
