// Planner: every plan fits with the margin and respects node shapes; the minimum-GPU plan and the best plan per
// GPU count equal a brute-force search on small cases; known cases; objectives; policy replacement.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "frenzy/io/cluster_json.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/plan/planner.hpp"

using namespace frenzy;

namespace {
// LLaMA-2-7B (Touvron et al. 2023; meta-llama/Llama-2-7b-hf config.json): 6.74e9 parameters
transformer_spec llama2_7b() {
    return {.name = "llama-2-7b", .layers = 32, .hidden = 4096, .heads = 32, .ffn_hidden = 11008,
            .activation = activation::swiglu, .vocab = 32000, .position_embedding = position_embedding::rope,
            .norm = norm_kind::rmsnorm, .bias = false};
}
// LLaMA-3.1-70B (meta-llama/Llama-3.1-70B config.json): 70.6e9 parameters
transformer_spec llama31_70b() {
    return {.name = "llama-3.1-70b", .layers = 80, .hidden = 8192, .heads = 64, .kv_heads = 8, .ffn_hidden = 28672,
            .activation = activation::swiglu, .vocab = 128256, .position_embedding = position_embedding::rope,
            .norm = norm_kind::rmsnorm, .bias = false};
}
job_spec make_job(transformer_spec m, std::int64_t seq, std::int64_t gb, framework fw, double tokens = 1e10) {
    job_spec j;
    j.model = std::move(m);
    j.training = {.seq_len = seq, .micro_batch = 1, .global_batch = gb, .total_tokens = tokens};
    j.runtime.framework = fw;
    return j;
}
cluster_spec cluster(std::vector<node_group> g) {
    cluster_spec c;
    c.nodes = std::move(g);
    validate(c);
    return c;
}

/// Every layout the rules allow on `pool` (no pruning): the best score per GPU count, by brute force.
std::map<std::int64_t, double> brute_force(const job_spec& job0, const gpu_pool& pool, const plan_options& opt) {
    memory_estimator mem;
    step_time_model time;
    selectable_objective obj;
    std::map<std::int64_t, double> best;
    const auto gb = job0.training.global_batch;
    for (std::int64_t tp = 1; tp <= pool.gpus_per_node; ++tp)
        for (std::int64_t pp = 1; pp <= pool.gpus(); ++pp)
            for (std::int64_t vpp = 1; vpp <= opt.max_vpp; ++vpp)
                for (std::int64_t dp = 1; dp * tp * pp <= pool.gpus(); ++dp)
                    for (auto sh : {sharding::none, sharding::optimizer, sharding::gradients, sharding::full})
                        for (auto rc : {recompute::none, recompute::selective, recompute::full})
                            for (std::int64_t mb = 1; mb <= gb; ++mb)
                              for (std::int64_t ep = 1; ep <= std::max<std::int64_t>(1, job0.model.moe.experts); ++ep) {
                                if (pool.gpus_per_node % tp != 0 || (dp == 1 && sh != sharding::none)) continue;
                                if (ep > 1 && job0.runtime.framework != frameworks::megatron::handle &&
                                    job0.runtime.framework != frameworks::deepspeed::handle)
                                    continue;  // the planner's rule: expert parallelism with Megatron and DeepSpeed
                                job_spec j = job_on(job0, pool.gpu);  // the attention kernel the type runs
                                j.training.micro_batch = mb;
                                j.parallel = {.dp = dp, .tp = tp, .pp = pp, .vpp = vpp, .ep = ep,
                                              .sequence_parallel = tp > 1 && j.runtime.framework == frameworks::megatron::handle,
                                              .sharding = sh, .recompute = rc,
                                              .schedule = vpp > 1 ? pipeline_schedule::interleaved : pipeline_schedule::one_f_one_b};
                                if (opt.framework_overlap && j.runtime.framework == frameworks::megatron::handle) {
                                    // the overlap a tuned Megatron run turns on (plan_options::framework_overlap)
                                    j.runtime.overlap_grad_reduce = true;
                                    j.runtime.tp_comm_overlap = tp > 1;  // sequence parallel is on with tp > 1 here
                                }
                                try {
                                    validate(j);
                                } catch (const config_error&) {
                                    continue;
                                }
                                if (!check_fit(mem.estimate(j), pool.gpu, opt.margin).fits) continue;
                                const auto e = time.predict(j, pool.gpu, {pool.gpus_per_node, pool.network_GBps});
                                plan p;
                                p.gpu = pool.gpu.name;
                                p.gpus = static_cast<int>(j.parallel.gpus());
                                // capped at the measured MFU ceiling, as the planner credits it (issue 55)
                                p.tokens_per_s = std::min(e.tokens_per_s, mfu_capped_tokens_per_s_per_gpu(j, pool.gpu) * p.gpus);
                                const double s = obj.score(p, opt);
                                auto it = best.find(p.gpus);
                                if (it == best.end() || s < it->second) best[p.gpus] = s;
                            }
    return best;
}

void check_plan_valid(const plan& p, const job_spec& job, const cluster_spec& c, const plan_options& opt) {
    INFO(p.gpu << " x " << p.gpus << " dp " << p.parallel.dp << " tp " << p.parallel.tp << " pp " << p.parallel.pp);
    job_spec j = job;
    j.parallel = p.parallel;
    j.training.micro_batch = p.micro_batch;
    j.runtime.framework = p.framework;
    j.runtime.attention = p.attention;  // the kernel the plan runs on its type
    CHECK(p.attention == attention_on(job_on(job, c.catalog.at(p.gpu)), c.catalog.at(p.gpu)));
    REQUIRE_NOTHROW(validate(j));
    const auto& g = c.catalog.at(p.gpu);
    j.training.precision = p.precision;
    const auto rep = memory_estimator{}.estimate(j);
    CHECK(rep.peak_allocated == p.peak_allocated);
    CHECK(rep.peak_reserved == p.peak_reserved);
    // the one fit rule: reserved x (1 + uncertainty) within (1 - margin) x memory
    CHECK(p.required.value == Approx(rep.peak_reserved.value * (1 + rep.uncertainty)));
    CHECK(p.required.value <= (1 - opt.margin) * g.memory().value);
    CHECK(p.capacity.value == Approx((1 - opt.margin) * g.memory().value));
    CHECK(p.gpus == p.parallel.gpus());
    int gpn = 0, nodes = 0;
    for (const auto& n : c.nodes)
        if (n.gpu == p.gpu) gpn = n.gpus_per_node, nodes += n.count;
    CHECK(p.parallel.tp <= gpn);
    CHECK(gpn % p.parallel.tp == 0);  // a tp group never straddles nodes
    CHECK(p.nodes == (p.gpus + gpn - 1) / gpn);
    CHECK(p.nodes <= nodes);
    CHECK(p.tokens_per_s > 0);
    CHECK(p.est_time.value == Approx(job.training.total_tokens / p.tokens_per_s));
    CHECK(p.gpu_hours == Approx(p.est_time.value * p.gpus / 3600));
}
}  // namespace

