#pragma once
// Numeric precision of training: a property of the job (train/job.hpp) that GPU types (hw/gpu.hpp) are rated
// for, so it sits below both.
#include <array>
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

}  // namespace frenzy
