#pragma once
// Activation memory: the tensors each layer saves for backward, per micro-batch, times the micro-batches in
// flight on a pipeline stage, plus the loss on the last stage.
// Per-layer terms follow Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer
// Models", sec. 4.1, eq. 1-2: sbh(34 + 5as/h) per layer, sbh(10 + 24/t + 5as/(ht)) with tensor parallelism,
// 34sbh/t with sequence parallelism and selective recompute), generalised to GQA, gated MLPs, flash attention,
// context parallelism, dropout on/off and MoE token routing.
#include <algorithm>
#include <cmath>
#include <array>
#include <bit>
#include <cstdint>
#include <concepts>
#include <utility>

#include "frenzy/core/units.hpp"
#include "frenzy/memory/framework_profile.hpp"
#include "frenzy/memory/layout.hpp"
#include "frenzy/memory/model_states.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// Activation bytes of one stage's GPU at its peak.
struct activation_bytes {
    bytes stored{};           ///< saved tensors of all in-flight micro-batches
    bytes transient{};        ///< largest short-lived working set on top of them (loss, recompute of one layer)
    double in_flight = 0;     ///< micro-batches whose activations are stored at the peak
    /// Pinned host memory holding the offloaded saved tensors of this GPU (Unsloth's offloaded checkpoints,
    /// runtime.offload.activations); not in the GPU's peaks.
    bytes host{};
    bool operator==(const activation_bytes&) const = default;
};

/// Forward passes whose saved activations a pipeline rank holds at its peak, counted per model chunk.
struct pipeline_in_flight {
    double chunks = 1;       ///< live (micro-batch, chunk) forwards of any chunk: the rank's total
    double first_chunk = 1;  ///< of which, at most, of chunk 0 (rank 0: the embedding's chunk)
    double last_chunk = 1;   ///< of which, at most, of chunk vpp - 1 (last rank: the loss's chunk)
    /// The fewest of chunk 0 (rank 0) / chunk vpp - 1 (last rank) among the peak steps (those holding `chunks`):
    /// what the peak holds when that chunk is lighter than the others (it builds one layer fewer).
    double first_chunk_min = 1, last_chunk_min = 1;
};

/// Per-chunk in-flight counts of rank `stage`; every count is a closed form in (pp, vpp, m, rank), checked against
/// a step-by-step simulation of each schedule in tests/memory/pipeline_schedule_test.cpp.
/// 1F1B (Narayanan et al. 2021 sec. 2.2; Megatron-LM megatron/core/pipeline_parallel/schedules.py
///   forward_backward_pipelining_without_interleaving @d98e8a64): pp - s - 1 warm-up forwards, then one forward
///   before each backward: min(pp - s, m) live.
/// Interleaved (schedules.py get_pp_rank_microbatches / get_schedule_table @d98e8a64): W = (pp - s - 1) x 2 +
///   (vpp - 1) x g warm-up chunk forwards (g = microbatch_group_size_per_vp_stage = pp), then each 1F1B step adds
///   one chunk forward before one chunk backward, so min(W + 1, m x vpp) chunk forwards are live. Forwards run
///   the table "g micro-batches of chunk 0, g of chunk 1, ..." and backwards the same table with the chunk order
///   reversed, so the loss's chunk (vpp - 1) is backpropagated right after its forward: the last rank holds the
///   loss of min(g, W + 1 - (vpp - 1) g) = 1 micro-batch, not vpp-fold more; chunk 0 of rank 0 peaks at
///   min(m, 2g) (it keeps receiving forwards while the reversed backward order drains the last chunks first).
///   When W + 1 >= m x vpp every forward runs before any backward: m of each chunk.
/// GPipe: every micro-batch's forward runs before any backward: m.
inline pipeline_in_flight pipeline_in_flight_counts(const job_spec& j, int stage) {
    const auto& p = j.parallel;
    const auto m = j.micro_batches();
    pipeline_in_flight r;
    if (p.pp == 1) return r;
    switch (p.schedule) {
        case pipeline_schedule::gpipe:
            r.chunks = r.first_chunk = r.last_chunk = r.first_chunk_min = r.last_chunk_min = static_cast<double>(m);
            return r;
        case pipeline_schedule::one_f_one_b:
            r.chunks = r.first_chunk = r.last_chunk = r.first_chunk_min = r.last_chunk_min =
                static_cast<double>(std::min<std::int64_t>(p.pp - stage, m));
            return r;
        case pipeline_schedule::interleaved: {
            const auto g = p.pp;
            const auto total = m * p.vpp;
            const auto warmup = (p.pp - stage - 1) * 2 + (p.vpp - 1) * g;
            if (warmup + 1 >= total) {
                r.chunks = static_cast<double>(total);
                r.first_chunk = r.last_chunk = r.first_chunk_min = r.last_chunk_min = static_cast<double>(m);
                return r;
            }
            r.chunks = static_cast<double>(warmup + 1);
            // Exact on the rank where each is used (last rank / rank 0); checked by the simulation.
            r.last_chunk = static_cast<double>(std::min<std::int64_t>(g, warmup + 1 - (p.vpp - 1) * g));
            // Between a loss forward's backward and the next loss forward, which takes more than g 1F1B steps.
            r.last_chunk_min = total - warmup > g ? 0.0 : r.last_chunk;
            r.first_chunk = static_cast<double>(std::min<std::int64_t>(m, 2 * g));
            r.first_chunk_min = static_cast<double>(std::min<std::int64_t>(m, 2 * g - 1));
            return r;
        }
    }
    return r;
}

