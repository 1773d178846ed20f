#pragma once
// Training methods that change what one GPU holds, applied on top of the default policies of the estimator:
// fine-tuning (LoRA, QLoRA, frozen layers), bitsandbytes 8-bit AdamW, CPU offload of optimizer states /
// parameters / activations, and fp8 training (Transformer Engine or torchao). docs/training-methods.md.
// Every term is closed-form in the layer count (no per-layer loops; the virtual-chunk loop is over vpp).
#include <algorithm>
#include <array>
#include <cstdint>

#include "frenzy/core/units.hpp"
#include "frenzy/memory/activations.hpp"
#include "frenzy/memory/framework_profile.hpp"
#include "frenzy/memory/layout.hpp"
#include "frenzy/memory/model_states.hpp"
#include "frenzy/memory/overheads.hpp"
#include "frenzy/memory/preference.hpp"
#include "frenzy/train/fp8_recipe.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// bitsandbytes 8-bit Adam: two uint8 moments plus one fp32 absmax per 256-element block for each
/// (bitsandbytes-foundation/bitsandbytes bitsandbytes/optim/optimizer.py@95f9af3, Optimizer2State.init_state:
/// state1/state2 uint8, absmax1/absmax2 float32 of ceil(n / 256) blocks). Tensors under min_8bit_size = 4096
/// elements (norms, biases) keep fp32 states; they are a negligible share and are counted as 8-bit here.
constexpr double adam8bit_state_bytes() { return 2.0 * (1.0 + 4.0 / 256.0); }

/// QLoRA's NF4 storage per weight element: 4 bits, a blocksize-64 absmax, and with double quantisation
/// (compress_statistics=True, the QLoRA recipe) that absmax stored in 8 bits with an fp32 absmax per 256 of them
/// (bitsandbytes functional.py@95f9af3 quantize_4bit: blocksize 64, quantize_blockwise(absmax, blocksize=256);
/// Dettmers et al. 2023 sec. 3: 8/64 + 32/(64 x 256) = 0.127 bits of constants per parameter).
constexpr double nf4_bytes_per_param(bool double_quant = true) {
    return 0.5 + (double_quant ? 1.0 / 64.0 + 4.0 / (64.0 * 256.0) : 4.0 / 64.0);
}

/// How fp8 training keeps its state (fp8_style in train/framework.hpp: Transformer Engine caches an fp8 copy of
/// every GEMM weight and its transpose and saves the fp8 input casts, TransformerEngine
/// transformer_engine/pytorch/module/linear.py@3ec8787; torchao float8 saves the high-precision tensors).
inline fp8_style fp8_style_of(framework f) { return f->memory.fp8; }

/// One linear layer of a transformer layer, before tensor parallelism.
struct linear_shape {
    double in = 0, out = 0;
    bool row_parallel = false;  ///< input dimension split over tp (output projection, down projection)
    unsigned target = 0;        ///< the lora_target bit that selects it
    double copies = 1;          ///< routed experts (local to the GPU) or shared experts
    bool expert = false;        ///< token count is top_k x tokens (routed experts)
};

namespace detail {

/// At most 5 attention linears (MLA with a q low-rank pair), then a gated MLP of routed experts (3) and one of
/// shared experts (3): DeepSeek-V3's layer has all 11.
inline constexpr std::size_t max_layer_linears = 5 + 3 + 3;

/// The linear layers of one layer (dense or MoE); experts counted per GPU (experts / ep), shared experts too.
inline std::array<linear_shape, max_layer_linears> layer_linears(const job_spec& j, bool moe, int& n) {
    const auto& m = j.model;
    const double h = static_cast<double>(m.hidden);
    std::array<linear_shape, max_layer_linears> out{};
    n = 0;
    if (m.is_mla()) {  // DeepSeek-V2 MLA: q (via the q low-rank pair), kv_a_proj_with_mqa, kv_b_proj, o_proj
        const auto& a = m.mla;
        const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
        const double heads = static_cast<double>(m.heads);
        if (a.q_lora_rank > 0) {
            out[n++] = {h, static_cast<double>(a.q_lora_rank), false, lora_q, 1, false};
            out[n++] = {static_cast<double>(a.q_lora_rank), heads * qk, false, lora_q, 1, false};
        } else {
            out[n++] = {h, heads * qk, false, lora_q, 1, false};
        }
        out[n++] = {h, static_cast<double>(a.kv_lora_rank + a.qk_rope_head_dim), false, lora_k, 1, false};
        out[n++] = {static_cast<double>(a.kv_lora_rank),
                    heads * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim), false, lora_v, 1, false};
        out[n++] = {heads * static_cast<double>(a.v_head_dim), h, true, lora_o, 1, false};
    } else {
        const double q = static_cast<double>(m.heads * m.hdim());
        const double kv = static_cast<double>(m.kv() * m.hdim());
        out[n++] = {h, q, false, lora_q, 1, false};
        out[n++] = {h, kv, false, lora_k, 1, false};
        out[n++] = {h, kv, false, lora_v, 1, false};
        out[n++] = {q, h, true, lora_o, 1, false};
    }
    auto mlp = [&](double ffn, double copies, bool expert) {
        if (is_gated(m.activation)) out[n++] = {h, ffn, false, lora_gate, copies, expert};
        out[n++] = {h, ffn, false, lora_up, copies, expert};
        out[n++] = {ffn, h, true, lora_down, copies, expert};
    };
    if (!moe) {
        mlp(static_cast<double>(m.ffn_hidden), 1, false);
    } else {
        const double local = static_cast<double>(m.moe.experts / j.parallel.ep);
        mlp(static_cast<double>(m.expert_ffn()), local, true);
        if (m.moe.shared_experts > 0)
            mlp(static_cast<double>(m.expert_ffn() * m.moe.shared_experts), 1, false);
    }
    return out;
}

