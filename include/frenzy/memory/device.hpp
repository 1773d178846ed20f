#pragma once
// What the device holds beside PyTorch's caching allocator, and what each common readout of GPU memory shows for a
// job: torch.cuda.max_memory_allocated and max_memory_reserved (MARP's two peaks) and the device's own count
// (nvidia-smi, torch.cuda.mem_get_info), which adds the CUDA context, NCCL's buffers and unified-memory pages.
// docs/memory-model.md, "What a GPU really holds".
#include <algorithm>
#include <cstdint>

#include "frenzy/core/units.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/breakdown.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// The CUDA context of a PyTorch process with its lazily loaded kernels: 552,402,944 bytes (527 MiB) were in use on
/// an H200 right after torch created its context, before any tensor (torch 2.11.0+cu130, CUDA 13.0; total_bytes -
/// free_bytes_at_start of data/measured/h200_2026-12-04/hf_env.json). One measurement: other drivers and cards
/// differ by tens of MiB (lazy module loading, CUDA_MODULE_LOADING=LAZY, keeps it from growing with the kernels).
inline constexpr double cuda_context_bytes = 552402944.0;

/// NCCL's own device buffers (cudaMalloc'd by NCCL, not by PyTorch's allocator): the SIMPLE protocol's receive
/// buffer, NCCL_BUFFSIZE = 4 MiB by default, on each channel of each communicator with more than one rank; NCCL's
/// default channel cap on NVLink is taken as 16. An order of magnitude, not calibrated (no device-level row in
/// data/): 64 MiB a communicator; the LL/LL128 buffers and NVLS are left out.
inline constexpr double nccl_buffer_per_channel = 4.0 * MiB;
inline constexpr double nccl_channels = 16;

/// NCCL buffer bytes on one GPU of `j`: one communicator for each parallel group of more than one rank (data and
/// context parallel together, tensor, pipeline, expert).
inline bytes nccl_buffer_bytes(const job_spec& j) {
    const auto& p = j.parallel;
    int groups = 0;
    for (const std::int64_t n : {p.dp * p.cp, p.tp, p.pp, p.ep}) groups += n > 1 ? 1 : 0;
    return bytes{groups * nccl_channels * nccl_buffer_per_channel};
}

/// What each readout shows for a job on one GPU of a type, at the bottleneck stage's peak.
struct device_footprint {
    bytes allocated{};       ///< torch.cuda.max_memory_allocated (MARP's peak_allocated)
    bytes reserved{};        ///< torch.cuda.max_memory_reserved (MARP's peak_reserved)
    bytes cuda_context{};    ///< the CUDA context (cuda_context_bytes)
    bytes nccl{};            ///< NCCL's buffers (nccl_buffer_bytes)
    bytes paged{};           ///< the paged optimizer's states in unified memory, all of them (memory_report::paged)
    bytes paged_resident{};  ///< the share of `paged` left on the device beside the rest; the driver moves the others to host
    bytes device{};          ///< what nvidia-smi shows: reserved + context + NCCL + the resident pages
    bool operator==(const device_footprint&) const = default;
};

/// The readouts of report `r` on a GPU of type `g`. Unified-memory pages are evicted to host memory before a
/// cudaMalloc fails, so they fill what the device has left and never cause an out-of-memory error.
inline device_footprint device_readouts(const memory_report& r, const gpu_type& g) {
    device_footprint d;
    d.allocated = r.peak_allocated;
    d.reserved = r.peak_reserved;
    d.cuda_context = bytes{cuda_context_bytes};
    d.nccl = r.nccl;
    d.paged = r.paged;
    const double rest = d.reserved.value + d.cuda_context.value + d.nccl.value;
    d.paged_resident = bytes{std::clamp(g.memory().value - rest, 0.0, d.paged.value)};
    d.device = bytes{rest + d.paged_resident.value};
    return d;
}

}  // namespace frenzy
