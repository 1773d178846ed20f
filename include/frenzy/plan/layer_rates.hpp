#pragma once
// What one transformer layer of one sequence takes on a GPU type by the step-time model, alone or with its exposed
// parallel traffic: the rates the mixed search's speed bound (plan/mixed_search.hpp) divides a pipeline's layers by.
#include <array>

#include "frenzy/hw/gpu.hpp"
#include "frenzy/perf/flops.hpp"
#include "frenzy/perf/stage_load.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/plan/policies.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy::detail {

/// Seconds of one transformer layer of one micro-batch on one GPU of `g` at `j`'s tp, micro-batch, recompute and
/// precision: the step-time model's compute and exposed tensor-, context- and expert-parallel traffic of a one-layer
/// stage without the logits (a MoE's layer weighed by its share of MoE layers); what the speed bound divides the
/// layers by.
inline stage_load one_layer_stage(const job_spec& j, const token_flops& f) {
    stage_load one;
    one.layers = 1;
    one.moe_layers = j.model.is_moe()
                         ? static_cast<double>(j.model.moe_layers_below(j.model.layers)) / static_cast<double>(j.model.layers)
                         : 0.0;
    one.chunk_slots = 1;
    one.flops = f;
    return one;
}
template <StepPartsModel T>
double layer_seconds(const job_spec& j, const gpu_type& g, const T& time, const token_flops& f) {
    const auto b = time.step_parts(j, g, topology{}, one_layer_stage(j, f));
    return b.compute_mb + b.tp_exposed_mb + b.cp_exposed_mb + b.ep_mb;
}
/// The compute alone (no communication) of one transformer layer and of the output layer and loss (a stage of no
/// layers that holds them) for one micro-batch on one GPU of `g`: the step-time model's compute is additive over a
/// stage's layers and output layer, so the last stage's slot is at least its layers' compute and the output
/// layer's, whatever of the tensor-parallel traffic the output layer's GEMMs hide.
template <StepPartsModel T>
std::array<double, 2> bare_seconds(const job_spec& j, const gpu_type& g, const T& time, const token_flops& f) {
    stage_load logits;
    logits.logits = true;
    logits.flops = f;
    return {time.step_parts(j, g, topology{}, one_layer_stage(j, f)).compute_mb,
            time.step_parts(j, g, topology{}, logits).compute_mb};
}

}  // namespace frenzy::detail