/// Micro-batches whose activations a stage holds at its peak, in whole-stage equivalents (live chunk forwards /
/// vpp).
inline double in_flight_micro_batches(const job_spec& j, int stage) {
    return pipeline_in_flight_counts(j, stage).chunks / static_cast<double>(j.parallel.vpp);
}

/// Saved-tensor bytes of one transformer layer for one micro-batch, by recompute mode.
struct layer_activation_bytes {
    double none = 0;       ///< everything saved (no recompute)
    double selective = 0;  ///< what selective recompute keeps (framework-specific, see selective_kind)
    double full = 0;       ///< full recompute: only the layer input
    double largest = 0;    ///< the largest single saved tensor (working-set estimate for its gradient)
    /// Full recompute: checkpointed inputs that stay on the GPU when the framework offloads the others (0 = all
    /// stay; framework_profile::offloaded_checkpoints).
    double resident_inputs = 0;
};

namespace detail {
inline double activation_element_bytes(precision p) { return p == precision::fp32 ? 4.0 : 2.0; }
}  // namespace detail

namespace detail {

/// What one layer's MLP block saves (beyond its norm's input and dropout mask), its largest saved tensor, and its
/// matmul outputs in execution order (for every-other-mm selective recompute; fixed storage, no allocation).
struct mlp_activation_bytes {
    double saved = 0, largest = 0;
    std::array<double, 3> mm_outputs{};
    std::size_t mms = 0;
};

/// Element and token sizes of one layer's activations on one GPU, shared by its blocks.
struct layer_shape {
    double e, sb, h, t, rep, col_in;
};

/// fc1 output(s) and the activation output, for `tokens` tokens of an MLP of width `ffn` (split over tp).
inline double mlp_saved(const transformer_spec& m, const layer_shape& d, double tokens, double ffn) {
    const double in = is_gated(m.activation) ? 2 * ffn : ffn;
    return d.e * tokens * in / d.t + d.e * tokens * ffn / d.t;
}

/// A dense MLP (Korthikanti eq. 1: 19sbh with f = 4h, GELU).
inline mlp_activation_bytes dense_mlp_activations(const transformer_spec& m, const layer_shape& d) {
    const double e = d.e, sb = d.sb, h = d.h, t = d.t, rep = d.rep;
    mlp_activation_bytes r;
    const double ffn = static_cast<double>(m.ffn_hidden);
    r.saved = d.col_in + mlp_saved(m, d, sb, ffn);
    r.largest = e * sb * ffn / t;
    if (is_gated(m.activation)) {
        r.mm_outputs = {e * sb * ffn / t, e * sb * ffn / t, e * sb * h * rep};
        r.mms = 3;
    } else {
        r.mm_outputs = {e * sb * ffn / t, e * sb * h * rep, 0.0};
        r.mms = 2;
    }
    return r;
}

/// Tokens one GPU's local experts receive per micro-batch: balanced routing scaled by the routing imbalance, which
/// an expert capacity caps or, padded to capacity, replaces (moe_spec::expert_load).
inline double expert_tokens(const job_spec& j, const framework_profile& f, const layer_shape& d) {
    return d.sb * static_cast<double>(j.model.moe.top_k) *
           std::min(1.0, d.rep * static_cast<double>(j.parallel.expert_tp())) * j.model.moe.expert_load(f.moe_imbalance);
}

/// A Megatron-Core MoE layer (megatron/core/transformer/moe/{moe_layer,router,token_dispatcher,experts}.py
/// @d98e8a64). The router's linear saves the normed input (col_in) and keeps fp32 logits/probs for top-k and the
/// load-balancing loss. Both dispatchers hand each GPU the tokens routed to its local experts from the ep x etp GPUs
/// it exchanges with: alltoall over ep then all-gather over etp; allgather over etp x ep then a local permute. With
/// sequence parallelism a GPU starts from s*b/tp tokens, so it receives T = s*b/tp x etp x top_k tokens on average.
/// The gathered tokens go through the global memory buffer and the index_select permute saves only indices. The
/// experts (SequentialMLP / TEGroupedMLP) save their input (T x h), fc1's output, the activation output and its
/// product with the routing probabilities (fc2's input): one T x ffn/etp tensor more than a dense MLP. Load
/// imbalance: the measured peak is the worst iteration's; dropless routing does not cap tokens_per_expert, so the
/// received count is scaled by moe_imbalance, capped by model.moe.capacity_factor when one is set.
inline mlp_activation_bytes moe_mlp_activations(const job_spec& j, const framework_profile& f, const layer_shape& d) {
    const auto& m = j.model;
    const double e = d.e, h = d.h;
    mlp_activation_bytes r;
    const double ffn = static_cast<double>(m.expert_ffn());
    const double et = static_cast<double>(j.parallel.expert_tp());
    const double tokens = expert_tokens(j, f, d);
    const double router = 8.0 * d.sb * static_cast<double>(m.moe.experts) * d.rep;  // fp32 scores and probs
    const double permuted_in = e * tokens * h;                                      // dispatched expert inputs
    const double fc1_out = e * tokens * (is_gated(m.activation) ? 2 * ffn : ffn) / et;
    const double act_out = e * tokens * ffn / et;
    r.saved = d.col_in + router + permuted_in + fc1_out + 2 * act_out;
    if (m.moe.shared_experts > 0) r.saved += mlp_saved(m, d, d.sb * d.rep, ffn * static_cast<double>(m.moe.shared_experts));
    r.largest = e * tokens * ffn / et;
    r.mm_outputs = {fc1_out, e * tokens * h, 0.0};
    r.mms = 2;
    return r;
}

/// Eager PyTorch saves more around the elementwise ops than fused kernels do: RMSNorm keeps an fp32 copy of its
/// input and the normalised tensor besides its output (+4 bytes per element per norm over the fused input), SwiGLU
/// keeps silu's output besides its input and the product (torchtitan/torchtune models/llama). Eager rotary
/// embedding keeps fp32 copies of q and k where the stack does (framework_profile::rope_fp32_copies:
/// torchtune/torchtitan profiles, calibrated; not LitGPT's apply_rope).
inline double eager_elementwise_activations(const job_spec& j, const framework_profile& f, const layer_shape& d,
                                            bool moe, double q, double kv) {
    const auto& m = j.model;
    if (f.fused_elementwise) return 0;
    double eager = 0;
    if (m.norm == norm_kind::rmsnorm && f.rmsnorm_fp32_copy) eager += 2 * 4.0 * d.sb * d.h * d.rep;
    if (is_gated(m.activation)) {
        const double ffn = static_cast<double>(moe ? m.expert_ffn() : m.ffn_hidden);
        const double tokens = moe ? expert_tokens(j, f, d) : d.sb;
        eager += d.e * tokens * ffn / static_cast<double>(moe ? j.parallel.expert_tp() : j.parallel.tp);
    }
    if (f.rope_fp32_copies && m.position_embedding == position_embedding::rope) eager += 4.0 * d.sb * (q + kv) / d.t;
    return eager;
}

}  // namespace detail

