#pragma once
// Achievable fraction of peak FLOP/s: per-GPU coefficients and GEMM-size penalties, with the shipped defaults.
//
// Model (fitted by least squares in perf/calibration.hpp, see docs/perf-model.md):
//   seconds = [ dense x (c_gpu + token_penalty x (peak / 312 TFLOP/s) / tokens + width_penalty / width)
//               + attention x attention_inverse ] / peak
// where c_gpu is the inverse of the fraction of peak that large GEMMs reach on that GPU, `tokens` the rows of
// each GEMM (micro_batch x seq_len / cp), `width` the hidden size one tensor-parallel rank holds (hidden / tp),
// and `attention` the FLOPs of the attention core (flash attention, full s^2 count, perf/flops.hpp).
// The token penalty scales with peak because a faster GPU needs larger GEMMs to stay busy.
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/hw/gpu.hpp"

namespace frenzy {

/// Rows and columns of the GEMMs one GPU runs per micro-batch.
struct gemm_shape {
    double tokens = 0;  ///< micro_batch x seq_len / cp
    double width = 0;   ///< hidden / tp
};

/// Inverse efficiency of one GPU type for large GEMMs, and where the number comes from.
struct gpu_coefficient {
    std::string gpu;
    double inverse = 2.0;  ///< 1 / (fraction of dense peak reached by large GEMMs)
    double attention = 0;  ///< inverse efficiency of attention-core FLOPs on this type; 0 = the shared value
    std::string source;    ///< "fit" or "alias of TYPE: reason"
    bool operator==(const gpu_coefficient&) const = default;
};

/// The calibrated coefficients of the compute-time model.
struct efficiency_model {
    std::vector<gpu_coefficient> gpus;
    double default_inverse = 2.0;    ///< GPU types with no data and no alias
    double token_penalty = 0;        ///< tokens (at 312 TFLOP/s) at which small GEMMs add one unit of inverse efficiency
    double width_penalty = 0;        ///< width at which narrow GEMMs add one unit of inverse efficiency
    double attention_inverse = 2.0;  ///< attention-core inverse efficiency of types without their own (full s^2 count)
    std::string source;              ///< what the coefficients were fitted on

    /// c_gpu of `g`: its own entry, else the default.
    double gpu_inverse(std::string_view name) const {
        for (const auto& c : gpus)
            if (c.gpu == name) return c.inverse;
        return default_inverse;
    }
    /// Inverse efficiency of attention-core FLOPs on `name`: its own, else the shared value.
    double gpu_attention_inverse(std::string_view name) const {
        for (const auto& c : gpus)
            if (c.gpu == name && c.attention > 0) return c.attention;
        return attention_inverse;
    }
    bool has(std::string_view name) const {
        for (const auto& c : gpus)
            if (c.gpu == name) return true;
        return false;
    }
    /// Inverse efficiency of the dense GEMMs of the given shape on `g` (>= c_gpu).
    double dense_inverse(const gpu_type& g, double peak, gemm_shape s) const {
        const double tok = s.tokens > 0 ? s.tokens : 1.0;
        const double wid = s.width > 0 ? s.width : 1.0;
        return gpu_inverse(g.name) + token_penalty * (peak / 312e12) / tok + width_penalty / wid;
    }
    /// Seconds to run `dense` GEMM FLOPs and `attention` attention-core FLOPs at `peak` FLOP/s.
    double seconds(double dense, double attention, const gpu_type& g, double peak, gemm_shape s) const {
        if (!(peak > 0)) return 0;
        return (dense * dense_inverse(g, peak, s) + attention * gpu_attention_inverse(g.name)) / peak;
    }
    bool operator==(const efficiency_model&) const = default;
};

/// The shipped calibration: fitted by perf/calibration.hpp (fit_efficiency) on all 142 rows of
/// ../shared/data/throughput/measured_calibration.csv; tests/perf/calibration_test.cpp re-fits and checks these.
/// Aliases carry a fitted type to types of the same chip with no throughput rows (docs/perf-model.md).
inline efficiency_model default_efficiency() {
    efficiency_model e;
    e.source = "fit on shared/data/throughput/measured_calibration.csv (142 rows: llm-foundry MPT on A100-40G/H100, "
               "Megatron-LM GPT on V100/A100)";
    // fitted values (fit_efficiency on the full file, converged; docs/perf-model.md): inverse efficiency of large
    // GEMMs and of attention cores per type. V100's dense value sits at the physical bound 1 (its four Megatron
    // rows are explained by the shared width penalty); it has no long-sequence rows, so it uses the shared
    // attention value (the mean of the A100 and H100 ones).
    const double a100 = 1.3897995, a100_attn = 1.9218231;
    const double h100 = 1.6985921, h100_attn = 3.2406779;
    const double v100 = 1.0;
    e.gpus = {
        {"a100-40g", a100, a100_attn, "fit"},
        {"h100-80g", h100, h100_attn, "fit"},
        {"v100-32g", v100, 0, "fit"},
        {"a100-80g", a100, a100_attn, "alias of a100-40g: same chip and clocks; sailor profiles give A100-80/A100-40 speed ~1"},
        {"a100-80g-pcie", a100, a100_attn, "alias of a100-40g: same chip (PCIe link modelled separately)"},
        {"h100-pcie", h100, h100_attn, "alias of h100-80g: same architecture (lower peak is in the catalog)"},
        {"h200", h100, h100_attn, "alias of h100-80g: same chip, more memory"},
        {"v100-16g", v100, 0, "alias of v100-32g: same chip"},
    };
    e.default_inverse = h100;       // types without data: the least efficient fitted type (conservative)
    e.token_penalty = 581.0718;
    e.width_penalty = 668.2078;
    e.attention_inverse = 2.5812505;
    return e;
}

}  // namespace frenzy