/// Per-GPU weight elements of the linears of one layer (tensor-parallel split).
inline double linear_weights(const job_spec& j, bool moe) {
    int n = 0;
    const auto ls = layer_linears(j, moe, n);
    double w = 0;
    for (int i = 0; i < n; ++i) w += ls[static_cast<std::size_t>(i)].in * ls[static_cast<std::size_t>(i)].out *
                                     ls[static_cast<std::size_t>(i)].copies;
    return w / static_cast<double>(j.parallel.tp);
}

/// Output rows of the linears of one layer on one GPU (bitsandbytes int8 keeps an fp32 scale per row).
inline double linear_rows(const job_spec& j, bool moe) {
    int n = 0;
    const auto ls = layer_linears(j, moe, n);
    double rows = 0;
    for (int i = 0; i < n; ++i) {
        const auto& l = ls[static_cast<std::size_t>(i)];
        rows += l.copies * (l.row_parallel ? l.out : l.out / static_cast<double>(j.parallel.tp));
    }
    return rows;
}

/// Largest single linear weight on a GPU (elements): the working set of a dequantised or fp8-cast weight.
inline double largest_linear(const job_spec& j, bool moe) {
    int n = 0;
    const auto ls = layer_linears(j, moe, n);
    double w = 0;
    for (int i = 0; i < n; ++i) w = std::max(w, ls[static_cast<std::size_t>(i)].in * ls[static_cast<std::size_t>(i)].out);
    return w / static_cast<double>(j.parallel.tp);
}

/// LoRA adapter parameters of one layer on one GPU: A (in x r) and B (r x out) per targeted linear. Under tensor
/// parallelism a column-parallel linear shards B's output and replicates A, a row-parallel one shards A's input
/// and replicates B (Megatron-Bridge/NeMo LoRA ParallelLinearAdapter; PEFT has no tp).
inline double lora_params(const job_spec& j, bool moe) {
    const auto& ft = j.training.finetune;
    const double r = static_cast<double>(ft.rank);
    const double t = static_cast<double>(j.parallel.tp);
    int n = 0;
    const auto ls = layer_linears(j, moe, n);
    double p = 0;
    for (int i = 0; i < n; ++i) {
        const auto& l = ls[static_cast<std::size_t>(i)];
        if (!(ft.targets & l.target)) continue;
        p += l.copies * r * (l.row_parallel ? l.in / t + l.out : l.in + l.out / t);
    }
    return p;
}

/// Layers of stage `l` among the model's first `count` layers, split into dense and MoE layers.
struct layer_split {
    double dense = 0, moe = 0;
};
/// Without virtual stages a stage's layers are the contiguous block after the earlier stages' layers (whatever the
/// split: read from stage_layouts); with vpp > 1, chunk c of stage s is block s + c x pp of an even split.
inline layer_split leading_layers_on_stage(const job_spec& j, const stage_layout& l, const framework_profile& f,
                                           std::int64_t count) {
    const auto& m = j.model;
    const auto& p = j.parallel;
    std::int64_t chunk = m.layers / (p.pp * p.vpp);
    std::int64_t first = 0;  // vpp == 1: first layer of this stage
    if (p.vpp == 1) {
        for (const auto& o : stage_layouts(j, f))
            if (o.stage < l.stage) first += o.layers;
        chunk = l.layers;
    }
    layer_split r;
    auto overlap = [](std::int64_t a0, std::int64_t a1, std::int64_t b0, std::int64_t b1) {
        return static_cast<double>(std::max<std::int64_t>(0, std::min(a1, b1) - std::max(a0, b0)));
    };
    for (std::int64_t v = 0; v < p.vpp; ++v) {  // virtual chunks of this stage: [begin, begin + chunk)
        const std::int64_t begin = p.vpp == 1 ? first : (l.stage + v * p.pp) * chunk;
        const double all = overlap(begin, begin + chunk, 0, count);
        // MoE layers among them: the spec's interleave step (is_moe_layer) in closed form.
        const double moe = m.is_moe() ? static_cast<double>(m.moe_layers_below(std::min(begin + chunk, count)) -
                                                            m.moe_layers_below(std::min(begin, count)))
                                      : 0.0;
        r.moe += moe;
        r.dense += all - moe;
    }
    return r;
}

