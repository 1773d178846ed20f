// The planner's shortcuts change no answer: the memory model's prepared stages (memory/search.hpp stages_of), the estimate
// that stops once the job fits no GPU of the call, the step-time model's parts without its extras (step_parts),
// and the packed memo keys. Each is checked against the plain path bit for bit (==, no tolerance: the shortcuts
// run the same arithmetic in the same order, so any difference is a bug).
#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "frenzy/memory/estimator.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/plan/planner.hpp"
#include "frenzy/plan/prices.hpp"

using namespace frenzy;

namespace {
// LLaMA-3.1-70B (meta-llama/Llama-3.1-70B config.json) and Mixtral-8x7B (mistralai/Mixtral-8x7B-v0.1 config.json)
transformer_spec llama31_70b() {
    return {.name = "llama-3.1-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn_hidden = 28672,
            .activation = activation::swiglu, .vocab = 128256, .position_embedding = position_embedding::rope,
            .norm = norm_kind::rmsnorm, .bias = false};
}
transformer_spec mixtral_8x7b() {
    transformer_spec m{.name = "mixtral-8x7b", .layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8,
                       .ffn_hidden = 14336, .activation = activation::swiglu, .vocab = 32000,
                       .position_embedding = position_embedding::rope, .norm = norm_kind::rmsnorm, .bias = false};
    m.moe.experts = 8;
    m.moe.top_k = 2;
    return m;
}
job_spec make_job(transformer_spec m, std::int64_t seq, std::int64_t gb, framework fw) {
    job_spec j;
    j.model = std::move(m);
    j.training = {.seq_len = seq, .micro_batch = 1, .global_batch = gb, .total_tokens = 1e11};
    j.runtime.framework = fw;
    return j;
}
/// The default memory model seen only through the MemoryModel concept (estimate, lower_bound): the planner then
/// takes its plain path, with no prepared stages and no early stop.
struct plain_memory {
    memory_estimator m;
    memory_report estimate(const job_spec& j) const { return m.estimate(j); }
    bytes lower_bound(const job_spec& j) const { return m.lower_bound(j); }
};
/// The default step-time model seen only through the StepTimeModel concept.
struct plain_time {
    step_time_model t;
    step_estimate predict(const job_spec& j, const gpu_type& g, const topology& topo) const { return t.predict(j, g, topo); }
};
/// The step's parts `got` equal `want`'s bit for bit: the micro-batch parts, which must stay, and every piece
/// fill_data_parallel sets.
void check_same_parts(const step_breakdown& got, const step_breakdown& want) {
    CHECK(got.compute_mb == want.compute_mb);
    CHECK(got.kernels_mb == want.kernels_mb);
    CHECK(got.tp_exposed_mb == want.tp_exposed_mb);
    CHECK(got.pp_mb == want.pp_mb);
    CHECK(got.pp_exposed_mb == want.pp_exposed_mb);
    CHECK(got.shard_mb == want.shard_mb);
    CHECK(got.micro_batch == want.micro_batch);
    CHECK(got.micro_batches == want.micro_batches);
    CHECK(got.bubble_slots == want.bubble_slots);
    CHECK(got.pipeline == want.pipeline);
    CHECK(got.dp_sync == want.dp_sync);
    CHECK(got.dp_exposed == want.dp_exposed);
    CHECK(got.param_gather == want.param_gather);
    CHECK(got.optimizer == want.optimizer);
    CHECK(got.total == want.total);
}
void require_same(const plan_result& a, const plan_result& b) {
    REQUIRE(a.plans.size() == b.plans.size());
    for (std::size_t i = 0; i < a.plans.size(); ++i) REQUIRE(a.plans[i] == b.plans[i]);  // every field, exact
    REQUIRE(a.infeasible == b.infeasible);
}
}  // namespace

