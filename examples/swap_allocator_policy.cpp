// Replacing one memory policy, the allocator: a host that runs with PyTorch's block cache disabled
// (PYTORCH_NO_CUDA_MEMORY_CACHING=1: every free returns its memory to the device) has no cached-but-unused blocks,
// so its reserved peak is its allocated peak. It swaps only the allocator policy; the model-state, activation and
// overhead policies stay the defaults.
#include <cstdio>

#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

namespace {
struct uncached_allocator {
    frenzy::bytes reserved(const frenzy::job_spec&, const frenzy::framework_profile&, frenzy::bytes allocated,
                           const frenzy::activation_bytes&, const frenzy::model_state_bytes&) const {
        return allocated;
    }
};
static_assert(frenzy::AllocatorPolicy<uncached_allocator>);
}  // namespace

int main() {
    using namespace frenzy;
    using uncached_estimator = memory_estimator::with_allocator<uncached_allocator>;  // one policy swapped
    job_spec job;  // Llama 3.1 8B under FSDP2 on 8 GPUs, torchtitan's defaults
    job.model = preset("llama-3.1-8b");
    job.training = {.seq_len = 8192, .micro_batch = 1, .global_batch = 8};
    job.parallel = {.dp = 8, .sharding = sharding::full, .recompute = recompute::selective};
    job.runtime.framework = frameworks::fsdp::handle;

    const auto cached = memory_estimator{}.estimate(job);
    const auto uncached = uncached_estimator{}.estimate(job);
    std::printf("Llama 3.1 8B, FSDP2 on 8 GPUs: allocated %.2f GiB; reserved %.2f GiB with the caching allocator, "
                "%.2f GiB without caching\n",
                to_GiB(cached.peak_allocated), to_GiB(cached.peak_reserved), to_GiB(uncached.peak_reserved));
    // The allocated peak is the same under both; without a cache nothing is reserved beyond it, while the caching
    // allocator keeps 15% of the activation churn and the reduce-scatter stream's gradient pool on top.
    const bool same_allocated = uncached.peak_allocated.value == cached.peak_allocated.value;
    const bool uncached_exact = uncached.peak_reserved.value == uncached.peak_allocated.value;
    return same_allocated && uncached_exact && cached.peak_reserved > uncached.peak_reserved ? 0 : 1;
}
