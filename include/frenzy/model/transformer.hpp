#pragma once
// Transformer architecture spec and exact parameter counting (total, per pipeline stage, per shard).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/enum_names.hpp"
#include "frenzy/core/error.hpp"

namespace frenzy {

enum class activation { gelu, swiglu, squared_relu, relu, geglu };
enum class position_embedding { learned, rope, alibi };
enum class norm_kind { layernorm, rmsnorm };
/// How the rotary frequencies are stretched past the pretraining context (transformers modeling_rope_utils.py
/// ROPE_INIT_FUNCTIONS: default, linear, dynamic, yarn, longrope, llama3).
enum class rope_scaling_kind { none, linear, dynamic, yarn, longrope, llama3 };
/// The MoE router's score function of its logits (Megatron --moe-router-score-function; DeepSeek-V3 and Llama 4:
/// sigmoid, the others softmax).
enum class router_score { softmax, sigmoid };

template <> struct enum_names<activation> {
    static constexpr std::array<std::pair<activation, std::string_view>, 5> table{{
        {activation::gelu, "gelu"}, {activation::swiglu, "swiglu"},
        {activation::squared_relu, "squared-relu"}, {activation::relu, "relu"}, {activation::geglu, "geglu"}}};
};
template <> struct enum_names<position_embedding> {
    static constexpr std::array<std::pair<position_embedding, std::string_view>, 3> table{{
        {position_embedding::learned, "learned"}, {position_embedding::rope, "rope"},
        {position_embedding::alibi, "alibi"}}};
};
template <> struct enum_names<norm_kind> {
    static constexpr std::array<std::pair<norm_kind, std::string_view>, 2> table{{
        {norm_kind::layernorm, "layernorm"}, {norm_kind::rmsnorm, "rmsnorm"}}};
};
template <> struct enum_names<rope_scaling_kind> {
    static constexpr std::array<std::pair<rope_scaling_kind, std::string_view>, 6> table{{
        {rope_scaling_kind::none, "none"}, {rope_scaling_kind::linear, "linear"}, {rope_scaling_kind::dynamic, "dynamic"},
        {rope_scaling_kind::yarn, "yarn"}, {rope_scaling_kind::longrope, "longrope"}, {rope_scaling_kind::llama3, "llama3"}}};
};

template <> struct enum_names<router_score> {
    static constexpr std::array<std::pair<router_score, std::string_view>, 2> table{{
        {router_score::softmax, "softmax"}, {router_score::sigmoid, "sigmoid"}}};
};

/// Gated MLPs (SwiGLU; GeGLU: Gemma's gelu(gate) x up, Shazeer 2020) have two input projections (gate and up).
constexpr bool is_gated(activation a) { return a == activation::swiglu || a == activation::geglu; }

/// Mixture-of-experts part of a model. experts == 0 means a dense model.
struct moe_spec {
    std::int64_t experts = 0;
    std::int64_t top_k = 0;
    std::int64_t expert_ffn_hidden = 0;  ///< 0 = model.ffn_hidden
    std::int64_t shared_experts = 0;     ///< always-active experts of expert_ffn_hidden each
    std::int64_t dense_layers = 0;       ///< leading layers with a dense MLP (DeepSeek-style)
    /// After the dense layers, every layer_step-th layer is MoE, the others dense (Llama 4 interleave_moe_layer_step:
    /// layer i is MoE when (i + 1) % step == 0, transformers modeling_llama4.py); 1 = all of them.
    std::int64_t layer_step = 1;
    /// Expert capacity (Megatron --moe-expert-capacity-factor; megatron/core/transformer/moe/moe_utils.py@d98e8a64
    /// get_capacity, apply_router_token_dropping): each expert takes at most ceil(tokens x top_k / experts x
    /// capacity_factor) of a rank's routed tokens, the rest are dropped. 0 = dropless (Megatron's default, None).
    double capacity_factor = 0;
    /// Megatron --moe-pad-expert-input-to-capacity (needs a capacity factor): every expert receives exactly its
    /// capacity, padded (token_dispatcher.py drop_and_pad: num_tokens_per_local_expert = capacity x tp x ep).
    bool pad_to_capacity = false;
    /// Routing as published; moves no memory or FLOPs, but a launch must build it (a fine-tune of published weights
    /// routes as they were trained). The score function; DeepSeek-V3's aux-loss-free balancing (a per-expert bias added
    /// to the scores for the top-k choice only, updated from the load, not by gradients: arXiv:2408.15664; Megatron
    /// --moe-router-enable-expert-bias); grouped top-k (experts in `groups` groups, the top-k taken among the
    /// `group_top_k` best groups: DeepSeek-V3 n_group 8, topk_group 4); the routed weights' scale (routed_scaling_factor
    /// 2.5; Megatron --moe-router-topk-scaling-factor). 0 = not set.
    router_score score = router_score::softmax;
    bool expert_bias = false;
    std::int64_t groups = 0;
    std::int64_t group_top_k = 0;
    double topk_scaling = 0;
    bool operator==(const moe_spec&) const = default;

