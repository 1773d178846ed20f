#pragma once
// A training framework as the layers below the launchers see it: its facts as data (framework_traits: what it keeps
// in memory, how its kernels and collectives run, which layouts and options it accepts) and the handle a job holds
// (framework). Each framework's traits live in its own folder, include/frenzy/frameworks/<name>/traits.hpp; the
// layers read the facts and never ask which framework it is. frameworks/registry.hpp lists the built-in ones and finds a
// framework by name; frameworks/launchers.hpp adds its launcher (the files it is started with, the configurations it
// is read from).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/units.hpp"
#include "frenzy/train/spec.hpp"

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
    /// A fused cross-entropy kernel over the 16-bit logits (flash-attn's, which llm-foundry's MPT uses by default:
    /// Dao-AILab/flash-attention@08124c8f flash_attn/losses/cross_entropy.py over ops/triton/cross_entropy.py saves
    /// the logits and the fp32 log-sum-exp per row, computes in fp32 inside the kernel and, with
    /// inplace_backward=False as llm-foundry builds it, allocates the 16-bit gradient in backward): no fp32 copy.
    fused_cross_entropy,
    /// Liger's fused linear cross-entropy (linkedin/Liger-Kernel@ead96b6 src/liger_kernel/ops/
    /// fused_linear_cross_entropy.py, runtime.liger): the LM head and the loss run together over chunks of
    /// next_pow2(ceil(tokens / ceil(V / H))) tokens, so no full logits exist; the input's and the head weight's
    /// gradients are computed in forward and saved for backward (grad_input like the head's input, grad_weight
    /// zeros_like(weight)). Not a runtime.loss setting of its own: runtime.liger turns it on with Liger's other
    /// kernels, as transformers' use_liger_kernel does.
    liger_fused_linear,
    /// Unsloth's chunked fused cross-entropy (unslothai/unsloth-zoo@ce232d6 unsloth_zoo/fused_losses/
    /// cross_entropy_loss.py UnslothFusedLoss, called by unslothai/unsloth@015bdef unsloth/models/llama.py): the head
    /// and the loss run chunk by chunk in forward, each chunk's gradients computed there (torch.func.grad_and_value),
    /// so no full logits exist; grad_inputs = empty_like(hidden_states) and, for a trained head, grad_lm_head =
    /// zeros_like(weight) are saved for backward. The chunk count makes one chunk's fp32 logits fit target_gb =
    /// min(half the free memory, 4 GiB) (get_chunk_size). Not a runtime.loss setting: the unsloth framework's loss.
    unsloth_fused,
};
/// runtime.loss spellings ("loss-parallel" is what "upcast" becomes under DTensor tensor parallelism).
template <> struct enum_names<loss_style> {
    static constexpr std::array<std::pair<loss_style, std::string_view>, 6> table{{
        {loss_style::fused_vocab_parallel, "vocab-parallel"}, {loss_style::upcast_log_softmax, "upcast"},
        {loss_style::dtensor_loss_parallel, "loss-parallel"}, {loss_style::fused_cross_entropy, "fused"},
        {loss_style::liger_fused_linear, "liger"}, {loss_style::unsloth_fused, "unsloth-fused"}}};
};

/// What "selective" recompute keeps.
enum class selective_kind {
    core_attention,  ///< Megatron --recompute-granularity selective: drop the s^2 attention terms (Korthikanti 2022 sec. 5)
    every_other_mm,  ///< torchtitan per-op SAC: save every other matmul output + attention output, recompute the rest
};

/// How fp8 linears keep their inputs: Transformer Engine saves the fp8 casts (and their transposes) for backward
/// (transformer_engine/pytorch/module/linear.py _Linear.forward: ctx.save_for_backward(inputmat_t (fp8),
/// weight_t_fp8, ...)); torchao float8 (torchtitan) casts weights and inputs on the fly and saves the
/// high-precision tensors, so its memory is that of bf16 plus one layer's casts.
enum class fp8_style { transformer_engine, torchao };

