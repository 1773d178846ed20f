#pragma once
// Megatron-LM options that change memory or speed without changing the model's shape, the parallel degrees or the
// batch: MoE routing and kernels, expert tensor parallelism, uneven pipeline splits, the full-recompute unit,
// dropout, fp8 / bf16 buffer options, TP communication overlap, optimizer offload, Megatron-FSDP, the transformer
// implementation. One reader for both places that meet them: a launch script (frameworks/megatron/import.hpp, which reads
// the shape and degrees itself) and the other_flags cell of a measurement table (io/measurements_csv.hpp, whose
// columns state the shape and degrees), which reaches it through Megatron's traits (table_flags, at the end).
// On train's floor with the traits, so it reads into a job_spec only (train/job_spec.hpp). Flag names and defaults: NVIDIA/Megatron-LM@d98e8a64
// megatron/training/arguments.py.
#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/text.hpp"
#include "frenzy/train/job_spec.hpp"

namespace frenzy {

/// Megatron's layout string for per-stage layer counts: the embedding (E) before the first stage's layers, the loss
/// (L) after the last's, stages split by "|", n layers as "t*n" (PipelineParallelLayerLayout.parse_str_to_list,
/// megatron/core/transformer/pipeline_parallel_layer_layout.py @d98e8a64): {6, 17, 17} -> "Et*6|t*17|t*17L".
inline std::string megatron_pipeline_layout(const std::vector<std::int64_t>& stage_layers) {
    std::string s;
    for (std::size_t i = 0; i < stage_layers.size(); ++i) {
        if (i > 0) s += '|';
        if (i == 0) s += 'E';
        s += stage_layers[i] == 1 ? std::string("t") : "t*" + std::to_string(stage_layers[i]);
        if (i + 1 == stage_layers.size()) s += 'L';
    }
    return s;
}

/// Per-stage layer counts from Megatron's layout string, the subset megatron_pipeline_layout writes and its spellings:
/// "E" once at the start, "L" once at the end, "t" or "t*n" per run of layers, "(...)*n" repeating a group, commas
/// ignored, one virtual stage per rank. Throws config_error naming the option for anything else (MTP layers "m",
/// virtual stages: a layout with more stages than `pp`).
inline std::vector<std::int64_t> parse_megatron_pipeline_layout(std::string text, std::int64_t pp) {
    const std::string opt = "--pipeline-model-parallel-layout";
    std::erase(text, ',');
    auto fail = [&](const std::string& why) -> std::vector<std::int64_t> {
        throw config_error(opt + " \"" + printable(text, 80) + "\": " + why);
    };
    if (text.size() > 4096) fail("longer than 4096 characters");
    // unroll "(...)*n" (no nesting) and count layers per stage
    std::string flat;
    for (std::size_t i = 0; i < text.size();) {
        if (text[i] != '(') { flat += text[i++]; continue; }
        const auto close = text.find(')', i);
        if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != '*') fail("a group \"(...)\" needs \")*n\"");
        std::size_t end = close + 2;
        while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
        if (end == close + 2 || end - close - 2 > 6) fail("a group's repeat count must be 1 to 999999");
        const auto times = std::stoll(text.substr(close + 2, end - close - 2));
        const auto body = text.substr(i + 1, close - i - 1);
        if (body.find('(') != std::string::npos) fail("nested groups are not read");
        if (static_cast<double>(body.size()) * static_cast<double>(times) > 1e6) fail("unrolls to more than 10^6 characters");
        for (long long k = 0; k < times; ++k) flat += body;
        i = end;
    }
    std::vector<std::int64_t> stages{0};
    for (std::size_t i = 0; i < flat.size();) {
        const char c = flat[i++];
        if (c == '|') { stages.push_back(0); continue; }
        if (c == 'E') { if (stages.size() != 1 || stages[0] != 0 || i != 1) fail("E (the embedding) must come first"); continue; }
        if (c == 'L') { if (i != flat.size()) fail("L (the loss) must come last"); continue; }
        if (c != 't') fail(std::string("\"") + printable(std::string(1, c)) + "\" is not read (t, E, L, |, *n and (...)*n are)");
        std::int64_t count = 1;
        if (i < flat.size() && flat[i] == '*') {
            std::size_t end = i + 1;
            while (end < flat.size() && std::isdigit(static_cast<unsigned char>(flat[end]))) ++end;
            if (end == i + 1 || end - i - 1 > 6) fail("a repeat count must be 1 to 999999");
            count = std::stoll(flat.substr(i + 1, end - i - 1));
            i = end;
        }
        stages.back() += count;
    }
    if (flat.empty() || flat.front() != 'E' || flat.back() != 'L') fail("it must start with E and end with L");
    if (static_cast<std::int64_t>(stages.size()) != pp)
        fail(std::to_string(stages.size()) + " stages for --pipeline-model-parallel-size " + std::to_string(pp) +
             " (virtual stages are not read)");
    return stages;
}


