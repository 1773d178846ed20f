#pragma once
// Calibration of the compute-efficiency coefficients (perf/efficiency.hpp) from measured throughputs:
// a reader for the throughput CSV format of ../shared/data/throughput/*.csv (users' files with the same columns
// too; the shared files' free-text cells are mapped as documented in docs/perf-model.md), a Levenberg-Marquardt
// fit of the relative (log) error of step time with Eigen, k-fold and leave-one-source-out cross-validation, and
// JSON (de)serialisation of the result so that `frenzy plan/estimate --calibration FILE` can load it.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "frenzy/core/error.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/io/csv.hpp"
#include "frenzy/io/json_reader.hpp"
#include "frenzy/perf/efficiency.hpp"
#include "frenzy/perf/error_band.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// One measured run: the job (with its parallel layout), where it ran, and what was measured.
struct throughput_sample {
    std::string id;                  ///< row_id
    job_spec job;
    std::string gpu;                 ///< catalog name
    topology topo{};
    double tokens_per_s_per_gpu = 0; ///< measured
    double step_time_s = 0;          ///< measured or derived; 0 = unknown
    std::string source;
    std::string group;               ///< short source label for leave-one-source-out (source_group())
};

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
    throw config_error("gpu_type=\"" + text + "\" is not a catalog name and not recognised");
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
    throw config_error("precision=\"" + text + "\" is not recognised");
}
inline framework framework_from_text(const std::string& text) {
    const auto t = lower(text);
    for (const auto& [e, n] : enum_names<framework>::table)
        if (t == n) return e;
    if (contains(t, "fsdp")) return framework::fsdp;
    if (contains(t, "megatron")) return framework::megatron;
    if (contains(t, "deepspeed")) return framework::deepspeed;
    if (contains(t, "ddp")) return framework::ddp;
    throw config_error("framework=\"" + text + "\" is not recognised");
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
    try {
        gbit = std::stod(t.substr(b, pos - b));
    } catch (...) {
        return 0;
    }
    std::size_t x = b;
    while (x > 0 && t[x - 1] == ' ') --x;
    if (x > 0 && t[x - 1] == 'x') {  // "8x 200 Gb/s"
        std::size_t d = x - 1;
        while (d > 0 && std::isdigit(static_cast<unsigned char>(t[d - 1]))) --d;
        if (d < x - 1) gbit *= std::stod(t.substr(d, x - 1 - d));
    }
    return gbit / 8.0;
}
/// A number from a cell of a measurement table: "4096", "256000 (inferred)", "~50k"; "4 (22B) / 1 (others)"
/// picks the alternative whose label is in `model` (else "others"); a text with no leading number takes the first
/// number in it ("paper: small, e.g. 1-2" -> 1); GPT-2's BPE vocabulary is 50257 (Radford et al. 2019). Returns
/// NaN when the cell has no number at all.
inline double number_from_text(const std::string& cell, const std::string& model) {
    const auto t = lower(trim(cell));
    if (t.empty()) return std::nan("");
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
            else if (!label.empty() && contains(mdl, label)) return number_from_text(part.substr(0, o), model);
        }
        if (!others.empty()) return number_from_text(others.substr(0, others.find('(')), model);
    }
    std::size_t i = 0;
    while (i < t.size() && (t[i] == '~' || t[i] == ' ')) ++i;
    std::size_t used = 0;
    try {
        const double v = std::stod(t.substr(i), &used);
        if (used > 0) return i + used < t.size() && t[i + used] == 'k' ? v * 1000 : v;
    } catch (...) {
    }
    for (std::size_t k = 0; k < t.size(); ++k)
        if (std::isdigit(static_cast<unsigned char>(t[k]))) return std::stod(t.substr(k));
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
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        header = detail::split_csv_line(line);
        break;
    }
    if (header.empty()) throw io_error(name + ": no header line");
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
    for (const char* req : {"gpu_type", "num_layers", "hidden", "heads", "ffn_hidden", "vocab", "seq_len", "micro_batch",
                            "global_batch_seqs", "dp", "tp", "pp", "tokens_per_s_per_gpu"})
        if (!col.contains(req)) throw config_error(name + ": column " + req + " is missing");
    std::vector<throughput_sample> out;
    if (skipped) skipped->clear();
    int lineno = 1;
    while (std::getline(in, line)) {
        ++lineno;
        if (line.empty() || line[0] == '#') continue;
        const auto f = detail::split_csv_line(line);
        const std::string where = name + ":" + std::to_string(lineno);
        auto get = [&](const char* c) -> std::string {
            auto it = col.find(c);
            return it == col.end() || it->second >= f.size() ? std::string{} : f[it->second];
        };
        auto num = [&](const char* c, double dflt) -> double {
            const auto v = get(c);
            if (detail::trim(v).empty() || v == "n/a") return dflt;
            const double d = detail::number_from_text(v, get("model"));
            if (std::isnan(d)) throw config_error(where + ": " + c + "=\"" + v + "\" is not a number");
            return d;
        };
        auto opt_num = [&](const char* c, double dflt) -> double {  // optional: a cell without a number -> default
            const double d = detail::number_from_text(get(c), get("model"));
            return std::isnan(d) ? dflt : d;
        };
        auto integer = [&](const char* c, double dflt) { return static_cast<std::int64_t>(std::llround(num(c, dflt))); };
        throughput_sample s;
        s.id = get("row_id").empty() ? std::to_string(lineno) : get("row_id");
        s.source = get("source");
        // nothing measured, the batch not given (Korthikanti et al. 2022's recalled baseline rows), or fine-tuning on
        // packed sequences (NeMo's SFT rows: attention runs per packed sample, which a job spec cannot express)
        if (std::isnan(detail::number_from_text(get("tokens_per_s_per_gpu"), "")) || detail::trim(get("micro_batch")).empty() ||
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
            m.kv_heads = static_cast<std::int64_t>(std::llround(opt_num("kv_heads", 0)));
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
            p.vpp = static_cast<std::int64_t>(std::llround(opt_num("vpp", 1)));
            p.cp = static_cast<std::int64_t>(std::llround(opt_num("cp", 1)));
            p.ep = static_cast<std::int64_t>(std::llround(opt_num("ep", 1)));
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
            s.group = detail::source_group(s.source, s.gpu);
            validate(s.job);
        } catch (const config_error& e) {
            throw config_error(where + ": " + e.what());
        }
        if (!(s.tokens_per_s_per_gpu > 0)) throw config_error(where + ": tokens_per_s_per_gpu must be positive");
        out.push_back(std::move(s));
    }
    return out;
}