namespace detail {
/// The sizes one layer's activation terms share for one micro-batch of `j` on a GPU.
inline layer_shape layer_shape_of(const job_spec& j, const framework_profile& f) {
    const auto& p = j.parallel;
    const double e = activation_element_bytes(j.training.precision);
    const double s = static_cast<double>(local_sequence(j));  // context parallelism splits the sequence
    const double b = static_cast<double>(j.training.micro_batch);
    const double h = static_cast<double>(j.model.hidden);
    const double t = static_cast<double>(p.tp);
    const double rep = p.sequence_parallel ? 1.0 / t : 1.0;  // tensors outside the tp region: replicated or split
    const double sb = s * b;
    // GEMM inputs of the column-parallel linears (QKV, fc1): the local shard under Megatron's sequence parallelism,
    // the all-gathered full sequence under DTensor's (framework_profile::saves_gathered_inputs), there in fp8 when
    // torchao float8 casts before the all-gather (torchao float8/float8_tensor_parallel.py PrepareFloat8ModuleInput /
    // Float8ColwiseParallel: hp_tensor_to_float8_dynamic, then redistribute; Float8Linear saves the fp8 input).
    const double gathered_e = j.training.precision == precision::fp8_mixed ? 1.0 : e;
    const double col_in = f.saves_gathered_inputs ? gathered_e * sb * h : e * sb * h * rep;
    return {e, sb, h, t, rep, col_in};
}
}  // namespace detail

