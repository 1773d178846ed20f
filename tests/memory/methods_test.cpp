// Training methods of memory/methods.hpp against hand derivations (no published measured table of LoRA/QLoRA
// peaks was found in the stored public repositories; every expected value below is derived in its comment).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>

#include "litgpt_table.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace {

// Llama-2-7B on one GPU: h = 4096, ffn = 11008, 32 layers, vocab 32000 untied (Touvron et al. 2023b; preset).
constexpr double h = 4096, ffn = 11008, layers = 32, vocab = 32000;
constexpr double layer_linears = 4 * h * h + 3 * h * ffn;       // 202,375,168 weights a layer
constexpr double non_linear = 2 * vocab * h + (2 * layers + 1) * h;  // embedding + LM head + 65 RMSNorms

job_spec llama7b(framework fw = frameworks::fsdp::handle) {
    job_spec j;
    j.model = preset("llama-2-7b");
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 1};
    j.runtime.framework = fw;
    return j;
}

stage_layout only_stage(const job_spec& j) { return stage_layouts(j, profile_of(j)).front(); }

model_state_bytes states(const job_spec& j) {
    const auto f = profile_of(j);
    const auto l = only_stage(j);
    return method_model_states(j, l, f, sharded_model_states{}.model_states(j, l, f));
}

activation_bytes acts(const job_spec& j) {
    const auto f = profile_of(j);
    const auto l = only_stage(j);
    return method_activations(j, l, f, transformer_activations{}.activations(j, l, f));
}

}  // namespace

TEST_CASE("storage constants of bitsandbytes") {
    // NF4 with double quantisation: 4 bits + 8-bit absmax per 64 + fp32 absmax per 256 x 64 (QLoRA sec. 3:
    // 0.127 bits of constants per parameter): 0.5 + 1/64 + 4/16384 bytes.
    CHECK(nf4_bytes_per_param() == Approx(0.5 + 0.127 / 8).epsilon(1e-3));
    CHECK(nf4_bytes_per_param(false) == 0.5 + 4.0 / 64);  // fp32 absmax per 64: 0.5 bits per parameter
    // 8-bit Adam: 2 x (1 byte + 4 bytes / 256).
    CHECK(adam8bit_state_bytes() == 2.03125);
}

TEST_CASE("LoRA: adapter count, frozen base, adapter states") {
    auto j = llama7b();
    j.training.finetune = {.method = finetune_method::lora, .rank = 16, .targets = lora_q | lora_k | lora_v | lora_o};
    validate(j);
    // r (in + out) per targeted linear: 4 x 16 x (4096 + 4096) = 524,288 a layer, 16,777,216 in all (the count
    // PEFT's print_trainable_parameters reports for this configuration).
    CHECK(detail::lora_params(j, false) * layers == 16777216.0);
    const auto ms = states(j);
    const double base = layer_linears * layers + non_linear;  // 6,738,415,616 (preset count)
    REQUIRE(base == 6738415616.0);
    // FSDP profile, bf16-mixed: frozen base in bf16 (2 B); adapters fp32 (4 B) + fp32 grads (4 B) + Adam (8 B).
    CHECK(ms.weights.value == Approx(2 * base + 4 * 16777216.0).epsilon(1e-12));
    CHECK(ms.gradients.value == Approx(4 * 16777216.0).epsilon(1e-12));
    CHECK(ms.optimizer.value == Approx(8 * 16777216.0).epsilon(1e-12));

    SECTION("full sharding over 8 GPUs divides frozen and trainable states alike") {
        j.parallel.dp = 8;
        j.training.global_batch = 8;
        j.parallel.sharding = sharding::full;
        const auto s8 = states(j);
        CHECK(s8.weights.value == Approx((2 * base + 4 * 16777216.0) / 8).epsilon(1e-12));
        CHECK(s8.gradients.value == Approx(4 * 16777216.0 / 8).epsilon(1e-12));
        CHECK(s8.optimizer.value == Approx(8 * 16777216.0 / 8).epsilon(1e-12));
    }
    SECTION("all seven linears of a SwiGLU layer") {
        j.training.finetune.targets = lora_q | lora_k | lora_v | lora_o | lora_gate | lora_up | lora_down;
        // + gate, up: 16 x (4096 + 11008) each, down: 16 x (11008 + 4096): 3 x 241,664 = 724,992 a layer
        CHECK(detail::lora_params(j, false) == 524288.0 + 3 * 16 * (h + ffn));
    }
    SECTION("tensor parallelism: column-parallel B and row-parallel A are split, the other factor replicated") {
        j.parallel.tp = 2;
        // q, k, v: r (4096 + 4096 / 2) each; o: r (4096 / 2 + 4096): 4 x 16 x 6144 = 393,216
        CHECK(detail::lora_params(j, false) == 4 * 16 * 6144.0);
    }
}