    /// Any routing field away from its default (softmax, no expert bias, no groups, no scaling).
    bool custom_router() const {
        return score != router_score::softmax || expert_bias || groups != 0 || group_top_k != 0 || topk_scaling != 0;
    }

    /// Tokens a GPU's experts receive relative to balanced routing (top_k copies of each token spread evenly),
    /// given the routing's own imbalance: padded to capacity, exactly the capacity factor; with dropping, the
    /// imbalance capped at the capacity factor; dropless, the imbalance. The rounding up of the capacity is left
    /// out (at most one token per expert and rank).
    double expert_load(double imbalance) const {
        if (pad_to_capacity) return capacity_factor;
        return capacity_factor > 0 ? std::min(imbalance, capacity_factor) : imbalance;
    }
};

/// Multi-head latent attention (DeepSeek-V2 sec. 2.1; transformers modeling_deepseek_v2.py): queries through an
/// optional low-rank pair h -> q_lora_rank -> heads x (nope + rope), keys and values through a shared latent
/// h -> kv_lora_rank (+ the rope key) -> heads x (nope + v). kv_lora_rank == 0 means standard attention.
struct mla_spec {
    std::int64_t q_lora_rank = 0;  ///< 0 = a full-rank q projection
    std::int64_t kv_lora_rank = 0;
    std::int64_t qk_nope_head_dim = 0;
    std::int64_t qk_rope_head_dim = 0;
    std::int64_t v_head_dim = 0;
    bool operator==(const mla_spec&) const = default;
};

/// Rotary position embedding as published (config.json rope_theta / rope_scaling / partial_rotary_factor; the
/// formulas are transformers' modeling_rope_utils.py). It moves no memory or FLOPs: the launchers write it so that
/// the framework builds the published model (a fine-tune of published weights needs the same frequencies).
struct rope_spec {
    double theta = 10000;        ///< base; 10000 is transformers' and Megatron-LM's default (--rotary-base)
    double fraction = 1;         ///< share of each head's dimensions rotated (GPT-NeoX rotary_pct 0.25)
    rope_scaling_kind scaling = rope_scaling_kind::none;
    double factor = 0;           ///< scaling factor (0 without scaling)
    double low_freq_factor = 0;  ///< llama3
    double high_freq_factor = 0; ///< llama3
    std::int64_t original_max_positions = 0;  ///< llama3, yarn, dynamic, longrope: the pretraining context
    double beta_fast = 0, beta_slow = 0;      ///< yarn (0 = transformers' 32 and 1)
    double mscale = 0, mscale_all_dim = 0;    ///< yarn as DeepSeek-V2/V3 configure it (0 = not set)
    double local_theta = 0;      ///< base of the sliding-window layers (Gemma 3 rope_local_base_freq); 0 = theta
    bool operator==(const rope_spec&) const = default;
};

/// A decoder-only transformer. Zero for kv_heads / head_dim means "derive" (heads, hidden/heads).
struct transformer_spec {
    std::string name;
    std::int64_t layers = 0;
    std::int64_t hidden = 0;
    std::int64_t heads = 0;
    std::int64_t kv_heads = 0;   ///< GQA/MQA; 0 = heads (MHA)
    std::int64_t head_dim = 0;   ///< 0 = hidden / heads
    std::int64_t ffn_hidden = 0;
    frenzy::activation activation = activation::gelu;
    std::int64_t vocab = 0;      ///< as the tokenizer/config gives it; frameworks may pad (padded_vocab)
    bool tied_embeddings = false;
    frenzy::position_embedding position_embedding = position_embedding::learned;
    std::int64_t max_positions = 0;  ///< learned position table size; 0 = the training sequence length
    norm_kind norm = norm_kind::layernorm;
    bool bias = true;            ///< biases on every linear layer
    bool qkv_bias = false;       ///< biases on the QKV projection only (Qwen2); implied by bias
    bool embedding_norm = false; ///< a norm right after the word embedding (BLOOM)
    moe_spec moe{};
    mla_spec mla{};
    /// Attention and MLP read the same normed input and are summed (GPT-J, Falcon; Wang & Komatsuzaki 2021).
    bool parallel_attention = false;
    std::int64_t norms_per_layer = 0;  ///< 0 = derive: 2 (1 with parallel_attention); Gemma 2/3 have 4
    /// Sliding-window attention span (0 = none) and every how many layers one attends globally (0 = none does;
    /// Gemma 2: 2, Gemma 3: 6). Affects attention FLOPs only (flash attention memory is linear in s either way).
    std::int64_t sliding_window = 0;
    std::int64_t global_layer_every = 0;
    double final_logit_softcap = 0;     ///< tanh soft-capping of the logits (Gemma 2); 0 = none
    double attn_logit_softcap = 0;      ///< tanh soft-capping of the attention scores (Gemma 2: 50); 0 = none
    rope_spec rope{};                   ///< read only with position_embedding rope
    double norm_eps = 1e-5;             ///< every LayerNorm/RMSNorm's epsilon (Megatron --norm-epsilon default)
    bool qk_norm = false;               ///< a norm on each head's queries and keys (Qwen3, OLMo 2, Gemma 3)
    /// A learned logit per head that joins every softmax of the attention scores (gpt-oss `sinks`, Xiao et al. 2023:
    /// `heads` parameters a layer; Megatron --softmax-type learnable).
    bool attention_sinks = false;
    /// gpt-oss's clamped SwiGLU (modeling_gpt_oss.py GptOssExperts: gate clamped to <= limit, up to [-limit, limit],
    /// (up + 1) x gate x sigmoid(1.702 gate)); 0 = the plain SwiGLU. Same parameters and FLOPs as SwiGLU.
    double swiglu_limit = 0;

