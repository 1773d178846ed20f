// The hf framework's sharded back ends (frameworks/hf/traits.hpp backend_of: DeepSpeed ZeRO-1/2 for sharding
// optimizer/gradients, FSDP2 for full) against hand derivations, term by term, for a full fine-tune and a LoRA job of
// Llama-3.2-1B on 4 GPUs. Sources of each term: huggingface/accelerate@16cb6eb8 src/accelerate/utils/fsdp_utils.py
// fsdp2_prepare_model (trainable parameters upcast to fp32 under mixed precision) and utils/dataclasses.py
// FullyShardedDataParallelPlugin.set_mixed_precision (MixedPrecisionPolicy param_dtype bf16), DeepSpeedPlugin
// (bf16.enabled, no bucket sizes: DeepSpeed's 5e8 default, microsoft/DeepSpeed@38327e07 zero/config.py) and
// accelerator.py (no autocast under DeepSpeed). Every expected value is exact arithmetic on the model's counts:
// tolerances are floating-point rounding only (1e-12 relative).
#include <catch2/catch.hpp>

#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/frameworks/registry.hpp"

using namespace frenzy;

namespace {

// Llama-3.2-1B: 16 layers, h 2048, 32 heads of 64 (q 2048), 8 kv heads (k, v 512), ffn 8192, vocab 128256 tied.
constexpr double h1b = 2048, kv1b = 512, ffn1b = 8192, layers1b = 16, vocab1b = 128256;
constexpr double per_layer1b = 2 * h1b * h1b + 2 * h1b * kv1b + 3 * h1b * ffn1b + 2 * h1b;  // linears + two RMSNorms: 60,821,504
constexpr double P1b = layers1b * per_layer1b + vocab1b * h1b + h1b;                     // + tied embedding + final norm
constexpr double sb1b = 2048;                                                  // tokens of a micro-batch

job_spec llama1b(sharding s, bool lora) {
    job_spec j;
    j.model = preset("llama-3.2-1b");
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 4, .precision = precision::bf16_mixed};
    j.parallel = {.dp = 4, .sharding = s};
    j.runtime.framework = frameworks::hf::handle;
    if (lora) j.training.finetune = {.method = finetune_method::lora, .rank = 16, .targets = lora_q | lora_k | lora_v | lora_o};
    validate(j);
    return j;
}

struct hf_terms {
    model_state_bytes states;
    double train_temporaries = 0;  ///< framework_overheads' forward/backward temporaries + the methods' change
    double lora_delta = 0;         ///< one layer's saved-activation change under LoRA
};

hf_terms hf_terms_of(const job_spec& j) {
    const auto f = profile_of(j);
    const auto l = stage_layouts(j, f).front();
    hf_terms t;
    t.states = method_model_states(j, l, f, sharded_model_states{}.model_states(j, l, f));
    t.train_temporaries = framework_overheads{}.temporaries(j, l, f, t.states).train.value + method_temporaries(j, l, f);
    if (j.training.finetune.adapters()) t.lora_delta = detail::lora_activation_delta(j, f, false);
    return t;
}

}  // namespace

TEST_CASE("hf back end by layout: DDP for none, DeepSpeed ZeRO-1/2 for optimizer/gradients, FSDP2 for full") {
    using frameworks::hf::backend;
    using frameworks::hf::backend_of;
    CHECK(backend_of(sharding::none) == backend::ddp);
    CHECK(backend_of(sharding::optimizer) == backend::deepspeed);
    CHECK(backend_of(sharding::gradients) == backend::deepspeed);
    CHECK(backend_of(sharding::full) == backend::fsdp);
    // sharding none keeps the measured DDP profile as it is (h200-hf-* rows, tests/memory/h200_measured_test.cpp)
    const auto ddp = profile_of(llama1b(sharding::none, false));
    const auto& preset_profile = frameworks::hf::handle->memory;
    CHECK(ddp.grad_bucket_copies == preset_profile.grad_bucket_copies);
    CHECK(ddp.autocast_weight_copies == preset_profile.autocast_weight_copies);
    CHECK(ddp.lora_adapter_cast == preset_profile.lora_adapter_cast);
    CHECK(ddp.master == preset_profile.master);
    // pure bf16 has no DeepSpeed form under accelerate (bf16.enabled keeps fp32 master weights): refused, named
    auto pure = llama1b(sharding::gradients, false);
    pure.training.precision = precision::bf16;
    CHECK_THROWS_WITH(validate(pure), Catch::Contains("training.precision=\"bf16\"") && Catch::Contains("DeepSpeed"));
    pure.parallel.sharding = sharding::full;  // FSDP2 with mixed_precision no: pure bf16
    CHECK_NOTHROW(validate(pure));
    // offload: ZeRO-Offload refuses Trainer's torch optimizer; refused, named
    auto off = llama1b(sharding::gradients, false);
    off.runtime.offload.optimizer = true;
    CHECK_THROWS_WITH(validate(off), Catch::Contains("runtime.offload") && Catch::Contains("zero_force_ds_cpu_optimizer"));
}

