#pragma once
// The throughput CSV format of data/throughput/*.csv (and users' files with the same columns; the shared
// files' free-text cells are mapped as documented in docs/perf-model.md) -> throughput samples for the step-time
// calibration (perf/calibration.hpp). Errors name file:line and the column.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/io/csv.hpp"
#include "frenzy/io/file.hpp"
#include "frenzy/perf/throughput_sample.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

namespace detail {
/// Catalog name of a GPU description: a catalog name as is, or the free text of the shared data set.
inline std::string gpu_name_from_text(const std::string& text, const gpu_catalog& cat) {
    if (cat.find(text)) return text;
    const auto t = lower(text);
    if (contains(t, "h200")) return contains(t, "nvl") ? "h200-nvl" : "h200";
    if (contains(t, "h100")) return contains(t, "pcie") ? "h100-pcie" : "h100-80g";
    if (contains(t, "a100")) return contains(t, "80") ? "a100-80g" : "a100-40g";  // DGX-A100 (2020) = 40 GB
    if (contains(t, "v100")) return contains(t, "16") ? "v100-16g" : "v100-32g";
    if (contains(t, "3090")) return "rtx-3090";
    if (contains(t, "4090")) return "rtx-4090";
    if (contains(t, "l40s")) return "l40s";
    for (const char* n : {"gb300", "gb200", "b300", "b200", "mi355x", "mi325x", "mi300x"})  // GB before B: "gb200" holds "b200"
        if (contains(t, n) && cat.find(n)) return n;
    throw config_error("gpu_type=\"" + printable(text) + "\" is not a catalog name and not recognised");
}
inline precision precision_from_text(const std::string& text) {
    const auto t = lower(text);
    for (const auto& [e, n] : enum_names<precision>::table)
        if (t == n) return e;
    if (contains(t, "fp8")) return precision::fp8_mixed;
    if (contains(t, "fp16")) return precision::fp16_mixed;
    if (contains(t, "bf16")) return precision::bf16_mixed;  // llm-foundry "PURE" keeps fp32 optimizer states
    if (contains(t, "fp32")) return precision::fp32;
    if (contains(t, "fp4")) return precision::fp4_mixed;
    if (contains(t, "mixed")) return precision::bf16_mixed;  // "mixed (not stated)": bf16 and fp16 peaks are equal on A100
    throw config_error("precision=\"" + printable(text) + "\" is not recognised");
}
inline framework framework_from_text(const std::string& text) {
    const auto t = lower(text);
    for (const auto f : framework_catalog())
        if (t == f.name()) return f;
    if (const auto f = framework_mentioned_in(t)) return *f;
    throw config_error("framework=\"" + printable(text) + "\" is not recognised");
}
/// Node bandwidth in GB/s from a text like "1600 Gbps node-node interconnect" or "8x 200 Gb/s HDR InfiniBand per
/// node" (a leading "N x" multiplies); 0 when none is given.
inline double network_from_text(const std::string& text) {
    const auto t = lower(text);
    auto pos = t.find("gbps");
    if (pos == std::string::npos) pos = t.find("gb/s");
    if (pos == std::string::npos) return 0;
    std::size_t b = pos;
    while (b > 0 && (std::isdigit(static_cast<unsigned char>(t[b - 1])) || t[b - 1] == ' ' || t[b - 1] == '.')) --b;
    double gbit = 0;
    std::size_t used = 0;
    while (b < pos && t[b] == ' ') ++b;
    if (!leading_number(std::string_view(t).substr(b, pos - b), gbit, used, "interconnect")) return 0;
    std::size_t x = b;
    while (x > 0 && t[x - 1] == ' ') --x;
    if (x > 0 && t[x - 1] == 'x') {  // "8x 200 Gb/s"
        std::size_t d = x - 1;
        while (d > 0 && std::isdigit(static_cast<unsigned char>(t[d - 1]))) --d;
        double n = 0;
        if (d < x - 1 && leading_number(std::string_view(t).substr(d, x - 1 - d), n, used, "interconnect")) gbit *= n;
    }
    return gbit / 8.0;
}
/// A number from a cell of a measurement table: "4096", "256000 (inferred)", "~50k"; "4 (22B) / 1 (others)"
/// picks the alternative whose label is in `model` (else "others"); a text with no leading number takes the first
/// number in it ("paper: small, e.g. 1-2" -> 1); GPT-2's BPE vocabulary is 50257 (Radford et al. 2019). Returns
/// NaN when the cell has no number at all; a literal past a double's range is a config_error naming `field`.
inline double number_from_text(const std::string& cell, const std::string& model, std::string_view field = "number") {
    const auto t = lower(trim(cell));
    if (t.empty()) return std::nan("");
    if (t == "inf" || t == "-inf" || t == "+inf" || t == "infinity" || t == "-infinity" || t == "nan")
        throw field_error(field, trim(cell), "must be a finite number");  // never a silent default
    if (contains(t, "gpt-2 bpe")) return 50257;
    if (t.find('/') != std::string::npos && t.find('(') != std::string::npos) {
        std::string others;
        std::stringstream ss(t);
        std::string part;
        const auto mdl = lower(model);
        while (std::getline(ss, part, '/')) {
            const auto o = part.find('('), c = part.find(')');
            if (o == std::string::npos || c == std::string::npos || c < o) continue;
            const auto label = trim(part.substr(o + 1, c - o - 1));
            if (label == "others") others = part;
            else if (!label.empty() && contains(mdl, label)) return number_from_text(part.substr(0, o), model, field);
        }
        if (!others.empty()) return number_from_text(others.substr(0, others.find('(')), model, field);
    }
    std::size_t i = 0;
    while (i < t.size() && (t[i] == '~' || t[i] == ' ')) ++i;
    double v = 0;
    std::size_t used = 0;
    if (leading_number(std::string_view(t).substr(i), v, used, field))
        return i + used < t.size() && t[i + used] == 'k' ? v * 1000 : v;
    for (std::size_t k = 0; k < t.size(); ++k)
        if (std::isdigit(static_cast<unsigned char>(t[k])) && leading_number(std::string_view(t).substr(k), v, used, field))
            return v;
    return std::nan("");
}
/// The fp8 recipe named in a table's free text (the column `fp8_recipe`): MXFP8, rowwise, tensorwise (per-tensor
/// current scaling), blockwise, delayed; empty or naming none: the framework's default.
inline std::optional<fp8_recipe> fp8_recipe_from_text(const std::string& text) {
    const auto t = lower(text);
    if (contains(t, "mxfp8")) return fp8_recipe::mxfp8;
    if (contains(t, "rowwise")) return fp8_recipe::rowwise;
    if (contains(t, "tensorwise") || contains(t, "current scaling")) return fp8_recipe::tensorwise;
    if (contains(t, "blockwise")) return fp8_recipe::blockwise;
    if (contains(t, "delayed")) return fp8_recipe::delayed;
    return std::nullopt;
}
/// Short label of a row's source, the unit of leave-one-source-out validation.
inline std::string source_group(const std::string& source, const std::string& gpu) {
    const auto t = lower(source);
    // wild_2026-12.csv: one group per publication and GPU (its tables are per GPU)
    if (contains(t, "pytorch/ao")) return (contains(t, "moe_training") ? "torchao MoE " : "torchao ") + gpu;
    if (contains(t, "training_results_v")) return "MLPerf " + gpu;
    if (contains(t, "llmq")) return "llmq " + gpu;
    if (contains(t, "tables.tex")) return "Megatron-LM 2020";
    if (contains(t, "cases_april2021") || contains(t, "sc'21")) return "Megatron-LM SC'21";
    if (contains(t, "korthikanti") || contains(t, "mfu/hfu")) return "Korthikanti 2022";
    if (contains(t, "nemo")) return "NeMo 24.07 H100";
    // a repository's own tables ("owner/name @commit path", as llm-foundry's): one group per repository and GPU
    // family ("a100-40g" -> A100), its tables being per GPU
    const auto first = source.substr(0, source.find(' '));
    if (const auto slash = first.find('/'); slash != std::string::npos && slash + 1 < first.size()) {
        auto family = gpu.substr(0, gpu.find('-'));
        for (auto& c : family) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return first.substr(slash + 1) + " " + family;
    }
    return first;
}
}  // namespace detail

