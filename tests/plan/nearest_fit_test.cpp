// The fit rule's three verdicts (memory/fit.hpp) and what makes a job fit (plan/nearest_fit.hpp): single changes
// least disruptive first, the largest micro-batch of a layout, and the planner's layouts on the same GPU type.
#include <catch2/catch.hpp>

#include "frenzy/model/presets.hpp"
#include "frenzy/plan/estimate.hpp"
#include "frenzy/plan/nearest_fit.hpp"

using namespace frenzy;

namespace {
constexpr double gib = 1024.0 * 1024.0 * 1024.0;

gpu_type gpu_of_gib(double g) {  // a catalog type with `g` GiB of memory
    gpu_type t = gpu_catalog{}.at("a100-80g");
    t.memory_mib = g * 1024.0;
    return t;
}

memory_report report(double reserved_gib, double band, double allocated_gib = -1) {
    memory_report r;
    r.peak_reserved = bytes{reserved_gib * gib};
    r.peak_allocated = bytes{(allocated_gib < 0 ? reserved_gib : allocated_gib) * gib};
    r.uncertainty = band;
    return r;
}

/// Llama 3.1 8B, FSDP full sharding, seq `seq`, micro-batch `mb`, 64 sequences on 8 GPUs.
job_spec fsdp_8b(std::int64_t seq, std::int64_t mb, recompute rc = recompute::none) {
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training.seq_len = seq;
    j.training.micro_batch = mb;
    j.training.global_batch = 64;
    j.parallel.dp = 8;
    j.parallel.sharding = sharding::full;
    j.parallel.recompute = rc;
    j.runtime.framework = frameworks::fsdp::handle;
    return j;
}
}  // namespace

TEST_CASE("fit verdicts: fits with the band, tight at the central estimate only, does not fit beyond it") {
    // 80 GiB with a 5% margin: 76 GiB usable. Band 10%.
    const auto g = gpu_of_gib(80);
    // 60 x 1.1 = 66 <= 76: fits.
    auto f = check_fit(report(60, 0.10), g, 0.05);
    CHECK(f.verdict == fit_verdict::fits);
    CHECK(f.fits);
    CHECK(f.capacity.value == Approx(76 * gib));
    CHECK(f.central.value == Approx(60 * gib));
    CHECK(f.required.value == Approx(66 * gib));
    // 70 x 1.1 = 77 > 76 but 70 <= 76: tight, and the planner's `fits` is false.
    f = check_fit(report(70, 0.10), g, 0.05);
    CHECK(f.verdict == fit_verdict::tight);
    CHECK_FALSE(f.fits);
    // Exactly at the capacity is inside (<=) for both rules.
    CHECK(check_fit(report(76, 0.0), g, 0.05).verdict == fit_verdict::fits);
    CHECK(check_fit(report(76, 0.01), g, 0.05).verdict == fit_verdict::tight);
    // 77 > 76: does not fit, whatever the band.
    f = check_fit(report(77, 0.0), g, 0.05);
    CHECK(f.verdict == fit_verdict::does_not_fit);
    CHECK_FALSE(f.fits);
    CHECK_FALSE(f.cache_flushes);
    // Reserved 90 > 76 but allocated 65 x 1.1 = 71.5 <= 76: the allocator releases its cache and retries: tight.
    f = check_fit(report(90, 0.10, 65), g, 0.05);
    CHECK(f.verdict == fit_verdict::tight);
    CHECK(f.cache_flushes);
    CHECK_FALSE(f.fits);
    CHECK(f.allocated_required.value == Approx(71.5 * gib));
    // Allocated 70 x 1.1 = 77 > 76: does not fit.
    f = check_fit(report(90, 0.10, 70), g, 0.05);
    CHECK(f.verdict == fit_verdict::does_not_fit);
    CHECK_FALSE(f.cache_flushes);
    // Tight at the central reserved estimate is not a cache flush.
    CHECK_FALSE(check_fit(report(70, 0.10, 60), g, 0.05).cache_flushes);
    // An allocator that hands back its whole cache (expandable segments, Megatron's cache emptied every step;
    // memory/allocator.hpp cache_returned_whole): the central allocated peak must fit, not the banded one (issue 55).
    auto whole = report(90, 0.10, 70);
    whole.cache_returned_whole = true;
    f = check_fit(whole, g, 0.05);
    CHECK(f.verdict == fit_verdict::tight);  // 70 <= 76 though 70 x 1.1 = 77 > 76
    CHECK(f.cache_flushes);
    whole.peak_allocated = bytes{77 * gib};  // 77 > 76: nothing to hand back makes it fit
    CHECK(check_fit(whole, g, 0.05).verdict == fit_verdict::does_not_fit);
    CHECK(to_string(fit_verdict::tight) == "tight");
    CHECK(to_string(fit_verdict::does_not_fit) == "does_not_fit");
    CHECK(parse_enum<fit_verdict>("verdict", "fits") == fit_verdict::fits);
}

