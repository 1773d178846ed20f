#pragma once
// Training, parallel and runtime description of a job, and every rule a framework would reject.
#include <cstdint>
#include <optional>
#include <string>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/enum_names.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/model/transformer.hpp"

namespace frenzy {

enum class precision { fp32, fp16_mixed, bf16_mixed, bf16, fp8_mixed };
enum class optimizer_kind { adam, adamw, sgd, adafactor };
enum class sharding { none, optimizer, gradients, full };
enum class recompute { none, selective, full };
enum class pipeline_schedule { one_f_one_b, interleaved, gpipe };
enum class framework { megatron, deepspeed, fsdp, ddp };
enum class attention_impl { flash, unfused };
/// How the optimizer step runs: one fused kernel per tensor group (apex/TE FusedAdam, torch fused=True),
/// torch.optim's default foreach path, which materialises a temporary per state (see memory/overheads.hpp), or
/// fused into backward (torchtune optimizer_in_bwd: each parameter is updated and its gradient freed as soon as
/// the gradient is ready, so the gradients never exist all at once).
enum class optimizer_impl { framework_default, fused, foreach, in_backward };

template <> struct enum_names<precision> {
    static constexpr std::array<std::pair<precision, std::string_view>, 5> table{{
        {precision::fp32, "fp32"}, {precision::fp16_mixed, "fp16-mixed"}, {precision::bf16_mixed, "bf16-mixed"},
        {precision::bf16, "bf16"}, {precision::fp8_mixed, "fp8-mixed"}}};
};
template <> struct enum_names<optimizer_kind> {
    static constexpr std::array<std::pair<optimizer_kind, std::string_view>, 4> table{{
        {optimizer_kind::adam, "adam"}, {optimizer_kind::adamw, "adamw"}, {optimizer_kind::sgd, "sgd"},
        {optimizer_kind::adafactor, "adafactor"}}};
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
template <> struct enum_names<attention_impl> {
    static constexpr std::array<std::pair<attention_impl, std::string_view>, 2> table{{
        {attention_impl::flash, "flash"}, {attention_impl::unfused, "unfused"}}};
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
    bool operator==(const training_spec&) const = default;
};

/// How the job is split over GPUs. GPUs used = dp x tp x pp x cp (ep subdivides dp x cp for experts).
struct parallel_config {
    std::int64_t dp = 1, tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1;
    bool sequence_parallel = false;
    frenzy::sharding sharding = sharding::none;
    frenzy::recompute recompute = recompute::none;
    pipeline_schedule schedule = pipeline_schedule::one_f_one_b;
    bool operator==(const parallel_config&) const = default;

    std::int64_t gpus() const { return dp * tp * pp * cp; }
};

struct runtime_spec {
    frenzy::framework framework = framework::megatron;
    attention_impl attention = attention_impl::flash;
    bool compile = false;                       ///< torch.compile of the layers (fuses elementwise ops)
    std::int64_t loss_chunks = 1;               ///< cross-entropy computed over this many vocabulary-output chunks
    optimizer_impl optimizer = optimizer_impl::framework_default;
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
        case precision::fp16_mixed:
        case precision::bf16_mixed:
        case precision::bf16: return 2;
    }
    return 2;
}

namespace detail {
inline std::string kv(const char* field, std::int64_t v) { return std::string(field) + "=" + std::to_string(v); }
}  // namespace detail

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
}

/// Bounds of every number of a job (core/checked.hpp, docs/hardening.md) and the products the library forms from
/// them (micro_batch x dp, pp x vpp, dp x tp x pp x cp, dp x cp), checked before any of them is used, so that no
/// later arithmetic wraps and no work grows with a number's magnitude. Called first by validate(job).
inline void validate_bounds(const job_spec& j) {
    namespace b = detail::bounds;
    using detail::check_bound;
    const auto& m = j.model;
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
    check_bound("runtime.loss_chunks", j.runtime.loss_chunks, b::chunks);
    // Each degree is at most 2^20, so every product below fits int64; checked_product still guards the arithmetic.
    detail::checked_mul(t.micro_batch, p.dp, "training.micro_batch x parallel.dp");
    detail::checked_mul(p.pp, p.vpp, "parallel.pp x parallel.vpp");
    detail::checked_product({p.dp, p.tp, p.pp, p.cp}, "parallel.dp x tp x pp x cp (GPUs)", b::gpus);
    detail::checked_product({p.dp, p.cp}, "parallel.dp x cp", b::gpus);
}