    bool operator==(const transformer_spec&) const = default;

    std::int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
    std::int64_t hdim() const { return head_dim > 0 ? head_dim : (heads > 0 ? hidden / heads : 0); }
    bool is_moe() const { return moe.experts > 0; }
    bool is_mla() const { return mla.kv_lora_rank > 0; }
    std::int64_t expert_ffn() const { return moe.expert_ffn_hidden > 0 ? moe.expert_ffn_hidden : ffn_hidden; }
    std::int64_t layer_norm_count() const { return norms_per_layer > 0 ? norms_per_layer : (parallel_attention ? 1 : 2); }
    /// Width of the queries (and keys) and of the values over all heads.
    std::int64_t q_width() const { return heads * (is_mla() ? mla.qk_nope_head_dim + mla.qk_rope_head_dim : hdim()); }
    std::int64_t v_width() const { return heads * (is_mla() ? mla.v_head_dim : hdim()); }
    /// MoE layers among layers [0, n) (closed form of the dense-prefix + interleave rule).
    std::int64_t moe_layers_below(std::int64_t n) const {
        if (!is_moe() || n <= moe.dense_layers) return 0;
        const auto step = moe.layer_step > 0 ? moe.layer_step : 1;
        return (std::min(n, layers) - moe.dense_layers) / step;
    }
    bool is_moe_layer(std::int64_t i) const { return moe_layers_below(i + 1) > moe_layers_below(i); }
    /// Layers whose MLP is a mixture of experts.
    std::int64_t moe_layers() const { return moe_layers_below(layers); }
};

/// Checks a rotary spec: a finite base, a rotated share in (0, 1], and a factor exactly where a scaling needs one.
inline void validate(const rope_spec& r) {
    auto in = [](const char* field, double v, real_bound b, bool zero_ok) {
        if (zero_ok && v == 0) return;
        if (!within(v, b))
            throw config_error(std::string("model.rope.") + field + "=" + number_text(v) + " must be in [" + number_text(b.min) +
                               ", " + number_text(b.max) + "]" + (zero_ok ? " or 0 (not set)" : ""));
    };
    in("theta", r.theta, bounds::rope_theta, false);
    in("local_theta", r.local_theta, bounds::rope_theta, true);
    if (!(r.fraction > 0 && r.fraction <= 1))
        throw config_error("model.rope.fraction=" + number_text(r.fraction) + " must be in (0, 1]");
    const bool scaled = r.scaling != rope_scaling_kind::none;
    if (scaled) in("factor", r.factor, bounds::rope_factor, r.scaling == rope_scaling_kind::longrope);
    else if (r.factor != 0 || r.low_freq_factor != 0 || r.high_freq_factor != 0 || r.original_max_positions != 0 ||
             r.beta_fast != 0 || r.beta_slow != 0 || r.mscale != 0 || r.mscale_all_dim != 0)
        throw config_error("model.rope.scaling=\"none\" but factor/low_freq_factor/high_freq_factor/original_max_positions/"
                           "beta_fast/beta_slow/mscale/mscale_all_dim are set");
    for (auto [field, v] : {std::pair{"low_freq_factor", r.low_freq_factor}, std::pair{"high_freq_factor", r.high_freq_factor},
                            std::pair{"beta_fast", r.beta_fast}, std::pair{"beta_slow", r.beta_slow},
                            std::pair{"mscale", r.mscale}, std::pair{"mscale_all_dim", r.mscale_all_dim}})
        if (!(v >= 0 && v <= bounds::rope_factor.max))
            throw config_error(std::string("model.rope.") + field + "=" + number_text(v) + " must be a number from 0 (not set) to " +
                               number_text(bounds::rope_factor.max));
    if (r.scaling == rope_scaling_kind::llama3 && !(r.low_freq_factor > 0 && r.high_freq_factor > r.low_freq_factor))
        throw config_error("model.rope.scaling=\"llama3\" needs 0 < model.rope.low_freq_factor < model.rope.high_freq_factor");
    if (r.original_max_positions < 0 || r.original_max_positions > bounds::positions.max)
        throw config_error("model.rope.original_max_positions=" + std::to_string(r.original_max_positions) + " must be in [0, " +
                           std::to_string(bounds::positions.max) + "]");
}

/// Checks the architecture's numbers that are not sizes: soft-capping, the norm epsilon, the rotary spec.
inline void validate_numerics(const transformer_spec& m) {
    if (!(m.final_logit_softcap >= 0))
        throw config_error("model.final_logit_softcap=" + std::to_string(m.final_logit_softcap) + " must not be negative");
    if (!within(m.attn_logit_softcap, bounds::softcap))
        throw config_error("model.attn_logit_softcap=" + number_text(m.attn_logit_softcap) + " must be in [0, " +
                           number_text(bounds::softcap.max) + "] (0 = none)");
    if (!within(m.swiglu_limit, bounds::softcap) || (m.swiglu_limit > 0 && m.activation != activation::swiglu))
        throw config_error("model.swiglu_limit=" + number_text(m.swiglu_limit) + " must be in [0, " + number_text(bounds::softcap.max) +
                           "] (0 = none) and needs model.activation=\"swiglu\"");
    if (!within(m.norm_eps, bounds::norm_eps))
        throw config_error("model.norm_eps=" + number_text(m.norm_eps) + " must be in [" + number_text(bounds::norm_eps.min) +
                           ", " + number_text(bounds::norm_eps.max) + "]");
    validate(m.rope);
}

/// Checks the routing of an MoE model: groups divide the experts, group_top_k picks at most all groups, and each group
/// holds top_k / group_top_k experts to choose from (Megatron transformer_config.py group-limited routing asserts).
inline void validate_router(const moe_spec& e) {
    if (e.groups < 0 || e.group_top_k < 0 || e.groups > e.experts)
        throw config_error("model.moe.groups=" + std::to_string(e.groups) + " and model.moe.group_top_k=" + std::to_string(e.group_top_k) +
                           " must be in 0..model.moe.experts=" + std::to_string(e.experts));
    if (e.groups > 0 && e.experts % e.groups != 0)
        throw config_error("model.moe.groups=" + std::to_string(e.groups) + " does not divide model.moe.experts=" + std::to_string(e.experts));
    if ((e.group_top_k > 0) != (e.groups > 0) || e.group_top_k > e.groups)
        throw config_error("model.moe.group_top_k=" + std::to_string(e.group_top_k) + " must be in 1..model.moe.groups=" +
                           std::to_string(e.groups) + " with groups, and 0 without");
    if (!(e.topk_scaling == 0 || within(e.topk_scaling, {1e-6, 1e6})))
        throw config_error("model.moe.topk_scaling=" + number_text(e.topk_scaling) + " must be 0 (none) or in [1e-06, 1e+06]");
}

inline void validate_moe_layers(const transformer_spec& m);

/// Checks the architecture alone (positive sizes, heads divisible by kv_heads, MoE consistency).
inline void validate(const transformer_spec& m) {
    auto positive = [](const char* field, std::int64_t v) {
        if (v <= 0) throw config_error(std::string("model.") + field + "=" + std::to_string(v) + " must be positive");
    };
    positive("layers", m.layers);
    positive("hidden", m.hidden);
    positive("heads", m.heads);
    positive("ffn_hidden", m.ffn_hidden);
    positive("vocab", m.vocab);
    if (m.kv_heads < 0) throw config_error("model.kv_heads=" + std::to_string(m.kv_heads) + " must not be negative");
    if (m.head_dim < 0) throw config_error("model.head_dim=" + std::to_string(m.head_dim) + " must not be negative");
    if (m.max_positions < 0)
        throw config_error("model.max_positions=" + std::to_string(m.max_positions) + " must not be negative");
    if (m.heads % m.kv() != 0)
        throw config_error("model.kv_heads=" + std::to_string(m.kv()) + " does not divide model.heads=" +
                           std::to_string(m.heads));
    if (m.head_dim == 0 && m.hidden % m.heads != 0)
        throw config_error("model.heads=" + std::to_string(m.heads) + " does not divide model.hidden=" +
                           std::to_string(m.hidden) + " (give model.head_dim explicitly)");
    const auto& e = m.moe;
    if (e.experts < 0 || e.top_k < 0 || e.expert_ffn_hidden < 0 || e.shared_experts < 0 || e.dense_layers < 0)
        throw config_error("model.moe: experts, top_k, expert_ffn_hidden, shared_experts and dense_layers must not be negative");
    if (e.layer_step < 1) throw config_error("model.moe.layer_step=" + std::to_string(e.layer_step) + " must be at least 1");
    if (!(e.capacity_factor >= 0) || !std::isfinite(e.capacity_factor))
        throw config_error("model.moe.capacity_factor=" + std::to_string(e.capacity_factor) +
                           " must be a finite number >= 0 (0 = dropless)");
    // capacity = factor x tokens x top_k / experts (Megatron moe_utils.py get_capacity): past `experts` it exceeds
    // every token routed to the rank, so a larger factor means nothing and only pads (1e308 printed "inf GiB").
    if (e.experts > 0 && e.capacity_factor > static_cast<double>(e.experts))
        throw config_error("model.moe.capacity_factor=" + number_text(e.capacity_factor) + " must be at most model.moe.experts=" +
                           std::to_string(e.experts) + " (a capacity past every routed token)");
    if (e.pad_to_capacity && e.capacity_factor <= 0)
        throw config_error("model.moe.pad_to_capacity=true needs model.moe.capacity_factor > 0 (Megatron asserts "
                           "--moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity)");
    const auto& a = m.mla;
    if (a.q_lora_rank < 0 || a.kv_lora_rank < 0 || a.qk_nope_head_dim < 0 || a.qk_rope_head_dim < 0 || a.v_head_dim < 0)
        throw config_error("model.mla: q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim must not be negative");
    if (a.kv_lora_rank > 0 && (a.qk_nope_head_dim + a.qk_rope_head_dim <= 0 || a.v_head_dim <= 0))
        throw config_error("model.mla.kv_lora_rank=" + std::to_string(a.kv_lora_rank) +
                           " needs positive model.mla.qk_nope_head_dim + qk_rope_head_dim and v_head_dim");
    if (m.norms_per_layer < 0)
        throw config_error("model.norms_per_layer=" + std::to_string(m.norms_per_layer) + " must not be negative");
    if (m.sliding_window < 0 || m.global_layer_every < 0)
        throw config_error("model.sliding_window and model.global_layer_every must not be negative");
    validate_numerics(m);
    validate_moe_layers(m);
}

/// Checks the MoE part against the layers: top_k among the experts, MoE layers left after the dense ones, the router.
inline void validate_moe_layers(const transformer_spec& m) {
    const auto& e = m.moe;
    if (e.experts > 0) {
        if (e.top_k < 1 || e.top_k > e.experts)
            throw config_error("model.moe.top_k=" + std::to_string(e.top_k) + " must be in 1..model.moe.experts=" +
                               std::to_string(e.experts));
        if (e.dense_layers >= m.layers)
            throw config_error("model.moe.dense_layers=" + std::to_string(e.dense_layers) +
                               " must be less than model.layers=" + std::to_string(m.layers));
        if (m.moe_layers() == 0)
            throw config_error("model.moe.layer_step=" + std::to_string(e.layer_step) + " leaves no MoE layer among model.layers=" +
                               std::to_string(m.layers) + " after model.moe.dense_layers=" + std::to_string(e.dense_layers));
        validate_router(e);
    } else if (e.top_k != 0 || e.shared_experts != 0 || e.dense_layers != 0 || e.capacity_factor != 0 || e.pad_to_capacity ||
               e.custom_router()) {
        throw config_error("model.moe.experts=0 but top_k/shared_experts/dense_layers/capacity_factor/pad_to_capacity/"
                           "score/expert_bias/groups/group_top_k/topk_scaling are set");
    }
}

/// The first field beside the shape in which `m` differs from `published` (the rotary spec, norm epsilon, QK-norm,
/// attention soft-capping), as "model.FIELD=VALUE (the published model's: VALUE)", or "" when they agree: for
/// launchers that build a model by name, which can build only the published one.
inline std::string published_difference(const transformer_spec& m, const transformer_spec& published) {
    auto diff = [](const char* field, double a, double b) {
        return std::string("model.") + field + "=" + number_text(a) + " (the published model's: " + number_text(b) + ")";
    };
    const auto &r = m.rope, &p = published.rope;
    if (m.norm_eps != published.norm_eps) return diff("norm_eps", m.norm_eps, published.norm_eps);
    if (m.qk_norm != published.qk_norm) return diff("qk_norm", m.qk_norm, published.qk_norm);
    if (m.attn_logit_softcap != published.attn_logit_softcap) return diff("attn_logit_softcap", m.attn_logit_softcap, published.attn_logit_softcap);
    if (m.attention_sinks != published.attention_sinks) return diff("attention_sinks", m.attention_sinks, published.attention_sinks);
    if (m.swiglu_limit != published.swiglu_limit) return diff("swiglu_limit", m.swiglu_limit, published.swiglu_limit);
    const auto &e = m.moe, &pe = published.moe;
    if (e.score != pe.score)
        return "model.moe.score=\"" + std::string(to_string(e.score)) + "\" (the published model's: \"" + std::string(to_string(pe.score)) + "\")";
    if (e.expert_bias != pe.expert_bias) return diff("moe.expert_bias", e.expert_bias, pe.expert_bias);
    if (e.groups != pe.groups) return diff("moe.groups", static_cast<double>(e.groups), static_cast<double>(pe.groups));
    if (e.group_top_k != pe.group_top_k) return diff("moe.group_top_k", static_cast<double>(e.group_top_k), static_cast<double>(pe.group_top_k));
    if (e.topk_scaling != pe.topk_scaling) return diff("moe.topk_scaling", e.topk_scaling, pe.topk_scaling);
    if (m.position_embedding != position_embedding::rope || r == p) return "";
    if (r.theta != p.theta) return diff("rope.theta", r.theta, p.theta);
    if (r.fraction != p.fraction) return diff("rope.fraction", r.fraction, p.fraction);
    if (r.scaling != p.scaling)
        return "model.rope.scaling=\"" + std::string(to_string(r.scaling)) + "\" (the published model's: \"" +
               std::string(to_string(p.scaling)) + "\")";
    return diff("rope.factor", r.factor, p.factor) + " or another field of model.rope";
}

/// Vocabulary padded the way Megatron-LM does (megatron/training/tokenizer: _vocab_size_with_padding):
/// up to a multiple of make_vocab_size_divisible_by (128) x tp. Other frameworks use the config's vocab as is.
constexpr std::int64_t padded_vocab(std::int64_t vocab, std::int64_t divisible_by) {
    if (divisible_by <= 1) return vocab;
    return (vocab + divisible_by - 1) / divisible_by * divisible_by;
}

/// Parameter counts of the pieces of a model, in numbers of parameters (not bytes).
struct parameter_counts {
    double attention = 0;      ///< per layer: QKV + output projection (+ biases)
    double dense_mlp = 0;      ///< per dense layer
    double expert = 0;         ///< one routed expert's MLP
    double shared_expert = 0;  ///< all shared experts of one MoE layer together
    double router = 0;         ///< per MoE layer
    double layer_norms = 0;    ///< per layer (two norms, + the QK norms)
    double word_embedding = 0; ///< vocab x hidden
    double position_embedding = 0;
    double output_layer = 0;   ///< untied LM head (0 when tied)
    double final_norm = 0;     ///< final norm (+ embedding norm when present)

