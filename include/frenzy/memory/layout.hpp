#pragma once
// What one GPU of each pipeline stage holds: layers, embeddings, and parameters after tp/ep sharding.
#include <cstdint>
#include <vector>

#include "frenzy/memory/framework_profile.hpp"
#include "frenzy/model/transformer.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

struct stage_layout {
    int stage = 0;
    std::int64_t layers = 0;       ///< transformer layers on this stage (all its virtual chunks)
    std::int64_t moe_layers = 0;   ///< of which mixture-of-experts layers
    bool first = false;            ///< holds the word (and position) embedding
    bool last = false;             ///< holds the final norm, the output layer and the loss
    double dense_params = 0;       ///< per GPU, replicated over the data-parallel group (dp x cp)
    double expert_params = 0;      ///< per GPU, replicated over the expert-data-parallel group (dp x cp / ep)
    double params() const { return dense_params + expert_params; }
};

/// Vocabulary as the framework pads it for this tensor-parallel degree.
inline std::int64_t framework_vocab(const job_spec& j, const framework_profile& f) {
    return padded_vocab(j.model.vocab, f.vocab_divisible_by * j.parallel.tp);
}

/// Learned position table size (the model's, else the training sequence length).
inline std::int64_t position_rows(const job_spec& j) {
    return j.model.max_positions > 0 ? j.model.max_positions : j.training.seq_len;
}

/// Per-GPU parameters of every stage. Layers split evenly (Megatron: layers / (pp x vpp) per chunk; chunk c of
/// stage s is layer block s + c x pp); the word embedding sits on the first stage, the output layer on the last
/// (a tied embedding is duplicated there when pp > 1, as Megatron does). Tensor parallelism shards the matrices
/// (column/row parallel), norms and row-parallel biases are replicated; expert parallelism splits the experts.
inline std::vector<stage_layout> stage_layouts(const job_spec& j, const framework_profile& f) {
    const auto& m = j.model;
    const auto& p = j.parallel;
    const double t = static_cast<double>(p.tp);
    const auto c = count_parameters(m, framework_vocab(j, f), position_rows(j));
    const double h = static_cast<double>(m.hidden);
    // Replicated pieces of a layer: norms, output-projection bias, MLP output bias.
    const double attn_repl = m.bias ? h : 0.0;
    const double mlp_repl = m.bias ? h : 0.0;
    const double attn = (c.attention - attn_repl) / t + attn_repl;
    const double dense_mlp = (c.dense_mlp - mlp_repl) / t + mlp_repl;
    const double expert = (c.expert - mlp_repl) / t + mlp_repl;
    const double shared = (c.shared_expert - (m.moe.shared_experts > 0 ? mlp_repl : 0.0)) / t +
                          (m.moe.shared_experts > 0 ? mlp_repl : 0.0);
    const double local_experts = m.is_moe() ? static_cast<double>(m.moe.experts / p.ep) : 0.0;

    const std::int64_t chunk = m.layers / (p.pp * p.vpp);
    std::vector<stage_layout> out(static_cast<std::size_t>(p.pp));
    for (std::int64_t s = 0; s < p.pp; ++s) {
        auto& l = out[static_cast<std::size_t>(s)];
        l.stage = static_cast<int>(s);
        l.first = s == 0;
        l.last = s == p.pp - 1;
        for (std::int64_t v = 0; v < p.vpp; ++v) {
            const std::int64_t begin = (s + v * p.pp) * chunk;
            for (std::int64_t layer = begin; layer < begin + chunk; ++layer) {
                ++l.layers;
                const bool moe = m.is_moe_layer(layer);  // dense prefix + interleave step (model/transformer.hpp)
                l.dense_params += attn + c.layer_norms;
                if (moe) {
                    ++l.moe_layers;
                    l.dense_params += c.router + shared;
                    l.expert_params += local_experts * expert;
                } else {
                    l.dense_params += dense_mlp;
                }
            }
        }
        if (l.first) l.dense_params += c.word_embedding / t + c.position_embedding + (m.embedding_norm ? c.final_norm / 2 : 0.0);
        if (l.last) {
            const double head = m.tied_embeddings ? (p.pp > 1 ? c.word_embedding : 0.0) : c.output_layer;
            l.dense_params += head / t + (m.embedding_norm ? c.final_norm / 2 : c.final_norm);
        }
    }
    return out;
}

}  // namespace frenzy