inline std::vector<throughput_sample> load_throughput_csv(const std::string& path, const gpu_catalog& cat = gpu_catalog{},
                                                          std::vector<std::string>* skipped = nullptr) {
    std::istringstream in(detail::read_file_limited(path));  // regular files only: /dev/zero is refused (io/file.hpp)
    return read_throughput_csv(in, path, cat, skipped);
}

/// Measured step time of a sample: the file's, else global tokens / (tokens/s per GPU x GPUs).
inline double measured_step_time(const throughput_sample& s) {
    if (s.step_time_s > 0) return s.step_time_s;
    return s.job.tokens_per_step() / (s.tokens_per_s_per_gpu * static_cast<double>(s.job.parallel.gpus()));
}

/// Predicted tokens/s per GPU of a sample with the given coefficients.
inline double predict_tokens_per_gpu(const throughput_sample& s, const efficiency_model& e,
                                     const gpu_catalog& cat = gpu_catalog{}) {
    basic_step_time_model<> model(calibrated_compute{e});
    return model.predict(s.job, cat.at(s.gpu), s.topo).tokens_per_s_per_gpu;
}

/// Options of the fit.
struct fit_options {
    int iterations = 60;  ///< Levenberg-Marquardt iterations at most
    /// The shared terms (token and width penalties, shared attention efficiency, element-wise bandwidth
    /// efficiency, fp8 ratio, the default for chips without data) are fitted only from at least this many samples
    /// of at least two chips; a smaller file (a user's few runs on one type) fits only its chips' own
    /// coefficients and keeps the start's shared terms.
    int min_samples_for_shared = 30;
};

