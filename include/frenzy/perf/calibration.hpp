#pragma once
// Calibration of the compute-efficiency coefficients (perf/efficiency.hpp) from measured throughputs:
// a reader for the throughput CSV format of ../shared/data/throughput/measured_calibration.csv (users' files with
// the same columns too), a weighted least-squares fit with Eigen, k-fold cross-validation, and JSON (de)serialisation
// of the result so that `frenzy plan/estimate --calibration FILE` can load it.
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
};

namespace detail {

/// Catalog name of a GPU description: a catalog name as is, or the free text of the shared data set.
inline std::string gpu_name_from_text(const std::string& text, const gpu_catalog& cat) {
    if (cat.find(text)) return text;
    const auto t = lower(text);
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
/// Node bandwidth in GB/s from a text like "1600 Gbps node-node interconnect"; 0 when none is given.
inline double network_from_text(const std::string& text) {
    const auto t = lower(text);
    const auto pos = t.find("gbps");
    if (pos == std::string::npos) return 0;
    std::size_t b = pos;
    while (b > 0 && (std::isdigit(static_cast<unsigned char>(t[b - 1])) || t[b - 1] == ' ' || t[b - 1] == '.')) --b;
    try {
        return std::stod(t.substr(b, pos - b)) / 8.0;
    } catch (...) {
        return 0;
    }
}
}  // namespace detail

/// Reads throughput samples from CSV text with the columns of measured_calibration.csv. Required columns:
/// gpu_type, num_layers, hidden, heads, ffn_hidden, vocab, seq_len, micro_batch, global_batch_seqs, dp, tp, pp,
/// tokens_per_s_per_gpu; optional: row_id, framework, interconnect, kv_heads, mlp_type, vpp, cp, sharding,
/// recompute, sequence_parallel, precision, step_time_s, source. Lines starting with '#' are comments.
inline std::vector<throughput_sample> read_throughput_csv(std::istream& in, const std::string& name = "csv",
                                                          const gpu_catalog& cat = gpu_catalog{}) {
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
            if (v.empty() || v == "n/a") return dflt;
            try {
                std::size_t used = 0;
                const double d = std::stod(v, &used);
                if (used != v.size()) throw std::invalid_argument(v);
                return d;
            } catch (const std::exception&) {
                throw config_error(where + ": " + c + "=\"" + v + "\" is not a number");
            }
        };
        auto integer = [&](const char* c, double dflt) { return static_cast<std::int64_t>(std::llround(num(c, dflt))); };
        throughput_sample s;
        s.id = get("row_id").empty() ? std::to_string(lineno) : get("row_id");
        s.source = get("source");
        try {
            s.gpu = detail::gpu_name_from_text(get("gpu_type"), cat);
            auto& m = s.job.model;
            m.name = get("model").empty() ? "row-" + s.id : get("model");
            m.layers = integer("num_layers", 0);
            m.hidden = integer("hidden", 0);
            m.heads = integer("heads", 0);
            m.kv_heads = integer("kv_heads", 0);
            m.ffn_hidden = integer("ffn_hidden", 0);
            m.vocab = integer("vocab", 0);
            const auto mlp = detail::lower(get("mlp_type"));
            m.activation = detail::contains(mlp, "swiglu") ? activation::swiglu : activation::gelu;
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
            p.vpp = integer("vpp", 1);
            p.cp = integer("cp", 1);
            if (p.vpp > 1) p.schedule = pipeline_schedule::interleaved;
            p.sharding = detail::sharding_from_text(get("sharding"));
            p.recompute = detail::recompute_from_text(get("recompute"));
            const auto sp = detail::lower(get("sequence_parallel"));
            p.sequence_parallel = sp == "yes" || sp == "true" || sp == "1";
            s.job.runtime.framework =
                get("framework").empty() ? framework::megatron : detail::framework_from_text(get("framework"));
            s.job.name = m.name;
            s.topo.gpus_per_node = cat.at(s.gpu).gpus_per_node;
            s.topo.network_gbps = detail::network_from_text(get("interconnect"));
            s.tokens_per_s_per_gpu = num("tokens_per_s_per_gpu", 0);
            s.step_time_s = num("step_time_s", 0);
            validate(s.job);
        } catch (const config_error& e) {
            throw config_error(where + ": " + e.what());
        }
        if (!(s.tokens_per_s_per_gpu > 0)) throw config_error(where + ": tokens_per_s_per_gpu must be positive");
        out.push_back(std::move(s));
    }
    return out;
}