TEST_CASE("concepts: the defaults model them, unrelated types do not") {
    struct not_a_model {};
    static_assert(MemoryModel<memory_estimator> && !MemoryModel<not_a_model>);
    static_assert(StepTimeModel<step_time_model> && !StepTimeModel<not_a_model>);
    static_assert(SearchSpace<divisor_search_space> && !SearchSpace<not_a_model>);
    static_assert(Objective<selectable_objective> && !Objective<not_a_model>);
    static_assert(BoundedMemoryModel<memory_estimator> && !BoundedMemoryModel<not_a_model>);
    CHECK(MemoryModel<memory_estimator>);
}

TEST_CASE("every plan fits with the safety margin and respects node shapes") {
    const auto c = cluster({{"a100", "a100-80g", 8, 4}, {"v100", "v100-32g", 8, 4}, {"3090", "rtx-3090", 8, 8}});
    for (auto fw : {frameworks::megatron::handle, frameworks::fsdp::handle, frameworks::deepspeed::handle}) {
        auto job = make_job(preset("llama-3.1-8b"), 4096, 256, fw);
        for (double margin : {0.1, 0.25}) {
            plan_options opt;
            opt.margin = margin;
            const auto r = planner{}.plan(job, c, opt);
            REQUIRE(!r.plans.empty());
            for (const auto& p : r.plans) check_plan_valid(p, job, c, opt);
            // V100 has no bf16 tensor cores: its plans are offered in fp16-mixed, marked as the alternative
            for (const auto& p : r.plans) {
                CHECK(p.precision_alternative == (p.gpu == "v100-32g"));
                CHECK(p.precision == (p.gpu == "v100-32g" ? precision::fp16_mixed : precision::bf16_mixed));
            }
            // ... unless the job pins its precision: then V100 is infeasible, with the reason
            opt.pin_precision = true;
            const auto pinned = planner{}.plan(job, c, opt);
            REQUIRE(pinned.infeasible.size() == 1);
            CHECK(pinned.infeasible[0].gpu == "v100-32g");
            CHECK(pinned.infeasible[0].reason.find("bf16-mixed is not supported on v100-32g") == 0);
            // ranked best first (objective time: highest tokens/s first)
            for (std::size_t i = 1; i < r.plans.size(); ++i) CHECK(r.plans[i - 1].tokens_per_s >= r.plans[i].tokens_per_s);
        }
    }
}

