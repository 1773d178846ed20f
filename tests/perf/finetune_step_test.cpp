// Step time of fine-tuning with adapters (issue 25, "costs that are free today"): frozen base weights get no weight
// gradients, QLoRA dequantises every NF4 weight before each GEMM that reads it, and only the adapters' gradients
// are reduced and updated. Hand-derived values on Llama 3.1 8B.
#include <catch2/catch.hpp>

#include "frenzy/memory/methods.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/perf/step_time.hpp"

using namespace frenzy;

namespace finetune_step {
const gpu_type& a100() {
    static const gpu_catalog catalog;
    return catalog.at("a100-80g");
}
job_spec job(finetune_method method, std::int64_t dp = 1) {
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = dp, .precision = precision::bf16_mixed};
    j.training.finetune.method = method;
    j.parallel = {.dp = dp};
    j.runtime.framework = frameworks::hf::handle;
    j.runtime.attention = attention_impl::flash;
    return j;
}
step_breakdown parts(const job_spec& j) { return step_time_model{}.predict(j, a100(), {8, 0}).parts; }
}  // namespace finetune_step
using namespace finetune_step;

TEST_CASE("adapters: the frozen base's backward computes input gradients only") {
    // forward 1x + backward (input and weight gradients) 2x = 3x the forward GEMM FLOPs for full fine-tuning; with
    // frozen weights backward is the input gradient alone: 2x. The attention core and element-wise kernels are the
    // same (backward still flows through every layer).
    const auto full = parts(job(finetune_method::full));
    const auto lora = parts(job(finetune_method::lora));
    CHECK(lora.dense_flops_mb == Approx(full.dense_flops_mb * 2.0 / 3.0).epsilon(1e-12));
    CHECK(lora.attention_flops_mb == full.attention_flops_mb);
    CHECK(lora.memory_bytes_mb == full.memory_bytes_mb);
    CHECK(lora.compute_mb < full.compute_mb);
}

TEST_CASE("QLoRA dequantises each NF4 weight before the forward and the backward GEMM") {
    // Llama 3.1 8B per layer: q, o 4096 x 4096, k, v 4096 x 1024, gate, up, down 4096 x 14336 = 218,103,808 weights,
    // x 32 layers = 6,979,321,856 on one GPU. Each dequantisation reads NF4 (0.5 B + 1/64 B of 8-bit absmax + 4/(64 x
    // 256) B of fp32 second-level absmax with double quantisation) and writes 2 B; twice per micro-batch without
    // recompute; streamed at 90% of the A100's 2,039 GB/s.
    const double weights = 32.0 * (2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336);
    CHECK(weights == 6979321856.0);
    const double per_weight = 0.5 + 1.0 / 64 + 4.0 / (64 * 256) + 2.0;
    const auto lora = parts(job(finetune_method::lora));
    const auto qlora = parts(job(finetune_method::qlora));
    CHECK(qlora.work.stream_bytes == Approx(2 * weights * per_weight).epsilon(1e-12));
    CHECK(lora.work.stream_bytes == 0);
    CHECK(qlora.compute_mb - lora.compute_mb ==
          Approx(2 * weights * per_weight / (0.9 * a100().mem_bw_GBps * 1e9)).epsilon(1e-9));
    auto rec = job(finetune_method::qlora);
    rec.parallel.recompute = recompute::full;  // gradient checkpointing dequantises a third time
    CHECK(parts(rec).work.stream_bytes == Approx(3 * weights * per_weight).epsilon(1e-12));
}

TEST_CASE("adapters: only the trained parameters are reduced and updated") {
    // data parallel over 8 GPUs: the gradient all-reduce and the optimizer pass cover the LoRA adapters (rank 16 on
    // q, k, v, o: 16 x (4096 + 4096) + 2 x 16 x (4096 + 1024) + 16 x (4096 + 4096) = 425,984 per layer), not 8B
    const double adapters = 32.0 * (16 * (4096.0 + 4096) * 2 + 2 * 16 * (4096.0 + 1024));
    const auto full = parts(job(finetune_method::full, 8));
    const auto lora = parts(job(finetune_method::lora, 8));
    CHECK(lora.optimizer == Approx(full.optimizer * adapters / bottleneck_stage(job(finetune_method::full, 8)).params).epsilon(1e-9));
    // the all-reduce of the adapters' bf16 gradients: ring of 8 over NVLink at 75% of A100's 600 GB/s / 2 per
    // direction (225 GB/s), 2 x 7 latency steps of 10 us (perf/step_time.hpp ring_collectives)
    CHECK(lora.dp_sync == Approx(14 * 10e-6 + 2.0 * 7 / 8 * adapters * 2 / 225e9).epsilon(1e-9));
    CHECK(full.dp_sync > 300 * lora.dp_sync);
    const auto stage = bottleneck_stage(job(finetune_method::lora, 8));
    CHECK(stage.trainable_params == Approx(adapters).epsilon(1e-12));
}