namespace detail {

/// One value of a command-line argument, checked (core/checked.hpp: overflow, junk, nan and inf are errors that
/// name the flag); the Megatron importer uses them too.
inline std::int64_t arg_int(const cli_argument& a) {
    if (a.values.size() != 1) throw config_error(a.flag + " needs one integer value");
    return parse_int64(a.values[0], a.flag);
}
inline double arg_double(const cli_argument& a) {
    if (a.values.size() != 1) throw config_error(a.flag + " needs one number");
    return parse_double(a.values[0], a.flag);
}
inline std::string arg_str(const cli_argument& a) {
    if (a.values.size() != 1) throw config_error(a.flag + " needs one value");
    return a.values[0];
}

}  // namespace detail

/// The options, read flag by flag (take) and applied to the job once all are read (finish): some need the whole
/// job (the expert width, the precision, the recompute granularity).
class megatron_options {
public:
    /// Flags of this set that take one value (the others are switches), and the layout flags a measurement table
    /// may leave to its other_flags cell (megatron_unstated_layout).
    static bool takes_value(const std::string& flag) {
        static const std::vector<std::string> valued{
            "--num-virtual-stages-per-pipeline-rank", "--num-layers-per-virtual-pipeline-stage", "--context-parallel-size",
            "--num-experts", "--moe-router-topk", "--moe-ffn-hidden-size", "--moe-shared-expert-intermediate-size",
            "--moe-layer-freq", "--moe-token-dispatcher-type", "--moe-expert-capacity-factor",
            "--expert-tensor-parallel-size", "--expert-model-parallel-size", "--decoder-first-pipeline-num-layers",
            "--decoder-last-pipeline-num-layers", "--recompute-method", "--recompute-num-layers", "--hidden-dropout",
            "--attention-dropout", "--data-parallel-sharding-strategy", "--transformer-impl"};
        return std::find(valued.begin(), valued.end(), flag) != valued.end();
    }