/// What a framework keeps in memory, as data (memory/ reads it through profile_of(job), which applies the job's
/// runtime options to these presets).
struct framework_profile {
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
    /// term stands for what that stack keeps and stays on for its profile (ddp). LitGPT's apply_rope (lit_gpt/model.py
    /// @cc19015: cos/sin built in 16 bits, roped.type_as(x)) keeps none: its LoRA rows (tests/memory/methods_test.cpp)
    /// are -1.1% .. -1.9% without the term and +4.5% .. +7.6% with it. runtime.rope_fp32 selects it per job.
    bool rope_fp32_copies = false;
    /// An eager RMSNorm keeps an fp32 copy of its input (x.float() ... .type_as(x)): the model's own norm in
    /// torchtune, Hugging Face transformers (LlamaRMSNorm), LitGPT and torchtitan before 2025-03 (models/norms.py
    /// @9dec370), and torch.nn.RMSNorm before PyTorch 2.9 (composite rms_norm upcasts). PyTorch 2.9 runs
    /// nn.RMSNorm as one CUDA kernel (aten::_fused_rms_norm, with _fused_rms_norm_backward) that saves only its
    /// 16-bit input and the per-row rstd, which torchtitan uses since 2025-03 (#985, 3b39d7ab). Measured on an H200
    /// with torch 2.11 (data/memory/h200_measured.csv): the eager term over-predicted every no-recompute row by
    /// 2 x 4 B x hidden per token and layer. runtime.norm_fp32 selects it per job.
    bool rmsnorm_fp32_copy = true;
    /// Grouped-query attention repeats k and v to every query head before the attention kernel (torchtitan's
    /// repeat_kv until 2026-01, #2259 ff0829c1; torchtune's k.expand(...).flatten()), so the kernel saves them at the
    /// query width: 2 x (q - kv) x 16-bit per token and layer more. SDPA with enable_gqa=True (PyTorch >= 2.5) and
    /// Megatron's / TE's kernels take the kv heads as they are. runtime.kv_repeat selects it per job.
    bool gqa_kv_repeat = false;
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
    /// Mixed precision is torch.autocast over fp32 weights without sharding (DDP, Trainer(bf16=True)): autocast
    /// caches the 16-bit copy of every weight it casts in forward and each linear saves it for backward, so a layer
    /// that keeps its activations keeps a 16-bit copy of its weights too (memory/methods.hpp). FSDP's mixed
    /// precision gathers 16-bit parameters unit by unit instead.
    bool autocast_weight_copies = false;
    /// LoRA adapters in their own dtype cast their input to it (PEFT: fp32 adapters under autocast,
    /// _cast_input_dtype in tuners/lora/layer.py), so each adapter saves its own 16-bit copy of its (dropped) input
    /// and the frozen linear beside it saves none; without a cast the adapters of one input share it.
    bool lora_adapter_cast = false;
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
    /// ctx.save_for_backward(input, weight) before the all-gather). Set by profile_of(job) for tp > 1 with SP when
    /// dtensor_tensor_parallel holds.
    bool saves_gathered_inputs = false;
    /// Tensor parallelism is DTensor's (the two terms above and the loss_parallel loss follow from it).
    bool dtensor_tensor_parallel = false;
    /// cuBLAS/cuDNN workspaces allocated through the caching allocator (CUBLAS_WORKSPACE_CONFIG :4096:8 = 32 MiB).
    double workspace_bytes = 32.0 * MiB;
    /// Megatron's global memory buffer "mpu" (megatron/core/utils.py GlobalMemoryBuffer) serves the all-gathers of
    /// the allgather MoE dispatcher and of the LM head's sequence-parallel input (memory/overheads.hpp).
    bool global_memory_buffer = false;
    /// Grouped-GEMM experts (TEGroupedMLP) run on Transformer Engine's 4 compute streams, each with its own cuBLAS
    /// workspace (memory/overheads.hpp).
    bool grouped_gemm_streams = false;
    /// parallel.sharding gradients/full is Megatron-FSDP: main grads in the parameters' dtype and its own
    /// uncertainty (memory/model_states.hpp, memory/estimator.hpp).
    bool megatron_fsdp = false;
    /// Under full/gradient sharding the gradients are reduce-scattered on a side stream whose allocator pool adds
    /// to the reserved peak (torch FSDP2; memory/allocator.hpp).
    bool side_stream_reduce_scatter = false;
    /// Without sharding too: FSDP1's post-backward hook casts the gradients to the reduce dtype and all-reduces them
    /// on its post-backward stream for NO_SHARD as for the sharded strategies (torch/distributed/fsdp/
    /// _runtime_utils.py _post_backward_hook: with state._device_handle.stream(state._post_backward_stream)), so the
    /// fp32 gradients live in that stream's pool (measured: data/memory/h200_measured.csv h200-mpt-* rows).
    bool side_stream_all_reduce = false;
    /// Optimizer offload leaves the gradients on the GPU (Megatron --optimizer-cpu-offload keeps the main_grad
    /// buffers); ZeRO-Offload and FSDP CPUOffload move them to the host too.
    bool offload_keeps_gradients = false;
    /// A final-logit soft cap runs as eager element-wise ops that save their fp32 inputs (memory/methods.hpp).
    bool eager_logit_softcap = false;
    /// The loss runs over chunks of this many tokens of a sequence, one chunk's transients live at a time, whatever
    /// runtime.loss_chunks says (0 = as runtime.loss_chunks). LitGPT: finetune/lora.py model(input_ids,
    /// lm_head_chunk_size=128) and litgpt/utils.py chunked_cross_entropy(chunk_size=128) (Lightning-AI/litgpt@26857050).
    std::int64_t loss_chunk_tokens = 0;
    /// Full recompute moves each checkpointed layer input to pinned host memory and back in backward, except the
    /// last layer's and inputs of 2 MiB or less (Unsloth's use_gradient_checkpointing="unsloth":
    /// unslothai/unsloth-zoo@ce232d6 unsloth_zoo/gradient_checkpointing.py UnslothCheckpointFunction, LAST_GC_INDEX,
    /// MINIMUM_SIZE); two GPU staging buffers of one input each (GPU_BUFFERS, GPU_BUFFERS_B) stay allocated.
    bool offloaded_checkpoints = false;
    fp8_style fp8 = fp8_style::transformer_engine;
};

