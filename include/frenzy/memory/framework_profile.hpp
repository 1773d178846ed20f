#pragma once
// What a training framework keeps in memory, as data: one profile per framework (the presets), so the
// memory policies are one general mechanism and frameworks differ only in these facts.
#include <cstdint>

#include "frenzy/core/units.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// How the framework stores the fp32 copy of the parameters under mixed precision.
enum class master_weights {
    separate,   ///< 16-bit params + a separate fp32 master copy in the optimizer (Megatron, DeepSpeed)
    in_params,  ///< the parameters themselves stay fp32; 16-bit copies are transient (FSDP, DDP + autocast)
};

/// How the loss is computed from the logits (per logit element on the last stage, bytes live at the peak).
enum class loss_style {
    fused_vocab_parallel,  ///< Megatron VocabParallelCrossEntropy: 16-bit logits + one fp32 copy turned into softmax in place
    upcast_log_softmax,    ///< logits.float() -> F.cross_entropy: fp32 log-softmax saved, fp32 grads of it in backward
    /// torch.distributed.tensor.parallel.loss_parallel (torchtitan with tp > 1): the vocabulary-sharded
    /// log-softmax is composed of DTensor ops (x - max, exp, ...; backward grad_out - exp(out) * sum(grad_out)),
    /// each materialising a full fp32 shard, where the fused aten kernels need one.
    dtensor_loss_parallel,
};

/// What "selective" recompute keeps.
enum class selective_kind {
    core_attention,  ///< Megatron --recompute-granularity selective: drop the s^2 attention terms (Korthikanti 2022 sec. 5)
    every_other_mm,  ///< torchtitan per-op SAC: save every other matmul output + attention output, recompute the rest
};

struct framework_profile {
    frenzy::framework framework = framework::megatron;
    std::int64_t vocab_divisible_by = 1;  ///< vocab padded to a multiple of this x tp (Megatron: 128)
    master_weights master = master_weights::separate;
    /// Gradient bytes per parameter under bf16/fp8 mixed precision (Megatron accumulates in fp32 main_grad
    /// buffers: megatron/training/arguments.py sets accumulate_allreduce_grads_in_fp32 for bf16).
    double grad_bytes_bf16 = 4;
    double grad_bytes_fp16 = 2;
    bool dropout = true;        ///< dropout masks are stored (Megatron default --hidden-dropout/--attention-dropout 0.1)
    loss_style loss = loss_style::fused_vocab_parallel;
    selective_kind selective = selective_kind::core_attention;
    /// Unfused attention scores go through a persistent global buffer of b*a*s^2/t 16-bit elements
    /// (Megatron core attention: parallel_state.get_global_memory_buffer()).
    bool attention_score_buffer = true;
    /// Extra copies of the gradients kept in communication buckets (torch DDP Reducer with the default
    /// gradient_as_bucket_view=False keeps a flat bucket copy of every gradient: 1.0).
    double grad_bucket_copies = 0;
    /// Gradient-reduction / parameter all-gather bucket, in elements (DeepSpeed ZeRO reduce_bucket_size and
    /// allgather_bucket_size default 5e8), capped at the stage's parameters.
    double bucket_elements = 0;
    /// Layers whose full 16-bit parameters are gathered at once under full sharding (current + prefetched).
    double gathered_layers = 2;
    /// Norms and activation functions run as fused kernels that save only their 16-bit input (Megatron/TE,
    /// apex; torch.compile). Eager PyTorch RMSNorm (torchtitan/torchtune `x.float()` ... `.type_as(x) * weight`)
    /// instead saves an fp32 copy of its input and the normalised 16-bit tensor, and eager SwiGLU saves silu's output.
    bool fused_elementwise = true;
    /// The final norm runs eagerly even when the layers are compiled: torchtitan compiles each TransformerBlock only
    /// (parallelize_llama.py@9dec370 apply_compile), torchtune each layer; its RMSNorm keeps an fp32 copy of its input
    /// besides the 16-bit one (torchtitan models/norms.py@9dec370 RMSNorm: self._norm(x.float()).type_as(x)).
    bool eager_final_norm = false;
    /// Eager rotary embedding adds 4 B x (q + kv) per token and layer (fp32 copies of q and k). Calibrated, not
    /// derived: torchtune modules/position_embeddings.py and torchtitan apply_rotary_emb upcast q/k (x.float()) and
    /// multiply by a cache that needs no gradient, which by autograd's save rules keeps only the cache; torchtune's
    /// row 38 of data/memory/measured_calibration.csv is +2.4% with the term and -3.6% without it, so the
    /// term stands for what that stack keeps and stays on for its profiles. LitGPT's apply_rope (lit_gpt/model.py
    /// @cc19015: cos/sin built in 16 bits, roped.type_as(x)) keeps none: its LoRA rows (tests/memory/methods_test.cpp)
    /// are -1.1% .. -1.9% without the term and +4.5% .. +7.6% with it. runtime.rope_fp32 selects it per job.
    bool rope_fp32_copies = false;
    /// Gradients live in buffers that persist across steps (Megatron's contiguous grad buffer, DeepSpeed's
    /// partitions). Otherwise (torch optimizer.zero_grad(set_to_none=True)) they are allocated during backward and
    /// exist at the forward/loss peak only when earlier micro-batches of the step accumulated into them.
    bool persistent_grads = true;
    /// The optimizer step runs torch.optim's foreach path, which allocates sqrt(v) for the whole group
    /// (torch/optim/adamw.py _multi_tensor_adamw: torch._foreach_sqrt(device_exp_avg_sqs)).
    bool foreach_optimizer = false;
    /// The optimizer step runs inside backward, parameter by parameter (runtime.optimizer_impl = in-backward):
    /// no full set of gradients and no separate step phase.
    bool optimizer_in_backward = false;
    /// Tokens a GPU's experts receive at the worst iteration relative to perfectly balanced routing. Megatron's
    /// dropless MoE (moe_expert_capacity_factor None) does not cap tokens_per_expert, so the peak follows the most
    /// loaded micro-batch. 1.4 is fitted on the one measured MoE row (data/memory/measured_more.csv row
    /// 46, 2.01 GiB): -4.4% with balanced routing after every other mechanism, -1.1% at 1.2, +2.2% at 1.4; the
    /// upper value is kept because under-prediction is the dangerous side (docs/memory-model.md).
    double moe_imbalance = 1.4;
    /// Tensor parallelism through DTensor (torch.distributed.tensor.parallel, torchtitan) with sequence-sharded
    /// norms: ColwiseParallel / PrepareModuleInput redistribute the Shard(1) norm output to Replicate before the
    /// linear, so the linear saves the all-gathered, full-sequence input for its weight gradient (torchtitan
    /// parallelize_llama.py@9dec370 layer_plan "attention"/"feed_forward" prepare_module_input and "output"
    /// ColwiseParallel(input_layouts=Shard(1))), where Megatron saves the local shard and gathers it again in backward
    /// (megatron/core/tensor_parallel/layers.py@d98e8a64 LinearWithGradAccumulationAndAsyncCommunication:
    /// ctx.save_for_backward(input, weight) before the all-gather). Set by profile_of(job) for tp > 1 with SP.
    bool saves_gathered_inputs = false;
    /// cuBLAS/cuDNN workspaces allocated through the caching allocator (CUBLAS_WORKSPACE_CONFIG :4096:8 = 32 MiB).
    double workspace_bytes = 32.0 * MiB;
};

