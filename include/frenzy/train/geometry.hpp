#pragma once
// The job's geometry: what its parallel layout makes of the model and the batch on one GPU. The tokens a GPU
// holds per micro-batch, the length of the learned position table, the pipeline stages (which layers, embeddings
// and parameters each stage's GPU holds) and what full recompute does on a stage. The one place these are derived:
// the memory model (memory/) and the step-time model (perf/) both read them from here.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "frenzy/model/transformer.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

// ---- tokens and positions -------------------------------------------------------------------------------------

/// Sequence positions one GPU holds: seq_len / cp (context parallelism splits the sequence; validate(job) makes
/// the split exact: seq_len is a multiple of 2 x cp).
inline std::int64_t local_sequence(const job_spec& j) { return j.training.seq_len / j.parallel.cp; }

/// Tokens one GPU holds per micro-batch: (seq_len / cp) x micro_batch (the s x b of the activation terms).
inline double local_tokens(const job_spec& j) {
    return static_cast<double>(local_sequence(j)) * static_cast<double>(j.training.micro_batch);
}

/// Rows of the learned position table: model.max_positions, else the training sequence length
/// (model/transformer.hpp position_table_length).
inline std::int64_t position_table_length(const job_spec& j) {
    return position_table_length(j.model, j.training.seq_len);
}

/// Vocabulary as a framework pads it for the job's tensor-parallel degree: to a multiple of
/// `vocab_multiple` x tp (Megatron --make-vocab-size-divisible-by 128; 1 = unpadded). `vocab_multiple` is the
/// framework's fact (memory/framework_profile.hpp vocab_divisible_by).
inline std::int64_t tp_padded_vocab(const job_spec& j, std::int64_t vocab_multiple) {
    return padded_vocab(j.model.vocab, vocab_multiple * j.parallel.tp);
}

// ---- pipeline stages --------------------------------------------------------------------------------------------

/// What one GPU of a pipeline stage holds: layers, embeddings, and parameters after tp/ep sharding.
struct stage_layout {
    int stage = 0;
    std::int64_t layers = 0;       ///< transformer layers on this stage (all its virtual chunks)
    std::int64_t moe_layers = 0;   ///< of which mixture-of-experts layers
    bool first = false;            ///< holds the word (and position) embedding
    bool last = false;             ///< holds the final norm, the output layer and the loss
    std::int64_t chunk_slots = 0;  ///< layer slots per virtual chunk (an embedding/loss stage takes one slot)
    double dense_params = 0;       ///< per GPU, replicated over the data-parallel group (dp x cp)
    double expert_params = 0;      ///< per GPU, replicated over the expert-data-parallel group (dp x cp / ep)
    double params() const { return dense_params + expert_params; }
};

/// Transformer layers of pipeline rank `s` (all its virtual chunks): the layout's own count (stage_layers), even
/// split, or Megatron's uneven first/last stage counts (megatron/core/transformer/transformer_block.py
/// get_num_layers_to_build @d98e8a64).
inline std::int64_t stage_layer_count(const job_spec& j, std::int64_t s) {
    const auto& p = j.parallel;
    const auto L = j.model.layers;
    if (!p.stage_layers.empty()) return p.stage_layers[static_cast<std::size_t>(s)];
    if (p.first_stage_layers > 0 || p.last_stage_layers > 0) {
        if (s == 0 && p.first_stage_layers > 0) return p.first_stage_layers;
        if (s == p.pp - 1 && p.last_stage_layers > 0) return p.last_stage_layers;
        const auto left = p.pp - (p.first_stage_layers > 0 ? 1 : 0) - (p.last_stage_layers > 0 ? 1 : 0);
        return (L - p.first_stage_layers - p.last_stage_layers) / left;
    }
    // --account-for-embedding/loss-in-pipeline-split: the embedding (loss) takes one layer's slot of the first
    // (last) virtual stage.
    const auto per_rank = (L + (p.embedding_stage ? 1 : 0) + (p.loss_stage ? 1 : 0)) / p.pp;
    return per_rank - (s == 0 && p.embedding_stage ? 1 : 0) - (s == p.pp - 1 && p.loss_stage ? 1 : 0);
}

