#pragma once
// Presets of well-known models, with their published parameter counts.
#include <cctype>
#include <cstdint>
#include <utility>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/core/suggest.hpp"
#include "frenzy/model/transformer.hpp"

namespace frenzy {

struct model_preset {
    transformer_spec spec;         ///< spec.name is the preset name
    double published_parameters;   ///< the publisher's figure
    const char* source;            ///< where the architecture and the figure come from
};

namespace detail {

/// GPT-2 / GPT-3 / OPT block: learned positions, LayerNorm, biases on every linear, MLP of 4 x hidden,
/// word embedding tied to the LM head (Radford et al. 2019; Brown et al. 2020 Sec. 2.1; Zhang et al. 2022).
inline transformer_spec gpt_style(const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                  std::int64_t vocab, std::int64_t positions, activation act = activation::gelu) {
    return {.name = name, .layers = layers, .hidden = hidden, .heads = heads, .ffn_hidden = 4 * hidden,
            .activation = act, .vocab = vocab, .tied_embeddings = true,
            .position_embedding = position_embedding::learned, .max_positions = positions,
            .norm = norm_kind::layernorm, .bias = true};
}

/// LLaMA-family block (Llama, Mistral, Mixtral, Qwen2, DeepSeek): RoPE, RMSNorm, SwiGLU, no biases.
/// kv_heads == heads (plain multi-head attention) is stored as 0, as from_hf_config does.
inline transformer_spec llama_style(const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                    std::int64_t kv_heads, std::int64_t ffn, std::int64_t vocab, bool tied = false) {
    return {.name = name, .layers = layers, .hidden = hidden, .heads = heads,
            .kv_heads = kv_heads == heads ? 0 : kv_heads,
            .ffn_hidden = ffn, .activation = activation::swiglu, .vocab = vocab, .tied_embeddings = tied,
            .position_embedding = position_embedding::rope, .norm = norm_kind::rmsnorm, .bias = false};
}

/// Qwen2 / Qwen2.5: a LLaMA block with biases on the QKV projection only (HF modeling_qwen2.py).
inline transformer_spec qwen_style(const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                   std::int64_t kv_heads, std::int64_t ffn, std::int64_t vocab, bool tied) {
    auto s = llama_style(name, layers, hidden, heads, kv_heads, ffn, vocab, tied);
    s.qkv_bias = true;
    return s;
}

/// GPT-NeoX / Pythia: RoPE (partial rotary: no extra weights), LayerNorm, biases, untied LM head, 4h GELU MLP.
inline transformer_spec neox_style(const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                   std::int64_t vocab) {
    return {.name = name, .layers = layers, .hidden = hidden, .heads = heads, .ffn_hidden = 4 * hidden,
            .activation = activation::gelu, .vocab = vocab, .tied_embeddings = false,
            .position_embedding = position_embedding::rope, .norm = norm_kind::layernorm, .bias = true,
            .rope = {.theta = 10000, .fraction = 0.25}};  // rotary_pct 0.25
}

/// BLOOM: ALiBi, LayerNorm after the word embedding, biases, tied embeddings, 4h GELU MLP (BigScience 2022).
inline transformer_spec bloom_style(const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t heads) {
    return {.name = name, .layers = layers, .hidden = hidden, .heads = heads, .ffn_hidden = 4 * hidden,
            .activation = activation::gelu, .vocab = 250880, .tied_embeddings = true,
            .position_embedding = position_embedding::alibi, .norm = norm_kind::layernorm, .bias = true,
            .embedding_norm = true};
}

/// MPT: ALiBi, no biases (its LayerNorms have no bias either: counted as LayerNorm, +3h per layer, <0.01%),
/// tied embeddings, 4h GELU MLP (mosaicml/mpt-7b config.json: no_bias, expansion_ratio 4).
inline transformer_spec mpt_style(const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t heads) {
    return {.name = name, .layers = layers, .hidden = hidden, .heads = heads, .ffn_hidden = 4 * hidden,
            .activation = activation::gelu, .vocab = 50432, .tied_embeddings = true,
            .position_embedding = position_embedding::alibi, .norm = norm_kind::layernorm, .bias = false};
}

inline transformer_spec with_moe(transformer_spec s, moe_spec m) {
    s.moe = m;
    return s;
}

/// The published rotary base and norm epsilon (config.json rope_theta, rms_norm_eps), and the QK-norm.
inline transformer_spec with_rope(transformer_spec s, double theta, double eps, bool qk_norm = false) {
    s.rope.theta = theta;
    s.norm_eps = eps;
    s.qk_norm = qk_norm;
    return s;
}

/// Llama 3.1 / 3.2's rope_scaling: {"rope_type": "llama3", "factor": F, "low_freq_factor": 1, "high_freq_factor": 4,
/// "original_max_position_embeddings": 8192} over rope_theta 500000 (meta-llama/Llama-3.x config.json).
inline transformer_spec llama3_rope(transformer_spec s, double factor) {
    s = with_rope(s, 500000, 1e-5);
    s.rope.scaling = rope_scaling_kind::llama3;
    s.rope.factor = factor;
    s.rope.low_freq_factor = 1;
    s.rope.high_freq_factor = 4;
    s.rope.original_max_positions = 8192;
    return s;
}

/// Phi-3.5 / Phi-4 mini: LongRoPE (per-dimension long and short factors, not kept) from a 4096-token pretraining
/// context, rope_theta 10000, rms_norm_eps 1e-5, partial_rotary_factor `fraction` (microsoft/Phi-*-mini config.json).
inline transformer_spec phi_rope(transformer_spec s, double fraction) {
    s = with_rope(s, 10000, 1e-5);
    s.rope.scaling = rope_scaling_kind::longrope;
    s.rope.original_max_positions = 4096;
    s.rope.fraction = fraction;
    return s;
}

/// Qwen3: the LLaMA block with a 128-wide head (heads x 128 may differ from hidden), RMSNorm q_norm/k_norm per head
/// (2 x 128 weights a layer, counted), rope_theta 1e6, rms_norm_eps 1e-6, no biases (transformers
/// modeling_qwen3.py, modeling_qwen3_moe.py; Qwen/Qwen3-* config.json).
inline transformer_spec qwen3_style(const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                    std::int64_t kv_heads, std::int64_t ffn, bool tied) {
    auto s = with_rope(llama_style(name, layers, hidden, heads, kv_heads, ffn, 151936, tied), 1e6, 1e-6, true);
    s.head_dim = 128 * heads == hidden ? 0 : 128;
    return s;
}

/// DeepSeek-V2/V3's YaRN: factor 40 over a 4096-token context, beta_fast 32, beta_slow 1, with the model's mscale
/// (V2-Lite config.json: 0.707; V3 report sec. 4.3: sqrt(t) = 0.1 ln s + 1, i.e. mscale 1), rope_theta 10000.
inline transformer_spec deepseek_rope(transformer_spec s, double mscale) {
    s = with_rope(s, 10000, 1e-6);
    s.rope.scaling = rope_scaling_kind::yarn;
    s.rope.factor = 40;
    s.rope.original_max_positions = 4096;
    s.rope.beta_fast = 32;
    s.rope.beta_slow = 1;
    s.rope.mscale = mscale;
    s.rope.mscale_all_dim = mscale;
    return s;
}

/// Gemma: a LLaMA block with GeGLU, head_dim 256 (heads x head_dim may differ from hidden) and tied embeddings;
/// Gemma 2 adds two norms a layer, sliding-window layers every other layer and logit soft-capping
/// (transformers modeling_gemma.py / modeling_gemma2.py).
inline transformer_spec gemma_style(const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                    std::int64_t kv_heads, std::int64_t head_dim, std::int64_t ffn, std::int64_t vocab,
                                    int version) {
    auto s = llama_style(name, layers, hidden, heads, kv_heads, ffn, vocab, true);
    s.activation = activation::geglu;
    s.head_dim = head_dim * heads == hidden ? 0 : head_dim;
    s.norm_eps = 1e-6;
    if (version >= 2) {
        s.norms_per_layer = 4;
        s.sliding_window = 4096;
        s.global_layer_every = 2;
        s.final_logit_softcap = 30.0;
        s.attn_logit_softcap = 50.0;
    }
    return s;
}

/// DeepSeek-V2/V3: MLA attention (mla_spec), dense first layers, shared + routed experts (modeling_deepseek_v2.py).
/// head_dim holds qk_nope + qk_rope and kv_heads == heads, as from_hf_config stores them.
inline transformer_spec deepseek_style(const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                       std::int64_t ffn, std::int64_t vocab, mla_spec mla, moe_spec moe) {
    auto s = llama_style(name, layers, hidden, heads, heads, ffn, vocab);
    s.mla = mla;
    s.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    s.moe = moe;
    return s;
}

/// Falcon (RW) 7B: parallel attention with one LayerNorm a layer, multi-query attention, no biases, GELU 4h MLP,
/// rotary, tied embeddings (transformers configuration_falcon.py defaults).
inline transformer_spec falcon_style(const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                     std::int64_t vocab) {
    return {.name = name, .layers = layers, .hidden = hidden, .heads = heads, .kv_heads = 1, .ffn_hidden = 4 * hidden,
            .activation = activation::gelu, .vocab = vocab, .tied_embeddings = true,
            .position_embedding = position_embedding::rope, .norm = norm_kind::layernorm, .bias = false,
            .parallel_attention = true};
}

/// Gemma 3 (Gemma3TextConfig; modeling_gemma3.py): four norms a layer, 5 sliding-window layers to 1 global, per-head
/// QK-norm, global base 1e6 and local 1e4, no soft-capping; the 4B-27B models stretch the global base linearly by 8
/// (google/gemma-3-*-pt config.json rope_scaling) and their text_config takes Gemma3TextConfig's vocab_size 262208.
inline transformer_spec gemma3(const char* name, std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t kv_heads,
                               std::int64_t head_dim, std::int64_t ffn, std::int64_t vocab, std::int64_t window, double linear) {
    auto s = gemma_style(name, layers, hidden, heads, kv_heads, head_dim, ffn, vocab, 1);
    s.norms_per_layer = 4;
    s.sliding_window = window;
    s.global_layer_every = 6;
    s.qk_norm = true;
    s.rope.theta = 1e6;
    s.rope.local_theta = 1e4;
    if (linear > 0) {
        s.rope.scaling = rope_scaling_kind::linear;
        s.rope.factor = linear;
    }
    return s;
}

/// Gemma 3 1B (google/gemma-3-1b-it config.json, tests/data/hf/gemma-3-1b-it.json).
inline transformer_spec gemma3_1b() { return gemma3("gemma-3-1b", 26, 1152, 4, 1, 256, 6912, 262144, 512, 0); }

/// Llama 4 text model (meta-llama/Llama-4-*-17B-*E config.json text_config; modeling_llama4.py): 48 layers of 5120,
/// 40 heads of 128 over 8 kv heads, one shared and `experts` routed experts of 8192 (top-1, sigmoid) in every
/// `step`-th layer, dense layers of 16384, rope_theta 500000, rms_norm_eps 1e-5. Its chunked attention and NoPE
/// layers are not represented.
inline transformer_spec llama4_text(const char* name, std::int64_t experts, std::int64_t step, bool qk_norm) {
    auto s = with_rope(llama_style(name, 48, 5120, 40, 8, 16384, 202048), 500000, 1e-5, qk_norm);
    s.moe = {.experts = experts, .top_k = 1, .expert_ffn_hidden = 8192, .shared_experts = 1, .layer_step = step,
             .score = router_score::sigmoid};
    return s;
}

/// gpt-oss (GptOssConfig, configuration_gpt_oss.py@828a27fd; tests/data/hf/gpt-oss-*.json): every layer MoE of
/// `experts` experts of 2880 (top-4, router and experts with biases, clamped SwiGLU), 64 query heads of 64 over 8 kv
/// heads with biases and sinks, sliding window 128 on every other layer, YaRN factor 32 over 4096 positions on base
/// 150000, untied 201088 vocabulary.
inline transformer_spec gpt_oss(const char* name, std::int64_t layers, std::int64_t experts) {
    transformer_spec s{.name = name, .layers = layers, .hidden = 2880, .heads = 64, .kv_heads = 8, .head_dim = 64,
                       .ffn_hidden = 2880, .activation = activation::swiglu, .vocab = 201088, .tied_embeddings = false,
                       .position_embedding = position_embedding::rope, .norm = norm_kind::rmsnorm, .bias = true};
    s.moe = {.experts = experts, .top_k = 4};  // experts of ffn_hidden
    s.sliding_window = 128;
    s.global_layer_every = 2;
    s.rope = {.theta = 150000, .scaling = rope_scaling_kind::yarn, .factor = 32, .original_max_positions = 4096,
              .beta_fast = 32, .beta_slow = 1};
    s.norm_eps = 1e-5;
    s.attention_sinks = true;
    s.swiglu_limit = 7;
    return s;
}

// frenzy: data table
inline const std::vector<model_preset>& preset_table() {
    using A = activation;
    // GPT-3 and OPT publish nominal sizes (names such as "2.7B"), not counts; their architectures come from
    // the tables cited. OPT's learned position table has 2 extra rows (HF OPTLearnedPositionalEmbedding offset).
    static const std::vector<model_preset> v{
        // GPT-2: openai-community/gpt2* config.json; OpenAI's release names the sizes 124M/355M/774M/1558M.
        {gpt_style("gpt2", 12, 768, 12, 50257, 1024), 124e6, "openai-community/gpt2 config.json; OpenAI GPT-2 release: 124M"},
        {gpt_style("gpt2-medium", 24, 1024, 16, 50257, 1024), 355e6, "openai-community/gpt2-medium config.json; OpenAI GPT-2 release: 355M"},
        {gpt_style("gpt2-large", 36, 1280, 20, 50257, 1024), 774e6, "openai-community/gpt2-large config.json; OpenAI GPT-2 release: 774M"},
        {gpt_style("gpt2-xl", 48, 1600, 25, 50257, 1024), 1558e6, "openai-community/gpt2-xl config.json; OpenAI GPT-2 release: 1558M"},
        // GPT-3: Brown et al. 2020 Table 2.1 (d_ff = 4 d_model, context 2048, GPT-2 vocabulary).
        {gpt_style("gpt3-125m", 12, 768, 12, 50257, 2048), 125e6, "Brown et al. 2020 Table 2.1: GPT-3 Small 125M"},
        {gpt_style("gpt3-350m", 24, 1024, 16, 50257, 2048), 350e6, "Brown et al. 2020 Table 2.1: GPT-3 Medium 350M (nominal)"},
        {gpt_style("gpt3-760m", 24, 1536, 16, 50257, 2048), 760e6, "Brown et al. 2020 Table 2.1: GPT-3 Large 760M"},
        // Table 2.1 lists 24 heads with d_head 128 for d_model 2048 (inconsistent); 16 x 128 matches 1.3B.
        {gpt_style("gpt3-1.3b", 24, 2048, 16, 50257, 2048), 1.3e9, "Brown et al. 2020 Table 2.1: GPT-3 XL 1.3B (nominal; 16 heads of 128)"},
        {gpt_style("gpt3-2.7b", 32, 2560, 32, 50257, 2048), 2.7e9, "Brown et al. 2020 Table 2.1: GPT-3 2.7B (nominal)"},
        {gpt_style("gpt3-6.7b", 32, 4096, 32, 50257, 2048), 6.7e9, "Brown et al. 2020 Table 2.1: GPT-3 6.7B (nominal)"},
        // Table 2.1 prints d_model 5140; 40 heads x d_head 128 = 5120.
        {gpt_style("gpt3-13b", 40, 5120, 40, 50257, 2048), 13e9, "Brown et al. 2020 Table 2.1: GPT-3 13B (nominal; d_model 40 x 128)"},
        {gpt_style("gpt3-175b", 96, 12288, 96, 50257, 2048), 175e9, "Brown et al. 2020 Table 2.1: GPT-3 175B"},
        // OPT: Zhang et al. 2022 Table 1 and facebook/opt-* config.json (ReLU, vocab 50272, 2048 + 2 positions).
        {gpt_style("opt-125m", 12, 768, 12, 50272, 2050, A::relu), 125e6, "Zhang et al. 2022 Table 1; facebook/opt-125m config.json"},
        {gpt_style("opt-1.3b", 24, 2048, 32, 50272, 2050, A::relu), 1.3e9, "Zhang et al. 2022 Table 1 (nominal); facebook/opt-1.3b config.json"},
        {gpt_style("opt-2.7b", 32, 2560, 32, 50272, 2050, A::relu), 2.7e9, "Zhang et al. 2022 Table 1 (nominal); facebook/opt-2.7b config.json"},
        {gpt_style("opt-6.7b", 32, 4096, 32, 50272, 2050, A::relu), 6.7e9, "Zhang et al. 2022 Table 1 (nominal); facebook/opt-6.7b config.json"},
        {gpt_style("opt-13b", 40, 5120, 40, 50272, 2050, A::relu), 13e9, "Zhang et al. 2022 Table 1 (nominal); facebook/opt-13b config.json"},
        {gpt_style("opt-30b", 48, 7168, 56, 50272, 2050, A::relu), 30e9, "Zhang et al. 2022 Table 1 (nominal); facebook/opt-30b config.json"},
        {gpt_style("opt-66b", 64, 9216, 72, 50272, 2050, A::relu), 66e9, "Zhang et al. 2022 Table 1 (nominal); facebook/opt-66b config.json"},
        {gpt_style("opt-175b", 96, 12288, 96, 50272, 2050, A::relu), 175e9, "Zhang et al. 2022 Table 1 (nominal)"},
        // LLaMA (1): Touvron et al. 2023a Table 2 (6.7B, 13.0B, 32.5B, 65.2B).
        {with_rope(llama_style("llama-7b", 32, 4096, 32, 32, 11008, 32000), 10000, 1e-6), 6.7e9, "Touvron et al. 2023a Table 2: 6.7B"},
        {with_rope(llama_style("llama-13b", 40, 5120, 40, 40, 13824, 32000), 10000, 1e-6), 13.0e9, "Touvron et al. 2023a Table 2: 13.0B"},
        {with_rope(llama_style("llama-33b", 60, 6656, 52, 52, 17920, 32000), 10000, 1e-6), 32.5e9, "Touvron et al. 2023a Table 2: 32.5B"},
        {with_rope(llama_style("llama-65b", 80, 8192, 64, 64, 22016, 32000), 10000, 1e-6), 65.2e9, "Touvron et al. 2023a Table 2: 65.2B"},
        // Llama 2: meta-llama/Llama-2-*-hf config.json; exact counts of the released weights.
        {with_rope(llama_style("llama-2-7b", 32, 4096, 32, 32, 11008, 32000), 10000, 1e-5), 6738415616, "meta-llama/Llama-2-7b-hf config.json; 6,738,415,616 parameters"},
        {with_rope(llama_style("llama-2-13b", 40, 5120, 40, 40, 13824, 32000), 10000, 1e-5), 13015864320, "meta-llama/Llama-2-13b-hf config.json; 13,015,864,320 parameters"},
        {with_rope(llama_style("llama-2-70b", 80, 8192, 64, 8, 28672, 32000), 10000, 1e-5), 68976648192, "meta-llama/Llama-2-70b-hf config.json; 68,976,648,192 parameters"},
        // Llama 3.1 / 3.2: meta-llama/Llama-3.x-* config.json; model cards / Hugging Face model pages.
        {llama3_rope(llama_style("llama-3.1-8b", 32, 4096, 32, 8, 14336, 128256), 8), 8.03e9, "meta-llama/Llama-3.1-8B config.json; model page 8.03B"},
        {llama3_rope(llama_style("llama-3.1-70b", 80, 8192, 64, 8, 28672, 128256), 8), 70.6e9, "meta-llama/Llama-3.1-70B config.json; model page 70.6B"},
        {llama3_rope(llama_style("llama-3.1-405b", 126, 16384, 128, 8, 53248, 128256), 8), 405e9, "meta-llama/Llama-3.1-405B config.json; Llama 3 paper (Dubey et al. 2024) Table 3: 405B"},
        {llama3_rope(llama_style("llama-3.2-1b", 16, 2048, 32, 8, 8192, 128256, true), 32), 1.23e9, "meta-llama/Llama-3.2-1B config.json (tied); model card 1.23B"},
        {llama3_rope(llama_style("llama-3.2-3b", 28, 3072, 24, 8, 8192, 128256, true), 32), 3.21e9, "meta-llama/Llama-3.2-3B config.json (tied); model card 3.21B"},
        // Mistral AI.
        {with_rope(llama_style("mistral-7b", 32, 4096, 32, 8, 14336, 32000), 10000, 1e-5), 7.24e9, "mistralai/Mistral-7B-v0.1 config.json; model page 7.24B"},
        {with_moe(with_rope(llama_style("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000), 1e6, 1e-5), {.experts = 8, .top_k = 2}), 46.7e9,
         "mistralai/Mixtral-8x7B-v0.1 config.json; Mistral AI 'Mixtral of experts': 46.7B total, 12.9B active"},
        {with_moe(with_rope(llama_style("mixtral-8x22b", 56, 6144, 48, 8, 16384, 32000), 1e6, 1e-5), {.experts = 8, .top_k = 2}), 141e9,
         "mistralai/Mixtral-8x22B-v0.1 config.json; Mistral AI 'Cheaper, Better, Faster, Stronger': 141B total, 39B active"},
        // Qwen2.5: Qwen/Qwen2.5-* config.json; model cards give total and non-embedding parameters.
        {with_rope(qwen_style("qwen2.5-0.5b", 24, 896, 14, 2, 4864, 151936, true), 1e6, 1e-6), 0.49e9, "Qwen/Qwen2.5-0.5B config.json; model card 0.49B"},
        {with_rope(qwen_style("qwen2.5-1.5b", 28, 1536, 12, 2, 8960, 151936, true), 1e6, 1e-6), 1.54e9, "Qwen/Qwen2.5-1.5B config.json; model card 1.54B"},
        {with_rope(qwen_style("qwen2.5-3b", 36, 2048, 16, 2, 11008, 151936, true), 1e6, 1e-6), 3.09e9, "Qwen/Qwen2.5-3B config.json; model card 3.09B"},
        {with_rope(qwen_style("qwen2.5-7b", 28, 3584, 28, 4, 18944, 152064, false), 1e6, 1e-6), 7.61e9, "Qwen/Qwen2.5-7B config.json; model card 7.61B"},
        {with_rope(qwen_style("qwen2.5-14b", 48, 5120, 40, 8, 13824, 152064, false), 1e6, 1e-6), 14.7e9, "Qwen/Qwen2.5-14B config.json; model card 14.7B"},
        {with_rope(qwen_style("qwen2.5-32b", 64, 5120, 40, 8, 27648, 152064, false), 1e6, 1e-6), 32.5e9, "Qwen/Qwen2.5-32B config.json; model card 32.5B"},
        {with_rope(qwen_style("qwen2.5-72b", 80, 8192, 64, 8, 29568, 152064, false), 1e6, 1e-6), 72.7e9, "Qwen/Qwen2.5-72B config.json; model card 72.7B"},
        // Qwen1.5-MoE: 60 routed experts of 1408 + a shared expert of 5632 = 4 x 1408 (its 1-output gate,
        // hidden parameters a layer, is not counted).
        {with_moe(with_rope(qwen_style("qwen1.5-moe-a2.7b", 24, 2048, 16, 16, 5632, 151936, false), 1e6, 1e-6),
                  {.experts = 60, .top_k = 4, .expert_ffn_hidden = 1408, .shared_experts = 4}),
         14.3e9, "Qwen/Qwen1.5-MoE-A2.7B config.json; Qwen blog: 14.3B total, 2.7B active"},
        // DeepSeekMoE: first layer dense (ffn 10944), then 2 shared + 64 routed experts of 1408, top-6.
        {with_moe(with_rope(llama_style("deepseek-moe-16b", 28, 2048, 16, 16, 10944, 102400), 10000, 1e-6),
                  {.experts = 64, .top_k = 6, .expert_ffn_hidden = 1408, .shared_experts = 2, .dense_layers = 1}),
         16.4e9, "deepseek-ai/deepseek-moe-16b-base config.json; Dai et al. 2024: 16.4B total, 2.8B active"},
        // EleutherAI.
        {neox_style("gpt-neox-20b", 44, 6144, 64, 50432), 20554567680, "Black et al. 2022 Table 1: 20,554,567,680; EleutherAI/gpt-neox-20b config.json"},
        {neox_style("pythia-1b", 16, 2048, 8, 50304), 1011781632, "Biderman et al. 2023 Table 1: 1,011,781,632"},
        {neox_style("pythia-6.9b", 32, 4096, 32, 50432), 6857302016, "Biderman et al. 2023 Table 1: 6,857,302,016"},
        {neox_style("pythia-12b", 36, 5120, 40, 50688), 11846072320, "Biderman et al. 2023 Table 1: 11,846,072,320"},
        // BigScience BLOOM: model cards give exact counts.
        {bloom_style("bloom-560m", 24, 1024, 16), 559214592, "bigscience/bloom-560m model card: 559,214,592"},
        {bloom_style("bloom-7b1", 30, 4096, 32), 7069016064, "bigscience/bloom-7b1 model card: 7,069,016,064"},
        {bloom_style("bloom-176b", 70, 14336, 112), 176247271424, "bigscience/bloom model card: 176,247,271,424"},
        // Google Gemma (tests/data/hf/SOURCES.md: config.json files; Hugging Face model pages for the counts).
        {gemma_style("gemma-2b", 18, 2048, 8, 1, 256, 16384, 256000, 1), 2.51e9, "google/gemma-2b config.json; model page 2.51B"},
        {gemma_style("gemma-2-9b", 42, 3584, 16, 8, 256, 14336, 256000, 2), 9.24e9, "google/gemma-2-9b config.json; model page 9.24B"},
        // Gemma 3: four norms a layer, 5 sliding-window layers (512) to 1 global, QK-norm, global base 1e6 and
        // local 1e4, no soft-capping (tests/data/hf/gemma-3-1b-it.json)
        {gemma3_1b(), 1.0e9, "google/gemma-3-1b-it config.json; Google: Gemma 3 1B (nominal)"},
        // Gemma 3 4B-27B language models: Gemma 3 technical report (arXiv:2503.19786) Table 1, embedding + non-embedding
        // parameters (the 417M SigLIP vision encoder left out): 675M + 3,209M, 1,012M + 10,759M, 1,416M + 25,600M.
        {gemma3("gemma-3-4b", 34, 2560, 8, 4, 256, 10240, 262208, 1024, 8), 3.884e9, "google/gemma-3-4b-pt text_config; Gemma 3 report Table 1: 3,884M"},
        {gemma3("gemma-3-12b", 48, 3840, 16, 8, 256, 15360, 262208, 1024, 8), 11.771e9, "google/gemma-3-12b-pt text_config; Gemma 3 report Table 1: 11,771M"},
        {gemma3("gemma-3-27b", 62, 5376, 32, 16, 128, 21504, 262208, 1024, 8), 27.016e9, "google/gemma-3-27b-pt text_config; Gemma 3 report Table 1: 27,016M"},
        // Llama 4 (Meta: Scout 109B total, Maverick 400B total, 17B active each, with the vision encoder; the text
        // model alone is 1-2% smaller). Scout: llama3 rope scaling factor 8 and QK-norm; Maverick: neither, and MoE
        // on every other layer.
        {[] { auto s = llama3_rope(llama4_text("llama-4-scout-17b-16e", 16, 1, true), 8); s.qk_norm = true; return s; }(),
         109e9, "meta-llama/Llama-4-Scout-17B-16E config.json text_config; Meta: 109B total, 17B active"},
        {llama4_text("llama-4-maverick-17b-128e", 128, 2, false), 400e9,
         "meta-llama/Llama-4-Maverick-17B-128E config.json text_config; Meta: 400B total, 17B active"},
        // OpenAI gpt-oss: model card (arXiv:2508.10925) Table 1: 20.91B total, 3.61B active; 116.83B total, 5.13B active.
        {gpt_oss("gpt-oss-20b", 24, 32), 20.91e9, "openai/gpt-oss-20b config.json; gpt-oss model card: 20.91B total, 3.61B active"},
        {gpt_oss("gpt-oss-120b", 36, 128), 116.83e9, "openai/gpt-oss-120b config.json; gpt-oss model card: 116.83B total, 5.13B active"},
        // Microsoft Phi-3.5 / Phi-4 mini: the LLaMA block with fused qkv and gate_up projections.
        {phi_rope(llama_style("phi-3.5-mini", 32, 3072, 32, 32, 8192, 32064), 1.0), 3.82e9, "microsoft/Phi-3.5-mini-instruct config.json; model card 3.8B, model page 3.82B"},
        {phi_rope(llama_style("phi-4-mini", 32, 3072, 24, 8, 8192, 200064, true), 0.75), 3.84e9, "microsoft/Phi-4-mini-instruct config.json (tied); model page 3.84B"},
        // Qwen3 (q_norm/k_norm, 2 x 128 weights a layer).
        {with_rope(llama_style("qwen3-1.7b", 28, 2048, 16, 8, 6144, 151936, true), 1e6, 1e-6, true), 1.7e9, "Qwen/Qwen3-1.7B config.json (head_dim 128); model card 1.7B"},
        // Qwen3 dense and MoE (Qwen3 technical report, arXiv:2505.09388, Tables 1-2: layers, heads Q/KV, tied
        // embeddings, experts 128 / 8 activated; widths and MLPs of the released configs). MoE: no shared expert.
        {qwen3_style("qwen3-0.6b", 28, 1024, 16, 8, 3072, true), 0.6e9, "Qwen3 report Table 1; model card 0.6B"},
        {qwen3_style("qwen3-4b", 36, 2560, 32, 8, 9728, true), 4.0e9, "Qwen3 report Table 1; model card 4.0B"},
        {qwen3_style("qwen3-8b", 36, 4096, 32, 8, 12288, false), 8.2e9, "Qwen3 report Table 1; model card 8.2B"},
        {qwen3_style("qwen3-14b", 40, 5120, 40, 8, 17408, false), 14.8e9, "Qwen3 report Table 1; model card 14.8B"},
        {qwen3_style("qwen3-32b", 64, 5120, 64, 8, 25600, false), 32.8e9, "Qwen3 report Table 1; model card 32.8B"},
        {with_moe(qwen3_style("qwen3-30b-a3b", 48, 2048, 32, 4, 6144, false), {.experts = 128, .top_k = 8, .expert_ffn_hidden = 768}),
         30.5e9, "Qwen3 report Table 2; model card 30.5B total, 3.3B activated"},
        {with_moe(qwen3_style("qwen3-235b-a22b", 94, 4096, 64, 4, 12288, false), {.experts = 128, .top_k = 8, .expert_ffn_hidden = 1536}),
         235e9, "Qwen3 report Table 2; model card 235B total, 22B activated"},
        // OLMo 2 (q_norm/k_norm over all heads, 8192 weights a layer, counted as 2 x 128 per-head ones: 0.004% under).
        {with_rope(llama_style("olmo-2-7b", 32, 4096, 32, 32, 11008, 100352), 500000, 1e-6, true), 7.3e9, "allenai/OLMo-2-1124-7B config.json; model page 7.3B"},
        // DeepSeek-V2-Lite: MLA without q compression, 1 dense layer, 2 shared + 64 routed experts of 1408, top-6.
        {deepseek_rope(deepseek_style("deepseek-v2-lite", 27, 2048, 16, 10944, 102400,
                        {.q_lora_rank = 0, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64, .v_head_dim = 128},
                        {.experts = 64, .top_k = 6, .expert_ffn_hidden = 1408, .shared_experts = 2, .dense_layers = 1}), 0.707),
         15.7e9, "deepseek-ai/DeepSeek-V2-Lite config.json; DeepSeek-AI 2024 (DeepSeek-V2) appendix: 15.7B total, 2.4B active"},
        // DeepSeek-V3 (without the multi-token-prediction module): 3 dense layers, 1 shared + 256 routed of 2048, top-8.
        {deepseek_rope(deepseek_style("deepseek-v3", 61, 7168, 128, 18432, 129280,
                        {.q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64, .v_head_dim = 128},
                        {.experts = 256, .top_k = 8, .expert_ffn_hidden = 2048, .shared_experts = 1, .dense_layers = 3,
                         .score = router_score::sigmoid, .expert_bias = true, .groups = 8, .group_top_k = 4, .topk_scaling = 2.5}), 1.0),
         671e9, "transformers DeepseekV3Config defaults (configuration_deepseek_v3.py@0fc683d); DeepSeek-AI 2024 (V3 report): 671B total, 37B active"},
        // TII Falcon.
        {falcon_style("falcon-7b", 32, 4544, 71, 65024), 7e9, "transformers FalconConfig defaults (configuration_falcon.py@5fd8eda) = tiiuae/falcon-7b; TII: 7B (nominal)"},
        // MosaicML MPT.
        {mpt_style("mpt-7b", 32, 4096, 32), 6.7e9, "mosaicml/mpt-7b config.json; model card 6.7B"},
        {mpt_style("mpt-30b", 48, 7168, 64), 29.95e9, "mosaicml/mpt-30b config.json; model card 29.95B"},
    };
    return v;
}
}  // namespace detail

inline std::span<const model_preset> model_presets() { return detail::preset_table(); }

namespace detail {
/// A model name as presets spell it, for "did you mean": the Hugging Face repository's name without its
/// organisation, lower case ("Qwen/Qwen3-30B-A3B" -> "qwen3-30b-a3b"), and that with a hyphen between letters and
/// a digit ("llama3-8b" -> "llama-3-8b").
inline std::pair<std::string, std::string> preset_spellings(std::string_view name) {
    if (const auto slash = name.rfind('/'); slash != std::string_view::npos) name = name.substr(slash + 1);
    std::string base, hyphenated;
    for (const char ch : name) {
        const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (std::isdigit(static_cast<unsigned char>(c)) && !base.empty() && std::isalpha(static_cast<unsigned char>(base.back())))
            hyphenated += '-';
        base += c;
        hyphenated += c;
    }
    return {base, hyphenated};
}
}  // namespace detail

/// The Hugging Face repository of a preset's published weights (what a fine-tune starts from), or "" for a preset
/// without one here (GPT-3, LLaMA 1 and the papers' sizes).
inline std::string_view published_repository(std::string_view preset_name) {
    // frenzy: data table
    static constexpr std::pair<std::string_view, std::string_view> repos[] = {
        {"llama-2-7b", "meta-llama/Llama-2-7b-hf"}, {"llama-2-13b", "meta-llama/Llama-2-13b-hf"},
        {"llama-2-70b", "meta-llama/Llama-2-70b-hf"}, {"llama-3.1-8b", "meta-llama/Llama-3.1-8B"},
        {"llama-3.1-70b", "meta-llama/Llama-3.1-70B"}, {"llama-3.1-405b", "meta-llama/Llama-3.1-405B"},
        {"llama-3.2-1b", "meta-llama/Llama-3.2-1B"}, {"llama-3.2-3b", "meta-llama/Llama-3.2-3B"},
        {"mistral-7b", "mistralai/Mistral-7B-v0.1"}, {"mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1"},
        {"mixtral-8x22b", "mistralai/Mixtral-8x22B-v0.1"}, {"qwen2.5-0.5b", "Qwen/Qwen2.5-0.5B"},
        {"qwen2.5-1.5b", "Qwen/Qwen2.5-1.5B"}, {"qwen2.5-3b", "Qwen/Qwen2.5-3B"}, {"qwen2.5-7b", "Qwen/Qwen2.5-7B"},
        {"qwen2.5-14b", "Qwen/Qwen2.5-14B"}, {"qwen2.5-32b", "Qwen/Qwen2.5-32B"}, {"qwen2.5-72b", "Qwen/Qwen2.5-72B"},
        {"qwen3-0.6b", "Qwen/Qwen3-0.6B"}, {"qwen3-1.7b", "Qwen/Qwen3-1.7B"}, {"qwen3-4b", "Qwen/Qwen3-4B"},
        {"qwen3-8b", "Qwen/Qwen3-8B"}, {"qwen3-14b", "Qwen/Qwen3-14B"}, {"qwen3-32b", "Qwen/Qwen3-32B"},
        {"qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B"}, {"qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B"},
        {"deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite"}, {"deepseek-v3", "deepseek-ai/DeepSeek-V3"},
        {"gemma-2b", "google/gemma-2b"}, {"gemma-2-9b", "google/gemma-2-9b"}, {"gemma-3-1b", "google/gemma-3-1b-pt"},
        {"olmo-2-7b", "allenai/OLMo-2-1124-7B"}, {"phi-3.5-mini", "microsoft/Phi-3.5-mini-instruct"},
        {"phi-4-mini", "microsoft/Phi-4-mini-instruct"}, {"gemma-3-4b", "google/gemma-3-4b-pt"},
        {"gemma-3-12b", "google/gemma-3-12b-pt"}, {"gemma-3-27b", "google/gemma-3-27b-pt"},
        {"llama-4-scout-17b-16e", "meta-llama/Llama-4-Scout-17B-16E"},
        {"llama-4-maverick-17b-128e", "meta-llama/Llama-4-Maverick-17B-128E"},
        {"gpt-oss-20b", "openai/gpt-oss-20b"}, {"gpt-oss-120b", "openai/gpt-oss-120b"},
    };
    for (const auto& [n, r] : repos)
        if (n == preset_name) return r;
    return {};
}

/// The preset called `name`; the error lists the known names.
inline const transformer_spec& preset(std::string_view name) {
    for (const auto& p : model_presets())
        if (p.spec.name == name) return p.spec;
    std::vector<std::string> names;
    for (const auto& p : model_presets()) names.push_back(p.spec.name);
    throw config_error("model.preset=\"" + std::string(name) + "\" is not a known preset" +
                       frenzy::did_you_mean({name, detail::preset_spellings(name).first, detail::preset_spellings(name).second}, names) + "; `frenzy models` lists them");
}

}  // namespace frenzy