TEST_CASE("a precision alternative drops what only the job's own precision allows (issue 55: fp8 on A100)") {
    // An fp8 Megatron job with --fp8-param-gather: A100 has no fp8 tensor cores, so its plans are bf16-mixed, and the
    // fp8 parameter gather (valid with fp8-mixed only: train/job.hpp) goes with fp8; before, it survived the
    // substitution and every A100 layout was rejected as invalid. H100 keeps fp8 and the gather.
    const auto c = cluster({{"a100", "a100-80g", 8, 2}, {"h100", "h100-80g", 8, 2}});
    auto job = make_job(preset("llama-3.1-8b"), 4096, 64, frameworks::megatron::handle);
    job.training.precision = precision::fp8_mixed;
    job.runtime.fp8_param_gather = true;
    const auto r = planner{}.plan(job, c);
    CHECK(r.infeasible.empty());
    bool a100 = false, h100 = false;
    for (const auto& p : r.plans) {
        if (p.gpu == "a100-80g") {
            a100 = true;
            CHECK(p.precision == precision::bf16_mixed);
            CHECK(p.precision_alternative);
        }
        if (p.gpu == "h100-80g") {
            h100 = true;
            CHECK(p.precision == precision::fp8_mixed);
            CHECK(!p.precision_alternative);
        }
    }
    CHECK(a100);
    CHECK(h100);
    // bf16 gradient reduction needs bf16 parameters: on V100 (fp16-mixed offered) it goes too
    auto bf = make_job(preset("llama-3.1-8b"), 4096, 64, frameworks::megatron::handle);
    bf.runtime.grad_reduce_bf16 = true;
    const auto v = planner{}.plan(bf, cluster({{"v100", "v100-32g", 8, 4}}));
    CHECK(v.infeasible.empty());
    REQUIRE(!v.plans.empty());
    CHECK(v.plans[0].precision == precision::fp16_mixed);
}

TEST_CASE("speeds above the measured MFU ceiling are capped for time, cost and rank (issue 55)") {
    // Llama 2 7B pretraining on A100s and H100s: plans the model predicts above the best MFU measured for the chip,
    // precision and size class are credited with that best only; the model's own figure is kept beside it.
    const auto c = cluster({{"a100", "a100-80g", 8, 4}, {"h100", "h100-80g", 8, 4}});
    const auto job = make_job(preset("llama-2-7b"), 4096, 512, frameworks::megatron::handle);
    const auto r = planner{}.plan(job, c);
    REQUIRE(!r.plans.empty());
    int capped = 0;
    const gpu_catalog catalog;
    for (const auto& p : r.plans) {
        INFO(p.gpu << " x" << p.gpus << " mfu " << p.mfu << " ceiling " << p.mfu_ceiling);
        if (p.mfu_ceiling > 0) CHECK(p.mfu <= p.mfu_ceiling * (1 + 1e-9));
        CHECK(p.tokens_per_s <= mfu_capped_tokens_per_s_per_gpu(job, catalog.at(p.gpu)) * p.gpus * (1 + 1e-9));
        CHECK(p.step_time.value == Approx(job.tokens_per_step() / p.tokens_per_s).epsilon(1e-12));
        if (p.uncapped_tokens_per_s > 0) {
            ++capped;
            CHECK(p.uncapped_tokens_per_s > p.tokens_per_s);
            CHECK(p.mfu == Approx(p.mfu_ceiling).epsilon(1e-9));
            CHECK(p.est_time.value == Approx(job.training.total_tokens / p.tokens_per_s));
        }
    }
    CHECK(capped > 0);  // the case the issue names: A100 plans at 62-70% MFU against a measured best near 55%
    // ranked by the capped speed: objective time, best first
    for (std::size_t i = 1; i < r.plans.size(); ++i) CHECK(r.plans[i - 1].tokens_per_s >= r.plans[i].tokens_per_s);
}