TEST_CASE("QLoRA: NF4 linears, 16-bit embeddings and norms, dequantised weight as a transient") {
    auto j = llama7b();
    j.training.finetune = {.method = finetune_method::qlora, .rank = 64,
                           .targets = lora_q | lora_k | lora_v | lora_o | lora_gate | lora_up | lora_down};
    validate(j);
    const double adapters = layers * 64 * (4 * 2 * h + 3 * (h + ffn));  // 32 x 64 x 78,080 = 159,907,840
    CHECK(detail::lora_params(j, false) * layers == adapters);
    const auto ms = states(j);
    CHECK(ms.weights.value ==
          Approx(layer_linears * layers * nf4_bytes_per_param() + non_linear * 2 + adapters * 4).epsilon(1e-12));
    // ~3.34 GB of NF4 + 0.52 GB of 16-bit embeddings: the "7B in under 4 GB" of the QLoRA paper's Table/Fig. 1.
    CHECK(layer_linears * layers * nf4_bytes_per_param() + non_linear * 2 < 4e9);
    // Largest linear (gate/up/down: 4096 x 11008) dequantised to bf16: 90,177,536 bytes.
    const auto f = profile_of(j);
    CHECK(method_temporaries(j, only_stage(j), f) == 2 * h * ffn);
}

TEST_CASE("LoRA activations: frozen linears keep no input, adapters save their rank-r output") {
    auto plain = llama7b();
    auto j = plain;
    j.training.finetune = {.method = finetune_method::lora, .rank = 16, .targets = lora_q | lora_k | lora_v | lora_o};
    // Per layer and micro-batch (s b = 2048, 2-byte activations): the MLP input (norm output, s b h) and the
    // down projection's input (s b ffn) are no longer saved; four adapters save s b r each.
    const double sb = 2048;
    const double delta = -2 * sb * h - 2 * sb * ffn + 4 * 2 * sb * 16;
    CHECK(detail::lora_activation_delta(j, false) == delta);
    CHECK(acts(j).stored.value == Approx(acts(plain).stored.value + layers * delta).epsilon(1e-12));
    // With every linear targeted, only the adapter outputs are added.
    j.training.finetune.targets = lora_q | lora_k | lora_v | lora_o | lora_gate | lora_up | lora_down;
    CHECK(detail::lora_activation_delta(j, false) == 7 * 2 * sb * 16);
}

TEST_CASE("freezing the first layers: no states and no saved activations for them") {
    auto plain = llama7b(frameworks::deepspeed::handle);
    plain.parallel.sharding = sharding::optimizer;
    auto j = plain;
    j.training.finetune = {.method = finetune_method::freeze, .frozen_layers = 16};
    validate(j);
    const auto full = states(plain), fr = states(j);
    // Frozen: 16 layers (202,375,168 + 2 x 4096 norms each) + the embedding (32000 x 4096, vocab padded to 32000).
    const double frozen = 16 * (layer_linears + 2 * h) + vocab * h;
    const double all = layer_linears * layers + non_linear;
    // DeepSpeed profile: 2-byte weights for everything; 2-byte grads and 12 B of optimizer for the trainable rest.
    CHECK(fr.weights.value == Approx(2 * all).epsilon(1e-12));
    CHECK(fr.gradients.value == Approx(2 * (all - frozen)).epsilon(1e-12));
    CHECK(fr.optimizer.value == Approx(12 * (all - frozen)).epsilon(1e-12));
    CHECK(full.gradients.value == Approx(2 * all).epsilon(1e-12));
    // Activations: the frozen half has no autograd graph.
    const auto l = only_stage(plain);
    const auto f = profile_of(plain);
    const double per_layer = layer_activations(plain, f, false).none;
    CHECK(acts(j).stored.value == Approx(acts(plain).stored.value - 16 * per_layer).epsilon(1e-12));
    (void)l;
}

