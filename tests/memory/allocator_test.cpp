// The allocator policy (issue 7 item 5): the reserved-memory model is its own policy, replaceable alone with
// memory_estimator::with_allocator<>, and the default's answer is unchanged by the split.
#include <catch2/catch.hpp>

#include <type_traits>

#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;

namespace {
/// A runtime without a block cache (PYTORCH_NO_CUDA_MEMORY_CACHING=1): every free returns the memory, so the
/// reserved peak is the allocated peak.
struct no_cache {
    bytes reserved(const job_spec&, const framework_profile&, bytes allocated, const activation_bytes&,
                   const model_state_bytes&) const {
        return allocated;
    }
};
struct not_a_policy {};
/// Right name, wrong result type: not an allocator policy.
struct returns_double {
    double reserved(const job_spec&, const framework_profile&, bytes allocated, const activation_bytes&,
                    const model_state_bytes&) const {
        return allocated.value;
    }
};
/// An overhead policy's member is not an allocator's.
struct temporaries_only {
    overhead_bytes temporaries(const job_spec&, const stage_layout&, const framework_profile&, const model_state_bytes&) const {
        return {};
    }
};

job_spec llama8b_fsdp() {  // torchtitan-style: framework fsdp, full sharding, 8 GPUs
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 8192, .micro_batch = 1, .global_batch = 8};
    j.parallel = {.dp = 8, .sharding = sharding::full, .recompute = recompute::selective};
    j.runtime.framework = frameworks::fsdp::handle;
    return j;
}
}  // namespace

TEST_CASE("AllocatorPolicy accepts the default and rejects what is not an allocator") {
    static_assert(AllocatorPolicy<caching_allocator>);
    static_assert(AllocatorPolicy<no_cache>);
    static_assert(!AllocatorPolicy<not_a_policy>);
    static_assert(!AllocatorPolicy<returns_double>);
    static_assert(!AllocatorPolicy<temporaries_only>);
    static_assert(OverheadPolicy<temporaries_only> && !OverheadPolicy<no_cache>);
    // The default is the caching allocator; naming it explicitly changes nothing.
    static_assert(std::is_same_v<memory_estimator::with_allocator<caching_allocator>, memory_estimator>);
    // Swapping the allocator keeps the other three policies.
    using swapped = memory_estimator::with_allocator<no_cache>;
    static_assert(std::is_same_v<swapped::with_allocator<caching_allocator>, memory_estimator>);
    static_assert(std::is_same_v<swapped::with_overheads<framework_overheads>, swapped>);
    CHECK(std::is_same_v<std::remove_cvref_t<decltype(swapped{}.allocator())>, no_cache>);
}

TEST_CASE("swapping the allocator changes the reserved peak only") {
    const auto j = llama8b_fsdp();
    const auto def = memory_estimator{}.estimate(j);
    const auto nc = memory_estimator::with_allocator<no_cache>{}.estimate(j);
    // The allocated side does not depend on the allocator policy.
    CHECK(nc.peak_allocated.value == def.peak_allocated.value);
    REQUIRE(nc.stages.size() == def.stages.size());
    // No cache: reserved = allocated exactly.
    CHECK(nc.peak_reserved.value == nc.peak_allocated.value);
    // The default on its only stage (pp 1): reserved = allocated + 0.15 x (stored + transient activations) + the
    // sharded gradients (FSDP2 reduce-scatter stream pool), by caching_allocator's formula written out by hand from
    // the report's own breakdown: exact up to floating point (1e-9 relative).
    REQUIRE(def.stages.size() == 1);
    const auto& st = def.stages[0];
    const auto f = profile_of(j);
    const auto layout = stage_layouts(j, f).front();
    const auto ms = method_model_states(j, layout, f, sharded_model_states{}.model_states(j, layout, f));
    const auto act = method_activations(j, layout, f, transformer_activations{}.activations(j, layout, f));
    const double expected = st.peak_allocated.value + 0.15 * (act.stored.value + act.transient.value) + ms.gradients.value;
    CHECK(def.peak_reserved.value == Approx(expected).epsilon(1e-9));
    // and the gradient term is not empty: 8.03e9 parameters x 4 B fp32 grads / 8 ranks ~ 4 GB.
    CHECK(ms.gradients.value == Approx(4.0 * def.parameters / 8).epsilon(1e-3));
}

TEST_CASE("the allocator policy's state travels with the estimator") {
    const auto j = llama8b_fsdp();
    caching_allocator tight;
    tight.fragmentation = 0;
    const memory_estimator est{sharded_model_states{}, transformer_activations{}, framework_overheads{}, tight};
    const auto r = est.estimate(j);
    const auto def = memory_estimator{}.estimate(j);
    CHECK(est.allocator().fragmentation == 0);
    // Without the churn share only the side-stream gradients remain above allocated.
    const auto f = profile_of(j);
    const auto layout = stage_layouts(j, f).front();
    const auto ms = method_model_states(j, layout, f, sharded_model_states{}.model_states(j, layout, f));
    CHECK(r.peak_reserved.value == Approx(r.peak_allocated.value + ms.gradients.value).epsilon(1e-9));
    CHECK(r.peak_reserved < def.peak_reserved);
}

TEST_CASE("allocator options that hand back the whole cache reach the report, the peaks stay (issue 55)") {
    auto j = llama8b_fsdp();
    const memory_estimator est;
    const auto plain = est.estimate(j);
    CHECK_FALSE(plain.cache_returned_whole);
    CHECK_FALSE(cache_returned_whole(j));
    j.runtime.expandable_segments = true;
    const auto expandable = est.estimate(j);
    CHECK(expandable.cache_returned_whole);
    CHECK(expandable.peak_reserved == plain.peak_reserved);  // the readout max_memory_reserved is the same
    CHECK(expandable.peak_allocated == plain.peak_allocated);
    j.runtime.expandable_segments = false;
    j.runtime.empty_unused_memory_level = 1;  // Megatron: torch.cuda.empty_cache() after every forward/backward
    CHECK(est.estimate(j).cache_returned_whole);
    j.runtime.empty_unused_memory_level = 3;
    CHECK_THROWS_WITH(validate(j), Catch::Matchers::Contains("runtime.empty_unused_memory_level=3"));
}
