#pragma once
// Achievable fraction of peak per kernel class (GEMM, attention core, element-wise memory traffic) per chip, with
// GEMM-shape penalties, and the shipped defaults.
//
// Model (fitted in perf/calibration.hpp, see docs/perf-model.md), for the work of one micro-batch on one GPU:
//   seconds = gemm x (c_chip,prec + weight_traffic x weight_bytes x peak / (2 x tokens x memory_bandwidth)
//                     + width_penalty / width) / peak
//           + attention x c_attn,chip / peak_attn       (unfused attention: c_chip, its batched GEMMs)
//           + memory_bytes x memory_inverse / memory_bandwidth
// c_chip,prec is the inverse of the fraction of the GEMM peak that large GEMMs reach on that chip in that precision
// (fp8/fp4 GEMMs have their own, else c_chip x fp8_ratio); `tokens` are the rows of each GEMM (micro_batch x
// seq_len / cp), `width` the hidden size one tensor-parallel rank holds (hidden / tp). The weight-traffic term is
// the time to move each GEMM's weight-sized operand once per pass and micro-batch at the memory bandwidth: the
// weights the forward and input-gradient GEMMs read, the fp32 gradient accumulator the weight-gradient GEMM reads
// and writes (`weight_bytes` per parameter and pass, perf/traffic.hpp gemm_weight_bytes); it does not shrink with
// more tokens per micro-batch, so small micro-batches lose efficiency, the more so on chips whose peak outgrew
// their bandwidth. Fitted from scratch on the shipped rows, its multiplier comes out at 1.26: the byte count is the
// mechanism, not a fit (it replaced a fitted fixed time per GEMM row, whose share grew with the chip's peak and
// made Blackwell and fp8 GEMMs at 2-8k tokens 12-47% slower than Hopper bf16 ones; docs/perf-model.md).
// peak_attn is the bf16 peak for fp8/fp4 jobs (the attention core is not run in fp8; hw/gpu.hpp). memory_bytes are
// the element-wise kernels' HBM traffic (norms, residuals, activations, rotary, cross-entropy, fp8 casts with their
// amax; perf/step_time.hpp counts them), so that a faster GEMM precision does not speed them up.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/hw/gpu.hpp"

