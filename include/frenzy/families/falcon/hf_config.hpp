#pragma once
// Falcon: the Hugging Face config.json reader of the family (keys and defaults as transformers sets them).
#include <string>

#include "frenzy/families/family.hpp"
#include "frenzy/io/hf_reader.hpp"

namespace frenzy::families::falcon {

/// Falcon (transformers configuration_falcon.py@5fd8eda defaults = Falcon-7B; modeling_falcon.py): GELU MLP of
/// ffn_hidden_size (default 4 x hidden), LayerNorm, parallel attention (one input norm; new_decoder_architecture
/// has ln_attn and ln_mlp), multi-query (1 kv head) unless new_decoder_architecture (num_kv_heads), rotary unless
/// alibi, bias on every linear when `bias`, tied embeddings by default. The shape keys (layers, hidden, heads,
/// vocabulary) are required: FalconConfig's defaults are one size (Falcon-7B) and no published file omits them.
inline transformer_spec read_hf(const hf_reader& r, const std::string& /*model_type*/) {
    transformer_spec s;
    s.layers = r.integer({"num_hidden_layers", "n_layer"});
    s.hidden = r.integer({"hidden_size", "n_embed"});
    s.heads = r.integer({"num_attention_heads", "n_head"});
    const bool new_arch = r.boolean("new_decoder_architecture", false);
    if (new_arch) s.kv_heads = r.integer({"num_kv_heads"}, s.heads);
    else s.kv_heads = r.boolean("multi_query", true) ? 1 : s.heads;
    s.ffn_hidden = r.integer({"ffn_hidden_size"}, 4 * s.hidden);
    s.activation = hf_plain_activation(r, "activation", r.string("activation", "gelu"));
    s.vocab = r.integer({"vocab_size"});
    s.tied_embeddings = r.boolean("tie_word_embeddings", true);
    s.position_embedding = r.boolean("alibi", false) ? position_embedding::alibi : position_embedding::rope;
    s.norm = norm_kind::layernorm;
    s.norm_eps = r.number({"layer_norm_epsilon"}, 1e-5, bounds::norm_eps);
    if (s.position_embedding == position_embedding::rope) s.rope = hf_rope(r, 1e4);
    s.bias = r.boolean("bias", false);
    s.parallel_attention = new_arch || r.boolean("parallel_attn", true);
    if (new_arch) s.norms_per_layer = r.integer({"num_ln_in_parallel_attn"}, 2);
    else if (!s.parallel_attention) s.norms_per_layer = 2;
    return s;
}

inline constexpr model_family family{
    .name = "falcon",
    .model_types = {{
        {"falcon", "FalconForCausalLM"},
    }},
    .read_hf = read_hf,
};

}  // namespace frenzy::families::falcon