/// Measured tokens/s per GPU: positive and below 1e9 (a GPU of 1e6 TFLOPS on a 1-parameter model is ~1e17; real
/// rows are 1e2..1e5, so 1e9 rejects only nonsense).
inline constexpr real_bound real_bound_tokens_per_s = bounds::tokens_per_s;

namespace detail {

/// One data row of a throughput table, read by column name.
struct throughput_row {
    const csv_columns& columns;
    const std::vector<std::string>& f;

    std::string get(const char* c) const { return columns.cell(f, c); }
    /// A required number: an empty or "n/a" cell is `dflt`, any other cell without a number an error.
    double num(const char* c, double dflt) const {
        const auto v = get(c);
        if (trim(v).empty() || v == "n/a") return dflt;
        const double d = number_from_text(v, get("model"), c);
        if (std::isnan(d)) throw frenzy::field_error(c, "\"" + v + "\"", "is not a number");
        return d;
    }
    /// An optional number: a cell without a number is `dflt`.
    double opt_num(const char* c, double dflt) const {
        const double d = number_from_text(get(c), get("model"), c);
        return std::isnan(d) ? dflt : d;
    }
    /// counts: finite and inside int64 before rounding (llround of 1e30 is undefined); validate() bounds them
    static std::int64_t to_int(const char* c, double d) {
        if (!(std::fabs(d) <= 9007199254740992.0))  // 2^53
            throw frenzy::field_error(c, d, "is not an integer count (at most 2^53)");
        return static_cast<std::int64_t>(std::llround(d));
    }
    std::int64_t integer(const char* c, double dflt) const { return to_int(c, num(c, dflt)); }
};

/// The header line (the first that is not empty or a '#' comment) -> the table's columns; the required ones must be
/// there. `lineno` counts the lines read.
inline csv_columns read_throughput_header(std::istream& in, const std::string& name, std::size_t& lineno) {
    std::string line;
    std::vector<std::string> header;
    while (std::getline(in, line)) {
        ++lineno;
        if (line.empty() || line[0] == '#') continue;
        header = split_csv_line(line);
        break;
    }
    if (header.empty()) throw io_error(frenzy::printable(name, 200) + ": no header line");
    // io/csv.hpp's columns: unnamed or repeated columns are errors, every row has one field per column
    auto columns = csv_columns_from_header(header, name);
    for (const char* req : {"gpu_type", "num_layers", "hidden", "heads", "ffn_hidden", "vocab", "seq_len", "micro_batch",
                            "global_batch_seqs", "dp", "tp", "pp", "tokens_per_s_per_gpu"})
        if (!columns.has(req)) throw config_error(columns.source + ": header: column " + req + " is missing");
    return columns;
}

/// A row the calibration cannot use: nothing measured, the batch not given (Korthikanti et al. 2022's recalled
/// baseline rows), fine-tuning on packed sequences (NeMo's SFT rows: attention runs per packed sample, which a job
/// spec cannot express), or a row whose `model_gap` names what the model cannot express yet (wild_2026-12.csv).
/// Errors are prefixed with `where`.
inline bool throughput_row_unusable(const throughput_row& r, const std::string& where) {
    bool no_measure = false;
    try {
        no_measure = std::isnan(number_from_text(r.get("tokens_per_s_per_gpu"), "", "tokens_per_s_per_gpu"));
    } catch (const config_error& e) {
        throw config_error(where + ": " + e.what());
    }
    return no_measure || trim(r.get("micro_batch")).empty() || contains(lower(r.get("model")), "packed") ||
           !trim(r.get("model_gap")).empty();
}

/// The model columns (shape and MLP; the position embedding and biases have no effect on FLOPs).
inline void read_throughput_model(const throughput_row& r, const std::string& id, transformer_spec& m) {
    m.name = r.get("model").empty() ? "row-" + id : r.get("model");
    m.layers = r.integer("num_layers", 0);
    m.hidden = r.integer("hidden", 0);
    m.heads = r.integer("heads", 0);
    m.kv_heads = r.to_int("kv_heads", r.opt_num("kv_heads", 0));
    m.ffn_hidden = r.integer("ffn_hidden", 0);
    m.vocab = r.integer("vocab", 0);
    const auto mlp = lower(r.get("mlp_type"));
    m.activation = contains(mlp, "swiglu")         ? activation::swiglu
                   : contains(mlp, "squared-relu") ? activation::squared_relu
                                                    : activation::gelu;
    m.position_embedding = position_embedding::rope;  // no effect on FLOPs
    m.bias = false;
    // optional MoE columns (wild_2026-12.csv): routed experts, top-k, expert width, shared experts
    m.moe.experts = r.to_int("moe_experts", r.opt_num("moe_experts", 0));
    m.moe.top_k = r.to_int("moe_top_k", r.opt_num("moe_top_k", 0));
    m.moe.expert_ffn_hidden = r.to_int("moe_expert_ffn_hidden", r.opt_num("moe_expert_ffn_hidden", 0));
    m.moe.shared_experts = r.to_int("moe_shared_experts", r.opt_num("moe_shared_experts", 0));
}

/// The training and layout columns (batch, precision, degrees, sharding, recompute, sequence parallelism).
inline void read_throughput_layout(const throughput_row& r, job_spec& job) {
    auto& t = job.training;
    t.seq_len = r.integer("seq_len", 0);
    t.micro_batch = r.integer("micro_batch", 0);
    t.global_batch = r.integer("global_batch_seqs", 0);
    t.precision = r.get("precision").empty() ? precision::bf16_mixed : precision_from_text(r.get("precision"));
    auto& p = job.parallel;
    p.dp = r.integer("dp", 1);
    p.tp = r.integer("tp", 1);
    p.pp = r.integer("pp", 1);
    p.vpp = r.to_int("vpp", r.opt_num("vpp", 1));
    p.cp = r.to_int("cp", r.opt_num("cp", 1));
    p.ep = r.to_int("ep", r.opt_num("ep", 1));
    if (p.vpp > 1) p.schedule = pipeline_schedule::interleaved;
    p.sharding = sharding_from_text(r.get("sharding"));
    const auto rc = lower(r.get("recompute"));
    // "per NeMo recipe (not stated)": NeMo 24.07's pretraining recipes run these layouts without recompute
    p.recompute = contains(rc, "not stated") ? recompute::none : recompute_from_text(r.get("recompute"));
    const auto sp = lower(trim(r.get("sequence_parallel")));
    p.sequence_parallel = sp.rfind("yes", 0) == 0 || sp == "true" || sp == "1" ||
                          (contains(sp, "tp>1") && p.tp > 1);  // "typically on when TP>1"
}

/// The framework column (empty: Megatron) and the overlap options its rows run with.
inline void read_throughput_runtime(const throughput_row& r, job_spec& job) {
    const auto fw = lower(r.get("framework"));
    job.runtime.framework = fw.empty() ? framework::by_default : framework_from_text(r.get("framework"));
    const auto opts = lower(r.get("other_opts"));
    // NeMo 2.0 runs Megatron-Core with overlap_grad_reduce/overlap_param_gather on (MegatronStrategy's
    // default DistributedDataParallelConfig) and userbuffer TP overlap in its performance recipes
    // (MegatronCommOverlapCallback(tp_comm_overlap=True), nemo/collections/llm/recipes/*)
    const bool nemo = contains(fw, "nemo");
    job.runtime.tp_comm_overlap = (nemo && job.parallel.tp > 1) || contains(opts, "tp-comm-overlap");
    job.runtime.overlap_grad_reduce = nemo || contains(opts, "overlap-grad-reduce");
    // NeMo 2.0's fp8 recipes keep the GEMM weights in fp8 only (NVIDIA/NeMo@1dd5fa11
    // nemo/collections/llm/recipes/precision/mixed_precision.py bf16_with_fp8_mixed: fp8_params = True, which
    // MegatronMixedPrecision passes on as Megatron-Core's fp8_param_gather), with the distributed optimizer.
    job.runtime.fp8_param_gather = (nemo && job.training.precision == precision::fp8_mixed &&
                                    job.parallel.sharding != sharding::none) || contains(opts, "fp8-param-gather");
    job.runtime.attention = attention_from_text(r.get("attention_impl"));
    job.runtime.compile = contains(opts, "torch.compile");
    // LLMQ's --lmhead-chunks=N: the logits and their loss computed N token chunks at a time (memory only)
    if (const auto k = opts.find("lmhead-chunks="); k != std::string::npos)
        job.runtime.loss_chunks = r.to_int("other_opts", number_from_text(opts.substr(k + 14), "", "other_opts"));
    // Megatron --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split
    job.parallel.embedding_stage = contains(opts, "account-for-embedding-in-pipeline-split");
    job.parallel.loss_stage = contains(opts, "account-for-loss-in-pipeline-split");
    if (job.training.precision == precision::fp8_mixed || job.training.precision == precision::fp4_mixed)
        job.runtime.fp8_recipe = fp8_recipe_from_text(r.get("fp8_recipe"));
}

/// The sample of a usable row: GPU, job, topology, measured rate and step time, source group; the job validated.
inline void read_throughput_sample(const throughput_row& r, const gpu_catalog& cat, throughput_sample& s) {
    s.gpu = gpu_name_from_text(r.get("gpu_type"), cat);
    read_throughput_model(r, s.id, s.job.model);
    read_throughput_layout(r, s.job);
    read_throughput_runtime(r, s.job);
    s.job.name = s.job.model.name;
    s.topo.gpus_per_node = cat.at(s.gpu).gpus_per_node;
    s.topo.network_GBps = network_from_text(r.get("interconnect"));
    s.tokens_per_s_per_gpu = r.num("tokens_per_s_per_gpu", 0);
    s.step_time_s = r.opt_num("step_time_s", 0);
    frenzy::check_bound("step_time_s", s.step_time_s, bounds::seconds);
    frenzy::check_bound("tokens_per_s_per_gpu", s.tokens_per_s_per_gpu, real_bound_tokens_per_s);
    s.group = source_group(s.source, s.gpu);
    validate(s.job);
}

}  // namespace detail

