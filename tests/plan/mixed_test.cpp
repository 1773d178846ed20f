// Heterogeneous pipeline plans (plan/mixed.hpp): the layer spread, the per-stage layout they rest on
// (parallel.stage_layers), the step time composed from the single-type model's parts, hand-derived link sends, the
// memory of every stage on its own type, and the planner's search on a V100 + T4 cluster where T4 alone cannot run
// a 13B job.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "frenzy/frameworks/megatron/options.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/plan/mixed_search.hpp"
#include "frenzy/plan/planner.hpp"

using namespace frenzy;

namespace {

job_spec mixed_job(const std::string& model = "llama-2-13b") {
    job_spec j;
    j.model = preset(model);
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 256, .total_tokens = 1e10};
    j.runtime.framework = frameworks::megatron::handle;
    return j;
}

gpu_pool mixed_pool(const std::string& gpu, int per_node, int nodes) {
    return {gpu_catalog{}.at(gpu), per_node, nodes, 0.0};
}

/// `job` as mixed plan `p` runs it: its precision, micro-batch and layout (the per-stage layers included).
job_spec job_of_mixed(const job_spec& job, const plan& p) {
    job_spec j = job;
    j.training.precision = p.precision;
    j.training.micro_batch = p.micro_batch;
    j.parallel = p.parallel;
    return j;
}

/// The pool of GPU type `name` (which the test's cluster has).
const gpu_pool& pool_named(const std::vector<gpu_pool>& pools, const std::string& name) {
    return *std::find_if(pools.begin(), pools.end(), [&](const gpu_pool& q) { return q.gpu.name == name; });
}

cluster_spec v100_t4_cluster() {
    cluster_spec c;
    c.nodes = {{"v100", "v100-32g", 8, 2}, {"t4", "t4", 4, 2}};
    validate(c);
    return c;
}

}  // namespace

TEST_CASE("spread_layers: even inside each group, extra layers on the middle stages first") {
    // 6 layers on one stage, then 34 on two: 17 + 17
    CHECK(spread_layers(std::array<std::int64_t, 2>{6, 34}, std::array<std::int64_t, 2>{1, 2}) ==
          std::vector<std::int64_t>{6, 17, 17});
    // 7 on stages 0-1 (stage 0 is the pipeline's first: the extra goes to stage 1), 33 on stages 2-3 (stage 3 is the
    // last: the extra goes to stage 2)
    CHECK(spread_layers(std::array<std::int64_t, 2>{7, 33}, std::array<std::int64_t, 2>{2, 2}) ==
          std::vector<std::int64_t>{3, 4, 17, 16});
    // a group of only the first and last stage: the extra goes to the first
    CHECK(spread_layers(std::array<std::int64_t, 1>{5}, std::array<std::int64_t, 1>{2}) == std::vector<std::int64_t>{3, 2});
}

TEST_CASE("parallel.stage_layers: validated, and an even layout is the even split bit for bit") {
    auto j = mixed_job("llama-3.1-8b");  // 32 layers
    j.parallel = {.dp = 1, .pp = 2};
    const memory_estimator est;
    const auto even = est.estimate(j);
    j.parallel.stage_layers = {16, 16};
    const auto laid = est.estimate(j);
    REQUIRE(laid.stages.size() == 2);
    CHECK(laid.stages[0] == even.stages[0]);
    CHECK(laid.stages[1] == even.stages[1]);
    CHECK(laid.peak_reserved.value == even.peak_reserved.value);
    // more layers on the first stage: its parameters grow by the moved layers' share, the last stage's shrink
    j.parallel.stage_layers = {20, 12};
    const auto uneven = est.estimate(j);
    const double per_layer = (even.stages[0].parameters - uneven.stages[0].parameters) / (16.0 - 20.0);
    CHECK(per_layer == Approx(count_parameters(j.model, j.model.vocab, 0).dense_layer()).epsilon(1e-9));
    CHECK(uneven.stages[1].parameters == Approx(even.stages[1].parameters - 4 * per_layer).epsilon(1e-12));

    auto bad = [&](std::vector<std::int64_t> layers, std::int64_t pp, const std::string& what) {
        auto k = mixed_job("llama-3.1-8b");
        k.parallel.pp = pp;
        k.parallel.stage_layers = std::move(layers);
        CHECK_THROWS_WITH(validate(k), Catch::Contains(what));
    };
    bad({16, 15}, 2, "parallel.stage_layers adds up to 31 layers; model.layers=32");
    bad({16, 16}, 4, "parallel.stage_layers has 2 entries; it needs one per stage (parallel.pp=4)");
    bad({32, 0}, 2, "parallel.stage_layers[1]=0 must be between 1 and model.layers=32");
    auto k = mixed_job("llama-3.1-8b");
    k.parallel = {.pp = 2, .first_stage_layers = 10, .stage_layers = {10, 22}};
    CHECK_THROWS_WITH(validate(k), Catch::Contains("cannot be combined"));
    k.parallel = {.pp = 2, .stage_layers = {10, 22}};
    k.runtime.framework = frameworks::deepspeed::handle;
    CHECK_THROWS_WITH(validate(k), Catch::Contains("not supported by runtime.framework=\"deepspeed\""));
}

