#pragma once
// Result values of MARP: per-stage memory breakdown and the whole-job report.
#include <cstdint>
#include <vector>

#include "frenzy/core/units.hpp"

namespace frenzy {

/// Per-GPU bytes of one pipeline stage at its peak.
struct memory_breakdown {
    bytes weights{}, gradients{}, optimizer{}, activations{}, temporary{};
    bool operator==(const memory_breakdown&) const = default;
    bytes model_states() const { return weights + gradients + optimizer; }
    bytes total() const { return weights + gradients + optimizer + activations + temporary; }
};

struct stage_memory {
    int stage = 0;
    double parameters = 0;          ///< parameters held by one GPU of this stage (after tp/ep sharding)
    memory_breakdown breakdown{};   ///< at the stage's peak
    bytes peak_allocated{};         ///< = breakdown.total()
    bytes peak_reserved{};          ///< the caching allocator's reserve at this stage's peak (>= peak_allocated)
    double in_flight_micro_batches = 0;  ///< micro-batches whose activations are live at the peak
    bool operator==(const stage_memory&) const = default;
};

/// MARP's answer for one job: every stage, the bottleneck, and allocated/reserved peaks.
struct memory_report {
    double parameters = 0;             ///< whole model (framework-padded vocabulary)
    std::vector<stage_memory> stages;
    int bottleneck_stage = 0;
    bytes peak_allocated{};            ///< comparable with torch.cuda.max_memory_allocated
    bytes peak_reserved{};             ///< comparable with torch.cuda.max_memory_reserved (allocator model)
    /// Relative upper error of the prediction for the mechanisms this job uses (memory_uncertainty): the measured
    /// peak is expected to stay below peak x (1 + uncertainty). Documented in docs/memory-model.md.
    double uncertainty = 0;
    /// Host memory the offload holds for one GPU: its stage's offloaded states (model_state_bytes::host), the
    /// largest stage's; 0 without runtime.offload. host_memory_per_node (memory/fit.hpp) makes a node's need of it.
    bytes host_per_gpu{};
    /// Pinned host memory holding one GPU's offloaded activations (Unsloth's offloaded checkpoints,
    /// runtime.offload.activations; activation_bytes::host), the largest stage's; outside the GPU's peaks and not
    /// in host_per_gpu (the offloaded states that the planner checks against host_memory_GiB).
    bytes host_activations{};
    /// Optimizer states in CUDA unified memory (runtime.paged_optimizer; model_state_bytes::paged), the largest
    /// stage's: outside both peaks above, moved to host memory by the driver under pressure (memory/device.hpp).
    bytes paged{};
    /// NCCL's own buffers on one GPU (memory/device.hpp nccl_buffer_bytes): outside both peaks above.
    bytes nccl{};
    /// The allocator can hand back all of its cache when a cudaMalloc fails, down to the allocated peak
    /// (memory/allocator.hpp cache_returned_whole; read by the fit rule, memory/fit.hpp).
    bool cache_returned_whole = false;
    const stage_memory& bottleneck() const { return stages.at(static_cast<std::size_t>(bottleneck_stage)); }
};

}  // namespace frenzy