TEST_CASE("minimum-GPU plan and best plan per GPU count equal a brute-force search (small cases)") {
    // 7B on 24 GiB cards and an 8B on 32/40 GiB cards: small enough to enumerate every layout without pruning
    struct tcase {
        job_spec job;
        node_group nodes;
    };
    std::vector<tcase> cases{
        {make_job(llama2_7b(), 2048, 16, frameworks::megatron::handle), {"r", "rtx-3090", 8, 1}},
        {make_job(llama2_7b(), 2048, 16, frameworks::fsdp::handle), {"r", "rtx-3090", 4, 2}},
        {make_job(preset("llama-3.1-8b"), 4096, 8, frameworks::deepspeed::handle), {"a", "a100-40g", 8, 1}},
    };
    cases[2].job.training.precision = precision::fp16_mixed;
    // a small mixture-of-experts model (8 experts, top-2): expert parallelism is part of the search
    transformer_spec moe{.name = "moe-small", .layers = 8, .hidden = 2048, .heads = 16, .kv_heads = 4, .ffn_hidden = 8192,
                         .activation = activation::swiglu, .vocab = 32000, .position_embedding = position_embedding::rope,
                         .norm = norm_kind::rmsnorm, .bias = false, .moe = {.experts = 8, .top_k = 2}};
    cases.push_back({make_job(moe, 2048, 16, frameworks::megatron::handle), {"r", "rtx-3090", 8, 1}});
    cases.push_back({cases[0].job, {"v", "v100-32g", 8, 1}});
    cases.back().job.training.precision = precision::fp16_mixed;
    for (const auto& tc : cases) {
        const auto c = cluster({tc.nodes});
        plan_options opt;
        opt.max_vpp = 2;
        const auto r = planner{}.plan(tc.job, c, opt);
        const auto pools = gpu_pools(c);
        const auto brute = brute_force(tc.job, pools[0], opt);
        INFO(tc.nodes.gpu << " " << to_string(tc.job.runtime.framework));
        REQUIRE(!brute.empty());
        REQUIRE(!r.plans.empty());
        std::map<std::int64_t, double> got;
        for (const auto& p : r.plans) got[p.gpus] = selectable_objective{}.score(p, opt);
        CHECK(got.begin()->first == brute.begin()->first);  // the minimum-GPU plan is minimal
        REQUIRE(got.size() == brute.size());                 // every feasible GPU count is reported
        for (const auto& [n, s] : brute) CHECK(got[n] == Approx(s).epsilon(1e-12));  // and its best layout found
    }
}

