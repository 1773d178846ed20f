// What a GPU holds beside the caching allocator (memory/device.hpp), bitsandbytes' paged optimizers and full
// sharding of adapter fine-tunes (memory/methods.hpp), against hand derivations given in each comment.
#include <catch2/catch.hpp>

#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace device_test {

// Llama-2-7B (preset): 6,738,415,616 parameters, 32 layers of 4 h^2 + 3 h ffn linear weights, vocab 32000 untied.
constexpr double params7b = 6738415616.0, h = 4096, ffn = 11008, n_layers = 32;
constexpr double linears = 4 * h * h + 3 * h * ffn;

job_spec llama7b(framework fw) {
    job_spec j;
    j.model = preset("llama-2-7b");
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 1};
    j.runtime.framework = fw;
    return j;
}

model_state_bytes method_states(const job_spec& j) {
    const auto f = profile_of(j);
    const auto l = stage_layouts(j, f).front();
    return method_model_states(j, l, f, sharded_model_states{}.model_states(j, l, f));
}

}  // namespace device_test

TEST_CASE("paged optimizer: bitsandbytes' paged states leave the allocator's figures") {
    using namespace device_test;
    auto j = llama7b(frameworks::hf::handle);
    j.training.precision = precision::bf16;  // pure bf16: no master copy, every parameter trained
    j.training.optimizer = optimizer_kind::adamw_8bit;
    validate(j);
    const auto unpaged = method_states(j);
    j.runtime.paged_optimizer = true;
    validate(j);
    const auto paged = method_states(j);
    // 8-bit: the two uint8 moments (2 B a parameter) are paged; the fp32 absmax of each 256-block (2 x 4/256 B)
    // is a torch tensor and stays.
    CHECK(paged.paged.value == Approx(2 * params7b).epsilon(1e-12));
    CHECK(paged.optimizer.value == Approx(2 * 4.0 / 256 * params7b).epsilon(1e-12));
    CHECK(unpaged.optimizer.value == Approx(adam8bit_state_bytes() * params7b).epsilon(1e-12));
    CHECK(paged.weights == unpaged.weights);
    CHECK(paged.gradients == unpaged.gradients);

    // The report: the paged bytes leave both peaks, one for one (no optimizer scratch for bitsandbytes' kernels).
    const auto r_unpaged = [&] {
        auto u = j;
        u.runtime.paged_optimizer = false;
        return memory_estimator{}.estimate(u);
    }();
    const auto r = memory_estimator{}.estimate(j);
    CHECK(r.paged.value == Approx(2 * params7b).epsilon(1e-12));
    CHECK(r_unpaged.peak_allocated.value - r.peak_allocated.value == Approx(2 * params7b).epsilon(1e-9));

    SECTION("32-bit paged AdamW: both fp32 moments are paged, whatever the parameters' dtype") {
        j.training.optimizer = optimizer_kind::adamw;
        const auto s = method_states(j);
        CHECK(s.paged.value == Approx(8 * params7b).epsilon(1e-12));
        CHECK(s.optimizer.value == 0);
    }
    SECTION("sharded states page their shard") {
        j.runtime.framework = frameworks::fsdp::handle;
        j.parallel.dp = 4;
        j.training.global_batch = 4;
        j.parallel.sharding = sharding::full;
        validate(j);
        CHECK(method_states(j).paged.value == Approx(2 * params7b / 4).epsilon(1e-12));
    }
}

TEST_CASE("paged optimizer: what it runs with") {
    using namespace device_test;
    auto j = llama7b(frameworks::hf::handle);
    j.runtime.paged_optimizer = true;
    j.training.optimizer = optimizer_kind::sgd;
    CHECK_THROWS_WITH(validate(j), Contains("runtime.paged_optimizer") && Contains("\"sgd\""));
    j.training.optimizer = optimizer_kind::adamw;
    j.runtime.offload.optimizer = true;
    j.runtime.framework = frameworks::deepspeed::handle;
    j.parallel.sharding = sharding::optimizer;
    CHECK_THROWS_WITH(validate(j), Contains("runtime.paged_optimizer") && Contains("runtime.offload.optimizer"));
    j.runtime.offload.optimizer = false;
    j.parallel.sharding = sharding::none;
    j.runtime.framework = frameworks::megatron::handle;  // Megatron's optimizers are its own (no bitsandbytes)
    CHECK_THROWS_WITH(validate(j), Contains("runtime.paged_optimizer") && Contains("megatron"));
}

