// fp8 recipes (runtime.fp8_recipe, train/fp8_recipe.hpp; issue 25): the bytes each cast moves and keeps, what that
// adds to a step and to memory, which GPUs and frameworks run each, and the job field's errors. Values hand-derived
// from Transformer Engine's kernels (NVIDIA/TransformerEngine@d0067d0d) and torchao's casts as the header cites
// them; exact where the arithmetic is exact, else a relative 1e-9 (floating-point sums).
#include <catch2/catch.hpp>

#include "frenzy/io/job_json.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/train/fp8_recipe.hpp"

using namespace frenzy;

namespace fp8_recipes {
const gpu_type& recipe_gpu(const char* name) {
    static const gpu_catalog catalog;
    return catalog.at(name);
}
/// Llama 3.1 8B (h 4096, q 4096, kv 1024, ffn 14336, SwiGLU, 32 layers) in fp8 on 8 GPUs, seq 4096, micro-batch 1.
job_spec fp8_llama8b(framework fw, std::optional<fp8_recipe> r) {
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 64, .precision = precision::fp8_mixed};
    j.parallel = {.dp = 8, .sharding = fw == frameworks::megatron::handle ? sharding::optimizer : sharding::full};
    j.runtime.framework = fw;
    j.runtime.fp8_recipe = r;
    return j;
}
double fp8_elementwise_bytes(const job_spec& j, const char* g) {
    return step_time_model{}.predict(j, recipe_gpu(g), {8, 0}).parts.memory_bytes_mb;
}
}  // namespace fp8_recipes
using namespace fp8_recipes;

TEST_CASE("fp8 cast bytes per element by recipe, chip and Transformer Engine's norm fusion") {
    // delayed: bf16 read (2) + fp8 written (1) + its transpose (1) on Hopper; Blackwell's GEMMs take any layout (3);
    // a TE norm writes the fp8 output itself (0 beyond the norm's own pass)
    CHECK(fp8_cast_bytes(fp8_recipe::delayed, 90, true, false) == 4.0);
    CHECK(fp8_cast_bytes(fp8_recipe::delayed, 90, true, true) == 0.0);
    CHECK(fp8_cast_bytes(fp8_recipe::delayed, 100, true, false) == 3.0);
    CHECK(fp8_cast_bytes(fp8_recipe::delayed, 89, false, true) == 4.0);  // no TE norm: a cast of its own
    // tensorwise (current scaling): one more read for the amax (6), spared where the norm computed it (4)
    CHECK(fp8_cast_bytes(fp8_recipe::tensorwise, 90, true, false) == 6.0);
    CHECK(fp8_cast_bytes(fp8_recipe::tensorwise, 90, true, true) == 4.0);
    CHECK(fp8_cast_bytes(fp8_recipe::tensorwise, 100, true, false) == 5.0);
    CHECK(fp8_cast_bytes(fp8_recipe::tensorwise, 103, true, true) == 3.0);
    // rowwise (torchao): per orientation an amax read and a cast (read 2, write 1): 2 x (2 + 2) + 2 x 1
    CHECK(fp8_cast_bytes(fp8_recipe::rowwise, 90, false, false) == 10.0);
    // block scales: one kernel reads once and writes both orientations with their scales
    CHECK(fp8_cast_bytes(fp8_recipe::blockwise, 90, true, true) == 2.0 + 2.0 * (1.0 + 4.0 / 128.0));  // 4.0625
    CHECK(fp8_cast_bytes(fp8_recipe::mxfp8, 100, true, false) == 2.0 + 2.0 * (1.0 + 1.0 / 32.0));     // 4.0625
    CHECK(fp8_cast_bytes(fp8_recipe::mxfp8, 100, false, false) == 2.0 * 2.0 + 2.0 * (1.0 + 1.0 / 32.0));  // torchao
    // kept: the weight cache (both orientations but per-tensor on Blackwell), the saved input, the amax history
    CHECK(fp8_weight_cache_bytes(fp8_recipe::delayed, 90) == 2.0);
    CHECK(fp8_weight_cache_bytes(fp8_recipe::delayed, 100) == 1.0);
    CHECK(fp8_weight_cache_bytes(fp8_recipe::mxfp8, 100) == 2.0 * (1.0 + 1.0 / 32.0));
    CHECK(fp8_weight_cache_bytes(fp8_recipe::blockwise, 90) == 2.0 * (1.0 + 4.0 / 16384.0));  // 128 x 128 blocks
    CHECK(fp8_saved_input_bytes(fp8_recipe::tensorwise) == 1.0);
    CHECK(fp8_saved_input_bytes(fp8_recipe::mxfp8) == 1.0 + 1.0 / 32.0);
    CHECK(fp8_amax_history(fp8_recipe::delayed));
    CHECK_FALSE(fp8_amax_history(fp8_recipe::tensorwise));
}

