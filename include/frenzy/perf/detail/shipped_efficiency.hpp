#pragma once
// The shipped coefficients of perf/efficiency.hpp: fit_efficiency (perf/calibration.hpp) from neutral_start() on
// the 168 usable rows of data/throughput/measured_calibration.csv and megatron_nemo_at_scale.csv
// (tests/perf/calibration_test.cpp re-fits and checks them to 1%; docs/perf-model.md explains each).
#include "frenzy/perf/efficiency.hpp"

namespace frenzy {

inline efficiency_model default_efficiency() {
    efficiency_model e;
    e.source = "fit on data/throughput/measured_calibration.csv + megatron_nemo_at_scale.csv (168 rows: "
               "llm-foundry MPT on A100-40G/H100, Megatron-LM GPT on V100/A100 2020-2022 up to 3072 GPUs, NeMo "
               "24.07 fp8 on H100)";
    // per chip: large-GEMM inverse efficiency (bf16/fp16), attention-core inverse efficiency (0 = ratio x GEMM),
    // fp8 GEMM inverse efficiency w.r.t. the fp8 peak (0 = GEMM x fp8_ratio), and attention through Megatron-Core's
    // Transformer Engine fused (cuDNN) attention (0 = as attention). gh100's fp8 value sits at its bound (fp8 GEMMs
    // reach at most the fraction of their peak that bf16 GEMMs reach): the NeMo rows would take less. gv100 has no
    // long-sequence rows, so its attention follows its GEMMs at the fitted ratio.
    e.gpus = {
        {"ga100", 1.268763, 1.862690, "fit", 0, 0},
        {"gh100", 1.609034, 3.110782, "fit", 1.609034, 1.328196},
        {"gv100", 1.118184, 0, "fit", 0, 0},
    };
    e.default_inverse = 1.609034;  // chips without data (Blackwell, Ada, CDNA3, ...): the least efficient fitted chip
    e.weight_traffic = 1.256028;   // each GEMM pass moves its weight-sized operands 1.26 times (1 = once)
    e.width_penalty = 0.0;         // at its bound: the element-wise term explains what thin GEMMs lost before
    e.attention_inverse = 2.0;     // unused while attention_ratio > 0
    e.attention_ratio = 1.700719;  // mean attention / GEMM inverse efficiency of ga100 and gh100
    e.te_attention_ratio = 0.825462;  // gh100's TE attention / GEMM inverse efficiency: chips without their own TE value
    e.fp8_ratio = 1.0;
    e.memory_inverse = 2.461906;   // element-wise kernels at 40.6% of the datasheet memory bandwidth
    // Not a fit: the portable (SDPA flash, FlashAttention-2) attention kernel runs at the rate gh100's fit gives it
    // (989 TFLOP/s / 3.110782 = 318 TFLOP/s, full s^2 count) on newer chips too. FA2 measured on B200 at 350-360
    // TFLOP/s forward, hdim 128 (meta-pytorch/tritonbench#171), 320-345 fwd+bwd, hdim 64
    // (Dao-AILab/flash-attention#1589): H100's FA2 rate (FlashAttention-3 paper, Fig. 5: 330-350), not B200's peak.
    e.portable_attention_flops = 318e12;
    return e;
}

}  // namespace frenzy