namespace detail {
/// Key of the coefficient entry a sample's GPU type fits: its chip, else its name.
inline std::string coefficient_key(const gpu_type& g) { return g.chip.empty() ? g.name : g.chip; }

/// Unknowns of a fit: which coefficient of the efficiency model each parameter is, with its lower bound.
struct fit_param {
    enum kind_t { inverse, scaled, attention, te_attention, token, width, shared_attention, memory } kind;
    std::string key;  ///< chip/type key for per-chip parameters
    double lower = 0;
};
inline gpu_coefficient& entry_ref(efficiency_model& e, const std::string& key) {
    for (auto& c : e.gpus)
        if (c.gpu == key) return c;
    throw config_error("calibration: no coefficient entry \"" + key + "\"");
}
/// Value of a parameter; the scaled-GEMM parameter is the ratio scaled / inverse of its chip (so that its bound
/// "fp8 GEMMs reach at most the fraction of their peak that bf16 GEMMs reach" is a constant).
inline double param_get(efficiency_model& e, const fit_param& p) {
    switch (p.kind) {
        case fit_param::inverse: return entry_ref(e, p.key).inverse;
        case fit_param::scaled: { auto& c = entry_ref(e, p.key); return c.scaled / c.inverse; }
        case fit_param::attention: return entry_ref(e, p.key).attention;
        case fit_param::te_attention: return entry_ref(e, p.key).te_attention;
        case fit_param::token: return e.token_penalty;
        case fit_param::width: return e.width_penalty;
        case fit_param::shared_attention: return e.attention_inverse;
        case fit_param::memory: return e.memory_inverse;
    }
    return 0;
}
/// Sets all parameters from `x` (clamped to their bounds); scaled ratios after the inverses they multiply.
inline void params_set(efficiency_model& e, const std::vector<fit_param>& ps, const Eigen::VectorXd& x) {
    for (std::size_t c = 0; c < ps.size(); ++c) {
        const auto& p = ps[c];
        const double v = std::max(p.lower, x(static_cast<Eigen::Index>(c)));
        switch (p.kind) {
            case fit_param::inverse: entry_ref(e, p.key).inverse = v; break;
            case fit_param::scaled: break;
            case fit_param::attention: entry_ref(e, p.key).attention = v; break;
            case fit_param::te_attention: entry_ref(e, p.key).te_attention = v; break;
            case fit_param::token: e.token_penalty = v; break;
            case fit_param::width: e.width_penalty = v; break;
            case fit_param::shared_attention: e.attention_inverse = v; break;
            case fit_param::memory: e.memory_inverse = v; break;
        }
    }
    for (std::size_t c = 0; c < ps.size(); ++c)
        if (ps[c].kind == fit_param::scaled) {
            auto& en = entry_ref(e, ps[c].key);
            en.scaled = en.inverse * std::max(ps[c].lower, x(static_cast<Eigen::Index>(c)));
        }
}
}  // namespace detail