/// Change of one layer's saved bytes (one micro-batch, no recompute) under LoRA/QLoRA: a frozen linear's input is
/// saved only for its weight gradient (torch mm backward; bitsandbytes MatMul4Bit saves only the 4-bit weight,
/// autograd/_functions.py@95f9af3), so inputs that feed no adapter go; each adapter saves its rank-r A output.
/// Adapters that cast their input to their own dtype (framework_profile::lora_adapter_cast, PEFT) save their own
/// 16-bit copy each, so no frozen linear's input stays.
inline double lora_activation_delta(const job_spec& j, const framework_profile& f, bool moe) {
    const auto& m = j.model;
    const auto& p = j.parallel;
    const auto tg = j.training.finetune.targets;
    const double e = activation_element_bytes(j.training.precision);
    const double sb = local_tokens(j);
    const double h = static_cast<double>(m.hidden);
    const double t = static_cast<double>(p.tp);
    const double rep = p.sequence_parallel ? 1.0 / t : 1.0;
    const auto& ft = j.training.finetune;
    const double r = static_cast<double>(ft.rank);
    double d = 0;
    const double tokens = moe ? sb * static_cast<double>(m.moe.top_k) * rep : sb;  // routed token copies on a GPU
    const double ffn = static_cast<double>(moe ? m.expert_ffn() : m.ffn_hidden);
    // PEFT casts an adapter's input only where its dtype differs (_cast_input_dtype): fp32 adapters under mixed
    // precision; adapters in the compute dtype (pure bf16 or fp32 training) share the frozen linear's input.
    const auto prec = j.training.precision;
    const bool cast = f.lora_adapter_cast && (prec == precision::bf16_mixed || prec == precision::fp16_mixed);
    const unsigned shared = cast ? 0u : tg;  // adapted linears whose input stays saved, shared with their adapters
    // Old bitsandbytes (< 0.43.2) saved every 4-bit linear's input anyway, and MatMul8bitLt keeps its input A for any
    // input gradient (autograd/_functions.py@95f9af3: ctx.tensors = (CAt, subA, A)): nothing is spared then.
    if (!(ft.method == finetune_method::qlora && ft.qlora_saves_inputs) && !ft.load_in_8bit) {
        if (!(shared & (lora_q | lora_k | lora_v))) d -= e * sb * h * rep;            // QKV input (norm output)
        if (!(shared & lora_o)) d -= e * sb * static_cast<double>(m.q_width()) / t;   // output-projection input
        const unsigned fc1 = is_gated(m.activation) ? (lora_gate | lora_up) : lora_up;
        if (!(shared & fc1)) d -= e * sb * h * rep;                                   // MLP input (norm output)
        if (!(shared & lora_down)) {                                                  // down-projection input
            d -= e * tokens * ffn / t;
            if (moe && m.moe.shared_experts > 0) d -= e * sb * rep * ffn * static_cast<double>(m.moe.shared_experts) / t;
        }
    }
    int n = 0;
    const auto ls = layer_linears(j, moe, n);
    for (int i = 0; i < n; ++i) {
        const auto& l = ls[static_cast<std::size_t>(i)];
        if (!(tg & l.target)) continue;
        // Routed experts together see `tokens` token copies (not per expert).
        const double tok = l.expert ? tokens : sb;
        d += e * tok * r;  // lora_A output, input of lora_B
        // Each adapter has its own lora_dropout on the linear's input: a 1-byte mask and the dropped copy; a casting
        // adapter (PEFT) saves the 16-bit copy autocast makes for lora_A with or without dropout.
        const double in = tok * (l.row_parallel ? l.in / t : l.in * rep);
        if (cast) d += (e + (ft.dropout > 0 ? 1.0 : 0.0)) * in;
        else if (ft.dropout > 0) d += (1.0 + e) * in;
    }
    return d;
}

/// lora_activation_delta under the job's own profile.
inline double lora_activation_delta(const job_spec& j, bool moe) { return lora_activation_delta(j, profile_of(j), moe); }

/// Saved-input bytes per element that Transformer Engine's fp8 or NVFP4 GEMMs spare (the low-precision copy with its
/// scales, train/fp8_recipe.hpp scaled_saved_input_bytes, instead of 16-bit) in one layer.
inline double fp8_activation_delta(const job_spec& j, bool moe) {
    const auto& m = j.model;
    const auto& p = j.parallel;
    const double e = activation_element_bytes(j.training.precision);
    const double sb = local_tokens(j);
    const double t = static_cast<double>(p.tp);
    const double rep = p.sequence_parallel ? 1.0 / t : 1.0;
    const double h = static_cast<double>(m.hidden);
    const double tokens = moe ? sb * static_cast<double>(m.moe.top_k) * rep : sb;
    const double ffn = static_cast<double>(moe ? m.expert_ffn() : m.ffn_hidden);
    // GEMM inputs: QKV input, output-projection input, MLP input, down-projection input.
    double elems = sb * h * rep + sb * static_cast<double>(m.q_width()) / t + sb * h * rep + tokens * ffn / t;
    return -(e - scaled_saved_input_bytes(j)) * elems;
}

