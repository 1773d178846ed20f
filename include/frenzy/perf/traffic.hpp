#pragma once
// What one step moves, by kernel class and path, per token or per micro-batch on one GPU: the element-wise HBM
// traffic of a layer (norms, residuals, rotary, activations, fp8/fp4 casts, the logits' cross-entropy), unfused
// attention's score traffic, QLoRA's dequantisation, the optimizer pass, and the host copies and CPU optimizer of
// offload. perf/step_time.hpp turns them into time (perf/efficiency.hpp: element-wise bytes at the fitted
// bandwidth efficiency, streamed bytes at streaming_bandwidth_fraction; host copies at host_copy_efficiency).
#include <cstdint>
#include <utility>

#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/framework_profile.hpp"
#include "frenzy/memory/methods.hpp"
#include "frenzy/memory/model_states.hpp"
#include "frenzy/model/transformer.hpp"
#include "frenzy/perf/stage_load.hpp"
#include "frenzy/train/fp8_recipe.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy::detail {

/// Optimizer-step bytes per parameter (weights + gradients + optimizer states), each read and written once.
inline double optimizer_pass_bytes(precision p, optimizer_kind o) {
    const bool pure = p == precision::bf16 || p == precision::fp32;
    const double w = param_bytes(p);
    const double master = pure ? 0.0 : 4.0;          // fp32 master copy of mixed precision
    const double state_elem = p == precision::bf16 ? 2.0 : 4.0;
    double states = 0;
    switch (o) {
        case optimizer_kind::adam:
        case optimizer_kind::adamw: states = 2 * state_elem; break;     // m and v
        case optimizer_kind::sgd: states = state_elem; break;            // momentum
        case optimizer_kind::adafactor: states = 0.1 * state_elem; break; // factored second moment (small)
        case optimizer_kind::adamw_8bit: states = 2 * (1.0 + 4.0 / 256); break;  // memory/methods.hpp adam8bit_state_bytes
    }
    const double grad = pure ? w : 4.0;  // mixed precision accumulates fp32 main gradients (Megatron)
    return 2.0 * (w + master + states + grad);
}

