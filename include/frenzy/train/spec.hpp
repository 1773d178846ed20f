#pragma once
// The parts of a job every framework shares: optimizer, sharding, recompute and schedule choices, the training
// goal (sequence, batches, precision, fine-tuning method), the parallel layout and what is offloaded.
// train/job.hpp adds the runtime (the framework and its options) and the rules between them.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/enum_names.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/precision.hpp"
#include "frenzy/model/transformer.hpp"

namespace frenzy {

/// adamw_8bit: bitsandbytes AdamW8bit (two 8-bit block-quantised moments, see memory/methods.hpp).
enum class optimizer_kind { adam, adamw, sgd, adafactor, adamw_8bit };
enum class sharding { none, optimizer, gradients, full };
enum class recompute { none, selective, full };
/// Which layers full recompute checkpoints (Megatron --recompute-method, megatron/core/transformer/
/// transformer_block.py _checkpointed_forward @d98e8a64): uniform = every group of recompute_layers consecutive
/// layers keeps only its input; block = the first recompute_layers layers of each model chunk keep only their
/// input and the others keep everything.
enum class recompute_method { uniform, block };
enum class pipeline_schedule { one_f_one_b, interleaved, gpipe };
/// The attention kernel (train/attention.hpp resolves `automatic` for a GPU type): a flash-style kernel
/// (FlashAttention 2/3, cuDNN fused attention: O(s) memory, sm80+), PyTorch SDPA's memory-efficient kernel (xformers'
/// cutlass kernel: O(s) memory, any CUDA GPU from sm50), or unfused attention (the s x s scores in memory).
enum class attention_impl { automatic, flash, memory_efficient, unfused };
/// How an MoE layer moves tokens to the experts of the expert-parallel group (Megatron-Core
/// --moe-token-dispatcher-type, megatron/core/transformer/moe/token_dispatcher.py @d98e8a64).
enum class moe_dispatcher { alltoall, allgather };
/// How the optimizer step runs: one fused kernel per tensor group (apex/TE FusedAdam, torch fused=True),
/// torch.optim's default foreach path, which materialises a temporary per state (see memory/overheads.hpp), or
/// fused into backward (torchtune optimizer_in_bwd: each parameter is updated and its gradient freed as soon as
/// the gradient is ready, so the gradients never exist all at once).
enum class optimizer_impl { framework_default, fused, foreach, in_backward };

template <> struct enum_names<optimizer_kind> {
    static constexpr std::array<std::pair<optimizer_kind, std::string_view>, 5> table{{
        {optimizer_kind::adam, "adam"}, {optimizer_kind::adamw, "adamw"}, {optimizer_kind::sgd, "sgd"},
        {optimizer_kind::adafactor, "adafactor"}, {optimizer_kind::adamw_8bit, "adamw-8bit"}}};
};
template <> struct enum_names<sharding> {
    static constexpr std::array<std::pair<sharding, std::string_view>, 4> table{{
        {sharding::none, "none"}, {sharding::optimizer, "optimizer"}, {sharding::gradients, "gradients"},
        {sharding::full, "full"}}};
};
template <> struct enum_names<recompute> {
    static constexpr std::array<std::pair<recompute, std::string_view>, 3> table{{
        {recompute::none, "none"}, {recompute::selective, "selective"}, {recompute::full, "full"}}};
};
template <> struct enum_names<recompute_method> {
    static constexpr std::array<std::pair<recompute_method, std::string_view>, 2> table{{
        {recompute_method::uniform, "uniform"}, {recompute_method::block, "block"}}};
};
template <> struct enum_names<pipeline_schedule> {
    static constexpr std::array<std::pair<pipeline_schedule, std::string_view>, 3> table{{
        {pipeline_schedule::one_f_one_b, "1f1b"}, {pipeline_schedule::interleaved, "interleaved"},
        {pipeline_schedule::gpipe, "gpipe"}}};
};
template <> struct enum_names<optimizer_impl> {
    static constexpr std::array<std::pair<optimizer_impl, std::string_view>, 4> table{{
        {optimizer_impl::framework_default, "default"}, {optimizer_impl::fused, "fused"},
        {optimizer_impl::foreach, "foreach"}, {optimizer_impl::in_backward, "in-backward"}}};
};
template <> struct enum_names<moe_dispatcher> {
    static constexpr std::array<std::pair<moe_dispatcher, std::string_view>, 2> table{{
        {moe_dispatcher::alltoall, "alltoall"}, {moe_dispatcher::allgather, "allgather"}}};
};
template <> struct enum_names<attention_impl> {
    static constexpr std::array<std::pair<attention_impl, std::string_view>, 4> table{{
        {attention_impl::automatic, "auto"}, {attention_impl::flash, "flash"},
        {attention_impl::memory_efficient, "memory-efficient"}, {attention_impl::unfused, "unfused"}}};
};

/// What the job starts from and what part of the model it trains (training.finetune). none: training from
/// scratch (pretraining: no weights are loaded, everything is trained); the others fine-tune pretrained weights,
/// which launch loads: full trains everything; freeze everything but the first frozen_layers layers (and the
/// embedding when frozen_layers > 0); lora / qlora: low-rank adapters of rank `rank` on the target modules of every
/// layer, the base frozen (qlora: base linears in 4-bit NF4). none and full have the same memory and step time
/// (memory/methods.hpp); they differ in what `launch` writes (a pretrained checkpoint to load, or none).
enum class finetune_method { none, full, freeze, lora, qlora };
template <> struct enum_names<finetune_method> {
    static constexpr std::array<std::pair<finetune_method, std::string_view>, 5> table{{
        {finetune_method::none, "none"}, {finetune_method::full, "full"}, {finetune_method::freeze, "freeze"},
        {finetune_method::lora, "lora"}, {finetune_method::qlora, "qlora"}}};
};

/// What the fine-tune optimises (training.finetune.objective): sft, the next-token loss over each sequence; dpo,
/// TRL's DPOTrainer (huggingface/trl@f2cd5771 trl/trainer/dpo_trainer.py): each pair's chosen and rejected sequences
/// in one forward (twice the micro-batch's sequences) against a reference model's log-probabilities.
enum class finetune_objective { sft, dpo };
template <> struct enum_names<finetune_objective> {
    static constexpr std::array<std::pair<finetune_objective, std::string_view>, 2> table{{
        {finetune_objective::sft, "sft"}, {finetune_objective::dpo, "dpo"}}};
};

/// Linear layers of a transformer layer that LoRA can target (bit flags; names as PEFT/torchtune recipes
/// abbreviate q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj).
enum lora_target : unsigned { lora_q = 1, lora_k = 2, lora_v = 4, lora_o = 8, lora_gate = 16, lora_up = 32, lora_down = 64 };
inline constexpr std::array<std::pair<unsigned, std::string_view>, 7> lora_target_names{{
    {lora_q, "q"}, {lora_k, "k"}, {lora_v, "v"}, {lora_o, "o"}, {lora_gate, "gate"}, {lora_up, "up"}, {lora_down, "down"}}};

/// Modules an adapter fine-tune trains whole beside the adapters (PEFT LoraConfig.modules_to_save, axolotl
/// lora_modules_to_save; bit flags, names as transformers' Llama-style models call them).
enum module_to_save : unsigned { save_embed_tokens = 1, save_lm_head = 2 };
inline constexpr std::array<std::pair<unsigned, std::string_view>, 2> module_to_save_names{{
    {save_embed_tokens, "embed_tokens"}, {save_lm_head, "lm_head"}}};

struct finetune_spec {
    finetune_method method = finetune_method::none;
    std::int64_t rank = 16;
    double alpha = 32;                                   ///< scaling only; no memory effect
    unsigned targets = lora_q | lora_k | lora_v | lora_o; ///< lora_target bits
    std::int64_t frozen_layers = 0;                      ///< leading layers frozen (method full or freeze)
    double dropout = 0;                                  ///< lora_dropout probability (> 0 saves a mask + copy)
    /// bitsandbytes before 0.43.2 saved the input of every 4-bit linear for backward (autograd/_functions.py
    /// MatMul4Bit: ctx.tensors = (A, B); removed by PR #1270, commit 9e75374, 2024-07-16).
    bool qlora_saves_inputs = false;
    bool double_quant = true;  ///< QLoRA: absmax quantised again (bnb_4bit_use_double_quant / compress_statistics)
    /// LoRA over a base whose layer linears are bitsandbytes LLM.int8 (transformers BitsAndBytesConfig(load_in_8bit=
    /// True): Int8Params, an int8 weight and an fp32 scale per output row; memory/methods.hpp).
    bool load_in_8bit = false;
    /// module_to_save bits: full trainable copies beside the frozen originals (peft@5d602fd utils/other.py
    /// ModulesToSaveWrapper); adapter methods only.
    unsigned modules_to_save = 0;
    finetune_objective objective = finetune_objective::sft;
    /// DPO: the reference log-probabilities computed once before training (DPOConfig.precompute_ref_log_probs), so
    /// no reference model is held while training.
    bool precompute_ref_log_probs = false;
    bool operator==(const finetune_spec&) const = default;
    bool dpo() const { return objective == finetune_objective::dpo; }
    /// DPO of a full or partial fine-tune holds a second, frozen copy of the weights as its reference (an adapter
    /// fine-tune's reference is the same base with the adapters disabled: dpo_trainer.py use_adapter).
    bool reference_copy() const { return dpo() && !precompute_ref_log_probs && !adapters(); }
    bool adapters() const { return method == finetune_method::lora || method == finetune_method::qlora; }
    /// A fine-tune: the job starts from pretrained weights (launch loads them).
    bool pretrained() const { return method != finetune_method::none; }
    /// Anything frozen: parts of the model have no gradients or optimizer states.
    bool partial() const { return adapters() || frozen_layers > 0; }
};

/// What is trained and for how long.
struct training_spec {
    std::int64_t seq_len = 2048;
    std::int64_t micro_batch = 1;
    std::int64_t global_batch = 1;             ///< sequences per optimizer step
    frenzy::precision precision = precision::bf16_mixed;
    optimizer_kind optimizer = optimizer_kind::adamw;
    double total_tokens = 0;                   ///< training budget; 0 = unknown
    double checkpoint_interval_s = 3600;       ///< work lost on failure is at most this
    finetune_spec finetune{};
    bool operator==(const training_spec&) const = default;
};

/// How the job is split over GPUs. GPUs used = dp x tp x pp x cp (ep subdivides dp x cp for experts).
struct parallel_config {
    std::int64_t dp = 1, tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1;
    bool sequence_parallel = false;
    frenzy::sharding sharding = sharding::none;
    frenzy::recompute recompute = recompute::none;
    /// With recompute full: which layers are checkpointed, and how many (Megatron --recompute-num-layers; uniform 1
    /// = every layer on its own, what torchtitan's and DeepSpeed's full activation checkpointing do).
    frenzy::recompute_method recompute_method = recompute_method::uniform;
    std::int64_t recompute_layers = 1;
    pipeline_schedule schedule = pipeline_schedule::one_f_one_b;
    /// Expert tensor parallelism: how many GPUs split each expert's matrices (Megatron
    /// --expert-tensor-parallel-size; 0 = tp, Megatron's default). Expert GPUs: ep x etp divides dp x cp x tp.
    std::int64_t etp = 0;
    /// Megatron --moe-token-dispatcher-type; allgather is Megatron-Core's default (transformer_config.py @d98e8a64).
    moe_dispatcher dispatcher = moe_dispatcher::allgather;
    bool grouped_gemm = false;                             ///< Megatron --moe-grouped-gemm (TEGroupedMLP)
    /// Uneven pipeline split: transformer layers on the first / last stage (Megatron
    /// --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers); 0 = even split.
    std::int64_t first_stage_layers = 0, last_stage_layers = 0;
    /// Transformer layers of each pipeline stage, in order (Megatron --pipeline-model-parallel-layout, the
    /// general form of the uneven split: megatron/core/transformer/pipeline_parallel_layer_layout.py @d98e8a64;
    /// the embedding sits on the first stage, the loss on the last). Empty = the split above; else pp entries,
    /// at least one layer each, adding up to model.layers, with vpp 1.
    std::vector<std::int64_t> stage_layers{};
    /// The embedding / the loss count as one layer of the split (Megatron --account-for-embedding-in-pipeline-split
    /// / --account-for-loss-in-pipeline-split): the first (last) virtual stage builds one transformer layer fewer.
    bool embedding_stage = false, loss_stage = false;
    bool operator==(const parallel_config&) const = default;