TEST_CASE("Megatron's layout string: written and read back, and what is not read is an error naming the option") {
    CHECK(megatron_pipeline_layout({6, 17, 17}) == "Et*6|t*17|t*17L");
    CHECK(megatron_pipeline_layout({1, 1}) == "Et|tL");
    CHECK(parse_megatron_pipeline_layout("Et*6|t*17|t*17L", 3) == std::vector<std::int64_t>{6, 17, 17});
    // Megatron's own spellings: groups repeated with (...)*n, runs with t*n, cosmetic commas
    CHECK(parse_megatron_pipeline_layout("Ett|(tt|)*2,tL", 4) == std::vector<std::int64_t>{2, 2, 2, 1});
    CHECK_THROWS_WITH(parse_megatron_pipeline_layout("Et*6|m|L", 3), Catch::Contains("--pipeline-model-parallel-layout"));
    CHECK_THROWS_WITH(parse_megatron_pipeline_layout("Et*6|t*6L", 4), Catch::Contains("2 stages for --pipeline-model-parallel-size 4"));
    CHECK_THROWS_WITH(parse_megatron_pipeline_layout("t*6|Et*6L", 2), Catch::Contains("E (the embedding) must come first"));
    CHECK_THROWS_WITH(parse_megatron_pipeline_layout("E(t|)*99999999L", 2), Catch::Contains("repeat count"));
}

TEST_CASE("evaluate_mixed: one group over the whole pipeline is the single-type prediction") {
    // (m - 1) x slot + pp x slot + tail = (m + pp - 1) x slot + tail: the single-type model's 1F1B step
    auto j = mixed_job();
    j.parallel = {.dp = 2, .tp = 4, .pp = 4, .sequence_parallel = true, .sharding = sharding::optimizer,
                  .recompute = recompute::selective, .stage_layers = {10, 10, 10, 10}};
    j.training.precision = precision::fp16_mixed;
    const auto pool = mixed_pool("v100-32g", 8, 4);
    const std::array<stage_group_shape, 1> one{{{&pool, 4}}};
    const auto ev = evaluate_mixed(j, std::span<const stage_group_shape>(one), memory_estimator{}, step_time_model{}, plan_options{});
    REQUIRE(ev.plan);
    const auto single = step_time_model{}.predict(job_on(j, pool.gpu), pool.gpu, topology{8, 0.0});
    CHECK(ev.plan->step_time.value == Approx(single.step_time.value).epsilon(1e-12));
    CHECK(ev.plan->mfu == Approx(single.mfu).epsilon(1e-12));
}