TEST_CASE("known cases") {
    SECTION("a 7B model in bf16 with AdamW does not fit one 24 GiB card without sharding") {
        // model states alone: 2 (bf16 weights) + 4 (fp32 grads) + 12 (fp32 master, m, v) = 18 B x 6.74e9 = 121 GB
        auto job = make_job(llama2_7b(), 2048, 16, frameworks::megatron::handle);
        job.parallel = {};
        CHECK(memory_estimator{}.estimate(job).peak_allocated.value > 24 * GiB);
        const auto c = cluster({{"r", "rtx-3090", 1, 1}});
        const auto r = planner{}.plan(job, c);
        CHECK(r.plans.empty());
        REQUIRE(r.infeasible.size() == 1);
        // needs >= 121 GB / (0.95 x 24 GiB) = 4.9 cards of states: at least 8 with tp+pp (powers of two dividing 32)
        CHECK(r.infeasible[0].reason.find("needs ") == 0);
        // Megatron offers full sharding through Megatron-FSDP, so the frugal layouts tried shard everything
        CHECK(r.infeasible[0].reason.find("x 24 GiB even with full sharding and recompute") != std::string::npos);
        CHECK(r.infeasible[0].reason.find("1 node of 1 available") != std::string::npos);
    }
    SECTION("a 70B model needs full sharding or tensor+pipeline parallelism on 80 GiB cards") {
        const auto c = cluster({{"a", "a100-80g", 8, 16}});
        for (auto fw : {frameworks::megatron::handle, frameworks::fsdp::handle}) {
            const auto job = make_job(llama31_70b(), 4096, 128, fw, 1e11);
            const auto r = planner{}.plan(job, c);
            REQUIRE(!r.plans.empty());
            for (const auto& p : r.plans) {
                // unsharded weights + gradients are >= 2 + 2 B x 70.6e9 = 282 GB > 76 GiB: full sharding, or tp x pp
                // splitting them at least 4 ways
                INFO("tp " << p.parallel.tp << " pp " << p.parallel.pp << " sharding " << to_string(p.parallel.sharding));
                CHECK((p.parallel.sharding == sharding::full || p.parallel.tp * p.parallel.pp >= 4));
            }
        }
        // one node of 8 is not enough even fully sharded: 70.6e9 x 16 B (FSDP: bf16 weights and grads, fp32
        // master/m/v, all sharded) / 8 = 141 GB per GPU > 76 GiB; 16 GPUs hold 70.6 GB of states, just short with
        // activations and gathered layers; 32 GPUs (35 GB of states) certainly fit: 8 < N <= 32
        const auto small = cluster({{"a", "a100-80g", 8, 1}});
        const auto r = planner{}.plan(make_job(llama31_70b(), 4096, 128, frameworks::fsdp::handle), small);
        REQUIRE(r.infeasible.size() == 1);
        const auto& why = r.infeasible[0].reason;
        INFO(why);
        REQUIRE(why.rfind("needs ", 0) == 0);
        const int n = std::stoi(why.substr(6));
        CHECK(n > 8);
        CHECK(n <= 32);
        CHECK(why.find(" x 80 GiB even with full sharding and recompute (") != std::string::npos);
        CHECK(why.find("; 1 node of 8 available") != std::string::npos);
    }
    SECTION("a 125M model fits one GPU of every bf16-capable type") {
        const auto c = cluster({{"a", "a100-80g", 8, 1}, {"r", "rtx-3090", 8, 1}, {"t", "l4", 8, 1}});
        const auto r = planner{}.plan(make_job(preset("gpt3-125m"), 2048, 64, frameworks::ddp::handle), c);
        std::map<std::string, int> min_gpus;
        for (const auto& p : r.plans)
            if (!min_gpus.contains(p.gpu) || p.gpus < min_gpus[p.gpu]) min_gpus[p.gpu] = p.gpus;
        CHECK(min_gpus == std::map<std::string, int>{{"a100-80g", 1}, {"l4", 1}, {"rtx-3090", 1}});
    }
}

TEST_CASE("objectives: GPU-hours and cost rank differently from time, cost needs prices") {
    const auto c = cluster({{"a", "a100-80g", 8, 4}, {"h", "h100-80g", 8, 4}});
    const auto job = make_job(preset("llama-3.1-8b"), 4096, 256, frameworks::megatron::handle, 1e11);
    plan_options opt;
    opt.objective = plan_objective::gpu_hours;
    const auto r = planner{}.plan(job, c, opt);
    for (std::size_t i = 1; i < r.plans.size(); ++i) CHECK(r.plans[i - 1].gpu_hours <= r.plans[i].gpu_hours * (1 + 1e-12));
    opt.objective = plan_objective::cost;
    CHECK_THROWS_WITH(planner{}.plan(job, c, opt), Catch::Matchers::Contains("needs a price for GPU type"));
    opt.price_per_gpu_hour = {{"a100-80g", 1.0}, {"h100-80g", 100.0}};  // absurd H100 price: A100 must win
    const auto rc = planner{}.plan(job, c, opt);
    REQUIRE(!rc.plans.empty());
    CHECK(rc.plans.front().gpu == "a100-80g");
    for (std::size_t i = 1; i < rc.plans.size(); ++i) CHECK(rc.plans[i - 1].cost.value() <= rc.plans[i].cost.value() * (1 + 1e-12));
    opt.objective = plan_objective::time;
    const auto rt = planner{}.plan(job, c, opt);
    CHECK(rt.plans.front().gpu == "h100-80g");  // 3x the peak
}

TEST_CASE("a host can replace the objective policy") {
    // prefer the fewest GPUs, then speed
    struct fewest_gpus {
        double score(const plan& p, const plan_options&) const { return p.gpus * 1e9 - p.tokens_per_s; }
    };
    static_assert(Objective<fewest_gpus>);
    basic_planner<memory_estimator, step_time_model, divisor_search_space, fewest_gpus> pl;
    const auto c = cluster({{"a", "a100-80g", 8, 2}});
    const auto r = pl.plan(make_job(preset("llama-3.1-8b"), 4096, 64, frameworks::megatron::handle), c);
    REQUIRE(r.plans.size() >= 2);
    CHECK(r.plans.front().gpus == 2);  // 8B: 144 GB of states do not fit one 76 GiB card (0.95 x 80); two with tp=2 do
    for (std::size_t i = 1; i < r.plans.size(); ++i) CHECK(r.plans[i - 1].gpus < r.plans[i].gpus);
}