/// Fits, by Levenberg-Marquardt on log(predicted / measured step time) (relative error, symmetric in over- and
/// under-prediction), with numeric derivatives through the whole step-time model (so every overlap and max() of
/// perf/step_time.hpp is respected): per chip present, the large-GEMM inverse efficiency, the fp8/fp4 one when the
/// chip has such samples, the attention one when >= 3 of its samples spend >= 20% of their FLOPs in attention;
/// shared: token and width penalties, shared attention, element-wise bandwidth efficiency. Bounds: GEMM inverse
/// efficiencies >= 1 (no GPU beats its peak), bandwidth inverse >= 1, penalties >= 0, attention >= 0.5 (the full
/// s^2 count is twice what a causal kernel does). Chips of `start` without samples keep their coefficients
/// (aliases are refreshed to their target).
inline efficiency_model fit_efficiency(const std::vector<throughput_sample>& samples,
                                       const efficiency_model& start = default_efficiency(),
                                       const gpu_catalog& cat = gpu_catalog{}, fit_options opt = {}) {
    if (samples.empty()) throw config_error("calibration: no samples to fit");
    efficiency_model cur = start;
    std::vector<std::string> keys;
    std::vector<const gpu_type*> gpu_of;
    // a sample fits its type's own entry when the start has one (calibration files keyed by type name), else its chip's
    auto key_of = [&](const gpu_type& g) { return start.entry(std::string_view(g.name)) ? g.name : detail::coefficient_key(g); };
    for (const auto& s : samples) {
        const auto& g = cat.at(s.gpu);
        gpu_of.push_back(&g);
        const auto k = key_of(g);
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    auto entry_of = [&](const std::string& k) -> gpu_coefficient& {
        for (auto& c : cur.gpus)
            if (c.gpu == k) return c;
        cur.gpus.push_back({k, cur.default_inverse, 0, "fit", 0});
        return cur.gpus.back();
    };
    for (const auto& k : keys) entry_of(k).source = "fit";
    const bool fit_shared = keys.size() >= 2 && static_cast<int>(samples.size()) >= opt.min_samples_for_shared;
    std::vector<detail::fit_param> params;
    bool any_shared_attention = false;
    for (const auto& k : keys) {
        int heavy = 0, scaled = 0, te_heavy = 0, other_heavy = 0;
        basic_step_time_model<> model(calibrated_compute{cur});
        for (std::size_t i = 0; i < samples.size(); ++i) {
            if (key_of(*gpu_of[i]) != k) continue;
            const auto b = model.predict(samples[i].job, *gpu_of[i], samples[i].topo).parts;
            const double share = b.attention_flops_mb / (b.attention_flops_mb + b.dense_flops_mb);
            const bool te = samples[i].job.runtime.framework == framework::megatron;
            if (share >= 0.2 && !te) ++other_heavy;
            if (share >= 0.1 && te) ++te_heavy;
            if (gpu_type::scaled_gemms(samples[i].job.training.precision)) ++scaled;
        }
        heavy = other_heavy;
        params.push_back({detail::fit_param::inverse, k, 1.0});
        auto& entry = entry_of(k);
        if (scaled > 0) {
            params.push_back({detail::fit_param::scaled, k, 1.0});
            if (!(entry.scaled > 0)) entry.scaled = entry.inverse * cur.fp8_ratio;
        }
        if (heavy >= 3) {
            params.push_back({detail::fit_param::attention, k, 0.5});
            if (!(entry.attention > 0)) entry.attention = cur.attention_inverse;
        } else {
            entry.attention = 0;
            any_shared_attention = true;
        }
        // Megatron-Core's attention (TE fused/cuDNN) gets its own value when >= 3 Megatron rows of the chip spend
        // >= 10% of their FLOPs in attention and the chip also has its own (non-Megatron) attention value
        if (te_heavy >= 3 && heavy >= 3) {
            params.push_back({detail::fit_param::te_attention, k, 0.5});
            if (!(entry.te_attention > 0)) entry.te_attention = entry.attention;
        } else {
            entry.te_attention = 0;
        }
    }
    bool any_own_attention = false;
    for (const auto& pr : params) any_own_attention = any_own_attention || pr.kind == detail::fit_param::attention;
    if (fit_shared) {
        params.push_back({detail::fit_param::token, "", 0.0});
        params.push_back({detail::fit_param::width, "", 0.0});
        params.push_back({detail::fit_param::memory, "", 1.0});
        // chips without long-sequence data: their attention follows their GEMM efficiency at the mean ratio of
        // the chips that have their own (set after the fit); only when no chip has its own is one shared value fitted
        if (any_shared_attention && !any_own_attention) {
            cur.attention_ratio = 0;
            params.push_back({detail::fit_param::shared_attention, "", 0.5});
        }
    }
    const int P = static_cast<int>(params.size()), N = static_cast<int>(samples.size());
    std::vector<double> measured(samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) measured[i] = measured_step_time(samples[i]);
    auto residuals = [&](const efficiency_model& e) {
        basic_step_time_model<> model(calibrated_compute{e});
        Eigen::VectorXd r(N);
        for (int i = 0; i < N; ++i) {
            const auto k = static_cast<std::size_t>(i);
            const auto est = model.predict(samples[k].job, *gpu_of[k], samples[k].topo);
            r(i) = std::log(est.step_time.value / measured[k]);
        }
        return r;
    };
    auto get_x = [&](efficiency_model& e) {
        Eigen::VectorXd x(P);
        for (int c = 0; c < P; ++c) x(c) = detail::param_get(e, params[static_cast<std::size_t>(c)]);
        return x;
    };
    auto set_x = [&](efficiency_model& e, const Eigen::VectorXd& x) { detail::params_set(e, params, x); };
    Eigen::VectorXd x = get_x(cur);
    set_x(cur, x);
    x = get_x(cur);
    Eigen::VectorXd r = residuals(cur);
    double cost = r.squaredNorm(), lambda = 1e-3;
    for (int it = 0; it < opt.iterations; ++it) {
        Eigen::MatrixXd J(N, P);
        for (int c = 0; c < P; ++c) {  // forward differences
            const double h = 1e-6 * std::max(1.0, std::abs(x(c)));
            Eigen::VectorXd xp = x;
            xp(c) += h;
            efficiency_model e = cur;
            set_x(e, xp);
            J.col(c) = (residuals(e) - r) / h;
        }
        const Eigen::MatrixXd A = J.transpose() * J;
        const Eigen::VectorXd g = J.transpose() * r;
        bool improved = false;
        for (int tries = 0; tries < 12 && !improved; ++tries) {
            Eigen::MatrixXd D = A;
            for (int c = 0; c < P; ++c) D(c, c) += lambda * std::max(A(c, c), 1e-12);
            const Eigen::VectorXd step = D.ldlt().solve(-g);
            Eigen::VectorXd xn = x + step;
            for (int c = 0; c < P; ++c) xn(c) = std::max(params[static_cast<std::size_t>(c)].lower, xn(c));
            efficiency_model e = cur;
            set_x(e, xn);
            const Eigen::VectorXd rn = residuals(e);
            const double cn = rn.squaredNorm();
            if (cn < cost) {
                const double gain = cost - cn;
                x = xn, r = rn, cur = e;
                lambda = std::max(1e-9, lambda / 4);
                improved = true;
                if (gain < 1e-14 * std::max(1.0, cost)) it = opt.iterations;  // converged
                cost = cn;
            } else {
                lambda *= 8;
            }
        }
        if (!improved) break;
    }
    // attention ratio for chips without their own attention value: the mean over fitted chips that have one
    if (fit_shared && any_own_attention) {
        double sum = 0;
        int cnt = 0;
        for (const auto& c : cur.gpus)
            if (c.source == "fit" && c.attention > 0 && std::find(keys.begin(), keys.end(), c.gpu) != keys.end()) {
                sum += c.attention / c.inverse;
                ++cnt;
            }
        if (cnt > 0) cur.attention_ratio = sum / cnt;
    }
    // scaled-GEMM ratio for chips without fp8 data: the mean over fitted chips that have both
    if (fit_shared) {
        double sum = 0;
        int cnt = 0;
        for (const auto& c : cur.gpus)
            if (c.source == "fit" && c.scaled > 0 && std::find(keys.begin(), keys.end(), c.gpu) != keys.end()) {
                sum += c.scaled / c.inverse;
                ++cnt;
            }
        if (cnt > 0) cur.fp8_ratio = sum / cnt;
    }
    // aliases follow their targets ("alias of KEY: ...")
    for (auto& c : cur.gpus)
        if (c.source.rfind("alias of ", 0) == 0) {
            const auto target = c.source.substr(9, c.source.find(':') - 9);
            for (const auto& d : cur.gpus)
                if (d.gpu == target && d.source == "fit") { c.inverse = d.inverse; c.attention = d.attention; c.scaled = d.scaled; }
        }
    // chips with no data and no alias: the least efficient fitted chip (a conservative default)
    double worst = 0;
    for (const auto& c : cur.gpus)
        if (c.source == "fit") worst = std::max(worst, c.inverse);
    if (worst > 0 && fit_shared) cur.default_inverse = worst;
    return cur;
}

/// Predicted against measured tokens/s per GPU for one sample in cross-validation.
struct cv_row {
    std::string id, gpu, model;
    int gpus = 0;
    double measured = 0, predicted = 0;
    std::string group;   ///< source label of the sample
    std::string regime;  ///< error-band regime (perf/error_band.hpp) of the sample
    double rel_error() const { return (predicted - measured) / measured; }
};

namespace detail {
inline cv_row make_cv_row(const throughput_sample& s, const efficiency_model& e, const gpu_catalog& cat) {
    return {s.id, s.gpu, s.job.model.name, static_cast<int>(s.job.parallel.gpus()), s.tokens_per_s_per_gpu,
            predict_tokens_per_gpu(s, e, cat), s.group, to_string(classify_regime(s.job, true))};
}
}  // namespace detail

/// k-fold cross-validation: rows are dealt to folds in file order (i mod k) so that every fold mixes sources;
/// each fold is predicted by a fit on the others.
inline std::vector<cv_row> cross_validate(const std::vector<throughput_sample>& samples, int k,
                                          const efficiency_model& start = default_efficiency(),
                                          const gpu_catalog& cat = gpu_catalog{}) {
    if (k < 2) throw config_error("calibration: folds=" + std::to_string(k) + " must be at least 2");
    std::vector<cv_row> out;
    for (int fold = 0; fold < k; ++fold) {
        std::vector<throughput_sample> train, test;
        for (std::size_t i = 0; i < samples.size(); ++i)
            (static_cast<int>(i % static_cast<std::size_t>(k)) == fold ? test : train).push_back(samples[i]);
        const auto e = fit_efficiency(train, start, cat);
        for (const auto& s : test) out.push_back(detail::make_cv_row(s, e, cat));
    }
    return out;
}

/// Leave-one-source-out validation: every source group (throughput_sample::group) is predicted by a fit on all
/// the other groups, started from `start` (pass a neutral start so that nothing of the held-out group leaks in
/// through the shipped constants). A chip seen only in the held-out group falls back to the default.
inline std::vector<cv_row> leave_one_source_out(const std::vector<throughput_sample>& samples,
                                                const efficiency_model& start, const gpu_catalog& cat = gpu_catalog{}) {
    std::vector<std::string> groups;
    for (const auto& s : samples)
        if (std::find(groups.begin(), groups.end(), s.group) == groups.end()) groups.push_back(s.group);
    std::vector<cv_row> out;
    for (const auto& grp : groups) {
        std::vector<throughput_sample> train, test;
        for (const auto& s : samples) (s.group == grp ? test : train).push_back(s);
        const auto e = fit_efficiency(train, start, cat);
        for (const auto& s : test) out.push_back(detail::make_cv_row(s, e, cat));
    }
    return out;
}

/// A neutral start for fits from scratch: the chip entries of `e` at inverse 2, no own attention or fp8 values,
/// no penalties, bandwidth efficiency 1, fp8 ratio 1.
inline efficiency_model neutral_start(efficiency_model e = default_efficiency()) {
    e.gpus.clear();
    e.default_inverse = 2.0;
    e.token_penalty = e.width_penalty = 0;
    e.attention_inverse = 2.0;
    e.fp8_ratio = 1.0;
    e.attention_ratio = 0;
    e.memory_inverse = 1.0;
    return e;
}

// ---- calibration JSON ------------------------------------------------------------------------------------------

inline nlohmann::json to_json(const efficiency_model& e) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& c : e.gpus)
        gpus.push_back({{"gpu", c.gpu}, {"inverse_efficiency", c.inverse}, {"attention_inverse_efficiency", c.attention},
                        {"scaled_inverse_efficiency", c.scaled}, {"te_attention_inverse_efficiency", c.te_attention},
                        {"source", c.source}});
    return {{"format", "frenzy-calibration-1"}, {"source", e.source}, {"gpus", gpus},
            {"default_inverse_efficiency", e.default_inverse}, {"token_penalty", e.token_penalty},
            {"width_penalty", e.width_penalty}, {"attention_inverse_efficiency", e.attention_inverse},
            {"fp8_ratio", e.fp8_ratio}, {"attention_ratio", e.attention_ratio},
            {"memory_inverse_efficiency", e.memory_inverse}};
}

