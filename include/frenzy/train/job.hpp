#pragma once
// Training, parallel and runtime description of a job, and every rule a framework would reject.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/frameworks/registry.hpp"
#include "frenzy/train/job_spec.hpp"
#include "frenzy/train/spec.hpp"

namespace frenzy {

/// Why framework `fw` cannot run layout `p` (for training `t`: its optimizer and precision), or "" when it can: the
/// sharding and parallelism it offers (frameworks/<name>/traits.hpp rules.rejects_layout). validate(job) and the
/// planner's search both ask it.
inline std::string framework_rejects(framework fw, const parallel_config& p, const training_spec& t = {}) {
    if (!p.stage_layers.empty() && !fw->rules.stage_layer_layout)
        return "parallel.stage_layers (a layer count per pipeline stage) is not supported by runtime.framework=\"" +
               std::string(fw.name()) + "\" (Megatron-LM states it with --pipeline-model-parallel-layout)";
    return fw->rules.rejects_layout(p, t);
}

/// The framework of a job that names none: the catalog's default (framework::by_default, Megatron-LM) for pretraining
/// and full fine-tunes; for LoRA and QLoRA the first framework whose rules say adapters_by_default (the Hugging Face
/// stack, Trainer with PEFT, which the hf launcher writes), unless the layout the job gives needs what it does not
/// run (Megatron-LM's training loop has no adapters: issue 24, the planner does not pick Megatron for LoRA unless the
/// layout or the user asks for it).
inline framework default_framework(const training_spec& t, const parallel_config& p = {}) {
    if (t.finetune.adapters())
        for (const auto f : framework_catalog())
            if (f->rules.adapters_by_default && framework_rejects(f, p, t).empty()) return f;
    return framework::by_default;
}

/// Whether a layout chosen for a job turns sequence parallelism on when the job does not say: Megatron-LM runs it
/// with every tp > 1 (its recommended setting, --sequence-parallel) when the sequence splits evenly over tp.
inline bool default_sequence_parallel(framework fw, std::int64_t tp, std::int64_t seq_len) {
    return tp > 1 && fw->rules.default_sequence_parallel && seq_len % tp == 0;
}

/// Checks the training spec on its own.
inline void validate(const training_spec& t) {
    if (t.seq_len <= 0) throw config_error(field_text("training.seq_len", t.seq_len) + " must be positive");
    if (t.micro_batch <= 0) throw config_error(field_text("training.micro_batch", t.micro_batch) + " must be positive");
    if (t.global_batch <= 0) throw config_error(field_text("training.global_batch", t.global_batch) + " must be positive");
    if (!(t.total_tokens >= 0))
        throw config_error("training.total_tokens=" + std::to_string(t.total_tokens) + " must not be negative");
    if (!(t.checkpoint_interval_s > 0))
        throw config_error("training.checkpoint_interval_s=" + std::to_string(t.checkpoint_interval_s) +
                           " must be positive");
    const auto& f = t.finetune;
    if (f.adapters() && f.rank < 1)
        throw config_error(field_text("training.finetune.rank", f.rank) + " must be at least 1 for method \"" +
                           std::string(to_string(f.method)) + "\"");
    if (f.adapters() && f.targets == 0)
        throw config_error("training.finetune.target_modules is empty for method \"" + std::string(to_string(f.method)) +
                           "\" (name at least one of q, k, v, o, gate, up, down)");
    if (f.frozen_layers < 0) throw config_error(field_text("training.finetune.frozen_layers", f.frozen_layers) + " must not be negative");
    if (!(f.dropout >= 0 && f.dropout < 1))
        throw config_error("training.finetune.dropout=" + std::to_string(f.dropout) + " must be in [0, 1)");
    if (f.qlora_saves_inputs && f.method != finetune_method::qlora)
        throw config_error("training.finetune.qlora_saves_inputs=true needs method \"qlora\"");
    if (f.method == finetune_method::none && f.frozen_layers != 0)
        throw config_error(field_text("training.finetune.frozen_layers", f.frozen_layers) + " needs method \"freeze\" or "
                           "\"full\" (method \"none\" trains a model from scratch: nothing pretrained to freeze)");
    if (f.adapters() && f.frozen_layers != 0)
        throw config_error(field_text("training.finetune.frozen_layers", f.frozen_layers) + " needs method \"full\" or \"freeze\" (" +
                           std::string(to_string(f.method)) + " freezes the whole base model)");
    if (f.method == finetune_method::freeze && f.frozen_layers == 0)
        throw config_error("training.finetune.method=\"freeze\" needs training.finetune.frozen_layers>0");
    if (f.load_in_8bit && f.method != finetune_method::lora)
        throw config_error("training.finetune.load_in_8bit=true needs method \"lora\" (got \"" + std::string(to_string(f.method)) +
                           "\"): int8 weights train adapters only, and qlora's base is 4-bit");
    if (f.modules_to_save != 0 && !f.adapters())
        throw config_error("training.finetune.modules_to_save needs method \"lora\" or \"qlora\" (got \"" +
                           std::string(to_string(f.method)) + "\"): the other methods train those modules in place");
    if (f.dpo() && f.method == finetune_method::none)
        throw config_error("training.finetune.objective=\"dpo\" needs a pretrained model (training.finetune.method "
                           "\"full\", \"freeze\", \"lora\" or \"qlora\", not \"none\")");
    if (f.precompute_ref_log_probs && !f.dpo())
        throw config_error("training.finetune.precompute_ref_log_probs=true needs training.finetune.objective=\"dpo\"");
}

/// Fine-tuning rules that need the model (checked with or without a parallel layout).
inline void validate_finetune(const job_spec& j) {
    const auto& ft = j.training.finetune;
    if (ft.load_in_8bit && j.parallel.sharding != sharding::none)
        throw config_error("training.finetune.load_in_8bit=true with parallel.sharding=\"" + std::string(to_string(j.parallel.sharding)) +
                           "\" is not modelled (bitsandbytes' Int8Params keep their row scales beside the weight: "
                           "parallel.sharding \"none\")");
    if (ft.dpo() && !j.runtime.framework->rules.dpo)
        throw config_error("training.finetune.objective=\"dpo\" needs runtime.framework=\"" + frameworks_with(&framework_rules::dpo) +
                           "\" (got \"" + std::string(to_string(j.runtime.framework)) + "\"): TRL's DPOTrainer runs on transformers' Trainer");
    if (ft.frozen_layers >= j.model.layers)
        throw config_error(field_text("training.finetune.frozen_layers", ft.frozen_layers) + " must be less than " +
                           field_text("model.layers", j.model.layers) + " (nothing would be trained)");
}

/// runtime.paged_optimizer: bitsandbytes has paged Adam/AdamW in 32 and 8 bits (bitsandbytes@95f9af3
/// bitsandbytes/optim/adamw.py PagedAdamW, PagedAdamW8bit); the states stay on the GPU's unified memory, so not with
/// runtime.offload.optimizer.
inline void validate_paged_optimizer(const job_spec& j) {
    if (!j.runtime.paged_optimizer) return;
    const auto opt = j.training.optimizer;
    if (!j.runtime.framework->rules.adamw_8bit)
        throw config_error("runtime.paged_optimizer (bitsandbytes) is not supported by runtime.framework=\"" +
                           std::string(to_string(j.runtime.framework)) + "\"");
    if (opt != optimizer_kind::adam && opt != optimizer_kind::adamw && opt != optimizer_kind::adamw_8bit)
        throw config_error("runtime.paged_optimizer needs training.optimizer=\"adam\", \"adamw\" or \"adamw-8bit\" "
                           "(bitsandbytes' paged optimizers), not \"" + std::string(to_string(opt)) + "\"");
    if (j.runtime.offload.optimizer)
        throw config_error("runtime.paged_optimizer keeps the states in unified memory; it cannot be combined with "
                           "runtime.offload.optimizer=true");
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
    if (o.parameters && !o.optimizer)
        throw config_error("runtime.offload.parameters=true needs runtime.offload.optimizer=true (the optimizer step of "
                           "offloaded parameters runs on the CPU)");
    if (auto why = fw->rules.rejects_offload(o, sh); !why.empty()) throw config_error(why);
    if (j.training.optimizer == optimizer_kind::adamw_8bit && !fw->rules.adamw_8bit)
        throw config_error("training.optimizer=\"adamw-8bit\" (bitsandbytes) is not supported by " + fws());
    if (j.training.optimizer == optimizer_kind::adamw_8bit && o.optimizer)
        throw config_error("training.optimizer=\"adamw-8bit\" runs on the GPU; it cannot be combined with "
                           "runtime.offload.optimizer=true");
    validate_paged_optimizer(j);
    const auto level = j.runtime.empty_unused_memory_level;
    if (level < bounds::empty_cache_level.min || level > bounds::empty_cache_level.max)
        throw config_error(field_text("runtime.empty_unused_memory_level", level) + " must be 0, 1 or 2 (Megatron's "
                           "--empty-unused-memory-level)");
}

namespace detail {
/// The bounds of the fields a plan search does not vary (the name, the model, the training but for its
/// micro-batch), in visit_bounds' order; `mb` is where the micro-batch's bound stands in that order.
template <class Checks, class MicroBatch>
void visit_job_bounds(const job_spec& j, Checks& c, MicroBatch&& mb) {
    namespace b = bounds;
    const auto& m = j.model;
    c.label("name", j.name);
    c.label("model.name", m.name);
    c.bound("model.layers", m.layers, b::layers);
    c.bound("model.hidden", m.hidden, b::hidden);
    c.bound("model.heads", m.heads, b::heads);
    c.bound("model.kv_heads", m.kv_heads, int_bound{0, b::heads.max});
    c.bound("model.head_dim", m.head_dim, int_bound{0, b::heads.max});
    c.bound("model.ffn_hidden", m.ffn_hidden, b::ffn_hidden);
    c.bound("model.vocab", m.vocab, b::vocab);
    c.bound("model.max_positions", m.max_positions, b::positions);
    c.bound("model.moe.experts", m.moe.experts, b::experts);
    c.bound("model.moe.top_k", m.moe.top_k, b::experts);
    c.bound("model.moe.expert_ffn_hidden", m.moe.expert_ffn_hidden, int_bound{0, b::ffn_hidden.max});
    c.bound("model.moe.shared_experts", m.moe.shared_experts, b::experts);
    c.bound("model.moe.dense_layers", m.moe.dense_layers, int_bound{0, b::layers.max});
    const auto& t = j.training;
    c.bound("training.seq_len", t.seq_len, b::seq_len);
    mb();
    c.bound("training.global_batch", t.global_batch, b::global_batch);
    c.bound("training.total_tokens", t.total_tokens, b::tokens);
    c.bound("training.checkpoint_interval_s", t.checkpoint_interval_s, b::seconds);
}
/// Every bound validate_bounds checks, in its order, through `c`: c.label(field, text), c.bound(field, value, range),
/// c.mul(a, b, what) and c.product(factors, what, range) (core/checked.hpp check_label, check_bound, checked_mul,
/// checked_product): the one list of them. With `Layout`, only those that read what a plan search varies (the
/// micro-batch, parallel.*, runtime.loss_chunks and their products; visit_job_bounds has the others): validate_layout.
template <bool Layout = false, class Checks>
void visit_bounds(const job_spec& j, Checks& c) {
    namespace b = bounds;
    const auto& t = j.training;
    const auto mb = [&] { c.bound("training.micro_batch", t.micro_batch, b::micro_batch); };
    if constexpr (Layout) mb();
    else visit_job_bounds(j, c, mb);
    const auto& p = j.parallel;
    c.bound("parallel.dp", p.dp, b::degree);
    c.bound("parallel.tp", p.tp, b::degree);
    c.bound("parallel.pp", p.pp, b::degree);
    c.bound("parallel.vpp", p.vpp, b::degree);
    c.bound("parallel.cp", p.cp, b::degree);
    c.bound("parallel.ep", p.ep, b::degree);
    c.bound("parallel.recompute_layers", p.recompute_layers, int_bound{1, b::layers.max});
    c.bound("runtime.loss_chunks", j.runtime.loss_chunks, b::chunks);
    // Each degree is at most 2^20, so every product below fits int64; checked_product still guards the arithmetic.
    c.mul(t.micro_batch, p.dp, "training.micro_batch x parallel.dp");
    c.mul(p.pp, p.vpp, "parallel.pp x parallel.vpp");
    c.product({p.dp, p.tp, p.pp, p.cp}, "parallel.dp x tp x pp x cp (GPUs)", b::gpus);
    c.product({p.dp, p.cp}, "parallel.dp x cp", b::gpus);
}
/// visit_bounds' checks that throw the first error (validate_bounds).
struct throwing_bounds {
    void label(std::string_view f, std::string_view v) const { check_label(f, v); }
    template <class V, class B> void bound(std::string_view f, V v, B b) const { check_bound(f, v, b); }
    void mul(std::int64_t a, std::int64_t x, std::string_view what) const { checked_mul(a, x, what); }
    void product(std::initializer_list<std::int64_t> fs, std::string_view what, int_bound b) const { checked_product(fs, what, b); }
};
/// visit_bounds' checks as one flag, without a message: `ok` stays true only where none of them throws (a name
/// that is not printable ASCII clears it too: the throwing pass then decides).
struct quiet_bounds {
    bool ok = true;
    void label(std::string_view, std::string_view v) {
        ok = ok && v.size() <= 256 && std::all_of(v.begin(), v.end(), [](char ch) { return ch >= 0x20 && ch < 0x7F; });
    }
    template <class V, class B> void bound(std::string_view, V v, B b) { ok = ok && within(v, b); }
    void mul(std::int64_t a, std::int64_t x, std::string_view) {
        std::int64_t r = 0;
        ok = ok && !__builtin_mul_overflow(a, x, &r);
    }
    void product(std::initializer_list<std::int64_t> fs, std::string_view, int_bound b) {
        std::int64_t r = 1;
        for (auto f : fs) ok = ok && !__builtin_mul_overflow(r, f, &r);
        ok = ok && within(r, b);
    }
};
}  // namespace detail

/// Bounds of every number of a job (core/checked.hpp, docs/hardening.md) and the products the library forms from
/// them (micro_batch x dp, pp x vpp, dp x tp x pp x cp, dp x cp), checked before any of them is used, so that no
/// later arithmetic wraps and no work grows with a number's magnitude. Called first by validate(job). The checks run
/// quietly first (validate runs on every memory estimate of a plan search); only where one fails are they run again
/// one by one, to throw the first error with its field.
inline void validate_bounds(const job_spec& j) {
    detail::quiet_bounds quiet;
    detail::visit_bounds(j, quiet);
    if (quiet.ok) return;
    const detail::throwing_bounds loud;
    detail::visit_bounds(j, loud);
}

namespace detail {

/// Degrees at least 1; tensor parallelism divides heads, kv heads and the MLP (Megatron-LM arguments.py).
inline void validate_degrees(const transformer_spec& m, const parallel_config& p) {
    for (auto [f, v] : {std::pair{"parallel.dp", p.dp}, {"parallel.tp", p.tp}, {"parallel.pp", p.pp},
                        {"parallel.vpp", p.vpp}, {"parallel.cp", p.cp}, {"parallel.ep", p.ep}})
        if (v < 1) throw config_error(field_text(f, v) + " must be at least 1");
    if (m.heads % p.tp != 0) throw config_error(field_text("parallel.tp", p.tp) + " does not divide " + field_text("model.heads", m.heads));
    if (m.kv() % p.tp != 0)
        throw config_error(field_text("parallel.tp", p.tp) + " does not divide " + field_text("model.kv_heads", m.kv()));
    if (m.ffn_hidden % p.tp != 0)
        throw config_error(field_text("parallel.tp", p.tp) + " does not divide " + field_text("model.ffn_hidden", m.ffn_hidden));
    for (auto [f, v] : {std::pair{"parallel.etp", p.etp}, {"parallel.first_stage_layers", p.first_stage_layers},
                        {"parallel.last_stage_layers", p.last_stage_layers}})
        if (v < 0) throw config_error(field_text(f, v) + " must not be negative");
    // Megatron reads --recompute-method / --recompute-num-layers only with --recompute-granularity full.
    if (p.recompute != recompute::full && (p.recompute_method != recompute_method::uniform || p.recompute_layers != 1))
        throw config_error("parallel.recompute_method=\"" + std::string(to_string(p.recompute_method)) + "\" with " +
                           field_text("parallel.recompute_layers", p.recompute_layers) +
                           " needs parallel.recompute=\"full\" (got \"" + std::string(to_string(p.recompute)) + "\")");
}

/// A layout's own layer count per stage (parallel.stage_layers): one entry per stage, each at least one layer,
/// adding up to the model's layers (Megatron's PipelineParallelLayerLayout.validate_layer_layout counts the
/// decoder layers against num_layers, megatron/core/transformer/pipeline_parallel_layer_layout.py @d98e8a64); the
/// other split fields and virtual stages are not combined with it (Megatron's arguments.py asserts that at most one
/// of --pipeline-model-parallel-layout, --num-layers-per-virtual-pipeline-stage and
/// --num-virtual-stages-per-pipeline-rank is set; Frenzy writes the layout without virtual stages).
inline void validate_stage_layers(const transformer_spec& m, const parallel_config& p) {
    const auto n = static_cast<std::int64_t>(p.stage_layers.size());
    if (n != p.pp)
        throw config_error("parallel.stage_layers has " + std::to_string(n) + " entries; it needs one per stage (" +
                           field_text("parallel.pp", p.pp) + ")");
    std::int64_t sum = 0;
    for (std::size_t s = 0; s < p.stage_layers.size(); ++s) {
        const auto v = p.stage_layers[s];
        if (v < 1 || v > m.layers)
            throw config_error("parallel.stage_layers[" + std::to_string(s) + "]=" + std::to_string(v) +
                               " must be between 1 and " + field_text("model.layers", m.layers));
        sum += v;
    }
    if (sum != m.layers)
        throw config_error("parallel.stage_layers adds up to " + std::to_string(sum) + " layers; " +
                           field_text("model.layers", m.layers));
    if (p.vpp != 1) throw config_error("parallel.stage_layers needs " + field_text("parallel.vpp", 1) + " (got " + std::to_string(p.vpp) + ")");
    if (p.first_stage_layers > 0 || p.last_stage_layers > 0 || p.embedding_stage || p.loss_stage)
        throw config_error("parallel.stage_layers cannot be combined with parallel.first_stage_layers/last_stage_layers "
                           "or parallel.embedding_stage/loss_stage (the layout states every stage)");
}

/// How the layers split over pipeline stages, even or uneven.
inline void validate_pipeline_split(const transformer_spec& m, const parallel_config& p) {
    // Layer split rules of megatron/core/transformer/transformer_block.py get_num_layers_to_build (@d98e8a64).
    const bool uneven = p.first_stage_layers > 0 || p.last_stage_layers > 0;
    if (!p.stage_layers.empty()) {
        validate_stage_layers(m, p);
    } else if (uneven) {
        if (p.pp < 2) throw config_error("parallel.first_stage_layers/last_stage_layers need parallel.pp>1 (got " + field_text("pp", p.pp) + ")");
        if (p.embedding_stage || p.loss_stage)
            throw config_error("parallel.first_stage_layers/last_stage_layers cannot be combined with parallel.embedding_stage/loss_stage (Megatron rejects it)");
        const auto rest = m.layers - p.first_stage_layers - p.last_stage_layers;
        const auto stages_left = p.pp - (p.first_stage_layers > 0 ? 1 : 0) - (p.last_stage_layers > 0 ? 1 : 0);
        if (rest < 0 || (stages_left == 0 && rest != 0) || (stages_left > 0 && (rest % stages_left != 0 || rest / stages_left < 1)))
            throw config_error(field_text("model.layers", m.layers) + " minus " + field_text("parallel.first_stage_layers", p.first_stage_layers) +
                               " and " + field_text("parallel.last_stage_layers", p.last_stage_layers) +
                               " does not split evenly (at least one layer each) over the other stages of " + field_text("parallel.pp", p.pp));
        for (auto [f, v] : {std::pair{"parallel.first_stage_layers", p.first_stage_layers}, {"parallel.last_stage_layers", p.last_stage_layers}})
            if (v % p.vpp != 0) throw config_error(field_text(f, v) + " is not a multiple of " + field_text("parallel.vpp", p.vpp));
        if (stages_left > 0 && (rest / stages_left) % p.vpp != 0)
            throw config_error("layers per middle stage (" + std::to_string(rest / stages_left) + ") is not a multiple of " + field_text("parallel.vpp", p.vpp));
    } else {
        const auto slots = m.layers + (p.embedding_stage ? 1 : 0) + (p.loss_stage ? 1 : 0);
        if (slots % (p.pp * p.vpp) != 0)
            throw config_error(field_text("model.layers", m.layers) + (p.embedding_stage ? " + 1 (embedding stage)" : "") +
                               (p.loss_stage ? " + 1 (loss stage)" : "") + " does not split evenly over " +
                               field_text("parallel.pp", p.pp) + " x " + field_text("parallel.vpp", p.vpp));
        if ((p.embedding_stage || p.loss_stage) && slots / (p.pp * p.vpp) < 1)
            throw config_error("parallel.embedding_stage/loss_stage: not enough layers in the first/last virtual stage");
    }
}

/// The pipeline schedule, the batch's split into micro-batches, and context parallelism's sequence chunks.
inline void validate_schedule_and_batch(const training_spec& t, const parallel_config& p) {
    if (p.vpp > 1 && p.schedule != pipeline_schedule::interleaved)
        throw config_error(field_text("parallel.vpp", p.vpp) + " needs parallel.pipeline_schedule=\"interleaved\", not \"" +
                           std::string(to_string(p.schedule)) + "\"");
    if (p.schedule == pipeline_schedule::interleaved && (p.vpp < 2 || p.pp < 2))
        throw config_error("parallel.pipeline_schedule=\"interleaved\" needs parallel.pp>1 and parallel.vpp>1 (got " +
                           field_text("pp", p.pp) + ", " + field_text("vpp", p.vpp) + ")");
    if (t.global_batch % (t.micro_batch * p.dp) != 0)
        throw config_error(field_text("training.global_batch", t.global_batch) + " is not a multiple of " +
                           field_text("training.micro_batch", t.micro_batch) + " x " + field_text("parallel.dp", p.dp));
    const auto mbs = t.global_batch / (t.micro_batch * p.dp);
    if (p.schedule == pipeline_schedule::interleaved && mbs % p.pp != 0)
        throw config_error("interleaved schedule: micro-batches per step (training.global_batch / (micro_batch x dp) = " +
                           std::to_string(mbs) + ") is not a multiple of " + field_text("parallel.pp", p.pp));
    if (p.cp > 1 && t.seq_len % (2 * p.cp) != 0)
        throw config_error(field_text("training.seq_len", t.seq_len) + " is not divisible by 2 x " + field_text("parallel.cp", p.cp) +
                           " (context parallelism splits the sequence into 2 x cp chunks)");
}

/// Expert parallelism and sequence parallelism.
inline void validate_experts_and_sp(const transformer_spec& m, const training_spec& t, const parallel_config& p) {
    if (p.ep > 1) {
        if (!m.is_moe()) throw config_error(field_text("parallel.ep", p.ep) + " needs a mixture-of-experts model (model.moe.experts=0)");
        if (m.moe.experts % p.ep != 0)
            throw config_error(field_text("parallel.ep", p.ep) + " does not divide " + field_text("model.moe.experts", m.moe.experts));
        if ((p.dp * p.cp * p.tp) % (p.ep * p.expert_tp()) != 0)
            throw config_error(field_text("parallel.ep", p.ep) + " x etp=" + std::to_string(p.expert_tp()) + " does not divide " +
                               field_text("parallel.dp", p.dp) + " x " + field_text("parallel.cp", p.cp) + " x " + field_text("parallel.tp", p.tp) +
                               " (Megatron parallel_state: expert GPUs regroup the dp x cp x tp GPUs of a stage)");
    }
    if (m.is_moe() && m.expert_ffn() % p.expert_tp() != 0)
        throw config_error("parallel.etp=" + std::to_string(p.expert_tp()) + " does not divide " +
                           field_text("model.moe.expert_ffn_hidden", m.expert_ffn()));
    if (p.etp > 0 && !m.is_moe()) throw config_error(field_text("parallel.etp", p.etp) + " needs a mixture-of-experts model");
    if (p.sequence_parallel && p.tp < 2)
        throw config_error("parallel.sequence_parallel=true needs parallel.tp>1 (got " + field_text("tp", p.tp) + ")");
    if (p.sequence_parallel && t.seq_len % p.tp != 0)
        throw config_error(field_text("training.seq_len", t.seq_len) + " is not divisible by " + field_text("parallel.tp", p.tp) +
                           " (sequence parallelism)");
}

/// runtime.loss: Megatron computes the vocabulary-parallel loss only (tensor_parallel/cross_entropy.py), which no
/// other framework has; "loss-parallel" is what the upcast loss becomes under DTensor tensor parallelism, not a
/// choice.
inline void validate_loss(const job_spec& j) {
    if (!j.runtime.loss) return;
    const auto l = *j.runtime.loss;
    if (l == loss_style::liger_fused_linear)
        throw config_error("runtime.loss=\"liger\" is not a setting: runtime.liger=true turns on Liger's fused linear "
                           "cross-entropy with its other kernels (transformers' use_liger_kernel)");
    if (l == loss_style::unsloth_fused)
        throw config_error("runtime.loss=\"unsloth-fused\" is not a setting: runtime.framework=\"unsloth\" runs Unsloth's "
                           "fused cross-entropy");
    const bool megatron_loss = j.runtime.framework->memory.loss == loss_style::fused_vocab_parallel;
    const auto named = [&] { return "runtime.loss=\"" + std::string(to_string(l)) + "\""; };
    if (l == loss_style::dtensor_loss_parallel)
        throw config_error(named() + " is not a setting: \"upcast\" becomes it under DTensor tensor parallelism");
    if (megatron_loss != (l == loss_style::fused_vocab_parallel))
        throw config_error(named() + " is not a loss of runtime.framework=\"" + std::string(to_string(j.runtime.framework)) +
                           "\" (" + (megatron_loss ? "\"vocab-parallel\" only" : "\"upcast\" or \"fused\"") + ")");
}

/// runtime.liger: a framework that patches Liger's kernels in (transformers' use_liger_kernel), a model whose layers
/// they replace (RMSNorm, a gated MLP, rotary embedding; attention itself is not patched, and no Liger patch of
/// linkedin/Liger-Kernel@ead96b6 monkey_patch.py MODEL_TYPE_TO_APPLY_LIGER_FN covers multi-latent attention:
/// deepseek_v4 only), and no other loss beside it.
inline void validate_liger(const job_spec& j) {
    if (!j.runtime.liger) return;
    const auto& m = j.model;
    const auto& fw = j.runtime.framework;
    if (!fw->rules.liger_kernels)
        throw config_error("runtime.liger needs runtime.framework=\"" + frameworks_with(&framework_rules::liger_kernels) +
                           "\" (got \"" + std::string(to_string(fw)) + "\"): Liger's kernels are applied by transformers' Trainer");
    if (m.norm != norm_kind::rmsnorm || !is_gated(m.activation) || m.position_embedding != position_embedding::rope)
        throw config_error("runtime.liger needs an RMSNorm model with a gated MLP and rotary embedding (model.norm=\"" +
                           std::string(to_string(m.norm)) + "\", model.activation=\"" + std::string(to_string(m.activation)) +
                           "\", model.position_embedding=\"" + std::string(to_string(m.position_embedding)) +
                           "\"): Liger patches the Llama-style families only");
    if (m.is_mla()) throw config_error("runtime.liger: no Liger patch covers multi-latent attention (model.mla.kv_lora_rank > 0)");
    if (j.runtime.loss)
        throw config_error("runtime.loss=\"" + std::string(to_string(*j.runtime.loss)) +
                           "\" contradicts runtime.liger=true (Liger's fused linear cross-entropy is the loss)");
}

/// Runtime options that only some frameworks, precisions or layouts have.
/// runtime.fp8_recipe: only with fp8-mixed, and one the framework runs (framework_rules::fp8_recipes).
inline void validate_fp8_recipe(const job_spec& j) {
    if (!j.runtime.fp8_recipe) return;
    const std::string r(to_string(*j.runtime.fp8_recipe));
    if (j.training.precision != precision::fp8_mixed)
        throw config_error("runtime.fp8_recipe=\"" + r + "\" needs training.precision=\"fp8-mixed\" (got \"" +
                           std::string(to_string(j.training.precision)) + "\")");
    if (!(j.runtime.framework->rules.fp8_recipes & fp8_recipe_bit(*j.runtime.fp8_recipe)))
        throw config_error("runtime.fp8_recipe=\"" + r + "\" needs runtime.framework=\"" + frameworks_with(*j.runtime.fp8_recipe) +
                           "\" (got \"" + std::string(to_string(j.runtime.framework)) + "\")");
    // megatron/training/arguments.py@d98e8a64: "When `--fp8-param-gather` is enabled, the optimizer cpu offload must
    // be used in conjunction with `--fp8-recipe delayed`."
    if (j.runtime.fp8_param_gather && j.runtime.offload.optimizer && *j.runtime.fp8_recipe != fp8_recipe::delayed)
        throw config_error("runtime.fp8_recipe=\"" + r + "\" with runtime.fp8_param_gather and runtime.offload.optimizer: "
                           "Megatron offloads fp8 parameters' optimizer only under \"delayed\"");
}

/// runtime.framework_version: unset, the framework's default version or one its traits list.
inline void validate_framework_version(const job_spec& j) {
    const auto& v = j.runtime.framework_version;
    const auto& fw = j.runtime.framework.traits();
    if (v.empty() || v == fw.default_version) return;
    for (const auto& x : fw.versions)
        if (x.name == v) return;
    const std::string head = "runtime.framework_version=\"" + printable(v) + "\" ";
    const std::string name = "runtime.framework=\"" + std::string(fw.name) + "\"";
    if (fw.default_version.empty())
        throw config_error(head + "is not read for " + name + ": its defaults that move memory are the same in every "
                           "version Frenzy knows (leave it unset)");
    throw config_error(head + "is not a known version of " + name + " (known: " + framework_versions_text(fw) + ")");
}

inline void validate_runtime(const job_spec& j) {
    const auto& t = j.training;
    const auto& p = j.parallel;
    if (j.runtime.optimizer == optimizer_impl::in_backward && j.training.global_batch != t.micro_batch * p.dp)
        throw config_error("runtime.optimizer_impl=\"in-backward\" cannot accumulate gradients: training.global_batch=" +
                           std::to_string(t.global_batch) + " must equal training.micro_batch x parallel.dp (" +
                           std::to_string(t.micro_batch * p.dp) + ")");
    validate_finetune(j);
    validate_offload(j);
    validate_framework_version(j);
    if (j.runtime.loss_chunks < 1)
        throw config_error(field_text("runtime.loss_chunks", j.runtime.loss_chunks) + " must be at least 1");
    validate_loss(j);
    validate_liger(j);
    if (j.runtime.attention == attention_impl::memory_efficient &&
        j.runtime.framework->perf.attention_without_flash != attention_impl::memory_efficient)
        throw config_error("runtime.attention=\"memory-efficient\" is PyTorch SDPA's kernel, which runtime.framework=\"" +
                           std::string(to_string(j.runtime.framework)) + "\" does not run (\"flash\", \"unfused\" or \"auto\")");
    // megatron/training/arguments.py@d98e8a64: --fp8-param-gather only with the distributed optimizer / FSDP and fp8;
    // --grad-reduce-in-bf16 only where the parameters are bf16 (Megatron's main_grad buffers).
    if (j.runtime.fp8_param_gather) {
        if (!j.runtime.framework->rules.fp8_param_gather)
            throw config_error("runtime.fp8_param_gather=true needs runtime.framework=\"" + frameworks_with(&framework_rules::fp8_param_gather) + "\" (got \"" +
                               std::string(to_string(j.runtime.framework)) + "\")");
        if (j.training.precision != precision::fp8_mixed)
            throw config_error("runtime.fp8_param_gather=true needs training.precision=\"fp8-mixed\"");
        if (p.sharding == sharding::none)
            throw config_error("runtime.fp8_param_gather=true needs the distributed optimizer or Megatron-FSDP "
                               "(parallel.sharding=\"none\")");
    }
    validate_fp8_recipe(j);
    if (j.runtime.grad_reduce_bf16) {
        if (!j.runtime.framework->rules.grad_reduce_bf16)
            throw config_error("runtime.grad_reduce_bf16=true needs runtime.framework=\"" + frameworks_with(&framework_rules::grad_reduce_bf16) + "\" (got \"" +
                               std::string(to_string(j.runtime.framework)) + "\")");
        // fp8 and NVFP4 cast bf16 parameters for their GEMMs (Megatron keeps bf16 parameters under --fp4-format too)
        const auto pr = j.training.precision;
        if (pr != precision::bf16_mixed && pr != precision::fp8_mixed && pr != precision::fp4_mixed)
            throw config_error("runtime.grad_reduce_bf16=true needs bf16 parameters (training.precision "
                               "\"bf16-mixed\", \"fp8-mixed\" or \"fp4-mixed\")");
    }
    if (j.training.precision == precision::fp4_mixed && !j.runtime.framework->rules.nvfp4)
        throw config_error("training.precision=\"fp4-mixed\" (Transformer Engine's NVFP4 recipe) needs runtime.framework=\"" +
                           frameworks_with(&framework_rules::nvfp4) + "\" (got \"" + std::string(to_string(j.runtime.framework)) + "\")");
}

/// validate(job)'s rules between the model, the training, the layout and the framework (after its bounds, the
/// model's and the training's own checks).
inline void validate_layout_rules(const job_spec& j) {
    validate_degrees(j.model, j.parallel);
    validate_pipeline_split(j.model, j.parallel);
    validate_schedule_and_batch(j.training, j.parallel);
    validate_experts_and_sp(j.model, j.training, j.parallel);
    validate_runtime(j);
    if (auto why = framework_rejects(j.runtime.framework, j.parallel, j.training); !why.empty())
        throw config_error(why);
}
}  // namespace detail

/// validate's checks of a job's name, model and training alone (validate_bounds, validate(model), validate(training)):
/// what a plan search checks once of the job it starts from, so that validate_layout answers for its layouts.
inline void validate_inputs(const job_spec& j) {
    validate_bounds(j);
    validate(j.model);
    validate(j.training);
}

/// Checks every rule between model, training, parallel layout and framework that the framework itself would
/// reject (Megatron-LM arguments.py / parallel_state.py, DeepSpeed, PyTorch FSDP). Throws config_error naming
/// the fields and their values.
inline void validate(const job_spec& j) {
    // validate_inputs' checks written out: through the call, GCC inlines the planner's validate_layout paths less
    // (+0.7% of the 70B search's instructions)
    validate_bounds(j);
    validate(j.model);
    validate(j.training);
    detail::validate_layout_rules(j);
}

/// validate(j) for a job whose name, model and training but for the micro-batch are those of a job that passed
/// validate (or of one that passed validate_inputs: the planner's inputs):
/// a plan search, whose jobs differ only in the layout fields, the framework, the precision, the attention kernel and
/// the micro-batch, checks only what those read. Throws exactly where validate(j) would, with the same message.
inline void validate_layout(const job_spec& j) {
    detail::quiet_bounds quiet;
    detail::visit_bounds<true>(j, quiet);
    if (!quiet.ok || j.training.micro_batch <= 0) return validate(j);  // names the first failure, as validate does
    detail::validate_layout_rules(j);
}

}  // namespace frenzy