TEST_CASE("nearest fits: each suggestion fits, changes one field, and is the smallest change of its kind") {
    const auto g = gpu_catalog{}.at("a100-80g");
    const auto j = fsdp_8b(4096, 8, recompute::selective);
    REQUIRE_FALSE(check_fit(memory_estimator{}.estimate(j), g).fits);
    const auto s = nearest_fits(j, g);
    REQUIRE_FALSE(s.empty());
    for (const auto& x : s) {
        INFO(x.field << " " << x.from << " -> " << x.to);
        CHECK(x.fit.verdict == fit_verdict::fits);
        CHECK(x.fit == check_fit(memory_estimator{}.estimate(x.job), g));
        CHECK(x.from != x.to);
    }
    // The micro-batch suggestion comes first (the least disruptive) and is the largest that fits: the next larger
    // divisor of 64 / 8 does not fit.
    REQUIRE(s.front().field == "training.micro_batch");
    const auto mb = s.front().job.training.micro_batch;
    CHECK(mb < 8);
    CHECK(s.front().job.training.global_batch == 64);  // the global batch is kept
    for (std::int64_t bigger = mb + 1; bigger <= 8; ++bigger) {
        if (8 % bigger != 0) continue;
        auto c = j;
        c.training.micro_batch = bigger;
        CHECK_FALSE(check_fit(memory_estimator{}.estimate(c), g).fits);
        break;
    }
    // A job that fits already needs no change.
    CHECK(nearest_fits(fsdp_8b(2048, 1, recompute::full), gpu_catalog{}.at("a100-80g")).empty());
}

TEST_CASE("max micro-batch: the largest divisor that fits, the largest that is tight, consistent with estimate") {
    const auto g = gpu_catalog{}.at("a100-80g");
    const auto j = fsdp_8b(8192, 1, recompute::selective);
    const auto m = max_micro_batch(j, g);
    CHECK(m.tried == 8);  // 64 sequences / dp 8
    REQUIRE(m.fits >= 1);
    CHECK(m.tight >= m.fits);
    auto at = [&](std::int64_t mb) {
        auto c = j;
        c.training.micro_batch = mb;
        return estimate(c, &g).fit->verdict;
    };
    CHECK(at(m.fits) == fit_verdict::fits);
    for (const auto mb : divisors_of(8))
        if (mb > m.fits) CHECK(at(mb) != fit_verdict::fits);
    for (const auto mb : divisors_of(8))
        if (mb > m.tight) CHECK(at(mb) == fit_verdict::does_not_fit);
}

TEST_CASE("planner alternatives: a layout on the same GPU type with at most the job's GPUs, and the fewest GPUs") {
    const auto g = gpu_catalog{}.at("a100-40g");
    auto j = fsdp_8b(4096, 4);
    j.parallel.sharding = sharding::none;  // 16 B per parameter on every GPU: 120 GiB of states alone
    const auto a = planner_alternatives(j, g);
    REQUIRE(a.same_gpus);
    REQUIRE(a.fewest_gpus);
    CHECK(a.same_gpus->gpus <= 8);
    CHECK(a.same_gpus->gpu == "a100-40g");
    CHECK(a.same_gpus->required.value <= a.same_gpus->capacity.value);
    CHECK(a.fewest_gpus->gpus <= a.same_gpus->gpus);
    // 8B parameters x 16 B (bf16 weights and gradients, fp32 master and Adam) = 120 GiB of states: even fully
    // sharded they need more than one 38 GiB-usable GPU, so the fewest is at least 4.
    CHECK(a.fewest_gpus->gpus >= 4);
}

