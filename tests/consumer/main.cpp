// Builds against the installed frenzy package: a 7B model's parameter count and a version check.
#include <frenzy/frenzy.hpp>

#include <cstdio>

int main() {
    frenzy::transformer_spec m{.name = "llama-like-7b", .layers = 32, .hidden = 4096, .heads = 32,
                               .ffn_hidden = 11008, .activation = frenzy::activation::swiglu, .vocab = 32000,
                               .position_embedding = frenzy::position_embedding::rope,
                               .norm = frenzy::norm_kind::rmsnorm, .bias = false};
    const double n = frenzy::total_parameters(m);
    std::printf("frenzy %s: %.4g parameters\n", frenzy::version_string, n);
    return (n > 6.7e9 && n < 6.8e9) ? 0 : 1;  // Llama 2 7B: 6,738,415,616
}