    double dense_layer() const { return attention + dense_mlp + layer_norms; }
    double moe_layer(std::int64_t experts) const {
        return attention + layer_norms + router + shared_expert + expert * static_cast<double>(experts);
    }
};

/// Exact counts for the architecture with the given vocabulary (pass padded_vocab(...) to include padding)
/// and learned-position table size. Formulas: Megatron-LM/HF module shapes.
inline parameter_counts count_parameters(const transformer_spec& m, std::int64_t vocab, std::int64_t positions) {
    parameter_counts c;
    const double h = static_cast<double>(m.hidden);
    const double q = static_cast<double>(m.heads * m.hdim());
    const double kv = static_cast<double>(m.kv() * m.hdim());
    const bool qkvb = m.bias || m.qkv_bias;
    c.attention = h * (q + 2 * kv) + q * h + (qkvb ? q + 2 * kv : 0.0) + (m.bias ? h : 0.0);
    // Per-head q_norm and k_norm of head_dim each (modeling_qwen3.py / modeling_gemma3.py; Megatron --qk-layernorm
    // builds them of hidden_size_per_attention_head). OLMo 2's span all heads and Llama 4's have no weights: within
    // 0.01% either way.
    const double qk_norms = m.qk_norm ? 2.0 * static_cast<double>(m.hdim()) * (m.norm == norm_kind::layernorm ? 2 : 1) : 0.0;
    const double sinks = m.attention_sinks ? static_cast<double>(m.heads) : 0.0;  // gpt-oss self_attn.sinks
    c.attention += sinks;
    if (m.is_mla()) {  // modeling_deepseek_v2.py DeepseekV2Attention: q_a/q_b (or q_proj), kv_a_proj_with_mqa, kv_b_proj, o_proj
        const auto& a = m.mla;
        const double heads = static_cast<double>(m.heads);
        const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
        const double ql = static_cast<double>(a.q_lora_rank), kl = static_cast<double>(a.kv_lora_rank);
        const double qproj = a.q_lora_rank > 0 ? h * ql + ql + ql * heads * qk : h * heads * qk;  // + q_a_layernorm
        c.attention = qproj + h * (kl + static_cast<double>(a.qk_rope_head_dim)) + kl /* kv_a_layernorm */ +
                      kl * heads * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim) +
                      heads * static_cast<double>(a.v_head_dim) * h + (m.bias ? h : 0.0) + sinks;
    }
    auto mlp = [&](double f) {
        const double in = is_gated(m.activation) ? 2 * f : f;
        return h * in + f * h + (m.bias ? in + h : 0.0);
    };
    c.dense_mlp = mlp(static_cast<double>(m.ffn_hidden));
    const double norm = m.norm == norm_kind::layernorm ? 2 * h : h;
    c.layer_norms = static_cast<double>(m.layer_norm_count()) * norm + qk_norms;
    if (m.is_moe()) {
        c.expert = mlp(static_cast<double>(m.expert_ffn()));
        c.shared_expert = static_cast<double>(m.moe.shared_experts) * c.expert;
        // the router's bias follows the linear layers' (Megatron router.py: add_bias_linear; gpt-oss router bias=True)
        c.router = (h + (m.bias ? 1.0 : 0.0)) * static_cast<double>(m.moe.experts);
    }
    c.word_embedding = static_cast<double>(vocab) * h;
    c.position_embedding = m.position_embedding == position_embedding::learned ? static_cast<double>(positions) * h : 0.0;
    c.output_layer = m.tied_embeddings ? 0.0 : static_cast<double>(vocab) * h;
    c.final_norm = norm * (m.embedding_norm ? 2 : 1);
    return c;
}