TEST_CASE("8-bit AdamW: two bytes and two block scales per parameter") {
    auto j = llama7b(frameworks::deepspeed::handle);
    j.training.optimizer = optimizer_kind::adamw_8bit;
    const double all = layer_linears * layers + non_linear;
    // Separate fp32 master (4 B) + 2.03125 B of 8-bit states.
    CHECK(states(j).optimizer.value == Approx(all * (4 + 2.03125)).epsilon(1e-12));
    auto f = llama7b(frameworks::fsdp::handle);
    f.training.optimizer = optimizer_kind::adamw_8bit;
    // FSDP keeps fp32 parameters as the master: only the states.
    CHECK(states(f).optimizer.value == Approx(all * 2.03125).epsilon(1e-12));
    f.runtime.framework = frameworks::megatron::handle;
    CHECK_THROWS_WITH(validate(f), Contains("adamw-8bit") && Contains("megatron"));
}

TEST_CASE("CPU offload: what stays on the GPU") {
    const double all = layer_linears * layers + non_linear;
    SECTION("ZeRO-Offload (DeepSpeed stage 2 + offload_optimizer): 16-bit weights only") {
        auto j = llama7b(frameworks::deepspeed::handle);
        j.parallel.sharding = sharding::gradients;
        j.runtime.offload.optimizer = true;
        validate(j);
        const auto ms = states(j);
        CHECK(ms.weights.value == Approx(2 * all).epsilon(1e-12));
        CHECK(ms.gradients.value == 0);
        CHECK(ms.optimizer.value == 0);
        // On the host: fp32 master + Adam m and v (12 B) and the fp32 gradient partition (4 B), DeepSpeed's own
        // estimator's 16 B per parameter (stage_1_and_2.py estimate_zero2_model_states_mem_needs, one GPU:
        // max(4 x 1, 16)).
        CHECK(ms.host.value == Approx(16 * all).epsilon(1e-12));
        // Eight GPUs share the states; a node of eight needs them all, x 1.5 (additional_buffer_factor)
        j.parallel.dp = 8;
        j.training.global_batch = 8;
        const auto r = memory_estimator{}.estimate(j);
        CHECK(r.host_per_gpu.value == Approx(16 * all / 8).epsilon(1e-9));
        CHECK(host_memory_per_node(r, 8, 8).value == Approx(16 * all * 1.5).epsilon(1e-9));
        // the same eight GPUs on nodes of four: each node holds half the states
        CHECK(host_memory_per_node(r, 8, 4).value == Approx(8 * all * 1.5).epsilon(1e-9));
    }
    SECTION("ZeRO-Infinity parameters: nothing persistent; the gathered layers are temporaries") {
        auto j = llama7b(frameworks::deepspeed::handle);
        j.parallel.sharding = sharding::full;
        j.runtime.offload = {.optimizer = true, .parameters = true};
        validate(j);
        const auto ms = states(j);
        CHECK(ms.weights.value + ms.gradients.value + ms.optimizer.value == 0);
        // 16 B of optimizer side and the 16-bit parameters (2 B): stage3.py estimate_zero3_model_states_mem_needs'
        // 18 B per parameter with parameters offloaded
        CHECK(ms.host.value == Approx(18 * all).epsilon(1e-12));
        const auto r = memory_estimator{}.estimate(j);
        CHECK(r.peak_allocated.value > 0);
        CHECK(r.bottleneck().breakdown.temporary.value > 2 * layer_linears);  // at least one gathered layer
    }
    SECTION("Megatron --optimizer-cpu-offload: fp32 main grads stay on the GPU") {
        auto j = llama7b(frameworks::megatron::handle);
        j.parallel.sharding = sharding::optimizer;
        j.runtime.offload.optimizer = true;
        validate(j);
        const auto ms = states(j);
        CHECK(ms.optimizer.value == 0);
        CHECK(ms.gradients.value > 4 * all * 0.999);  // padded vocabulary only adds
    }
    SECTION("rules of each framework") {
        auto j = llama7b(frameworks::deepspeed::handle);
        j.runtime.offload.optimizer = true;
        CHECK_THROWS_WITH(validate(j), Contains("runtime.offload.optimizer=true") && Contains("parallel.sharding"));
        j.parallel.sharding = sharding::optimizer;
        j.runtime.offload.parameters = true;
        CHECK_THROWS_WITH(validate(j), Contains("stage 3"));
        auto f = llama7b(frameworks::fsdp::handle);
        f.runtime.offload.optimizer = true;
        CHECK_THROWS_WITH(validate(f), Contains("CPUOffload"));
        auto d = llama7b(frameworks::ddp::handle);
        d.runtime.offload.parameters = true;
        CHECK_THROWS_WITH(validate(d), Contains("runtime.offload.parameters=true needs runtime.offload.optimizer=true"));
    }
}