TEST_CASE("hf full fine-tune under FSDP2 (sharding full): sharded fp32 states, bf16 units gathered, no DDP bucket") {
    REQUIRE(P1b == 1235814400.0);  // Llama-3.2-1B's published 1.24 B parameters
    const auto j = llama1b(sharding::full, false);
    const auto t = hf_terms_of(j);
    // fp32 parameters (4 B, the master copy), fp32 gradients after the reduce-scatter (4 B), Adam m and v (8 B): / 4
    CHECK(t.states.weights.value == Approx(4 * P1b / 4).epsilon(1e-12));
    CHECK(t.states.gradients.value == Approx(4 * P1b / 4).epsilon(1e-12));
    CHECK(t.states.optimizer.value == Approx(8 * P1b / 4).epsilon(1e-12));
    // temporaries: the cuBLAS workspace (32 MiB) + the gathered units: 2 units in bf16 (current + prefetched) + one
    // unit's bf16 parameters and unsharded gradients before its reduce-scatter (2 + 4 B); the largest unit is the
    // embedding (128256 x 2048 > a layer's 60.8 M). No DDP bucket copy (DDP's would add the gradients again).
    const double unit1b = vocab1b * h1b;
    CHECK(t.train_temporaries == Approx(32.0 * MiB + 2 * 2 * unit1b + (2 + 4) * unit1b).epsilon(1e-12));
    const auto f = profile_of(j);
    CHECK(f.side_stream_reduce_scatter);    // FSDP2's reduce-scatter stream pool (memory/allocator.hpp)
    CHECK_FALSE(autocast_weight_copies(j, f));  // gathered in bf16: autocast caches no weight copies
}

TEST_CASE("hf full fine-tune under DeepSpeed: bf16 module, fp32 master in the sharded optimizer, 5e8 bucket") {
    auto j = llama1b(sharding::gradients, false);  // ZeRO-2
    auto t = hf_terms_of(j);
    CHECK(t.states.weights.value == Approx(2 * P1b).epsilon(1e-12));                // bf16 module, whole
    CHECK(t.states.gradients.value == Approx(2 * P1b / 4).epsilon(1e-12));          // bf16 gradient partitions
    CHECK(t.states.optimizer.value == Approx((4 + 8) * P1b / 4).epsilon(1e-12));    // fp32 master + m + v partitions
    // workspace + DeepSpeed's reduce bucket of 5e8 bf16 elements (capped at the parameters: P > 5e8)
    CHECK(t.train_temporaries == Approx(32.0 * MiB + 5e8 * 2).epsilon(1e-12));
    j = llama1b(sharding::optimizer, false);  // ZeRO-1: gradients whole
    t = hf_terms_of(j);
    CHECK(t.states.weights.value == Approx(2 * P1b).epsilon(1e-12));
    CHECK(t.states.gradients.value == Approx(2 * P1b).epsilon(1e-12));
    CHECK(t.states.optimizer.value == Approx(12 * P1b / 4).epsilon(1e-12));
}

TEST_CASE("hf LoRA under FSDP2 and DeepSpeed: frozen bf16 base, adapters' states, no PEFT input cast") {
    // r = 16 on q (2048 -> 2048), k and v (2048 -> 512), o (2048 -> 2048): r (in + out) each, 16 layers
    const double T1b = layers1b * 16 * ((h1b + h1b) + 2 * (h1b + kv1b) + (h1b + h1b));
    auto j = llama1b(sharding::full, true);
    REQUIRE(detail::lora_params(j, false) * layers1b == T1b);
    REQUIRE(T1b == 3407872.0);
    auto t = hf_terms_of(j);
    // FSDP2: the frozen base keeps its bf16 load dtype, the adapters are upcast to fp32 (fsdp2_prepare_model); both
    // sharded over 4; adapter gradients fp32, Adam 8 B
    CHECK(t.states.weights.value == Approx((2 * P1b + 4 * T1b) / 4).epsilon(1e-12));
    CHECK(t.states.gradients.value == Approx(4 * T1b / 4).epsilon(1e-12));
    CHECK(t.states.optimizer.value == Approx(8 * T1b / 4).epsilon(1e-12));
    // the adapters are gathered in bf16 with their layer (MixedPrecisionPolicy), so PEFT's _cast_input_dtype does
    // nothing: the q/k/v and o inputs stay shared with the frozen linears; the MLP input and the down projection's
    // input (no adapter) are no longer saved; each adapter saves its rank-16 output (2 B)
    CHECK(t.lora_delta == Approx(-2 * sb1b * h1b - 2 * sb1b * ffn1b + 4 * 2 * sb1b * 16).epsilon(1e-12));

    j = llama1b(sharding::gradients, true);  // DeepSpeed ZeRO-2: the module (adapters too) cast to bf16
    t = hf_terms_of(j);
    CHECK(t.states.weights.value == Approx(2 * P1b + 2 * T1b).epsilon(1e-12));
    CHECK(t.states.gradients.value == Approx(2 * T1b / 4).epsilon(1e-12));
    CHECK(t.states.optimizer.value == Approx(12 * T1b / 4).epsilon(1e-12));
    // the reduce bucket holds trainable gradients only: min(5e8, T) bf16 elements
    CHECK(t.train_temporaries == Approx(32.0 * MiB + 2 * T1b).epsilon(1e-9));
    CHECK(t.lora_delta == Approx(-2 * sb1b * h1b - 2 * sb1b * ffn1b + 4 * 2 * sb1b * 16).epsilon(1e-12));
}
