#pragma once
// Training, parallel and runtime description of a job, and every rule a framework would reject.
#include <cstdint>
#include <optional>
#include <string>

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
enum class framework { megatron, deepspeed, fsdp, ddp };
enum class attention_impl { flash, unfused };
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
template <> struct enum_names<framework> {
    static constexpr std::array<std::pair<framework, std::string_view>, 4> table{{
        {framework::megatron, "megatron"}, {framework::deepspeed, "deepspeed"}, {framework::fsdp, "fsdp"},
        {framework::ddp, "ddp"}}};
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
    static constexpr std::array<std::pair<attention_impl, std::string_view>, 2> table{{
        {attention_impl::flash, "flash"}, {attention_impl::unfused, "unfused"}}};
};

/// What part of the model is trained (training.finetune). full: everything; freeze: everything but the first
/// frozen_layers layers (and the embedding when frozen_layers > 0); lora / qlora: low-rank adapters of rank `rank`
/// on the target modules of every layer, the base frozen (qlora: base linears in 4-bit NF4). memory/methods.hpp.
enum class finetune_method { full, freeze, lora, qlora };
template <> struct enum_names<finetune_method> {
    static constexpr std::array<std::pair<finetune_method, std::string_view>, 4> table{{
        {finetune_method::full, "full"}, {finetune_method::freeze, "freeze"}, {finetune_method::lora, "lora"},
        {finetune_method::qlora, "qlora"}}};
};

/// Linear layers of a transformer layer that LoRA can target (bit flags; names as PEFT/torchtune recipes
/// abbreviate q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj).
enum lora_target : unsigned { lora_q = 1, lora_k = 2, lora_v = 4, lora_o = 8, lora_gate = 16, lora_up = 32, lora_down = 64 };
inline constexpr std::array<std::pair<unsigned, std::string_view>, 7> lora_target_names{{
    {lora_q, "q"}, {lora_k, "k"}, {lora_v, "v"}, {lora_o, "o"}, {lora_gate, "gate"}, {lora_up, "up"}, {lora_down, "down"}}};

