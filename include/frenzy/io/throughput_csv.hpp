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
/// Short label of a row's source, the unit of leave-one-source-out validation.
inline std::string source_group(const std::string& source, const std::string& gpu) {
    const auto t = lower(source);
    if (contains(t, "llm-foundry")) return contains(gpu, "h100") ? "llm-foundry H100" : "llm-foundry A100";
    if (contains(t, "tables.tex")) return "Megatron-LM 2020";
    if (contains(t, "cases_april2021") || contains(t, "sc'21")) return "Megatron-LM SC'21";
    if (contains(t, "korthikanti") || contains(t, "mfu/hfu")) return "Korthikanti 2022";
    if (contains(t, "nemo")) return "NeMo 24.07 H100";
    const auto sp = source.find(' ');
    return source.substr(0, sp);
}
}  // namespace detail

/// Measured tokens/s per GPU: positive and below 1e9 (a GPU of 1e6 TFLOPS on a 1-parameter model is ~1e17; real
/// rows are 1e2..1e5, so 1e9 rejects only nonsense).
inline constexpr real_bound real_bound_tokens_per_s = bounds::tokens_per_s;

/// Reads throughput samples from CSV text with the columns of measured_calibration.csv. Required columns:
/// gpu_type, num_layers, hidden, heads, ffn_hidden, vocab, seq_len, micro_batch, global_batch_seqs, dp, tp, pp,
/// tokens_per_s_per_gpu; optional: row_id, framework, interconnect, kv_heads, mlp_type, vpp, cp, sharding,
/// recompute, sequence_parallel, precision, step_time_s, source. Lines starting with '#' are comments.
/// Rows without a measured tokens/s or a micro-batch size, and fine-tuning rows on packed sequences, are skipped
/// (their ids go to `skipped`).
inline std::vector<throughput_sample> read_throughput_csv(std::istream& in, const std::string& name = "csv",
                                                          const gpu_catalog& cat = gpu_catalog{},
                                                          std::vector<std::string>* skipped = nullptr) {
    std::string line;
    std::vector<std::string> header;
    std::size_t lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        if (line.empty() || line[0] == '#') continue;
        header = detail::split_csv_line(line);
        break;
    }
    if (header.empty()) throw io_error(frenzy::printable(name, 200) + ": no header line");
    // io/csv.hpp's columns: unnamed or repeated columns are errors, every row has one field per column
    const auto columns = detail::csv_columns_from_header(header, name);
    for (const char* req : {"gpu_type", "num_layers", "hidden", "heads", "ffn_hidden", "vocab", "seq_len", "micro_batch",
                            "global_batch_seqs", "dp", "tp", "pp", "tokens_per_s_per_gpu"})
        if (!columns.has(req)) throw config_error(columns.source + ": header: column " + req + " is missing");
    std::vector<throughput_sample> out;
    if (skipped) skipped->clear();
    while (std::getline(in, line)) {
        ++lineno;
        if (line.empty() || line[0] == '#') continue;
        const auto f = detail::split_csv_line(line);
        if (f.size() == 1 && detail::trim(f[0]).empty()) continue;
        columns.check_width(f, lineno);
        const std::string where = columns.source + ":" + std::to_string(lineno);
        auto get = [&](const char* c) -> std::string { return columns.cell(f, c); };
        auto num = [&](const char* c, double dflt) -> double {
            const auto v = get(c);
            if (detail::trim(v).empty() || v == "n/a") return dflt;
            const double d = detail::number_from_text(v, get("model"), c);
            if (std::isnan(d)) throw frenzy::field_error(c, "\"" + v + "\"", "is not a number");
            return d;
        };
        auto opt_num = [&](const char* c, double dflt) -> double {  // optional: a cell without a number -> default
            const double d = detail::number_from_text(get(c), get("model"), c);
            return std::isnan(d) ? dflt : d;
        };
        // counts: finite and inside int64 before rounding (llround of 1e30 is undefined); validate() bounds them
        auto to_int = [&](const char* c, double d) {
            if (!(std::fabs(d) <= 9007199254740992.0))  // 2^53
                throw frenzy::field_error(c, d, "is not an integer count (at most 2^53)");
            return static_cast<std::int64_t>(std::llround(d));
        };
        auto integer = [&](const char* c, double dflt) { return to_int(c, num(c, dflt)); };
        throughput_sample s;
        s.id = get("row_id").empty() ? std::to_string(lineno) : get("row_id");
        s.source = get("source");
        // nothing measured, the batch not given (Korthikanti et al. 2022's recalled baseline rows), or fine-tuning on
        // packed sequences (NeMo's SFT rows: attention runs per packed sample, which a job spec cannot express)
        bool no_measure = false;
        try {
            no_measure = std::isnan(detail::number_from_text(get("tokens_per_s_per_gpu"), "", "tokens_per_s_per_gpu"));
        } catch (const config_error& e) {
            throw config_error(where + ": " + e.what());
        }
        if (no_measure || detail::trim(get("micro_batch")).empty() ||
            detail::contains(detail::lower(get("model")), "packed")) {
            if (skipped) skipped->push_back(s.id);
            continue;
        }
        try {
            s.gpu = detail::gpu_name_from_text(get("gpu_type"), cat);
            auto& m = s.job.model;
            m.name = get("model").empty() ? "row-" + s.id : get("model");
            m.layers = integer("num_layers", 0);
            m.hidden = integer("hidden", 0);
            m.heads = integer("heads", 0);
            m.kv_heads = to_int("kv_heads", opt_num("kv_heads", 0));
            m.ffn_hidden = integer("ffn_hidden", 0);
            m.vocab = integer("vocab", 0);
            const auto mlp = detail::lower(get("mlp_type"));
            m.activation = detail::contains(mlp, "swiglu")         ? activation::swiglu
                           : detail::contains(mlp, "squared-relu") ? activation::squared_relu
                                                                    : activation::gelu;
            m.position_embedding = position_embedding::rope;  // no effect on FLOPs
            m.bias = false;
            auto& t = s.job.training;
            t.seq_len = integer("seq_len", 0);
            t.micro_batch = integer("micro_batch", 0);
            t.global_batch = integer("global_batch_seqs", 0);
            t.precision = get("precision").empty() ? precision::bf16_mixed : detail::precision_from_text(get("precision"));
            auto& p = s.job.parallel;
            p.dp = integer("dp", 1);
            p.tp = integer("tp", 1);
            p.pp = integer("pp", 1);
            p.vpp = to_int("vpp", opt_num("vpp", 1));
            p.cp = to_int("cp", opt_num("cp", 1));
            p.ep = to_int("ep", opt_num("ep", 1));
            if (p.vpp > 1) p.schedule = pipeline_schedule::interleaved;
            p.sharding = detail::sharding_from_text(get("sharding"));
            const auto rc = detail::lower(get("recompute"));
            // "per NeMo recipe (not stated)": NeMo 24.07's pretraining recipes run these layouts without recompute
            p.recompute = detail::contains(rc, "not stated") ? recompute::none : detail::recompute_from_text(get("recompute"));
            const auto sp = detail::lower(detail::trim(get("sequence_parallel")));
            p.sequence_parallel = sp.rfind("yes", 0) == 0 || sp == "true" || sp == "1" ||
                                  (detail::contains(sp, "tp>1") && p.tp > 1);  // "typically on when TP>1"
            const auto fw = detail::lower(get("framework"));
            s.job.runtime.framework = fw.empty() ? framework::megatron : detail::framework_from_text(get("framework"));
            const auto opts = detail::lower(get("other_opts"));
            // NeMo 2.0 runs Megatron-Core with overlap_grad_reduce/overlap_param_gather on (MegatronStrategy's
            // default DistributedDataParallelConfig) and userbuffer TP overlap in its performance recipes
            // (MegatronCommOverlapCallback(tp_comm_overlap=True), nemo/collections/llm/recipes/*)
            const bool nemo = detail::contains(fw, "nemo");
            s.job.runtime.tp_comm_overlap = (nemo && p.tp > 1) || detail::contains(opts, "tp-comm-overlap");
            s.job.runtime.overlap_grad_reduce = nemo || detail::contains(opts, "overlap-grad-reduce");
            s.job.name = m.name;
            s.topo.gpus_per_node = cat.at(s.gpu).gpus_per_node;
            s.topo.network_gbps = detail::network_from_text(get("interconnect"));
            s.tokens_per_s_per_gpu = num("tokens_per_s_per_gpu", 0);
            s.step_time_s = opt_num("step_time_s", 0);
            frenzy::check_bound("step_time_s", s.step_time_s, bounds::seconds);
            frenzy::check_bound("tokens_per_s_per_gpu", s.tokens_per_s_per_gpu, real_bound_tokens_per_s);
            s.group = detail::source_group(s.source, s.gpu);
            validate(s.job);
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