/// Transformer Engine's fp8 state of stage `l` on one GPU: the cached fp8 weight + fp8 transpose of every GEMM
/// weight, 2 B per element (with their block scales under block recipes: train/fp8_recipe.hpp
/// fp8_weight_cache_bytes, counted as on Hopper since a memory estimate names no GPU; Blackwell keeps no transpose of
/// per-tensor fp8), kept across micro-batches; under full sharding only the gathered layers have them
/// (method_temporaries). With --fp8-param-gather the GEMM weights are created as fp8 tensors (fp8_model_init): their
/// fp8 data and transpose replace the 16-bit copy (2 B), so nothing is added to the 16-bit weights; the scaling
/// state stays: per GEMM for 3 forward and 2 backward tensors, fp32 scale, scale_inv and, under delayed scaling, an
/// amax history of 1024 (TE DelayedScaling default); the other recipes keep one amax. NVFP4 (fp4-mixed) keeps its
/// own copy of both orientations (train/fp8_recipe.hpp scaled_weight_cache_bytes) and one amax per orientation.
/// Added to `weights`, the cache first, then the scaling state.
inline void add_fp8_weight_state(const job_spec& j, const stage_layout& l, bytes& weights) {
    if (!scaled_gemm_precision(j.training.precision) || fp8_style_of(j.runtime.framework) != fp8_style::transformer_engine ||
        j.parallel.sharding == sharding::full)
        return;
    const double cache = j.runtime.fp8_param_gather ? 0.0 : scaled_weight_cache_bytes(j);
    const double dense = static_cast<double>(l.layers - l.moe_layers), moe = static_cast<double>(l.moe_layers);
    weights += bytes{cache * (dense * linear_weights(j, false) + (moe > 0 ? moe * linear_weights(j, true) : 0.0))};
    const double gemms = static_cast<double>(l.layers) * 4.0;
    weights += bytes{gemms * 5.0 * ((scaled_amax_history(j) ? 1024.0 : 1.0) + 2.0) * 4.0};
}

}  // namespace detail

/// True when a training method of this header changes the default policies' answer.
/// Whether the job's fp32 weights run under torch.autocast unsharded, so that each layer keeping its activations
/// keeps the 16-bit copies of its weights (framework_profile::autocast_weight_copies). Adapter methods keep their
/// frozen weights in 16 bits already (method_model_states): nothing to cast but the small adapters.
inline bool autocast_weight_copies(const job_spec& j, const framework_profile& f) {
    const auto p = j.training.precision;
    return f.autocast_weight_copies && f.master == master_weights::in_params && j.parallel.sharding == sharding::none &&
           (p == precision::bf16_mixed || p == precision::fp16_mixed) && !j.training.finetune.adapters();
}

inline bool uses_training_methods(const job_spec& j) {
    return j.training.finetune.partial() || j.training.finetune.dpo() || j.runtime.offload.any() || j.runtime.paged_optimizer ||
           j.training.optimizer == optimizer_kind::adamw_8bit || scaled_gemm_precision(j.training.precision);
}

