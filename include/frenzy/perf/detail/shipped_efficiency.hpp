#pragma once
// The shipped coefficients of perf/efficiency.hpp: fit_efficiency (perf/calibration.hpp) from neutral_start() on
// the 168 usable rows of ../shared/data/throughput/measured_calibration.csv and megatron_nemo_at_scale.csv
// (tests/perf/calibration_test.cpp re-fits and checks them to 1%; docs/perf-model.md explains each).
#include "frenzy/perf/efficiency.hpp"

namespace frenzy {

inline efficiency_model default_efficiency() {
    efficiency_model e;
    e.source = "fit on shared/data/throughput/measured_calibration.csv + megatron_nemo_at_scale.csv (168 rows: "
               "llm-foundry MPT on A100-40G/H100, Megatron-LM GPT on V100/A100 2020-2022 up to 3072 GPUs, NeMo "
               "24.07 fp8 on H100)";
    // per chip: large-GEMM inverse efficiency (bf16/fp16), attention-core inverse efficiency (0 = ratio x GEMM),
    // fp8 GEMM inverse efficiency w.r.t. the fp8 peak (0 = GEMM x fp8_ratio). gh100's fp8 value sits at its bound
    // (fp8 GEMMs reach at most the fraction of their peak that bf16 GEMMs reach): the NeMo rows would take less.
    // gv100 has no long-sequence rows, so its attention follows its GEMMs at the fitted ratio.
    e.gpus = {
        {"ga100", 1.366717, 1.826965, "fit", 0},
        {"gh100", 1.646214, 3.047703, "fit", 1.646214},
        {"gv100", 1.280967, 0, "fit", 0},
    };
    e.default_inverse = 1.646214;  // chips without data (Blackwell, Ada, CDNA3, ...): the least efficient fitted chip
    e.token_penalty = 126.1780;
    e.width_penalty = 19.2701;
    e.attention_inverse = 2.0;     // unused while attention_ratio > 0
    e.attention_ratio = 1.594048;  // mean attention / GEMM inverse efficiency of ga100 and gh100
    e.fp8_ratio = 1.0;
    e.memory_inverse = 2.238882;   // element-wise kernels at 45% of the datasheet memory bandwidth
    return e;
}

}  // namespace frenzy
