#pragma once
// The one fit rule every caller uses (estimate, plan, the schedulers, the service): does a job's memory report fit
// on a GPU type with a margin of its memory kept free?
//
// What is compared: MARP's peak *reserved* bytes (the caching allocator's footprint, torch.cuda.max_memory_reserved),
// not peak allocated: an out-of-memory error happens when the allocator cannot reserve a new segment, so reserved is
// what must fit. It is raised by the report's uncertainty (the validated upper error of the mechanisms the job uses)
// so a plan stays clear of OOM by what the validation shows, and compared with (1 - margin) x the GPU's memory as
// nvidia-smi reports it; the margin is the user's headroom and covers what PyTorch does not see, and is never
// less than that: the CUDA context and NCCL's buffers (memory/device.hpp) are kept free whatever the margin. The
// paged optimizer's unified-memory states do not count: the driver moves them to host memory before a cudaMalloc
// fails.
//
// Three verdicts (docs/memory-model.md, "The fit rule"): `fits` when the peak raised by the band fits; `tight` when
// the central estimate fits but the band does not (the run is expected to fit, with less room than the validated
// error asks for), or when the reserved peak does not fit but the allocated one does with its band: the caching
// allocator, refused a new segment, releases its cached blocks and retries before it raises out-of-memory
// (c10/cuda/CUDACachingAllocator.cpp malloc: release_cached_blocks, num_alloc_retries), so the run goes on with
// slower steps (Llama 3.1 8B under FSDP2 on one H200, data/measured/h200_2026-12-04/fsdp2_runs.jsonl: 8 runs with
// 8-32 retries and reserved held at the card's 138.5 GiB ran; those whose allocated peak exceeded the card did
// not); `does not fit` otherwise. The planner keeps only plans that fit; estimate reports all three.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "frenzy/core/enum_names.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/units.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/breakdown.hpp"
#include "frenzy/memory/device.hpp"

namespace frenzy {

/// Fraction of GPU memory kept free by default, in every subcommand and API (see above).
inline constexpr double default_margin = 0.05;

/// The fit rule's three answers (see above).
enum class fit_verdict { fits, tight, does_not_fit };
template <> struct enum_names<fit_verdict> {
    static constexpr std::array<std::pair<fit_verdict, std::string_view>, 3> table{
        {{fit_verdict::fits, "fits"}, {fit_verdict::tight, "tight"}, {fit_verdict::does_not_fit, "does_not_fit"}}};
};

/// The verdict of the fit rule, with the numbers it compared.
struct fit_check {
    bool fits = false;  ///< verdict == fits: what the planner requires
    fit_verdict verdict = fit_verdict::does_not_fit;
    bytes required{};  ///< peak reserved x (1 + uncertainty)
    bytes central{};   ///< peak reserved: the central estimate
    bytes capacity{};  ///< (1 - margin) x GPU memory, at most the memory less the CUDA context and NCCL buffers
    bytes allocated_required{};  ///< peak allocated x (1 + uncertainty): what must fit once the cache is released
    /// tight although the reserved peak exceeds the usable memory: the allocator will release its cache and retry
    bool cache_flushes = false;
    bool operator==(const fit_check&) const = default;
};

/// Throws config_error unless 0 <= margin < 1 (NaN rejected). `field` names the option in the message.
inline void validate_margin(double margin, std::string_view field = "margin") {
    if (!(margin >= 0.0 && margin < 1.0))
        throw config_error(std::string(field) + "=" + std::to_string(margin) +
                           " must be a fraction of GPU memory kept free, in [0, 1)");
}

/// Usable bytes of one GPU of type `g` after keeping `margin` of its memory free.
inline bytes usable_memory(const gpu_type& g, double margin = default_margin) {
    validate_margin(margin);
    return bytes{(1.0 - margin) * g.memory().value};
}

/// Bytes the fit rule requires for a report.
inline bytes required_memory(const memory_report& r) { return bytes{r.peak_reserved.value * (1.0 + r.uncertainty)}; }

/// The host side of offload: DeepSpeed's own estimator asks for the node's offloaded states x 1.5
/// (deepspeedai/DeepSpeed@edaa722 deepspeed/runtime/zero/stage3.py estimate_zero3_model_states_mem_needs with
/// zero_init: cpu_mem = params x 18 (parameters offloaded) or 16 (optimizer only) x gpus_factor x
/// additional_buffer_factor, additional_buffer_factor = 1.5: the states of the node's GPUs, 1.5 times).
inline constexpr double host_buffer_factor = 1.5;

/// Host memory a node needs when `gpus_on_node` of the job's GPUs share it and each one's offload holds
/// `host_per_gpu`.
inline bytes host_memory_per_node(bytes host_per_gpu, std::int64_t gpus_on_node) {
    return bytes{host_per_gpu.value * static_cast<double>(gpus_on_node) * host_buffer_factor};
}
/// The same for the offload of `r` (0 without offload) of a job of `job_gpus` GPUs on nodes of `gpus_per_node`:
/// as many of its GPUs share a node as the node has, or all of them on one node.
inline bytes host_memory_per_node(const memory_report& r, std::int64_t job_gpus, std::int64_t gpus_per_node) {
    return host_memory_per_node(r.host_per_gpu, std::min(job_gpus, gpus_per_node));
}

/// The fit rule.
inline fit_check check_fit(const memory_report& r, const gpu_type& g, double margin = default_margin) {
    fit_check f;
    // the margin, or what the device holds outside the allocator where that is more (memory/device.hpp)
    f.capacity = bytes{std::min(usable_memory(g, margin).value, g.memory().value - cuda_context_bytes - r.nccl.value)};
    f.required = required_memory(r);
    f.central = r.peak_reserved;
    f.allocated_required = bytes{r.peak_allocated.value * (1.0 + r.uncertainty)};
    f.fits = f.required.value <= f.capacity.value;
    // The allocator's options decide how much of its cache a flush returns (memory/allocator.hpp
    // cache_returned_whole): all of it, so the central allocated peak must fit; otherwise the banded one.
    const double after_flush = r.cache_returned_whole ? r.peak_allocated.value : f.allocated_required.value;
    f.cache_flushes = !f.fits && f.central.value > f.capacity.value && after_flush <= f.capacity.value;
    f.verdict = f.fits ? fit_verdict::fits
                : f.central.value <= f.capacity.value || f.cache_flushes ? fit_verdict::tight
                                                                         : fit_verdict::does_not_fit;
    return f;
}

}  // namespace frenzy
