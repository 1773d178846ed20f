// What a tensor-parallel rank keeps besides the Korthikanti terms (issue 10, step 1), each derived by hand from the
// framework code named in the header it tests:
//  - DTensor sequence parallelism (torchtitan) saves the all-gathered, full-sequence inputs of the column-parallel
//    linears and of the LM head (framework_profile::saves_gathered_inputs), fp8 ones under torchao float8;
//  - Megatron's global memory buffer "mpu" holds the LM head's all-gathered input under sequence parallelism.
#include <catch2/catch.hpp>

#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;

namespace {
job_spec llama8b_tp4(framework fw, bool sp) {
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 4096, .micro_batch = 2, .global_batch = 4};
    j.parallel = {.dp = 2, .tp = 4, .sequence_parallel = sp};
    j.runtime.framework = fw;
    return j;
}
constexpr double s = 4096, b = 2, h = 4096, t = 4;
}  // namespace

TEST_CASE("DTensor sequence parallelism saves the gathered GEMM inputs, Megatron saves the local shard") {
    auto j = llama8b_tp4(frameworks::fsdp::handle, true);
    j.runtime.compile = true;  // fused elementwise ops: the comparison isolates the gathered inputs
    auto f = profile_of(j);
    CHECK(f.saves_gathered_inputs);
    const auto gathered = layer_activations(j, f, false);
    f.saves_gathered_inputs = false;
    const auto local = layer_activations(j, f, false);
    // Two column-parallel inputs per layer (the QKV input, the w1/w3 input), each s b h x 2 B gathered instead of
    // s b h / t x 2 B: 2 x 2 x s b h x (1 - 1/4) = 3 s b h bytes = 201,326,592 B for s 4096, b 2, h 4096.
    CHECK(gathered.none - local.none == Approx(2 * 2 * s * b * h * (1 - 1 / t)).epsilon(1e-12));
    // Without sequence parallelism (or with tp 1) nothing is gathered: the flag stays off.
    CHECK_FALSE(profile_of(llama8b_tp4(frameworks::fsdp::handle, false)).saves_gathered_inputs);
    CHECK_FALSE(profile_of(llama8b_tp4(frameworks::megatron::handle, true)).saves_gathered_inputs);
}

TEST_CASE("torchao float8 gathers the column-parallel inputs in fp8") {
    auto j = llama8b_tp4(frameworks::fsdp::handle, true);
    j.runtime.compile = true;
    j.training.precision = precision::fp8_mixed;
    auto f = profile_of(j);
    const auto fp8 = layer_activations(j, f, false);
    f.saves_gathered_inputs = false;
    const auto local = layer_activations(j, f, false);
    // 1 B x s b h gathered vs 2 B x s b h / 4 local, twice: 2 x s b h x (1 - 2/4) = s b h bytes.
    CHECK(fp8.none - local.none == Approx(2 * s * b * h * (1 - 2 / t)).epsilon(1e-12));
}

TEST_CASE("the LM head keeps its gathered input on the last stage under DTensor sequence parallelism") {
    auto j = llama8b_tp4(frameworks::fsdp::handle, true);
    j.runtime.compile = true;
    j.parallel.recompute = recompute::full;  // the layers keep only their s b h / t inputs: isolates the head
    const auto f = profile_of(j);
    const auto l = stage_layouts(j, f).front();
    auto f_local = f;
    f_local.saves_gathered_inputs = false;
    const auto a = transformer_activations{}.activations(j, l, f);
    const auto a_local = transformer_activations{}.activations(j, l, f_local);
    // Under full recompute the layers' stored bytes do not depend on the flag; the head's input grows from
    // s b h / t to s b h, 2 B: 2 s b h (1 - 1/4) = 100,663,296 B, on one micro-batch in flight (pp 1).
    CHECK(a.stored.value - a_local.stored.value == Approx(2 * s * b * h * (1 - 1 / t)).epsilon(1e-12));
}

TEST_CASE("Megatron's global memory buffer holds the LM head's gathered input under sequence parallelism") {
    const auto with_sp = llama8b_tp4(frameworks::megatron::handle, true);
    const auto without = llama8b_tp4(frameworks::megatron::handle, false);
    const auto fs = profile_of(with_sp), fn = profile_of(without);
    const auto ls = stage_layouts(with_sp, fs).front(), ln = stage_layouts(without, fn).front();
    const auto ms = sharded_model_states{}.model_states(with_sp, ls, fs);
    const auto mn = sharded_model_states{}.model_states(without, ln, fn);
    const double t_sp = framework_overheads{}.temporaries(with_sp, ls, fs, ms).train.value;
    const double t_no = framework_overheads{}.temporaries(without, ln, fn, mn).train.value;
    // dp 2 buckets nothing for Megatron (no bucket copies); the only difference is the "mpu" buffer:
    // s b h 16-bit values = 2 x 4096 x 2 x 4096 = 67,108,864 B.
    CHECK(t_sp - t_no == Approx(2 * s * b * h).epsilon(1e-12));
    // A first pipeline stage without the head has no such buffer.
    auto pp = with_sp;
    pp.parallel.pp = 2;
    pp.parallel.dp = 1;
    const auto fp = profile_of(pp);
    const auto first = stage_layouts(pp, fp).front();
    const auto last = stage_layouts(pp, fp).back();
    const double t_first = framework_overheads{}.temporaries(pp, first, fp, sharded_model_states{}.model_states(pp, first, fp)).train.value;
    CHECK(t_first == Approx(fp.workspace_bytes).epsilon(1e-12));
    const double t_last = framework_overheads{}.temporaries(pp, last, fp, sharded_model_states{}.model_states(pp, last, fp)).train.value;
    CHECK(t_last - t_first == Approx(2 * s * b * h).epsilon(1e-12));
}

TEST_CASE("the final RMSNorm stays eager outside the compiled blocks and keeps an fp32 copy of its input") {
    auto j = llama8b_tp4(frameworks::fsdp::handle, true);
    j.runtime.compile = true;    // torchtitan compiles the TransformerBlocks only
    j.runtime.norm_fp32 = true;  // its own eager RMSNorm (models/norms.py@9dec370), as in the rows it was read from
    const auto f = profile_of(j);
    CHECK(f.eager_final_norm);
    CHECK_FALSE(profile_of(frameworks::megatron::handle).eager_final_norm);  // Megatron/TE: fused norm kernels
    auto f_fused = f;
    f_fused.eager_final_norm = false;
    const auto l = stage_layouts(j, f).front();
    const auto a = transformer_activations{}.activations(j, l, f);
    const auto a_fused = transformer_activations{}.activations(j, l, f_fused);
    // x.float() of the sequence-sharded input: 4 B x s b h / t = 33,554,432 B, one micro-batch in flight.
    CHECK(a.stored.value - a_fused.stored.value == Approx(4 * s * b * h / t).epsilon(1e-12));
    // torch.nn.RMSNorm on PyTorch >= 2.9 (fsdp's default) is one kernel that keeps no fp32 copy, eager or not
    j.runtime.norm_fp32.reset();
    const auto a_native = transformer_activations{}.activations(j, l, profile_of(j));
    CHECK(a_native.stored.value == Approx(a_fused.stored.value).epsilon(1e-12));
}
