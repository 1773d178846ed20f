#pragma once
// OPT: the Hugging Face config.json reader of the family (keys and defaults as transformers sets them).
#include <string>

#include "frenzy/families/family.hpp"
#include "frenzy/io/hf_reader.hpp"

namespace frenzy::families::opt {

/// OPT (modeling_opt.py: OPTLearnedPositionalEmbedding has max_position_embeddings + 2 rows; lm_head tied).
inline transformer_spec read_hf(const hf_reader& r, const std::string& /*model_type*/) {
    transformer_spec s;
    s.layers = r.integer({"num_hidden_layers"});
    s.hidden = r.integer({"hidden_size"});
    s.heads = r.integer({"num_attention_heads"});
    s.ffn_hidden = r.integer({"ffn_dim"});
    s.activation = hf_plain_activation(r, "activation_function", r.string("activation_function", "relu"));
    s.vocab = r.integer({"vocab_size"});
    s.tied_embeddings = r.boolean("tie_word_embeddings", true);
    s.position_embedding = position_embedding::learned;
    s.max_positions = r.integer({"max_position_embeddings"}, 2048) + 2;
    s.norm = norm_kind::layernorm;
    s.bias = r.boolean("enable_bias", true);
    if (const auto proj = r.integer({"word_embed_proj_dim"}, s.hidden); proj != s.hidden)
        r.fail("word_embed_proj_dim=" + std::to_string(proj) + " differs from hidden_size=" + std::to_string(s.hidden) +
               " (project_in/project_out layers are not supported)");
    return s;
}

inline constexpr model_family family{
    .name = "opt",
    .model_types = {{
        {"opt", "OPTForCausalLM"},
    }},
    .read_hf = read_hf,
};

}  // namespace frenzy::families::opt
