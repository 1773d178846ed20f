#pragma once
// The policy concepts the planner and the estimate are composed from: the memory model and the step-time model.
// (The search space and objective concepts sit in plan/planner.hpp beside their defaults.)
#include <concepts>

#include "frenzy/core/units.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/breakdown.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// Memory model: MARP's interface (memory/estimator.hpp); throws config_error on invalid layouts.
template <class M>
concept MemoryModel = requires(const M& m, const job_spec& j) {
    { m.estimate(j) } -> std::same_as<memory_report>;
};
/// Step-time model: perf/step_time.hpp's interface.
template <class T>
concept StepTimeModel = requires(const T& t, const job_spec& j, const gpu_type& g, const topology& topo) {
    { t.predict(j, g, topo) } -> std::same_as<step_estimate>;
};
/// A memory model that also offers a cheap floor under its estimate (used for pruning; optional).
template <class M>
concept BoundedMemoryModel = MemoryModel<M> && requires(const M& m, const job_spec& j) {
    { m.lower_bound(j) } -> std::same_as<bytes>;
};

static_assert(BoundedMemoryModel<memory_estimator>);
static_assert(StepTimeModel<step_time_model>);

}  // namespace frenzy