TEST_CASE("adapters: MFU counts the FLOPs the method needs, not full training's 6N") {
    // Llama 3.1 8B at seq 2048, per token: the layers' GEMMs 2 x 218,103,808 x 32 = 13,958,643,712 FLOPs, the
    // attention core 4 x 2048 x 4096 x 32 = 1,073,741,824, the logits 2 x 4096 x 128,256 = 1,050,673,152. Full
    // training: forward + 2x backward. LoRA: backward = input gradients of every GEMM (1x) + the core's 2x.
    const double gemms = 2.0 * 218103808 * 32 + 2.0 * 4096 * 128256;
    const double core = 4.0 * 2048 * 4096 * 32;
    const double tokens = 2048;  // global batch 1 x seq 2048
    const auto full = step_flops(job(finetune_method::full));
    const auto lora = step_flops(job(finetune_method::lora));
    CHECK(full.model().value == Approx(3 * tokens * (gemms + core)).epsilon(1e-12));
    CHECK(lora.model().value == Approx(tokens * (2 * gemms + 3 * core)).epsilon(1e-12));
    CHECK(lora.attention == full.attention);
    // MFU = model FLOPs / (step time x GPUs x peak), with each its own FLOPs: LoRA's ratio to full training's is the
    // FLOP ratio times the speed ratio.
    const auto f = step_time_model{}.predict(job(finetune_method::full), a100(), {8, 0});
    const auto l = step_time_model{}.predict(job(finetune_method::lora), a100(), {8, 0});
    CHECK(l.mfu / f.mfu == Approx(lora.model().value / full.model().value * f.step_time.value / l.step_time.value).epsilon(1e-12));
    CHECK(l.mfu < 0.75);  // the 6N count put LoRA plans at 91-92% MFU; with the method's FLOPs they are in range
}

TEST_CASE("DPO: the pair runs as one forward of 2b sequences, plus the reference model's no-grad forward") {
    // trl@f2cd5771 trl/trainer/dpo_trainer.py: the collator stacks chosen and rejected (2 sequences a pair, 4,096
    // tokens of a micro-batch of 1 at seq 2048); _compute_loss runs the policy, then the reference under no_grad with
    // checkpointing off. Llama 3.1 8B per token (the MFU case above): layers' GEMMs L = 13,958,643,712, attention
    // core A = 1,073,741,824, logits G = 1,050,673,152. LoRA: forward 1x + input-gradient 1x + reference 1x of the
    // GEMMs and the logits = 3 (L + G); the core forward, 2x backward, reference = 4 A. Exact in doubles (< 2^53).
    auto dpo = [](finetune_method m, bool precomputed) {
        auto j = job(m);
        j.training.finetune.objective = finetune_objective::dpo;
        j.training.finetune.precompute_ref_log_probs = precomputed;
        return j;
    };
    const auto lora = parts(dpo(finetune_method::lora, false));
    CHECK(lora.dense_flops_mb == Approx(184434485624832.0).epsilon(1e-12));  // 4,096 x 3 x (L + G)
    CHECK(lora.attention_flops_mb == Approx(17592186044416.0).epsilon(1e-12));  // 4,096 x 4 A
    // precomputed reference log-probs: no reference forward, the pair alone = twice the SFT step's work
    const auto pre = parts(dpo(finetune_method::lora, true));
    const auto sft = parts(job(finetune_method::lora));
    CHECK(pre.dense_flops_mb == Approx(122956323749888.0).epsilon(1e-12));  // 4,096 x 2 x (L + G)
    CHECK(pre.dense_flops_mb == Approx(2.0 * sft.dense_flops_mb).epsilon(1e-12));
    CHECK(pre.attention_flops_mb == Approx(2.0 * sft.attention_flops_mb).epsilon(1e-12));
    CHECK(pre.memory_bytes_mb == Approx(2.0 * sft.memory_bytes_mb).epsilon(1e-12));
    // the reference forward's element-wise traffic is one more forward of the layers: what full recompute adds
    auto rec = job(finetune_method::lora);
    rec.parallel.recompute = recompute::full;
    CHECK(lora.memory_bytes_mb - pre.memory_bytes_mb == Approx(2.0 * (parts(rec).memory_bytes_mb - sft.memory_bytes_mb)).epsilon(1e-9));
    CHECK(lora.compute_mb > pre.compute_mb);
    // full fine-tune: the reference copy's forward beside forward + 2x backward = 4 (L + G)
    CHECK(parts(dpo(finetune_method::full, false)).dense_flops_mb == Approx(245912647499776.0).epsilon(1e-12));
    // step_flops (MFU's numerator): forward = policy + reference over 4,096 tokens, backward the LoRA one
    const auto c = step_flops(dpo(finetune_method::lora, false));
    CHECK(c.forward.value == Approx(131752416772096.0).epsilon(1e-12));   // 2 x 4,096 x (L + A + G)
    CHECK(c.backward.value == Approx(70274254897152.0).epsilon(1e-12));   // 4,096 x (L + 2A + G)
}

TEST_CASE("DPO under full sharding gathers the weights a third time for the reference forward") {
    // FSDP/ZeRO-3 over 8 GPUs: forward and backward gather the sharded weights, the reference forward (the base with
    // the adapters disabled, in the same sharded modules) gathers them again: one more ring all-gather of the bf16
    // weights, 7 steps of 10 us + 7/8 of the bytes at 225 GB/s (A100 NVLink per direction, as above).
    auto j = job(finetune_method::lora, 8);
    j.parallel.sharding = sharding::full;
    const auto sft = parts(j);
    j.training.finetune.objective = finetune_objective::dpo;
    const double weights = bottleneck_stage(j).params * 2.0;
    CHECK(parts(j).shard_mb - sft.shard_mb == Approx(7 * 10e-6 + 7.0 / 8 * weights / 225e9).epsilon(1e-9));
    j.training.finetune.precompute_ref_log_probs = true;
    CHECK(parts(j).shard_mb == Approx(sft.shard_mb).epsilon(1e-12));
}