    /// Consumes `a` when it is one of these options (true); anything else is left to the caller (false).
    bool take(const cli_argument& a, job_spec& j) {
        using detail::arg_double;
        using detail::arg_int;
        using detail::arg_str;
        auto& m = j.model;
        auto& p = j.parallel;
        const auto& f = a.flag;
        if (f == "--num-experts") m.moe.experts = arg_int(a);
        else if (f == "--moe-router-topk") m.moe.top_k = arg_int(a);
        else if (f == "--moe-ffn-hidden-size") moe_ffn_ = arg_int(a);
        else if (f == "--moe-shared-expert-intermediate-size") shared_size_ = arg_int(a);
        else if (f == "--moe-layer-freq") layer_freq_ = arg_str(a);
        else if (f == "--moe-grouped-gemm") p.grouped_gemm = true;  // TEGroupedMLP (experts.py)
        else if (f == "--moe-token-dispatcher-type") dispatcher_ = arg_str(a);
        else if (f == "--moe-expert-capacity-factor") m.moe.capacity_factor = arg_double(a);
        else if (f == "--moe-pad-expert-input-to-capacity") m.moe.pad_to_capacity = true;
        else if (f == "--expert-tensor-parallel-size") p.etp = arg_int(a);
        else if (f == "--expert-model-parallel-size") p.ep = arg_int(a);
        else if (f == "--pipeline-model-parallel-layout") layout_ = arg_str(a);
        else if (f == "--decoder-first-pipeline-num-layers") p.first_stage_layers = arg_int(a);
        else if (f == "--decoder-last-pipeline-num-layers") p.last_stage_layers = arg_int(a);
        else if (f == "--account-for-embedding-in-pipeline-split") p.embedding_stage = true;
        else if (f == "--account-for-loss-in-pipeline-split") p.loss_stage = true;
        else if (f == "--recompute-method") recompute_method_ = arg_str(a);
        else if (f == "--recompute-num-layers") recompute_layers_ = arg_int(a);
        else if (f == "--hidden-dropout") hidden_dropout_ = arg_double(a), dropout_given_ = true;
        else if (f == "--attention-dropout") attention_dropout_ = arg_double(a), dropout_given_ = true;
        else if (f == "--fp8-param-gather") fp8_param_gather_ = true;
        else if (f == "--grad-reduce-in-bf16") grad_reduce_bf16_ = true;
        else if (f == "--tp-comm-overlap") j.runtime.tp_comm_overlap = true;
        else if (f == "--overlap-grad-reduce") j.runtime.overlap_grad_reduce = true;
        else if (f == "--optimizer-cpu-offload") j.runtime.offload.optimizer = true;
        else if (f == "--use-megatron-fsdp") megatron_fsdp_ = true;
        else if (f == "--data-parallel-sharding-strategy") fsdp_strategy_ = arg_str(a);
        else if (f == "--transformer-impl") transformer_impl_ = arg_str(a);
        else return false;
        return true;
    }

    /// Applies the options that need the whole job; what it cannot use goes to out.unknown / out.ignored (`out`: a
    /// launcher_import, or any value with those two lists of strings).
    template <class Report>
    void finish(job_spec& j, Report& out) const {
        finish_moe(j, out);
        finish_recompute(j.parallel, out);
        // Dropout masks are saved when either probability is positive (hidden: bias_dropout_add's mask; attention: the
        // unfused core attention's mask); both 0 saves none.
        if (dropout_given_) j.runtime.dropout = hidden_dropout_ > 0 || attention_dropout_ > 0;
        finish_low_precision(j, out);
        finish_megatron_fsdp(j.parallel, out);
        if (layout_) j.parallel.stage_layers = parse_megatron_pipeline_layout(*layout_, j.parallel.pp);
        // The local implementation builds megatron/core/transformer/dot_product_attention.py DotProductAttention
        // (unfused softmax) whatever --attention-backend says (models/gpt/gpt_layer_specs.py
        // get_gpt_layer_local_spec); Transformer Engine's cuBLAS workspace is still counted (framework profile).
        if (transformer_impl_) {
            if (*transformer_impl_ == "local") j.runtime.attention = attention_impl::unfused;
            else if (*transformer_impl_ != "transformer_engine") out.unknown.push_back("--transformer-impl " + *transformer_impl_);
        }
    }

