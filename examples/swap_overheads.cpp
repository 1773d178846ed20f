// Replacing one memory policy, the temporaries: a host whose trainer keeps a fixed 2 GiB side buffer on every GPU
// (a CUDA-graph pool, an inference copy for evaluation, ...) swaps only the overhead policy's temporaries; model
// states, activations and the reserved-memory model stay the defaults.
#include <cmath>
#include <cstdio>

#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

namespace {
/// The default temporaries plus a fixed buffer that lives through forward, backward and the optimizer step.
/// Derived from the default so every other member (the reserved-memory model) is the default's.
struct with_side_buffer : frenzy::framework_overheads {
    double buffer_bytes = 2 * frenzy::GiB;
    frenzy::overhead_bytes temporaries(const frenzy::job_spec& j, const frenzy::stage_layout& l,
                                       const frenzy::framework_profile& f, const frenzy::model_state_bytes& s) const {
        auto o = frenzy::framework_overheads::temporaries(j, l, f, s);
        o.train += frenzy::bytes{buffer_bytes};
        o.step += frenzy::bytes{buffer_bytes};
        return o;
    }
};
static_assert(frenzy::OverheadPolicy<with_side_buffer>);
}  // namespace

int main() {
    using namespace frenzy;
    job_spec job;
    job.model = preset("llama-3.1-8b");
    job.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 64};
    job.parallel = {.dp = 8, .tp = 2, .sequence_parallel = true, .sharding = sharding::optimizer,
                    .recompute = recompute::selective};
    job.runtime.framework = frameworks::megatron::handle;

    const auto standard = memory_estimator{}.estimate(job);
    const auto buffered = memory_estimator::with_overheads<with_side_buffer>{}.estimate(job);  // one policy swapped
    std::printf("Llama 3.1 8B, tp 2 x dp 8, Megatron: peak allocated %.2f GiB; with a 2 GiB side buffer %.2f GiB\n",
                standard.peak_allocated.value / GiB, buffered.peak_allocated.value / GiB);
    // The buffer is in both phases whose peaks compete (forward/backward and the step), so whichever phase peaks,
    // the peak rises by exactly 2 GiB (to rounding, 1 KiB).
    const double rise = buffered.peak_allocated.value - standard.peak_allocated.value;
    return std::fabs(rise - 2 * GiB) < 1024 ? 0 : 1;
}