TEST_CASE("activation offload keeps two layers of the current micro-batch and the output layer") {
    auto plain = llama7b();
    auto j = plain;
    j.runtime.offload.activations = true;
    const auto f = profile_of(plain);
    const double per_layer = layer_activations(plain, f, false).none;
    CHECK(acts(j).stored.value == Approx(acts(plain).stored.value - (layers - 2) * per_layer).epsilon(1e-12));
    // every layer's saved tensors get a pinned host copy (torchtune OffloadActivations, pin_memory=True): 32 layers
    CHECK(acts(j).host.value == Approx(layers * per_layer).epsilon(1e-12));
    CHECK(acts(plain).host.value == 0);
    CHECK(memory_estimator{}.estimate(j).host_activations.value == Approx(layers * per_layer).epsilon(1e-12));
    // In a LoRA job the forward/backward phase is the peak (full fine-tuning peaks in the optimizer step, which
    // offloading activations does not change): the peak drops by the 30 offloaded layers, each of
    // none + lora_activation_delta bytes.
    plain.training.finetune = {.method = finetune_method::lora, .rank = 16};
    j.training.finetune = plain.training.finetune;
    const auto r0 = memory_estimator{}.estimate(plain), r1 = memory_estimator{}.estimate(j);
    CHECK(r0.peak_allocated.value - r1.peak_allocated.value ==
          Approx((layers - 2) * (per_layer + detail::lora_activation_delta(plain, false))).epsilon(1e-9));
}

TEST_CASE("fp8: Transformer Engine caches fp8 weights and transposes, torchao casts on the fly") {
    auto bf = llama7b(frameworks::megatron::handle);
    auto te = bf;
    te.training.precision = precision::fp8_mixed;
    const auto a = states(bf), b = states(te);
    // + (1 B fp8 weight + 1 B fp8 transpose) per GEMM weight + delayed-scaling state (4 GEMMs a layer, 5 fp32
    // tensors of 1024 + 2 values each).
    CHECK(b.weights.value - a.weights.value ==
          Approx(2 * layer_linears * layers + layers * 4 * 5 * 1026 * 4).epsilon(1e-12));
    CHECK(b.optimizer == a.optimizer);
    // Saved GEMM inputs in fp8 (1 B instead of 2): QKV input, projection input, MLP input (h each) and the down
    // projection's input (ffn): s b (3 h + ffn) bytes less per layer.
    CHECK(acts(te).stored.value == Approx(acts(bf).stored.value - layers * 2048 * (3 * h + ffn)).epsilon(1e-12));
    auto tao = llama7b(frameworks::fsdp::handle);
    auto tao8 = tao;
    tao8.training.precision = precision::fp8_mixed;
    CHECK(states(tao8) == states(tao));
    CHECK(acts(tao8).stored.value == Approx(acts(tao).stored.value).epsilon(1e-12));
    CHECK(method_temporaries(tao8, only_stage(tao8), profile_of(tao8)) == 2 * h * ffn);  // one weight cast + transpose
}

TEST_CASE("the whole estimate: each method lowers the peak in the expected order") {
    auto full = llama7b();
    auto lora = full;
    lora.training.finetune = {.method = finetune_method::lora, .rank = 16};
    auto qlora = lora;
    qlora.training.finetune.method = finetune_method::qlora;
    const memory_estimator est;
    const double p_full = est.estimate(full).peak_allocated.value;
    const double p_lora = est.estimate(lora).peak_allocated.value;
    const double p_qlora = est.estimate(qlora).peak_allocated.value;
    // Full fine-tuning holds 16 B/param of states (FSDP profile), LoRA 2 B/param plus the adapters' 16 B each.
    CHECK(p_lora < 0.4 * p_full);
    // QLoRA differs from LoRA (same adapters, same activations) by the linears' storage, 2 B -> NF4, less the
    // one dequantised weight it holds as a transient (4096 x 11008 x 2 B).
    CHECK(p_lora - p_qlora ==
          Approx(layer_linears * layers * (2 - nf4_bytes_per_param()) - 2 * h * ffn).epsilon(1e-9));
}