inline std::vector<throughput_sample> load_throughput_csv(const std::string& path, const gpu_catalog& cat = gpu_catalog{}) {
    std::istringstream in(detail::read_file_limited(path));  // regular files only: /dev/zero is refused (io/file.hpp)
    return read_throughput_csv(in, path, cat);
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
    int iterations = 6;  ///< fixed-point passes (which rows are compute-bound depends on the coefficients)
    /// The shared terms (token and width penalties, shared attention efficiency, the default for types without
    /// data) are fitted only from at least this many samples of at least two GPU types; a smaller file (a user's
    /// few runs on one type) fits only its types' own coefficients and keeps the start's shared terms.
    int min_samples_for_shared = 30;
};

/// Fits c_gpu for every GPU type present, the token and width penalties and the attention inverse efficiency by
/// weighted (relative-error) linear least squares (Eigen column-pivoting QR), starting from `start` for the
/// communication/overlap terms. Negative penalties are dropped and the fit repeated (a tiny active-set NNLS).
/// GPU types of `start` that have no samples keep their coefficients (aliases are refreshed to their target).
inline efficiency_model fit_efficiency(const std::vector<throughput_sample>& samples,
                                       const efficiency_model& start = default_efficiency(),
                                       const gpu_catalog& cat = gpu_catalog{}, fit_options opt = {}) {
    if (samples.empty()) throw config_error("calibration: no samples to fit");
    std::vector<std::string> types;
    for (const auto& s : samples)
        if (std::find(types.begin(), types.end(), s.gpu) == types.end()) types.push_back(s.gpu);
    const int G = static_cast<int>(types.size());
    efficiency_model cur = start;
    for (const auto& ty : types)
        if (!cur.has(ty)) cur.gpus.push_back({ty, cur.default_inverse, 0, "fit"});
    // a type gets its own attention coefficient when >= 3 of its samples spend >= 20% of their FLOPs in attention
    std::vector<bool> own_attn(static_cast<std::size_t>(G), false);
    {
        std::vector<int> heavy(static_cast<std::size_t>(G), 0);
        basic_step_time_model<> model(calibrated_compute{cur});
        for (const auto& s : samples) {
            const auto b = model.predict(s.job, cat.at(s.gpu), s.topo).parts;
            const auto k = static_cast<std::size_t>(std::find(types.begin(), types.end(), s.gpu) - types.begin());
            if (b.attention_flops_mb >= 0.2 * (b.attention_flops_mb + b.dense_flops_mb)) ++heavy[k];
        }
        for (std::size_t k = 0; k < heavy.size(); ++k) own_attn[k] = heavy[k] >= 3;
    }
    // columns: c_g (G), own attention (G, unused ones zero), token penalty, width penalty, shared attention
    const int cols = 2 * G + 3;
    std::vector<bool> active(static_cast<std::size_t>(cols), true);
    for (int k = 0; k < G; ++k) active[static_cast<std::size_t>(G + k)] = own_attn[static_cast<std::size_t>(k)];
    // the shared attention coefficient is fitted only when two or more types use it; otherwise it is fixed at the
    // mean of the types' own coefficients (one type's few short-sequence rows cannot determine it)
    std::vector<double> fixed(static_cast<std::size_t>(cols), std::nan(""));
    int shared_types = 0;
    for (int k = 0; k < G; ++k) shared_types += own_attn[static_cast<std::size_t>(k)] ? 0 : 1;
    if (shared_types < 2) active[static_cast<std::size_t>(2 * G + 2)] = false;
    const bool fit_shared = G >= 2 && static_cast<int>(samples.size()) >= opt.min_samples_for_shared;
    if (!fit_shared) {
        fixed[static_cast<std::size_t>(2 * G)] = start.token_penalty;
        fixed[static_cast<std::size_t>(2 * G + 1)] = start.width_penalty;
        fixed[static_cast<std::size_t>(2 * G + 2)] = start.attention_inverse;
        active[static_cast<std::size_t>(2 * G + 2)] = false;
    }
    for (int it = 0; it < opt.iterations; ++it) {
        std::vector<Eigen::VectorXd> rowsv;
        basic_step_time_model<> model(calibrated_compute{cur});
        for (const auto& s : samples) {
            const auto& g = cat.at(s.gpu);
            const auto b = model.predict(s.job, g, s.topo).parts;
            const double measured = measured_step_time(s);
            // invert step = (m + bubble) x max(compute + tp + ep, shard) + pp + exposed + gather + optimizer
            const double slots = static_cast<double>(b.micro_batches) + b.bubble_slots;
            const double mb = (measured - b.dp_exposed - b.param_gather - b.optimizer) / slots - b.pp_mb;
            const double compute = mb - b.tp_mb - b.ep_mb;
            if (!(compute > 0) || b.shard_mb > mb) continue;  // communication-bound: says nothing about compute
            const double y = compute * b.peak;  // = dense x (c + a x k/tok + b/w) + attention x c_attn
            const auto k = static_cast<int>(std::find(types.begin(), types.end(), s.gpu) - types.begin());
            Eigen::VectorXd row = Eigen::VectorXd::Zero(cols);
            row(k) = b.dense_flops_mb;
            row(own_attn[static_cast<std::size_t>(k)] ? G + k : 2 * G + 2) = b.attention_flops_mb;
            row(2 * G) = b.dense_flops_mb * (b.peak / 312e12) / b.shape.tokens;
            row(2 * G + 1) = b.dense_flops_mb / b.shape.width;
            rowsv.push_back(row / y);  // relative error: each equation reads row . x = 1
        }
        const int n = static_cast<int>(rowsv.size());
        int free_cols = 0;
        for (int c = 0; c < cols; ++c)
            free_cols += active[static_cast<std::size_t>(c)] && std::isnan(fixed[static_cast<std::size_t>(c)]) ? 1 : 0;
        if (n < free_cols)
            throw config_error("calibration: " + std::to_string(n) + " compute-bound samples cannot determine " +
                               std::to_string(free_cols) + " coefficients");
        if (fit_shared && !active[static_cast<std::size_t>(2 * G + 2)]) {  // shared attention not fitted: mean of own ones
            double sum = 0;
            int cnt = 0;
            for (const auto& c : cur.gpus)
                if (c.attention > 0 && std::find(types.begin(), types.end(), c.gpu) != types.end()) { sum += c.attention; ++cnt; }
            fixed[static_cast<std::size_t>(2 * G + 2)] = cnt > 0 ? sum / cnt : cur.attention_inverse;
        }
        Eigen::MatrixXd A(n, cols);
        Eigen::VectorXd rhs = Eigen::VectorXd::Ones(n);
        for (int i = 0; i < n; ++i) A.row(i) = rowsv[static_cast<std::size_t>(i)].transpose();
        for (int c = 0; c < cols; ++c) {
            const double v = fixed[static_cast<std::size_t>(c)];
            if (!std::isnan(v)) rhs -= A.col(c) * v;  // fixed columns move to the right-hand side
            if (!active[static_cast<std::size_t>(c)] || !std::isnan(v)) A.col(c).setZero();
        }
        Eigen::VectorXd x = A.colPivHouseholderQr().solve(rhs);
        for (int c = 0; c < cols; ++c)
            if (!std::isnan(fixed[static_cast<std::size_t>(c)])) x(c) = fixed[static_cast<std::size_t>(c)];
        // physical bounds: no GPU beats its peak (c_g >= 1: fix at 1); penalties/attention not negative (drop)
        bool refit = false;
        for (int c = 0; c < G; ++c)
            if (std::isnan(fixed[static_cast<std::size_t>(c)]) && x(c) < 1.0) { fixed[static_cast<std::size_t>(c)] = 1.0; refit = true; }
        for (int c = G; c < cols; ++c)
            if (active[static_cast<std::size_t>(c)] && std::isnan(fixed[static_cast<std::size_t>(c)]) && x(c) < 0) {
                active[static_cast<std::size_t>(c)] = false;
                refit = true;
            }
        if (refit) { --it; continue; }
        for (int k = 0; k < G; ++k)
            for (auto& c : cur.gpus)
                if (c.gpu == types[static_cast<std::size_t>(k)]) {
                    c.inverse = x(k);
                    c.attention = active[static_cast<std::size_t>(G + k)] ? x(G + k) : 0.0;
                    c.source = "fit";
                }
        cur.token_penalty = active[static_cast<std::size_t>(2 * G)] ? x(2 * G) : 0.0;
        cur.width_penalty = active[static_cast<std::size_t>(2 * G + 1)] ? x(2 * G + 1) : 0.0;
        if (active[static_cast<std::size_t>(2 * G + 2)] || !std::isnan(fixed[static_cast<std::size_t>(2 * G + 2)]))
            cur.attention_inverse = x(2 * G + 2);
    }
    // aliases follow their targets ("alias of TYPE: ...")
    for (auto& c : cur.gpus)
        if (c.source.rfind("alias of ", 0) == 0) {
            const auto target = c.source.substr(9, c.source.find(':') - 9);
            for (const auto& d : cur.gpus)
                if (d.gpu == target && d.source == "fit") { c.inverse = d.inverse; c.attention = d.attention; }
        }
    // GPU types with no data and no alias: the least efficient fitted type (a conservative default)
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
    double rel_error() const { return (predicted - measured) / measured; }
};