/// Model states of stage `l` under the job's training methods (the default policy's answer `ms` otherwise).
/// Trainable parameters keep the job's bytes per parameter (model_states.hpp); frozen ones are stored once in the
/// compute precision (QLoRA: linears in NF4), with no gradient or optimizer state. Sharding applies to both at the
/// stage's mean data-parallel factor (dense and expert parameters weighted by their counts).
/// Per-GPU parameters of stage `l` by what is trained: trainable (adapters, or the unfrozen layers), frozen in
/// 16 bits, frozen in NF4 (QLoRA linears).
struct parameter_split {
    double trainable = 0, frozen = 0, frozen_nf4 = 0;
    double frozen_int8 = 0, int8_rows = 0;  ///< LLM.int8 linears (load_in_8bit) and their output rows
    double saved_copies = 0;  ///< of `trainable`: modules_to_save's whole copies (embedding, LM head)
};
inline parameter_split trainable_split(const job_spec& j, const stage_layout& l, const framework_profile& f) {
    const auto& ft = j.training.finetune;
    const auto& p = j.parallel;
    parameter_split r;
    const double all = l.params();
    r.trainable = all;
    if (ft.adapters()) {
        const double dense = static_cast<double>(l.layers - l.moe_layers), moe = static_cast<double>(l.moe_layers);
        r.trainable = dense * detail::lora_params(j, false) + (moe > 0 ? moe * detail::lora_params(j, true) : 0.0);
        r.frozen = all;
        if (ft.method == finetune_method::qlora) {
            // bitsandbytes replaces every nn.Linear of the layers; embeddings, norms and lm_head stay 16-bit.
            r.frozen_nf4 = dense * detail::linear_weights(j, false) + (moe > 0 ? moe * detail::linear_weights(j, true) : 0.0);
            r.frozen -= r.frozen_nf4;
        }
        // modules_to_save: a trainable deep copy of each module beside its frozen original (peft@5d602fd
        // src/peft/utils/other.py ModulesToSaveWrapper.update: modules_to_save[adapter] = deepcopy(original_module)),
        // V x h each, on the stage holding the embedding / the LM head.
        const double vh = static_cast<double>(framework_vocab(j, f) * j.model.hidden) / static_cast<double>(p.tp);
        r.saved_copies = ((ft.modules_to_save & save_embed_tokens) && l.first ? vh : 0.0) +
                         ((ft.modules_to_save & save_lm_head) && l.last ? vh : 0.0);
        r.trainable += r.saved_copies;
        if (ft.load_in_8bit) {  // bitsandbytes Linear8bitLt replaces the same linears (the layers' nn.Linear)
            r.frozen_int8 = dense * detail::linear_weights(j, false) + (moe > 0 ? moe * detail::linear_weights(j, true) : 0.0);
            r.int8_rows = dense * detail::linear_rows(j, false) + (moe > 0 ? moe * detail::linear_rows(j, true) : 0.0);
            r.frozen -= r.frozen_int8;
        }
    } else if (ft.frozen_layers > 0) {
        const auto fl = detail::leading_layers_on_stage(j, l, f, ft.frozen_layers);
        const auto c = count_parameters(j.model, framework_vocab(j, f), position_table_length(j));
        const double t = static_cast<double>(p.tp);
        const double ep_local = j.model.is_moe() ? static_cast<double>(j.model.moe.experts / p.ep) : 0.0;
        const double dense_layer = c.attention / t + c.dense_mlp / t + c.layer_norms;
        const double moe_layer = c.attention / t + c.layer_norms + c.router + c.shared_expert / t + ep_local * c.expert / t;
        r.frozen = fl.dense * dense_layer + fl.moe * moe_layer;
        if (l.first) r.frozen += c.word_embedding / t + c.position_embedding;  // the embedding is frozen with them
        r.frozen = std::min(r.frozen, all);
        r.trainable = all - r.frozen;
    }
    return r;
}

/// bytes_per_param with the 8-bit optimizer's states, and the paged optimizer's states moved to unified memory:
/// bitsandbytes allocates state1/state2 through get_state_buffer (paged: cudaMallocManaged) and the 8-bit
/// optimizers' absmax buffers with torch.zeros (bitsandbytes@95f9af3 bitsandbytes/optim/optimizer.py
/// Optimizer2State.init_state), so 8-bit paging moves the two uint8 moments and 32-bit paging both fp32 moments
/// (bitsandbytes keeps 32-bit states in fp32 whatever the parameters' dtype). Tensors under 1e5 elements stay
/// unpaged (norms, biases: counted as paged here, a negligible share).
inline state_bytes_per_param method_bytes_per_param(const job_spec& j, const framework_profile& f) {
    auto b = bytes_per_param(j, f);
    const bool pure = j.training.precision == precision::fp32 || j.training.precision == precision::bf16;
    const double master = !pure && f.master == master_weights::separate ? 4.0 : 0.0;
    const bool eight_bit = j.training.optimizer == optimizer_kind::adamw_8bit;
    if (eight_bit) b.optimizer = master + adam8bit_state_bytes();
    if (j.runtime.paged_optimizer) {
        b.paged = eight_bit ? 2.0 : 8.0;
        b.optimizer = master + (eight_bit ? adam8bit_state_bytes() - b.paged : 0.0);
    }
    return b;
}