TEST_CASE("a recipe's casts change the element-wise traffic of a step by the hand-derived bytes") {
    // Per token and layer (tp 1): forward casts feed QKV and fc1 from the norms (2h = 8192 elements) and the
    // projection and fc2 (q + f = 18432); backward casts the output gradients 2h + q + 2kv + 2f = 43008.
    const double tokens = 4096, layers = 32;
    const double d = fp8_elementwise_bytes(fp8_llama8b(frameworks::megatron::handle, fp8_recipe::delayed), "h100-80g");
    // Megatron's default is delayed: unset and explicit give the same step
    CHECK(fp8_elementwise_bytes(fp8_llama8b(frameworks::megatron::handle, std::nullopt), "h100-80g") == d);
    // tensorwise on H100: norm-fed 0 -> 4, the others 4 -> 6
    const double tw = fp8_elementwise_bytes(fp8_llama8b(frameworks::megatron::handle, fp8_recipe::tensorwise), "h100-80g");
    CHECK(tw - d == Approx(tokens * layers * (4.0 * 8192 + 2.0 * 18432 + 2.0 * 43008)).epsilon(1e-9));
    // delayed on B200: no transposes, 1 byte fewer per cast that is not norm-fed
    const double b200 = fp8_elementwise_bytes(fp8_llama8b(frameworks::megatron::handle, fp8_recipe::delayed), "b200");
    CHECK(d - b200 == Approx(tokens * layers * (18432.0 + 43008.0)).epsilon(1e-9));
    // mxfp8 on B200: every cast 2 + 2 x (1 + 1/32), norm-fed ones too
    const double mx = fp8_elementwise_bytes(fp8_llama8b(frameworks::megatron::handle, fp8_recipe::mxfp8), "b200");
    CHECK(mx - b200 == Approx(tokens * layers * (4.0625 * 8192 + 1.0625 * (18432.0 + 43008.0))).epsilon(1e-9));
    // torchao under FSDP: rowwise (the default) against tensorwise, 10 against 6 bytes on every cast
    const double rw = fp8_elementwise_bytes(fp8_llama8b(frameworks::fsdp::handle, std::nullopt), "h100-80g");
    const double ao_tw = fp8_elementwise_bytes(fp8_llama8b(frameworks::fsdp::handle, fp8_recipe::tensorwise), "h100-80g");
    CHECK(rw - ao_tw == Approx(tokens * layers * 4.0 * (8192.0 + 18432.0 + 43008.0)).epsilon(1e-9));
    // and the step is slower by that traffic alone (GEMM and attention work unchanged)
    step_time_model t;
    const auto pd = t.predict(fp8_llama8b(frameworks::megatron::handle, fp8_recipe::delayed), recipe_gpu("h100-80g"), {8, 0}).parts;
    const auto pt = t.predict(fp8_llama8b(frameworks::megatron::handle, fp8_recipe::tensorwise), recipe_gpu("h100-80g"), {8, 0}).parts;
    CHECK(pt.dense_flops_mb == pd.dense_flops_mb);
    CHECK(pt.compute_mb > pd.compute_mb);
}

TEST_CASE("Transformer Engine keeps block scales with the weight cache and the saved inputs, and no amax history") {
    // Llama 3.1 8B, tp 1: the linear weights of a layer h (q + 2kv) + q h + 3 h f = 218,103,808 elements
    const double linear = 4096.0 * 6144 + 4096.0 * 4096 + 3 * 4096.0 * 14336;
    REQUIRE(linear == 218103808.0);
    const memory_estimator est;
    const auto d = est.estimate(fp8_llama8b(frameworks::megatron::handle, fp8_recipe::delayed)).bottleneck().breakdown;
    const auto mx = est.estimate(fp8_llama8b(frameworks::megatron::handle, fp8_recipe::mxfp8)).bottleneck().breakdown;
    // weight cache 2 -> 2 x (1 + 1/32) bytes per element over 32 layers; the amax history of 1024 per tensor
    // (5 tensors x 4 GEMMs x 32 layers, fp32) becomes one amax
    CHECK(mx.weights.value - d.weights.value == Approx(0.0625 * 32 * linear - 128.0 * 5 * 1023 * 4).epsilon(1e-9));
    // saved inputs of the four GEMMs (h + q + h + f = 26624 per token) gain 1/32 byte of scales each
    CHECK(mx.activations.value - d.activations.value == Approx(32.0 * 4096 * 26624 / 32.0).epsilon(1e-9));
}