/// One layer's saved tensors (bytes) for one micro-batch of `j` on a GPU; `moe` selects the MoE MLP.
inline layer_activation_bytes layer_activations(const job_spec& j, const framework_profile& f, bool moe) {
    const auto& m = j.model;
    const detail::layer_shape d = detail::layer_shape_of(j, f);
    const double e = d.e, sb = d.sb, h = d.h, t = d.t, rep = d.rep, col_in = d.col_in;
    const double a = static_cast<double>(m.heads);
    const double q = static_cast<double>(m.heads * m.hdim());
    const double kv = static_cast<double>(m.kv() * m.hdim());
    const double mask = f.dropout ? 1.0 : 0.0;  // dropout masks: one byte per element
    // flash-style and memory-efficient kernels keep O(s) state ("auto" unresolved: the flash-capable default)
    const bool flash = j.runtime.attention != attention_impl::unfused;
    const double s_full = static_cast<double>(j.training.seq_len);

    // Attention block (Korthikanti eq. 1: 11sbh + 5as^2b with t = 1, MHA).
    const double ln1_in = e * sb * h * rep;
    const double qkv_in = col_in;
    const double q_out = e * sb * q / t;
    const double k_out = e * sb * kv / t;
    const double v_out = e * sb * kv / t;
    const double attn_out = e * sb * q / t;  // input of the output projection
    // k and v repeated to the query heads are what the attention kernel saves (framework_profile::gqa_kv_repeat)
    const double kv_repeated = f.gqa_kv_repeat ? 2.0 * e * sb * std::max(0.0, q - kv) / t : 0.0;
    const double lse = flash ? 4.0 * a * sb / t : 0.0;  // flash attention's fp32 log-sum-exp
    // Unfused: softmax output (e), dropout mask (1) and dropout output (e) per score; scores are s x s_full with cp.
    const double scores = flash ? 0.0 : a * sb * s_full / t;
    const double core = scores * (e + (f.dropout ? 1.0 + e : 0.0));
    const double attn_mask = mask * sb * h * rep;

    // MLP block (Korthikanti eq. 1: 19sbh with f = 4h, GELU).
    const double ln2_in = e * sb * h * rep;
    const double mlp_mask = mask * sb * h * rep;
    const auto mlp_block = moe ? detail::moe_mlp_activations(j, f, d) : detail::dense_mlp_activations(m, d);
    const double mlp = mlp_block.saved, mlp_largest = mlp_block.largest;
    const auto& mlp_mm_outputs = mlp_block.mm_outputs;
    const std::size_t mlp_mms = mlp_block.mms;
    const double eager = detail::eager_elementwise_activations(j, f, d, moe, q, kv);

    layer_activation_bytes r;
    r.none = ln1_in + qkv_in + q_out + k_out + v_out + kv_repeated + core + lse + attn_out + attn_mask + ln2_in + mlp +
             mlp_mask + eager;
    r.full = e * sb * h * rep;  // the checkpointed layer input
    // Unsloth offloads every checkpointed input of more than 2 MiB (MINIMUM_SIZE, the whole b x s x h tensor) but the
    // last layer's, through two GPU staging buffers of one input each: 3 inputs' worth stay.
    if (f.offloaded_checkpoints && e * sb * h > 2.0 * MiB) r.resident_inputs = 3;
    r.largest = std::max({mlp_largest, scores * e, q_out});
    switch (f.selective) {
        case selective_kind::core_attention:  // recompute softmax, dropout and attention over V (Korthikanti sec. 5)
            r.selective = r.none - core;
            break;
        case selective_kind::every_other_mm: {
            // torchtitan apply_ac "op" policy: save outputs of mm #1, #3, ... within a block and of the attention
            // kernel (+ its log-sum-exp); recompute everything else from them and the block input.
            const std::array<double, 4> attn_mms{q_out, k_out, v_out, e * sb * h * rep};
            double saved = r.full + attn_out + lse + (flash ? 0.0 : scores * e);
            for (std::size_t i = 0; i < 4 + mlp_mms; i += 2) saved += i < 4 ? attn_mms[i] : mlp_mm_outputs[i - 4];
            r.selective = std::min(saved, r.none);
            break;
        }
    }
    return r;
}