inline efficiency_model efficiency_from_json(const nlohmann::json& j) {
    detail::object_reader r(j, "calibration");
    efficiency_model e;
    std::string format;
    r.get("format", format);
    if (format != "frenzy-calibration-1")
        throw config_error("calibration.format=\"" + format + "\" is not \"frenzy-calibration-1\"");
    r.get("source", e.source);
    r.get("default_inverse_efficiency", e.default_inverse);
    r.get("token_penalty", e.token_penalty);
    r.get("width_penalty", e.width_penalty);
    r.get("attention_inverse_efficiency", e.attention_inverse);
    r.get("fp8_ratio", e.fp8_ratio);
    r.get("attention_ratio", e.attention_ratio);
    r.get("memory_inverse_efficiency", e.memory_inverse);
    if (r.has("gpus")) {
        const auto& arr = r.raw("gpus");
        if (!arr.is_array()) throw config_error("calibration.gpus must be an array");
        for (std::size_t i = 0; i < arr.size(); ++i) {
            detail::object_reader g(arr[i], "calibration.gpus[" + std::to_string(i) + "]");
            gpu_coefficient c;
            g.get("gpu", c.gpu);
            g.get("inverse_efficiency", c.inverse);
            g.get("attention_inverse_efficiency", c.attention);
            g.get("scaled_inverse_efficiency", c.scaled);
            g.get("te_attention_inverse_efficiency", c.te_attention);
            g.get("source", c.source);
            g.finish();
            if (c.gpu.empty()) throw config_error("calibration.gpus[" + std::to_string(i) + "].gpu is missing");
            if (!(c.inverse >= 1.0))
                throw config_error("calibration.gpus[" + std::to_string(i) + "].inverse_efficiency must be at least 1");
            e.gpus.push_back(c);
        }
    }
    r.finish();
    if (!(e.default_inverse >= 1.0)) throw config_error("calibration.default_inverse_efficiency must be at least 1");
    if (e.token_penalty < 0 || e.width_penalty < 0 || e.attention_inverse < 0)
        throw config_error("calibration: penalties and attention_inverse_efficiency must not be negative");
    if (e.attention_ratio < 0) throw config_error("calibration.attention_ratio must not be negative");
    if (!(e.fp8_ratio > 0)) throw config_error("calibration.fp8_ratio must be positive");
    if (!(e.memory_inverse >= 1.0)) throw config_error("calibration.memory_inverse_efficiency must be at least 1");
    return e;
}

inline efficiency_model load_calibration(const std::string& path) {
    try {
        return efficiency_from_json(detail::read_json_file(path));
    } catch (const config_error& e) {
        throw config_error(path + ": " + e.what());
    }
}

}  // namespace frenzy