namespace frenzy {

/// Rows and columns of the GEMMs one GPU runs per micro-batch.
struct gemm_shape {
    double tokens = 0;  ///< micro_batch x seq_len / cp
    double width = 0;   ///< hidden / tp
    /// mean bytes per parameter that one GEMM pass moves besides its activations: weights read, or the gradient
    /// accumulator read and written (perf/traffic.hpp gemm_weight_bytes); 0 = none
    double weight_bytes = 0;
};

/// What one GPU computes for one micro-batch, by kernel class.
struct compute_work {
    double gemm_flops = 0;       ///< dense GEMMs (projections, MLP, logits), incl. recompute
    double attention_flops = 0;  ///< attention core (full s^2 count, perf/flops.hpp), incl. recompute
    double memory_bytes = 0;     ///< HBM traffic of the element-wise kernels
    double gemm_peak = 0;        ///< FLOP/s of the GEMM precision
    double attention_peak = 0;   ///< FLOP/s of the precision the attention core runs in
    bool scaled = false;         ///< GEMMs in fp8/fp4 with per-tensor scaling
    gemm_shape shape{};
    double expert_flops = 0;     ///< the part of gemm_flops in routed-expert GEMMs (MoE)
    double expert_tokens = 0;    ///< rows of each routed-expert GEMM: tokens x top_k x ep / experts
    bool te_attention = false;   ///< attention through Transformer Engine's fused (cuDNN) kernels (Megatron-Core)
    /// unfused attention: the core's FLOPs are batched GEMMs (baddbmm, bmm) at the chip's GEMM efficiency, its
    /// softmax traffic counted in memory_bytes (perf/step_time.hpp)
    bool unfused_attention = false;
    double stream_bytes = 0;     ///< HBM traffic of large streaming kernels (unfused attention's scores)
};

/// Seconds of one piece of work by kernel class (efficiency_model::by_kernel); total() is the compute time.
struct kernel_seconds {
    double gemm = 0;         ///< dense and grouped (expert) GEMMs, their weight traffic included
    double attention = 0;    ///< the attention core (flash, cuDNN, or unfused batched GEMMs)
    double elementwise = 0;  ///< norms, activations, residuals, casts, rotary: memory-bound kernels
    double streaming = 0;    ///< large streaming passes: unfused attention's scores, QLoRA's NF4 dequantisation
    double total() const { return gemm + attention + elementwise + streaming; }
    bool operator==(const kernel_seconds&) const = default;
};

/// Fraction of the datasheet memory bandwidth that kernels streaming tensors of millions of contiguous elements
/// reach (unfused attention's softmax and dropout over the s x s scores). An assumption, not a fit: the fitted
/// element-wise efficiency (memory_inverse, ~40%) describes the many short norm, residual and activation kernels
/// of a layer. On the shipped data the Megatron-LM 2020-2022 rows (the only unfused ones) are predicted within
/// -2..-7% median after a re-fit with it, and 6-9% too slow with the scores at the element-wise efficiency
/// (docs/perf-model.md).
inline constexpr double streaming_bandwidth_fraction = 0.9;

/// Inverse efficiencies of one chip (or one GPU type) and where they come from.
struct gpu_coefficient {
    std::string gpu;       ///< a chip family ("gh100") or a catalog type name; a type name wins over its chip
    double inverse = 2.0;  ///< 1 / (fraction of the bf16/fp16 dense peak reached by large GEMMs)
    double attention = 0;  ///< inverse efficiency of attention-core FLOPs; 0 = the shared value
    std::string source;    ///< "fit" or "alias of KEY: reason"
    double scaled = 0;     ///< inverse efficiency of fp8/fp4 GEMMs w.r.t. their peak; 0 = inverse x fp8_ratio
    /// inverse efficiency of attention through Transformer Engine's fused attention (cuDNN flash attention, what
    /// Megatron-Core runs); 0 = the same as `attention`
    double te_attention = 0;
    bool operator==(const gpu_coefficient&) const = default;
};

/// The calibrated coefficients of the compute-time model.
struct efficiency_model {
    std::vector<gpu_coefficient> gpus;
    double default_inverse = 2.0;    ///< chips with no data and no alias
    /// multiplier of the GEMMs' weight-sized traffic per pass (1 = each such operand moved once at the datasheet
    /// bandwidth); 0 = none
    double weight_traffic = 0;
    double width_penalty = 0;        ///< width at which narrow GEMMs add one unit of inverse efficiency
    double attention_inverse = 2.0;  ///< attention-core inverse efficiency of chips without their own (full s^2 count)
    double fp8_ratio = 1.0;          ///< scaled-GEMM inverse efficiency / bf16 inverse efficiency, chips without their own
    /// attention inverse efficiency / GEMM inverse efficiency for chips without their own attention value; 0 = use
    /// the absolute attention_inverse instead
    double attention_ratio = 0;
    /// Transformer Engine fused-attention inverse efficiency / GEMM inverse efficiency for chips without their own
    /// TE value (cuDNN's flash attention runs on every sm80+ chip); 0 = their ordinary attention value
    double te_attention_ratio = 0;
    double memory_inverse = 1.0;     ///< 1 / (fraction of HBM bandwidth the element-wise kernels reach)
    /// FLOP/s (full s^2 count) that the portable attention kernels reach on every chip: PyTorch SDPA's flash
    /// (FlashAttention-2) and memory-efficient kernels are sm80 mma.sync code that runs neither Hopper's wgmma nor
    /// Blackwell's tcgen05, so their rate does not follow newer datasheet peaks. Caps non-TE attention on chips
    /// without their own fitted attention value; 0 = no cap (default_efficiency sets it)
    double portable_attention_flops = 0;
    std::string source;              ///< what the coefficients were fitted on

    /// The entry of a key (chip or type name), or null.
    const gpu_coefficient* entry(std::string_view key) const {
        for (const auto& c : gpus)
            if (c.gpu == key) return &c;
        return nullptr;
    }
    /// The entry that applies to `g`: its type name's, else its chip's, else null.
    const gpu_coefficient* entry(const gpu_type& g) const {
        if (auto* e = entry(std::string_view(g.name))) return e;
        return g.chip.empty() ? nullptr : entry(std::string_view(g.chip));
    }
    double gpu_inverse(std::string_view key) const {
        auto* e = entry(key);
        return e ? e->inverse : default_inverse;
    }
    double gpu_attention_inverse(std::string_view key) const {
        auto* e = entry(key);
        if (e && e->attention > 0) return e->attention;
        return attention_ratio > 0 ? attention_ratio * (e ? e->inverse : default_inverse) : attention_inverse;
    }
    bool has(std::string_view key) const { return entry(key) != nullptr; }

