#pragma once
// The shipped MFU ceilings of perf/mfu_ceiling.hpp: the best measured MFU per chip, precision class and size class
// over the 168 usable rows of data/throughput/measured_calibration.csv and megatron_nemo_at_scale.csv
// (tests/perf/mfu_ceiling_test.cpp recomputes them from the data).
#include <vector>

#include "frenzy/perf/mfu_ceiling.hpp"

namespace frenzy {

inline const std::vector<mfu_ceiling_entry>& shipped_mfu_ceilings() {
    // chip, fp8/fp4 GEMMs, size class, best measured MFU, the row (data/throughput/) that reached it
    static const std::vector<mfu_ceiling_entry> t{
        {"gh100", false, model_size_class::large, 0.4392, "55"},    // llm-foundry MPT-30B, 32 x H100
        {"gh100", false, model_size_class::medium, 0.4640, "71"},   // llm-foundry MPT-7B, 8 x H100
        {"gh100", false, model_size_class::small, 0.4631, "82"},    // llm-foundry MPT-3B, 8 x H100
        {"ga100", false, model_size_class::large, 0.5618, "285"},   // Korthikanti et al. 2022, GPT 1T, 512 x A100
        {"ga100", false, model_size_class::medium, 0.5256, "179"},  // llm-foundry MPT-13B, 32 x A100-40G
        {"ga100", false, model_size_class::small, 0.5944, "204"},   // llm-foundry MPT-3B, 8 x A100-40G
        {"gv100", false, model_size_class::small, 0.4400, "270"},   // Megatron-LM 2020, GPT 1.2B, 1 x V100
        {"gv100", false, model_size_class::medium, 0.3542, "274"},  // Megatron-LM 2020, GPT 4.2B, 4 x V100
        {"gh100", true, model_size_class::medium, 0.3943, "302"},   // NeMo 24.07, Llama 2 7B fp8, 8 x H100
        {"gh100", true, model_size_class::large, 0.4487, "301"},    // NeMo 24.07, GPT-3 175B fp8, 512 x H100
    };
    return t;
}

}  // namespace frenzy
