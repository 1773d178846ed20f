// Concept checks of every policy the planner and the estimator are composed from, positive and negative, and the
// named rebinding that swaps one policy while keeping the others.
#include <catch2/catch.hpp>

#include <type_traits>

#include "frenzy/model/presets.hpp"
#include "frenzy/plan/planner.hpp"

using namespace frenzy;

namespace {
struct nothing {};
struct wrong_estimate {  // returns the wrong type
    double estimate(const job_spec&) const { return 0; }
};
struct wrong_predict {  // takes too few arguments
    step_estimate predict(const job_spec&) const { return {}; }
};
struct estimate_without_floor {
    memory_report estimate(const job_spec&) const { return {}; }
};
struct fewest_gpus {
    double score(const plan& p, const plan_options&) const { return p.gpus; }
};
struct constant_time {
    step_estimate predict(const job_spec&, const gpu_type&, const topology&) const {
        step_estimate e;
        e.step_time = seconds{1};
        e.tokens_per_s = 1;
        return e;
    }
};
}  // namespace

TEST_CASE("policy concepts accept the defaults and reject look-alikes") {
    static_assert(MemoryModel<memory_estimator> && !MemoryModel<nothing> && !MemoryModel<wrong_estimate>);
    static_assert(BoundedMemoryModel<memory_estimator> && MemoryModel<estimate_without_floor> &&
                  !BoundedMemoryModel<estimate_without_floor>);
    static_assert(StepTimeModel<step_time_model> && !StepTimeModel<nothing> && !StepTimeModel<wrong_predict>);
    static_assert(SearchSpace<divisor_search_space> && !SearchSpace<nothing>);
    static_assert(Objective<selectable_objective> && Objective<fewest_gpus> && !Objective<nothing>);
    static_assert(ModelStatePolicy<sharded_model_states> && !ModelStatePolicy<nothing>);
    static_assert(ActivationPolicy<transformer_activations> && !ActivationPolicy<nothing>);
    static_assert(OverheadPolicy<framework_overheads> && !OverheadPolicy<nothing>);
    CHECK(StepTimeModel<constant_time>);
}

TEST_CASE("one policy is swapped by name, the others keep their defaults") {
    using by_gpus = planner::with_objective<fewest_gpus>;
    static_assert(std::is_same_v<by_gpus, basic_planner<memory_estimator, step_time_model, divisor_search_space, fewest_gpus>>);
    using timed = planner::with_time_model<constant_time>;
    static_assert(std::is_same_v<timed, basic_planner<memory_estimator, constant_time>>);
    static_assert(std::is_same_v<memory_estimator::with_overheads<framework_overheads>, memory_estimator>);
    // a planner over a memory model without a floor still plans (no pruning by the floor)
    job_spec job;
    job.model = preset("gpt2");
    job.training = {.seq_len = 1024, .micro_batch = 1, .global_batch = 8, .total_tokens = 1e8};
    cluster_spec c;
    c.nodes = {{"a", "a100-80g", 8, 1}};
    const auto r = by_gpus{}.plan(job, c);
    REQUIRE(!r.plans.empty());
    CHECK(r.plans.front().gpus == 1);  // the fewest-GPU objective ranks the single-GPU plan first (gpt2 fits one card)
}