TEST_CASE("prepared stages give the estimate and floor of the plain path, bit for bit") {
    const memory_estimator mem;
    for (auto fw : {frameworks::megatron::handle, frameworks::deepspeed::handle, frameworks::fsdp::handle}) {
        job_spec j = make_job(fw == frameworks::megatron::handle ? mixtral_8x7b() : llama31_70b(), 4096, 256, fw);
        for (std::int64_t pp : {1, 4, 8}) {
            for (auto rc : {recompute::selective, recompute::full}) {  // full: FSDP's last stage is the peak
                j.parallel = {};
                j.parallel.tp = 4;
                j.parallel.pp = pp;
                j.parallel.dp = 2;
                j.parallel.ep = fw == frameworks::megatron::handle ? 2 : 1;
                j.parallel.sequence_parallel = true;
                j.parallel.sharding = fw == frameworks::fsdp::handle ? sharding::full : sharding::optimizer;
                j.parallel.recompute = rc;
                j.training.micro_batch = 2;
                const auto s = memory_search(mem).stages_of(j);
                const auto plain = mem.estimate(j);
                const auto fast = memory_search(mem).estimate(j, s);
                CHECK(fast.peak_reserved.value == plain.peak_reserved.value);
                CHECK(fast.peak_allocated.value == plain.peak_allocated.value);
                CHECK(fast.uncertainty == plain.uncertainty);
                CHECK(fast.parameters == plain.parameters);
                CHECK(fast.stages.size() == plain.stages.size());
                CHECK(memory_search(mem).estimate(j, s, false).stages.empty());
                CHECK(memory_search(mem).lower_bound(j, s).value == mem.lower_bound(j).value);
                // Stopping at x: the report's requirement either exceeds x (then so does the whole job's, which is at
                // least as large: a planner may conclude "fits no GPU with x usable bytes or fewer") or is the whole
                // job's. At or above the job's own requirement the walk never stops.
                const double req = required_memory(plain).value;
                CHECK(required_memory(memory_search(mem).estimate(j, s, false, req)).value == req);
                for (int k = 0; k <= 20; ++k) {
                    const double x = req * k / 20.0;
                    const double partial = required_memory(memory_search(mem).estimate(j, s, false, x)).value;
                    CHECK((partial > x || partial == req));
                    CHECK(partial <= req);
                }
            }
        }
    }
}

TEST_CASE("the walk without a per-stage list skips only stages another stage dominates, bit for bit") {
    // prepared_stages::walk leaves out the middle stages of the same shape as one before them (they hold no more
    // micro-batches in flight): every figure of the report, the floor and the early stop must be the full walk's.
    // The full walk is the same prepared stages with `walk` emptied. Exact (==): the same arithmetic per stage.
    const memory_estimator mem;
    int skipped = 0, ran = 0;
    for (auto fw : {frameworks::megatron::handle, frameworks::deepspeed::handle, frameworks::fsdp::handle})
        for (bool moe : {false, true})
            for (std::int64_t pp : {2, 4, 8, 16})
                for (auto sched : {pipeline_schedule::one_f_one_b, pipeline_schedule::interleaved, pipeline_schedule::gpipe})
                    for (auto rc : {recompute::none, recompute::selective, recompute::full})
                        for (std::int64_t mb : {1, 4, 16})  // 16 of a global batch of 64 at dp 2: 2 in flight, fewer than pp
                            for (int edges = 0; edges < 2; ++edges) {
                                job_spec j = make_job(moe ? mixtral_8x7b() : llama31_70b(), 4096, 64, fw);
                                j.parallel.tp = 2;
                                j.parallel.pp = pp;
                                j.parallel.dp = 2;
                                j.parallel.ep = moe && fw == frameworks::megatron::handle ? 2 : 1;
                                j.parallel.schedule = sched;
                                j.parallel.vpp = sched == pipeline_schedule::interleaved ? 2 : 1;
                                j.parallel.embedding_stage = j.parallel.loss_stage = edges == 1;
                                j.parallel.sequence_parallel = true;
                                j.parallel.sharding = fw == frameworks::fsdp::handle ? sharding::full : sharding::optimizer;
                                j.parallel.recompute = rc;
                                j.training.micro_batch = mb;
                                memory_report full;
                                try {
                                    full = mem.estimate(j);
                                } catch (const config_error&) {
                                    continue;  // a layout the framework rejects
                                }
                                ++ran;
                                const auto s = memory_search(mem).stages_of(j);
                                auto all = s;
                                all.walk.clear();
                                skipped += s.walk.size() < s.layouts.size() ? 1 : 0;
                                const auto fast = memory_search(mem).estimate(j, s, false);
                                CHECK(fast.peak_reserved.value == full.peak_reserved.value);
                                CHECK(fast.peak_allocated.value == full.peak_allocated.value);
                                CHECK(fast.bottleneck_stage == full.bottleneck_stage);
                                CHECK(fast.host_per_gpu.value == full.host_per_gpu.value);
                                CHECK(memory_search(mem).lower_bound(j, s).value == mem.lower_bound(j).value);
                                const double req = required_memory(full).value;
                                for (int k = 0; k <= 10; ++k) {  // the early stop: the same partial report
                                    const double x = req * k / 10.0;
                                    CHECK(required_memory(memory_search(mem).estimate(j, s, false, x)).value ==
                                          required_memory(memory_search(mem).estimate(j, all, false, x)).value);
                                }
                            }
    CHECK(ran > 200);
    CHECK(skipped > 100);  // the shortcut is taken (pp >= 4 has middle stages of one shape)
}