TEST_CASE("job JSON: training.finetune and runtime.offload") {
    const nlohmann::json spec = {
        {"model", "llama-2-7b"},
        {"training", {{"seq_len", 2048}, {"optimizer", "adamw-8bit"},
                      {"finetune", {{"method", "qlora"}, {"rank", 64}, {"alpha", 16}, {"target_modules", {"q", "v", "down"}}}}}},
        {"parallel", {{"dp", 1}}},
        {"runtime", {{"framework", "fsdp"}, {"offload", {{"activations", true}}}}}};
    const auto p = job_from_json(spec);
    const auto& ft = p.job.training.finetune;
    CHECK(ft.method == finetune_method::qlora);
    CHECK(ft.rank == 64);
    CHECK(ft.alpha == 16);
    CHECK(ft.targets == (lora_q | lora_v | lora_down));
    CHECK(p.job.training.optimizer == optimizer_kind::adamw_8bit);
    CHECK(p.job.runtime.offload.activations);
    CHECK_FALSE(p.job.runtime.offload.optimizer);
    // Round trip through to_json.
    CHECK(job_from_json(to_json(p.job)).job == p.job);

    auto bad = spec;
    bad["training"]["finetune"]["target_modules"] = {"q", "qkv"};
    CHECK_THROWS_WITH(job_from_json(bad), Contains("target_modules") && Contains("\"qkv\""));
    bad = spec;
    bad["training"]["finetune"]["rank"] = 0;
    CHECK_THROWS_WITH(job_from_json(bad), Contains("training.finetune.rank=0"));
    bad = spec;
    bad["training"]["finetune"]["frozen_layers"] = 4;
    CHECK_THROWS_WITH(job_from_json(bad), Contains("training.finetune.frozen_layers=4"));
    bad = spec;
    bad["runtime"]["offload"]["gradients"] = true;
    CHECK_THROWS_WITH(job_from_json(bad), Contains("runtime.offload.gradients"));
    bad = spec;
    bad["training"]["finetune"] = {{"method", "full"}, {"frozen_layers", 32}};
    CHECK_THROWS_WITH(job_from_json(bad), Contains("frozen_layers=32") && Contains("model.layers=32"));
    bad.erase("parallel");  // a spec left to the planner is checked too
    CHECK_THROWS_WITH(job_from_json(bad), Contains("frozen_layers=32") && Contains("model.layers=32"));
    // frozen layers of a model trained from scratch: nothing pretrained to freeze (method "none", the default)
    bad = spec;
    bad["training"]["finetune"] = {{"frozen_layers", 4}};
    CHECK_THROWS_WITH(job_from_json(bad), Contains("training.finetune.frozen_layers=4 needs method \"freeze\" or \"full\""));
    bad["training"]["finetune"]["method"] = "full";
    CHECK(job_from_json(bad).job.training.finetune.frozen_layers == 4);
}

