#pragma once
// Reading a Hugging Face config.json: typed look-ups whose errors name the file, the key and the spec field it sets
// (hf_reader), and the activation and normalisation helpers every model family's reader shares. Each family's
// reader lives in include/frenzy/families/<family>/hf_config.hpp; io/hf_config.hpp dispatches to them.
#include <algorithm>
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

/// Which transformer_spec field each config.json key sets, so that errors name both.
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 41> hf_key_fields{{
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
    {"experts_per_token", "model.moe.top_k"}, {"n_group", "model.moe.groups"}, {"topk_group", "model.moe.group_top_k"},
    {"routed_scaling_factor", "model.moe.topk_scaling"}, {"swiglu_limit", "model.swiglu_limit"},
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
        {"num_experts_per_tok", experts}, {"n_shared_experts", experts}, {"experts_per_token", experts},
        {"n_group", experts}, {"topk_group", experts},
        {"moe_intermediate_size", {0, ffn_hidden.max}},
        {"shared_expert_intermediate_size", {0, ffn_hidden.max * 16}},
        {"first_k_dense_replace", {0, layers.max}}, {"interleave_moe_layer_step", {1, layers.max}},
        {"decoder_sparse_step", {0, layers.max}}, {"moe_layer_freq", {0, layers.max}},
        {"q_lora_rank", {0, hidden.max}}, {"kv_lora_rank", {0, hidden.max}},
        {"qk_nope_head_dim", {0, heads.max}}, {"qk_rope_head_dim", {0, heads.max}}, {"v_head_dim", {0, heads.max}},
        {"sliding_window", {0, seq_len.max}}, {"original_max_position_embeddings", positions}, {"sliding_window_pattern", {0, layers.max}},
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
        note += (note.empty() ? "; from config.json: " : ", ") + std::string(k) + "=" + json_value_text(cfg.at(std::string(k))) +
                " -> " + field;
    }
    return note;
}

}  // namespace detail

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
            throw config_error(source_ + ": missing required key " + names + detail::hf_field_of(*keys.begin()));
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
            throw config_error(source_ + ": " + key + "=" + json_value_text(*v) + detail::hf_field_of(key) + " must be true or false");
        return v->get<bool>();
    }
    std::string string(const char* key, std::string fallback) const {
        const auto* v = find({key});
        if (!v) return fallback;
        if (!v->is_string())
            throw config_error(source_ + ": " + key + "=" + json_value_text(*v) + detail::hf_field_of(key) + " must be a string");
        return v->get<std::string>();
    }
    /// A finite number inside `b` (the spec field's bound), or `fallback` when absent or null.
    double number(std::initializer_list<const char*> keys, double fallback, real_bound b) const {
        const char* k = nullptr;
        const auto* v = find(keys, &k);
        if (!v) return fallback;
        if (!v->is_number() || !within(v->get<double>(), b))
            fail(std::string(k) + "=" + json_value_text(*v) + " must be a number in [" + number_text(b.min) + ", " + number_text(b.max) + "]");
        return v->get<double>();
    }
    /// The nested object at `key` read as a config of its own (rope_scaling, rope_parameters), or nullopt.
    const nlohmann::json* object(const char* key) const {
        const auto* v = find({key});
        if (v && !v->is_object()) fail(std::string(key) + "=" + json_value_text(*v) + " must be an object or null");
        return v;
    }
    const std::string& source() const { return source_; }
    [[noreturn]] void fail(const std::string& what) const { throw config_error(source_ + ": " + what); }