/// HBM bytes of the element-wise kernels of one transformer layer per token on one GPU, forward only (backward
/// reads the saved inputs and the output gradient and writes the input gradient: 2 x forward). Counted per
/// kernel as elements read + written, 2 bytes each (Megatron-LM megatron/core/transformer/transformer_layer.py
/// order): 2 norms (h in, h out), 2 residual adds (2h in, h out), rotary on q and k (in + out), the MLP activation
/// (f in, f out; gated: 2f in). Norm and residual tensors are sharded by tp only under sequence parallelism;
/// q/k/v and the MLP hidden always. torch.compile fuses each chain of element-wise ops into one kernel that
/// reads its inputs and writes its outputs once: counted as half the traffic (assumption, no shipped data).
inline double layer_elementwise_bytes(const transformer_spec& m, const parallel_config& p, double ffn, bool compiled) {
    const double h = static_cast<double>(m.hidden), tp = static_cast<double>(p.tp);
    const double q = static_cast<double>(m.heads * m.hdim()), kv = static_cast<double>(m.kv() * m.hdim());
    const double hs = p.sequence_parallel ? h / tp : h;
    const double act = (is_gated(m.activation) ? 3.0 : 2.0) * ffn;
    const double elems = 4.0 * hs + 6.0 * hs + (2.0 * (q + kv) + act) / tp;
    return 2.0 * elems * (compiled ? 0.5 : 1.0);
}
/// Extra HBM bytes per token of the fp8/fp4 casts of one layer, given the bytes per element of one cast of a norm's
/// output (`norm_fed`: the inputs of QKV and fc1) and of any other GEMM operand (`other`) (train/fp8_recipe.hpp
/// fp8_cast_bytes). Forward: the inputs of QKV (h), output projection (q), fc1 (h) and fc2 (f); backward: the
/// output gradients of QKV (q + 2kv), projection (h), fc1 (f, gated 2f) and fc2 (h). Transformer Engine's
/// LayerNormLinear quantizes QKV's and fc1's inputs in the norm kernel (Megatron-Core's TE layer spec builds both
/// as TELayerNormColumnParallelLinear); the MLP activation is Megatron's own bf16 kernel
/// (megatron/core/transformer/mlp.py), so fc2's input and fc1's output gradient keep their casts, as do the
/// projection's input and the backward output gradients.
inline std::pair<double, double> layer_cast_bytes(const transformer_spec& m, const parallel_config& p, double ffn,
                                                  double norm_fed, double other) {
    const double h = static_cast<double>(m.hidden), tp = static_cast<double>(p.tp);
    const double q = static_cast<double>(m.heads * m.hdim()), kv = static_cast<double>(m.kv() * m.hdim());
    const double hs = p.sequence_parallel ? h / tp : h;
    const double fwd = norm_fed * 2.0 * hs + other * (q + ffn) / tp;
    const double bwd = other * (2.0 * hs + (q + 2.0 * kv + ffn * (is_gated(m.activation) ? 2.0 : 1.0)) / tp);
    return {fwd, bwd};
}
/// Bytes per element of the job's casts on a GPU of compute capability `cc` x 10, {norm_fed, other} as
/// layer_cast_bytes takes them: fp8 by its recipe (train/fp8_recipe.hpp); fp4 as a per-tensor cast on Hopper
/// (bf16 read, data and transpose written: 4 bytes; no NVFP4 block-scale model), the norm's under Transformer Engine
/// free.
inline std::pair<double, double> cast_bytes_per_element(const job_spec& j, int cc) {
    const bool te = profile_of(j).fp8 == fp8_style::transformer_engine;
    if (j.training.precision != precision::fp8_mixed) return {te ? 0.0 : 4.0, 4.0};
    const fp8_recipe r = fp8_recipe_of(j);
    return {fp8_cast_bytes(r, cc, te, true), fp8_cast_bytes(r, cc, te, false)};
}
/// HBM bytes per token of unfused attention's score tensors in one layer on one GPU, forward and backward (the
/// a/tp x s scores of a token, 16-bit; Megatron-Core's and Transformer Engine's unfused attention,
/// megatron/core/transformer/dot_product_attention.py: baddbmm writes the scores, FusedScaleMaskSoftmax reads them
/// and writes the probabilities, attention dropout reads those and writes its output and a byte mask; backward the
/// bmm writes the probability gradient, dropout's backward reads it with the mask and writes its input gradient,
/// the softmax backward reads the probabilities and that gradient and writes the score gradient). Causal masking
/// saves nothing: the whole s x s block is computed. The bmm operands are read by the GEMMs (counted as FLOPs).
inline std::pair<double, double> unfused_score_bytes(const transformer_spec& m, const parallel_config& p,
                                                     std::int64_t seq_len, bool dropout) {
    const double scores = static_cast<double>(m.heads) * static_cast<double>(seq_len) / static_cast<double>(p.tp);
    const double e = 2.0;
    const double fwd = 3.0 * e + (dropout ? 2.0 * e + 1.0 : 0.0);
    const double bwd = 4.0 * e + (dropout ? 2.0 * e + 1.0 : 0.0);
    return {scores * fwd, scores * bwd};
}
/// Unfused attention's score traffic per token on the stage, forward, recompute and backward (streamed:
/// perf/efficiency.hpp); `full_rec` is the share of the stage's layers fully recomputed, `extra_forwards` the
/// forwards without backward (reference_forwards).
inline double unfused_stream_bytes(const job_spec& j, const stage_load& stage, double full_rec, double extra_forwards = 0) {
    const auto& rt = j.runtime;
    const auto [sf, sbw] = unfused_score_bytes(j.model, j.parallel, j.training.seq_len, rt.dropout.value_or(rt.framework->memory.dropout));
    const double rec = j.parallel.recompute == recompute::selective ? 1.0 : full_rec;
    return stage.layers * ((1.0 + rec + extra_forwards) * sf + sbw);
}
/// Cross-entropy over the (vocabulary-parallel) logits per token: Megatron's vocab_parallel_cross_entropy casts
/// to fp32 and passes over them for max, exp-sum and the gradient (about 4 fp32 reads/writes per logit).
inline double logits_elementwise_bytes(const transformer_spec& m, const parallel_config& p) {
    return 4.0 * 4.0 * static_cast<double>(m.vocab) / static_cast<double>(p.tp);
}
/// Share of a host link's bandwidth that copies of large pinned buffers reach (an assumption: cudaMemcpyAsync over
/// PCIe x16 reaches ~80% of the link rate).
inline constexpr double host_copy_efficiency = 0.8;
inline double host_copy_seconds(const gpu_type& g, double bytes) {
    return bytes / (host_copy_efficiency * g.host_link_GBps() * 1e9);
}
/// Host DRAM bandwidth one GPU's CPU optimizer gets, GB/s: a Grace CPU's LPDDR5X (512 GB/s, NVIDIA Grace datasheet)
/// shared by its GPUs (GH200 one, GB200/GB300 two); an x86 host of two sockets with 8 DDR channels each, DDR5-4800
/// (614.4 GB/s, DGX H100's Xeon 8480C) for sm90 and later, DDR4-3200 (409.6 GB/s, DGX A100's EPYC 7742) before,
/// shared by the node's 8 GPUs; 70% of it reached (assumption: STREAM-like triad rates of such hosts).
inline double host_memory_GBps_per_gpu(const gpu_type& g) {
    const double node = g.grace_host() ? (g.name.rfind("gh2", 0) == 0 ? 512.0 : 256.0)
                                       : (g.compute_capability() >= 90 ? 614.4 : 409.6) / 8.0;
    return 0.7 * node;
}
/// DeepSpeed's CPU Adam (csrc/adam/cpu_adam_impl.cpp, vectorised) is bound by host DRAM: per parameter it reads the
/// fp32 parameter, gradient and both moments (16 B), writes the parameter and moments (12 B) and the 16-bit copy
/// that goes back to the GPU (2 B).
inline constexpr double cpu_adam_bytes_per_param = 30;
/// The optimizer step offloaded to the host (ZeRO-Offload, Megatron --optimizer-cpu-offload, FSDP CPUOffload) for
/// `params` parameters of one GPU: gradients down, the CPU Adam pass, 16-bit parameters up, one after the other
/// (the frameworks' bucketed or per-group overlap of the copies is not modelled: an upper bound).
inline double offloaded_optimizer_seconds(const job_spec& j, const gpu_type& g, double params) {
    const double grad = bytes_per_param(j, profile_of(j)).gradients;
    return host_copy_seconds(g, params * grad) + params * cpu_adam_bytes_per_param / (host_memory_GBps_per_gpu(g) * 1e9) +
           host_copy_seconds(g, params * param_bytes(j.training.precision));
}
/// HBM bytes per token of the element-wise kernels of the stage's layers on one GPU: forward, backward (2x), full
/// recompute (one more forward); the fp8/fp4 casts on a GPU of compute capability `cc` x 10; the logits' cross-entropy on the last stage.
inline double stage_elementwise_bytes(const job_spec& j, const stage_load& stage, double full_rec, int cc) {
    const auto& m = j.model;
    const auto& p = j.parallel;
    const bool compiled = j.runtime.compile;
    const double dense_l = stage.dense_layers(), moe_l = stage.moe_layers;
    const double moe_ffn = static_cast<double>(m.is_moe() ? m.expert_ffn() * (m.moe.top_k + m.moe.shared_experts) : 0);
    const double dense_ffn = static_cast<double>(m.ffn_hidden);
    double per_tok = (3.0 + full_rec) * (dense_l * layer_elementwise_bytes(m, p, dense_ffn, compiled) +
                                         moe_l * layer_elementwise_bytes(m, p, moe_ffn, compiled));
    if (gpu_type::scaled_gemms(j.training.precision)) {
        const auto [norm_fed, other] = cast_bytes_per_element(j, cc);
        const auto [cf, cb] = layer_cast_bytes(m, p, dense_ffn, norm_fed, other);
        const auto [mf, mbw] = layer_cast_bytes(m, p, moe_ffn, norm_fed, other);
        per_tok += dense_l * ((1.0 + full_rec) * cf + cb) + moe_l * ((1.0 + full_rec) * mf + mbw);
    }
    if (stage.logits) per_tok += logits_elementwise_bytes(m, p);
    return per_tok;
}
/// Mean bytes per parameter that one GEMM pass of a micro-batch moves besides its activations (perf/efficiency.hpp's
/// weight-traffic term): the forward GEMM, its recomputation and the input-gradient GEMM read the weight in the
/// GEMM precision (Transformer Engine keeps the fp8 copy of a weight across a step's micro-batches; fp4's scales are
/// not counted); the weight-gradient GEMM reads and writes the gradient accumulator, fp32 under mixed precision
/// (Megatron-LM's gradient_accumulation_fusion accumulates into main_grad in the GEMM's epilogue,
/// megatron/core/tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication; autograd frameworks
/// write the 16-bit gradient and add it to the accumulated one, about as many bytes), bf16 in pure bf16. `full_rec` is the share of layers
/// recomputed; frozen weights (adapters) have no weight-gradient pass.
inline double gemm_weight_bytes(const training_spec& t, double full_rec) {
    const precision p = t.precision;
    const double weight = p == precision::fp8_mixed ? 1.0 : p == precision::fp4_mixed ? 0.5 : param_bytes(p);
    const double accumulator = 2.0 * (p == precision::bf16 ? 2.0 : 4.0);  // pure bf16 keeps bf16 gradients
    const double wgrad = t.finetune.adapters() ? 0.0 : 1.0;
    return ((2.0 + full_rec) * weight + wgrad * accumulator) / (2.0 + full_rec + wgrad);
}
/// GEMM passes of backward per forward pass: the input gradient and the weight gradient, or the input gradient
/// alone when the base weights are frozen under adapters (LoRA/QLoRA: autograd computes no weight gradient for a
/// weight without requires_grad; bitsandbytes bitsandbytes/autograd/_functions.py@95f9af3 MatMul4Bit.backward
/// computes grad_A only). The adapters' own GEMMs, 2 r (in + out) FLOPs per token and target linear (< 1% of the
/// base's at r = 16 on 4k-wide layers), are not counted.
inline double backward_gemm_passes(const training_spec& t) { return t.finetune.adapters() ? 1.0 : 2.0; }
/// Sequences a micro-batch sample runs: 2 under DPO, each pair's chosen and rejected stacked into one forward
/// (huggingface/trl@f2cd5771 trl/trainer/dpo_trainer.py DataCollatorForPreference.torch_call, _compute_loss's one
/// model(**model_kwargs) call; memory/preference.hpp dpo_pair_job), else 1.
inline double sequences_per_sample(const training_spec& t) { return t.finetune.dpo() ? 2.0 : 1.0; }
/// Forward passes without backward a micro-batch adds: DPO's reference forward of the same pair batch under
/// torch.no_grad() and with checkpointing off (dpo_trainer.py _compute_loss and compute_ref_log_probs:
/// disable_gradient_checkpointing; the reference copy, or the base with the adapters disabled, use_adapter), none
/// when the reference log-probs are precomputed (one such forward over the dataset before training, outside the step).
inline double reference_forwards(const training_spec& t) {
    return t.finetune.dpo() && !t.finetune.precompute_ref_log_probs ? 1.0 : 0.0;
}
/// QLoRA: HBM bytes per micro-batch of dequantising the stage's frozen NF4 linear weights on one GPU. bitsandbytes
/// dequantises a 4-bit weight to 16 bits before each GEMM that reads it (bitsandbytes/autograd/_functions.py
/// @95f9af3 MatMul4Bit: forward linear(A, dequantize_4bit(B)), backward matmul(grad_output, dequantize_4bit(B))):
/// forward, backward and a recomputed forward, each reading the NF4 data with its constants and writing the
/// 16-bit weight (streamed: perf/efficiency.hpp); the NF4 weights are memory/methods.hpp's (stage_load::nf4_params).
inline double qlora_dequant_bytes(const job_spec& j, const stage_load& stage, double full_rec) {
    const auto& ft = j.training.finetune;
    if (ft.method != finetune_method::qlora) return 0.0;
    return (2.0 + full_rec) * stage.nf4_params * (nf4_bytes_per_param(ft.double_quant) + 2.0);
}
}  // namespace frenzy::detail
