#pragma once
// gpt-oss (OpenAI, 2025): the Hugging Face config.json reader of the family (keys and defaults as transformers sets them).
#include <string>

#include "frenzy/families/family.hpp"
#include "frenzy/io/hf_reader.hpp"

namespace frenzy::families::gpt_oss {

/// gpt-oss (huggingface/transformers@828a27fd src/transformers/models/gpt_oss/configuration_gpt_oss.py GptOssConfig;
/// modeling_gpt_oss.py): every layer MoE with num_local_experts experts of intermediate_size, num_experts_per_tok
/// (the published files also carry experts_per_token) chosen by a router with a bias, softmax over the chosen logits
/// (GptOssTopKRouter); the experts' clamped SwiGLU with biases (GptOssExperts: alpha 1.702, swiglu_limit 7); q/k/v/o
/// with biases (attention_bias is always true); a learned sink logit per head (self_attn.sinks); layers alternating
/// sliding-window (sliding_window 128) and full attention as layer_types lists them (default: sliding for even i);
/// RMSNorm; rope_theta 150000 with YaRN factor 32 over 4096 positions, beta_fast 32, beta_slow 1; untied embeddings.
/// The shape keys (layers, widths, heads, experts, vocabulary) are required: GptOssConfig's own defaults (36 layers,
/// 128 experts: gpt-oss-120b) describe one size and no published file omits them.
inline transformer_spec read_hf(const hf_reader& r, const std::string& /*model_type*/) {
    transformer_spec s;
    s.layers = r.integer({"num_hidden_layers"});
    s.hidden = r.integer({"hidden_size"});
    s.heads = r.integer({"num_attention_heads"});
    s.kv_heads = r.integer({"num_key_value_heads"}, 8);
    s.head_dim = r.integer({"head_dim"}, 64);
    s.ffn_hidden = r.integer({"intermediate_size"});
    s.activation = hf_gated_activation(r);
    s.swiglu_limit = r.number({"swiglu_limit"}, 7.0, {1e-6, bounds::softcap.max});
    s.vocab = r.integer({"vocab_size"});
    s.tied_embeddings = r.boolean("tie_word_embeddings", false);
    s.position_embedding = position_embedding::rope;
    s.norm = norm_kind::rmsnorm;
    s.bias = true;  // GptOssConfig sets attention_bias = True whatever the file says; experts and router have biases
    s.norm_eps = r.number({"rms_norm_eps"}, 1e-5, bounds::norm_eps);
    s.rope = hf_rope(r, 150000);
    if (!r.has("rope_scaling") && !r.has("rope_parameters"))  // GptOssConfig's default rope_scaling
        s.rope = {.theta = s.rope.theta, .scaling = rope_scaling_kind::yarn, .factor = 32, .original_max_positions = 4096,
                  .beta_fast = 32, .beta_slow = 1};
    s.attention_sinks = true;
    s.sliding_window = r.integer({"sliding_window"}, 128);
    s.global_layer_every = hf_layer_types(r, s.layers, {"sliding_attention", "full_attention"}, 2);
    if (s.global_layer_every == 1) s.sliding_window = 0;  // every layer full
    s.moe.experts = r.integer({"num_local_experts"});
    s.moe.top_k = r.integer({"num_experts_per_tok", "experts_per_token"}, 4);
    if (r.has("num_experts_per_tok") && r.has("experts_per_token") &&
        r.integer({"num_experts_per_tok"}) != r.integer({"experts_per_token"}))
        r.fail("num_experts_per_tok=" + std::to_string(r.integer({"num_experts_per_tok"})) + " and experts_per_token=" +
               std::to_string(r.integer({"experts_per_token"})) + " (model.moe.top_k) disagree");
    // expert_ffn_hidden stays 0: the experts are intermediate_size wide, as model.ffn_hidden (no dense layer)
    return s;
}

inline constexpr model_family family{
    .name = "gpt_oss",
    .model_types = {{
        {"gpt_oss", "GptOssForCausalLM"},
    }},
    .read_hf = read_hf,
};

}  // namespace frenzy::families::gpt_oss