struct finetune_spec {
    finetune_method method = finetune_method::full;
    std::int64_t rank = 16;
    double alpha = 32;                                   ///< scaling only; no memory effect
    unsigned targets = lora_q | lora_k | lora_v | lora_o; ///< lora_target bits
    std::int64_t frozen_layers = 0;                      ///< leading layers frozen (method full or freeze)
    double dropout = 0;                                  ///< lora_dropout probability (> 0 saves a mask + copy)
    /// bitsandbytes before 0.43.2 saved the input of every 4-bit linear for backward (autograd/_functions.py
    /// MatMul4Bit: ctx.tensors = (A, B); removed by PR #1270, commit 9e75374, 2024-07-16).
    bool qlora_saves_inputs = false;
    bool double_quant = true;  ///< QLoRA: absmax quantised again (bnb_4bit_use_double_quant / compress_statistics)
    bool operator==(const finetune_spec&) const = default;
    bool adapters() const { return method == finetune_method::lora || method == finetune_method::qlora; }
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

struct runtime_spec {
    frenzy::framework framework = framework::megatron;
    attention_impl attention = attention_impl::flash;
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
    /// Megatron --grad-reduce-in-bf16: the main_grad buffers and their reduce-scatter in bf16 instead of fp32
    /// (megatron/training/arguments.py@d98e8a64: accumulate_allreduce_grads_in_fp32 = False).
    bool grad_reduce_bf16 = false;
    /// Dropout masks saved for backward: unset = the framework's default (Megatron's --hidden-dropout and
    /// --attention-dropout 0.1: on; torchtitan, torchtune: off); false for `--hidden-dropout 0 --attention-dropout 0`.
    std::optional<bool> dropout{};
    /// Eager rotary embedding keeps fp32 copies of q and k: unset = the framework's profile (torchtune/torchtitan
    /// eager: on), false for LitGPT's apply_rope (16-bit cos/sin). memory/framework_profile.hpp rope_fp32_copies.
    std::optional<bool> rope_fp32{};
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

namespace detail {
inline std::string kv(const char* field, std::int64_t v) { return std::string(field) + "=" + std::to_string(v); }
}  // namespace detail

/// Why framework `fw` cannot run layout `p` (with `optimizer`), or "" when it can: the sharding and parallelism each
/// framework offers (Megatron-LM arguments.py: distributed optimizer = ZeRO-1, Megatron-FSDP; DeepSpeed's pipeline
/// engine: ZeRO 0/1 only;
/// PyTorch FSDP: NO_SHARD / SHARD_GRAD_OP / FULL_SHARD, no virtual stages; DDP: data parallel only). The one place
/// these rules live: validate(job) and the planner's search both ask it.
inline std::string framework_rejects(framework fw, const parallel_config& p,
                                     optimizer_kind optimizer = optimizer_kind::adamw) {
    using detail::kv;
    // messages are built only when a rule fails (validate runs on every estimate)
    const auto fws = [&] { return "runtime.framework=\"" + std::string(to_string(fw)) + "\""; };
    const auto sh = [&] { return "parallel.sharding=\"" + std::string(to_string(p.sharding)) + "\""; };
    switch (fw) {
        case framework::megatron:
            // distributed optimizer = ZeRO-1; full = Megatron-FSDP (--use-megatron-fsdp
            // --data-parallel-sharding-strategy optim_grads_params, megatron/core/distributed/fsdp @d98e8a64), and
            // gradients = its optim_grads. megatron/training/arguments.py: Megatron-FSDP supports sgd and adam only.
            if ((p.sharding == sharding::full || p.sharding == sharding::gradients) && optimizer == optimizer_kind::adafactor)
                return sh() + " (Megatron-FSDP) does not support training.optimizer=\"adafactor\" (sgd or adam)";
            break;
        case framework::deepspeed:
            if (p.pp > 1 && (p.sharding == sharding::gradients || p.sharding == sharding::full))
                return sh() + " with " + kv("parallel.pp", p.pp) + " is not supported by " + fws() +
                       " (pipeline parallelism needs ZeRO stage 0 or 1)";
            break;
        case framework::fsdp:
            if (p.sharding == sharding::optimizer) return sh() + " is not supported by " + fws() + " (use none, gradients or full)";
            if (p.vpp > 1) return kv("parallel.vpp", p.vpp) + " is not supported by " + fws();
            break;
        case framework::ddp:
            if (p.sharding != sharding::none) return sh() + " is not supported by " + fws();
            if (p.tp > 1 || p.pp > 1 || p.cp > 1 || p.ep > 1)
                return fws() + " is data parallel only (got " + kv("tp", p.tp) + ", " + kv("pp", p.pp) + ", " +
                       kv("cp", p.cp) + ", " + kv("ep", p.ep) + ")";
            break;
    }
    return {};
}

/// Whether a layout chosen for a job turns sequence parallelism on when the job does not say: Megatron-LM runs it
/// with every tp > 1 (its recommended setting, --sequence-parallel) when the sequence splits evenly over tp.
inline bool default_sequence_parallel(framework fw, std::int64_t tp, std::int64_t seq_len) {
    return tp > 1 && fw == framework::megatron && seq_len % tp == 0;
}

/// Checks the training spec on its own.
inline void validate(const training_spec& t) {
    using detail::kv;
    if (t.seq_len <= 0) throw config_error(kv("training.seq_len", t.seq_len) + " must be positive");
    if (t.micro_batch <= 0) throw config_error(kv("training.micro_batch", t.micro_batch) + " must be positive");
    if (t.global_batch <= 0) throw config_error(kv("training.global_batch", t.global_batch) + " must be positive");
    if (!(t.total_tokens >= 0))
        throw config_error("training.total_tokens=" + std::to_string(t.total_tokens) + " must not be negative");
    if (!(t.checkpoint_interval_s > 0))
        throw config_error("training.checkpoint_interval_s=" + std::to_string(t.checkpoint_interval_s) +
                           " must be positive");
    const auto& f = t.finetune;
    if (f.adapters() && f.rank < 1)
        throw config_error(kv("training.finetune.rank", f.rank) + " must be at least 1 for method \"" +
                           std::string(to_string(f.method)) + "\"");
    if (f.adapters() && f.targets == 0)
        throw config_error("training.finetune.target_modules is empty for method \"" + std::string(to_string(f.method)) +
                           "\" (name at least one of q, k, v, o, gate, up, down)");
    if (f.frozen_layers < 0) throw config_error(kv("training.finetune.frozen_layers", f.frozen_layers) + " must not be negative");
    if (!(f.dropout >= 0 && f.dropout < 1))
        throw config_error("training.finetune.dropout=" + std::to_string(f.dropout) + " must be in [0, 1)");
    if (f.qlora_saves_inputs && f.method != finetune_method::qlora)
        throw config_error("training.finetune.qlora_saves_inputs=true needs method \"qlora\"");
    if (f.adapters() && f.frozen_layers != 0)
        throw config_error(kv("training.finetune.frozen_layers", f.frozen_layers) + " needs method \"full\" or \"freeze\" (" +
                           std::string(to_string(f.method)) + " freezes the whole base model)");
    if (f.method == finetune_method::freeze && f.frozen_layers == 0)
        throw config_error("training.finetune.method=\"freeze\" needs training.finetune.frozen_layers>0");
}

/// Fine-tuning rules that need the model (checked with or without a parallel layout).
inline void validate_finetune(const job_spec& j) {
    const auto& ft = j.training.finetune;
    if (ft.frozen_layers >= j.model.layers)
        throw config_error(detail::kv("training.finetune.frozen_layers", ft.frozen_layers) + " must be less than " +
                           detail::kv("model.layers", j.model.layers) + " (nothing would be trained)");
}

/// Offload rules of each framework (DeepSpeed runtime/zero/config.py: offload_optimizer needs ZeRO stage >= 1,
/// offload_param stage 3; torch FSDP CPUOffload(offload_params=True) moves parameters, gradients and the optimizer
/// step together; Megatron-Core --optimizer-cpu-offload needs --use-distributed-optimizer and has no parameter
/// offload; torchtune activation offloading is a torch saved-tensor hook, so any framework).
inline void validate_offload(const job_spec& j) {
    const auto& o = j.runtime.offload;
    const auto fw = j.runtime.framework;
    const auto sh = j.parallel.sharding;
    // messages are built only when a rule fails (validate runs on every estimate: no allocation on the happy path)
    const auto fws = [&] { return "runtime.framework=\"" + std::string(to_string(fw)) + "\""; };
    const auto shs = [&] { return "parallel.sharding=\"" + std::string(to_string(sh)) + "\""; };
    if (o.parameters && !o.optimizer)
        throw config_error("runtime.offload.parameters=true needs runtime.offload.optimizer=true (the optimizer step of "
                           "offloaded parameters runs on the CPU)");
    switch (fw) {
        case framework::deepspeed:
            if (o.optimizer && sh == sharding::none)
                throw config_error("runtime.offload.optimizer=true with " + fws() + " needs ZeRO: " + shs() +
                                   " must be optimizer, gradients or full");
            if (o.parameters && sh != sharding::full)
                throw config_error("runtime.offload.parameters=true with " + fws() + " needs ZeRO stage 3: " + shs() +
                                   " must be full");
            break;
        case framework::fsdp:
            if (o.optimizer && !o.parameters)
                throw config_error("runtime.offload.optimizer=true without runtime.offload.parameters=true is not supported "
                                   "by " + fws() + " (CPUOffload moves parameters, gradients and optimizer together)");
            break;
        case framework::megatron:
            if (o.parameters) throw config_error("runtime.offload.parameters=true is not supported by " + fws());
            if (o.optimizer && sh != sharding::optimizer)
                throw config_error("runtime.offload.optimizer=true with " + fws() + " needs the distributed optimizer (" +
                                   shs() + " must be optimizer)");
            break;
        case framework::ddp:
            if (o.optimizer || o.parameters)
                throw config_error("runtime.offload.optimizer/parameters are not supported by " + fws());
            break;
    }
    if (j.training.optimizer == optimizer_kind::adamw_8bit && fw == framework::megatron)
        throw config_error("training.optimizer=\"adamw-8bit\" (bitsandbytes) is not supported by " + fws());
    if (j.training.optimizer == optimizer_kind::adamw_8bit && o.optimizer)
        throw config_error("training.optimizer=\"adamw-8bit\" runs on the GPU; it cannot be combined with "
                           "runtime.offload.optimizer=true");
}

/// Bounds of every number of a job (core/checked.hpp, docs/hardening.md) and the products the library forms from
/// them (micro_batch x dp, pp x vpp, dp x tp x pp x cp, dp x cp), checked before any of them is used, so that no
/// later arithmetic wraps and no work grows with a number's magnitude. Called first by validate(job).
inline void validate_bounds(const job_spec& j) {
    namespace b = detail::bounds;
    using detail::check_bound;
    const auto& m = j.model;
    detail::check_label("name", j.name);
    detail::check_label("model.name", m.name);
    check_bound("model.layers", m.layers, b::layers);
    check_bound("model.hidden", m.hidden, b::hidden);
    check_bound("model.heads", m.heads, b::heads);
    check_bound("model.kv_heads", m.kv_heads, {0, b::heads.max});
    check_bound("model.head_dim", m.head_dim, {0, b::heads.max});
    check_bound("model.ffn_hidden", m.ffn_hidden, b::ffn_hidden);
    check_bound("model.vocab", m.vocab, b::vocab);
    check_bound("model.max_positions", m.max_positions, b::positions);
    check_bound("model.moe.experts", m.moe.experts, b::experts);
    check_bound("model.moe.top_k", m.moe.top_k, b::experts);
    check_bound("model.moe.expert_ffn_hidden", m.moe.expert_ffn_hidden, {0, b::ffn_hidden.max});
    check_bound("model.moe.shared_experts", m.moe.shared_experts, b::experts);
    check_bound("model.moe.dense_layers", m.moe.dense_layers, {0, b::layers.max});
    const auto& t = j.training;
    check_bound("training.seq_len", t.seq_len, b::seq_len);
    check_bound("training.micro_batch", t.micro_batch, b::micro_batch);
    check_bound("training.global_batch", t.global_batch, b::global_batch);
    check_bound("training.total_tokens", t.total_tokens, b::tokens);
    check_bound("training.checkpoint_interval_s", t.checkpoint_interval_s, b::seconds);
    const auto& p = j.parallel;
    check_bound("parallel.dp", p.dp, b::degree);
    check_bound("parallel.tp", p.tp, b::degree);
    check_bound("parallel.pp", p.pp, b::degree);
    check_bound("parallel.vpp", p.vpp, b::degree);
    check_bound("parallel.cp", p.cp, b::degree);
    check_bound("parallel.ep", p.ep, b::degree);
    check_bound("parallel.recompute_layers", p.recompute_layers, {1, b::layers.max});
    check_bound("runtime.loss_chunks", j.runtime.loss_chunks, b::chunks);
    // Each degree is at most 2^20, so every product below fits int64; checked_product still guards the arithmetic.
    detail::checked_mul(t.micro_batch, p.dp, "training.micro_batch x parallel.dp");
    detail::checked_mul(p.pp, p.vpp, "parallel.pp x parallel.vpp");
    detail::checked_product({p.dp, p.tp, p.pp, p.cp}, "parallel.dp x tp x pp x cp (GPUs)", b::gpus);
    detail::checked_product({p.dp, p.cp}, "parallel.dp x cp", b::gpus);
}

namespace detail {

/// Degrees at least 1; tensor parallelism divides heads, kv heads and the MLP (Megatron-LM arguments.py).
inline void validate_degrees(const transformer_spec& m, const parallel_config& p) {
    using detail::kv;
    for (auto [f, v] : {std::pair{"parallel.dp", p.dp}, {"parallel.tp", p.tp}, {"parallel.pp", p.pp},
                        {"parallel.vpp", p.vpp}, {"parallel.cp", p.cp}, {"parallel.ep", p.ep}})
        if (v < 1) throw config_error(kv(f, v) + " must be at least 1");
    if (m.heads % p.tp != 0) throw config_error(kv("parallel.tp", p.tp) + " does not divide " + kv("model.heads", m.heads));
    if (m.kv() % p.tp != 0)
        throw config_error(kv("parallel.tp", p.tp) + " does not divide " + kv("model.kv_heads", m.kv()));
    if (m.ffn_hidden % p.tp != 0)
        throw config_error(kv("parallel.tp", p.tp) + " does not divide " + kv("model.ffn_hidden", m.ffn_hidden));
    for (auto [f, v] : {std::pair{"parallel.etp", p.etp}, {"parallel.first_stage_layers", p.first_stage_layers},
                        {"parallel.last_stage_layers", p.last_stage_layers}})
        if (v < 0) throw config_error(kv(f, v) + " must not be negative");
    // Megatron reads --recompute-method / --recompute-num-layers only with --recompute-granularity full.
    if (p.recompute != recompute::full && (p.recompute_method != recompute_method::uniform || p.recompute_layers != 1))
        throw config_error("parallel.recompute_method=\"" + std::string(to_string(p.recompute_method)) + "\" with " +
                           kv("parallel.recompute_layers", p.recompute_layers) +
                           " needs parallel.recompute=\"full\" (got \"" + std::string(to_string(p.recompute)) + "\")");
}

/// How the layers split over pipeline stages, even or uneven.
inline void validate_pipeline_split(const transformer_spec& m, const parallel_config& p) {
    using detail::kv;
    // Layer split rules of megatron/core/transformer/transformer_block.py get_num_layers_to_build (@d98e8a64).
    const bool uneven = p.first_stage_layers > 0 || p.last_stage_layers > 0;
    if (uneven) {
        if (p.pp < 2) throw config_error("parallel.first_stage_layers/last_stage_layers need parallel.pp>1 (got " + kv("pp", p.pp) + ")");
        if (p.embedding_stage || p.loss_stage)
            throw config_error("parallel.first_stage_layers/last_stage_layers cannot be combined with parallel.embedding_stage/loss_stage (Megatron rejects it)");
        const auto rest = m.layers - p.first_stage_layers - p.last_stage_layers;
        const auto stages_left = p.pp - (p.first_stage_layers > 0 ? 1 : 0) - (p.last_stage_layers > 0 ? 1 : 0);
        if (rest < 0 || (stages_left == 0 && rest != 0) || (stages_left > 0 && (rest % stages_left != 0 || rest / stages_left < 1)))
            throw config_error(kv("model.layers", m.layers) + " minus " + kv("parallel.first_stage_layers", p.first_stage_layers) +
                               " and " + kv("parallel.last_stage_layers", p.last_stage_layers) +
                               " does not split evenly (at least one layer each) over the other stages of " + kv("parallel.pp", p.pp));
        for (auto [f, v] : {std::pair{"parallel.first_stage_layers", p.first_stage_layers}, {"parallel.last_stage_layers", p.last_stage_layers}})
            if (v % p.vpp != 0) throw config_error(kv(f, v) + " is not a multiple of " + kv("parallel.vpp", p.vpp));
        if (stages_left > 0 && (rest / stages_left) % p.vpp != 0)
            throw config_error("layers per middle stage (" + std::to_string(rest / stages_left) + ") is not a multiple of " + kv("parallel.vpp", p.vpp));
    } else {
        const auto slots = m.layers + (p.embedding_stage ? 1 : 0) + (p.loss_stage ? 1 : 0);
        if (slots % (p.pp * p.vpp) != 0)
            throw config_error(kv("model.layers", m.layers) + (p.embedding_stage ? " + 1 (embedding stage)" : "") +
                               (p.loss_stage ? " + 1 (loss stage)" : "") + " does not split evenly over " +
                               kv("parallel.pp", p.pp) + " x " + kv("parallel.vpp", p.vpp));
        if ((p.embedding_stage || p.loss_stage) && slots / (p.pp * p.vpp) < 1)
            throw config_error("parallel.embedding_stage/loss_stage: not enough layers in the first/last virtual stage");
    }
}

/// The pipeline schedule, the batch's split into micro-batches, and context parallelism's sequence chunks.
inline void validate_schedule_and_batch(const training_spec& t, const parallel_config& p) {
    using detail::kv;
    if (p.vpp > 1 && p.schedule != pipeline_schedule::interleaved)
        throw config_error(kv("parallel.vpp", p.vpp) + " needs parallel.pipeline_schedule=\"interleaved\", not \"" +
                           std::string(to_string(p.schedule)) + "\"");
    if (p.schedule == pipeline_schedule::interleaved && (p.vpp < 2 || p.pp < 2))
        throw config_error("parallel.pipeline_schedule=\"interleaved\" needs parallel.pp>1 and parallel.vpp>1 (got " +
                           kv("pp", p.pp) + ", " + kv("vpp", p.vpp) + ")");
    if (t.global_batch % (t.micro_batch * p.dp) != 0)
        throw config_error(kv("training.global_batch", t.global_batch) + " is not a multiple of " +
                           kv("training.micro_batch", t.micro_batch) + " x " + kv("parallel.dp", p.dp));
    const auto mbs = t.global_batch / (t.micro_batch * p.dp);
    if (p.schedule == pipeline_schedule::interleaved && mbs % p.pp != 0)
        throw config_error("interleaved schedule: micro-batches per step (training.global_batch / (micro_batch x dp) = " +
                           std::to_string(mbs) + ") is not a multiple of " + kv("parallel.pp", p.pp));
    if (p.cp > 1 && t.seq_len % (2 * p.cp) != 0)
        throw config_error(kv("training.seq_len", t.seq_len) + " is not divisible by 2 x " + kv("parallel.cp", p.cp) +
                           " (context parallelism splits the sequence into 2 x cp chunks)");
}

/// Expert parallelism and sequence parallelism.
inline void validate_experts_and_sp(const transformer_spec& m, const training_spec& t, const parallel_config& p) {
    using detail::kv;
    if (p.ep > 1) {
        if (!m.is_moe()) throw config_error(kv("parallel.ep", p.ep) + " needs a mixture-of-experts model (model.moe.experts=0)");
        if (m.moe.experts % p.ep != 0)
            throw config_error(kv("parallel.ep", p.ep) + " does not divide " + kv("model.moe.experts", m.moe.experts));
        if ((p.dp * p.cp * p.tp) % (p.ep * p.expert_tp()) != 0)
            throw config_error(kv("parallel.ep", p.ep) + " x etp=" + std::to_string(p.expert_tp()) + " does not divide " +
                               kv("parallel.dp", p.dp) + " x " + kv("parallel.cp", p.cp) + " x " + kv("parallel.tp", p.tp) +
                               " (Megatron parallel_state: expert GPUs regroup the dp x cp x tp GPUs of a stage)");
    }
    if (m.is_moe() && m.expert_ffn() % p.expert_tp() != 0)
        throw config_error("parallel.etp=" + std::to_string(p.expert_tp()) + " does not divide " +
                           kv("model.moe.expert_ffn_hidden", m.expert_ffn()));
    if (p.etp > 0 && !m.is_moe()) throw config_error(kv("parallel.etp", p.etp) + " needs a mixture-of-experts model");
    if (p.sequence_parallel && p.tp < 2)
        throw config_error("parallel.sequence_parallel=true needs parallel.tp>1 (got " + kv("tp", p.tp) + ")");
    if (p.sequence_parallel && t.seq_len % p.tp != 0)
        throw config_error(kv("training.seq_len", t.seq_len) + " is not divisible by " + kv("parallel.tp", p.tp) +
                           " (sequence parallelism)");
}

/// Runtime options that only some frameworks, precisions or layouts have.
inline void validate_runtime(const job_spec& j) {
    using detail::kv;
    const auto& t = j.training;
    const auto& p = j.parallel;
    if (j.runtime.optimizer == optimizer_impl::in_backward && j.training.global_batch != t.micro_batch * p.dp)
        throw config_error("runtime.optimizer_impl=\"in-backward\" cannot accumulate gradients: training.global_batch=" +
                           std::to_string(t.global_batch) + " must equal training.micro_batch x parallel.dp (" +
                           std::to_string(t.micro_batch * p.dp) + ")");
    validate_finetune(j);
    validate_offload(j);
    if (j.runtime.loss_chunks < 1)
        throw config_error(kv("runtime.loss_chunks", j.runtime.loss_chunks) + " must be at least 1");
    // megatron/training/arguments.py@d98e8a64: --fp8-param-gather only with the distributed optimizer / FSDP and fp8;
    // --grad-reduce-in-bf16 only where the parameters are bf16 (Megatron's main_grad buffers).
    if (j.runtime.fp8_param_gather) {
        if (j.runtime.framework != framework::megatron)
            throw config_error("runtime.fp8_param_gather=true needs runtime.framework=\"megatron\" (got \"" +
                               std::string(to_string(j.runtime.framework)) + "\")");
        if (j.training.precision != precision::fp8_mixed)
            throw config_error("runtime.fp8_param_gather=true needs training.precision=\"fp8-mixed\"");
        if (p.sharding == sharding::none)
            throw config_error("runtime.fp8_param_gather=true needs the distributed optimizer or Megatron-FSDP "
                               "(parallel.sharding=\"none\")");
    }
    if (j.runtime.grad_reduce_bf16) {
        if (j.runtime.framework != framework::megatron)
            throw config_error("runtime.grad_reduce_bf16=true needs runtime.framework=\"megatron\" (got \"" +
                               std::string(to_string(j.runtime.framework)) + "\")");
        if (j.training.precision != precision::bf16_mixed && j.training.precision != precision::fp8_mixed)
            throw config_error("runtime.grad_reduce_bf16=true needs bf16 parameters (training.precision "
                               "\"bf16-mixed\" or \"fp8-mixed\")");
    }
}

}  // namespace detail

/// Checks every rule between model, training, parallel layout and framework that the framework itself would
/// reject (Megatron-LM arguments.py / parallel_state.py, DeepSpeed, PyTorch FSDP). Throws config_error naming
/// the fields and their values.
inline void validate(const job_spec& j) {
    validate_bounds(j);
    validate(j.model);
    validate(j.training);
    detail::validate_degrees(j.model, j.parallel);
    detail::validate_pipeline_split(j.model, j.parallel);
    detail::validate_schedule_and_batch(j.training, j.parallel);
    detail::validate_experts_and_sp(j.model, j.training, j.parallel);
    detail::validate_runtime(j);
    if (auto why = framework_rejects(j.runtime.framework, j.parallel, j.training.optimizer); !why.empty())
        throw config_error(why);
}

}  // namespace frenzy