/// The shape of every stage (stage, layers, moe_layers, first, last, chunk_slots; no parameters), in order.
/// Chunk v of rank s holds the layer block after v full rounds of chunks over all ranks plus the chunks of ranks
/// before s (Megatron get_transformer_layer_offset: with 8 layers, pp 2, vpp 2, rank 0 holds [0,1] [4,5]); the
/// MoE layers of each chunk follow the model's dense prefix and interleave step. `visit(const stage_layout&)` is
/// called for each stage, without allocating.
template <class Visit>
void for_each_stage(const job_spec& j, Visit&& visit) {
    const auto& m = j.model;
    const auto& p = j.parallel;
    const std::int64_t e = p.embedding_stage ? 1 : 0;
    // Slots (layers, plus the embedding/loss when they count) per chunk of each rank, and per round of chunks.
    auto width_of = [&](std::int64_t s) {
        return (stage_layer_count(j, s) + (s == 0 ? e : 0) + (s == p.pp - 1 && p.loss_stage ? 1 : 0)) / p.vpp;
    };
    std::int64_t round = 0;
    for (std::int64_t s = 0; s < p.pp; ++s) round += width_of(s);
    std::int64_t before = 0;  // slots of the chunks of earlier ranks in one round
    for (std::int64_t s = 0; s < p.pp; ++s) {
        stage_layout l;
        l.stage = static_cast<int>(s);
        l.first = s == 0;
        l.last = s == p.pp - 1;
        const auto w = width_of(s);
        l.chunk_slots = w;
        for (std::int64_t v = 0; v < p.vpp; ++v) {
            const bool emb = s == 0 && v == 0 && e == 1;
            const bool loss = l.last && v == p.vpp - 1 && p.loss_stage;
            const std::int64_t begin = v * round + before + (emb ? 1 : 0) - e;  // first layer index of the chunk
            const std::int64_t n = w - (emb ? 1 : 0) - (loss ? 1 : 0);
            l.layers += n;
            l.moe_layers += m.moe_layers_below(begin + n) - m.moe_layers_below(begin);  // dense prefix + interleave step
        }
        before += w;
        visit(static_cast<const stage_layout&>(l));
    }
}

namespace detail {
/// Per-GPU parameters of the pieces of a stage after tp/ep sharding (for_each_stage_layout).
struct stage_parameter_terms {
    parameter_counts c{};
    double attn = 0, dense_mlp = 0, expert = 0, shared = 0, local_experts = 0;
};
inline stage_parameter_terms stage_parameter_terms_of(const job_spec& j, std::int64_t vocab_multiple) {
    const auto& m = j.model;
    const auto& p = j.parallel;
    const double t = static_cast<double>(p.tp);
    const double et = static_cast<double>(p.expert_tp());
    stage_parameter_terms w;
    w.c = count_parameters(m, tp_padded_vocab(j, vocab_multiple), position_table_length(j));
    const auto& c = w.c;
    const double h = static_cast<double>(m.hidden);
    // Replicated pieces of a layer: norms, output-projection bias, MLP output bias.
    const double attn_repl = m.bias ? h : 0.0;
    const double mlp_repl = m.bias ? h : 0.0;
    w.attn = (c.attention - attn_repl) / t + attn_repl;
    w.dense_mlp = (c.dense_mlp - mlp_repl) / t + mlp_repl;
    w.expert = (c.expert - mlp_repl) / et + mlp_repl;
    // Shared experts are a dense MLP inside the MoE layer, split by tp (Megatron SharedExpertMLP).
    w.shared = (c.shared_expert - (m.moe.shared_experts > 0 ? mlp_repl : 0.0)) / t +
               (m.moe.shared_experts > 0 ? mlp_repl : 0.0);
    w.local_experts = m.is_moe() ? static_cast<double>(m.moe.experts / p.ep) : 0.0;
    return w;
}
/// Fills the per-GPU parameters of stage `l` from its layers and its first/last flags.
inline void set_stage_parameters(const job_spec& j, const stage_parameter_terms& w, stage_layout& l) {
    const auto& m = j.model;
    const auto& c = w.c;
    const double t = static_cast<double>(j.parallel.tp);
    const double layers = static_cast<double>(l.layers);
    const double moe_layers = static_cast<double>(l.moe_layers);
    l.dense_params = layers * (w.attn + c.layer_norms) + (layers - moe_layers) * w.dense_mlp + moe_layers * (c.router + w.shared);
    l.expert_params = moe_layers * w.local_experts * w.expert;
    if (l.first) l.dense_params += c.word_embedding / t + c.position_embedding + (m.embedding_norm ? c.final_norm / 2 : 0.0);
    if (l.last) {
        const double head = m.tied_embeddings ? (j.parallel.pp > 1 ? c.word_embedding : 0.0) : c.output_layer;
        l.dense_params += head / t + (m.embedding_norm ? c.final_norm / 2 : c.final_norm);
    }
}
}  // namespace detail