TEST_CASE("per-type summary: minimum-GPU and fastest plans") {
    const auto c = cluster({{"a", "a100-80g", 8, 2}, {"r", "rtx-3090", 8, 2}});
    const auto r = planner{}.plan(make_job(preset("llama-3.1-8b"), 4096, 64, frameworks::megatron::handle), c);
    const auto s = summarize_by_type(r);
    REQUIRE(s.size() == 2);
    CHECK(s[0].gpu == r.plans.front().gpu);  // best type first
    for (const auto& t : s)
        for (const auto& p : r.plans)
            if (p.gpu == t.gpu) {
                CHECK(t.minimum.gpus <= p.gpus);
                CHECK(t.fastest.tokens_per_s >= p.tokens_per_s);
            }
}

TEST_CASE("the bundled example jobs and clusters load and plan") {
    const std::string root = FRENZY_SOURCE_DIR;
    const auto three = load_cluster(root + "/examples/clusters/three-type.json");
    const auto five = load_cluster(root + "/examples/clusters/five-type.json");
    CHECK(gpu_pools(three).size() == 3);
    CHECK(three.total_gpus() >= 64);
    CHECK(three.total_gpus() <= 128);
    CHECK(gpu_pools(five).size() == 5);
    for (const char* name : {"plan-gpt3-125m", "plan-gpt3-1.3b", "plan-llama-2-7b", "plan-llama-2-7b-fp16", "plan-llama-3.1-8b",
                             "plan-llama-2-13b", "plan-mixtral-8x7b", "plan-llama-3.1-70b"}) {
        INFO(name);
        const auto job = load_job(root + "/examples/jobs/" + name + ".json").job;
        const auto r = planner{}.plan(job, three);
        CHECK(!r.plans.empty());
        // each of the three types is either planned or explained, never both
        std::map<std::string, int> seen;
        for (const auto& t : summarize_by_type(r)) ++seen[t.gpu];
        for (const auto& f : r.infeasible) {
            ++seen[f.gpu];
            CHECK(!f.reason.empty());
        }
        CHECK(seen == std::map<std::string, int>{{"a100-80g", 1}, {"rtx-3090", 1}, {"v100-32g", 1}});
    }
}

TEST_CASE("search space: tp stays within a node unless allowed, node shapes bound the counts") {
    const auto job = make_job(preset("llama-3.1-8b"), 4096, 64, frameworks::megatron::handle);
    const gpu_pool pool{gpu_catalog{}.at("rtx-3090"), 2, 8, 12.5};  // 8 nodes of 2 GPUs
    plan_options opt;
    const auto inside = divisor_search_space{}.axes(job, pool, opt);
    CHECK(inside.tp == std::vector<std::int64_t>{1, 2});
    opt.allow_tp_across_nodes = true;
    const auto across = divisor_search_space{}.axes(job, pool, opt);
    CHECK(across.tp == std::vector<std::int64_t>{1, 2, 4, 8});  // divisors of 16 GPUs dividing 32 heads / 8 kv heads
    CHECK(across.dp == std::vector<std::int64_t>{1, 2, 4, 8, 16});  // divisors of the global batch 64, <= 16 GPUs
    // with tp across nodes allowed, plans may use tp = 4 or 8 over the network; every plan still fits
    cluster_spec c;
    c.nodes = {{"r", "rtx-3090", 2, 8}};
    const auto r = planner{}.plan(job, c, opt);
    REQUIRE(!r.plans.empty());
    for (const auto& p : r.plans) {
        CHECK(p.nodes == (p.gpus + 1) / 2);
        CHECK(p.required.value <= (1 - default_margin) * 24576 * MiB);  // the fit rule on the card's 24576 MiB
    }
}