TEST_CASE("evaluate_mixed: a V100 + T4 pipeline, its link sends and step time derived by hand") {
    // Llama 2 13B (hidden 5120), seq 4096, micro-batch 1, tp 4 with sequence parallelism, fp16: one micro-batch's
    // activations between stages are 4096 x 5120 x 2 B / 4 = 10,485,760 B. T4 nodes (PCIe, 4 GPUs) have one
    // 12.5 GB/s port: one rank's share of it at 90% is 0.9 x 12.5 / 4 = 2.8125 GB/s; V100 nodes (NVLink, 8 GPUs)
    // 12.5 GB/s per GPU: 0.9 x 100 / 8 = 11.25 GB/s. The link is the slower: 2.8125 GB/s, and a send costs 10 us of
    // latency plus the bytes: forward and backward, 2 x (1e-5 + 10485760 / 2.8125e9) = 0.0074766 s.
    auto j = mixed_job();
    j.training.precision = precision::fp16_mixed;
    j.parallel = {.dp = 2, .tp = 4, .pp = 3, .sequence_parallel = true, .sharding = sharding::optimizer,
                  .recompute = recompute::selective, .stage_layers = {6, 17, 17}};
    const auto t4 = mixed_pool("t4", 4, 2), v100 = mixed_pool("v100-32g", 8, 2);
    CHECK(detail::link_GBps(t4, v100) == Approx(2.8125).epsilon(1e-12));
    const double boundary = 2 * (1e-5 + 10485760.0 / 2.8125e9);
    CHECK(detail::boundary_seconds(j, 2.8125) == Approx(boundary).epsilon(1e-12));

    const std::array<stage_group_shape, 2> shape{{{&t4, 1}, {&v100, 2}}};
    const auto ev = evaluate_mixed(j, std::span<const stage_group_shape>(shape), memory_estimator{}, step_time_model{}, plan_options{});
    REQUIRE(ev.plan);
    const auto& p = *ev.plan;
    REQUIRE(p.groups.size() == 2);
    CHECK(p.groups[0].gpu == "t4");
    CHECK(p.groups[0].gpus == 8);   // 1 stage x tp 4 x dp 2
    CHECK(p.groups[0].nodes == 2);
    CHECK(p.groups[0].layers == 6);
    CHECK(p.groups[1].gpus == 16);  // 2 stages
    CHECK(p.groups[1].layers == 34);
    // each group's slot: the single-type model's micro-batch slot of its slowest stage, at least the link send
    const auto f = forward_flops_per_token(j.model, j.training.seq_len);
    double slots[2], tails[2];
    for (int k = 0; k < 2; ++k) {
        const auto& pool = k == 0 ? t4 : v100;
        const auto jk = job_on(j, pool.gpu);
        const auto first = k == 0 ? 0 : 1, last = k == 0 ? 1 : 3;
        const auto b = step_time_model{}.predict(jk, pool.gpu, topology{pool.gpus_per_node, 0.0},
                                                 bottleneck_stage(jk, f, first, last)).parts;
        slots[k] = b.micro_batch + std::max(0.0, boundary - b.pp_exposed_mb);
        tails[k] = b.dp_exposed + b.param_gather + b.optimizer;
        CHECK(p.groups[static_cast<std::size_t>(k)].slot_s == Approx(slots[k]).epsilon(1e-12));
    }
    // 1F1B over 256 / (1 x 2) = 128 micro-batches: 127 x the slowest slot + each stage's slot once + the slower tail
    const double step = 127 * std::max(slots[0], slots[1]) + 1 * slots[0] + 2 * slots[1] + std::max(tails[0], tails[1]);
    CHECK(p.step_time.value == Approx(step).epsilon(1e-12));
    CHECK(p.tokens_per_s == Approx(256.0 * 4096 / step).epsilon(1e-12));
    // MFU against both types' fp16 peaks: 8 T4s and 16 V100s
    const double peak = 8 * t4.gpu.peak_flops(precision::fp16_mixed) + 16 * v100.gpu.peak_flops(precision::fp16_mixed);
    CHECK(p.mfu == Approx(step_flops(j).model().value / (step * peak)).epsilon(1e-12));
    // memory: each stage on its own GPU, the fullest per group, as the estimator reports the stage
    const auto rep_t4 = memory_estimator{}.estimate(job_on(j, t4.gpu));
    CHECK(p.groups[0].peak_reserved.value == rep_t4.stages[0].peak_reserved.value);
    CHECK(p.groups[0].capacity.value == Approx(0.95 * t4.gpu.memory().value));
}