    /// `--moe-layer-freq`: an integer k (every k-th layer is MoE; only 1 is modelled) or a pattern "([0]*a+[1]*b)".
    static std::optional<std::int64_t> dense_layers_of(const std::string& v, std::int64_t layers);

private:
    /// The MoE options: top-k's default, the expert and shared-expert widths, the dense layers, the dispatcher.
    template <class Report>
    void finish_moe(job_spec& j, Report& out) const {
        auto& m = j.model;
        auto& p = j.parallel;
        if (m.is_moe()) {
            if (m.moe.top_k == 0) m.moe.top_k = 2;  // --moe-router-topk default 2
            if (moe_ffn_ && *moe_ffn_ != m.ffn_hidden) m.moe.expert_ffn_hidden = *moe_ffn_;
            if (shared_size_) {  // frenzy counts shared experts in units of the routed expert's width
                if (m.expert_ffn() <= 0 || *shared_size_ % m.expert_ffn() != 0)
                    throw config_error("--moe-shared-expert-intermediate-size=" + std::to_string(*shared_size_) +
                                       " is not a multiple of the expert width " + std::to_string(m.expert_ffn()));
                m.moe.shared_experts = *shared_size_ / m.expert_ffn();
            }
            if (layer_freq_) {
                auto d = dense_layers_of(*layer_freq_, m.layers);
                if (!d) out.unknown.push_back("--moe-layer-freq " + *layer_freq_);
                else m.moe.dense_layers = *d;
            }
        }
        if (dispatcher_) {  // transformer_config.py moe_token_dispatcher_type: allgather (default) | alltoall | flex
            if (*dispatcher_ == "allgather") p.dispatcher = moe_dispatcher::allgather;
            else if (*dispatcher_ == "alltoall") p.dispatcher = moe_dispatcher::alltoall;
            else out.unknown.push_back("--moe-token-dispatcher-type " + *dispatcher_ + " (not modelled)");
        }
    }

    /// --recompute-method / --recompute-num-layers act only with --recompute-granularity full (megatron/core/
    /// transformer/transformer_config.py requires both there and rejects the count with selective).
    template <class Report>
    void finish_recompute(parallel_config& p, Report& out) const {
        if (p.recompute == recompute::full) {
            if (recompute_method_) {
                if (*recompute_method_ == "uniform") p.recompute_method = recompute_method::uniform;
                else if (*recompute_method_ == "block") p.recompute_method = recompute_method::block;
                else throw config_error("--recompute-method \"" + *recompute_method_ + "\" is not uniform or block");
            }
            if (recompute_layers_) p.recompute_layers = *recompute_layers_;
        } else {
            if (recompute_method_) out.ignored.push_back("--recompute-method " + *recompute_method_ + " (without --recompute-granularity full)");
            if (recompute_layers_) out.ignored.push_back("--recompute-num-layers " + std::to_string(*recompute_layers_) + " (without --recompute-granularity full)");
        }
    }

    /// --fp8-param-gather and --grad-reduce-in-bf16, which act only at the precisions that have those buffers.
    template <class Report>
    void finish_low_precision(job_spec& j, Report& out) const {
        const auto prec = j.training.precision;
        if (fp8_param_gather_) {
            if (prec == precision::fp8_mixed) j.runtime.fp8_param_gather = true;
            else out.ignored.push_back("--fp8-param-gather (without --fp8-format)");
        }
        if (grad_reduce_bf16_) {  // arguments.py: read only under --bf16 (fp8 keeps bf16 parameters)
            if (prec == precision::bf16_mixed || prec == precision::fp8_mixed) j.runtime.grad_reduce_bf16 = true;
            else out.ignored.push_back("--grad-reduce-in-bf16 (without --bf16)");
        }
    }

    /// Megatron-FSDP's sharding strategy (--data-parallel-sharding-strategy acts only with --use-megatron-fsdp).
    template <class Report>
    void finish_megatron_fsdp(parallel_config& p, Report& out) const {
        if (megatron_fsdp_) {  // arguments.py: no_shard | optim | optim_grads | optim_grads_params
            const std::string v = fsdp_strategy_.value_or("optim_grads_params");
            if (v == "optim_grads_params") p.sharding = sharding::full;
            else if (v == "optim_grads") p.sharding = sharding::gradients;
            else if (v == "optim") p.sharding = sharding::optimizer;
            else if (v == "no_shard") p.sharding = sharding::none;
            else out.unknown.push_back("--data-parallel-sharding-strategy " + v);
        } else if (fsdp_strategy_) {
            out.ignored.push_back("--data-parallel-sharding-strategy " + *fsdp_strategy_ + " (without --use-megatron-fsdp)");
        }
    }