/// Per-GPU parameters of every stage, with the vocabulary padded to a multiple of `vocab_multiple` x tp (the
/// framework's padding, tp_padded_vocab). The stages are for_each_stage's; the word embedding sits on the first
/// stage, the output layer on the last (a tied embedding is duplicated there when pp > 1, as Megatron does).
/// Tensor parallelism shards the matrices (column/row parallel), norms and row-parallel biases are replicated;
/// expert parallelism splits the experts and expert tensor parallelism (etp) each expert's matrices. Closed form
/// per chunk: no loop over layers. `visit(const stage_layout&)` is called for each stage in order, without
/// allocating (the step-time model and the memory model's lower bound walk the stages this way; stage_layouts
/// collects them).
template <class Visit>
void for_each_stage_layout(const job_spec& j, std::int64_t vocab_multiple, Visit&& visit) {
    for_each_stage_layout(j, vocab_multiple, 0, j.parallel.pp, std::forward<Visit>(visit));
}
/// The same for the stages first .. last - 1 alone (the others' parameters are not computed).
template <class Visit>
void for_each_stage_layout(const job_spec& j, std::int64_t vocab_multiple, std::int64_t first, std::int64_t last,
                           Visit&& visit) {
    const auto w = detail::stage_parameter_terms_of(j, vocab_multiple);
    for_each_stage(j, [&](const stage_layout& shape) {
        if (shape.stage < first || shape.stage >= last) return;
        stage_layout l = shape;
        detail::set_stage_parameters(j, w, l);
        visit(static_cast<const stage_layout&>(l));
    });
}

/// Per-GPU parameters of every stage (for_each_stage_layout, collected).
inline std::vector<stage_layout> stage_layouts(const job_spec& j, std::int64_t vocab_multiple) {
    std::vector<stage_layout> out;
    out.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, j.parallel.pp)));
    for_each_stage_layout(j, vocab_multiple, [&](const stage_layout& l) { out.push_back(l); });
    return out;
}

// ---- full recompute ---------------------------------------------------------------------------------------------

/// What full recompute does on one stage's GPU, per micro-batch (recompute_method, train/job.hpp).
struct full_recompute_counts {
    double checkpointed = 0;  ///< layers whose activations are dropped and rebuilt in backward
    double inputs = 0;        ///< checkpoint inputs kept: one per recompute unit
    double unit_layers = 0;   ///< layers one unit rebuilds at once (the recompute working set)
};

/// Megatron's _checkpointed_forward (megatron/core/transformer/transformer_block.py @d98e8a64) runs per model
/// chunk over the chunk's layers n: uniform checkpoints groups of k = recompute_layers layers (ceil(n / k) inputs,
/// k layers rebuilt at once); block checkpoints the first min(k, n) layers one by one and runs the rest without
/// recompute. A stage's vpp chunks hold chunk_slots layers each, less one per embedding/loss slot. Zero unless
/// recompute is full. Reads the stage's layers and chunk_slots only (for_each_stage gives them).
inline full_recompute_counts full_recompute_of(const job_spec& j, const stage_layout& l) {
    const auto& p = j.parallel;
    full_recompute_counts c;
    if (p.recompute != recompute::full || l.layers <= 0) return c;
    const std::int64_t w = l.chunk_slots;
    const std::int64_t shorter = std::clamp<std::int64_t>(p.vpp * w - l.layers, 0, p.vpp);  // chunks of w - 1 layers
    const std::int64_t k = p.recompute_layers;
    auto per_chunk = [&](std::int64_t n) {
        if (n <= 0) return full_recompute_counts{};
        if (p.recompute_method == recompute_method::block) {
            const double r = static_cast<double>(std::min(k, n));
            return full_recompute_counts{r, r, 1.0};
        }
        return full_recompute_counts{static_cast<double>(n), static_cast<double>((n + k - 1) / k),
                                     static_cast<double>(std::min(k, n))};
    };
    const auto full_chunk = per_chunk(w), short_chunk = per_chunk(w - 1);
    const double nf = static_cast<double>(p.vpp - shorter), ns = static_cast<double>(shorter);
    c.checkpointed = nf * full_chunk.checkpointed + ns * short_chunk.checkpointed;
    c.inputs = nf * full_chunk.inputs + ns * short_chunk.inputs;
    c.unit_layers = std::max(full_chunk.unit_layers, short_chunk.unit_layers);
    return c;
}

}  // namespace frenzy
