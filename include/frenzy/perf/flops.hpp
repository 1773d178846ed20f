#pragma once
// Exact floating-point operation counts of one training step of a decoder-only transformer.
//
// Conventions (stated once, used everywhere in perf/):
//  - a matrix multiplication [m x k] x [k x n] costs 2 m k n FLOPs; element-wise work (norms, activations,
//    softmax, residuals, the optimizer) is not counted (it is memory-bound and modelled separately);
//  - attention scores count the full s x s matrix (QK^T and AV: 4 s x heads x head_dim per token and layer), no
//    causal halving: the convention of Megatron-LM (Narayanan et al. 2021 eq. 3) and of llm-foundry's MFU, so
//    that measured throughputs of both sources compare with this count directly;
//  - backward = 2 x forward (gradients w.r.t. inputs and weights, Narayanan et al. 2021 Sec. 5.1);
//  - recompute adds a forward of what is recomputed: full = every checkpointed transformer layer (not the logits;
//    all of them unless Megatron's block method checkpoints fewer), selective = the attention core only
//    (Korthikanti et al. 2022 Sec. 4.2).
#include <cstdint>

#include "frenzy/core/units.hpp"
#include "frenzy/model/transformer.hpp"
#include "frenzy/train/geometry.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// Forward FLOPs per token of the pieces of a model.
struct token_flops {
    double dense_layer = 0;      ///< one dense transformer layer, without the attention core
    double moe_layer = 0;        ///< one MoE layer (router + top_k routed + shared experts), without the core
    double attention_core = 0;   ///< QK^T and AV of one layer: 4 x s x heads x head_dim
    double logits = 0;           ///< output projection: 2 x hidden x vocab
    double dense_layers = 0;     ///< number of dense layers
    double moe_layers = 0;       ///< number of MoE layers

    /// All matrix multiplications of the layers except the attention core.
    double layers_dense() const { return dense_layers * dense_layer + moe_layers * moe_layer; }
    double layers_attention() const { return (dense_layers + moe_layers) * attention_core; }
    double forward() const { return layers_dense() + layers_attention() + logits; }
};

/// Per-token forward FLOPs at sequence length `seq_len` (2 x m x n x k per matmul; GQA: kv_heads x head_dim
/// columns for K and V; gated MLPs have three matrices; MoE counts top_k routed experts).
inline token_flops forward_flops_per_token(const transformer_spec& m, std::int64_t seq_len) {
    token_flops f;
    const double h = static_cast<double>(m.hidden);
    const double attn_proj = 2.0 * attention_weights(m);  // QKV (or MLA's low-rank pairs) + output projection
    auto mlp = [&](double ffn) { return 2.0 * h * ffn * (is_gated(m.activation) ? 3.0 : 2.0); };
    f.dense_layer = attn_proj + mlp(static_cast<double>(m.ffn_hidden));
    if (m.is_moe()) {
        const double e = mlp(static_cast<double>(m.expert_ffn()));
        f.moe_layer = attn_proj + 2.0 * h * static_cast<double>(m.moe.experts) +  // router
                      e * static_cast<double>(m.moe.top_k + m.moe.shared_experts);
    }
    // QK^T (2 s q) + AV (2 s v), full s^2 (see the conventions above); MLA: q = heads x (nope + rope), v = heads x
    // v_head_dim; sliding-window layers attend to min(window, s) keys (model/transformer.hpp mean_attention_span).
    f.attention_core = 2.0 * mean_attention_span(m, seq_len) *
                       static_cast<double>(m.q_width() + m.v_width());
    f.logits = 2.0 * h * static_cast<double>(m.vocab);
    f.moe_layers = static_cast<double>(m.moe_layers());
    f.dense_layers = static_cast<double>(m.layers) - f.moe_layers;
    return f;
}

/// FLOPs of one optimizer step, split by pass. `attention` is the part of the total in attention cores
/// (it runs at a different efficiency than the dense GEMMs).
struct flop_count {
    flops forward{}, backward{}, recompute{};
    flops attention{};  ///< attention-core FLOPs included in the three passes above

    flops total() const { return forward + backward + recompute; }
    /// Model FLOPs (no recompute): the numerator of MFU.
    flops model() const { return forward + backward; }
    bool operator==(const flop_count&) const = default;
};

/// FLOPs of `tokens` tokens at sequence length `seq_len` through the whole model with recompute `r`; with full
/// recompute, `full_share` of the layers are checkpointed (1: all).
inline flop_count training_flops(const transformer_spec& m, std::int64_t seq_len, double tokens, recompute r,
                                 double full_share = 1.0) {
    const auto f = forward_flops_per_token(m, seq_len);
    flop_count c;
    c.forward = flops{tokens * f.forward()};
    c.backward = flops{2.0 * tokens * f.forward()};  // backward = 2 x forward
    double rec = 0, rec_attn = 0;
    if (r == recompute::full) {
        rec = full_share * (f.layers_dense() + f.layers_attention());  // a second forward of the layers, not the logits
        rec_attn = full_share * f.layers_attention();
    } else if (r == recompute::selective) {
        rec = rec_attn = f.layers_attention();  // only the attention core (Korthikanti et al. 2022)
    }
    c.recompute = flops{tokens * rec};
    c.attention = flops{tokens * (3.0 * f.layers_attention() + rec_attn)};
    return c;
}

/// FLOPs of one optimizer step of the whole job (global_batch x seq_len tokens), all GPUs together. Under adapters
/// (LoRA/QLoRA) the frozen base weights get no weight gradient: backward is the input gradient of every GEMM (one
/// forward's worth) plus the attention core's 2x, as the step-time model counts it (perf/traffic.hpp
/// backward_gemm_passes; the adapters' own GEMMs, < 1% at r = 16, are not counted there nor here). MFU then
/// divides the FLOPs the method needs, not the 6N of full training (which put LoRA plans at 90% MFU). DPO counts
/// its pairs' two sequences and the reference model's forward, which MFU counts as work done.
inline flop_count step_flops(const job_spec& j) {
    double share = 1.0;
    if (j.parallel.recompute == recompute::full && !(j.parallel.recompute_method == recompute_method::uniform)) {
        double checkpointed = 0;  // every stage's layers are one slice of the model: sum what each recomputes
        for_each_stage(j, [&](const stage_layout& l) { checkpointed += full_recompute_of(j, l).checkpointed; });
        share = checkpointed / static_cast<double>(j.model.layers);
    }
    // DPO: the pairs' chosen and rejected sequences, 2 x global_batch x seq_len tokens through the policy, and the
    // reference's forward of them unless precomputed (trl/trainer/dpo_trainer.py _compute_loss; perf/traffic.hpp)
    const auto& ft = j.training.finetune;
    const double tokens = j.tokens_per_step() * (ft.dpo() ? 2.0 : 1.0);
    auto c = training_flops(j.model, j.training.seq_len, tokens, j.parallel.recompute, share);
    const auto f = forward_flops_per_token(j.model, j.training.seq_len);
    if (ft.adapters()) c.backward = flops{tokens * (f.forward() + f.layers_attention())};
    if (ft.dpo() && !ft.precompute_ref_log_probs) {
        c.forward = c.forward + flops{tokens * f.forward()};
        c.attention = c.attention + flops{tokens * f.layers_attention()};
    }
    return c;
}

/// Model FLOPs per token (forward + backward, no recompute): the "6N + attention" of MFU, counted exactly.
inline double model_flops_per_token(const transformer_spec& m, std::int64_t seq_len) {
    return 3.0 * forward_flops_per_token(m, seq_len).forward();
}

}  // namespace frenzy
