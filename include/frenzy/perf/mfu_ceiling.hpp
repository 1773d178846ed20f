#pragma once
// MFU sanity: the best model-FLOPs utilisation measured per chip, precision class (16-bit or fp8/fp4 GEMMs) and
// model size class. A prediction above the best that any measured run of its class reached is flagged in the
// output (step_estimate::above_mfu_ceiling, the plan table, --json): the model may be right, but nothing measured
// supports it. The table is derived from the measured rows of data/throughput/ in the model's own MFU convention
// (perf/flops.hpp: measured tokens/s x model FLOPs per token / (GPUs x dense peak)) by mfu_ceilings_of;
// tests/perf/mfu_ceiling_test.cpp recomputes it from the data and checks the shipped table below.
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/hw/gpu.hpp"
#include "frenzy/perf/flops.hpp"
#include "frenzy/model/transformer.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// Model size classes by active parameters: < 3B, 3B to < 30B, >= 30B.
enum class model_size_class { small, medium, large };

inline model_size_class size_class_of(double active_params) {
    if (active_params < 3e9) return model_size_class::small;
    return active_params < 30e9 ? model_size_class::medium : model_size_class::large;
}
inline const char* to_string(model_size_class c) {
    return c == model_size_class::small ? "< 3B" : c == model_size_class::medium ? "3-30B" : ">= 30B";
}

/// The best measured MFU of one class.
struct mfu_ceiling_entry {
    std::string chip;          ///< gpu_type::chip (a type name for types without one)
    bool scaled = false;       ///< fp8/fp4 GEMMs
    model_size_class size = model_size_class::small;
    double mfu = 0;            ///< the best measured MFU, as a fraction
    std::string row;           ///< the row that reached it (data/throughput/ row_id)
    bool operator==(const mfu_ceiling_entry&) const = default;
};

/// The key of a GPU type's class: its chip, or its name.
inline std::string_view ceiling_chip(const gpu_type& g) { return g.chip.empty() ? std::string_view(g.name) : std::string_view(g.chip); }

/// Adds one measured run (measured MFU `mfu`) to a ceiling table: the class's entry rises to it.
inline void add_measured_mfu(std::vector<mfu_ceiling_entry>& table, const gpu_type& g, const job_spec& j, double mfu,
                             const std::string& row) {
    const bool scaled = gpu_type::scaled_gemms(j.training.precision);
    const auto size = size_class_of(active_parameters(j.model, j.training.seq_len));
    for (auto& e : table)
        if (e.chip == ceiling_chip(g) && e.scaled == scaled && e.size == size) {
            if (mfu > e.mfu) e.mfu = mfu, e.row = row;
            return;
        }
    table.push_back({std::string(ceiling_chip(g)), scaled, size, mfu, row});
}

/// The shipped table (perf/detail/shipped_mfu_ceilings.hpp).
inline const std::vector<mfu_ceiling_entry>& shipped_mfu_ceilings();

/// The best measured MFU of `j`'s class on `g` in `table`; 0 when no run of the class was measured. Fine-tuning
/// with adapters is a class of its own (its backward skips the frozen weights' gradients: perf/flops.hpp counts
/// only the FLOPs it needs, and its GEMMs are fewer and its element-wise share larger than pretraining's) and has
/// no measured row.
inline double mfu_ceiling(const job_spec& j, const gpu_type& g,
                          const std::vector<mfu_ceiling_entry>& table = shipped_mfu_ceilings()) {
    if (j.training.finetune.adapters()) return 0;
    const bool scaled = gpu_type::scaled_gemms(j.training.precision);
    const auto size = size_class_of(active_parameters(j.model, j.training.seq_len));
    for (const auto& e : table)
        if (e.chip == ceiling_chip(g) && e.scaled == scaled && e.size == size) return e.mfu;
    return 0;
}

/// Most tokens per second one GPU of type `g` may be credited with for `j` (issue 55): the best measured MFU of its
/// class x the peak of its precision / the model FLOPs of a token (perf/flops.hpp model_flops_per_token, the MFU
/// convention of the table); infinity where no run of the class was measured. A planner caps time, cost and rank
/// at it, so the plans the model flatters most (MFU 62-70% on A100 against a measured best near 55%) are not ranked
/// first on a speed nothing measured supports.
inline double mfu_capped_tokens_per_s_per_gpu(const job_spec& j, const gpu_type& g,
                                              const std::vector<mfu_ceiling_entry>& table = shipped_mfu_ceilings()) {
    const double ceiling = mfu_ceiling(j, g, table);
    const double per_token = model_flops_per_token(j.model, j.training.seq_len);
    if (!(ceiling > 0) || !(per_token > 0)) return std::numeric_limits<double>::infinity();
    return ceiling * g.peak_flops(j.training.precision) / per_token;
}

}  // namespace frenzy

#include "frenzy/perf/detail/shipped_mfu_ceilings.hpp"
