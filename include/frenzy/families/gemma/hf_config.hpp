#pragma once
// Gemma 1, 2 and 3: the Hugging Face config.json reader of the family (keys and defaults as transformers sets them).
#include <string>

#include "frenzy/families/family.hpp"
#include "frenzy/io/hf_reader.hpp"

namespace frenzy::families::gemma {

/// Gemma 1/2/3 (transformers configuration_gemma*.py / modeling_gemma*.py): GeGLU, explicit head_dim (256 by
/// default, so heads x head_dim may differ from hidden), tied embeddings by default, RMSNorm. Gemma 2 and 3 have four
/// norms a layer (input, post-attention, pre- and post-feedforward), sliding-window layers alternating with global
/// ones (Gemma 2: every other layer, sliding_window default 4096; Gemma 3: sliding_window_pattern default 6) and
/// Gemma 2 soft-caps the final logits (final_logit_softcapping default 30). Gemma 3's q_norm/k_norm are per head
/// (2 x head_dim weights a layer, counted with qk_norm).
inline transformer_spec read_hf(const hf_reader& r, const std::string& type) {
    transformer_spec s;
    const bool v2 = type == "gemma2", v3 = type == "gemma3_text";
    s.layers = r.integer({"num_hidden_layers"});
    s.hidden = r.integer({"hidden_size"});
    s.heads = r.integer({"num_attention_heads"});
    s.kv_heads = r.integer({"num_key_value_heads"}, s.heads);
    s.head_dim = r.integer({"head_dim"}, 256);
    s.ffn_hidden = r.integer({"intermediate_size"});
    s.activation = hf_gemma_activation(r);
    s.vocab = v3 ? r.integer({"vocab_size"}, 262208) : r.integer({"vocab_size"});  // Gemma3TextConfig default
    s.tied_embeddings = r.boolean("tie_word_embeddings", true);
    s.position_embedding = position_embedding::rope;
    s.norm = norm_kind::rmsnorm;
    s.bias = false;
    s.qkv_bias = r.boolean("attention_bias", false);  // q/k/v/o biases (o_proj's hidden ones not counted)
    s.norm_eps = r.number({"rms_norm_eps"}, 1e-6, bounds::norm_eps);
    s.rope = hf_rope(r, v3 ? 1e6 : 1e4);
    if (v3) s.rope.local_theta = r.number({"rope_local_base_freq"}, 1e4, bounds::rope_theta);
    s.qk_norm = v3;  // modeling_gemma3.py Gemma3Attention q_norm, k_norm
    if (v2 || v3) {
        s.norms_per_layer = 4;
        s.sliding_window = r.integer({"sliding_window"}, 4096);
        s.global_layer_every = v2 ? 2 : r.integer({"sliding_window_pattern"}, 6);
        // layer_types (transformers >= 4.53 writes it) overrides the pattern; checked against num_hidden_layers
        s.global_layer_every = hf_layer_types(r, s.layers, {"sliding_attention", "full_attention"}, s.global_layer_every);
        if (const auto* cap = r.find({"final_logit_softcapping"}); v2 || cap) {
            if (!cap) s.final_logit_softcap = 30.0;
            else if (cap->is_number() && within(cap->get<double>(), bounds::softcap))
                s.final_logit_softcap = cap->get<double>();
            else
                r.fail("final_logit_softcapping=" + json_value_text(*cap) +
                       " (model.final_logit_softcap) must be a finite number in [" + number_text(bounds::softcap.min) + ", " +
                       number_text(bounds::softcap.max) + "] or null");
        }
        // Gemma2Config attn_logit_softcapping default 50, Gemma3TextConfig None
        if (const auto* cap = r.find({"attn_logit_softcapping"}); cap || v2)
            s.attn_logit_softcap = cap ? r.number({"attn_logit_softcapping"}, 0, bounds::softcap) : 50.0;
    }
    return s;
}

inline constexpr model_family family{
    .name = "gemma",
    .model_types = {{
        {"gemma", "GemmaForCausalLM"},
        {"gemma2", "Gemma2ForCausalLM"},
        {"gemma3_text", "Gemma3ForCausalLM"},
        {"gemma3", "Gemma3ForConditionalGeneration", "gemma3_text"},
    }},
    .read_hf = read_hf,
};

}  // namespace frenzy::families::gemma
