#pragma once
// fp8 recipes (runtime.fp8_recipe): which GPUs run each, the HBM bytes its casts move and the bytes it keeps, read
// from the code that runs them. Transformer Engine (NVIDIA/TransformerEngine@d0067d0d):
// - delayed (DelayedScaling): one scale per tensor from an amax history; the norm kernel writes the fp8 output of
//   the GEMMs it feeds itself (pytorch/csrc/extensions/normalization.cpp: a Float8Quantizer is Impl::FULLY_FUSED).
// - tensorwise (Float8CurrentScaling): one scale per tensor from the tensor's own amax, so a cast reads its input
//   twice (the amax, then the cast); a norm computes the amax of its output itself (Impl::FUSED_NORM_AMAX_FP8) and
//   its output is then quantized from the bf16 it wrote.
// - blockwise (Float8BlockScaling): an fp32 scale per 1 x 128 block of activations and gradients (128 x 128 of
//   weights); mxfp8 (MXFP8BlockScaling): an E8M0 scale per 32 elements. Scales run along one dimension, so the
//   weight-gradient GEMM's operand is quantized again along the other (rowwise and columnwise data, one kernel);
//   norms write bf16 and are quantized after (Impl::UNFUSED).
// Per-tensor fp8 on Hopper and Ada also writes a transposed copy for the weight-gradient GEMM (only TN fp8 GEMMs
// run there); Blackwell's GEMMs take any layout, so none is written (common/transformer_engine.cpp
// nvte_is_non_tn_fp8_gemm_supported: compute capability 10.x, 11.x, 13+; pytorch/csrc/quantizer.cpp
// Float8Quantizer::create_tensor with_transpose).
// torchao (rowwise, tensorwise, mxfp8 under torchtitan, pytorch/torchtitan@b5bcd76c
// torchtitan/components/quantization/): each orientation is its own cast with its own amax reduction.
// GPUs: TE's checks (pytorch/quantization.py _compute_*_support): per-tensor fp8 on compute capability 8.9+,
// blockwise 9.0+, mxfp8 10.x and 11.x (not 12.x); torchtitan's float8 on sm89+ or AMD gfx942 (MI300), its mxfp8 on
// sm100+. AMD Instinct types (no CUDA capability) run the per-tensor and rowwise recipes only.
#include <string>

#include "frenzy/hw/gpu.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// The recipe a job runs: its own, or its framework's default (framework_rules::fp8_default).
inline fp8_recipe fp8_recipe_of(const job_spec& j) {
    return j.runtime.fp8_recipe.value_or(j.runtime.framework->rules.fp8_default);
}

/// Bytes of block scales per fp8 element: mxfp8 one E8M0 byte per 32, blockwise one fp32 per 128 (the 1 x 128
/// blocks of activations and gradients), none for per-tensor and per-row scales (one number per tensor or row).
constexpr double fp8_scale_bytes(fp8_recipe r) {
    return r == fp8_recipe::mxfp8 ? 1.0 / 32.0 : r == fp8_recipe::blockwise ? 4.0 / 128.0 : 0.0;
}

/// Whether the recipe's fp8 data of one orientation serves both GEMMs that read a tensor on a GPU of compute
/// capability `cc` x 10: per-tensor scales on chips whose fp8 GEMMs take any layout (Blackwell).
constexpr bool fp8_one_orientation(fp8_recipe r, int cc) {
    const bool per_tensor = r == fp8_recipe::delayed || r == fp8_recipe::tensorwise;
    return per_tensor && ((cc >= 100 && cc < 120) || cc >= 130);
}

/// HBM bytes per element of casting one bf16 GEMM operand that backward reads in both orientations (an input the
/// weight-gradient GEMM reads again, an output gradient the two backward GEMMs read): bf16 read once per pass
/// over it, 1 byte (+ scales) written per orientation. `norm_fed`: the operand is the output of a norm that
/// Transformer Engine's LayerNormLinear quantizes (`te`); under delayed scaling that costs nothing beyond the
/// norm's own pass, under current scaling the norm's amax spares the amax pass.
constexpr double fp8_cast_bytes(fp8_recipe r, int cc, bool te, bool norm_fed) {
    const double ways = fp8_one_orientation(r, cc) ? 1.0 : 2.0;
    const double write = ways * (1.0 + fp8_scale_bytes(r));
    switch (r) {
        case fp8_recipe::delayed: return te && norm_fed ? 0.0 : 2.0 + write;
        case fp8_recipe::tensorwise: return (te && norm_fed ? 0.0 : 2.0) + 2.0 + write;
        case fp8_recipe::rowwise: return ways * (2.0 + 2.0) + write;  // torchao: amax + cast per orientation
        case fp8_recipe::blockwise: return 2.0 + write;  // scales from each block, in the cast kernel
        case fp8_recipe::mxfp8: return te ? 2.0 + write : ways * 2.0 + write;  // torchao: a cast per orientation
    }
    return 2.0 + write;
}