TEST_CASE("evaluate_mixed: a stage that does not fit its own type is refused, and the group is named") {
    auto j = mixed_job();
    j.training.precision = precision::fp16_mixed;
    // 38 of 40 layers on one T4 stage of tp 4: about 25 GB of fp16 weights and Adam states per GPU before
    // activations, on 15 GB cards
    j.parallel = {.dp = 1, .tp = 4, .pp = 2, .sequence_parallel = true, .stage_layers = {38, 2}};
    const auto t4 = mixed_pool("t4", 4, 2), v100 = mixed_pool("v100-32g", 8, 2);
    const std::array<stage_group_shape, 2> shape{{{&t4, 1}, {&v100, 1}}};
    const auto ev = evaluate_mixed(j, std::span<const stage_group_shape>(shape), memory_estimator{}, step_time_model{}, plan_options{});
    CHECK_FALSE(ev.plan);
    CHECK(ev.over == 1u);  // the T4 group only
    CHECK_THAT(ev.why, Catch::Contains("t4"));
}

TEST_CASE("plan --mixed on V100 + T4: a 13B job T4s cannot run alone gets pipelines over both, every stage within its memory") {
    const auto c = v100_t4_cluster();
    plan_options opt;
    opt.mixed = true;
    const auto job = mixed_job();
    const auto r = planner{}.plan(job, c, opt);
    REQUIRE_FALSE(r.mixed.empty());
    bool t4_alone = false;
    for (const auto& p : r.plans) t4_alone |= p.gpu == "t4";
    CHECK_FALSE(t4_alone);
    const memory_estimator est;
    const auto pools = gpu_pools(c);
    for (const auto& p : r.mixed) {
        INFO("mixed plan of " << p.gpus << " GPUs, pp " << p.parallel.pp);
        CHECK(p.framework == frameworks::megatron::handle);
        CHECK(p.precision == precision::fp16_mixed);  // the bf16 job on V100 and T4 (no bf16 tensor cores)
        REQUIRE(p.groups.size() == 2);
        CHECK(p.groups[0].gpu != p.groups[1].gpu);
        std::int64_t layers = 0;
        for (auto l : p.parallel.stage_layers) layers += l;
        CHECK(layers == 40);
        CHECK(static_cast<std::int64_t>(p.parallel.stage_layers.size()) == p.parallel.pp);
        // the split never puts more layers on a stage than its memory holds: every stage fits its own type
        const job_spec j = job_of_mixed(job, p);
        for (const auto& g : p.groups) {
            const auto& pool = pool_named(pools, g.gpu);
            CHECK(g.gpus <= pool.gpus());
            const auto rep = est.estimate(job_on(j, pool.gpu));
            for (auto s = g.first_stage; s < g.first_stage + g.stages; ++s)
                CHECK(rep.stages[static_cast<std::size_t>(s)].peak_reserved.value * (1 + rep.uncertainty) <=
                      usable_memory(pool.gpu).value);
        }
    }
    // best first by the objective (time: tokens/s, weighed by the error band)
    for (std::size_t i = 1; i < r.mixed.size(); ++i)
        CHECK(mixed_score(r.mixed[i - 1], opt) * (1 + detail::band_weight * r.mixed[i - 1].rel_error_band) <=
              mixed_score(r.mixed[i], opt) * (1 + detail::band_weight * r.mixed[i].rel_error_band));
}

