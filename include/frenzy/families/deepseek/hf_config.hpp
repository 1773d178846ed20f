#pragma once
// DeepSeek-V2 and V3: the Hugging Face config.json reader of the family (keys and defaults as transformers sets them).
#include <string>

#include "frenzy/families/family.hpp"
#include "frenzy/io/hf_reader.hpp"

namespace frenzy::families::deepseek {

/// DeepSeek-V2/V3 (transformers configuration_deepseek_v3.py@0fc683d defaults = DeepSeek-V3; modeling_deepseek_v2.py):
/// MLA, n_routed_experts of moe_intermediate_size with n_shared_experts always active, the first
/// first_k_dense_replace layers dense (intermediate_size). head_dim is stored as qk_nope + qk_rope and kv_heads as
/// heads so the generic activation terms see MLA's per-head widths. q_lora_rank absent or null: queries are not
/// compressed (DeepSeek-V2-Lite, DeepSeek-V2 paper appendix B) for deepseek_v2; deepseek_v3 defaults to 1536. The
/// shape keys (layers, widths, heads, vocabulary, routed experts) are required in both: DeepseekV3Config's defaults
/// are one size (DeepSeek-V3) and no published file omits them (issue 57).
/// The router (modeling_deepseek_v2.py DeepseekV2Moe: scoring_func softmax, topk_method greedy or
/// group_limited_greedy over n_group / topk_group, routed_scaling_factor 1; modeling_deepseek_v3.py
/// DeepseekV3TopkRouter: sigmoid scores plus e_score_correction_bias for the choice (aux-loss-free balancing), always
/// grouped, DeepseekV3Config n_group 8, topk_group 4, routed_scaling_factor 2.5). One group, or a factor of 1, is none.
inline void read_router(const hf_reader& r, bool v3, moe_spec& e) {
    const auto score = r.string("scoring_func", v3 ? "sigmoid" : "softmax");
    if (score != "softmax" && score != "sigmoid")
        r.fail("scoring_func=\"" + printable(score) + "\" (model.moe.score) is not softmax or sigmoid");
    e.score = score == "sigmoid" ? router_score::sigmoid : router_score::softmax;
    e.expert_bias = v3;
    const auto method = r.string("topk_method", v3 ? "noaux_tc" : "greedy");
    if (method != "greedy" && method != "group_limited_greedy" && method != "noaux_tc")
        r.fail("topk_method=\"" + printable(method) + "\" is not greedy, group_limited_greedy or noaux_tc");
    if (method != "greedy") {
        e.groups = r.integer({"n_group"}, v3 ? 8 : 1);
        e.group_top_k = r.integer({"topk_group"}, v3 ? 4 : 1);
        if (e.groups <= 1) e.groups = e.group_top_k = 0;
    }
    e.topk_scaling = r.number({"routed_scaling_factor"}, v3 ? 2.5 : 1.0, {1e-6, 1e6});
    if (e.topk_scaling == 1) e.topk_scaling = 0;
}

inline transformer_spec read_hf(const hf_reader& r, const std::string& type) {
    const bool v3 = type == "deepseek_v3";
    // the other deepseek_v3 keys default to DeepSeek-V3 (the transformers defaults); deepseek_v2's are required.
    auto get = [&](const char* key, std::int64_t v3_default) {
        return v3 ? r.integer({key}, v3_default) : r.integer({key});
    };
    transformer_spec s;
    s.layers = r.integer({"num_hidden_layers"});
    s.hidden = r.integer({"hidden_size"});
    s.heads = r.integer({"num_attention_heads"});
    s.ffn_hidden = r.integer({"intermediate_size"});
    s.activation = hf_gated_activation(r);
    s.vocab = r.integer({"vocab_size"});
    s.tied_embeddings = r.boolean("tie_word_embeddings", false);
    s.position_embedding = position_embedding::rope;
    s.norm = norm_kind::rmsnorm;
    s.bias = false;
    if (r.boolean("attention_bias", false)) r.fail("attention_bias=true is not supported for MLA");
    s.norm_eps = r.number({"rms_norm_eps"}, 1e-6, bounds::norm_eps);
    s.rope = hf_rope(r, 1e4);
    s.mla.q_lora_rank = r.integer({"q_lora_rank"}, v3 && !r.has_null("q_lora_rank") ? 1536 : 0);
    s.mla.kv_lora_rank = get("kv_lora_rank", 512);
    s.mla.qk_nope_head_dim = get("qk_nope_head_dim", 128);
    s.mla.qk_rope_head_dim = get("qk_rope_head_dim", 64);
    s.mla.v_head_dim = get("v_head_dim", 128);
    if (s.mla.kv_lora_rank <= 0) r.fail("kv_lora_rank=" + std::to_string(s.mla.kv_lora_rank) + " must be positive (MLA)");
    s.head_dim = s.mla.qk_nope_head_dim + s.mla.qk_rope_head_dim;
    s.kv_heads = 0;
    s.moe.experts = r.integer({"n_routed_experts"});
    if (s.moe.experts > 0) {
        read_router(r, v3, s.moe);
        s.moe.top_k = get("num_experts_per_tok", 8);
        s.moe.expert_ffn_hidden = get("moe_intermediate_size", 2048);
        s.moe.shared_experts = get("n_shared_experts", 1);
        s.moe.dense_layers = get("first_k_dense_replace", 3);
        if (const auto f = r.integer({"moe_layer_freq"}, 1); f != 1)
            r.fail("moe_layer_freq=" + std::to_string(f) + " is not supported (only 1: every layer after first_k_dense_replace)");
    }
    return s;
}

inline constexpr model_family family{
    .name = "deepseek",
    .model_types = {{
        {"deepseek_v2", "DeepseekV2ForCausalLM"},
        {"deepseek_v3", "DeepseekV3ForCausalLM"},
    }},
    .read_hf = read_hf,
};

}  // namespace frenzy::families::deepseek