/// Model states of stage `l` under the job's training methods (the default policy's answer `ms` otherwise).
/// Trainable parameters keep the job's bytes per parameter (model_states.hpp); frozen ones are stored once in the
/// compute precision (QLoRA: linears in NF4), with no gradient or optimizer state. Sharding applies to both at the
/// stage's mean data-parallel factor (dense and expert parameters weighted by their counts).
inline model_state_bytes method_model_states(const job_spec& j, const stage_layout& l, const framework_profile& f,
                                             const model_state_bytes& ms) {
    if (!uses_training_methods(j)) return ms;
    const auto& p = j.parallel;
    const auto b = method_bytes_per_param(j, f);
    const double all = l.params();
    const auto split = trainable_split(j, l, f);
    const double trainable = split.trainable, frozen = split.frozen, frozen_nf4 = split.frozen_nf4;
    // The stage's mean sharding factor, read off the default policy's optimizer states (sharded_model_states owns
    // the data-parallel groups of dense and expert parameters): ms.optimizer = factor x bytes x parameters.
    const auto s = p.sharding;
    const double plain_opt = bytes_per_param(j, f).optimizer * all;
    const double shard = (s != sharding::none && plain_opt > 0) ? ms.optimizer.value / plain_opt : 1.0;
    auto sh = [&](bool on) { return on ? shard : 1.0; };
    const double frozen_bytes = param_bytes(j.training.precision);

    model_state_bytes r;
    r.weights = bytes{(frozen * frozen_bytes + frozen_nf4 * nf4_bytes_per_param(j.training.finetune.double_quant) + trainable * b.weights) *
                      sh(s == sharding::full)};
    // LLM.int8: the int8 weight (CB) and an fp32 scale per output row (SCB) (bitsandbytes@95f9af3 nn/modules.py
    // Int8Params._quantize: int8_vectorwise_quant returns int8 CB and float32 row stats).
    r.weights += bytes{split.frozen_int8 + 4.0 * split.int8_rows};
    if (s == sharding::gradients && b.gathered_copy > 0) r.weights += bytes{b.gathered_copy * trainable};
    r.gradients = bytes{trainable * b.gradients * sh(s == sharding::gradients || s == sharding::full)};
    r.optimizer = bytes{trainable * b.optimizer * sh(s != sharding::none)};
    r.paged = bytes{trainable * b.paged * sh(s != sharding::none)};

    detail::add_fp8_weight_state(j, l, r.weights);
    // DPO's reference model of a full or partial fine-tune: a second copy of the weights, frozen, loaded as the policy
    // (trl@f2cd5771 dpo_trainer.py create_model_from_path(ref_model_path, **model_init_kwargs)) at the compute
    // precision, and sharded as the policy under full sharding (prepare_deepspeed / prepare_fsdp).
    if (j.training.finetune.reference_copy()) r.weights += bytes{all * frozen_bytes * sh(s == sharding::full)};

    // Offload (DeepSpeed ZeRO-Offload stage_1_and_2.py cpu_offload: fp32 master, Adam states and the reduced
    // gradient partitions live in pinned host memory; FSDP CPUOffload: parameters and gradients on the host;
    // Megatron --optimizer-cpu-offload: states on the host, main_grad buffers stay on the GPU).
    const auto& o = j.runtime.offload;
    // What leaves the GPU stays in the host's pinned memory (model_state_bytes::host).
    if (o.optimizer) {
        r.host += r.optimizer;
        r.optimizer = bytes{};
        if (!j.runtime.framework->memory.offload_keeps_gradients) {
            // on the host the gradient partitions are fp32: what the CPU Adam reads (DeepSpeed stage_1_and_2.py /
            // stage3.py estimate_zero*_model_states_mem_needs count "4_grads_32bit"); FSDP's are its fp32 params'
            r.host += bytes{b.gradients > 0 ? r.gradients.value * 4.0 / b.gradients : 0.0};
            r.gradients = bytes{};
        }
    }
    if (o.parameters) {  // ZeRO-3 / FSDP: only gathered layers (temporaries) are on the GPU
        r.host += r.weights;
        r.weights = bytes{};
    }
    return r;
}

/// Saved bytes of one layer (one micro-batch, no recompute) that architecture features add or spare on top of
/// activations.hpp's GPT-style layer: a parallel attention block reads one norm output for attention and MLP
/// (Falcon: no second norm input and no separate MLP input); MLA saves its normed latents (the q_b and kv_b GEMM
/// inputs and the latent norms' inputs, replicated over tp: the down projections are not tensor-parallel).
inline double architecture_activation_delta(const job_spec& j) {
    const auto& m = j.model;
    const auto& p = j.parallel;
    const double e = detail::activation_element_bytes(j.training.precision);
    const double sb = local_tokens(j);
    const double rep = p.sequence_parallel ? 1.0 / static_cast<double>(p.tp) : 1.0;
    double d = 0;
    if (m.parallel_attention) d -= 2.0 * e * sb * static_cast<double>(m.hidden) * rep;
    if (m.is_mla()) d += 2.0 * e * sb * static_cast<double>(m.mla.q_lora_rank + m.mla.kv_lora_rank);
    return d;
}

/// Whether the training methods and architecture extras change any stage's answer for `j`: false when
/// method_model_states, method_activations and method_temporaries return the policies' answers (0 for the
/// temporaries) on every stage, what an estimate of many stages checks once.
inline bool adjusts_memory(const job_spec& j, const framework_profile& f) {
    const bool softcap = j.model.final_logit_softcap > 0 && j.runtime.framework->memory.eager_logit_softcap;
    return uses_training_methods(j) || architecture_activation_delta(j) != 0 || softcap || autocast_weight_copies(j, f);
}

