// Replacing one memory policy, the activations: a host whose training loop keeps the saved activations in CPU
// memory (torch.autograd.graph.save_on_cpu) swaps only the activation policy; model states and temporaries stay
// the defaults.
#include <cmath>
#include <cstdio>

#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

namespace {
/// The default activations, with the saved tensors on the host: only the short-lived working set (the loss's
/// logits, one layer's recompute) stays on the GPU.
struct saved_on_cpu {
    frenzy::activation_bytes activations(const frenzy::job_spec& j, const frenzy::stage_layout& l,
                                         const frenzy::framework_profile& f) const {
        auto a = frenzy::transformer_activations{}.activations(j, l, f);
        a.stored = frenzy::bytes{};
        return a;
    }
};
static_assert(frenzy::ActivationPolicy<saved_on_cpu>);
}  // namespace

int main() {
    using namespace frenzy;
    job_spec job;
    job.model = preset("llama-3.1-8b");
    job.training = {.seq_len = 8192, .micro_batch = 1, .global_batch = 8};
    job.parallel = {.dp = 8, .sharding = sharding::full};
    job.runtime.framework = frameworks::fsdp::handle;

    const auto standard = memory_estimator{}.estimate(job);
    const auto offloaded = memory_estimator::with_activations<saved_on_cpu>{}.estimate(job);  // one policy swapped
    // What the default policy stores for this (single-stage) job, asked directly.
    const auto f = profile_of(job);
    const auto acts = transformer_activations{}.activations(job, stage_layouts(job, f).front(), f);
    std::printf("Llama 3.1 8B, 8k tokens, FSDP on 8 GPUs: peak %.2f GiB, of which %.2f GiB saved activations\n",
                standard.peak_allocated.value / GiB, acts.stored.value / GiB);
    std::printf("with the saved activations in CPU memory: peak %.2f GiB\n", offloaded.peak_allocated.value / GiB);
    // Both peaks are in forward/backward (the breakdown holds activations), where the estimator sums the policies'
    // answers: the peak falls by exactly the stored activations (to rounding, 1 KiB), and nothing else moves.
    const bool in_backward = offloaded.stages.front().breakdown.activations.value > 0;
    const double drop = standard.peak_allocated.value - offloaded.peak_allocated.value;
    return in_backward && acts.stored.value > 0 && std::fabs(drop - acts.stored.value) < 1024 ? 0 : 1;
}