/// How context parallelism exchanges K/V (perf/step_time.hpp).
enum class context_parallel_impl {
    ring_p2p,   ///< Transformer Engine ring attention: cp - 1 overlapped K/V exchanges per layer
    all_gather, ///< PyTorch context_parallel: all-gather K/V before attention, not overlapped, fp32 merges
};

/// How the framework's step runs, as the step-time model needs it (perf/step_time.hpp, perf/calibration.hpp,
/// plan/planner.hpp).
struct framework_perf {
    /// The layers run Transformer Engine's kernels (fused norms, fused attention; their own efficiency class).
    bool transformer_engine = false;
    context_parallel_impl context_parallel = context_parallel_impl::all_gather;
    /// Pipeline sends split the activation over tp (Megatron's scatter-gather optimisation) even without SP.
    bool pipeline_scatter_gather = false;
    /// The gradient reduce overlaps backward only when asked (--overlap-grad-reduce); otherwise it always does.
    bool overlap_is_a_flag = false;
    /// The planner may turn on the framework's overlap flags (--overlap-grad-reduce, --tp-comm-overlap).
    bool plannable_overlap_flags = false;
    /// The attention kernel it runs on GPUs where flash-style kernels cannot (train/attention.hpp): PyTorch SDPA's
    /// memory-efficient kernel (sdp_utils.cpp: sm50+), or, for Megatron-Core, Transformer Engine's
    /// UnfusedDotProductAttention. A framework offers runtime.attention "memory-efficient" only when it is this.
    attention_impl attention_without_flash = attention_impl::memory_efficient;
};

/// The fp8 recipes of Transformer Engine that Megatron-Core builds (NVIDIA/Megatron-LM@d98e8a64
/// megatron/core/fp8_utils.py get_fp8_recipe: DelayedScaling, Float8CurrentScaling, Float8BlockScaling,
/// MXFP8BlockScaling).
inline constexpr std::uint8_t transformer_engine_fp8_recipes =
    fp8_recipe_bit(fp8_recipe::delayed) | fp8_recipe_bit(fp8_recipe::tensorwise) | fp8_recipe_bit(fp8_recipe::blockwise) |
    fp8_recipe_bit(fp8_recipe::mxfp8);