    std::optional<std::int64_t> moe_ffn_, shared_size_, recompute_layers_;
    std::optional<std::string> layout_;  ///< --pipeline-model-parallel-layout (read once pp is known)
    std::optional<std::string> layer_freq_, dispatcher_, recompute_method_, fsdp_strategy_, transformer_impl_;
    double hidden_dropout_ = 0.1, attention_dropout_ = 0.1;  // arguments.py defaults
    bool dropout_given_ = false, fp8_param_gather_ = false, grad_reduce_bf16_ = false, megatron_fsdp_ = false;
};

inline std::optional<std::int64_t> megatron_options::dense_layers_of(const std::string& v, std::int64_t layers) {
    if (v == "1") return 0;
    static const std::regex pat(R"(^\(?\s*\[0\]\s*\*\s*(\d+)\s*\+\s*\[1\]\s*\*\s*(\d+)\s*\)?$)");
    std::smatch m;
    if (!std::regex_match(v, m, pat) || m[1].length() > 9 || m[2].length() > 9) return std::nullopt;
    const auto dense = std::stoll(m[1]), moe = std::stoll(m[2]);
    if (dense + moe == layers) return dense;
    return std::nullopt;
}

/// The layout a measurement table's columns leave empty (vpp, cp, seq_parallel), from the Megatron flags in its
/// other_flags cell as the importer reads them: --num-virtual-stages-per-pipeline-rank, or
/// --num-layers-per-virtual-pipeline-stage k (layers / pp / k stages), --context-parallel-size, --sequence-parallel.
/// A stated column wins.
struct unstated_layout {
    bool vpp = false, cp = false, sequence_parallel = false;  ///< which columns are empty
};
inline void megatron_unstated_layout(const std::vector<cli_argument>& flags, unstated_layout empty, job_spec& j) {
    auto& p = j.parallel;
    for (const auto& a : flags) {
        if (empty.vpp && a.flag == "--num-virtual-stages-per-pipeline-rank") p.vpp = detail::arg_int(a);
        if (empty.vpp && a.flag == "--num-layers-per-virtual-pipeline-stage") {
            const auto k = detail::arg_int(a);
            if (k <= 0 || p.pp <= 0 || j.model.layers % (p.pp * k) != 0)
                throw config_error("--num-layers-per-virtual-pipeline-stage " + std::to_string(k) +
                                   " does not divide the layers per pipeline stage (" + std::to_string(j.model.layers) +
                                   " layers, pp " + std::to_string(p.pp) + ")");
            p.vpp = j.model.layers / p.pp / k;
        }
        if (empty.cp && a.flag == "--context-parallel-size") p.cp = detail::arg_int(a);
        if (empty.sequence_parallel && a.flag == "--sequence-parallel") p.sequence_parallel = p.tp > 1;  // arguments.py: off at tp 1
    }
    if (p.vpp > 1) p.schedule = pipeline_schedule::interleaved;
}

/// The Megatron flags named in free text (a measurement table's other_flags cell: "MoE: --num-experts 8
/// --moe-router-topk 1 (sinkhorn) --expert-model-parallel-size 2, ..."): each "--flag" or "--flag=value", and for
/// the flags of megatron_options that take a value, the word after it, without the punctuation that joins it to the
/// prose (a trailing , ; : ) or . and a leading parenthesis).
inline std::vector<cli_argument> megatron_flags_in_text(const std::string& text) {
    std::vector<std::string> words;
    std::string w;
    for (char c : text) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            if (!w.empty()) words.push_back(w), w.clear();
        } else {
            w += c;
        }
    }
    if (!w.empty()) words.push_back(w);
    auto strip = [](std::string s) {
        while (!s.empty() && std::string_view(",;:).").find(s.back()) != std::string_view::npos) s.pop_back();
        while (!s.empty() && s.front() == '(') s.erase(s.begin());
        return s;
    };
    std::vector<cli_argument> out;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const auto word = strip(words[i]);
        if (word.rfind("--", 0) != 0 || word.size() <= 2) continue;
        const auto eq = word.find('=');
        if (eq != std::string::npos) {
            out.push_back({word.substr(0, eq), {word.substr(eq + 1)}});
        } else if (megatron_options::takes_value(word) && i + 1 < words.size() && strip(words[i + 1]).rfind("--", 0) != 0) {
            out.push_back({word, {strip(words[i + 1])}});
            ++i;
        } else {
            out.push_back({word, {}});
        }
    }
    return out;
}