TEST_CASE("step_parts equals predict's parts, bit for bit") {
    const step_time_model t;
    const gpu_catalog cat;
    for (auto fw : {frameworks::megatron::handle, frameworks::fsdp::handle}) {
        job_spec j = make_job(llama31_70b(), 4096, 512, fw);
        for (std::int64_t pp : {1, 8}) {
            j.parallel = {};
            j.parallel.tp = 8;
            j.parallel.pp = pp;
            j.parallel.dp = 4;
            j.parallel.vpp = pp > 1 && fw == frameworks::megatron::handle ? 2 : 1;
            j.parallel.schedule = j.parallel.vpp > 1 ? pipeline_schedule::interleaved : pipeline_schedule::one_f_one_b;
            j.parallel.sequence_parallel = true;
            j.parallel.sharding = fw == frameworks::fsdp::handle ? sharding::full : sharding::optimizer;
            for (const char* gpu : {"h100-80g", "a100-80g", "v100-32g"}) {
                const auto& g = cat.at(gpu);
                const topology topo{8, 0.0};
                const auto stage = bottleneck_stage(j, forward_flops_per_token(j.model, j.training.seq_len));
                const auto full = t.predict(j, g, topo, stage);
                const auto parts = t.step_parts(j, g, topo, stage);
                CHECK(parts.total == full.parts.total);  // v100: both 0 (no bf16), predict says unsupported
                CHECK(parts.compute_mb == full.parts.compute_mb);
                CHECK(parts.micro_batch == full.parts.micro_batch);
                CHECK(parts.dp_exposed == full.parts.dp_exposed);
                CHECK(parts.bubble_slots == full.parts.bubble_slots);
                CHECK(full.supported == (parts.total > 0));
            }
        }
    }
}

TEST_CASE("the planner's shortcuts give the plans of its plain path") {
    // 12 of the catalog's types, 16 nodes of 8 each: every pruning and memo path runs (types that need a fallback
    // precision, types where nothing fits, a MoE job with expert parallelism).
    cluster_spec c;
    for (const char* t : {"h100-80g", "a100-80g", "a100-40g", "l40s", "rtx-4090", "v100-32g", "mi300x"})
        c.nodes.push_back({t, t, 8, 16});
    validate(c);
    using plain_planner = planner::with_memory_model<plain_memory>::with_time_model<plain_time>;
    for (auto fw : {frameworks::megatron::handle, frameworks::deepspeed::handle, frameworks::fsdp::handle})
        for (bool moe : {false, true}) {
            if (moe && fw == frameworks::fsdp::handle) continue;
            const auto job = make_job(moe ? mixtral_8x7b() : llama31_70b(), 4096, 128, fw);
            plan_options opt;
            opt.max_gpus = 128;
            plan_stats fast_st, plain_st;
            const auto fast = planner{}.plan(job, c, opt, &fast_st);
            const auto plain = plain_planner{}.plan(job, c, opt, &plain_st);
            require_same(fast, plain);
            CHECK(!fast.plans.empty());
            CHECK(fast_st.layouts == plain_st.layouts);  // the same search, only cheaper per point
        }
}

TEST_CASE("micro-batch parts completed for each dp and sharding, copied or in place, are step_parts, bit for bit") {
    const step_time_model t;
    const gpu_catalog cat;
    job_spec j = make_job(llama31_70b(), 4096, 512, frameworks::megatron::handle);
    j.parallel.tp = 8;
    j.parallel.pp = 4;
    j.parallel.sequence_parallel = true;
    j.runtime.tp_comm_overlap = true;
    j.runtime.overlap_grad_reduce = true;
    for (const char* gpu : {"h100-80g", "a100-40g", "v100-32g"}) {
        const auto& g = cat.at(gpu);
        const topology topo{8, 0.0};
        const auto stage = bottleneck_stage(j, forward_flops_per_token(j.model, j.training.seq_len));
        for (auto rc : {recompute::none, recompute::full}) {
            j.parallel.recompute = rc;
            j.parallel.dp = 1;
            j.parallel.sharding = sharding::none;
            const auto mb = t.micro_batch_parts(j, g, topo, stage);  // taken once, at dp 1
            // the planner's table entry: completed in place at each dp and sharding after the one before (a
            // data-parallel piece left from the completion before, e.g. ZeRO-3's gathers or the offload's copies,
            // would show at the next)
            auto entry = mb;
            const auto facts = t.prepare(g, topo);
            for (std::int64_t dp : {1, 2, 16, 64})
                for (auto sh : {sharding::none, sharding::optimizer, sharding::gradients, sharding::full}) {
                    if (dp == 1 && sh != sharding::none) continue;
                    j.parallel.dp = dp;
                    j.parallel.sharding = sh;
                    j.runtime.offload.parameters = dp == 16 && sh == sharding::full;
                    const auto plain = t.step_parts(j, g, topo, stage);
                    const auto fast = t.step_parts(j, g, topo, stage, mb);
                    check_same_parts(fast, plain);  // copied (v100: all 0, no bf16)
                    t.complete_step_parts(j, stage, facts, entry);
                    check_same_parts(entry, plain);  // completed in place after the dp and sharding before
                }
            j.runtime.offload.parameters = false;
        }
    }
}

