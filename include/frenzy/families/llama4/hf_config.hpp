#pragma once
// Llama 4: the Hugging Face config.json reader of the family (keys and defaults as transformers sets them).
#include <string>

#include "frenzy/families/family.hpp"
#include "frenzy/io/hf_reader.hpp"

namespace frenzy::families::llama4 {

/// Llama 4 (transformers configuration_llama4.py@b17cfe4 Llama4TextConfig defaults = Llama-4-Scout-17B-16E): every
/// interleave_moe_layer_step-th layer (layer i with (i + 1) % step == 0) is MoE with num_local_experts routed experts
/// of intermediate_size plus one shared expert of the same size; the other layers are dense with
/// intermediate_size_mlp. QK norms have no weights. model_type "llama4" nests the text model in text_config. The shape
/// keys (layers, widths, heads, experts, vocabulary) are required: a config without them describes no published model
/// (issue 57), and Llama4TextConfig's defaults are one size (Scout).
inline transformer_spec read_hf(const hf_reader& r, const std::string& /*model_type*/) {
    transformer_spec s;
    s.layers = r.integer({"num_hidden_layers"});
    s.hidden = r.integer({"hidden_size"});
    s.heads = r.integer({"num_attention_heads"});
    s.kv_heads = r.integer({"num_key_value_heads"}, 8);
    s.head_dim = r.integer({"head_dim"}, 128);
    const auto expert = r.integer({"intermediate_size"});
    s.ffn_hidden = r.integer({"intermediate_size_mlp"});
    s.activation = hf_gated_activation(r);
    s.vocab = r.integer({"vocab_size"});
    s.tied_embeddings = r.boolean("tie_word_embeddings", false);
    s.position_embedding = position_embedding::rope;
    s.norm = norm_kind::rmsnorm;
    s.bias = false;
    s.norm_eps = r.number({"rms_norm_eps"}, 1e-5, bounds::norm_eps);
    s.rope = hf_rope(r, 500000);
    s.qk_norm = r.boolean("use_qk_norm", true);  // Llama4TextL2Norm: no weights
    s.moe.experts = r.integer({"num_local_experts"});
    s.moe.score = router_score::sigmoid;  // Llama4Router: sigmoid of the chosen logits (top-1: Megatron's sigmoid)
    s.moe.top_k = r.integer({"num_experts_per_tok"}, 1);
    s.moe.expert_ffn_hidden = expert;
    s.moe.shared_experts = 1;
    s.moe.layer_step = r.integer({"interleave_moe_layer_step"}, 1);
    if (s.moe.layer_step < 1)
        r.fail("interleave_moe_layer_step=" + std::to_string(s.moe.layer_step) + " must be at least 1");
    if (const auto* ml = r.find({"moe_layers"}); ml && ml->is_array()) {
        // Only the default list (range(step - 1, layers, step)) is representable.
        bool ok = static_cast<std::int64_t>(ml->size()) == s.layers / s.moe.layer_step;
        for (std::size_t i = 0; ok && i < ml->size(); ++i)
            ok = (*ml)[i].is_number_integer() &&
                 (*ml)[i].get<std::int64_t>() == static_cast<std::int64_t>(i + 1) * s.moe.layer_step - 1;
        if (!ok) r.fail("moe_layers=" + json_value_text(*ml) + " is not every interleave_moe_layer_step-th layer");
    }
    return s;
}

inline constexpr model_family family{
    .name = "llama4",
    .model_types = {{
        {"llama4_text", "Llama4ForCausalLM"},
        {"llama4", "Llama4ForConditionalGeneration", "llama4_text"},
    }},
    .read_hf = read_hf,
};

}  // namespace frenzy::families::llama4