TEST_CASE("LoRA / QLoRA against LitGPT's measured resource table") {
    // data/memory/litgpt/resource_table.csv: Lightning-AI/litgpt tutorials/resource-tables.md@b732986 ("Finetuning
    // with LoRA on 1 GPU", A100 40GB, torch.cuda.max_memory_allocated() / 1e9, Lit-GPT 8641822, bitsandbytes 0.41.1,
    // --precision bf16-true).
    // The job is read as that script (finetune/lora.py@cc19015) sets it: r = 8 on query and value, lora_dropout 0.05,
    // AdamW on the adapters only, micro-batch 1 of the longest Alpaca sample (Llama 2 tokenizer: 1304 tokens),
    // 128-sequence steps (gradient accumulation), lm_head and cross-entropy in 128-token chunks (1304 / 128 -> 11),
    // eager PyTorch with SDPA (the ddp profile on one GPU); bitsandbytes 0.41 saves every 4-bit linear's input.
    std::printf("%-12s %-6s %-3s %3s %10s %10s %8s\n", "model", "method", "dq", "mb", "estimate", "measured", "error%");
    for (const auto& x : litgpt_table::rows()) {
        job_spec j;
        j.model = preset(x.model);
        j.training = {.seq_len = 1304, .micro_batch = x.micro_batch, .global_batch = 128, .precision = precision::bf16};
        j.runtime.framework = frameworks::ddp::handle;
        j.runtime.loss_chunks = 11;
        j.runtime.rope_fp32 = false;  // LitGPT's apply_rope (lit_gpt/model.py@cc19015): 16-bit cos/sin, no fp32 q/k
        j.training.finetune = {.method = x.method, .rank = 8, .alpha = 16, .targets = lora_q | lora_v, .dropout = 0.05,
                               .qlora_saves_inputs = x.method == finetune_method::qlora, .double_quant = x.double_quant};
        const double gb = memory_estimator{}.estimate(j).peak_allocated.value / 1e9;
        const double err = gb / x.measured_gb - 1;
        std::printf("%-12s %-6s %-3s %3lld %10.2f %10.2f %+8.1f\n", x.model.c_str(), std::string(to_string(x.method)).c_str(),
                    x.double_quant ? "yes" : "no", static_cast<long long>(x.micro_batch), gb, x.measured_gb, 100 * err);
        INFO(x.model << " " << to_string(x.method) << " mb " << x.micro_batch);
        if (x.method == finetune_method::lora) {
            // LoRA rows: within 3% either way (the project's bound) now that the eager-RoPE fp32 term is keyed by
            // the stack: LitGPT's apply_rope builds cos/sin in 16 bits (build_rope_cache: cos.half(), sin.half())
            // and returns roped.type_as(x); its multiplications by the cache keep no fp32 copy of q or k
            // (runtime.rope_fp32 = false above; with the term the rows over-predicted by 4.5-7.6%).
            CHECK(std::fabs(err) <= 0.03);
        } else {
            // QLoRA rows: -4.5% .. -5.2%; the storage difference between nf4 and nf4-dq is reproduced exactly
            // (0.30 GB for 7B, 0.59 GB for 13B), the residual (~2 hidden-size 16-bit tensors a layer and token,
            // 0.7 / 1.0 GB) is unexplained. 6% states that gap; it is reported, not fitted.
            CHECK(std::fabs(err) <= 0.06);
        }
    }
}

TEST_CASE("frozen layers per pipeline stage") {
    auto j = llama7b(frameworks::megatron::handle);
    j.parallel.pp = 2;
    const auto f = profile_of(j);
    auto ls = stage_layouts(j, f);
    // 32 layers over 2 stages, 20 frozen: stage 0 holds layers 0-15 (all frozen), stage 1 layers 16-31 (4 frozen).
    CHECK(detail::leading_layers_on_stage(j, ls[0], f, 20).dense == 16);
    CHECK(detail::leading_layers_on_stage(j, ls[1], f, 20).dense == 4);
    // Interleaved, vpp 2: chunks of 8; stage 0 holds [0, 8) and [16, 24) -> 8 + 4 frozen; stage 1 [8, 16), [24, 32) -> 8.
    j.parallel.vpp = 2;
    j.parallel.schedule = pipeline_schedule::interleaved;
    ls = stage_layouts(j, f);
    CHECK(detail::leading_layers_on_stage(j, ls[0], f, 20).dense == 12);
    CHECK(detail::leading_layers_on_stage(j, ls[1], f, 20).dense == 8);
    // MoE with a dense prefix: Mixtral-like with 1 dense layer and every layer MoE after it.
    auto moe = j;
    moe.model = preset("mixtral-8x7b");
    moe.model.moe.dense_layers = 1;
    moe.parallel.vpp = 1;
    moe.parallel.schedule = pipeline_schedule::one_f_one_b;
    ls = stage_layouts(moe, f);
    const auto s0 = detail::leading_layers_on_stage(moe, ls[0], f, 10);
    CHECK(s0.dense == 1);
    CHECK(s0.moe == 9);
}

TEST_CASE("uncertainty band of the methods") {
    auto j = llama7b();
    CHECK(method_uncertainty(j) == 0);
    j.training.finetune = {.method = finetune_method::qlora, .rank = 8};
    CHECK(method_uncertainty(j) == 0.06);  // worst QLoRA row of LitGPT's table: -5.2%
    j.runtime.offload.activations = true;
    CHECK(method_uncertainty(j) == Approx(0.11));
}

