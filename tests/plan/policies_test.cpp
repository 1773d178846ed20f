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
/// Host step-time models wrapping the default one (its answers, forwarded): one per set of hooks it offers.
struct plain_time {  // StepTimeModel alone
    step_time_model t;
    step_estimate predict(const job_spec& j, const gpu_type& g, const topology& topo) const { return t.predict(j, g, topo); }
};
struct staged_time : plain_time {  // + predict with the bottleneck stage given
    using plain_time::predict;
    step_estimate predict(const job_spec& j, const gpu_type& g, const topology& topo, const stage_load& s) const {
        return t.predict(j, g, topo, s);
    }
};
struct parts_time : staged_time {  // + the parts alone
    step_breakdown step_parts(const job_spec& j, const gpu_type& g, const topology& topo, const stage_load& s) const {
        return t.step_parts(j, g, topo, s);
    }
};
struct prepared_time : parts_time {  // + every prepared hook: the planner's whole fast path
    using parts_time::step_parts;
    gpu_facts prepare(const gpu_type& g, const topology& topo) const { return t.prepare(g, topo); }
    step_breakdown step_parts(const job_spec& j, const stage_load& s, const gpu_facts& f) const { return t.step_parts(j, s, f); }
    step_breakdown micro_batch_parts(const job_spec& j, const stage_load& s, const gpu_facts& f) const {
        return t.micro_batch_parts(j, s, f);
    }
    void complete_step_parts(const job_spec& j, const stage_load& s, const gpu_facts& f, step_breakdown& b) const {
        t.complete_step_parts(j, s, f, b);
    }
};
struct parts_without_stage : plain_time {  // step_parts but no staged predict: not a StepPartsModel
    step_breakdown step_parts(const job_spec& j, const gpu_type& g, const topology& topo, const stage_load& s) const {
        return t.step_parts(j, g, topo, s);
    }
};
struct staged_wrong_return : plain_time {  // the staged predict answers the wrong type
    using plain_time::predict;
    double predict(const job_spec&, const gpu_type&, const topology&, const stage_load&) const { return 0; }
};
struct prepared_without_completion : parts_time {  // prepared hooks but complete_step_parts missing
    using parts_time::step_parts;
    gpu_facts prepare(const gpu_type& g, const topology& topo) const { return t.prepare(g, topo); }
    step_breakdown step_parts(const job_spec& j, const stage_load& s, const gpu_facts& f) const { return t.step_parts(j, s, f); }
    step_breakdown micro_batch_parts(const job_spec& j, const stage_load& s, const gpu_facts& f) const {
        return t.micro_batch_parts(j, s, f);
    }
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
    // the search face (memory/search.hpp): the estimator's and any composition of its policies; not a look-alike's
    static_assert(PreparedMemoryModel<memory_estimator> && !PreparedMemoryModel<estimate_without_floor> &&
                  !PreparedMemoryModel<nothing>);
    static_assert(PreparedMemoryModel<memory_estimator::with_overheads<framework_overheads>>);
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

TEST_CASE("the step-time fast path's concepts accept the default and each host model by the hooks it offers") {
    static_assert(PreparedStepTimeModel<step_time_model> && StepPartsModel<step_time_model> &&
                  StagedStepTimeModel<step_time_model>);
    static_assert(StepTimeModel<plain_time> && !StagedStepTimeModel<plain_time> && !StepPartsModel<plain_time>);
    static_assert(StagedStepTimeModel<staged_time> && !StepPartsModel<staged_time>);
    static_assert(StepPartsModel<parts_time> && !PreparedStepTimeModel<parts_time>);
    static_assert(PreparedStepTimeModel<prepared_time>);
    static_assert(!StepPartsModel<parts_without_stage> && !StagedStepTimeModel<parts_without_stage>);
    static_assert(StepTimeModel<staged_wrong_return> && !StagedStepTimeModel<staged_wrong_return>);
    static_assert(StepPartsModel<prepared_without_completion> && !PreparedStepTimeModel<prepared_without_completion>);
    static_assert(!StagedStepTimeModel<constant_time> && !StagedStepTimeModel<nothing>);
    CHECK(PreparedStepTimeModel<prepared_time>);
}

namespace {
job_spec megatron_13b() {
    job_spec j;
    j.model = preset("llama-2-13b");
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 256, .total_tokens = 1e10};
    j.runtime.framework = frameworks::megatron::handle;
    return j;
}
cluster_spec v100_and_t4() {
    cluster_spec c;
    c.nodes = {{"v100", "v100-32g", 8, 2}, {"t4", "t4", 4, 2}};
    validate(c);
    return c;
}
}  // namespace

TEST_CASE("a host's step-time model with the fast-path hooks gets the default's plans and mixed plans, exactly") {
    plan_options opt;
    opt.mixed = true;
    const auto job = megatron_13b();
    plan_stats s0, s1;
    const auto want = planner{}.plan(job, v100_and_t4(), opt, &s0);
    REQUIRE(!want.plans.empty());
    REQUIRE(!want.mixed.empty());  // the default keeps pipelines over V100 + T4 for this job
    CHECK(want.mixed_note.empty());
    const auto host = planner::with_time_model<prepared_time>{}.plan(job, v100_and_t4(), opt, &s1);
    CHECK(host.plans == want.plans);
    CHECK(host.mixed == want.mixed);  // every field of every group
    CHECK(host.mixed_note == want.mixed_note);
    CHECK(s1.step_estimates == s0.step_estimates);  // the same search: the same pruning
    CHECK(s1.memory_estimates == s0.memory_estimates);
    // the staged predict alone is enough for mixed plans (its speed bounds read predict's parts: the same plans)
    const auto staged = planner::with_time_model<staged_time>{}.plan(job, v100_and_t4(), opt);
    CHECK(staged.plans == want.plans);
    CHECK(staged.mixed == want.mixed);
}

TEST_CASE("a host's step-time model with predict alone gets the default's single-type plans and no mixed plans") {
    plan_options opt;
    opt.mixed = true;
    const auto job = megatron_13b();
    const auto want = planner{}.plan(job, v100_and_t4(), opt);
    const auto host = planner::with_time_model<plain_time>{}.plan(job, v100_and_t4(), opt);
    REQUIRE(!want.plans.empty());
    CHECK(host.plans == want.plans);  // slower (no stage cache, no speed bound), the same answers bit for bit
    CHECK(host.infeasible == want.infeasible);
    CHECK(host.mixed.empty());
    CHECK_THAT(host.mixed_note, Catch::Contains("StagedStepTimeModel"));
    // the objective is the other condition: a host objective gets no mixed plans either, whatever the time model
    const auto by_gpus = planner::with_objective<fewest_gpus>{}.plan(job, v100_and_t4(), opt);
    CHECK(by_gpus.mixed.empty());
    CHECK_THAT(by_gpus.mixed_note, Catch::Contains("default objective"));
}
