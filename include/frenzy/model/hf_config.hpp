#pragma once
// Hugging Face config.json -> transformer_spec.
// Keys and their defaults follow the transformers configuration_<model>.py / modeling_<model>.py files.
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "frenzy/core/error.hpp"
#include "frenzy/io/json_reader.hpp"
#include "frenzy/model/transformer.hpp"

namespace frenzy {

namespace detail {

/// `model_type` values from_hf_config understands, with the `architectures[0]` class that implies each.
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 9> hf_model_types{{
    {"llama", "LlamaForCausalLM"},
    {"mistral", "MistralForCausalLM"},
    {"mixtral", "MixtralForCausalLM"},
    {"qwen2", "Qwen2ForCausalLM"},
    {"qwen2_moe", "Qwen2MoeForCausalLM"},
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

    std::int64_t integer(std::initializer_list<const char*> keys) const {
        const char* k = nullptr;
        const auto* v = find(keys, &k);
        if (!v) {
            std::string names;
            for (const char* n : keys) names += (names.empty() ? "\"" : " or \"") + std::string(n) + "\"";
            throw config_error(source_ + ": missing required key " + names);
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
        if (!v->is_boolean()) throw config_error(source_ + ": " + key + "=" + v->dump() + " must be true or false");
        return v->get<bool>();
    }
    std::string string(const char* key, std::string fallback) const {
        const auto* v = find({key});
        if (!v) return fallback;
        if (!v->is_string()) throw config_error(source_ + ": " + key + "=" + v->dump() + " must be a string");
        return v->get<std::string>();
    }
    [[noreturn]] void fail(const std::string& what) const { throw config_error(source_ + ": " + what); }

private:
    std::int64_t as_integer(const char* key, const nlohmann::json& v) const {
        if (v.is_number_integer()) return v.get<std::int64_t>();
        if (v.is_number_float()) {
            const double d = v.get<double>();
            if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) return static_cast<std::int64_t>(d);
        }
        throw config_error(source_ + ": " + key + "=" + v.dump() + " must be an integer");
    }
    const nlohmann::json& cfg_;
    const std::string& source_;
};

/// Activation of an ungated MLP (GPT-2 activation_function, OPT activation_function, GPT-NeoX hidden_act).
inline activation hf_plain_activation(const hf_reader& r, const char* key, const std::string& act) {
    if (act.rfind("gelu", 0) == 0) return activation::gelu;  // gelu, gelu_new, gelu_fast, gelu_pytorch_tanh
    if (act == "relu") return activation::relu;
    if (act == "relu2") return activation::squared_relu;
    r.fail(std::string(key) + "=\"" + act + "\" is not supported (gelu*, relu, relu2)");
}

/// LLaMA-style models always have a gated MLP (gate_proj, up_proj, down_proj); silu makes it SwiGLU.
inline activation hf_gated_activation(const hf_reader& r) {
    const auto act = r.string("hidden_act", "silu");
    if (act == "silu" || act == "swish") return activation::swiglu;
    r.fail("hidden_act=\"" + act + "\" with a gated MLP is not supported (only silu: SwiGLU)");
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
            r.fail("no \"model_type\" and architectures[0]=\"" + a +
                   "\" is not supported; supported model_type: " + detail::hf_supported_list());
    }
    transformer_spec s;
    if (type == "llama" || type == "mistral" || type == "mixtral" || type == "qwen2" || type == "qwen2_moe")
        s = detail::hf_llama_family(r, type);
    else if (type == "gpt2")
        s = detail::hf_gpt2(r);
    else if (type == "opt")
        s = detail::hf_opt(r);
    else if (type == "gpt_neox")
        s = detail::hf_gpt_neox(r);
    else if (type == "bloom")
        s = detail::hf_bloom(r);
    else
        r.fail("model_type=\"" + type + "\" is not supported (supported: " + detail::hf_supported_list() + ")");
    s.name = r.string("_name_or_path", "");
    if (s.name.empty()) s.name = type;
    detail::hf_normalise(s);
    try {
        validate(s);
    } catch (const config_error& e) {
        r.fail(e.what());
    }
    return s;
}

inline transformer_spec load_hf_config(const std::string& path) {
    return from_hf_config(detail::read_json_file(path), path);
}

}  // namespace frenzy