/// Activations of stage `l` under the job's methods and architecture (the default policy's answer `a` otherwise):
/// LoRA inputs, frozen leading layers (no autograd graph below the first trainable layer: nothing saved), fp8
/// saved inputs, activation offload (the layer being computed and the one being copied stay: 2 layers of the
/// current micro-batch, torchtune training/_activation_offloading.py OffloadActivations with use_streams; the
/// output layer and loss stay on the GPU as torchtune's NoOpManager around the output projection keeps them).
inline activation_bytes method_activations(const job_spec& j, const stage_layout& l, const framework_profile& f,
                                           const activation_bytes& a) {
    const auto& m = j.model;
    const double arch = architecture_activation_delta(j);
    const bool softcap = m.final_logit_softcap > 0 && l.last && j.runtime.framework->memory.eager_logit_softcap;
    const bool autocast = autocast_weight_copies(j, f);
    if (!uses_training_methods(j) && arch == 0 && !softcap && !autocast) return a;
    const auto& ft = j.training.finetune;
    const double dense_n = static_cast<double>(l.layers - l.moe_layers), moe_n = static_cast<double>(l.moe_layers);
    const auto dense = layer_activations(j, f, false);
    const auto moe = moe_n > 0 ? layer_activations(j, f, true) : dense;
    double per_dense = saved_per_layer(j, l, dense), per_moe = saved_per_layer(j, l, moe);
    const double layers_before = dense_n * per_dense + moe_n * per_moe;
    const double kept = full_recompute_kept_share(j, l);  // full recompute: the layers that keep everything
    auto adjust = [&](double& per, const layer_activation_bytes& x, double delta) {
        if (j.parallel.recompute == recompute::full) per = std::max(0.0, per + kept * delta);  // checkpointed: input only
        else per = std::max(x.full, per + delta);
    };
    adjust(per_dense, dense, arch + (autocast ? 2.0 * detail::linear_weights(j, false) : 0.0));
    if (moe_n > 0) adjust(per_moe, moe, arch + (autocast ? 2.0 * detail::linear_weights(j, true) : 0.0));
    if (ft.adapters()) {
        adjust(per_dense, dense, detail::lora_activation_delta(j, f, false));
        if (moe_n > 0) adjust(per_moe, moe, detail::lora_activation_delta(j, f, true));
    }
    if (scaled_gemm_precision(j.training.precision) && fp8_style_of(j.runtime.framework) == fp8_style::transformer_engine) {
        adjust(per_dense, dense, detail::fp8_activation_delta(j, false));
        if (moe_n > 0) adjust(per_moe, moe, detail::fp8_activation_delta(j, true));
    }
    double live_dense = dense_n, live_moe = moe_n;
    if (!ft.adapters() && ft.frozen_layers > 0) {
        const auto fl = detail::leading_layers_on_stage(j, l, f, ft.frozen_layers);
        live_dense -= fl.dense;
        live_moe -= fl.moe;
    }
    const double in_flight = a.in_flight > 0 ? a.in_flight : 1.0;
    double edges = std::max(0.0, a.stored.value / in_flight - layers_before);
    // Eager soft-capping (transformers Gemma2ForCausalLM: logits / cap, tanh, * cap) saves tanh's 16-bit output.
    if (softcap)
        edges += 2.0 * local_tokens(j) * static_cast<double>(framework_vocab(j, f)) / static_cast<double>(j.parallel.tp);
    // The LM head's 16-bit weight copy under autocast (decoder-layer checkpointing leaves the head alone).
    if (autocast && l.last) edges += 2.0 * static_cast<double>(framework_vocab(j, f) * m.hidden) / static_cast<double>(j.parallel.tp);
    const double layers_after = live_dense * per_dense + live_moe * per_moe;
    activation_bytes r = a;
    // DPO's reference forward (no_grad, after the policy's) holds its 16-bit logits while the policy's activations
    // are stored (dpo_trainer.py _compute_loss: ref_outputs.logits -> selective_log_softmax); `j`'s micro-batch is
    // already the chosen + rejected pair (dpo_pair_job). With Liger the reference runs through the fused linear DPO
    // loss (dpo_trainer.py _compute_loss_liger: hidden states, no logits).
    if (ft.dpo() && !ft.precompute_ref_log_probs && l.last && f.loss != loss_style::liger_fused_linear)
        r.transient = bytes{std::max(r.transient.value, detail::activation_element_bytes(j.training.precision) * local_tokens(j) *
                                                            static_cast<double>(framework_vocab(j, f)) / static_cast<double>(j.parallel.tp))};
    if (j.runtime.offload.activations) {
        const double kept = std::min(2.0, live_dense + live_moe);
        const double per = std::max(live_dense > 0 ? per_dense : 0.0, live_moe > 0 ? per_moe : 0.0);
        r.stored = bytes{edges * in_flight + kept * per};
        // each layer's saved tensors get a pinned host copy (torchtune OffloadActivations: empty_like(pin_memory=True))
        r.host = a.host + bytes{layers_after * in_flight};
    } else {
        r.stored = bytes{(edges + layers_after) * in_flight};
    }
    return r;
}