    double inverse(const gpu_type& g) const { return inverse_of(entry(g)); }
    double scaled_inverse(const gpu_type& g) const { return scaled_inverse_of(entry(g)); }
    double attention_inverse_of(const gpu_type& g, bool te = false) const { return attention_inverse_of(entry(g), te); }
    /// Inverse efficiency of the dense GEMMs of the given shape on `g` (>= c_chip).
    double dense_inverse(const gpu_type& g, double peak, gemm_shape s, bool scaled = false) const {
        return dense_inverse(entry(g), peak, s, scaled, g.mem_bw_GBps * 1e9);
    }
    /// Seconds of each kernel class of `w` on `g`.
    kernel_seconds by_kernel(const compute_work& w, const gpu_type& g) const {
        if (!(w.gemm_peak > 0)) return {};
        return by_kernel(w, g, entry(g));
    }
    /// The same with `e` = entry(g) looked up before (a planner takes it once per GPU type: gpu_facts).
    kernel_seconds by_kernel(const compute_work& w, const gpu_type& g, const gpu_coefficient* e) const {
        if (!(w.gemm_peak > 0)) return {};
        const double bw = g.mem_bw_GBps * 1e9;
        const double attn_peak = w.attention_peak > 0 ? w.attention_peak : w.gemm_peak;
        // routed experts run grouped GEMMs of the tokens routed to each local expert: smaller, hence slower
        const double expert = w.expert_flops > 0 && w.expert_tokens > 0
                                  ? w.expert_flops * dense_inverse(e, w.gemm_peak, {w.expert_tokens, w.shape.width, w.shape.weight_bytes}, w.scaled, bw)
                                  : 0.0;
        const double rest = w.gemm_flops - (expert > 0 ? w.expert_flops : 0.0);
        return {(rest * dense_inverse(e, w.gemm_peak, w.shape, w.scaled, bw) + expert) / w.gemm_peak,
                attention_seconds(w, e, attn_peak), w.memory_bytes * memory_inverse / bw,
                w.stream_bytes / (streaming_bandwidth_fraction * bw)};
    }
    /// Seconds of w's attention core at `attn_peak`: the chip's attention efficiency, and for the portable
    /// (non-TE) kernels on a chip without its own fitted attention value no faster than portable_attention_flops.
    double attention_seconds(const compute_work& w, const gpu_coefficient* e, double attn_peak) const {
        const double fitted = w.attention_flops * (w.unfused_attention ? inverse_of(e) : attention_inverse_of(e, w.te_attention)) / attn_peak;
        const bool portable = !w.unfused_attention && !w.te_attention && !(e && e->attention > 0);
        return portable && portable_attention_flops > 0 ? std::max(fitted, w.attention_flops / portable_attention_flops) : fitted;
    }
    /// Seconds of `w` on `g`, all kernel classes.
    double seconds(const compute_work& w, const gpu_type& g) const { return by_kernel(w, g).total(); }
    // The same figures from an entry already looked up (entry(g); null = a chip without its own coefficients).
    double inverse_of(const gpu_coefficient* e) const { return e ? e->inverse : default_inverse; }
    double scaled_inverse_of(const gpu_coefficient* e) const {
        if (e && e->scaled > 0) return e->scaled;
        return (e ? e->inverse : default_inverse) * fp8_ratio;
    }
    double attention_inverse_of(const gpu_coefficient* e, bool te) const {
        if (te && e && e->te_attention > 0) return e->te_attention;
        if (te && te_attention_ratio > 0) return te_attention_ratio * inverse_of(e);
        if (e && e->attention > 0) return e->attention;
        return attention_ratio > 0 ? attention_ratio * (e ? e->inverse : default_inverse) : attention_inverse;
    }
    /// Inverse efficiency of dense GEMMs of shape `s` at `peak` FLOP/s on a chip of `bandwidth` bytes/s: a GEMM
    /// pass does 2 x tokens FLOPs per parameter and moves s.weight_bytes of it besides, at the bandwidth.
    double dense_inverse(const gpu_coefficient* e, double peak, gemm_shape s, bool scaled, double bandwidth) const {
        const double tok = s.tokens > 0 ? s.tokens : 1.0;
        const double wid = s.width > 0 ? s.width : 1.0;
        const double traffic = bandwidth > 0 ? weight_traffic * s.weight_bytes * peak / (2.0 * tok * bandwidth) : 0.0;
        return (scaled ? scaled_inverse_of(e) : inverse_of(e)) + traffic + width_penalty / wid;
    }
    bool operator==(const efficiency_model&) const = default;
};

/// The shipped calibration: fitted by perf/calibration.hpp (fit_efficiency) on the 177 measured runs of
/// data/throughput/ (measured_calibration.csv and megatron_nemo_at_scale.csv);
/// tests/perf/calibration_test.cpp re-fits and checks these. Coefficients are per chip, so every type of a fitted
/// chip (a100-80g, h200, h20, h100-pcie, ...) is predicted from its own datasheet peaks and bandwidths.
inline efficiency_model default_efficiency();

}  // namespace frenzy

#include "frenzy/perf/detail/shipped_efficiency.hpp"