/// Share of stage `l`'s layers that keep all their activations under full recompute (Megatron's block method leaves
/// the layers after the first recompute_layers of each chunk alone; full_recompute_of): 0 for uniform. `c` is
/// full_recompute_of(j, l).
inline double full_recompute_kept_share(const job_spec& j, const stage_layout& l, const full_recompute_counts& c) {
    if (j.parallel.recompute != recompute::full || l.layers <= 0) return 0.0;
    return 1.0 - c.checkpointed / static_cast<double>(l.layers);
}
inline double full_recompute_kept_share(const job_spec& j, const stage_layout& l) {
    return full_recompute_kept_share(j, l, full_recompute_of(j, l));
}

namespace detail {
/// Pinned host bytes of Unsloth's offloaded checkpoints on one GPU holding `inputs` checkpointed layer inputs
/// (unslothai/unsloth-zoo@ce232d6c unsloth_zoo/gradient_checkpointing.py): initialisation pins 200 buffers of
/// 128 Ki 16-bit elements (256 KiB); the first pass offloads every layer's input (FIRST_PASS, before LAST_GC_INDEX is
/// known), growing one buffer per layer to the input (torch.empty / resize_ with pin_memory=True), which later passes
/// reuse. PyTorch's caching host allocator rounds each block up to a power of two and keeps the replaced 256 KiB
/// blocks cached (aten/src/ATen/core/CachingHostAllocator.h). 0 unless the framework offloads (full recompute).
inline double offloaded_checkpoint_host_bytes(const job_spec& j, const framework_profile& f, const layer_activation_bytes& x,
                                              double inputs) {
    if (!f.offloaded_checkpoints || j.parallel.recompute != recompute::full) return 0.0;
    const double initial = 200.0 * 256.0 * KiB;
    if (!(x.resident_inputs > 0)) return initial;  // inputs of 2 MiB or less stay on the GPU (MINIMUM_SIZE)
    return initial + inputs * std::exp2(std::ceil(std::log2(x.full)));
}
}  // namespace detail

/// Saved bytes per layer of stage `l` for one micro-batch under the job's recompute mode, averaged over the stage's
/// layers: full recompute keeps one input per recompute unit and everything of the layers it leaves alone. `c` is
/// full_recompute_of(j, l).
inline double saved_per_layer(const job_spec& j, const stage_layout& l, const layer_activation_bytes& x,
                              const full_recompute_counts& c) {
    switch (j.parallel.recompute) {
        case recompute::none: return x.none;
        case recompute::selective: return x.selective;
        case recompute::full: {
            const double layers = static_cast<double>(std::max<std::int64_t>(1, l.layers));
            const double inputs = x.resident_inputs > 0 ? std::min(c.inputs, x.resident_inputs) : c.inputs;
            return full_recompute_kept_share(j, l, c) * x.none + inputs / layers * x.full;
        }
    }
    return x.none;
}
inline double saved_per_layer(const job_spec& j, const stage_layout& l, const layer_activation_bytes& x) {
    return saved_per_layer(j, l, x, full_recompute_of(j, l));
}