/// The preset profile of a framework (before the job's runtime options; see profile_of(const job_spec&)).
inline framework_profile profile_of(framework f) {
    switch (f) {
        case framework::megatron:
            // Transformer Engine (Megatron's default --transformer-impl) allocates its own cuBLAS workspace through
            // the caching allocator besides torch's: 32 MiB + 1 KiB from Hopper on (NVIDIA/TransformerEngine@d0067d0d
            // transformer_engine/pytorch/cpp_extensions/gemm.py get_cublas_workspace_size_bytes, get_cublas_workspace).
            return {.framework = f, .vocab_divisible_by = 128, .workspace_bytes = 64.0 * MiB};
        case framework::deepspeed:  // Megatron-DeepSpeed: Megatron's layers, DeepSpeed ZeRO; grads in param dtype
            return {.framework = f, .vocab_divisible_by = 128, .grad_bytes_bf16 = 2, .grad_bytes_fp16 = 2,
                    .bucket_elements = 5e8};
        case framework::fsdp:       // torchtitan / llm-foundry style: fp32 sharded params, eager PyTorch, no dropout
            return {.framework = f, .master = master_weights::in_params, .grad_bytes_bf16 = 4, .grad_bytes_fp16 = 4,
                    .dropout = false, .loss = loss_style::upcast_log_softmax, .selective = selective_kind::every_other_mm,
                    .attention_score_buffer = false, .fused_elementwise = false, .eager_final_norm = true,
                    .rope_fp32_copies = true, .persistent_grads = false, .foreach_optimizer = true};
        case framework::ddp:        // plain PyTorch (+ DDP when dp > 1; torchtune single device): eager, autocast
            return {.framework = f, .master = master_weights::in_params, .grad_bytes_bf16 = 4, .grad_bytes_fp16 = 4,
                    .dropout = false, .loss = loss_style::upcast_log_softmax, .selective = selective_kind::every_other_mm,
                    .attention_score_buffer = false, .grad_bucket_copies = 1, .fused_elementwise = false,
                    .eager_final_norm = true, .rope_fp32_copies = true, .persistent_grads = false,
                    .foreach_optimizer = true};
    }
    return {};
}

/// The profile a job runs with: its framework's preset adjusted by the job's runtime options.
inline framework_profile profile_of(const job_spec& j) {
    auto f = profile_of(j.runtime.framework);
    if (j.runtime.compile) f.fused_elementwise = true;
    if (j.runtime.dropout) f.dropout = *j.runtime.dropout;
    if (j.runtime.rope_fp32) f.rope_fp32_copies = *j.runtime.rope_fp32;
    // --grad-reduce-in-bf16: Megatron's main_grad buffers take the parameters' bf16 (arguments.py@d98e8a64).
    if (j.runtime.grad_reduce_bf16) f.grad_bytes_bf16 = 2;
    if (f.loss == loss_style::upcast_log_softmax && j.runtime.framework == framework::fsdp && j.parallel.tp > 1)
        f.loss = loss_style::dtensor_loss_parallel;
    if ((j.runtime.framework == framework::fsdp || j.runtime.framework == framework::ddp) && j.parallel.tp > 1 &&
        j.parallel.sequence_parallel)
        f.saves_gathered_inputs = true;
    if (j.runtime.optimizer == optimizer_impl::fused) f.foreach_optimizer = false;
    if (j.runtime.optimizer == optimizer_impl::foreach) f.foreach_optimizer = true;
    if (j.runtime.optimizer == optimizer_impl::in_backward) {
        f.optimizer_in_backward = true;
        f.foreach_optimizer = false;
        f.persistent_grads = false;
    }
    return f;
}

}  // namespace frenzy
