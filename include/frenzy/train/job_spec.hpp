#pragma once
// A training job as a value: model, training goal, parallel layout and runtime options (the rules that check it:
// train/job.hpp). Apart from the rules so that a framework's flag language (frameworks/<name>/options.hpp), which its
// traits point to, can read into a job below the framework catalog that train/job.hpp includes.
#include <cstdint>
#include <optional>
#include <string>

#include "frenzy/model/transformer.hpp"
#include "frenzy/train/framework.hpp"
#include "frenzy/train/spec.hpp"

namespace frenzy {

struct runtime_spec {
    frenzy::framework framework = framework::by_default;
    /// "auto": the kernel the framework runs on the GPU type (train/attention.hpp)
    attention_impl attention = attention_impl::automatic;
    bool compile = false;                       ///< torch.compile of the layers (fuses elementwise ops)
    std::int64_t loss_chunks = 1;               ///< cross-entropy computed over this many vocabulary-output chunks
    optimizer_impl optimizer = optimizer_impl::framework_default;
    offload_spec offload{};
    /// Megatron-Core/Transformer Engine userbuffer overlap of the tensor-parallel all-gather/reduce-scatter with the
    /// GEMMs (--tp-comm-overlap; NeMo recipes turn it on for tp > 1). Off by default, as in Megatron-LM.
    bool tp_comm_overlap = false;
    /// Megatron's --overlap-grad-reduce (bucketed gradient reduce during backward; NeMo default on). DDP, FSDP and
    /// DeepSpeed always overlap; Megatron-LM's default is off.
    bool overlap_grad_reduce = false;
    /// Megatron --fp8-param-gather (needs fp8 and the distributed optimizer or FSDP): Transformer Engine creates the
    /// GEMM weights as fp8 tensors (megatron/core/fp8_utils.py@d98e8a64 get_fp8_context(is_init=True) ->
    /// transformer_engine.pytorch.fp8_model_init), so no 16-bit copy of them exists besides the fp8 data and its
    /// transpose, and the distributed optimizer all-gathers fp8.
    bool fp8_param_gather = false;
    /// How fp8-mixed scales its casts (Megatron --fp8-recipe; torchtitan's float8 or MXFP8 converter): unset = the
    /// framework's default (framework_rules::fp8_default). train/fp8_recipe.hpp says what each moves and keeps.
    std::optional<frenzy::fp8_recipe> fp8_recipe{};
    /// Megatron --grad-reduce-in-bf16: the main_grad buffers and their reduce-scatter in bf16 instead of fp32
    /// (megatron/training/arguments.py@d98e8a64: accumulate_allreduce_grads_in_fp32 = False).
    bool grad_reduce_bf16 = false;
    /// Dropout masks saved for backward: unset = the framework's default (Megatron's --hidden-dropout and
    /// --attention-dropout 0.1: on; torchtitan, torchtune: off); false for `--hidden-dropout 0 --attention-dropout 0`.
    std::optional<bool> dropout{};
    /// Eager rotary embedding keeps fp32 copies of q and k: unset = the framework's profile (torchtune/torchtitan
    /// eager: on), false for LitGPT's apply_rope (16-bit cos/sin). memory/framework_profile.hpp rope_fp32_copies.
    std::optional<bool> rope_fp32{};
    /// Eager RMSNorm keeps an fp32 copy of its input: unset = the framework's profile; framework_profile
    /// rmsnorm_fp32_copy says which stacks do.
    std::optional<bool> norm_fp32{};
    /// k and v repeated to every query head before attention (GQA without enable_gqa): unset = the framework's
    /// profile; framework_profile gqa_kv_repeat.
    std::optional<bool> kv_repeat{};
    /// The cross-entropy implementation: unset = the framework's (Megatron "vocab-parallel", the PyTorch stacks
    /// "upcast": cross_entropy(logits.float()), llm-foundry "fused": flash-attn's kernel); "fused" is also what
    /// Hugging Face/torchtune users get by swapping in flash-attn's CrossEntropyLoss. loss_style in
    /// train/framework.hpp says what each keeps.
    std::optional<loss_style> loss{};
    /// Liger's Triton kernels patched into the model, as transformers' TrainingArguments(use_liger_kernel=True)
    /// applies them (linkedin/Liger-Kernel@ead96b6 src/liger_kernel/transformers/monkey_patch.py
    /// apply_liger_kernel_to_llama defaults): RMSNorm saving its 16-bit input and the row rstd (ops/rms_norm.py),
    /// SwiGLU saving its two inputs (ops/swiglu.py), RoPE saving cos/sin (ops/rope.py) and the fused linear
    /// cross-entropy (loss_style::liger_fused_linear). memory/framework_profile.hpp applies it.
    bool liger = false;
    /// bitsandbytes' paged optimizer (PagedAdamW, PagedAdamW8bit; transformers optim="paged_adamw_8bit"): the state
    /// tensors of 1e5 elements or more live in CUDA unified memory (bitsandbytes-foundation/bitsandbytes@95f9af3
    /// bitsandbytes/optim/optimizer.py Optimizer8bit.get_state_buffer -> functional.py get_paged -> cudaMallocManaged),
    /// outside PyTorch's caching allocator, and the driver moves their pages to host memory under pressure.
    /// memory/methods.hpp method_model_states (model_state_bytes::paged) says what each readout sees.
    bool paged_optimizer = false;
    /// PyTorch's allocator with PYTORCH_CUDA_ALLOC_CONF (or PYTORCH_ALLOC_CONF) expandable_segments:True: on a failed
    /// allocation it unmaps every empty page of its segments, so the cache it returns is all of it
    /// (memory/fit.hpp check_fit; memory/allocator.hpp).
    bool expandable_segments = false;
    /// Megatron's --empty-unused-memory-level: 1 empties the allocator's cache after each forward/backward, 2 also
    /// after the optimizer step (memory/fit.hpp check_fit). 0 = never (Megatron's default).
    std::int64_t empty_unused_memory_level = 0;
    /// The framework's release whose defaults the job runs (framework_traits::versions): empty = the version its
    /// profile describes (framework_traits::default_version).
    std::string framework_version;
    bool operator==(const runtime_spec&) const = default;
};

/// A training job: model, training goal, parallel layout, runtime.
struct job_spec {
    std::string name;
    transformer_spec model;
    training_spec training;
    parallel_config parallel;
    runtime_spec runtime;
    bool operator==(const job_spec&) const = default;

    std::int64_t micro_batches() const {  ///< per pipeline per step (gradient-accumulation steps)
        return training.global_batch / (training.micro_batch * parallel.dp);
    }
    double tokens_per_step() const {
        return static_cast<double>(training.global_batch) * static_cast<double>(training.seq_len);
    }
};

}  // namespace frenzy