TEST_CASE("device readouts: the CUDA context, NCCL's buffers and the resident pages") {
    using namespace device_test;
    // One communicator of 16 channels x 4 MiB for each parallel group of more than one rank.
    auto j = llama7b(frameworks::megatron::handle);
    CHECK(nccl_buffer_bytes(j).value == 0);
    j.parallel.dp = 2;
    j.parallel.tp = 2;
    j.parallel.pp = 2;
    CHECK(nccl_buffer_bytes(j).value == 3 * 16 * 4 * MiB);

    const gpu_catalog catalog;
    const auto& g = catalog.at("rtx-4090");
    memory_report r;
    r.peak_allocated = bytes{18.0 * GiB};
    r.peak_reserved = bytes{20.0 * GiB};
    r.paged = bytes{6.0 * GiB};
    r.stages.resize(1);
    const auto d = device_readouts(r, g);
    // The pages fill what the device has left beside the reserve and the context, the rest lives on the host.
    const double left = g.memory().value - 20.0 * GiB - cuda_context_bytes;
    REQUIRE(left < 6.0 * GiB);
    CHECK(d.paged_resident.value == Approx(left).epsilon(1e-12));
    CHECK(d.device.value == Approx(g.memory().value).epsilon(1e-12));
    r.paged = bytes{1.0 * GiB};
    CHECK(device_readouts(r, g).device.value == Approx(21.0 * GiB + cuda_context_bytes).epsilon(1e-12));

    // The fit rule keeps the context and NCCL's buffers free even with no margin, and the paged states out of it.
    r.nccl = bytes{64 * MiB};
    CHECK(check_fit(r, g, 0.0).capacity.value == g.memory().value - cuda_context_bytes - 64 * MiB);
    CHECK(check_fit(r, g, 0.05).capacity.value == Approx(0.95 * g.memory().value).epsilon(1e-12));
}

TEST_CASE("full sharding of an adapter fine-tune gathers the stored base and the adapters' gradients") {
    using namespace device_test;
    auto j = llama7b(frameworks::fsdp::handle);
    j.parallel.dp = 8;
    j.training.global_batch = 8;
    j.parallel.sharding = sharding::full;
    j.training.finetune = {.method = finetune_method::lora, .rank = 16, .targets = lora_q | lora_k | lora_v | lora_o};
    validate(j);
    const auto f = profile_of(j);
    const auto l = stage_layouts(j, f).front();
    const auto b = bytes_per_param(j, f);
    // The default units (framework_overheads): a layer of (P - edge) / 32 parameters, edge = the 32000 x 4096 LM
    // head, smaller; gathered_layers = 2 at 2 B and one unit's gradient at g B: 2 x 2 u + (2 + g) u.
    const double edge = 32000 * h, u = (params7b - edge) / n_layers, a = 4 * 16 * (h + h), g = b.gradients;
    REQUIRE(f.gathered_layers == 2);
    REQUIRE(b.gathered_copy == 2);
    // The method's unit: the frozen base at 2 B with its adapters (2 B gathered), the adapters' gradients only:
    // 2 (2u + 2a) + (2u + 2a + g a). The change: 6a + g a - g u.
    CHECK(detail::adapter_gather_delta(j, l, f) == Approx(6 * a + g * a - g * u).epsilon(1e-12));

    SECTION("QLoRA: the linears are gathered as stored, in 4 bits") {
        j.training.finetune.method = finetune_method::qlora;
        // A layer gathers w = (u - linears) 2 + linears x NF4 + 2a bytes, about 114 MB: less than the 16-bit LM
        // head (2 x 32000 x 4096 = 262 MB), which becomes the largest unit: 2 (2 edge) + 2 edge, gradient-free.
        const double w = (u - linears) * 2 + linears * nf4_bytes_per_param() + a * 2;
        REQUIRE(w + g * a < 2 * edge);
        const double expected = 6 * edge - (2 * 2 * u + (2 + g) * u);
        CHECK(detail::adapter_gather_delta(j, l, f) == Approx(expected).epsilon(1e-12));
        // 1.3 GB less than gathering every layer at 16 bits with its gradient, on Llama-2-7B over 8 GPUs.
        CHECK(detail::adapter_gather_delta(j, l, f) < -1.0e9);
    }
}