namespace detail {
/// Full sharding of an adapter fine-tune gathers the frozen base in its stored form and reduce-scatters only the
/// adapters' gradients: FSDP2 all-gathers each sharded parameter as stored (torch/distributed/fsdp/_fully_shard/
/// _fsdp_param.py FSDPParam: the all-gather input is the local shard's data), so QLoRA's packed 4-bit weights
/// travel and are gathered as 4-bit (bitsandbytes Params4bit with bnb_4bit_quant_storage; Answer.AI fsdp_qlora,
/// torchtune's QLoRA under FSDP2) and LoRA's frozen base at the compute precision; frozen parameters have no
/// gradient, so the unit's unsharded gradients are its adapters'. Returns the change against the default policy's
/// units (framework_overheads), which gathers every parameter with the training bytes and a gradient for each.
inline double adapter_gather_delta(const job_spec& j, const stage_layout& l, const framework_profile& f) {
    if (l.layers <= 0) return 0;
    const auto b = bytes_per_param(j, f);
    const auto [layer, edge] = framework_overheads::gathered_units_of(j, l, f, b);
    const auto split = trainable_split(j, l, f);
    const double n = static_cast<double>(l.layers);
    const double adapters = (split.trainable - split.saved_copies) / n, nf4 = split.frozen_nf4 / n;
    const double stored = param_bytes(j.training.precision);
    const double adapter_bytes = b.gathered_copy > 0 ? b.gathered_copy : b.weights;
    const double nf4_bytes = nf4_bytes_per_param(j.training.finetune.double_quant);
    const double params = layer.params + adapters;
    const double weights = (layer.params - nf4) * stored + nf4 * nf4_bytes + adapters * adapter_bytes;
    const gathered_unit method_layer{params, weights / params, adapters * b.gradients / params};
    const gathered_unit method_edge{edge.params, stored, 0.0};
    return gathered_unit_bytes(method_layer, method_edge, f.gathered_layers) -
           gathered_unit_bytes(layer, edge, f.gathered_layers);
}
}  // namespace detail

/// Temporaries added (or spared) by the methods: QLoRA dequantises one 4-bit weight to 16 bits per matmul
/// (bitsandbytes MatMul4Bit: dequantize_4bit(B) in forward and backward); fp8 casts one weight (+ transpose) at a
/// time under torchao, or keeps the gathered layers' fp8 caches under full sharding with Transformer Engine;
/// DeepSpeed's gradient bucket (framework_overheads) holds trainable gradients only, so it shrinks with LoRA;
/// full sharding of adapters gathers the stored base and the adapters' gradients (detail::adapter_gather_delta).
inline double method_temporaries(const job_spec& j, const stage_layout& l, const framework_profile& f) {
    if (!uses_training_methods(j)) return 0;
    const bool moe = l.moe_layers > 0;
    double t = 0;
    if (j.training.finetune.method == finetune_method::qlora) t += 2.0 * detail::largest_linear(j, moe);
    // MatMul8bitLt.backward dequantises the weight for the input's gradient (CB.to(dtype_A, copy=True)).
    if (j.training.finetune.load_in_8bit) t += 2.0 * detail::largest_linear(j, moe);
    if (j.parallel.sharding == sharding::full && j.training.finetune.adapters()) t += detail::adapter_gather_delta(j, l, f);
    if (scaled_gemm_precision(j.training.precision)) {
        if (fp8_style_of(j.runtime.framework) == fp8_style::torchao) t += 2.0 * detail::largest_linear(j, moe);
        else if (j.parallel.sharding == sharding::full)
            t += scaled_weight_cache_bytes(j) * f.gathered_layers * detail::linear_weights(j, moe);
    }
    if (f.bucket_elements > 0 && j.parallel.sharding != sharding::full && j.training.finetune.partial()) {
        const auto b = bytes_per_param(j, f);
        const double trainable = trainable_split(j, l, f).trainable;
        t -= (std::min(f.bucket_elements, l.params()) - std::min(f.bucket_elements, trainable)) * b.gradients;
    }
    return t;
}

/// Uncertainty the validation shows for the methods (to add to the estimator's band, issue 10 item 4): LoRA rows of
/// LitGPT's table are within 1.9% (tests/memory/methods_test.cpp) -> 3%; QLoRA rows under-predict by up to 5.2% ->
/// 6%; offload, 8-bit Adam and frozen layers have no measured row -> 5% each (the spread of the dense calibration
/// rows plus a margin). fp8 is left to the estimator's own band. Additive, as the other mechanisms' bands.
inline double method_uncertainty(const job_spec& j) {
    const auto& ft = j.training.finetune;
    double u = 0;
    if (ft.method == finetune_method::lora) u += 0.03;
    if (ft.method == finetune_method::qlora) u += 0.06;
    if (!ft.adapters() && ft.frozen_layers > 0) u += 0.05;
    if (j.training.optimizer == optimizer_kind::adamw_8bit) u += 0.05;
    if (j.runtime.offload.any()) u += 0.05;
    if (ft.dpo()) u += 0.05;           // no measured DPO row
    if (ft.load_in_8bit) u += 0.03;    // no measured int8 row: LoRA's band again
    return u;
}

}  // namespace frenzy