    std::int64_t gpus() const { return dp * tp * pp * cp; }
    std::int64_t expert_tp() const { return etp > 0 ? etp : tp; }
};

/// What lives in host memory instead of the GPU (runtime.offload; memory/methods.hpp): optimizer states and fp32
/// master weights (ZeRO-Offload, Megatron --optimizer-cpu-offload), parameters (ZeRO-Infinity offload_param,
/// FSDP CPUOffload), saved activations (torchtune enable_activation_offloading, Megatron --cpu-offloading).
struct offload_spec {
    bool optimizer = false;
    bool parameters = false;
    bool activations = false;
    bool operator==(const offload_spec&) const = default;
    bool any() const { return optimizer || parameters || activations; }
};

/// "field=value", the way an error message names an integer field and its value.
inline std::string field_text(const char* field, std::int64_t v) { return std::string(field) + "=" + std::to_string(v); }

/// Bytes per element of a precision's compute (parameter) copy.
constexpr double param_bytes(precision p) {
    switch (p) {
        case precision::fp32: return 4;
        case precision::fp8_mixed:  // fp8 GEMM inputs are cast on the fly; the parameters stay bf16
        case precision::fp4_mixed:  // likewise for fp4
        case precision::fp16_mixed:
        case precision::bf16_mixed:
        case precision::bf16: return 2;
    }
    return 2;
}

}  // namespace frenzy