/// torchao's float8 and MX training of linears, as torchtitan converts them (pytorch/torchtitan@b5bcd76c
/// torchtitan/components/quantization/float8.py Float8LinearConverter, recipe_name "rowwise" by default; mx.py
/// MXFP8LinearConverter) and torchao's Float8LinearConfig.from_recipe_name also spells ("tensorwise").
inline constexpr std::uint8_t torchao_fp8_recipes =
    fp8_recipe_bit(fp8_recipe::tensorwise) | fp8_recipe_bit(fp8_recipe::rowwise) | fp8_recipe_bit(fp8_recipe::mxfp8);

/// The layouts and options a framework accepts: each check returns why not, or "" (the one place these rules live:
/// validate(job) and the planner's search both ask them).
struct framework_rules {
    /// Why the framework cannot run layout `p` for training `t` (its optimizer and precision), or "". It may read
    /// p.dp only as one device (dp = 1) against several: the planner asks it at dp = 1 and at one dp > 1 per layout
    /// (plan/search_space.hpp rules_verdicts).
    std::string (*rejects_layout)(const parallel_config& p, const training_spec& t) = nullptr;
    /// Why the framework cannot offload `o` under `sh`, or "".
    std::string (*rejects_offload)(const offload_spec& o, sharding sh) = nullptr;
    bool adamw_8bit = true;                  ///< bitsandbytes AdamW8bit runs (as a torch optimizer)
    bool fp8_param_gather = false;           ///< runtime.fp8_param_gather (Megatron --fp8-param-gather)
    bool grad_reduce_bf16 = false;           ///< runtime.grad_reduce_bf16 (Megatron --grad-reduce-in-bf16)
    /// training.precision "fp4-mixed": Transformer Engine's NVFP4BlockScaling (Megatron --fp4-format e2m1)
    bool nvfp4 = false;
    bool default_sequence_parallel = false;  ///< a planned layout with tp > 1 turns sequence parallelism on
    /// parallel.stage_layers: a layer count per pipeline stage (Megatron --pipeline-model-parallel-layout)
    bool stage_layer_layout = false;
    /// runtime.liger: Liger's kernels patched into the model (transformers' TrainingArguments.use_liger_kernel)
    bool liger_kernels = false;
    /// runtime.fp8_recipe values it runs (fp8_recipe_bit flags) and the one it runs when the job names none:
    /// Transformer Engine's DelayedScaling unless a framework says otherwise (train/fp8_recipe.hpp)
    std::uint8_t fp8_recipes = fp8_recipe_bit(fp8_recipe::delayed);
    fp8_recipe fp8_default = fp8_recipe::delayed;
    /// The framework of a LoRA or QLoRA job that names none, when it accepts the job's layout (train/job.hpp
    /// default_framework); else the catalog's default.
    bool adapters_by_default = false;
    /// training.finetune.objective "dpo": TRL's DPOTrainer runs on it (a transformers Trainer subclass)
    bool dpo = false;
};

/// Why a data-parallel-only framework (`field` names it, e.g. runtime.framework="ddp") cannot run `p`'s tensor,
/// pipeline, context or expert parallelism, or "".
inline std::string rejects_model_parallel(std::string_view field, const parallel_config& p) {
    if (p.tp > 1 || p.pp > 1 || p.cp > 1 || p.ep > 1)
        return std::string(field) + " is data parallel only (got " + field_text("tp", p.tp) + ", " + field_text("pp", p.pp) +
               ", " + field_text("cp", p.cp) + ", " + field_text("ep", p.ep) + ")";
    return {};
}

struct job_spec;

/// The cells of a measurement-table row that state a framework's options beyond the columns (io/measurements_csv.hpp),
/// and which layout columns the row leaves empty (the options may state them then).
struct table_row_options {
    std::string recompute;    ///< the recompute cell
    std::string other_flags;  ///< the other_flags cell
    bool vpp = false, cp = false, sequence_parallel = false;  ///< the vpp, cp and seq_parallel columns are empty
};