TEST_CASE("eager RoPE's fp32 q/k term follows the stack: on for torchtune/torchtitan profiles, off for LitGPT") {
    auto j = llama7b(frameworks::ddp::handle);  // eager PyTorch, Llama-2-7B: q = 4096, kv = 4096 (MHA), s b = 2048
    CHECK(profile_of(j).rope_fp32_copies);
    const auto with = layer_activations(j, profile_of(j), false);
    j.runtime.rope_fp32 = false;
    CHECK_FALSE(profile_of(j).rope_fp32_copies);
    const auto without = layer_activations(j, profile_of(j), false);
    // 4 B x s b x (q + kv) = 4 x 2048 x 8192 = 67,108,864 B a layer
    CHECK(with.none - without.none == Approx(4.0 * 2048 * (4096 + 4096)).epsilon(1e-12));
    // Megatron/TE fuse RoPE: never counted there, whatever the field says
    auto mg = llama7b(frameworks::megatron::handle);
    mg.runtime.rope_fp32 = true;
    auto mg_off = mg;
    mg_off.runtime.rope_fp32 = false;
    CHECK(layer_activations(mg, profile_of(mg), false).none == layer_activations(mg_off, profile_of(mg_off), false).none);
}

TEST_CASE("DeepSeek-V3's MoE layer has 11 linears: MLA's q low-rank pair, gated routed and shared experts") {
    // Hand derivation from the preset (transformers DeepseekV3Config): h 7168, 128 heads, q_lora_rank 1536,
    // kv_lora_rank 512, qk_nope 128, qk_rope 64, v_head 128; 256 routed experts of 2048 (SwiGLU: 3 matrices each),
    // one shared expert of 2048; ep 8 leaves 32 routed experts a GPU, tp 1.
    //   q_a 7168 x 1536 = 11,010,048; q_b 1536 x 128 x 192 = 37,748,736; kv_a 7168 x 576 = 4,128,768;
    //   kv_b 512 x 128 x 256 = 16,777,216; o 128 x 128 x 7168 = 117,440,512          -> attention 187,105,280
    //   one expert 3 x 7168 x 2048 = 44,040,192; 32 routed + 1 shared = 33 x 44,040,192 = 1,453,326,336
    // (The layer had 11 linears where the list held 10: the estimate wrote past its end and crashed, issue 23.)
    job_spec j;
    j.model = preset("deepseek-v3");
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 64, .precision = precision::fp8_mixed};
    j.parallel = {.dp = 8, .ep = 8};
    int n = 0;
    detail::layer_linears(j, true, n);
    CHECK(n == 11);
    CHECK(detail::linear_weights(j, true) == Approx(187105280.0 + 33 * 44040192.0).epsilon(1e-12));
    // The whole estimate runs, with LoRA too (both crashed with SIGSEGV), and its MoE stage holds at least the
    // fp8 run's bf16 weights of those linears on 58 MoE layers.
    CHECK(memory_estimator{}.estimate(j).peak_allocated.value > 58 * 2 * (187105280.0 + 33 * 44040192.0));
    j.training.finetune = {.method = finetune_method::lora, .rank = 16};
    j.training.precision = precision::bf16_mixed;
    CHECK(memory_estimator{}.estimate(j).peak_allocated.value > 58 * 2 * (187105280.0 + 33 * 44040192.0));
}

TEST_CASE("the fsdp profile is torchtitan's on PyTorch >= 2.9: fused RMSNorm, k/v not repeated, older stacks by option") {
    job_spec j;
    j.model = preset("llama-3.1-8b");  // h 4096, q 4096, kv 1024 (8 of 32 heads), RMSNorm
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 1, .precision = precision::bf16_mixed};
    j.runtime.framework = frameworks::fsdp::handle;
    CHECK_FALSE(profile_of(j).rmsnorm_fp32_copy);  // nn.RMSNorm is one fused kernel since PyTorch 2.9
    CHECK_FALSE(profile_of(j).gqa_kv_repeat);      // SDPA enable_gqa (torchtitan #2259)
    const auto base = layer_activations(j, profile_of(j), false);
    // torchtitan@9dec370's own eager RMSNorm: an fp32 copy of each of the two norms' inputs, 4 B x s b x h each
    j.runtime.norm_fp32 = true;
    CHECK(layer_activations(j, profile_of(j), false).none - base.none == Approx(2 * 4.0 * 2048 * 4096).epsilon(1e-12));
    // repeat_kv: k and v saved at the query width, 2 x 2 B x s b x (q - kv) more
    j.runtime.norm_fp32.reset();
    j.runtime.kv_repeat = true;
    const auto rep = layer_activations(j, profile_of(j), false);
    CHECK(rep.none - base.none == Approx(2 * 2.0 * 2048 * (4096 - 1024)).epsilon(1e-12));
    CHECK(rep.full == base.full);  // full recompute keeps the block input only
    // Multi-head attention repeats nothing
    j.model.kv_heads = j.model.heads;
    const auto mha = layer_activations(j, profile_of(j), false);
    j.runtime.kv_repeat = false;
    CHECK(layer_activations(j, profile_of(j), false).none == mha.none);
}