TEST_CASE("Megatron plans turn on the overlap the framework supports, their predicted speed includes it") {
    // LLaMA-2-7B, seq 4096, global batch 64 on 2 nodes of 8 H100s: Megatron plans with dp > 1 and tp > 1 exist
    const auto job = make_job(llama2_7b(), 4096, 64, frameworks::megatron::handle);
    const auto c = cluster({{"h", "h100-80g", 8, 2}});
    plan_options opt;
    const auto on = planner{}.plan(job, c, opt);
    opt.framework_overlap = false;
    const auto off = planner{}.plan(job, c, opt);
    REQUIRE(!on.plans.empty());
    REQUIRE(on.plans.size() == off.plans.size());  // the flags change no fit (memory does not depend on them)
    std::map<int, double> best_off;
    for (const auto& p : off.plans) {
        CHECK_FALSE(p.overlap_grad_reduce);  // the job's own flags (off)
        CHECK_FALSE(p.tp_comm_overlap);
        best_off[p.gpus] = p.tokens_per_s;
    }
    bool tp_seen = false;
    for (const auto& p : on.plans) {
        INFO(p.gpus << " GPUs, tp " << p.parallel.tp << " dp " << p.parallel.dp);
        CHECK(p.overlap_grad_reduce);
        CHECK(p.tp_comm_overlap == (p.parallel.tp > 1 && p.parallel.sequence_parallel));
        tp_seen = tp_seen || p.tp_comm_overlap;
        // the plan's speed is the step-time model's with those flags on ...
        job_spec j = job;
        j.parallel = p.parallel;
        j.training.micro_batch = p.micro_batch;
        j.runtime.overlap_grad_reduce = p.overlap_grad_reduce;
        j.runtime.tp_comm_overlap = p.tp_comm_overlap;
        const auto& g = c.catalog.at(p.gpu);
        const double cap = mfu_capped_tokens_per_s_per_gpu(j, g) * p.gpus;  // the measured MFU ceiling (issue 55)
        CHECK(std::min(step_time_model{}.predict(j, g, {8, 0}).tokens_per_s, cap) == Approx(p.tokens_per_s).epsilon(1e-12));
        // ... and overlap only hides communication: the same layout without it is not faster
        j.runtime.overlap_grad_reduce = j.runtime.tp_comm_overlap = false;
        CHECK(std::min(step_time_model{}.predict(j, g, {8, 0}).tokens_per_s, cap) <= p.tokens_per_s);
        // so the best plan of every GPU count is at least as fast as without the flags
        CHECK(p.tokens_per_s >= best_off.at(p.gpus));
    }
    CHECK(tp_seen);
    // A strict gain wherever there is something to hide. With the distributed optimizer (sharding pinned to
    // ZeRO-1), a layout with dp > 1 exposes max(sync / layers, sync - compute) < sync of its reduce-scatter instead
    // of all of it, and one with tp > 1 (sequence parallel) only 1/tp of its collectives plus what the GEMMs do
    // not cover: the best plan with overlap is at least the best plan without it, re-predicted with overlap.
    opt.constraints.sharding = sharding::optimizer;
    const auto zero1_off = planner{}.plan(job, c, opt);
    opt.framework_overlap = true;
    const auto zero1_on = planner{}.plan(job, c, opt);
    // (the model's own speeds: where both exceed the measured MFU ceiling, the plans' capped speeds are equal)
    const auto model_speed = [](const plan& p) { return p.uncapped_tokens_per_s > 0 ? p.uncapped_tokens_per_s : p.tokens_per_s; };
    std::map<int, double> on_by_n;
    for (const auto& p : zero1_on.plans) on_by_n[p.gpus] = model_speed(p);
    int gains = 0;
    for (const auto& p : zero1_off.plans) {
        if (p.parallel.dp * p.parallel.cp == 1 && p.parallel.tp == 1) continue;  // nothing to overlap
        INFO(p.gpus << " GPUs, tp " << p.parallel.tp << " dp " << p.parallel.dp);
        CHECK(on_by_n.at(p.gpus) > model_speed(p));
        ++gains;
    }
    CHECK(gains >= 3);  // 2, 4, 8 and 16 GPUs all have a dp or tp > 1 layout on 8-GPU nodes
}

