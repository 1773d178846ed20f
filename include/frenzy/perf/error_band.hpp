#pragma once
// Error band of a step-time prediction by regime: the 90th percentile of |relative error| of tokens/s per GPU
// that leave-one-source-out validation shows on data/throughput (tests/perf/calibration_test.cpp
// recomputes every band and checks the table below covers it; docs/perf-model.md has the table).
#include <string>
#include <utility>

#include "frenzy/hw/gpu.hpp"
#include "frenzy/perf/efficiency.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// The regimes, in the order a job is classified (the first that applies).
enum class error_regime { uncalibrated_chip, context_parallel, expert_parallel, scaled_precision, pipeline, tensor_parallel, data_parallel };

inline const char* to_string(error_regime r) {
    switch (r) {
        case error_regime::uncalibrated_chip: return "chip without calibration data";
        case error_regime::context_parallel: return "context parallel";
        case error_regime::expert_parallel: return "expert parallel";
        case error_regime::scaled_precision: return "fp8/fp4 GEMMs";
        case error_regime::pipeline: return "pipeline parallel";
        case error_regime::tensor_parallel: return "tensor parallel";
        case error_regime::data_parallel: return "data parallel / sharded";
    }
    return "?";
}

/// Which regime `j` on `g` falls in; `calibrated` says whether the efficiency model has data for g's chip.
inline error_regime classify_regime(const job_spec& j, bool calibrated) {
    const auto& p = j.parallel;
    if (!calibrated) return error_regime::uncalibrated_chip;
    if (p.cp > 1) return error_regime::context_parallel;
    if (p.ep > 1 && j.model.is_moe()) return error_regime::expert_parallel;
    if (gpu_type::scaled_gemms(j.training.precision)) return error_regime::scaled_precision;
    if (p.pp > 1) return error_regime::pipeline;
    if (p.tp > 1) return error_regime::tensor_parallel;
    return error_regime::data_parallel;
}

/// The band of a regime (fraction, e.g. 0.15 = +-15%). Regimes with validation rows use their leave-one-source-out
/// p90 rounded up to the next percent, at least 10% (the p90 the hidden MosaicML/Megatron set shows in-band is
/// ~16%: a narrower band would claim more than any validation supports); the others have few or no rows and take a
/// stated prior (docs/perf-model.md).
inline double error_band(error_regime r) {
    switch (r) {
        // held-out 2026 runs on chips without calibration rows (Blackwell, CDNA3, Ada; data/throughput/
        // wild_2026-12.csv, 20 rows): p90 63.5% (tests/perf/wild_validation_test.cpp); the 0.35 prior covered 9
        case error_regime::uncalibrated_chip: return 0.64;
        case error_regime::context_parallel: return 0.40;   // prior: 2 rows (NeMo cp = 2, LOSO p90 29%)
        case error_regime::expert_parallel: return 0.35;    // prior: no MoE rows in the shipped data
        case error_regime::scaled_precision: return 0.22;   // LOSO p90 21.6% (10 rows)
        case error_regime::pipeline: return 0.13;           // LOSO p90 12.9% (9 rows)
        case error_regime::tensor_parallel: return 0.19;    // LOSO p90 18.8% (13 rows)
        case error_regime::data_parallel: return 0.21;      // LOSO p90 20.7% (134 rows)
    }
    return 0.35;
}

/// Band and regime name of `j` on `g` under a compute policy; policies without an efficiency model count as calibrated.
template <class C>
std::pair<double, const char*> error_band_for(const job_spec& j, const gpu_type& g, const C& compute) {
    bool calibrated = true;
    if constexpr (requires { compute.efficiency.entry(g); }) calibrated = compute.efficiency.entry(g) != nullptr;
    const auto r = classify_regime(j, calibrated);
    return {error_band(r), to_string(r)};
}

}  // namespace frenzy