TEST_CASE("PEFT adapters cast their input: each saves its own 16-bit copy (and dropout mask), no frozen input stays") {
    // Llama-3.1-8B on the hf profile, s b = 2048, bf16 activations, LoRA r = 16 on every linear, dropout 0.05
    // (PEFT tuners/lora/layer.py Linear.forward: x = _cast_input_dtype(x, lora_A.weight.dtype) -> fp32, then
    // lora_A(dropout(x)) under autocast saves the bf16 cast for lora_A's weight gradient and dropout its mask; the
    // frozen base_layer needs only its weight). Measured (data/memory/h200_measured.csv h200-hf-01..04): +0.7..+2.5%.
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 1, .precision = precision::bf16_mixed};
    j.runtime.framework = frameworks::hf::handle;
    const unsigned all = lora_q | lora_k | lora_v | lora_o | lora_gate | lora_up | lora_down;
    j.training.finetune = {.method = finetune_method::lora, .rank = 16, .targets = all, .dropout = 0.05};
    const double sb = 2048, hh = 4096, q = 4096, f = 14336, r = 16;
    // the four frozen inputs (QKV in, o in, MLP in, down in) go; per adapter: its cast (2 B) + mask (1 B) + A out
    const double ins = 5 * hh + q + f;  // q, k, v, gate, up read h; o reads q; down reads ffn
    const double with_dropout = -2 * sb * (2 * hh + q + f) + 3 * sb * ins + 7 * 2 * sb * r;
    CHECK(detail::lora_activation_delta(j, false) == Approx(with_dropout).epsilon(1e-12));
    j.training.finetune.dropout = 0;  // no mask, the cast stays
    CHECK(detail::lora_activation_delta(j, false) == Approx(with_dropout - sb * ins).epsilon(1e-12));
    // Without the cast (ddp: adapters in the model's dtype), the frozen linears' inputs are shared by the adapters
    j.runtime.framework = frameworks::ddp::handle;
    CHECK(detail::lora_activation_delta(j, false) == Approx(7 * 2 * sb * r).epsilon(1e-12));
}

TEST_CASE("autocast over fp32 weights keeps each kept layer's 16-bit weight copies (full fine-tuning, hf/ddp)") {
    job_spec j;
    j.model = preset("llama-3.2-1b");
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 1, .precision = precision::bf16_mixed};
    j.runtime.framework = frameworks::hf::handle;
    const auto f = profile_of(j);
    REQUIRE(autocast_weight_copies(j, f));
    auto fsdp = j;  // FSDP's mixed precision gathers bf16 units instead: no autocast copies
    fsdp.runtime.framework = frameworks::fsdp::handle;
    CHECK_FALSE(autocast_weight_copies(fsdp, profile_of(fsdp)));
    auto pure = j;  // a model loaded in bf16 has nothing to cast
    pure.training.precision = precision::bf16;
    CHECK_FALSE(autocast_weight_copies(pure, profile_of(pure)));
    // 2 B x (each layer's linears: 2048 x (2048 + 2 x 512 + 2048) + 3 x 2048 x 8192) x 16 layers + 2 B x the tied
    // head (128256 x 2048): the difference to the same job without the copies.
    const auto l = only_stage(j);
    auto off = f;
    off.autocast_weight_copies = false;
    const double with = method_activations(j, l, f, transformer_activations{}.activations(j, l, f)).stored.value;
    const double without = method_activations(j, l, off, transformer_activations{}.activations(j, l, off)).stored.value;
    const double layer_linears = 2048.0 * (2048 + 2 * 512 + 2048) + 3 * 2048.0 * 8192;
    CHECK(with - without == Approx(2 * layer_linears * 16 + 2 * 128256.0 * 2048).epsilon(1e-9));
}