/// k-fold cross-validation: rows are dealt to folds in file order (i mod k) so that every fold mixes sources;
/// each fold is predicted by a fit on the others.
inline std::vector<cv_row> cross_validate(const std::vector<throughput_sample>& samples, int k,
                                          const efficiency_model& start = default_efficiency(),
                                          const gpu_catalog& cat = gpu_catalog{}) {
    std::vector<cv_row> out;
    for (int fold = 0; fold < k; ++fold) {
        std::vector<throughput_sample> train, test;
        for (std::size_t i = 0; i < samples.size(); ++i)
            (static_cast<int>(i % static_cast<std::size_t>(k)) == fold ? test : train).push_back(samples[i]);
        const auto e = fit_efficiency(train, start, cat);
        for (const auto& s : test)
            out.push_back({s.id, s.gpu, s.job.model.name, static_cast<int>(s.job.parallel.gpus()),
                           s.tokens_per_s_per_gpu, predict_tokens_per_gpu(s, e, cat)});
    }
    return out;
}

// ---- calibration JSON ------------------------------------------------------------------------------------------

inline nlohmann::json to_json(const efficiency_model& e) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& c : e.gpus)
        gpus.push_back({{"gpu", c.gpu}, {"inverse_efficiency", c.inverse}, {"attention_inverse_efficiency", c.attention},
                        {"source", c.source}});
    return {{"format", "frenzy-calibration-1"}, {"source", e.source}, {"gpus", gpus},
            {"default_inverse_efficiency", e.default_inverse}, {"token_penalty", e.token_penalty},
            {"width_penalty", e.width_penalty}, {"attention_inverse_efficiency", e.attention_inverse}};
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
    if (r.has("gpus")) {
        const auto& arr = r.raw("gpus");
        if (!arr.is_array()) throw config_error("calibration.gpus must be an array");
        for (std::size_t i = 0; i < arr.size(); ++i) {
            detail::object_reader g(arr[i], "calibration.gpus[" + std::to_string(i) + "]");
            gpu_coefficient c;
            g.get("gpu", c.gpu);
            g.get("inverse_efficiency", c.inverse);
            g.get("attention_inverse_efficiency", c.attention);
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
