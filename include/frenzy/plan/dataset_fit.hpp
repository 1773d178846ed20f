#pragma once
// Data-aware fine-tuning (issue 51, item 5): the peak over a dataset as it will be batched. A job's seq_len is the
// longest a sample may be (cutoff_len, max_seq_length: longer samples are truncated); how the samples become
// micro-batches decides the tokens of each:
//  - pad: random order, each micro-batch padded to its longest sample (transformers DataCollatorWithPadding and
//    DataCollatorForSeq2Seq pad to the batch's longest, padding="longest"; torchtune padded_collate_sft);
//  - sorted: micro-batches of similar lengths (transformers Trainer group_by_length: LengthGroupedSampler sorts
//    mega-batches of 50 batches by length), so long samples share their micro-batches;
//  - pack: samples packed into rows of seq_len tokens (TRL SFTConfig packing, axolotl sample_packing, torchtune
//    PackedDataset): every micro-batch is micro_batch x seq_len tokens.
// Activations follow a micro-batch's padded length, so the peak is the job at the longest padded micro-batch.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "frenzy/core/enum_names.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/plan/estimate.hpp"
#include "frenzy/plan/nearest_fit.hpp"

namespace frenzy {

enum class batching { pad, sorted, pack };
template <> struct enum_names<batching> {
    static constexpr std::array<std::pair<batching, std::string_view>, 3> table{
        {{batching::pad, "pad"}, {batching::sorted, "sorted"}, {batching::pack, "pack"}}};
};

/// Token counts of a dataset's samples: (length, count) pairs, ascending by length, lengths > 0.
struct length_histogram {
    std::vector<std::pair<std::int64_t, std::int64_t>> bins;
    std::int64_t samples() const {
        std::int64_t n = 0;
        for (const auto& b : bins) n += b.second;
        return n;
    }
    /// Samples no longer than `len`.
    std::int64_t at_most(std::int64_t len) const {
        std::int64_t n = 0;
        for (const auto& b : bins) n += b.first <= len ? b.second : 0;
        return n;
    }
    /// The smallest length that `q` of the samples do not exceed (0 < q <= 1).
    std::int64_t quantile(double q) const {
        const double want = q * static_cast<double>(samples());
        std::int64_t n = 0;
        for (const auto& b : bins)
            if (static_cast<double>(n += b.second) >= want) return b.first;
        return bins.empty() ? 0 : bins.back().first;
    }
};

/// Sorts `h`'s bins and merges equal lengths; config_error naming `source` when it holds no sample.
inline length_histogram normalized(length_histogram h, const std::string& source) {
    std::sort(h.bins.begin(), h.bins.end());
    length_histogram out;
    for (const auto& b : h.bins) {
        if (b.second == 0) continue;
        if (!out.bins.empty() && out.bins.back().first == b.first) out.bins.back().second += b.second;
        else out.bins.push_back(b);
    }
    if (out.bins.empty()) throw config_error(source + ": no sample with a token count");
    return out;
}

/// The dataset-aware answer for one job on one GPU type.
struct dataset_fit {
    frenzy::batching batching = batching::pad;
    std::int64_t samples = 0, truncated = 0;     ///< samples, and those longer than seq_len (cut to it)
    std::int64_t p50 = 0, p95 = 0, longest = 0;  ///< token counts after truncation
    std::int64_t longest_batch_length = 0;       ///< padded length of the longest micro-batch
    estimate_result longest_batch;               ///< the job at that length: its memory and verdict
    /// The longest padded length at which the job's micro-batch fits (with the band); 0 = not even one granule.
    std::int64_t fit_length = 0;
    micro_batch_limit micro_batch;               ///< the largest micro-batch that fits the longest batch
    /// Share of optimizer steps with a micro-batch padded beyond fit_length (an upper bound for sorted batching).
    double steps_at_risk = 0;
};

namespace detail {
/// Padded lengths are rounded up to what the layout needs: sequence parallelism splits the sequence over tp,
/// context parallelism into 2 x cp chunks.
inline std::int64_t length_granule(const job_spec& j) {
    const auto& p = j.parallel;
    std::int64_t g = 1;
    if (p.sequence_parallel) g = p.tp;
    if (p.cp > 1) g = g * 2 * p.cp;
    return g;
}
inline std::int64_t round_up(std::int64_t v, std::int64_t g) { return (v + g - 1) / g * g; }
inline job_spec at_length(job_spec j, std::int64_t len) {
    j.training.seq_len = len;
    return j;
}
}  // namespace detail

/// The dataset-aware fit of `job` (its seq_len the longest a sample may be) on `g` with lengths `h` batched by `b`.
template <MemoryModel M = memory_estimator>
dataset_fit fit_dataset(const job_spec& job, const length_histogram& h, batching b, const gpu_type& g,
                        double margin = default_margin, const M& memory = {}) {
    validate(job);
    dataset_fit out;
    out.batching = b;
    const std::int64_t cap = job.training.seq_len, granule = detail::length_granule(job);
    out.samples = h.samples();
    out.truncated = out.samples - h.at_most(cap);
    out.p50 = std::min(h.quantile(0.5), cap);
    out.p95 = std::min(h.quantile(0.95), cap);
    out.longest = std::min(h.bins.back().first, cap);
    out.longest_batch_length = b == batching::pack ? cap : std::min(cap, detail::round_up(out.longest, granule));
    out.longest_batch = estimate(detail::at_length(job, out.longest_batch_length), &g, margin, memory);
    out.micro_batch = max_micro_batch(detail::at_length(job, out.longest_batch_length), g, margin, memory);
    // the longest padded length that fits: the verdict only worsens with the length
    std::int64_t lo = 0, hi = out.longest_batch_length / granule;
    while (lo < hi) {
        const std::int64_t mid = (lo + hi + 1) / 2;
        if (check_fit(memory.estimate(detail::at_length(job, mid * granule)), g, margin).fits) lo = mid;
        else hi = mid - 1;
    }
    out.fit_length = lo * granule;
    if (out.fit_length >= out.longest_batch_length) return out;
    if (b == batching::pack) {
        out.steps_at_risk = 1;
        return out;
    }
    const double n = static_cast<double>(out.samples), per_step = static_cast<double>(job.training.global_batch);
    const double safe = static_cast<double>(h.at_most(out.fit_length)) / n;
    if (b == batching::pad) {  // a step draws global_batch samples; any one beyond fit_length pads its micro-batch
        out.steps_at_risk = 1.0 - std::pow(safe, per_step);
    } else {  // sorted: the long samples fill ceil(long / micro_batch) micro-batches, at most one step each
        const double long_samples = n - static_cast<double>(h.at_most(out.fit_length));
        const double batches = std::ceil(long_samples / static_cast<double>(job.training.micro_batch));
        out.steps_at_risk = std::min(1.0, batches / std::max(1.0, std::floor(n / per_step)));
    }
    return out;
}

}  // namespace frenzy
