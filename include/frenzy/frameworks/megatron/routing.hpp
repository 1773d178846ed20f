#pragma once
// Megatron-LM's MoE router, sliding-window and attention-sink arguments and gpt-oss's clamped SwiGLU, both ways: the
// flags a launch writes so that Megatron builds the published model, and the fields an import reads back. Flags and
// defaults: NVIDIA/Megatron-LM@d98e8a64 megatron/core/transformer/transformer_config.py (moe_router_score_function
// "softmax", moe_router_enable_expert_bias False: sigmoid only, moe_router_num_groups / moe_router_group_topk None,
// moe_router_topk_scaling_factor None, softmax_type "vanilla" | "off-by-one" | "learnable", window_size (left, right)
// None, window_attn_skip_freq: one full layer after N - 1 windowed ones, glu_linear_offset 0, activation_func_clamp_value
// None) and megatron/training/arguments.py (--quick-geglu, --window-size, --window-attn-skip-freq). gpt-oss as
// NVIDIA-NeMo/Megatron-Bridge@067f987d src/megatron/bridge/models/gpt_oss/gpt_oss_bridge.py builds it: quick_gelu with
// glu_linear_offset 1 and clamp 7, softmax_type learnable, window_size (sliding_window - 1, 0), skip freq 2.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/frameworks/megatron/options.hpp"
#include "frenzy/frameworks/megatron/rope.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/model/transformer.hpp"

namespace frenzy::frameworks::megatron {

/// The router's flags after --num-experts, each written where it differs from Megatron's default; Megatron's own
/// refusals (expert bias with softmax scores) as a config_error naming the fields.
inline std::vector<std::string> router_args(const transformer_spec& m) {
    std::vector<std::string> a;
    const auto& e = m.moe;
    if (!m.is_moe()) return a;
    if (e.expert_bias && e.score != router_score::sigmoid)
        throw config_error(detail::refuse("model.moe.expert_bias=true with model.moe.score=\"softmax\"",
                                          "is refused by Megatron (expert bias only with sigmoid scores)"));
    if (e.score != router_score::softmax) a.push_back("--moe-router-score-function " + std::string(to_string(e.score)));
    if (e.expert_bias) a.push_back("--moe-router-enable-expert-bias");
    if (e.groups > 0)
        a.insert(a.end(), {"--moe-router-num-groups " + std::to_string(e.groups), "--moe-router-group-topk " + std::to_string(e.group_top_k)});
    if (e.topk_scaling > 0) a.push_back("--moe-router-topk-scaling-factor " + number_text(e.topk_scaling));
    return a;
}

/// The sliding window, attention sinks and gpt-oss's clamped SwiGLU (which replaces --swiglu: Megatron asserts
/// --quick-geglu without it).
inline std::vector<std::string> attention_variant_args(const transformer_spec& m) {
    std::vector<std::string> a;
    if (m.sliding_window > 0) {
        a.push_back("--window-size " + std::to_string(m.sliding_window - 1) + ",0");  // left tokens besides itself
        if (m.global_layer_every > 0) a.push_back("--window-attn-skip-freq " + std::to_string(m.global_layer_every));
    }
    if (m.attention_sinks) a.push_back("--softmax-type learnable");
    if (m.swiglu_limit > 0) {
        if (!m.is_moe())
            throw config_error(detail::refuse("model.swiglu_limit=" + number_text(m.swiglu_limit) + " on a dense MLP",
                                              "(Megatron clamps the activation of MoE experts only)"));
        a.insert(a.end(), {"--quick-geglu", "--glu-linear-offset 1", "--activation-func-clamp-value " + number_text(m.swiglu_limit)});
    }
    return a;
}

/// What an import collects of these flags before the model is complete.
struct routing_flags {
    std::optional<std::int64_t> window_left, skip_freq;
    std::optional<double> glu_offset, clamp;
    bool quick_geglu = false;
};

/// Takes one of the flags above; false when `a` is not one. A value Megatron accepts but Frenzy cannot represent is
/// listed in out.unknown, never read as something else.
inline bool take_routing_flag(const cli_argument& a, transformer_spec& m, routing_flags& s, launcher_import& out) {
    using frenzy::detail::arg_double;
    using frenzy::detail::arg_int;
    using frenzy::detail::arg_str;
    const auto& f = a.flag;
    const auto text = [&] { return f + " " + (a.values.empty() ? std::string() : a.values[0]); };
    if (f == "--moe-router-score-function") {
        const auto v = arg_str(a);
        if (v == "softmax" || v == "sigmoid") m.moe.score = v == "sigmoid" ? router_score::sigmoid : router_score::softmax;
        else out.unknown.push_back(text() + " (not modelled)");
    } else if (f == "--moe-router-enable-expert-bias") m.moe.expert_bias = true;
    else if (f == "--moe-router-num-groups") m.moe.groups = check_bound(f, arg_int(a), bounds::experts);
    else if (f == "--moe-router-group-topk") m.moe.group_top_k = check_bound(f, arg_int(a), bounds::experts);
    else if (f == "--moe-router-topk-scaling-factor") m.moe.topk_scaling = arg_double(a);
    else if (f == "--softmax-type") {
        const auto v = arg_str(a);
        if (v == "learnable" || v == "vanilla") m.attention_sinks = v == "learnable";
        else out.unknown.push_back(text() + " (not modelled)");
    } else if (f == "--window-size") {
        const auto v = arg_str(a);  // "L,R" (arguments.py tuple_type)
        const auto comma = v.find(',');
        if (comma == std::string::npos || v.substr(comma + 1) != "0") out.unknown.push_back(text() + " (only \"L,0\": a causal window)");
        else s.window_left = parse_int64(v.substr(0, comma), f, {0, bounds::seq_len.max - 1});
    } else if (f == "--window-attn-skip-freq") {
        const auto v = arg_str(a);
        if (v.find_first_not_of("0123456789") == std::string::npos && !v.empty()) s.skip_freq = parse_int64(v, f, bounds::layers);
        else out.unknown.push_back(text() + " (a layer pattern: not modelled)");
    } else if (f == "--quick-geglu") s.quick_geglu = true;
    else if (f == "--glu-linear-offset") s.glu_offset = arg_double(a);
    else if (f == "--activation-func-clamp-value") s.clamp = arg_double(a);
    else return false;
    return true;
}

/// Applies the flags taken once the model is read: the window (Megatron's left span + the token itself), the full
/// layers, gpt-oss's activation (quick GELU gate, offset 1 and a clamp: only that combination is represented).
inline void finish_routing(transformer_spec& m, const routing_flags& s, launcher_import& out) {
    if (s.window_left) {
        m.sliding_window = *s.window_left + 1;
        m.global_layer_every = s.skip_freq.value_or(0);
    } else if (s.skip_freq) {
        out.ignored.push_back("--window-attn-skip-freq (without --window-size)");
    }
    if (s.quick_geglu) {
        if (s.glu_offset.value_or(0) == 1 && s.clamp && *s.clamp > 0) {
            m.activation = activation::swiglu;
            m.swiglu_limit = *s.clamp;
        } else {
            out.unknown.push_back("--quick-geglu (without --glu-linear-offset 1 and --activation-func-clamp-value: not modelled)");
        }
    } else if (s.glu_offset || s.clamp) {
        out.unknown.push_back("--glu-linear-offset / --activation-func-clamp-value (without --quick-geglu: not modelled)");
    }
}

}  // namespace frenzy::frameworks::megatron