TEST_CASE("a GPU type's facts taken once per pool are what the step-time model reads of it per call") {
    // The planner takes gpu_facts once per pool (basic_step_time_model::prepare) instead of comparing the type's
    // strings per call: each fact must be the per-call value (exact: the same function of the same inputs), and the
    // prepared overloads must give the unprepared parts bit for bit, on every catalog type (fitted chips, aliases,
    // types of no known chip, PCIe nodes with the 12.5 GB/s default network) and node shapes with a given network.
    const step_time_model t;
    const gpu_catalog cat;
    job_spec j = make_job(mixtral_8x7b(), 4096, 512, frameworks::megatron::handle);  // tp, cp, ep and pp traffic all run
    j.parallel.tp = 4;
    j.parallel.cp = 2;
    j.parallel.ep = 4;
    j.parallel.pp = 2;
    j.parallel.dp = 8;
    j.parallel.sequence_parallel = true;
    j.parallel.sharding = sharding::optimizer;
    j.runtime.tp_comm_overlap = true;
    const auto stage = bottleneck_stage(j, forward_flops_per_token(j.model, j.training.seq_len));
    int compared = 0;
    for (const auto& g : cat.types())
        for (const topology topo : {topology{8, 0.0}, topology{2, 0.0}, topology{4, 100.0}}) {
            const gpu_facts f = t.prepare(g, topo);
            CHECK(f.gpu == &g);
            CHECK(f.compute_capability == g.compute_capability());
            CHECK(f.flash_attention == g.flash_attention());
            CHECK(f.efficiency == t.compute().efficiency.entry(g));
            for (std::int64_t per_node : {1, 2, 4, 8, 16})
                CHECK(f.spanning_GBps(per_node) == detail::spanning_GBps(g, topo, per_node));
            for (auto rc : {recompute::none, recompute::full}) {
                j.parallel.recompute = rc;
                const auto full = t.predict(j, g, topo, stage);  // the unprepared path, with its extras
                const auto mb = t.micro_batch_parts(j, stage, f);
                const auto fast = t.step_parts(j, stage, mb, f);
                const auto whole = t.step_parts(j, stage, f);
                CHECK(mb.compute_mb == t.micro_batch_parts(j, g, topo, stage).compute_mb);
                CHECK(mb.kernels_mb == full.parts.kernels_mb);
                CHECK(t.compute().by_kernel(mb.work, g) == mb.kernels_mb);  // the entry looked up per call
                CHECK(mb.tp_exposed_mb == full.parts.tp_exposed_mb);
                CHECK(mb.cp_exposed_mb == full.parts.cp_exposed_mb);
                CHECK(mb.ep_mb == full.parts.ep_mb);
                CHECK(fast.pp_exposed_mb == full.parts.pp_exposed_mb);
                CHECK(fast.dp_exposed == full.parts.dp_exposed);
                CHECK(fast.total == full.parts.total);  // 0 where the type lacks bf16 (predict: unsupported)
                CHECK(whole.total == full.parts.total);
                compared += full.supported ? 1 : 0;
            }
        }
    CHECK(compared > 60);  // most of the catalog's types run bf16: the comparisons above are not all of zeros
}

TEST_CASE("the memory policies' per-job terms give their per-stage answers, bit for bit") {
    const sharded_model_states states;
    const transformer_activations acts;
    const framework_overheads over;
    const caching_allocator alloc;
    for (auto fw : {frameworks::megatron::handle, frameworks::deepspeed::handle, frameworks::fsdp::handle}) {
        job_spec j = make_job(fw == frameworks::megatron::handle ? mixtral_8x7b() : llama31_70b(), 4096, 256, fw);
        j.parallel.tp = 2;
        j.parallel.pp = 4;
        j.parallel.dp = 4;
        j.parallel.ep = fw == frameworks::megatron::handle ? 2 : 1;
        for (auto sh : {sharding::none, sharding::optimizer, sharding::full}) {
            j.parallel.sharding = sh;
            if (!framework_rejects(fw, j.parallel, j.training).empty()) continue;
            for (auto rc : {recompute::none, recompute::full}) {
                j.parallel.recompute = rc;
                const auto f = profile_of(j);
                for (const auto& l : stage_layouts(j, f)) {
                    const auto ms = states.model_states(j, l, f);
                    CHECK(ms == states.model_states(j, l, f, states.terms_of(j, f)));
                    const auto a = acts.activations(j, l, f);
                    CHECK(a == acts.activations(j, l, f, acts.terms_of(j, f)));
                    CHECK(over.temporaries(j, l, f, ms) == over.temporaries(j, l, f, ms, over.terms_of(j, f)));
                    CHECK(alloc.reserved(j, f, bytes{1e9}, a, ms).value ==
                          alloc.reserved(j, f, bytes{1e9}, a, ms, alloc.terms_of(j, f)).value);
                }
                const memory_estimator mem;
                const auto s = memory_search(mem).stages_of(j);
                CHECK(memory_search(mem).estimate_validated(j, s).peak_reserved.value == mem.estimate(j).peak_reserved.value);
            }
        }
    }
}