/// Weight elements of one layer's attention matrices (no biases or norms): the GEMMs of the attention block.
inline double attention_weights(const transformer_spec& m) {
    const double h = static_cast<double>(m.hidden);
    if (m.is_mla()) {
        const auto& a = m.mla;
        const double heads = static_cast<double>(m.heads);
        const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
        const double ql = static_cast<double>(a.q_lora_rank), kl = static_cast<double>(a.kv_lora_rank);
        return (a.q_lora_rank > 0 ? h * ql + ql * heads * qk : h * heads * qk) +
               h * (kl + static_cast<double>(a.qk_rope_head_dim)) +
               kl * heads * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim) + heads * static_cast<double>(a.v_head_dim) * h;
    }
    const double q = static_cast<double>(m.heads * m.hdim());
    const double kv = static_cast<double>(m.kv() * m.hdim());
    return h * (q + 2 * kv) + q * h;
}

/// Mean number of keys each query attends to over the layers at sequence length s, in the no-causal-halving
/// convention of perf/flops.hpp: s for global layers, min(window, s) for sliding-window layers.
inline double mean_attention_span(const transformer_spec& m, std::int64_t seq_len) {
    const double s = static_cast<double>(seq_len);
    if (m.sliding_window <= 0 || m.sliding_window >= seq_len || m.layers <= 0) return s;
    const double layers = static_cast<double>(m.layers);
    const double global = m.global_layer_every > 0 ? static_cast<double>(m.layers / m.global_layer_every) : 0.0;
    return (global * s + (layers - global) * static_cast<double>(m.sliding_window)) / layers;
}