namespace detail {
/// Whether the LM head's weight gets a gradient: not under adapters (unless PEFT's modules_to_save copies it), nor
/// when tied to an embedding frozen with the leading layers.
inline bool lm_head_trained(const job_spec& j) {
    const auto& ft = j.training.finetune;
    if (ft.adapters()) return (ft.modules_to_save & save_lm_head) != 0;
    return !(ft.frozen_layers > 0 && j.model.tied_embeddings);
}

/// Bytes per logit element the loss keeps for backward (`saved`) and holds briefly on top of them (`transient`), by
/// implementation; `chunks` = runtime.loss_chunks (torchtune CEWithChunkedOutputLoss upcasts chunk by chunk).
struct loss_bytes {
    double saved = 0, transient = 0;
};
inline loss_bytes loss_bytes_per_logit(loss_style style, double chunks) {
    switch (style) {
        // Megatron tensor_parallel/cross_entropy.py: the fp32 softmax saved, the 16-bit logits beside it while the
        // fp32 copy is made.
        case loss_style::fused_vocab_parallel: return {4.0, 2.0};
        // logits.float() -> log_softmax: the fp32 log-softmax saved; in forward the 16-bit logits and the fp32 copy of
        // the chunk being upcast (2 + 4/n), in backward the fp32 gradients of one chunk's output and input (8/n).
        case loss_style::upcast_log_softmax: return {4.0, std::max(2.0 + 4.0 / chunks, 8.0 / chunks)};
        // DTensor loss_parallel: in backward the saved output, grad_out, exp(out) and their product (12 B beyond 4).
        case loss_style::dtensor_loss_parallel: return {4.0, 12.0 / chunks};
        // flash-attn xentropy: the 16-bit logits saved (the fp32 log-sum-exp per row is negligible), the 16-bit
        // gradient allocated in backward.
        case loss_style::fused_cross_entropy: return {2.0, 2.0};
        // no full logits: its bytes are not per logit (liger_loss_bytes, unsloth_loss_bytes)
        case loss_style::liger_fused_linear:
        case loss_style::unsloth_fused: return {0.0, 0.0};
    }
    return {4.0, 2.0};
}

/// Liger's fused linear cross-entropy (linkedin/Liger-Kernel@ead96b6 src/liger_kernel/ops/
/// fused_linear_cross_entropy.py, fused_linear_cross_entropy_forward), per micro-batch: `saved` beyond the head's
/// input (whose gradient, grad_input = zeros_like(_input), takes the place of the input the head would save) is
/// grad_weight = zeros_like(weight), V x H in the head weight's own dtype, computed in forward and saved for
/// backward where the head is trained (a frozen head: weight_needs_grad is false, no grad_weight); `transient` is
/// one chunk's logits, next_pow2(ceil(tokens / ceil(V / H))) rows x V in the matmul's 16-bit type, and, where the
/// head weight is not fp32 (pure 16-bit training), the chunk's V x H weight-gradient product and its fp32 copy
/// (`grad_weight += torch.mm(...).float()`; fp32 weights take torch.addmm(..., out_dtype=torch.float32,
/// out=grad_weight) in place on PyTorch >= 2.8 and compute capability 8.0+, which this assumes).
inline std::pair<double, double> liger_loss_bytes(const job_spec& j, const framework_profile& f, double tokens) {
    const double e = activation_element_bytes(j.training.precision);
    const double v = static_cast<double>(framework_vocab(j, f));
    const double h = static_cast<double>(j.model.hidden);
    const bool head_trained = lm_head_trained(j);
    const double weight_bytes = bytes_per_param(j, f).weights;
    const double inc_factor = std::ceil(v / h);
    const double chunk = std::bit_ceil(static_cast<std::uint64_t>(std::ceil(tokens / inc_factor)));
    double transient = chunk * v * e;
    if (head_trained && weight_bytes < 4.0) transient += v * h * (e + 4.0);
    return {head_trained ? v * h * weight_bytes : 0.0, transient};
}

/// Unsloth's fused cross-entropy (loss_style::unsloth_fused), per micro-batch: `saved` beyond the head's input
/// (grad_inputs takes its place) is grad_lm_head = zeros_like(weight) where the head is trained; `transient` is one
/// chunk's logits at the fp32 size get_chunk_size budgets for: n chunks, 1 or the multiple of 4 at or above
/// tokens x V x 4 B / target, target taken at its 4 GiB cap (the largest chunks: Unsloth takes half the free memory
/// when that is less; the compiled chunk step is assumed to hold no more than that budget, which the code does not
/// state), torch.chunk's chunks holding ceil(tokens / n) rows.
inline std::pair<double, double> unsloth_loss_bytes(const job_spec& j, const framework_profile& f, double tokens,
                                                    bool head_trained) {
    const double v = static_cast<double>(framework_vocab(j, f));
    const double h = static_cast<double>(j.model.hidden);
    const double exact = tokens * v * 4.0 / (4.0 * GiB);
    const double n = exact <= 1.0 ? 1.0 : 4.0 * std::ceil(exact / 4.0);
    const double chunk = std::ceil(tokens / n);
    return {head_trained ? v * h * bytes_per_param(j, f).weights : 0.0, chunk * v * 4.0};
}

/// What the last stage holds beyond its layers, per micro-batch: the final norm's input and output (the LM head's
/// input) and the loss's saved fp32 softmax / log-softmax over the vocabulary-parallel logits (Megatron
/// tensor_parallel/cross_entropy.py; torch.nn.functional.cross_entropy on logits.float()); and the loss's transient
/// bytes. Returns {stored extra, transient}.
inline std::pair<double, double> last_stage_activations(const job_spec& j, const framework_profile& f) {
    const auto& p = j.parallel;
    const double e = activation_element_bytes(j.training.precision);
    const double sb = local_tokens(j);
    const double h = static_cast<double>(j.model.hidden);
    const double rep = p.sequence_parallel ? 1.0 / static_cast<double>(p.tp) : 1.0;
    const double logits = sb * static_cast<double>(framework_vocab(j, f)) / static_cast<double>(p.tp);
    // The LM head's input: the local shard (Megatron) or, under DTensor sequence parallelism, the all-gathered
    // full sequence (torchtitan "output": ColwiseParallel(input_layouts=Shard(1)); never float8: its
    // convert_to_float8_training filter skips "output", torchtitan float8.py@9dec370).
    const double head_in = f.saves_gathered_inputs ? e * sb * h : e * sb * h * rep;
    // An eager final RMSNorm also keeps the fp32 copy of its input (framework_profile::eager_final_norm).
    const double final_norm_fp32 =
        f.eager_final_norm && f.rmsnorm_fp32_copy && j.model.norm == norm_kind::rmsnorm ? 4.0 * sb * h * rep : 0.0;
    if (f.loss == loss_style::liger_fused_linear || f.loss == loss_style::unsloth_fused) {  // data parallel only: tp = 1
        const auto [grad_weight, transient] = f.loss == loss_style::liger_fused_linear
                                                  ? liger_loss_bytes(j, f, sb)
                                                  : unsloth_loss_bytes(j, f, sb, lm_head_trained(j));
        return {e * sb * h * rep + final_norm_fp32 + head_in + grad_weight, transient};
    }
    // Chunks of f.loss_chunk_tokens tokens (LitGPT): ceil(seq_len / chunk) of them, or runtime.loss_chunks if more.
    const double chunks =
        f.loss_chunk_tokens > 0
            ? std::max<double>(static_cast<double>(j.runtime.loss_chunks),
                               std::ceil(static_cast<double>(j.training.seq_len) / static_cast<double>(f.loss_chunk_tokens)))
            : static_cast<double>(j.runtime.loss_chunks);
    const auto loss = loss_bytes_per_logit(f.loss, chunks);
    const double last_extra = e * sb * h * rep + final_norm_fp32 + head_in + loss.saved * logits;
    const double loss_transient = loss.transient * logits;
    return {last_extra, loss_transient};
}
}  // namespace detail