TEST_CASE("plan --mixed: the split is the balanced one within memory (one layer either way is not faster)") {
    const auto c = v100_t4_cluster();
    plan_options opt;
    opt.mixed = true;
    const auto job = mixed_job();
    const auto r = planner{}.plan(job, c, opt);
    const auto pools = gpu_pools(c);
    REQUIRE_FALSE(r.mixed.empty());
    for (const auto& p : r.mixed) {
        INFO("mixed plan of " << p.gpus << " GPUs, pp " << p.parallel.pp);
        job_spec j = job_of_mixed(job, p);
        const std::array<stage_group_shape, 2> shape{{{&pool_named(pools, p.groups[0].gpu), p.groups[0].stages},
                                                      {&pool_named(pools, p.groups[1].gpu), p.groups[1].stages}}};
        const std::array<std::int64_t, 2> stages{p.groups[0].stages, p.groups[1].stages};
        for (int d : {-1, 1}) {
            const std::int64_t na = p.groups[0].layers + d;
            if (na < stages[0] || 40 - na < stages[1]) continue;
            j.parallel.stage_layers = spread_layers(std::array<std::int64_t, 2>{na, 40 - na}, stages);
            const auto ev = evaluate_mixed(j, std::span<const stage_group_shape>(shape), memory_estimator{}, step_time_model{}, opt);
            if (ev.plan) CHECK(ev.plan->tokens_per_s <= p.tokens_per_s * (1 + 1e-12));
        }
    }
}

TEST_CASE("plan --mixed: frameworks other than Megatron-LM and one-type clusters say why there are none") {
    plan_options opt;
    opt.mixed = true;
    auto job = mixed_job();
    job.runtime.framework = frameworks::fsdp::handle;
    const auto r = planner{}.plan(job, v100_t4_cluster(), opt);
    CHECK(r.mixed.empty());
    CHECK_THAT(r.mixed_note, Catch::Contains("need Megatron-LM"));
    cluster_spec one;
    one.nodes = {{"v100", "v100-32g", 8, 2}};
    validate(one);
    const auto r1 = planner{}.plan(mixed_job(), one, opt);
    CHECK(r1.mixed.empty());
    CHECK_THAT(r1.mixed_note, Catch::Contains("two GPU types"));
    // without --mixed, nothing is searched
    CHECK(planner{}.plan(mixed_job(), v100_t4_cluster()).mixed_note.empty());
}

namespace {
/// The default step-time model without its parts (step_parts, micro_batch_parts): the mixed search then has no
/// rates to bound with and tries every layout (plan_mixed's speed bound and the layout prunes are all skipped).
struct predict_only_time {
    step_time_model t;
    step_estimate predict(const job_spec& j, const gpu_type& g, const topology& topo) const { return t.predict(j, g, topo); }
    step_estimate predict(const job_spec& j, const gpu_type& g, const topology& topo, const stage_load& s) const {
        return t.predict(j, g, topo, s);
    }
};
/// What the split evaluation tests share: a V100 + T4 pair and the mixed job in fp16 (V100 and T4 have no bf16).
struct split_fixture {
    cluster_spec c = v100_t4_cluster();
    std::vector<gpu_pool> pools = gpu_pools(c);
    const gpu_pool& a = pool_named(pools, "v100-32g");
    const gpu_pool& b = pool_named(pools, "t4");
    memory_estimator mem{};
    step_time_model time{};
    plan_options opt{};
    job_spec j = fp16(mixed_job());
    search_axes ax = divisor_search_space{}.axes(j, a, opt);
    static job_spec fp16(job_spec x) {
        x.training.precision = precision::fp16_mixed;
        return x;
    }
};
}  // namespace