/// Rows of the learned position table at training sequence length `seq_len`: model.max_positions, else
/// seq_len (train/geometry.hpp position_table_length(job) for a job).
inline std::int64_t position_table_length(const transformer_spec& m, std::int64_t seq_len) {
    return m.max_positions > 0 ? m.max_positions : seq_len;
}

/// Total parameters of the model as published (unpadded vocab). `seq_len` sizes a learned position
/// table when model.max_positions is 0.
inline double total_parameters(const transformer_spec& m, std::int64_t seq_len = 0) {
    const auto c = count_parameters(m, m.vocab, position_table_length(m, seq_len));
    const double dense = static_cast<double>(m.layers - m.moe_layers());
    const double moe = static_cast<double>(m.moe_layers());
    return dense * c.dense_layer() + moe * c.moe_layer(m.moe.experts) + c.word_embedding + c.position_embedding +
           c.output_layer + c.final_norm;
}

/// Parameters active per token (MoE: top_k routed experts), used for FLOP counting.
inline double active_parameters(const transformer_spec& m, std::int64_t seq_len = 0) {
    if (!m.is_moe()) return total_parameters(m, seq_len);
    const auto c = count_parameters(m, m.vocab, position_table_length(m, seq_len));
    const double dense = static_cast<double>(m.layers - m.moe_layers());
    const double moe = static_cast<double>(m.moe_layers());
    return dense * c.dense_layer() + moe * c.moe_layer(m.moe.top_k) + c.word_embedding + c.position_embedding +
           c.output_layer + c.final_norm;
}

}  // namespace frenzy
