#pragma once
// Numeric precision of training: a property of the job (train/job.hpp) that GPU types (hw/gpu.hpp) are rated
// for, so it sits below both.
#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

#include "frenzy/core/enum_names.hpp"

namespace frenzy {

/// fp8_mixed / fp4_mixed: the GEMMs run in fp8 / fp4 (Transformer Engine; MXFP4/NVFP4 on Blackwell), everything
/// else (attention core, norms, element-wise ops, optimizer, communication) in bf16 with fp32 master weights.
enum class precision { fp32, fp16_mixed, bf16_mixed, bf16, fp8_mixed, fp4_mixed };
template <> struct enum_names<precision> {
    static constexpr std::array<std::pair<precision, std::string_view>, 6> table{{
        {precision::fp32, "fp32"}, {precision::fp16_mixed, "fp16-mixed"}, {precision::bf16_mixed, "bf16-mixed"},
        {precision::bf16, "bf16"}, {precision::fp8_mixed, "fp8-mixed"}, {precision::fp4_mixed, "fp4-mixed"}}};
};

/// Whether a precision runs its GEMMs in a low-precision format with scales (fp8, fp4).
constexpr bool scaled_gemm_precision(precision p) { return p == precision::fp8_mixed || p == precision::fp4_mixed; }

/// How fp8-mixed scales the GEMM operands it casts (runtime.fp8_recipe; train/fp8_recipe.hpp has what each moves,
/// keeps and needs): Transformer Engine's DelayedScaling, Float8CurrentScaling, Float8BlockScaling and
/// MXFP8BlockScaling as Megatron's --fp8-recipe names them (NVIDIA/Megatron-LM@d98e8a64 megatron/core/enums.py
/// Fp8Recipe), and torchao's rowwise scaling (torchtitan's Float8LinearConverter default, pytorch/torchtitan@b5bcd76c).
enum class fp8_recipe : std::uint8_t { delayed, tensorwise, rowwise, blockwise, mxfp8 };
template <> struct enum_names<fp8_recipe> {
    static constexpr std::array<std::pair<fp8_recipe, std::string_view>, 5> table{{
        {fp8_recipe::delayed, "delayed"}, {fp8_recipe::tensorwise, "tensorwise"}, {fp8_recipe::rowwise, "rowwise"},
        {fp8_recipe::blockwise, "blockwise"}, {fp8_recipe::mxfp8, "mxfp8"}}};
};
/// A set of fp8 recipes as bit flags (framework_rules::fp8_recipes).
constexpr std::uint8_t fp8_recipe_bit(fp8_recipe r) { return static_cast<std::uint8_t>(1u << static_cast<unsigned>(r)); }

}  // namespace frenzy