TEST_CASE("validate_bounds: the quiet pass lets through what the checks pass, and the first failure is named") {
    job_spec j = make_job(llama31_70b(), 4096, 256, frameworks::megatron::handle);
    CHECK_NOTHROW(validate_bounds(j));
    j.name = "llama \xc3\xa9t\xc3\xa9";  // UTF-8, not ASCII: the quiet pass declines, the check passes it
    CHECK_NOTHROW(validate_bounds(j));
    j.name = "line\nbreak";
    CHECK_THROWS_WITH(validate_bounds(j), Catch::Contains("name=") && Catch::Contains("without control characters"));
    j.name = "ok";
    j.parallel.dp = 0;
    j.parallel.tp = 0;  // two failures: the first in the list is named
    CHECK_THROWS_WITH(validate_bounds(j), Catch::StartsWith("parallel.dp=0 must be in 1.."));
    j.parallel.dp = j.parallel.tp = 1;
    j.training.total_tokens = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH(validate_bounds(j), Catch::StartsWith("training.total_tokens=nan must be a finite number"));
    j.training.total_tokens = 1e11;
    j.parallel.dp = j.parallel.pp = 1 << 20;  // each in range, their product over the GPU bound
    CHECK_THROWS_WITH(validate_bounds(j), Catch::Contains("parallel.dp x tp x pp x cp (GPUs)"));
}