TEST_CASE("mixed split evaluation: the slots, memory verdict and plan of each split are evaluate_mixed's") {
    split_fixture f;
    auto& [c, pools, a, b, mem, time, opt, j, ax] = f;
    for (auto rc : {recompute::none, recompute::full}) {
        for (std::int64_t sa : {1, 2}) {
            const std::int64_t sb = 2;
            detail::set_layout(j, j.runtime, ax, frameworks::megatron::handle, 4, sa + sb, 1, 1, sharding::none, 1, 1, opt);
            j.parallel.recompute = rc;
            const std::array<stage_group_shape, 2> shape{{{&a, sa}, {&b, sb}}};
            job_spec jj = j;
            detail::split_evaluator<memory_estimator, step_time_model> ev(jj, a, b, sa, sb, mem, time, opt);
            for (std::int64_t na = sa; na <= j.model.layers - sb; ++na) {
                INFO("rc " << static_cast<int>(rc) << " sa " << sa << " na " << na);
                j.parallel.stage_layers = spread_layers(std::array{na, j.model.layers - na}, std::array{sa, sb});
                const auto timed = evaluate_mixed(j, shape, mem, time, opt, false);
                const auto slots = ev.slots(na);
                REQUIRE(slots.has_value() == timed.plan.has_value());
                if (slots) CHECK(((*slots)[0] == timed.plan->groups[0].slot_s && (*slots)[1] == timed.plan->groups[1].slot_s));
                const auto whole = evaluate_mixed(j, shape, mem, time, opt, true);
                const unsigned bits = ev.memory_bits(na);
                CHECK(bits == (whole.plan ? 0u : whole.over != 0 ? whole.over : 4u));
                if (bits == 0) CHECK(ev.evaluate(na).plan == whole.plan);
                for (std::size_t k = 0; k < 2; ++k) {  // one group deciding: its bit alone where it is over
                    const unsigned own = 1u << k;
                    CHECK(ev.memory_bits(na, k) == ((bits & own) != 0 ? own : bits));
                }
            }
        }
    }
}

TEST_CASE("mixed split evaluation: stages shared across a layout shape's points, dp and type pairs, and an evaluator moved between points, give the same answers") {
    // plan/mixed_split.hpp split_stages: each group's bottleneck stage and memory stages by split, filled by the first
    // split search of a layout shape (tp, stage counts) and read by the others: other recompute levels, micro-batches,
    // dp and pairs of types (the search keeps one per shape: mixed_search::shapes_). split_evaluator::follow_point:
    // one evaluator per layout, moved to each point. A stage read at the wrong group or split, one that depended on
    // what the shape leaves out, or a job or send left at the last point, would change a slot, a memory verdict or a
    // plan: exact equality with an evaluator made at the point that computes every stage itself.
    split_fixture f;
    auto& [c, pools, a, b, mem, time, opt, j, ax] = f;
    using evaluator = detail::split_evaluator<memory_estimator, step_time_model>;
    for (std::int64_t sa : {1, 2}) {
        const std::int64_t sb = 2;
        evaluator::shared shared;
        std::int64_t compared = 0, fitting = 0;
        for (const auto& [first, second] : {std::pair{&a, &b}, std::pair{&b, &a}})
            for (std::int64_t dp : {1, 2}) {
                detail::set_layout(j, j.runtime, ax, frameworks::megatron::handle, 4, sa + sb, 1, 1, sharding::none, 1, dp, opt);
                job_spec moved_job = j;
                evaluator moved(moved_job, *first, *second, sa, sb, mem, time, opt);
                for (auto rc : {recompute::full, recompute::selective, recompute::none})
                    for (std::int64_t mb : {1, 2}) {
                        j.parallel.recompute = moved_job.parallel.recompute = rc;
                        j.training.micro_batch = moved_job.training.micro_batch = mb;
                        moved.follow_point();
                        job_spec alone_job = j, shared_job = j;
                        evaluator alone(alone_job, *first, *second, sa, sb, mem, time, opt);
                        evaluator with(shared_job, *first, *second, sa, sb, mem, time, opt, &shared);
                        for (std::int64_t na = sa; na <= j.model.layers - sb; ++na) {
                            INFO("sa " << sa << " first " << first->gpu.name << " dp " << dp << " rc " << static_cast<int>(rc)
                                       << " mb " << mb << " na " << na);
                            const auto want = alone.slots(na);
                            const auto got = with.slots(na);
                            REQUIRE(got.has_value() == want.has_value());
                            if (!want) continue;
                            CHECK((*got)[0] == (*want)[0]);
                            CHECK((*got)[1] == (*want)[1]);
                            CHECK(moved.slots(na) == want);
                            const unsigned bits = alone.memory_bits(na);
                            CHECK(with.memory_bits(na) == bits);
                            CHECK(moved.memory_bits(na) == bits);
                            if (bits == 0) {
                                const auto plan = alone.evaluate(na).plan;
                                CHECK(with.evaluate(na).plan == plan);
                                CHECK(moved.evaluate(na).plan == plan);
                                ++fitting;
                            }
                            ++compared;
                        }
                    }
            }
        CHECK(compared > 0);
        CHECK(fitting > 0);
        for (std::size_t k = 0; k < 2; ++k) {  // every split filled
            CHECK(shared.by_group[k].size() == static_cast<std::size_t>(j.model.layers - sb + 1));
            CHECK(shared.memory[k].size() == static_cast<std::size_t>(j.model.layers - sb + 1));
        }
    }
}

