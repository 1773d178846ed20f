#pragma once
// Megatron-LM's rotary-embedding, norm-epsilon and QK-norm arguments, both ways: the flags a launch writes so that
// Megatron builds the published model, and the fields an import reads back from them. Flags and defaults:
// NVIDIA/Megatron-LM@d98e8a64 megatron/training/arguments.py (_add_network_size_args: --rotary-base int 10000,
// --rotary-percent 1.0, --rotary-seq-len-interpolation-factor int, --use-rope-scaling, --rope-scaling-factor 8.0,
// --position-embedding-type yarn, --yarn-*; _add_mla_args: --rotary-scaling-factor 1.0, --mscale 1.0,
// --mscale-all-dim 0.0; --rope-type rope | yarn), megatron/core/transformer/transformer_config.py (layernorm_epsilon
// as --norm-epsilon 1e-5, qk_layernorm as --qk-layernorm; MLATransformerConfig: yarn, original_max_position_embeddings
// 4096, beta_fast 32, beta_slow 1) and megatron/core/models/common/embeddings/rotary_pos_embedding.py (_apply_scaling:
// Llama 3.1's scaling with low_freq_factor 1, high_freq_factor 4 and an 8192-token original context, fixed).
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/frameworks/megatron/options.hpp"
#include "frenzy/model/transformer.hpp"