/// Checks every rule between model, training, parallel layout and framework that the framework itself would
/// reject (Megatron-LM arguments.py / parallel_state.py, DeepSpeed, PyTorch FSDP). Throws config_error naming
/// the fields and their values.
inline void validate(const job_spec& j) {
    using detail::kv;
    validate_bounds(j);
    validate(j.model);
    validate(j.training);
    const auto& m = j.model;
    const auto& t = j.training;
    const auto& p = j.parallel;
    for (auto [f, v] : {std::pair{"parallel.dp", p.dp}, {"parallel.tp", p.tp}, {"parallel.pp", p.pp},
                        {"parallel.vpp", p.vpp}, {"parallel.cp", p.cp}, {"parallel.ep", p.ep}})
        if (v < 1) throw config_error(kv(f, v) + " must be at least 1");

    if (m.heads % p.tp != 0) throw config_error(kv("parallel.tp", p.tp) + " does not divide " + kv("model.heads", m.heads));
    if (m.kv() % p.tp != 0)
        throw config_error(kv("parallel.tp", p.tp) + " does not divide " + kv("model.kv_heads", m.kv()));
    if (m.ffn_hidden % p.tp != 0)
        throw config_error(kv("parallel.tp", p.tp) + " does not divide " + kv("model.ffn_hidden", m.ffn_hidden));
    if (m.is_moe() && m.expert_ffn() % p.tp != 0)
        throw config_error(kv("parallel.tp", p.tp) + " does not divide " +
                           kv("model.moe.expert_ffn_hidden", m.expert_ffn()));
    if (m.layers % (p.pp * p.vpp) != 0)
        throw config_error(kv("model.layers", m.layers) + " does not split evenly over " + kv("parallel.pp", p.pp) +
                           " x " + kv("parallel.vpp", p.vpp));
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
    if (p.ep > 1) {
        if (!m.is_moe()) throw config_error(kv("parallel.ep", p.ep) + " needs a mixture-of-experts model (model.moe.experts=0)");
        if (m.moe.experts % p.ep != 0)
            throw config_error(kv("parallel.ep", p.ep) + " does not divide " + kv("model.moe.experts", m.moe.experts));
        if ((p.dp * p.cp) % p.ep != 0)
            throw config_error(kv("parallel.ep", p.ep) + " does not divide " + kv("parallel.dp", p.dp) + " x " +
                               kv("parallel.cp", p.cp));
    }
    if (p.sequence_parallel && p.tp < 2)
        throw config_error("parallel.sequence_parallel=true needs parallel.tp>1 (got " + kv("tp", p.tp) + ")");
    if (p.sequence_parallel && t.seq_len % p.tp != 0)
        throw config_error(kv("training.seq_len", t.seq_len) + " is not divisible by " + kv("parallel.tp", p.tp) +
                           " (sequence parallelism)");

    if (j.runtime.optimizer == optimizer_impl::in_backward && j.training.global_batch != t.micro_batch * p.dp)
        throw config_error("runtime.optimizer_impl=\"in-backward\" cannot accumulate gradients: training.global_batch=" +
                           std::to_string(t.global_batch) + " must equal training.micro_batch x parallel.dp (" +
                           std::to_string(t.micro_batch * p.dp) + ")");
    if (j.runtime.loss_chunks < 1)
        throw config_error(kv("runtime.loss_chunks", j.runtime.loss_chunks) + " must be at least 1");
    const auto fw = j.runtime.framework;
    const std::string fws = "runtime.framework=\"" + std::string(to_string(fw)) + "\"";
    const std::string sh = "parallel.sharding=\"" + std::string(to_string(p.sharding)) + "\"";
    switch (fw) {
        case framework::megatron:  // distributed optimizer = ZeRO-1; ZeRO-2/3 are not Megatron options
            if (p.sharding == sharding::gradients || p.sharding == sharding::full)
                throw config_error(sh + " is not supported by " + fws + " (use none or optimizer)");
            break;
        case framework::deepspeed:  // DeepSpeed's pipeline engine supports ZeRO stage 0/1 only
            if (p.pp > 1 && (p.sharding == sharding::gradients || p.sharding == sharding::full))
                throw config_error(sh + " with " + kv("parallel.pp", p.pp) + " is not supported by " + fws +
                                   " (pipeline parallelism needs ZeRO stage 0 or 1)");
            break;
        case framework::fsdp:  // FSDP: NO_SHARD, SHARD_GRAD_OP, FULL_SHARD
            if (p.sharding == sharding::optimizer)
                throw config_error(sh + " is not supported by " + fws + " (use none, gradients or full)");
            if (p.vpp > 1) throw config_error(kv("parallel.vpp", p.vpp) + " is not supported by " + fws);
            break;
        case framework::ddp:
            if (p.sharding != sharding::none) throw config_error(sh + " is not supported by " + fws);
            if (p.tp > 1 || p.pp > 1 || p.cp > 1 || p.ep > 1)
                throw config_error(fws + " is data parallel only (got " + kv("tp", p.tp) + ", " + kv("pp", p.pp) +
                                   ", " + kv("cp", p.cp) + ", " + kv("ep", p.ep) + ")");
            break;
    }
}

}  // namespace frenzy