TEST_CASE("the planner keeps what a job states beyond its search axes: recompute unit, MoE dispatch") {
    // Llama 3.1 70B on 64 H100s with Megatron's block recompute of 2 layers per chunk (a job file's parallel keys
    // recompute_method/recompute_layers): every plan is a full-recompute plan with that unit (stating the unit pins
    // recompute full, io/job_json.hpp), as `frenzy launch` will write it.
    const auto stated = job_from_json(nlohmann::json::parse(R"({"model": {"preset": "llama-3.1-70b"},
        "training": {"seq_len": 4096, "global_batch": 512, "total_tokens": 1e10},
        "parallel": {"recompute_method": "block", "recompute_layers": 2, "recompute": "full"}})"));
    plan_options o;
    o.constraints = stated.stated;
    o.frameworks = {frameworks::megatron::handle};
    const auto r = planner{}.plan(stated.job, cluster({{"h100", "h100-80g", 8, 8}}), o);
    REQUIRE(!r.plans.empty());
    for (const auto& p : r.plans) {
        CHECK(p.parallel.recompute == recompute::full);
        CHECK(p.parallel.recompute_method == recompute_method::block);
        CHECK(p.parallel.recompute_layers == 2);
    }
    // An MoE job's dispatcher and grouped GEMM stay the job's in every plan.
    auto moe = make_job(preset("mixtral-8x7b"), 4096, 256, frameworks::megatron::handle);
    moe.parallel.dispatcher = moe_dispatcher::alltoall;
    moe.parallel.grouped_gemm = true;
    plan_options mo;
    mo.frameworks = {frameworks::megatron::handle};
    const auto rm = planner{}.plan(moe, cluster({{"h100", "h100-80g", 8, 8}}), mo);
    REQUIRE(!rm.plans.empty());
    for (const auto& p : rm.plans) {
        CHECK(p.parallel.dispatcher == moe_dispatcher::alltoall);
        CHECK(p.parallel.grouped_gemm);
    }
}

TEST_CASE("a job that breaks a rule on every layout is reported with the rule, not as 'does not fit' (issue 28)") {
    // --fp8-param-gather on a bf16 job: Megatron's arguments.py refuses it whatever the layout
    auto job = make_job(preset("llama-3.1-8b"), 4096, 64, frameworks::megatron::handle);
    job.runtime.fp8_param_gather = true;
    const auto r = planner{}.plan(job, cluster({{"a", "a100-80g", 8, 2}}));
    REQUIRE(r.plans.empty());
    REQUIRE(r.infeasible.size() == 1);
    const auto& why = r.infeasible[0].reason;
    CHECK(why.find("the job is invalid on every layout tried: ") == 0);
    CHECK(why.find("fp8_param_gather") != std::string::npos);
    CHECK(why.find("does not fit") == std::string::npos);
}

TEST_CASE("offload plans fit the nodes' host memory where the cluster states it") {
    // Llama 2 7B under DeepSpeed with the optimizer offloaded: every plan's GPUs hold its states on the host, the
    // fp32 master, Adam's m and v and the fp32 gradient partition (16 B per parameter, memory/methods.hpp), x 1.5
    // per node (memory/fit.hpp, DeepSpeed's estimator): 16 x 6.74e9 x 1.5 = 162 GB (151 GiB) on one node of 8.
    job_spec j;
    j.model = preset("llama-2-7b");
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 64, .total_tokens = 1e9};
    j.runtime.framework = frameworks::deepspeed::handle;
    j.runtime.offload.optimizer = true;
    plan_options opt;
    opt.max_gpus = 8;
    auto with_host = [&](double gib) {
        auto c = cluster({{"a", "a100-80g", 8, 1}});
        c.nodes[0].host_memory_GiB = gib;
        return planner{}.plan(j, c, opt);
    };
    const auto unstated = with_host(0);
    REQUIRE_FALSE(unstated.plans.empty());
    const auto roomy = with_host(512);
    REQUIRE(roomy.plans.size() == unstated.plans.size());
    // each plan kept needs at most the node's host memory: re-estimated here
    for (const auto& p : roomy.plans) {
        auto pj = j;
        pj.parallel = p.parallel;
        pj.training.micro_batch = p.micro_batch;
        pj.training.precision = p.precision;
        const auto r = memory_estimator{}.estimate(pj);
        // all of the plan's GPUs are on the one node: it holds the whole model's states (~151 GiB)
        CHECK(host_memory_per_node(r, p.gpus, 8).value <= 512 * GiB);
        CHECK(host_memory_per_node(r, p.gpus, 8).value > 140 * GiB);
    }
    const auto small = with_host(64);
    CHECK(small.plans.empty());
    REQUIRE(small.infeasible.size() == 1);
    CHECK_THAT(small.infeasible.front().reason, Catch::Contains("host_memory_GiB=64"));
}