/// Bytes per element of the fp8 copy Transformer Engine keeps of each GEMM weight (data of every orientation the
/// GEMMs read, with its scales), as memory/methods.hpp counts it. `cc` 0 (unknown): Hopper's two copies.
constexpr double fp8_weight_cache_bytes(fp8_recipe r, int cc) {
    const double block_scales = r == fp8_recipe::blockwise ? 4.0 / (128.0 * 128.0) : fp8_scale_bytes(r);
    return (fp8_one_orientation(r, cc) ? 1.0 : 2.0) * (1.0 + block_scales);
}

/// Bytes per element of an fp8 GEMM input Transformer Engine saves for the weight-gradient GEMM: the data of the
/// orientation that GEMM reads, with its scales.
constexpr double fp8_saved_input_bytes(fp8_recipe r) { return 1.0 + fp8_scale_bytes(r); }

/// Whether the recipe keeps an amax history per tensor (DelayedScaling's amax_history_len, 1024 by default).
constexpr bool fp8_amax_history(fp8_recipe r) { return r == fp8_recipe::delayed; }

/// NVFP4 (fp4-mixed: Transformer Engine's NVFP4BlockScaling, which Megatron's --fp4-format e2m1 runs): E2M1 data, two
/// elements per byte, and one E4M3 scale byte per 16 elements (NVIDIA/TransformerEngine@01634950
/// pytorch/tensor/nvfp4_tensor.py NVFP4Quantizer.make_empty: uint8 data of shape[-1] / 2, uint8 scale_inv of
/// ceil(K / 16) per row, padded to 128 x 4 tiles, negligible at layer sizes).
inline constexpr double nvfp4_element_bytes = 0.5 + 1.0 / 16.0;

/// Bytes per element of the low-precision copy Transformer Engine keeps of each GEMM weight across a step's
/// micro-batches: fp8 by its recipe (fp8_weight_cache_bytes, Hopper's two copies); NVFP4 in both orientations
/// (make_empty allocates rowwise and columnwise data when both usages are on, as for a weight); 0 otherwise.
inline double scaled_weight_cache_bytes(const job_spec& j) {
    if (j.training.precision == precision::fp4_mixed) return 2.0 * nvfp4_element_bytes;
    return j.training.precision == precision::fp8_mixed ? fp8_weight_cache_bytes(fp8_recipe_of(j), 0) : 0.0;
}

/// Bytes per element of a GEMM input saved for the weight-gradient GEMM in the job's scaled precision: fp8 with its
/// scales (fp8_saved_input_bytes), NVFP4's columnwise copy (nvfp4_element_bytes).
inline double scaled_saved_input_bytes(const job_spec& j) {
    return j.training.precision == precision::fp4_mixed ? nvfp4_element_bytes : fp8_saved_input_bytes(fp8_recipe_of(j));
}

/// Whether the job keeps an amax history per GEMM tensor (fp8 under delayed scaling; NVFP4 keeps one amax per
/// orientation, make_empty's amax_rowwise / amax_columnwise).
inline bool scaled_amax_history(const job_spec& j) {
    return j.training.precision == precision::fp8_mixed && fp8_amax_history(fp8_recipe_of(j));
}

/// Why a GPU type cannot run the job's fp8 recipe, or "" (jobs not in fp8-mixed run none).
inline std::string fp8_recipe_rejected(const job_spec& j, const gpu_type& g) {
    if (j.training.precision != precision::fp8_mixed) return {};
    const fp8_recipe r = fp8_recipe_of(j);
    const int cc = g.compute_capability();
    std::string needs;
    if (r == fp8_recipe::blockwise && !(cc >= 90)) needs = "compute capability 9.0 or later (Hopper, Blackwell)";
    if (r == fp8_recipe::mxfp8 && !(cc >= 100 && cc < 120)) needs = "compute capability 10.x or 11.x (Blackwell)";
    if (needs.empty()) return {};
    return "runtime.fp8_recipe=\"" + std::string(to_string(r)) + "\" needs " + needs + ", which " + g.name + " is not" +
           (cc > 0 ? " (" + std::to_string(cc / 10) + "." + std::to_string(cc % 10) + ")" : "");
}

}  // namespace frenzy
