#pragma once
// Llama-2-7B under Megatron with the distributed optimizer on 2 GPUs, and the first stage's model states and
// activations: the job the Megatron-flag and NVFP4 tests derive their figures from by hand.
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

namespace megatron_llama7b {
// h 4096, ffn 11008, 32 layers, vocab 32000 (a multiple of Megatron's 128 padding at tp 1).
inline constexpr double h = 4096, ffn = 11008, layers = 32, s = 2048;
inline constexpr double layer_linears = 4 * h * h + 3 * h * ffn;  // 202,375,168 GEMM weights a layer

inline frenzy::job_spec job(frenzy::precision p = frenzy::precision::bf16_mixed) {
    frenzy::job_spec j;
    j.model = frenzy::preset("llama-2-7b");
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 2, .precision = p};
    j.parallel = {.dp = 2, .sharding = frenzy::sharding::optimizer};  // the distributed optimizer
    j.runtime.framework = frenzy::frameworks::megatron::handle;
    return j;
}
inline frenzy::model_state_bytes states(const frenzy::job_spec& j) {
    const auto f = frenzy::profile_of(j);
    const auto l = frenzy::stage_layouts(j, f).front();
    return frenzy::method_model_states(j, l, f, frenzy::sharded_model_states{}.model_states(j, l, f));
}
inline frenzy::activation_bytes acts(const frenzy::job_spec& j) {
    const auto f = frenzy::profile_of(j);
    const auto l = frenzy::stage_layouts(j, f).front();
    return frenzy::method_activations(j, l, f, frenzy::transformer_activations{}.activations(j, l, f));
}
}  // namespace megatron_llama7b