/// How a framework's rows in a measurement table state its options (io/measurements_csv.hpp asks these, never which
/// framework it is). Null hooks: free text only (the runtime options and training methods other_flags names:
/// compile, LoRA, offload, ...), read by the table reader itself.
struct table_notation {
    /// The sharding a row states in the framework's own terms (its sharding cell and other_flags), or nothing for
    /// the common free-text reading of the sharding cell.
    std::optional<sharding> (*sharding_of)(const std::string& sharding_cell, const std::string& other_flags) = nullptr;
    /// Reads the framework's own options from the row (after the columns) into the job, as its launch script's
    /// would be; returns what a launch script's import would list as not understood (the row is then left out).
    std::vector<std::string> (*read_options)(const table_row_options& row, job_spec& j) = nullptr;
    /// Rows whose framework column names no framework of the catalog are this framework's (plain PyTorch: one
    /// device, DDP, torchtune without its name).
    bool unnamed_rows = false;
    /// The optimizer implementation the rows that name this framework ran (torchtune's recipe configs build
    /// torch.optim.AdamW with fused=True); the optimizer column wins over it.
    optimizer_impl optimizer = optimizer_impl::framework_default;
};

/// Everything the layers below the launchers know of one framework.
/// A release of a framework whose defaults move memory (runtime.framework_version): its name as the project tags it
/// and the change it makes to the framework's profile (which describes the default version).
struct framework_version {
    std::string_view name;
    std::string_view summary;  ///< what differs from the default version, for --help and errors
    framework_profile (*apply)(framework_profile) = nullptr;
};

struct framework_traits {
    std::string_view name;     ///< as written in job specs, plans and --framework
    std::string_view summary;  ///< one line for --help and docs
    /// Lower-case words that name the framework in a measurement table's free-text framework column
    /// ("NeMo (Megatron-Core, Transformer Engine)", "torchtitan (FSDP2)"); io/ tables read them.
    std::array<std::string_view, 3> table_words{};
    /// How its rows in a measurement table state its options beyond the columns.
    table_notation table_flags{};
    framework_profile memory{};
    /// The profile under layout `p`, where the framework runs another engine for some layouts (hf: accelerate's
    /// FSDP or DeepSpeed back end for sharded layouts, frameworks/hf/traits.hpp); null = `memory` for every layout.
    /// profile_of(job) applies it before the job's runtime options.
    framework_profile (*layout_memory)(const framework_profile& preset, const parallel_config& p) = nullptr;
    framework_perf perf{};
    framework_rules rules{};
    /// The version `memory` describes (runtime.framework_version unset) and the other versions whose defaults move
    /// memory by more than 5%; empty = one profile for every version (no version is read).
    std::string_view default_version{};
    std::span<const framework_version> versions{};
    /// Programs that start its training in a launch script, beside torchrun and python (DeepSpeed's `deepspeed`
    /// launcher); io/launcher_shell.hpp takes the line that runs one as the launch command.
    std::array<std::string_view, 2> launch_programs{};
};

/// The versions of framework `fw` that runtime.framework_version may name: `"main" (default), "0.1.0", ...`.
inline std::string framework_versions_text(const framework_traits& fw) {
    std::string known = "\"" + std::string(fw.default_version) + "\" (default)";
    for (const auto& x : fw.versions) known += ", \"" + std::string(x.name) + "\"";
    return known;
}

/// Which framework a job runs on: a handle to its traits, compared by identity and written by name. Each framework's
/// folder declares its own (frameworks::megatron::handle, ...; frameworks/registry.hpp lists them); a host finds one by
/// name with find_framework, or adds its own with add_framework.
class framework {
public:
    constexpr framework() noexcept;  ///< by_default
    constexpr explicit framework(const framework_traits& t) noexcept : t_(&t) {}
    constexpr const framework_traits& traits() const noexcept { return *t_; }
    constexpr const framework_traits* operator->() const noexcept { return t_; }
    constexpr std::string_view name() const noexcept { return t_->name; }
    friend constexpr bool operator==(framework a, framework b) noexcept { return a.t_ == b.t_; }
    /// A number that tells frameworks apart within one run (for cache keys; not stable across runs).
    std::intptr_t identity() const noexcept { return reinterpret_cast<std::intptr_t>(t_); }

    /// The framework of a job that names none (one line of frameworks/registry.hpp).
    static const framework by_default;

private:
    const framework_traits* t_;
};

inline std::string_view to_string(framework f) { return f.name(); }

}  // namespace frenzy
