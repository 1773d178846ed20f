#pragma once
// The attention kernel a job runs on a GPU type. runtime.attention "auto" (the default) is what the framework runs
// on the type's architecture: a flash-style kernel where one runs (gpu_type::flash_attention: compute capability
// 8.0+), else the framework's fallback (framework_perf::attention_without_flash: Transformer Engine's unfused
// attention for Megatron-Core, SDPA's memory-efficient kernel for the PyTorch frameworks). A kernel asked for by
// name that the type cannot run is refused with the reason. The memory model sees the resolved kernel through
// job_on (plan/estimate.hpp, the planner); the step-time model asks attention_on.
#include <string>

#include "frenzy/core/error.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// The kernel `j` runs on a GPU type where flash attention runs or not (gpu_type::flash_attention; never `automatic`).
inline attention_impl attention_on(const job_spec& j, bool flash_attention) {
    if (j.runtime.attention != attention_impl::automatic) return j.runtime.attention;
    return flash_attention ? attention_impl::flash : j.runtime.framework->perf.attention_without_flash;
}
/// The kernel `j` runs on `g` (never `automatic`).
inline attention_impl attention_on(const job_spec& j, const gpu_type& g) { return attention_on(j, g.flash_attention()); }

/// Why `j`'s attention kernel cannot run on `g`, or "".
inline std::string attention_rejected(const job_spec& j, const gpu_type& g) {
    if (j.runtime.attention != attention_impl::flash || g.flash_attention()) return {};
    const int cc = g.compute_capability();
    return "runtime.attention=\"flash\" needs a GPU of compute capability 8.0 or later (" + g.name +
           (cc > 0 ? " is " + std::to_string(cc / 10) + "." + std::to_string(cc % 10) : std::string(" has no bf16 tensor cores")) +
           "); runtime.attention \"auto\" runs " + std::string(to_string(j.runtime.framework)) + "'s kernel for it (\"" +
           std::string(to_string(j.runtime.framework->perf.attention_without_flash)) + "\")";
}

/// `j` as it runs on `g`: its attention kernel resolved. config_error when the kernel asked for cannot run there.
inline job_spec job_on(const job_spec& j, const gpu_type& g) {
    if (auto why = attention_rejected(j, g); !why.empty()) throw config_error(why);
    job_spec r = j;
    r.runtime.attention = attention_on(j, g);
    return r;
}

}  // namespace frenzy