namespace {
/// The README's first question: Llama 3.1 8B at 8192, micro-batch 1, global batch 8, sharded optimizer, selective
/// recompute, Megatron-LM on 8 GPUs.
job_spec readme_8b_on_8() {
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training.seq_len = 8192;
    j.training.micro_batch = 1;
    j.training.global_batch = 8;
    j.parallel.dp = 8;
    j.parallel.sharding = sharding::optimizer;
    j.parallel.recompute = recompute::selective;
    j.runtime.framework = frameworks::megatron::handle;
    return j;
}
}  // namespace

TEST_CASE("nearest fits keep the GPU count: more tp takes dp down by as much and turns Megatron's SP on") {
    const auto g = gpu_catalog{}.at("h100-80g");
    const auto j = readme_8b_on_8();
    REQUIRE_FALSE(check_fit(memory_estimator{}.estimate(j), g).fits);
    for (const bool stated : {true, false}) {
        const auto s = nearest_fits(j, g, default_margin, memory_estimator{}, advice_options{stated});
        REQUIRE_FALSE(s.empty());
        const fit_suggestion* tp = nullptr;
        for (const auto& x : s) {
            INFO(x.field << " " << x.from << " -> " << x.to);
            CHECK(x.job.parallel.gpus() == 8);  // something fits on 8, so no suggestion uses more
            CHECK(x.fit == check_fit(memory_estimator{}.estimate(x.job), g));
            if (x.field == "parallel.tp") tp = &x;
        }
        REQUIRE(tp);
        CHECK(tp->job.parallel.tp == 2);
        CHECK(tp->job.parallel.dp == 4);
        CHECK(tp->job.parallel.sequence_parallel);
        // a stated global batch is kept (2 micro-batches per step); an unstated one stays micro-batch x dp
        CHECK(tp->job.training.global_batch == (stated ? 8 : 4));
    }
}

TEST_CASE("nearest fits: more GPUs only when nothing fits on the job's own, and then the count says so") {
    const auto g = gpu_catalog{}.at("a100-80g");
    job_spec j;  // Qwen3-30B-A3B, FSDP full sharding, 8 x A100: no single change fits on 8 (issue 55)
    j.model = preset("qwen3-30b-a3b");
    j.training.seq_len = 4096;
    j.training.global_batch = 8;
    j.parallel.dp = 8;
    j.parallel.sharding = sharding::full;
    j.runtime.framework = frameworks::fsdp::handle;
    const auto s = nearest_fits(j, g, default_margin, memory_estimator{}, advice_options{false});
    REQUIRE(s.size() == 1);
    CHECK(s.front().job.parallel.gpus() > 8);
    CHECK(s.front().fit.fits);
    auto on_8 = j;  // tp 2 on the same 8 GPUs (dp 4), the change once offered with 72.73 GiB for 16 GPUs
    on_8.parallel.tp = 2;
    on_8.parallel.dp = 4;
    on_8.training.global_batch = 4;
    CHECK_FALSE(check_fit(memory_estimator{}.estimate(on_8), g).fits);
}

TEST_CASE("planner alternatives: an unstated global batch is the planner's to choose, as in frenzy plan") {
    const auto g = gpu_catalog{}.at("rtx-4090");
    job_spec j;  // LoRA of Llama 3.1 8B at 4096 on one 24 GB card: one micro-batch per step pins dp to 1
    j.model = preset("llama-3.1-8b");
    j.training.seq_len = 4096;
    j.training.global_batch = 1;
    j.training.finetune.method = finetune_method::lora;
    j.runtime.framework = default_framework(j.training, j.parallel);
    REQUIRE_FALSE(check_fit(memory_estimator{}.estimate(j), g).fits);
    const auto pinned = planner_alternatives(j, g, default_margin, 64);
    CHECK(pinned.global_batch == 1);
    CHECK_FALSE(pinned.global_batch_chosen);
    const auto free = planner_alternatives(j, g, default_margin, 64, advice_options{false});
    CHECK(free.global_batch_chosen);
    CHECK(free.global_batch == default_global_batch(j));
    REQUIRE(free.fewest_gpus);
    CHECK(free.fewest_gpus->gpus == 2);  // `frenzy plan --gpus 8xrtx-4090` starts at 2 GPUs
    CHECK(free.none_reason.empty());
    CHECK(free.max_gpus == 64);
    // pinned to one sequence per step the planner has only tp and pp, and finds less or nothing
    CHECK((!pinned.fewest_gpus || pinned.fewest_gpus->gpus >= free.fewest_gpus->gpus));
}
