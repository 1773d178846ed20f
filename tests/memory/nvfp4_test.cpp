// NVFP4 (fp4-mixed: Transformer Engine's NVFP4BlockScaling, Megatron --fp4-format e2m1), each against a hand
// derivation from TE's NVFP4 tensor layout (train/fp8_recipe.hpp nvfp4_element_bytes: E2M1 data two per byte, one
// E4M3 scale byte per 16 elements = 0.5625 B), and the rules and import of Megatron's fp4 flags.
#include <catch2/catch.hpp>

#include "frenzy/frameworks/megatron/import.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"
#include "megatron_llama7b.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

TEST_CASE("NVFP4: Transformer Engine keeps each GEMM weight in both orientations at 0.5625 B an element") {
    namespace n = megatron_llama7b;
    CHECK(nvfp4_element_bytes == 0.5625);
    const auto bf16 = n::states(n::job(precision::bf16_mixed));
    const auto fp4 = n::states(n::job(precision::fp4_mixed));
    // rowwise + columnwise NVFP4 copies: 2 x 0.5625 = 1.125 B per GEMM weight, 1.125 x 202,375,168 x 32 =
    // 7,285,506,048 B; plus one amax, scale and scale_inv (3 fp32) for each of 5 tensors of 4 GEMMs a layer.
    CHECK(fp4.weights.value - bf16.weights.value == Approx(1.125 * n::layer_linears * n::layers + n::layers * 4 * 5 * 3 * 4).epsilon(1e-12));
    CHECK(fp4.gradients == bf16.gradients);
    CHECK(fp4.optimizer == bf16.optimizer);
    // fp8 under delayed scaling keeps 2 B (fp8 data + transpose, Hopper's count) and a 1024-long amax history
    const auto fp8 = n::states(n::job(precision::fp8_mixed));
    CHECK(fp8.weights.value - fp4.weights.value ==
          Approx((2.0 - 1.125) * n::layer_linears * n::layers + n::layers * 4 * 5 * (1026 - 3) * 4).epsilon(1e-12));
}

TEST_CASE("NVFP4 saves the columnwise NVFP4 copy of each GEMM input where bf16 saves 2 B and fp8 1 B") {
    namespace n = megatron_llama7b;
    const double bf16 = n::acts(n::job(precision::bf16_mixed)).stored.value;
    const double fp8 = n::acts(n::job(precision::fp8_mixed)).stored.value;
    const double fp4 = n::acts(n::job(precision::fp4_mixed)).stored.value;
    REQUIRE(bf16 > fp8);
    // the same GEMM inputs are spared: (2 - 0.5625) / (2 - 1) = 1.4375 times what fp8 spares
    CHECK((bf16 - fp4) / (bf16 - fp8) == Approx(1.4375).epsilon(1e-9));
}

TEST_CASE("fp4-mixed: Megatron's NVFP4 only, with bf16 gradient buffers allowed") {
    namespace n = megatron_llama7b;
    auto j = n::job(precision::fp4_mixed);
    j.runtime.grad_reduce_bf16 = true;  // Megatron keeps bf16 parameters under --fp4-format
    CHECK_NOTHROW(validate(j));
    j.runtime.grad_reduce_bf16 = false;
    j.runtime.framework = frameworks::fsdp::handle;
    j.parallel.sharding = sharding::full;
    CHECK_THROWS_WITH(validate(j), "training.precision=\"fp4-mixed\" (Transformer Engine's NVFP4 recipe) needs "
                                   "runtime.framework=\"megatron\" (got \"fsdp\")");
}

TEST_CASE("Megatron's fp4 flags are read as megatron/training/arguments.py reads them") {
    const std::string model = R"("num-layers": 2, "hidden-size": 64, "num-attention-heads": 4, "vocab-size": 128, "seq-length": 128, )";
    const auto ok = megatron_import_text("{" + model + R"("bf16": true, "fp4-format": "e2m1", "fp4-recipe": "nvfp4", "grad-reduce-in-bf16": true})");
    CHECK(ok.job.training.precision == precision::fp4_mixed);
    CHECK(ok.job.runtime.grad_reduce_bf16);
    CHECK(ok.ignored.empty());
    CHECK_THROWS_WITH(megatron_import_text("{" + model + R"("bf16": true, "fp4-format": "e2m1", "fp8-format": "hybrid"})"),
                      Contains("--fp4-format with --fp8-format"));
    CHECK_THROWS_WITH(megatron_import_text("{" + model + R"("bf16": true, "fp4-param-gather": true})"),
                      Contains("--fp4-param-gather needs --fp4-format"));
    CHECK_THROWS_WITH(megatron_import_text("{" + model + R"("bf16": true, "fp4-format": "e2m1", "fp4-recipe": "mxfp4"})"),
                      Contains("--fp4-recipe"));
    const auto custom = megatron_import_text("{" + model + R"("bf16": true, "fp4-format": "e2m1", "fp4-recipe": "custom", "fp4-param-gather": true})");
    CHECK(custom.job.training.precision == precision::fp4_mixed);
    REQUIRE(custom.ignored.size() == 2);
    CHECK_THAT(custom.ignored[0] + custom.ignored[1], Contains("--fp4-recipe custom") && Contains("--fp4-param-gather"));
    const auto alone = megatron_import_text("{" + model + R"("bf16": true, "fp4-recipe": "nvfp4"})");
    CHECK(alone.job.training.precision == precision::bf16_mixed);
    CHECK(alone.ignored == std::vector<std::string>{"--fp4-recipe nvfp4 (without --fp4-format)"});
}
