// Builds against the installed frenzy package: a 7B model's parameter count and a version check, and the README's
// C++ example as written there (CMakeLists.txt copies its ```cpp block into readme_example.inc).
#ifdef FRENZY_README_EXAMPLE
#include "readme_example.inc"
#endif
#include <frenzy/frenzy.hpp>

#include <cstdio>

int main() {
    frenzy::transformer_spec m{.name = "llama-like-7b", .layers = 32, .hidden = 4096, .heads = 32,
                               .ffn_hidden = 11008, .activation = frenzy::activation::swiglu, .vocab = 32000,
                               .position_embedding = frenzy::position_embedding::rope,
                               .norm = frenzy::norm_kind::rmsnorm, .bias = false};
    const double n = frenzy::total_parameters(m);
    std::printf("frenzy %s: %.4g parameters\n", frenzy::version_string, n);
    if (!(n > 6.7e9 && n < 6.8e9)) return 1;  // Llama 2 7B: 6,738,415,616
#ifdef FRENZY_README_EXAMPLE
    // The README's 8B job at 8192 tokens with the optimizer sharded over dp 8: weights, fp32 gradients and a
    // twelve-byte optimizer over 8 are above 40 GiB before activations, more than half an H100's 80 GB; a verdict and
    // a speed come back, and the planner finds plans on 16 A100s and 8 H100s.
    const double gib = e.memory.peak_allocated.value / (1024.0 * 1024.0 * 1024.0);
    std::printf("README example: %.1f GiB, %s, %zu plans\n", gib, e.fit && e.fit->fits ? "fits" : "does not fit",
                plans.plans.size());
    if (!e.fit || !e.speed || gib < 40 || plans.plans.empty()) return 1;
#endif
    return 0;
}
