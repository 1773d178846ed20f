#pragma once
// The policy concepts the planner and the estimate are composed from: the memory model and the step-time model, each
// with the optional hooks a search uses when a model offers them (a host's model that offers them gets the same
// search as the default: the same pruning, the same mixed plans).
// (The search space and objective concepts sit in plan/planner.hpp beside their defaults.)
#include <concepts>
#include <cstdint>

#include "frenzy/core/units.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/breakdown.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/memory/search.hpp"
#include "frenzy/perf/gpu_facts.hpp"
#include "frenzy/perf/stage_load.hpp"
#include "frenzy/perf/step_breakdown.hpp"
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
/// A memory model with a search face (memory/search.hpp memory_search<M>: the estimator's, or a host's
/// specialisation): a layout's stages prepared once (stages_of, also for a range of stages: a mixed plan's group),
/// estimates and floors from them, bit for bit the model's own, a walk that stops once the requirement exceeds a
/// bound, and an estimate of a job already validated. Optional: without it the planner asks estimate(j) and
/// lower_bound(j) at every point (the same plans).
template <class M>
concept PreparedMemoryModel =
    MemoryModel<M> && requires(const M& m, const job_spec& j, typename memory_search<M>::prepared_stages& s) {
        { memory_search<M>(m).stages_of(j) } -> std::same_as<typename memory_search<M>::prepared_stages>;
        memory_search<M>(m).stages_of(j, s, std::int64_t{0}, std::int64_t{1});
        { memory_search<M>(m).estimate(j, s, false, 0.0) } -> std::same_as<memory_report>;
        { memory_search<M>(m).estimate_validated(j, s, false, 0.0) } -> std::same_as<memory_report>;
        { memory_search<M>(m).lower_bound(j, s) } -> std::same_as<bytes>;
    };

/// A step-time model that predicts `j` with its bottleneck stage given (perf/stage_load.hpp bottleneck_stage; the
/// same answer as predict(j, g, topo) for the job's own): the planner computes each layout's stage once for all its
/// points and GPU types, and mixed plans (plan/mixed.hpp) predict each group's stage range with it. Optional: a model
/// without it gets predict(j, g, topo) at every point and no mixed plans (plan_result::mixed_note says why).
template <class T>
concept StagedStepTimeModel =
    StepTimeModel<T> && requires(const T& t, const job_spec& j, const gpu_type& g, const topology& topo, const stage_load& s) {
        { t.predict(j, g, topo, s) } -> std::same_as<step_estimate>;
    };
/// A staged model that also gives predict's parts alone (step_parts: predict(j, g, topo, s).parts, bit for bit,
/// without its FLOP count, MFU and error band): what the speed bounds of the single-type and the mixed search read.
/// Optional: without it a search is not pruned by speed (the same plans, found more slowly).
template <class T>
concept StepPartsModel =
    StagedStepTimeModel<T> && requires(const T& t, const job_spec& j, const gpu_type& g, const topology& topo, const stage_load& s) {
        { t.step_parts(j, g, topo, s) } -> std::same_as<step_breakdown>;
    };
/// A model that gives step_parts of its prepared form: what it reads of a GPU type on a topology taken once
/// (prepare -> perf/gpu_facts.hpp), the parts from those facts (step_parts), the parts of one micro-batch slot that
/// read neither dp nor the sharding (micro_batch_parts), and those completed in place for a job that differs at most
/// in dp, the sharding and the offload (complete_step_parts). Each gives step_parts(j, g, topo, s) bit for bit; the
/// planner's pools and the mixed search's groups take the facts once, and a layout's dp and shardings share its
/// micro-batch parts. Optional: without it the planner asks step_parts(j, g, topo, s) (the same plans).
template <class T>
concept PreparedStepTimeModel =
    StepPartsModel<T> && requires(const T& t, const job_spec& j, const gpu_type& g, const topology& topo,
                                  const stage_load& s, const gpu_facts& f, step_breakdown& b) {
        { t.prepare(g, topo) } -> std::same_as<gpu_facts>;
        { t.step_parts(j, s, f) } -> std::same_as<step_breakdown>;
        { t.micro_batch_parts(j, s, f) } -> std::same_as<step_breakdown>;
        t.complete_step_parts(j, s, f, b);
    };

static_assert(BoundedMemoryModel<memory_estimator> && PreparedMemoryModel<memory_estimator>);
static_assert(StepTimeModel<step_time_model>);
static_assert(PreparedStepTimeModel<step_time_model>);  // every hook: the planner's fast path and mixed plans

}  // namespace frenzy
