#pragma once
// Llama, Mistral (and Mistral 3's multimodal wrapper), Mixtral, Qwen2/Qwen2-MoE, Qwen3/Qwen3-MoE, Phi-3: the Hugging Face config.json reader of the family (keys and defaults as transformers sets them).
#include <string>

#include "frenzy/families/family.hpp"
#include "frenzy/io/hf_reader.hpp"

namespace frenzy::families::llama {

/// RoPE and RMSNorm: the rotary spec, norm epsilon and QK-norm, with the config classes' defaults where a file omits a key
/// (transformers@008e5743 configuration_<type>.py, and MixtralConfig's rope_theta 1e6 of the 4.x releases):
/// rms_norm_eps 1e-6 but Mixtral's and Phi-3's 1e-5; Qwen3's q_norm and k_norm (modeling_qwen3.py Qwen3Attention).
inline void read_positions_and_norms(const hf_reader& r, const std::string& type, transformer_spec& s) {
    s.position_embedding = position_embedding::rope;
    s.norm = norm_kind::rmsnorm;
    const bool eps5 = type == "mixtral" || type == "phi3";
    s.norm_eps = r.number({"rms_norm_eps"}, eps5 ? 1e-5 : 1e-6, bounds::norm_eps);
    s.rope = hf_rope(r, type == "mixtral" ? 1e6 : 1e4);
    // Phi-3 reads its older "su" and "yarn" rope types as longrope (configuration_phi3.py convert_rope_params_to_dict)
    if (type == "phi3" && s.rope.scaling == rope_scaling_kind::yarn) s.rope.scaling = rope_scaling_kind::longrope;
    s.qk_norm = type == "qwen3" || type == "qwen3_moe";
}

/// Qwen3's layer_types (configuration_qwen3.py: "sliding_attention" or "full_attention" a layer, default all full; a
/// sliding layer uses sliding_window only with use_sliding_window, default false): checked, and the window kept
/// where it applies.
inline void read_qwen3_layer_types(const hf_reader& r, transformer_spec& s) {
    const auto every = hf_layer_types(r, s.layers, {"full_attention", "sliding_attention"}, 1);
    if (every == 1 || !r.boolean("use_sliding_window", false)) return;
    s.sliding_window = r.integer({"sliding_window"}, 4096);
    s.global_layer_every = every;
}

/// Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE (transformers modeling_llama.py and its copies).
inline transformer_spec read_hf(const hf_reader& r, const std::string& type) {
    transformer_spec s;
    s.layers = r.integer({"num_hidden_layers"});
    s.hidden = r.integer({"hidden_size"});
    s.heads = r.integer({"num_attention_heads"});
    s.kv_heads = r.integer({"num_key_value_heads"}, s.heads);
    if (s.kv_heads < 1)  // 0 is not "derive" in an HF config: transformers would divide by it
        r.fail("num_key_value_heads=" + std::to_string(s.kv_heads) + " (model.kv_heads) must be at least 1");
    s.head_dim = r.integer({"head_dim"}, 0);
    s.ffn_hidden = r.integer({"intermediate_size"});
    s.activation = hf_gated_activation(r);
    s.vocab = r.integer({"vocab_size"});
    s.tied_embeddings = r.boolean("tie_word_embeddings", false);
    s.bias = false;
    read_positions_and_norms(r, type, s);
    if (type == "qwen2" || type == "qwen2_moe") {
        s.qkv_bias = true;  // modeling_qwen2.py: q/k/v_proj bias=True, o_proj and MLP bias=False
    } else if (type == "qwen3" || type == "qwen3_moe") {
        // modeling_qwen3.py: attention_bias (default false) on q/k/v/o; q_norm/k_norm of head_dim (2 x head_dim
        // weights a layer) counted with qk_norm.
        s.qkv_bias = r.boolean("attention_bias", false);
        read_qwen3_layer_types(r, s);
    } else if (type == "phi3") {
        // modeling_phi3.py: fused qkv_proj (q + 2 kv outputs) and gate_up_proj (2 x intermediate), no biases:
        // the same parameters as separate projections.
    } else if (type == "llama") {
        // attention_bias puts biases on q/k/v/o; alone it maps to qkv_bias (o_proj's `hidden` biases a layer
        // are not counted); mlp_bias alone is not representable and ignored (ffn + hidden parameters a layer).
        const bool attn = r.boolean("attention_bias", false), mlp = r.boolean("mlp_bias", false);
        s.bias = attn && mlp;
        s.qkv_bias = attn && !mlp;
    }
    if (type == "mixtral") {
        s.moe.experts = r.integer({"num_local_experts"});
        s.moe.top_k = r.integer({"num_experts_per_tok"}, 2);
    } else if (type == "qwen3_moe") {  // modeling_qwen3_moe.py: no shared expert
        s.moe.experts = r.integer({"num_experts"}, 128);
        s.moe.top_k = r.integer({"num_experts_per_tok"}, 8);
        s.moe.expert_ffn_hidden = r.integer({"moe_intermediate_size"}, 768);
        if (r.integer({"decoder_sparse_step"}, 1) != 1) r.fail("decoder_sparse_step other than 1 is not supported");
        if (const auto* only = r.find({"mlp_only_layers"}); only && !only->empty())
            r.fail("mlp_only_layers (dense layers among MoE layers) is not supported");
    } else if (type == "qwen2_moe") {
        s.moe.experts = r.integer({"num_experts"});
        s.moe.top_k = r.integer({"num_experts_per_tok"}, 4);
        s.moe.expert_ffn_hidden = r.integer({"moe_intermediate_size"});
        const auto shared = r.integer({"shared_expert_intermediate_size"}, 0);
        if (s.moe.expert_ffn_hidden <= 0) r.fail("moe_intermediate_size must be positive");
        if (shared % s.moe.expert_ffn_hidden != 0)
            r.fail("shared_expert_intermediate_size=" + std::to_string(shared) +
                   " is not a multiple of moe_intermediate_size=" + std::to_string(s.moe.expert_ffn_hidden));
        // The shared expert is one MLP of shared_expert_intermediate_size = shared_experts x expert MLPs of
        // moe_intermediate_size (same parameters); its 1-output gate (hidden parameters a layer) is not counted.
        s.moe.shared_experts = shared / s.moe.expert_ffn_hidden;
        if (r.integer({"decoder_sparse_step"}, 1) != 1) r.fail("decoder_sparse_step other than 1 is not supported");
        if (const auto* only = r.find({"mlp_only_layers"}); only && !only->empty())
            r.fail("mlp_only_layers (dense layers among MoE layers) is not supported");
    }
    return s;
}

inline constexpr model_family family{
    .name = "llama",
    .model_types = {{
        {"llama", "LlamaForCausalLM"},
        {"mistral", "MistralForCausalLM"},
        {"mixtral", "MixtralForCausalLM"},
        {"qwen2", "Qwen2ForCausalLM"},
        {"qwen2_moe", "Qwen2MoeForCausalLM"},
        {"qwen3", "Qwen3ForCausalLM"},
        {"qwen3_moe", "Qwen3MoeForCausalLM"},
        {"phi3", "Phi3ForCausalLM"},
        // Mistral Small 3.1 / 3.2 (transformers configuration_mistral3.py: the language model in text_config)
        {"mistral3", "Mistral3ForConditionalGeneration", "mistral"},
    }},
    .read_hf = read_hf,
};

}  // namespace frenzy::families::llama