/// Policy: activations of one stage's GPU at the peak.
template <class T>
concept ActivationPolicy = requires(const T& p, const job_spec& j, const stage_layout& l, const framework_profile& f) {
    { p.activations(j, l, f) } -> std::same_as<activation_bytes>;
};

/// Default: Korthikanti-style per-layer terms x layers x in-flight micro-batches, embeddings on the first stage,
/// final norm and loss on the last.
struct transformer_activations {
    /// What activations() reads of the job alone, the same on every stage: one layer's saved bytes, dense and
    /// (`moe`: for stages with MoE layers) MoE. An estimate of many stages takes them once (basic_memory_estimator).
    struct job_terms {
        layer_activation_bytes dense{}, moe{};
    };
    job_terms terms_of(const job_spec& j, const framework_profile& f) const { return terms_of(j, f, j.model.is_moe()); }
    job_terms terms_of(const job_spec& j, const framework_profile& f, bool moe) const {
        job_terms t;
        t.dense = layer_activations(j, f, false);
        if (moe) t.moe = layer_activations(j, f, true);
        return t;
    }
    activation_bytes activations(const job_spec& j, const stage_layout& l, const framework_profile& f) const {
        return activations(j, l, f, terms_of(j, f, l.moe_layers > 0));
    }
    /// activations(j, l, f) with `t` = terms_of(j, f, moe), `moe` true where l has MoE layers.
    activation_bytes activations(const job_spec& j, const stage_layout& l, const framework_profile& f,
                                 const job_terms& t) const {
        const auto& p = j.parallel;
        const double sb = local_tokens(j);
        const double h = static_cast<double>(j.model.hidden);
        const double rep = p.sequence_parallel ? 1.0 / static_cast<double>(p.tp) : 1.0;
        // Each layer kind once per stage, and only the kinds the stage holds (an all-MoE stage computes no dense
        // layer): the per-layer terms are closed forms, so this is the stage's whole per-layer cost.
        const bool has_dense = l.layers > l.moe_layers || l.moe_layers == 0;
        const auto dense = has_dense ? t.dense : layer_activation_bytes{};
        const auto moe = l.moe_layers > 0 ? t.moe : dense;
        const auto recomputed = full_recompute_of(j, l);
        auto pick = [&](const layer_activation_bytes& x) { return saved_per_layer(j, l, x, recomputed); };
        const double dense_layers = static_cast<double>(l.layers - l.moe_layers);
        const double moe_layers = static_cast<double>(l.moe_layers);
        const double layers_per_mb = dense_layers * pick(dense) + moe_layers * pick(moe);  // all chunks of the stage
        double first_extra = 0;  // per micro-batch, in the embedding's chunk (the loss's: last_extra)
        if (l.first && f.dropout) first_extra += sb * h * rep;  // embedding dropout mask
        // Last stage: final norm input and output (the LM head's input), and the loss's saved fp32 softmax /
        // log-softmax over the vocabulary-parallel logits (detail::last_stage_activations).
        const auto [last_extra, loss_transient] = l.last ? detail::last_stage_activations(j, f) : std::pair<double, double>{0.0, 0.0};
        // Recomputing one unit in backward rebuilds what the mode dropped (a full-recompute unit: all of its layers
        // beyond the input kept); its gradients need a working set of about the largest saved tensor.
        const auto& big = moe_layers > 0 ? moe : dense;
        const double rebuilt = p.recompute == recompute::full
                                   ? std::max(1.0, recomputed.unit_layers) * big.none - big.full
                                   : big.none - pick(big);
        const double recompute_transient = rebuilt + big.largest;

        activation_bytes r;
        // Per-chunk accounting: a chunk holds 1/vpp of the stage's layers; the embedding extras live as often as
        // chunk 0's forwards, the loss extras as often as chunk vpp-1's (pipeline_in_flight_counts).
        // A chunk that builds one layer fewer (embedding/loss stage) weighs less or more than the others depending
        // on its extras; the peak step holds the most of it when heavier, the fewest when lighter.
        const auto live = pipeline_in_flight_counts(j, l.stage);
        const double vpp = static_cast<double>(p.vpp);
        r.in_flight = live.chunks / vpp;
        const double per_layer = l.layers > 0 ? layers_per_mb / static_cast<double>(l.layers) : 0.0;
        const bool light_first = l.first && p.embedding_stage && p.vpp > 1;
        const bool light_last = l.last && p.loss_stage && p.vpp > 1;
        double stored = layers_per_mb / vpp * live.chunks;
        if (light_first || light_last) {
            // Regular chunks hold chunk_slots layers, the special one chunk_slots - 1.
            const double w = static_cast<double>(l.chunk_slots);
            const double delta = light_first ? first_extra - per_layer : last_extra - per_layer;  // vs a regular chunk
            const double n = light_first ? (delta > 0 ? live.first_chunk : live.first_chunk_min)
                                         : (delta > 0 ? live.last_chunk : live.last_chunk_min);
            stored = per_layer * w * live.chunks + delta * n + (light_first ? 0.0 : first_extra * live.first_chunk) +
                     (light_last ? 0.0 : last_extra * live.last_chunk);
        } else {
            stored += first_extra * live.first_chunk + last_extra * live.last_chunk;
        }
        r.stored = bytes{stored};
        r.transient = bytes{std::max(loss_transient, recompute_transient)};
        r.host = bytes{detail::offloaded_checkpoint_host_bytes(j, f, dense, recomputed.inputs * r.in_flight)};
        return r;
    }
};
static_assert(ActivationPolicy<transformer_activations>);

}  // namespace frenzy