TEST_CASE("mixed split evaluation: the time-balanced split is the same from every hint") {
    // plan/mixed_split.hpp time_balanced: a binary search within a bracket grown from the hint (the split search at
    // a layout's previous point) finds the start of the splits whose first-group slot reaches the second's; from any
    // hint, in range or not, the same start as the plain binary search over the whole range (no hint).
    split_fixture f;
    auto& [c, pools, a, b, mem, time, opt, j, ax] = f;
    std::int64_t searched = 0;
    for (std::int64_t sa : {1, 2, 3})
        for (auto rc : {recompute::full, recompute::none})
            for (std::int64_t mb : {1, 2}) {
                const std::int64_t sb = 2, lo = sa, hi = j.model.layers - sb;
                detail::set_layout(j, j.runtime, ax, frameworks::megatron::handle, 4, sa + sb, 1, 1, sharding::none, 1, 1, opt);
                j.parallel.recompute = rc;
                j.training.micro_batch = mb;
                detail::split_evaluator<memory_estimator, step_time_model> ev(j, a, b, sa, sb, mem, time, opt);
                const auto want = detail::time_balanced(ev, lo, hi, -1);
                REQUIRE(want);
                // the start by definition: the first split that reaches, hi where none does
                std::int64_t first = hi;
                for (std::int64_t na = lo; na < hi && first == hi; ++na)
                    if (const auto s = ev.slots(na); (*s)[0] >= (*s)[1]) first = na;
                CHECK(*want == first);
                for (std::int64_t hint = lo - 1; hint <= hi + 1; ++hint) {
                    INFO("sa " << sa << " rc " << static_cast<int>(rc) << " mb " << mb << " hint " << hint);
                    CHECK(detail::time_balanced(ev, lo, hi, hint) == want);
                    ++searched;
                }
            }
    CHECK(searched > 100);
}

TEST_CASE("plan --mixed: the pruned layout search keeps the mixed plans of the search that prunes nothing") {
    cluster_spec three;
    three.nodes = {{"a100", "a100-80g", 8, 1}, {"v100", "v100-32g", 8, 2}, {"t4", "t4", 4, 4}};
    validate(three);
    using unpruned = planner::with_time_model<predict_only_time>;
    cluster_spec small;  // where the 70B benchmark keeps mixed plans (docs/perf-model.md), smaller
    for (const char* t : {"rtx-4090", "a10", "l4"}) small.nodes.push_back({t, t, 8, 8});
    validate(small);
    std::size_t kept = 0;
    for (const auto& c : {v100_t4_cluster(), three, small})
        for (const char* model : {"llama-2-13b", "llama-2-7b", "llama-3.1-70b"})
            for (auto objective : {plan_objective::time, plan_objective::gpu_hours}) {
            INFO(model << " on " << c.nodes.size() << " types, objective " << static_cast<int>(objective));
            plan_options opt;
            opt.mixed = true;
            opt.objective = objective;
            const auto job = mixed_job(model);
            const auto fast = planner{}.plan(job, c, opt);
            const auto plain = unpruned{}.plan(job, c, opt);
            REQUIRE(fast.plans == plain.plans);
            CHECK(fast.mixed == plain.mixed);  // every field of every group, exact
            CHECK(fast.mixed_note == plain.mixed_note);
            kept += fast.mixed.size();
        }
    CHECK(kept > 0);
}