namespace frenzy::frameworks::megatron {

inline constexpr double default_rotary_base = 10000;
inline constexpr double default_norm_epsilon = 1e-5;
inline constexpr std::int64_t mla_yarn_original_positions = 4096;  // MLATransformerConfig, no flag

namespace detail {

inline std::string refuse(const std::string& field_value, const std::string& why) {
    return field_value + " " + why + " (Megatron-LM cannot build it: use a framework that reads the Hugging Face config)";
}

/// --rotary-base is an int in Megatron's parser.
inline std::string rotary_base_text(double theta) {
    if (theta != std::floor(theta))
        throw config_error(refuse("model.rope.theta=" + number_text(theta), "is not a whole number (--rotary-base takes an int)"));
    return number_text(theta);
}

/// The scaling's flags, or a refusal naming the field.
inline void scaling_args(const transformer_spec& m, std::vector<std::string>& a) {
    const auto& r = m.rope;
    const auto n = [](double v) { return number_text(v); };
    switch (r.scaling) {
        case rope_scaling_kind::none: return;
        case rope_scaling_kind::llama3:
            if (r.low_freq_factor != 1 || r.high_freq_factor != 4 || r.original_max_positions != 8192)
                throw config_error(refuse("model.rope (llama3 scaling with low_freq_factor " + n(r.low_freq_factor) +
                                          ", high_freq_factor " + n(r.high_freq_factor) + ", original_max_positions " +
                                          std::to_string(r.original_max_positions) + ")",
                                          "differs from --use-rope-scaling's fixed 1, 4 and 8192"));
            a.insert(a.end(), {"--use-rope-scaling", "--rope-scaling-factor " + n(r.factor)});
            return;
        case rope_scaling_kind::linear:
            if (r.factor != std::floor(r.factor))
                throw config_error(refuse("model.rope.factor=" + n(r.factor), "is not a whole number (linear scaling is "
                                          "--rotary-seq-len-interpolation-factor, an int)"));
            a.push_back("--rotary-seq-len-interpolation-factor " + n(r.factor));
            return;
        case rope_scaling_kind::yarn: {
            const double fast = r.beta_fast > 0 ? r.beta_fast : 32, slow = r.beta_slow > 0 ? r.beta_slow : 1;
            if (m.is_mla()) {
                if (r.original_max_positions != mla_yarn_original_positions || fast != 32 || slow != 1)
                    throw config_error(refuse("model.rope (yarn over " + std::to_string(r.original_max_positions) +
                                              " positions, beta_fast " + n(fast) + ", beta_slow " + n(slow) + ")",
                                              "differs from MLA's fixed 4096, 32 and 1"));
                a.insert(a.end(), {"--rope-type yarn", "--rotary-scaling-factor " + n(r.factor)});
            } else {
                a.insert(a.end(), {"--rotary-scaling-factor " + n(r.factor),
                                   "--yarn-original-max-position-embeddings " + std::to_string(r.original_max_positions)});
                if (r.beta_fast > 0) a.push_back("--yarn-beta-fast " + n(r.beta_fast));  // unset: 32 in both
                if (r.beta_slow > 0) a.push_back("--yarn-beta-slow " + n(r.beta_slow));  // unset: 1 in both
            }
            if (r.mscale > 0) a.push_back("--mscale " + n(r.mscale));  // unset: 1 in both
            if (r.mscale_all_dim > 0) a.push_back("--mscale-all-dim " + n(r.mscale_all_dim));
            return;
        }
        case rope_scaling_kind::dynamic:
        case rope_scaling_kind::longrope:
            throw config_error(refuse("model.rope.scaling=\"" + std::string(to_string(r.scaling)) + "\"", "has no Megatron-LM argument"));
    }
}

}  // namespace detail

/// The rotary flags after --position-embedding-type (whose value they may replace: yarn), the norm epsilon and the
/// QK-norm, each written where it differs from Megatron's default. config_error naming the field where Megatron has
/// no argument for it (a silently different model is worse than a refusal).
inline std::vector<std::string> rope_and_norm_args(const transformer_spec& m) {
    std::vector<std::string> a;
    if (m.attn_logit_softcap > 0)
        throw config_error(detail::refuse("model.attn_logit_softcap=" + number_text(m.attn_logit_softcap), "has no Megatron-LM argument"));
    if (m.position_embedding == position_embedding::rope) {
        const auto& r = m.rope;
        if (r.local_theta > 0 && r.local_theta != r.theta)
            throw config_error(detail::refuse("model.rope.local_theta=" + number_text(r.local_theta),
                                              "(a second base for sliding-window layers) has no Megatron-LM argument"));
        if (r.theta != default_rotary_base) a.push_back("--rotary-base " + detail::rotary_base_text(r.theta));
        if (r.fraction != 1) a.push_back("--rotary-percent " + number_text(r.fraction));
        detail::scaling_args(m, a);
    }
    if (m.norm_eps != default_norm_epsilon) a.push_back("--norm-epsilon " + number_text(m.norm_eps));
    if (m.qk_norm) a.push_back("--qk-layernorm");
    return a;
}

/// The position-embedding type a launch writes: yarn for a non-MLA model with YaRN scaling (MLA keeps rope and says
/// --rope-type yarn).
inline std::string position_embedding_type(const transformer_spec& m) {
    if (m.position_embedding != position_embedding::rope) return "learned_absolute";
    return m.rope.scaling == rope_scaling_kind::yarn && !m.is_mla() ? "yarn" : "rope";
}

/// What an import collects of these flags before it knows whether the model is MLA (their meaning depends on it).
struct rope_flags {
    std::optional<double> base, percent, interpolation, llama3_factor, yarn_factor, mscale, mscale_all_dim;
    std::optional<double> beta_fast, beta_slow;
    std::optional<std::int64_t> yarn_original;
    bool llama3 = false, yarn_type = false;
    std::optional<std::string> rope_type;  ///< --rope-type
};

/// Takes one of the flags above; false when `a` is not one.
inline bool take_rope_flag(const cli_argument& a, transformer_spec& m, rope_flags& s) {
    using frenzy::detail::arg_double;
    using frenzy::detail::arg_int;
    using frenzy::detail::arg_str;
    const auto& f = a.flag;
    if (f == "--rotary-base") s.base = static_cast<double>(arg_int(a));
    else if (f == "--rotary-percent") s.percent = arg_double(a);
    else if (f == "--rotary-seq-len-interpolation-factor") s.interpolation = static_cast<double>(arg_int(a));
    else if (f == "--use-rope-scaling") s.llama3 = true;
    else if (f == "--rope-scaling-factor") s.llama3_factor = arg_double(a);
    else if (f == "--rotary-scaling-factor") s.yarn_factor = arg_double(a);
    else if (f == "--yarn-original-max-position-embeddings") s.yarn_original = arg_int(a);
    else if (f == "--yarn-beta-fast") s.beta_fast = arg_double(a);
    else if (f == "--yarn-beta-slow") s.beta_slow = arg_double(a);
    else if (f == "--mscale") s.mscale = arg_double(a);
    else if (f == "--mscale-all-dim") s.mscale_all_dim = arg_double(a);
    else if (f == "--rope-type") s.rope_type = arg_str(a);
    else if (f == "--norm-epsilon") m.norm_eps = arg_double(a);
    else if (f == "--qk-layernorm") m.qk_norm = true;
    else return false;
    return true;
}

/// The rotary spec Megatron builds from the flags taken (its defaults where a flag is absent); flags that the model
/// does not read are listed in `out.ignored`. Call after --position-embedding-type and MLA are known.
inline void finish_rope(transformer_spec& m, const rope_flags& s, bool yarn_position_type, launcher_import& out) {
    auto& r = m.rope;
    r = {};
    if (m.position_embedding != position_embedding::rope) {
        if (s.base || s.percent || s.llama3 || s.interpolation) out.ignored.push_back("--rotary-* (without rotary position embeddings)");
        return;
    }
    r.theta = s.base.value_or(default_rotary_base);
    r.fraction = s.percent.value_or(1);
    const bool mla_yarn = m.is_mla() && s.rope_type.value_or("yarn") == "yarn";
    if (s.llama3) {
        r = {.theta = r.theta, .fraction = r.fraction, .scaling = rope_scaling_kind::llama3, .factor = s.llama3_factor.value_or(8),
             .low_freq_factor = 1, .high_freq_factor = 4, .original_max_positions = 8192};
    } else if (s.interpolation) {
        r.scaling = rope_scaling_kind::linear;
        r.factor = *s.interpolation;
    } else if (yarn_position_type || mla_yarn) {
        r.scaling = rope_scaling_kind::yarn;
        r.factor = s.yarn_factor.value_or(1);
        r.original_max_positions = mla_yarn ? mla_yarn_original_positions : s.yarn_original.value_or(0);
        r.beta_fast = mla_yarn ? 32 : s.beta_fast.value_or(0);  // 0: unset, Megatron's and transformers' 32
        r.beta_slow = mla_yarn ? 1 : s.beta_slow.value_or(0);
        r.mscale = s.mscale.value_or(0);
        r.mscale_all_dim = s.mscale_all_dim.value_or(0);
    }
}

}  // namespace frenzy::frameworks::megatron