private:
    /// A count: a JSON integer (or a float holding an exact integer) inside the key's bound (hf_int_bound); values
    /// past INT64_MAX, negative counts and 1e30 are errors naming the HF key and our field, never wrapped values.
    std::int64_t as_integer(const char* key, const nlohmann::json& v) const {
        const auto b = detail::hf_int_bound(key);
        auto bad = [&]() -> config_error {
            return config_error(source_ + ": " + key + "=" + json_value_text(v) + detail::hf_field_of(key) + " must be an integer in " +
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

/// The rotary spec of a config.json (transformers modeling_rope_utils.py): rope_theta, else rope_parameters'
/// rope_theta (transformers v5 writes them there), else the config class's `default_theta`; the scaling of
/// rope_scaling or rope_parameters (`rope_type`, or the older `type`; "default" and null are none; "su" is
/// longrope's old name); partial_rotary_factor else `default_fraction`. Unknown rope types are refused by name.
inline rope_spec hf_rope(const hf_reader& r, double default_theta, double default_fraction = 1) {
    rope_spec o;
    const auto* params = r.object("rope_parameters");
    const auto* scaling = r.object("rope_scaling");
    const nlohmann::json* sc = scaling ? scaling : params;
    o.theta = r.number({"rope_theta"}, default_theta, bounds::rope_theta);
    if (params && params->contains("rope_theta") && !r.has("rope_theta"))
        o.theta = hf_reader(*params, r.source() + " rope_parameters").number({"rope_theta"}, default_theta, bounds::rope_theta);
    o.fraction = r.number({"partial_rotary_factor", "rotary_pct"}, default_fraction, bounds::fraction);
    if (!(o.fraction > 0)) r.fail("partial_rotary_factor=0 (model.rope.fraction) must be positive");
    if (!sc) return o;
    const std::string where = r.source() + (scaling ? " rope_scaling" : " rope_parameters");  // hf_reader keeps a reference
    const hf_reader s(*sc, where);
    const auto kind = s.string("rope_type", s.string("type", "default"));
    static constexpr std::pair<std::string_view, rope_scaling_kind> kinds[] = {
        {"default", rope_scaling_kind::none}, {"linear", rope_scaling_kind::linear}, {"dynamic", rope_scaling_kind::dynamic},
        {"yarn", rope_scaling_kind::yarn}, {"longrope", rope_scaling_kind::longrope}, {"su", rope_scaling_kind::longrope},
        {"llama3", rope_scaling_kind::llama3}};
    bool known = false;
    for (const auto& [n, k] : kinds)
        if (n == kind) { o.scaling = k; known = true; }
    if (!known) s.fail("rope_type=\"" + printable(kind) + "\" (model.rope.scaling) is not one of default | linear | dynamic | yarn | longrope | llama3");
    if (o.scaling == rope_scaling_kind::none) return o;
    o.factor = s.number({"factor"}, 0, {0, bounds::rope_factor.max});
    o.low_freq_factor = s.number({"low_freq_factor"}, 0, {0, bounds::rope_factor.max});
    o.high_freq_factor = s.number({"high_freq_factor"}, 0, {0, bounds::rope_factor.max});
    o.beta_fast = s.number({"beta_fast"}, 0, {0, bounds::rope_factor.max});
    o.beta_slow = s.number({"beta_slow"}, 0, {0, bounds::rope_factor.max});
    o.mscale = s.number({"mscale"}, 0, {0, bounds::rope_factor.max});
    o.mscale_all_dim = s.number({"mscale_all_dim"}, 0, {0, bounds::rope_factor.max});
    o.original_max_positions = s.integer({"original_max_position_embeddings"}, r.integer({"original_max_position_embeddings"}, 0));
    return o;
}

/// The sliding-window layer pattern of a config.json's `layer_types` (transformers configuration_utils.py
/// layer_type_validation): one entry a layer (`layers` of them), each one of `allowed`; Frenzy represents "every k-th
/// layer attends fully, the others through the window" (layer i full when (i + 1) % k == 0), k returned, 0 = no full
/// layer, 1 = every layer full. Absent or null: `fallback`. Any other list is refused naming the key.
inline std::int64_t hf_layer_types(const hf_reader& r, std::int64_t layers, std::initializer_list<std::string_view> allowed,
                                   std::int64_t fallback) {
    const auto* t = r.find({"layer_types"});
    if (!t) return fallback;
    if (!t->is_array() || static_cast<std::int64_t>(t->size()) != layers)
        r.fail("layer_types=" + json_value_text(*t) + " must be a list of num_hidden_layers=" + std::to_string(layers) + " entries");
    std::string names;
    for (const auto a : allowed) names += (names.empty() ? "\"" : " | \"") + std::string(a) + "\"";
    std::int64_t every = 0;
    for (std::size_t i = 0; i < t->size(); ++i) {
        const auto& v = (*t)[i];
        bool ok = v.is_string();
        if (ok) ok = std::find(allowed.begin(), allowed.end(), v.get<std::string>()) != allowed.end();
        if (!ok) r.fail("layer_types[" + std::to_string(i) + "]=" + json_value_text(v) + " is not one of " + names);
        if (every == 0 && v == "full_attention") every = static_cast<std::int64_t>(i) + 1;
    }
    for (std::size_t i = 0; i < t->size(); ++i)
        if (((*t)[i] == "full_attention") != (every > 0 && (static_cast<std::int64_t>(i) + 1) % every == 0))
            r.fail("layer_types=" + json_value_text(*t) + " is not every k-th layer full_attention and the others "
                   "sliding_attention (the only pattern Frenzy represents: model.global_layer_every)");
    return every;
}

/// kv_heads == heads and head_dim == hidden / heads are stored as 0 ("derive"), as the presets do.
inline void hf_normalise(transformer_spec& s) {
    if (s.kv_heads == s.heads) s.kv_heads = 0;
    if (s.head_dim > 0 && s.heads > 0 && s.head_dim * s.heads == s.hidden) s.head_dim = 0;
}

}  // namespace frenzy