/// Reads throughput samples from CSV text with the columns of measured_calibration.csv. Required columns:
/// gpu_type, num_layers, hidden, heads, ffn_hidden, vocab, seq_len, micro_batch, global_batch_seqs, dp, tp, pp,
/// tokens_per_s_per_gpu; optional: row_id, framework, interconnect, kv_heads, mlp_type, vpp, cp, sharding,
/// recompute, sequence_parallel, precision, attention_impl, step_time_s, source, fp8_recipe, moe_experts, moe_top_k,
/// moe_expert_ffn_hidden, moe_shared_experts, model_gap. Lines starting with '#' are comments. Rows without a
/// measured tokens/s or a micro-batch size, fine-tuning rows on packed sequences and rows with a `model_gap` are
/// skipped (their ids go to `skipped`).
inline std::vector<throughput_sample> read_throughput_csv(std::istream& in, const std::string& name = "csv",
                                                          const gpu_catalog& cat = gpu_catalog{},
                                                          std::vector<std::string>* skipped = nullptr) {
    std::size_t lineno = 0;
    const auto columns = detail::read_throughput_header(in, name, lineno);
    std::vector<throughput_sample> out;
    if (skipped) skipped->clear();
    std::string line;
    while (std::getline(in, line)) {
        ++lineno;
        if (line.empty() || line[0] == '#') continue;
        const auto f = detail::split_csv_line(line);
        if (f.size() == 1 && detail::trim(f[0]).empty()) continue;
        columns.check_width(f, lineno);
        const std::string where = columns.source + ":" + std::to_string(lineno);
        const detail::throughput_row r{columns, f};
        throughput_sample s;
        s.id = r.get("row_id").empty() ? std::to_string(lineno) : r.get("row_id");
        s.source = r.get("source");
        if (detail::throughput_row_unusable(r, where)) {
            if (skipped) skipped->push_back(s.id);
            continue;
        }
        try {
            detail::read_throughput_sample(r, cat, s);
        } catch (const config_error& e) {
            throw config_error(where + ": " + e.what());
        }
        if (!(s.tokens_per_s_per_gpu > 0))
            throw config_error(where + ": tokens_per_s_per_gpu=" + frenzy::number_text(s.tokens_per_s_per_gpu) +
                               " must be positive");
        out.push_back(std::move(s));
    }
    return out;
}

inline std::vector<throughput_sample> load_throughput_csv(const std::string& path, const gpu_catalog& cat = gpu_catalog{},
                                                          std::vector<std::string>* skipped = nullptr) {
    std::istringstream in(frenzy::read_file_limited(path));  // regular files only: /dev/zero is refused (io/file.hpp)
    return read_throughput_csv(in, path, cat, skipped);
}

}  // namespace frenzy