namespace {
/// The message validate-like `f` throws on `j` ("" where it passes).
template <class F>
std::string thrown(F&& f, const job_spec& j) {
    try {
        f(j);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("validate_layout throws where validate does, with its message, on the jobs of a search") {
    // The planner's estimates check only what a search varies (memory_check::inputs_checked). Over layouts that
    // pass and that fail each kind of rule (degrees that do not divide, a dp or micro-batch of 0, products over the
    // GPU bound, a framework that refuses a sharding or schedule, vpp that does not divide the stages), the two
    // must agree exactly: same pass or same first message.
    int failures = 0, passes = 0;
    for (auto m : {llama31_70b(), mixtral_8x7b()})
        for (auto fw : {frameworks::megatron::handle, frameworks::deepspeed::handle, frameworks::fsdp::handle, frameworks::hf::handle})
            for (std::int64_t tp : {1, 3, 8})
                for (std::int64_t pp : {1, 5, 8})
                    for (std::int64_t dp : {0, 1, 4, 1 << 20})
                        for (std::int64_t mb : {0, 1, 3})
                            for (auto sh : {sharding::none, sharding::optimizer, sharding::full})
                                for (std::int64_t vpp : {1, 2})
                                    for (std::int64_t ep : {1, 2}) {
                                        auto j = make_job(m, 4096, 256, fw);
                                        j.parallel.tp = tp;
                                        j.parallel.pp = pp;
                                        j.parallel.dp = dp;
                                        j.parallel.vpp = vpp;
                                        j.parallel.ep = ep;
                                        j.parallel.sharding = sh;
                                        if (vpp > 1) j.parallel.schedule = pipeline_schedule::interleaved;
                                        j.training.micro_batch = mb;
                                        const auto want = thrown([](const job_spec& x) { validate(x); }, j);
                                        CHECK(thrown([](const job_spec& x) { validate_layout(x); }, j) == want);
                                        (want.empty() ? passes : failures) += 1;
                                    }
    CHECK(passes > 100);  // both outcomes are exercised
    CHECK(failures > 100);
}

namespace {
/// The default objective seen only through the Objective concept: the planner then scores a filled plan record
/// (detail::set_plan) instead of selectable_objective::score_of.
struct plain_objective {
    selectable_objective o;
    double score(const plan& p, const plan_options& opt) const { return o.score(p, opt); }
};
}  // namespace

TEST_CASE("the default objective's score from its fields gives the plans of a filled plan record") {
    cluster_spec c;
    for (const char* t : {"h100-80g", "a100-40g", "l40s", "v100-32g"}) c.nodes.push_back({t, t, 8, 16});
    validate(c);
    const auto job = make_job(llama31_70b(), 4096, 128, frameworks::megatron::handle);
    for (auto objective : {plan_objective::time, plan_objective::gpu_hours, plan_objective::cost})
        for (bool whole_nodes : {false, true}) {
            plan_options opt;
            opt.max_gpus = 128;
            opt.objective = objective;
            opt.whole_node_billing = whole_nodes;
            opt.price_per_gpu_hour = example_prices();
            const auto fast = planner{}.plan(job, c, opt);
            const auto plain = planner::with_objective<plain_objective>{}.plan(job, c, opt);
            require_same(fast, plain);
            CHECK(!fast.plans.empty());
            const auto& p = fast.plans.front();  // the score itself, bit for bit
            CHECK(selectable_objective::score_of(p.tokens_per_s, p.gpus, p.nodes, p.gpus_per_node, p.gpu, opt) ==
                  selectable_objective{}.score(p, opt));
        }
}

TEST_CASE("the layouts kept on one type, searched first on the next, leave every type's plans as plan_on's") {
    // plan() searches the layouts of the plans the types before kept first on each type (search_hints) and prunes
    // by the scores they reach; plan_on searches a type alone, without them. Each type's plans must be the same,
    // bit for bit (require_same: every field): ties included, as the bar prunes only what is strictly worse.
    // Types of near speeds and several node sizes, so that hints fall on and off the next type's axes.
    cluster_spec c;
    for (const char* t : {"h100-80g", "h200", "a100-80g", "a100-40g", "l40s", "mi300x"}) c.nodes.push_back({t, t, 8, 16});
    c.nodes.push_back({"a10", "a10", 4, 32});
    validate(c);
    for (auto fw : {frameworks::megatron::handle, frameworks::deepspeed::handle, frameworks::fsdp::handle})
        for (auto objective : {plan_objective::time, plan_objective::gpu_hours}) {
            const auto job = make_job(llama31_70b(), 4096, 256, fw);
            plan_options opt;
            opt.max_gpus = 128;
            opt.objective = objective;
            const auto all = planner{}.plan(job, c, opt);
            std::size_t kept = 0;
            for (const auto& pool : gpu_pools(c)) {
                plan_result mine = planner{}.plan_on(job, pool, opt), theirs;
                for (const auto& p : all.plans)
                    if (p.gpu == pool.gpu.name) theirs.plans.push_back(p);
                for (const auto& i : all.infeasible)
                    if (i.gpu == pool.gpu.name) theirs.infeasible.push_back(i);
                require_same(theirs, mine);
                kept += mine.plans.size();
            }
            CHECK(kept == all.plans.size());
            CHECK(kept > 20);  // several types with plans: hints were searched
        }
}

TEST_CASE("a layout's memo key completed at a level and micro-batch is the key of that job") {
    // plan/memo.hpp layout_key: packed once per layout by the search, completed per memory check; it must be
    // pack_key's words for the job at that recompute level and micro-batch, or both keys would name other entries
    // (a wrong shift or mask here mixes the levels' answers). Exact: the words are integers.
    std::int64_t checked = 0;
    for (auto fw : {frameworks::megatron::handle, frameworks::deepspeed::handle, frameworks::fsdp::handle})
        for (auto sh : {sharding::none, sharding::optimizer, sharding::full})
            for (std::int64_t pp : {1, 4})
                for (auto prec : {precision::bf16_mixed, precision::fp8_mixed}) {
                    auto j = make_job(llama31_70b(), 4096, 1024, fw);
                    j.training.precision = prec;
                    j.parallel.dp = 8;
                    j.parallel.tp = 4;
                    j.parallel.pp = pp;
                    j.parallel.vpp = pp > 1 ? 2 : 1;
                    j.parallel.schedule = pp > 1 ? pipeline_schedule::interleaved : pipeline_schedule::one_f_one_b;
                    j.parallel.sharding = sh;
                    j.parallel.recompute = recompute::selective;  // the key's own level: replaced by `of`
                    j.training.micro_batch = 3;
                    const auto key = detail::layout_key_of(j);
                    REQUIRE(key.packed);
                    for (auto rc : {recompute::none, recompute::selective, recompute::full})
                        for (std::int64_t mb : {1, 2, 16, 1024}) {
                            j.parallel.recompute = rc;
                            j.training.micro_batch = mb;
                            detail::packed_key want{};
                            REQUIRE(detail::pack_key(j, want));
                            REQUIRE(key.of(rc, mb) == want);
                            ++checked;
                        }
                }
    CHECK(checked == 3 * 3 * 2 * 2 * 3 * 4);
    auto wide = make_job(llama31_70b(), 4096, 1024, frameworks::megatron::handle);
    wide.parallel.dp = std::int64_t{1} << 22;  // beyond the packed width: the full key, from the job itself
    CHECK(!detail::layout_key_of(wide).packed);
}

TEST_CASE("a layout's memo key moved to another dp is the key packed at that dp") {
    // plan/memo.hpp layout_key_at_dp: the planner packs a layout's key at its first dp and replaces the dp bits at
    // the others; a wrong mask would name another layout's entries. Exact: the words are integers, and a dp beyond
    // the packed width (or from one) gives the full key, as packing the job does.
    std::int64_t checked = 0;
    for (auto sh : {sharding::none, sharding::optimizer})
        for (std::int64_t tp : {1, 8})
            for (std::int64_t pp : {1, 4}) {
                auto j = make_job(llama31_70b(), 4096, 1024, frameworks::megatron::handle);
                j.parallel.tp = tp;
                j.parallel.pp = pp;
                j.parallel.sharding = sh;
                j.parallel.dp = 2;
                auto key = detail::layout_key_of(j);
                for (std::int64_t dp : std::array<std::int64_t, 6>{1, 3, 64, (std::int64_t{1} << 21) - 1, std::int64_t{1} << 21, 5}) {
                    INFO("sharding " << static_cast<int>(sh) << " tp " << tp << " pp " << pp << " dp " << dp);
                    j.parallel.dp = dp;
                    const auto want = detail::layout_key_of(j);
                    key = detail::layout_key_at_dp(key, j);  // from the key at the dp before, as the dp loop does
                    CHECK(key.packed == want.packed);
                    if (want.packed) CHECK(key.words == want.words);
                    ++checked;
                }
            }
    CHECK(checked == 2 * 2 * 2 * 6);
}

TEST_CASE("the layout list holds every point the node shape, rules and dp rules allow, in the search's order, as layout_job builds it") {
    // plan/layout_list.hpp: one plan() call lists a pool's layouts once and searches every pool with the same inputs
    // from that list, so the list must be exactly the points the axes' loops reach: checked against the plain
    // enumeration (layout_job on a fresh copy of the job at each point, the checks written out as search_pool had
    // them). Exact: the jobs, levels, micro-batches and keys are integers and enums.
    const gpu_pool pool{gpu_catalog{}.at("h100-80g"), 8, 16, 0.0};
    std::int64_t points = 0;
    for (auto fw : {frameworks::megatron::handle, frameworks::deepspeed::handle, frameworks::fsdp::handle, frameworks::hf::handle})
        for (bool moe : {false, true}) {
            INFO(to_string(fw) << (moe ? " moe" : ""));
            const auto job = make_job(moe ? mixtral_8x7b() : llama31_70b(), 4096, 128, fw);
            plan_options opt;
            opt.max_gpus = 64;
            const auto ax = divisor_search_space{}.axes(job, pool, opt);
            REQUIRE(ax.cp == std::vector<std::int64_t>{1});  // the loops below leave cp out
            std::map<detail::stage_key, stage_load> stages;
            auto stage_of = [&](const job_spec& j) {
                auto [it, fresh] = stages.try_emplace(detail::stage_key_of(j));
                if (fresh) it->second = bottleneck_stage(j, forward_flops_per_token(j.model, j.training.seq_len));
                return &it->second;
            };
            detail::layout_list list;
            detail::list_layouts(job, pool, ax, 64, opt, stage_of, list);
            CHECK(list.lists(job, ax, 8, 64));
            CHECK(!list.lists(job, ax, 4, 64));
            // the plain enumeration, and the list walked as search_pool walks it
            std::size_t li = 0, pi_list = 0;
            std::int64_t idle = 0;
            for (auto tp : ax.tp)
                for (auto pp : ax.pp)
                    for (auto vpp : ax.vpp)
                        for (auto sh : ax.shardings)
                            for (auto ep : ax.ep)
                                for (auto dp : ax.dp) {
                                if (dp * tp * pp > 64 || dp % ep != 0 || (dp == 1 && sh != sharding::none)) continue;
                                auto want = detail::layout_job(job, ax, fw, tp, pp, vpp, 1, sh, ep, dp, opt);
                                if (!detail::shape_allowed(want, pool, opt)) continue;
                                const auto rules = detail::rules_verdicts(want, ax.dp, ax.recomputes);
                                if (!rules.any) continue;
                                std::vector<recompute> levels;
                                detail::allowed_levels(rules, dp, ax.recomputes, levels);
                                std::vector<std::int64_t> mbs;
                                detail::valid_micro_batches(want, ax, mbs);
                                if (levels.empty() || mbs.empty()) {
                                    ++idle;
                                    continue;
                                }
                                while (li < list.layouts.size() && pi_list == list.layouts[li].last) ++li;
                                REQUIRE(li < list.layouts.size());
                                const auto& l = list.layouts[li];
                                const auto& pt = list.points[pi_list++];
                                job_spec got = job;
                                l.set_on(got);
                                got.parallel.dp = pt.dp;
                                CHECK(got == want);
                                CHECK(l.levels[dp > 1 ? 1 : 0] == levels);
                                CHECK(list.micro_batches[pt.micro_batches] == mbs);
                                CHECK(pt.key.words == detail::layout_key_of(want).words);
                                CHECK(l.stage->layers == bottleneck_stage(want, forward_flops_per_token(want.model, 4096)).layers);
                                ++points;
                            }
            CHECK(pi_list == list.points.size());
            CHECK(idle == list.idle_points);
        }
    CHECK(points > 500);
}

TEST_CASE("a job's stage key compared in place answers as the key built from it") {
    // plan/memo.hpp is_stage_key_of: the memory check's stage cache asks it per estimate instead of building the
    // key; it must agree with stage_key_of(b) == k for jobs that differ in each field the key holds, and not mind the
    // fields it does not (dp, sharding, recompute, micro-batch). Exact: integers.
    auto base = make_job(mixtral_8x7b(), 4096, 128, frameworks::megatron::handle);
    base.parallel.tp = 2;
    base.parallel.pp = 4;
    base.parallel.ep = 2;
    std::vector<job_spec> jobs{base};
    auto vary = [&](auto&& change) {
        auto j = base;
        change(j);
        jobs.push_back(j);
    };
    vary([](job_spec& j) { j.runtime.framework = frameworks::deepspeed::handle; });
    vary([](job_spec& j) { j.parallel.tp = 4; });
    vary([](job_spec& j) { j.parallel.etp = 2; });
    vary([](job_spec& j) { j.parallel.ep = 4; });
    vary([](job_spec& j) { j.parallel.pp = 2; });
    vary([](job_spec& j) { j.parallel.vpp = 2; });
    vary([](job_spec& j) { j.parallel.first_stage_layers = 6; });
    vary([](job_spec& j) { j.parallel.last_stage_layers = 6; });
    vary([](job_spec& j) { j.parallel.embedding_stage = true; });
    vary([](job_spec& j) { j.parallel.loss_stage = true; });
    vary([](job_spec& j) { j.parallel.stage_layers = {8, 8, 8, 8}; });
    vary([](job_spec& j) { j.parallel.stage_layers = {7, 9, 8, 8}; });
    vary([](job_spec& j) { j.parallel.dp = 8; j.parallel.sharding = sharding::optimizer; });  // not in the key
    vary([](job_spec& j) { j.parallel.recompute = recompute::full; j.training.micro_batch = 4; });  // nor these
    std::int64_t same = 0;
    for (const auto& a : jobs)
        for (const auto& b : jobs) {
            const auto k = detail::stage_key_of(a);
            CHECK(detail::is_stage_key_of(k, b) == (k == detail::stage_key_of(b)));
            same += detail::is_stage_key_of(k, b) ? 1 : 0;
        }
    // each job matches itself; base and the last two (fields outside the key) match each other
    CHECK(same == static_cast<std::int64_t>(jobs.size()) + 6);
}

TEST_CASE("the memo's table reserved ahead holds its entries without growing, and a later reserve keeps them") {
    // plan/memo.hpp packed_table::reserve: the planner sizes the memo from its first layout list so that a search
    // does not grow it (memory_check::reserve). At most half full: room for n entries is the first power of two
    // from 1,024 with 2n slots. Exact: integer keys and the values stored with them.
    auto key = [](std::uint64_t i) { return detail::packed_key{i, i * 7, i % 13, 42, i + 1}; };
    detail::packed_table reserved, grown;
    reserved.reserve(5000);
    CHECK(reserved.used.size() == 16384);
    for (std::uint64_t i = 0; i < 5000; ++i) {
        CHECK(reserved.try_emplace(key(i), static_cast<double>(i)).second);
        CHECK(grown.try_emplace(key(i), static_cast<double>(i)).second);
    }
    CHECK(reserved.used.size() == 16384);  // no growth
    CHECK(grown.used.size() == 16384);     // 1,024 -> 4,096 -> 16,384 as it filled
    reserved.reserve(20000);
    CHECK(reserved.used.size() == 65536);
    for (std::uint64_t i = 0; i < 5000; ++i) {
        const auto [v, fresh] = reserved.try_emplace(key(i), -1.0);
        CHECK(!fresh);
        CHECK(*v == static_cast<double>(i));
    }
    CHECK(reserved.count == 5000);
    reserved.reserve(100);  // smaller than it holds: nothing changes
    CHECK(reserved.used.size() == 65536);
}