TEST_CASE("which GPUs run a recipe: blockwise from Hopper, mxfp8 on Blackwell only, per-tensor wherever fp8 runs") {
    auto j = fp8_llama8b(frameworks::megatron::handle, fp8_recipe::mxfp8);
    CHECK(fp8_recipe_rejected(j, recipe_gpu("b200")).empty());
    CHECK(fp8_recipe_rejected(j, recipe_gpu("gb300")).empty());  // sm103
    const auto why = fp8_recipe_rejected(j, recipe_gpu("h100-80g"));
    CHECK(why.find("runtime.fp8_recipe=\"mxfp8\"") != std::string::npos);
    CHECK(why.find("(9.0)") != std::string::npos);
    j.runtime.fp8_recipe = fp8_recipe::blockwise;
    CHECK(fp8_recipe_rejected(j, recipe_gpu("h100-80g")).empty());
    CHECK_FALSE(fp8_recipe_rejected(j, recipe_gpu("l40s")).empty());   // Ada, sm89
    CHECK_FALSE(fp8_recipe_rejected(j, recipe_gpu("mi300x")).empty()); // no CUDA capability
    j.runtime.fp8_recipe = fp8_recipe::tensorwise;
    CHECK(fp8_recipe_rejected(j, recipe_gpu("l40s")).empty());
    CHECK(fp8_recipe_rejected(j, recipe_gpu("mi300x")).empty());
    // the step-time model answers "not supported" with the reason
    const auto r = step_time_model{}.predict(fp8_llama8b(frameworks::megatron::handle, fp8_recipe::mxfp8), recipe_gpu("h100-80g"), {8, 0});
    CHECK_FALSE(r.supported);
    CHECK(r.reason.find("Blackwell") != std::string::npos);
}

TEST_CASE("runtime.fp8_recipe errors name the field, and the job JSON reads and writes it") {
    auto j = fp8_llama8b(frameworks::megatron::handle, fp8_recipe::rowwise);
    CHECK_THROWS_WITH(validate(j), Catch::Contains("runtime.fp8_recipe=\"rowwise\" needs runtime.framework=\"fsdp\" or \"ddp\" or \"hf\" or \"torchtune\" or \"litgpt\" or \"axolotl\" or \"llamafactory\" (got \"megatron\")"));
    j = fp8_llama8b(frameworks::fsdp::handle, fp8_recipe::blockwise);
    CHECK_THROWS_WITH(validate(j), Catch::Contains("runtime.fp8_recipe=\"blockwise\" needs runtime.framework=\"megatron\""));
    j = fp8_llama8b(frameworks::megatron::handle, fp8_recipe::mxfp8);
    j.training.precision = precision::bf16_mixed;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("needs training.precision=\"fp8-mixed\" (got \"bf16-mixed\")"));
    j = fp8_llama8b(frameworks::megatron::handle, fp8_recipe::tensorwise);
    j.runtime.fp8_param_gather = true;
    j.runtime.offload.optimizer = true;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("Megatron offloads fp8 parameters' optimizer only under \"delayed\""));
    // JSON: absent = unset; a name not a recipe is refused naming the field
    const auto k = fp8_llama8b(frameworks::megatron::handle, fp8_recipe::blockwise);
    const auto doc = to_json(k);
    CHECK(doc["runtime"]["fp8_recipe"] == "blockwise");
    CHECK(runtime_from_json(doc["runtime"]) == k.runtime);
    CHECK_FALSE(to_json(fp8_llama8b(frameworks::megatron::handle, std::nullopt))["runtime"].contains("fp8_recipe"));
    auto bad = doc["runtime"];
    bad["fp8_recipe"] = "hybrid";
    CHECK_THROWS_WITH(runtime_from_json(bad), Catch::Contains("runtime.fp8_recipe"));
}