namespace frameworks::megatron {

namespace detail {
inline std::string lowered(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
inline bool has(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }
}  // namespace detail

/// Megatron-Core options a measurement row names in other_flags (table_notation::read_options): every flag
/// megatron_options reads (MoE routing and kernels, etp, uneven splits, the recompute unit, dropout, fp8 options,
/// Megatron-FSDP, --transformer-impl), as a launch script's would be; the table's columns state the shape and the
/// degrees (vpp, cp and sequence parallelism from the flags where their columns are empty). Prose the MoE rows use
/// for the expert kernel and the dispatcher ("SequentialMLP (no grouped GEMM), allgather token dispatcher") is read
/// too. Run after the columns (the options need the precision and the recompute granularity). Returns what a launch
/// script's import would list as not understood (e.g. the flex dispatcher): the row cannot be read as stated then.
inline std::vector<std::string> read_table_options(const table_row_options& row, job_spec& j) {
    struct {
        std::vector<std::string> ignored, unknown;  // the ignored list is dropped: free text is not a script
    } read;
    try {
        const auto flags = megatron_flags_in_text(row.recompute + " " + row.other_flags);
        megatron_unstated_layout(flags, {.vpp = row.vpp, .cp = row.cp, .sequence_parallel = row.sequence_parallel}, j);
        megatron_options options;
        for (const auto& a : flags) options.take(a, j);
        options.finish(j, read);
    } catch (const config_error& e) {
        throw config_error(std::string("other_flags: ") + e.what());
    }
    using detail::has;
    const auto f = detail::lowered(row.other_flags);
    auto& p = j.parallel;
    if (has(f, "grouped gemm") || has(f, "groupedmlp"))
        p.grouped_gemm = !(has(f, "no grouped gemm") || has(f, "sequentialmlp"));
    if (has(f, "alltoall") || has(f, "all-to-all") || has(f, "all_to_all"))
        p.dispatcher = moe_dispatcher::alltoall;
    if (has(f, "allgather token dispatcher") || has(f, "dispatcher allgather"))
        p.dispatcher = moe_dispatcher::allgather;
    return read.unknown;
}

/// Sharding named in a Megatron row (table_notation::sharding_of): Megatron-FSDP's --data-parallel-sharding-strategy
/// (optim, optim_grads, optim_grads_params; megatron/core/distributed/fsdp/src/megatron_fsdp/param_and_grad_buffer.py
/// @d98e8a64), torch FSDP2, else nothing (the common free-text mapping of the cell).
inline std::optional<sharding> table_sharding(const std::string& sharding_cell, const std::string& flags) {
    using detail::has;
    const auto t = detail::lowered(sharding_cell + " " + flags);
    const auto cell = detail::lowered(sharding_cell);
    if (has(t, "megatron-fsdp") || has(t, "megatron fsdp") || has(t, "megatron_fsdp") ||
        has(t, "custom fsdp") || has(t, "custom-fsdp") || has(t, "optim_grads") ||
        (has(cell, "fsdp") && !has(cell, "torch"))) {
        if (has(t, "optim_grads_params") || has(cell, "full")) return sharding::full;
        if (has(t, "optim_grads")) return sharding::gradients;
        if (has(t, "no_shard")) return sharding::none;
        if (has(t, "strategy optim") || has(t, "strategy=optim")) return sharding::optimizer;
        return sharding::full;  // --data-parallel-sharding-strategy defaults to optim_grads_params
    }
    // --use-torch-fsdp2 (megatron/core/distributed/torch_fully_sharded_data_parallel.py): fully_shard.
    if (has(cell, "fsdp2") || has(cell, "torch fsdp") || has(cell, "torch-fsdp")) return sharding::full;
    return std::nullopt;
}

}  // namespace frameworks::megatron

}  // namespace frenzy
