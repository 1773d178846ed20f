// Model-state bytes for each sharding level, checked against the ZeRO paper's figure and hand-derived values.
#include <catch2/catch.hpp>

#include "frenzy/memory/model_states.hpp"

using namespace frenzy;

namespace {
job_spec job_with(framework fw, sharding s, std::int64_t dp, precision p = precision::fp16_mixed,
                  optimizer_kind o = optimizer_kind::adam) {
    job_spec j;
    j.model = {.name = "m", .layers = 4, .hidden = 1024, .heads = 16, .ffn_hidden = 4096, .vocab = 1000};
    j.training = {.seq_len = 1024, .micro_batch = 1, .global_batch = dp, .precision = p, .optimizer = o};
    j.parallel = {.dp = dp, .sharding = s};
    j.runtime.framework = fw;
    return j;
}
double gb(const model_state_bytes& m) { return (m.weights + m.gradients + m.optimizer).value / 1e9; }
}  // namespace

// data/memory/measured_calibration.csv row 43: Rajbhandari et al. 2020 Fig. 1, Psi = 7.5e9, K = 12, N = 64:
// 120 / 31.4 / 16.6 / 1.9 GB for baseline / Pos / Pos+g / Pos+g+p (rounded in the figure; exact values below).
TEST_CASE("ZeRO paper figure 1: model states per sharding stage (formula row 43, 0.5%)") {
    const stage_layout l{.dense_params = 7.5e9};
    const sharded_model_states policy;
    const auto f = profile_of(frameworks::deepspeed::handle);
    auto at = [&](sharding s) { return gb(policy.model_states(job_with(frameworks::deepspeed::handle, s, 64), l, f)); };
    CHECK(at(sharding::none) == Approx(120.0).epsilon(0.005));                      // (2+2+12) Psi
    CHECK(at(sharding::optimizer) == Approx(4 * 7.5 + 12 * 7.5 / 64).epsilon(0.005));  // 31.41
    CHECK(at(sharding::gradients) == Approx(2 * 7.5 + 14 * 7.5 / 64).epsilon(0.005));  // 16.64
    CHECK(at(sharding::full) == Approx(16 * 7.5 / 64).epsilon(0.005));                 // 1.875
    // The figure's rounded values, to the figure's precision.
    CHECK(at(sharding::optimizer) == Approx(31.4).margin(0.05));
    CHECK(at(sharding::gradients) == Approx(16.6).margin(0.05));
    CHECK(at(sharding::full) == Approx(1.9).margin(0.05));
}

TEST_CASE("Megatron: 16-bit params + fp32 main grads whole, 12 optimizer bytes sharded by the distributed optimizer") {
    const stage_layout l{.dense_params = 1e9};
    const auto f = profile_of(frameworks::megatron::handle);
    const sharded_model_states policy;
    // bf16: 2 + 4 + 12 = 18 bytes/param (Korthikanti et al. 2022 sec. 6 use 18 bytes per parameter).
    auto none = policy.model_states(job_with(frameworks::megatron::handle, sharding::none, 8, precision::bf16_mixed), l, f);
    CHECK(none.weights.value == Approx(2e9));
    CHECK(none.gradients.value == Approx(4e9));
    CHECK(none.optimizer.value == Approx(12e9));
    // Distributed optimizer over dp = 8: 6 + 12/8 bytes/param (Megatron docs dist_optimizer.md).
    auto dopt = policy.model_states(job_with(frameworks::megatron::handle, sharding::optimizer, 8, precision::bf16_mixed), l, f);
    CHECK(gb(dopt) == Approx(6 + 12.0 / 8));
    // fp16 mixed: gradients stay fp16 (accumulate_allreduce_grads_in_fp32 is only forced for bf16).
    auto fp16 = policy.model_states(job_with(frameworks::megatron::handle, sharding::none, 8, precision::fp16_mixed), l, f);
    CHECK(fp16.gradients.value == Approx(2e9));
}

TEST_CASE("FSDP keeps fp32 parameters as the master copy and shards params, grads and states") {
    const stage_layout l{.dense_params = 1e9};
    const auto f = profile_of(frameworks::fsdp::handle);
    const sharded_model_states policy;
    auto full = policy.model_states(job_with(frameworks::fsdp::handle, sharding::full, 8, precision::bf16_mixed), l, f);
    CHECK(full.weights.value == Approx(4e9 / 8));
    CHECK(full.gradients.value == Approx(4e9 / 8));
    CHECK(full.optimizer.value == Approx(8e9 / 8));
    // SHARD_GRAD_OP: sharded fp32 params plus the gathered bf16 copy kept between forward and backward.
    auto grad = policy.model_states(job_with(frameworks::fsdp::handle, sharding::gradients, 8, precision::bf16_mixed), l, f);
    CHECK(grad.weights.value == Approx(4e9 / 8 + 2e9));
    CHECK(grad.gradients.value == Approx(4e9 / 8));
    auto none = policy.model_states(job_with(frameworks::fsdp::handle, sharding::none, 8, precision::bf16_mixed), l, f);
    CHECK(gb(none) == Approx(16.0));
}

TEST_CASE("pure precision and other optimizers") {
    const stage_layout l{.dense_params = 1e9};
    const auto f = profile_of(frameworks::ddp::handle);
    const sharded_model_states policy;
    // Pure bf16 AdamW: params, grads and both moments in bf16: 2 + 2 + 4.
    CHECK(gb(policy.model_states(job_with(frameworks::ddp::handle, sharding::none, 1, precision::bf16, optimizer_kind::adamw), l, f)) ==
          Approx(8.0));
    // fp32 SGD with momentum: 4 + 4 + 4.
    CHECK(gb(policy.model_states(job_with(frameworks::ddp::handle, sharding::none, 1, precision::fp32, optimizer_kind::sgd), l, f)) ==
          Approx(12.0));
    // Adafactor (factored second moment only): r + c values per r x c matrix -> 4 (1/h + 1/ffn) bytes/param in fp32.
    const auto ada = policy.model_states(job_with(frameworks::ddp::handle, sharding::none, 1, precision::fp32, optimizer_kind::adafactor), l, f);
    CHECK(ada.optimizer.value == Approx(4e9 * (1.0 / 1024 + 1.0 / 4096)));
    // Mixed precision with a separate master (Megatron/DeepSpeed) SGD: master 4 + momentum 4.
    const auto sgd = policy.model_states(job_with(frameworks::deepspeed::handle, sharding::none, 1, precision::bf16_mixed, optimizer_kind::sgd), l,
                                         profile_of(frameworks::deepspeed::handle));
    CHECK(sgd.optimizer.value == Approx(8e9));
}

TEST_CASE("experts are sharded over their own data-parallel group dp x cp / ep") {
    const stage_layout l{.dense_params = 1e9, .expert_params = 4e9};
    auto j = job_with(frameworks::megatron::handle, sharding::optimizer, 8, precision::bf16_mixed);
    j.model.moe = {.experts = 8, .top_k = 2};
    j.parallel.ep = 4;
    const auto r = sharded_model_states{}.model_states(j, l, profile_of(frameworks::megatron::handle));
    // 12 bytes: dense over 8 ranks, experts over 8 / 4 = 2 ranks.
    CHECK(r.optimizer.value == Approx(12 * (1e9 / 8 + 4e9 / 2)));
}
