#pragma once
// Hugging Face config.json -> transformer_spec.
// Keys and their defaults follow the transformers configuration_<model>.py / modeling_<model>.py files.
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/io/json_reader.hpp"
#include "frenzy/model/transformer.hpp"

namespace frenzy {

namespace detail {

/// `model_type` values from_hf_config understands, with the `architectures[0]` class that implies each.
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 22> hf_model_types{{
    {"llama", "LlamaForCausalLM"},
    {"mistral", "MistralForCausalLM"},
    {"mixtral", "MixtralForCausalLM"},
    {"qwen2", "Qwen2ForCausalLM"},
    {"qwen2_moe", "Qwen2MoeForCausalLM"},
    {"qwen3", "Qwen3ForCausalLM"},
    {"qwen3_moe", "Qwen3MoeForCausalLM"},
    {"phi3", "Phi3ForCausalLM"},
    {"gemma", "GemmaForCausalLM"},
    {"gemma2", "Gemma2ForCausalLM"},
    {"gemma3_text", "Gemma3ForCausalLM"},
    {"gemma3", "Gemma3ForConditionalGeneration"},
    {"olmo2", "Olmo2ForCausalLM"},
    {"deepseek_v2", "DeepseekV2ForCausalLM"},
    {"deepseek_v3", "DeepseekV3ForCausalLM"},
    {"falcon", "FalconForCausalLM"},
    {"llama4_text", "Llama4ForCausalLM"},
    {"llama4", "Llama4ForConditionalGeneration"},
    {"gpt2", "GPT2LMHeadModel"},
    {"opt", "OPTForCausalLM"},
    {"gpt_neox", "GPTNeoXForCausalLM"},
    {"bloom", "BloomForCausalLM"},
}};

inline std::string hf_supported_list() {
    std::string s;
    for (const auto& p : hf_model_types) s += (s.empty() ? "" : ", ") + std::string(p.first);
    return s;
}

/// Which transformer_spec field each config.json key sets, so that errors name both.
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 36> hf_key_fields{{
    {"num_hidden_layers", "model.layers"}, {"n_layer", "model.layers"},
    {"hidden_size", "model.hidden"}, {"n_embd", "model.hidden"}, {"n_embed", "model.hidden"},
    {"num_attention_heads", "model.heads"}, {"n_head", "model.heads"},
    {"num_key_value_heads", "model.kv_heads"}, {"num_kv_heads", "model.kv_heads"}, {"multi_query", "model.kv_heads"},
    {"head_dim", "model.head_dim"},
    {"intermediate_size", "model.ffn_hidden"}, {"ffn_dim", "model.ffn_hidden"}, {"n_inner", "model.ffn_hidden"},
    {"intermediate_size_mlp", "model.ffn_hidden"}, {"ffn_hidden_size", "model.ffn_hidden"},
    {"vocab_size", "model.vocab"}, {"tie_word_embeddings", "model.tied_embeddings"},
    {"hidden_act", "model.activation"}, {"hidden_activation", "model.activation"},
    {"activation_function", "model.activation"}, {"max_position_embeddings", "model.max_positions"},
    {"num_local_experts", "model.moe.experts"}, {"num_experts", "model.moe.experts"},
    {"n_routed_experts", "model.moe.experts"}, {"num_experts_per_tok", "model.moe.top_k"},
    {"moe_intermediate_size", "model.moe.expert_ffn_hidden"}, {"n_shared_experts", "model.moe.shared_experts"},
    {"shared_expert_intermediate_size", "model.moe.shared_experts"}, {"first_k_dense_replace", "model.moe.dense_layers"},
    {"interleave_moe_layer_step", "model.moe.layer_step"}, {"q_lora_rank", "model.mla.q_lora_rank"},
    {"kv_lora_rank", "model.mla.kv_lora_rank"}, {"qk_nope_head_dim", "model.mla.qk_nope_head_dim"},
    {"qk_rope_head_dim", "model.mla.qk_rope_head_dim"}, {"v_head_dim", "model.mla.v_head_dim"},
}};

/// " (model.X)" for a config.json key that sets a spec field, else "".
inline std::string hf_field_of(std::string_view key) {
    for (const auto& [k, f] : hf_key_fields)
        if (k == key) return " (" + std::string(f) + ")";
    return "";
}

/// Bound of each integer config.json key (core/checked.hpp bounds of the spec field it sets; 0 allowed where the
/// key's 0 means "none" or "derive"). Keys not listed are small structural counts: 0..100000.
inline int_bound hf_int_bound(std::string_view key) {
    using namespace bounds;
    static constexpr std::pair<std::string_view, int_bound> table[] = {
        {"num_hidden_layers", layers}, {"n_layer", layers},
        {"hidden_size", hidden}, {"n_embd", hidden}, {"n_embed", hidden}, {"word_embed_proj_dim", hidden},
        {"num_attention_heads", heads}, {"n_head", heads},
        {"num_key_value_heads", heads}, {"num_kv_heads", heads}, {"head_dim", {0, heads.max}},
        {"intermediate_size", ffn_hidden}, {"ffn_dim", ffn_hidden}, {"n_inner", ffn_hidden},
        {"intermediate_size_mlp", ffn_hidden}, {"ffn_hidden_size", ffn_hidden},
        {"vocab_size", vocab},
        {"max_position_embeddings", positions}, {"n_positions", positions},
        {"num_local_experts", experts}, {"num_experts", experts}, {"n_routed_experts", experts},
        {"num_experts_per_tok", experts}, {"n_shared_experts", experts},
        {"moe_intermediate_size", {0, ffn_hidden.max}},
        {"shared_expert_intermediate_size", {0, ffn_hidden.max * 16}},
        {"first_k_dense_replace", {0, layers.max}}, {"interleave_moe_layer_step", {1, layers.max}},
        {"decoder_sparse_step", {0, layers.max}}, {"moe_layer_freq", {0, layers.max}},
        {"q_lora_rank", {0, hidden.max}}, {"kv_lora_rank", {0, hidden.max}},
        {"qk_nope_head_dim", {0, heads.max}}, {"qk_rope_head_dim", {0, heads.max}}, {"v_head_dim", {0, heads.max}},
        {"sliding_window", {0, seq_len.max}}, {"sliding_window_pattern", {0, layers.max}},
        {"num_ln_in_parallel_attn", {0, 16}},
    };
    for (const auto& [k, b] : table)
        if (k == key) return b;
    return {0, 100'000};
}

/// For each spec field named in `message`, the config.json keys present in `cfg` that set it:
/// "; from config.json: num_key_value_heads=5 -> model.kv_heads".
inline std::string hf_fields_note(const nlohmann::json& cfg, const std::string& message) {
    std::string note;
    for (const auto& [k, f] : hf_key_fields) {
        const std::string field(f);
        const auto at = message.find(field);
        if (at == std::string::npos) continue;
        const auto after = at + field.size();  // whole field name only (model.moe.experts vs model.moe.experts_x)
        if (after < message.size() && (std::isalnum(static_cast<unsigned char>(message[after])) || message[after] == '_' ||
                                       message[after] == '.'))
            continue;
        if (!cfg.contains(std::string(k))) continue;
        note += (note.empty() ? "; from config.json: " : ", ") + std::string(k) + "=" + describe(cfg.at(std::string(k))) +
                " -> " + field;
    }
    return note;
}

/// Typed look-ups in a config.json; every error names the source file and the key.
class hf_reader {
public:
    hf_reader(const nlohmann::json& cfg, const std::string& source) : cfg_(cfg), source_(source) {}

    /// The first of `keys` that is present and not null, or nullptr.
    const nlohmann::json* find(std::initializer_list<const char*> keys, const char** which = nullptr) const {
        for (const char* k : keys)
            if (cfg_.contains(k) && !cfg_.at(k).is_null()) {
                if (which) *which = k;
                return &cfg_.at(k);
            }
        return nullptr;
    }
    bool has(const char* key) const { return find({key}) != nullptr; }
    bool has_null(const char* key) const { return cfg_.contains(key) && cfg_.at(key).is_null(); }

    std::int64_t integer(std::initializer_list<const char*> keys) const {
        const char* k = nullptr;
        const auto* v = find(keys, &k);
        if (!v) {
            std::string names;
            for (const char* n : keys) names += (names.empty() ? "\"" : " or \"") + std::string(n) + "\"";
            throw config_error(source_ + ": missing required key " + names + hf_field_of(*keys.begin()));
        }
        return as_integer(k, *v);
    }
    std::int64_t integer(std::initializer_list<const char*> keys, std::int64_t fallback) const {
        const char* k = nullptr;
        const auto* v = find(keys, &k);
        return v ? as_integer(k, *v) : fallback;
    }
    bool boolean(const char* key, bool fallback) const {
        const auto* v = find({key});
        if (!v) return fallback;
        if (!v->is_boolean())
            throw config_error(source_ + ": " + key + "=" + describe(*v) + hf_field_of(key) + " must be true or false");
        return v->get<bool>();
    }
    std::string string(const char* key, std::string fallback) const {
        const auto* v = find({key});
        if (!v) return fallback;
        if (!v->is_string())
            throw config_error(source_ + ": " + key + "=" + describe(*v) + hf_field_of(key) + " must be a string");
        return v->get<std::string>();
    }
    [[noreturn]] void fail(const std::string& what) const { throw config_error(source_ + ": " + what); }

private:
    /// A count: a JSON integer (or a float holding an exact integer) inside the key's bound (hf_int_bound); values
    /// past INT64_MAX, negative counts and 1e30 are errors naming the HF key and our field, never wrapped values.
    std::int64_t as_integer(const char* key, const nlohmann::json& v) const {
        const auto b = hf_int_bound(key);
        auto bad = [&]() -> config_error {
            return config_error(source_ + ": " + key + "=" + describe(v) + hf_field_of(key) + " must be an integer in " +
                                std::to_string(b.min) + ".." + std::to_string(b.max));
        };
        std::int64_t x = 0;
        if (v.is_number_unsigned()) {
            if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(b.max)) throw bad();
            x = static_cast<std::int64_t>(v.get<std::uint64_t>());
        } else if (v.is_number_integer()) {
            x = v.get<std::int64_t>();
        } else if (v.is_number_float()) {
            const double d = v.get<double>();
            // bounds are below 2^53, so a finite integral double inside them converts exactly
            if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(b.min) || d > static_cast<double>(b.max))
                throw bad();
            x = static_cast<std::int64_t>(d);
        } else {
            throw bad();
        }
        if (x < b.min || x > b.max) throw bad();
        return x;
    }
    const nlohmann::json& cfg_;
    const std::string& source_;
};

/// Activation of an ungated MLP (GPT-2 activation_function, OPT activation_function, GPT-NeoX hidden_act).
inline activation hf_plain_activation(const hf_reader& r, const char* key, const std::string& act) {
    if (act.rfind("gelu", 0) == 0) return activation::gelu;  // gelu, gelu_new, gelu_fast, gelu_pytorch_tanh
    if (act == "relu") return activation::relu;
    if (act == "relu2") return activation::squared_relu;
    r.fail(std::string(key) + "=\"" + printable(act) + "\" is not supported (gelu*, relu, relu2)");
}

/// LLaMA-style models always have a gated MLP (gate_proj, up_proj, down_proj); silu makes it SwiGLU.
inline activation hf_gated_activation(const hf_reader& r) {
    const auto act = r.string("hidden_act", "silu");
    if (act == "silu" || act == "swish") return activation::swiglu;
    r.fail("hidden_act=\"" + printable(act) + "\" with a gated MLP is not supported (only silu: SwiGLU)");
}

/// Gemma's gated MLP: act_fn(gate_proj(x)) * up_proj(x) with a GELU (transformers modeling_gemma.py GemmaMLP;
/// hidden_activation overrides hidden_act, default gelu_pytorch_tanh): GeGLU.
inline activation hf_gemma_activation(const hf_reader& r) {
    const char* key = r.has("hidden_activation") ? "hidden_activation" : "hidden_act";
    const auto act = r.string(key, "gelu_pytorch_tanh");
    if (act.rfind("gelu", 0) == 0) return activation::geglu;
    r.fail(std::string(key) + "=\"" + printable(act) + "\" is not supported for Gemma (gelu*: GeGLU)");
}

/// kv_heads == heads and head_dim == hidden / heads are stored as 0 ("derive"), as the presets do.
inline void hf_normalise(transformer_spec& s) {
    if (s.kv_heads == s.heads) s.kv_heads = 0;
    if (s.head_dim > 0 && s.heads > 0 && s.head_dim * s.heads == s.hidden) s.head_dim = 0;
}

/// Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE (transformers modeling_llama.py and its copies).
inline transformer_spec hf_llama_family(const hf_reader& r, const std::string& type) {
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
    s.position_embedding = position_embedding::rope;
    s.norm = norm_kind::rmsnorm;
    s.bias = false;
    if (type == "qwen2" || type == "qwen2_moe") {
        s.qkv_bias = true;  // modeling_qwen2.py: q/k/v_proj bias=True, o_proj and MLP bias=False
    } else if (type == "qwen3" || type == "qwen3_moe") {
        // modeling_qwen3.py: attention_bias (default false) on q/k/v/o; q_norm/k_norm of head_dim (2 x head_dim
        // weights a layer, < 0.01%) not counted.
        s.qkv_bias = r.boolean("attention_bias", false);
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

/// Gemma 1/2/3 (transformers configuration_gemma*.py / modeling_gemma*.py): GeGLU, explicit head_dim (256 by
/// default, so heads x head_dim may differ from hidden), tied embeddings by default, RMSNorm. Gemma 2 and 3 have four
/// norms a layer (input, post-attention, pre- and post-feedforward), sliding-window layers alternating with global
/// ones (Gemma 2: every other layer, sliding_window default 4096; Gemma 3: sliding_window_pattern default 6) and
/// Gemma 2 soft-caps the final logits (final_logit_softcapping default 30). Gemma 3's q_norm/k_norm (2 x head_dim
/// weights a layer, < 0.01% of the model) are not counted.
inline transformer_spec hf_gemma(const hf_reader& r, const std::string& type) {
    transformer_spec s;
    const bool v2 = type == "gemma2", v3 = type == "gemma3_text";
    s.layers = r.integer({"num_hidden_layers"});
    s.hidden = r.integer({"hidden_size"});
    s.heads = r.integer({"num_attention_heads"});
    s.kv_heads = r.integer({"num_key_value_heads"}, s.heads);
    s.head_dim = r.integer({"head_dim"}, 256);
    s.ffn_hidden = r.integer({"intermediate_size"});
    s.activation = hf_gemma_activation(r);
    s.vocab = r.integer({"vocab_size"});
    s.tied_embeddings = r.boolean("tie_word_embeddings", true);
    s.position_embedding = position_embedding::rope;
    s.norm = norm_kind::rmsnorm;
    s.bias = false;
    s.qkv_bias = r.boolean("attention_bias", false);  // q/k/v/o biases (o_proj's hidden ones not counted)
    if (v2 || v3) {
        s.norms_per_layer = 4;
        s.sliding_window = r.integer({"sliding_window"}, 4096);
        s.global_layer_every = v2 ? 2 : r.integer({"sliding_window_pattern"}, 6);
        if (const auto* cap = r.find({"final_logit_softcapping"}); v2 || cap) {
            if (!cap) s.final_logit_softcap = 30.0;
            else if (cap->is_number() && std::isfinite(cap->get<double>()) && cap->get<double>() >= 0 &&
                     cap->get<double>() <= 1e6)
                s.final_logit_softcap = cap->get<double>();
            else
                r.fail("final_logit_softcapping=" + describe(*cap) +
                       " (model.final_logit_softcap) must be a finite number in [0, 1000000] or null");
        }
    }
    return s;
}

/// OLMo 2 (transformers modeling_olmo2.py): the Llama layout with the norms after attention and MLP (still two a
/// layer) and RMSNorm q_norm/k_norm over the full query and key widths (heads x head_dim + kv_heads x head_dim
/// weights a layer, 0.004% of OLMo-2-7B: not counted).
inline transformer_spec hf_olmo2(const hf_reader& r) {
    transformer_spec s = hf_llama_family(r, "llama");
    s.qkv_bias = false;
    s.bias = false;
    return s;
}

/// DeepSeek-V2/V3 (transformers configuration_deepseek_v3.py@0fc683d defaults = DeepSeek-V3; modeling_deepseek_v2.py):
/// MLA, n_routed_experts of moe_intermediate_size with n_shared_experts always active, the first
/// first_k_dense_replace layers dense (intermediate_size). head_dim is stored as qk_nope + qk_rope and kv_heads as
/// heads so the generic activation terms see MLA's per-head widths. q_lora_rank absent or null: queries are not
/// compressed (DeepSeek-V2-Lite, DeepSeek-V2 paper appendix B) for deepseek_v2; deepseek_v3 defaults to 1536.
inline transformer_spec hf_deepseek(const hf_reader& r, const std::string& type) {
    const bool v3 = type == "deepseek_v3";
    // deepseek_v3 keys default to DeepSeek-V3 (the transformers defaults); deepseek_v2 keys are required.
    auto get = [&](const char* key, std::int64_t v3_default) {
        return v3 ? r.integer({key}, v3_default) : r.integer({key});
    };
    transformer_spec s;
    s.layers = get("num_hidden_layers", 61);
    s.hidden = get("hidden_size", 7168);
    s.heads = get("num_attention_heads", 128);
    s.ffn_hidden = get("intermediate_size", 18432);
    s.activation = hf_gated_activation(r);
    s.vocab = get("vocab_size", 129280);
    s.tied_embeddings = r.boolean("tie_word_embeddings", false);
    s.position_embedding = position_embedding::rope;
    s.norm = norm_kind::rmsnorm;
    s.bias = false;
    if (r.boolean("attention_bias", false)) r.fail("attention_bias=true is not supported for MLA");
    s.mla.q_lora_rank = r.integer({"q_lora_rank"}, v3 && !r.has_null("q_lora_rank") ? 1536 : 0);
    s.mla.kv_lora_rank = get("kv_lora_rank", 512);
    s.mla.qk_nope_head_dim = get("qk_nope_head_dim", 128);
    s.mla.qk_rope_head_dim = get("qk_rope_head_dim", 64);
    s.mla.v_head_dim = get("v_head_dim", 128);
    if (s.mla.kv_lora_rank <= 0) r.fail("kv_lora_rank=" + std::to_string(s.mla.kv_lora_rank) + " must be positive (MLA)");
    s.head_dim = s.mla.qk_nope_head_dim + s.mla.qk_rope_head_dim;
    s.kv_heads = 0;
    s.moe.experts = get("n_routed_experts", 256);
    if (s.moe.experts > 0) {
        s.moe.top_k = get("num_experts_per_tok", 8);
        s.moe.expert_ffn_hidden = get("moe_intermediate_size", 2048);
        s.moe.shared_experts = get("n_shared_experts", 1);
        s.moe.dense_layers = get("first_k_dense_replace", 3);
        if (const auto f = r.integer({"moe_layer_freq"}, 1); f != 1)
            r.fail("moe_layer_freq=" + std::to_string(f) + " is not supported (only 1: every layer after first_k_dense_replace)");
    }
    return s;
}

/// Falcon (transformers configuration_falcon.py@5fd8eda defaults = Falcon-7B; modeling_falcon.py): GELU MLP of
/// ffn_hidden_size (default 4 x hidden), LayerNorm, parallel attention (one input norm; new_decoder_architecture
/// has ln_attn and ln_mlp), multi-query (1 kv head) unless new_decoder_architecture (num_kv_heads), rotary unless
/// alibi, bias on every linear when `bias`, tied embeddings by default.
inline transformer_spec hf_falcon(const hf_reader& r) {
    transformer_spec s;
    s.layers = r.integer({"num_hidden_layers", "n_layer"}, 32);
    s.hidden = r.integer({"hidden_size", "n_embed"}, 4544);
    s.heads = r.integer({"num_attention_heads", "n_head"}, 71);
    const bool new_arch = r.boolean("new_decoder_architecture", false);
    if (new_arch) s.kv_heads = r.integer({"num_kv_heads"}, s.heads);
    else s.kv_heads = r.boolean("multi_query", true) ? 1 : s.heads;
    s.ffn_hidden = r.integer({"ffn_hidden_size"}, 4 * s.hidden);
    s.activation = hf_plain_activation(r, "activation", r.string("activation", "gelu"));
    s.vocab = r.integer({"vocab_size"}, 65024);
    s.tied_embeddings = r.boolean("tie_word_embeddings", true);
    s.position_embedding = r.boolean("alibi", false) ? position_embedding::alibi : position_embedding::rope;
    s.norm = norm_kind::layernorm;
    s.bias = r.boolean("bias", false);
    s.parallel_attention = new_arch || r.boolean("parallel_attn", true);
    if (new_arch) s.norms_per_layer = r.integer({"num_ln_in_parallel_attn"}, 2);
    else if (!s.parallel_attention) s.norms_per_layer = 2;
    return s;
}

/// Llama 4 (transformers configuration_llama4.py@b17cfe4 Llama4TextConfig defaults = Llama-4-Scout-17B-16E): every
/// interleave_moe_layer_step-th layer (layer i with (i + 1) % step == 0) is MoE with num_local_experts routed experts
/// of intermediate_size plus one shared expert of the same size; the other layers are dense with
/// intermediate_size_mlp. QK norms have no weights. model_type "llama4" nests the text model in text_config.
inline transformer_spec hf_llama4(const hf_reader& r) {
    transformer_spec s;
    s.layers = r.integer({"num_hidden_layers"}, 48);
    s.hidden = r.integer({"hidden_size"}, 5120);
    s.heads = r.integer({"num_attention_heads"}, 40);
    s.kv_heads = r.integer({"num_key_value_heads"}, 8);
    s.head_dim = r.integer({"head_dim"}, 128);
    const auto expert = r.integer({"intermediate_size"}, 8192);
    s.ffn_hidden = r.integer({"intermediate_size_mlp"}, 16384);
    s.activation = hf_gated_activation(r);
    s.vocab = r.integer({"vocab_size"}, 202048);
    s.tied_embeddings = r.boolean("tie_word_embeddings", false);
    s.position_embedding = position_embedding::rope;
    s.norm = norm_kind::rmsnorm;
    s.bias = false;
    s.moe.experts = r.integer({"num_local_experts"}, 16);
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
        if (!ok) r.fail("moe_layers=" + describe(*ml) + " is not every interleave_moe_layer_step-th layer");
    }
    return s;
}

/// GPT-2 (configuration_gpt2.py: n_inner None -> 4 n_embd, activation_function gelu_new, tied).
inline transformer_spec hf_gpt2(const hf_reader& r) {
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
    s.bias = true;
    return s;
}

/// OPT (modeling_opt.py: OPTLearnedPositionalEmbedding has max_position_embeddings + 2 rows; lm_head tied).
inline transformer_spec hf_opt(const hf_reader& r) {
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

/// GPT-NeoX / Pythia (configuration_gpt_neox.py: untied embed_out, biases, rotary on part of each head).
inline transformer_spec hf_gpt_neox(const hf_reader& r) {
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
    s.bias = r.boolean("attention_bias", true);  // MLP biases are always there; attention_bias is on by default
    return s;
}

/// BLOOM (configuration_bloom.py: n_embed is an alias of hidden_size; MLP 4 h; word_embeddings_layernorm).
inline transformer_spec hf_bloom(const hf_reader& r) {
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
    s.bias = true;
    s.embedding_norm = true;
    return s;
}

}  // namespace detail

/// Builds a spec from the contents of a Hugging Face config.json. Dispatches on `model_type` (else on
/// `architectures[0]`); the name is `_name_or_path` when present, else the model type. Errors name `source`.
inline transformer_spec from_hf_config(const nlohmann::json& cfg, const std::string& source = "hf_config") {
    if (!cfg.is_object()) throw config_error(source + ": a config.json must be a JSON object");
    const detail::hf_reader r(cfg, source);
    std::string type = r.string("model_type", "");
    if (type.empty()) {
        const auto* arch = r.find({"architectures"});
        if (!arch || !arch->is_array() || arch->empty() || !(*arch)[0].is_string())
            r.fail("missing \"model_type\" (and no \"architectures\" to infer it from); supported model_type: " +
                   detail::hf_supported_list());
        const auto a = (*arch)[0].get<std::string>();
        for (const auto& [t, cls] : detail::hf_model_types)
            if (cls == a) type = t;
        if (type.empty())
            r.fail("no \"model_type\" and architectures[0]=\"" + detail::printable(a) +
                   "\" is not supported; supported model_type: " + detail::hf_supported_list());
    }
    // Multimodal wrappers keep the language model in text_config (Llama4Config, Gemma3Config).
    if (type == "llama4" || type == "gemma3") {
        const auto* text = r.find({"text_config"});
        if (text && !text->is_object()) r.fail("text_config=" + detail::describe(*text) + " must be an object");
        nlohmann::json inner = text ? *text : nlohmann::json::object();
        if (!inner.contains("model_type")) inner["model_type"] = type == "llama4" ? "llama4_text" : "gemma3_text";
        auto s = from_hf_config(inner, source + ": text_config");
        if (s.name == "llama4_text" || s.name == "gemma3_text" || s.name.empty()) s.name = r.string("_name_or_path", type);
        return s;
    }
    transformer_spec s;
    if (type == "llama" || type == "mistral" || type == "mixtral" || type == "qwen2" || type == "qwen2_moe" ||
        type == "qwen3" || type == "qwen3_moe" || type == "phi3")
        s = detail::hf_llama_family(r, type);
    else if (type == "gemma" || type == "gemma2" || type == "gemma3_text")
        s = detail::hf_gemma(r, type);
    else if (type == "olmo2")
        s = detail::hf_olmo2(r);
    else if (type == "deepseek_v2" || type == "deepseek_v3")
        s = detail::hf_deepseek(r, type);
    else if (type == "falcon")
        s = detail::hf_falcon(r);
    else if (type == "llama4_text")
        s = detail::hf_llama4(r);
    else if (type == "gpt2")
        s = detail::hf_gpt2(r);
    else if (type == "opt")
        s = detail::hf_opt(r);
    else if (type == "gpt_neox")
        s = detail::hf_gpt_neox(r);
    else if (type == "bloom")
        s = detail::hf_bloom(r);
    else
        r.fail("model_type=\"" + detail::printable(type) + "\" is not supported (supported: " + detail::hf_supported_list() + ")");
    s.name = r.string("_name_or_path", "");
    if (s.name.empty()) s.name = type;
    detail::hf_normalise(s);
    try {
        validate(s);
    } catch (const config_error& e) {
        const std::string what = e.what();
        r.fail(what + detail::hf_fields_note(cfg, what));
    }
    return s;
}

inline transformer_spec load_hf_config(const std::string& path) {
    return from_hf_config(detail::read_json_file(path), path);
}

}  // namespace frenzy
