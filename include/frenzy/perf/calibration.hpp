#pragma once
// Calibration of the compute-efficiency coefficients (perf/efficiency.hpp) from measured throughputs (read by
// io/throughput_csv.hpp): a Levenberg-Marquardt fit of the relative (log) error of step time with Eigen, k-fold and
// leave-one-source-out cross-validation. The result is written and read by io/calibration_json.hpp.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "frenzy/core/error.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/perf/throughput_sample.hpp"
#include "frenzy/perf/efficiency.hpp"
#include "frenzy/perf/error_band.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

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
    /// The shared terms (weight-traffic multiplier, width penalty, shared attention efficiency, element-wise bandwidth
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
    enum kind_t { inverse, scaled, attention, te_attention, weight, width, shared_attention, memory } kind;
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
        case fit_param::weight: return e.weight_traffic;
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
            case fit_param::weight: e.weight_traffic = v; break;
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

namespace detail {
/// The coefficient entry `k` of `e`, created at the default inverse efficiency when missing.
inline gpu_coefficient& fit_entry(efficiency_model& e, const std::string& k) {
    for (auto& c : e.gpus)
        if (c.gpu == k) return c;
    e.gpus.push_back({k, e.default_inverse, 0, "fit", 0});
    return e.gpus.back();
}

/// The coefficients a fit frees (see fit_efficiency), with their start values set in `cur`: per chip key its
/// GEMM inverse efficiency, the fp8/fp4 one when it has such samples, its own attention value when >= 3 of its
/// non-Megatron samples spend >= 20% of their FLOPs in attention, and a Megatron-Core (TE) attention value when
/// also >= 3 Megatron samples spend >= 10%; the shared terms when `fit_shared`. `any_own_attention` says whether a
/// chip got its own attention value.
inline std::vector<fit_param> choose_fit_params(const std::vector<throughput_sample>& samples,
                                                const std::vector<const gpu_type*>& gpu_of,
                                                const std::vector<std::string>& sample_key,
                                                const std::vector<std::string>& keys, bool fit_shared,
                                                efficiency_model& cur, bool& any_own_attention) {
    std::vector<fit_param> params;
    bool any_shared_attention = false;
    for (const auto& k : keys) {
        int scaled = 0, te_heavy = 0, heavy = 0;
        basic_step_time_model<> model(calibrated_compute{cur});
        for (std::size_t i = 0; i < samples.size(); ++i) {
            if (sample_key[i] != k) continue;
            const auto b = model.predict(samples[i].job, *gpu_of[i], samples[i].topo).parts;
            const double share = b.attention_flops_mb / (b.attention_flops_mb + b.dense_flops_mb);
            const bool te = b.work.te_attention;  // flash through Transformer Engine (not its unfused fallback)
            if (gpu_type::scaled_gemms(samples[i].job.training.precision)) ++scaled;
            if (b.work.unfused_attention) continue;  // batched GEMMs at the GEMM efficiency: no attention value
            if (share >= 0.2 && !te) ++heavy;
            if (share >= 0.1 && te) ++te_heavy;
        }
        params.push_back({fit_param::inverse, k, 1.0});
        auto& entry = fit_entry(cur, k);
        if (scaled > 0) {
            params.push_back({fit_param::scaled, k, 1.0});
            if (!(entry.scaled > 0)) entry.scaled = entry.inverse * cur.fp8_ratio;
        }
        if (heavy >= 3) {
            params.push_back({fit_param::attention, k, 0.5});
            if (!(entry.attention > 0)) entry.attention = cur.attention_inverse;
        } else {
            entry.attention = 0;
            any_shared_attention = true;
        }
        // Megatron-Core's attention (TE fused/cuDNN) gets its own value when >= 3 Megatron rows of the chip spend
        // >= 10% of their FLOPs in attention and the chip also has its own (non-Megatron) attention value
        if (te_heavy >= 3 && heavy >= 3) {
            params.push_back({fit_param::te_attention, k, 0.5});
            if (!(entry.te_attention > 0)) entry.te_attention = entry.attention;
        } else {
            entry.te_attention = 0;
        }
    }
    any_own_attention = false;
    for (const auto& pr : params) any_own_attention = any_own_attention || pr.kind == fit_param::attention;
    if (fit_shared) {
        params.push_back({fit_param::weight, "", 0.0});
        params.push_back({fit_param::width, "", 0.0});
        params.push_back({fit_param::memory, "", 1.0});
        // chips without long-sequence data: their attention follows their GEMM efficiency at the mean ratio of
        // the chips that have their own (set after the fit); only when no chip has its own is one shared value fitted
        if (any_shared_attention && !any_own_attention) {
            cur.attention_ratio = 0;
            params.push_back({fit_param::shared_attention, "", 0.5});
        }
    }
    return params;
}

/// The residuals the calibration minimises: log(predicted / measured step time) of every sample under an
/// efficiency model, and their forward-difference derivatives through the whole step-time model.
struct log_time_residuals {
    const std::vector<throughput_sample>& samples;
    const std::vector<const gpu_type*>& gpu_of;
    std::vector<double> measured;

    log_time_residuals(const std::vector<throughput_sample>& s, const std::vector<const gpu_type*>& g)
        : samples(s), gpu_of(g), measured(s.size()) {
        for (std::size_t i = 0; i < samples.size(); ++i) measured[i] = measured_step_time(samples[i]);
    }
    Eigen::VectorXd operator()(const efficiency_model& e) const {
        const int N = static_cast<int>(samples.size());
        basic_step_time_model<> model(calibrated_compute{e});
        Eigen::VectorXd r(N);
        for (int i = 0; i < N; ++i) {
            const auto k = static_cast<std::size_t>(i);
            const auto est = model.predict(samples[k].job, *gpu_of[k], samples[k].topo);
            r(i) = std::log(est.step_time.value / measured[k]);
        }
        return r;
    }
    /// Forward differences at `x` (the values of `params` in `cur`), whose residuals are `r`.
    Eigen::MatrixXd jacobian(const efficiency_model& cur, const std::vector<fit_param>& params, const Eigen::VectorXd& x,
                             const Eigen::VectorXd& r) const {
        const int P = static_cast<int>(params.size()), N = static_cast<int>(samples.size());
        Eigen::MatrixXd J(N, P);
        for (int c = 0; c < P; ++c) {
            const double h = 1e-6 * std::max(1.0, std::abs(x(c)));
            Eigen::VectorXd xp = x;
            xp(c) += h;
            efficiency_model e = cur;
            params_set(e, params, xp);
            J.col(c) = ((*this)(e) - r) / h;
        }
        return J;
    }
};

/// Levenberg-Marquardt on log(predicted / measured step time) of every sample over `params` of `cur`, with
/// forward-difference derivatives through the whole step-time model and bounds by projection.
inline void levenberg_marquardt(const std::vector<throughput_sample>& samples, const std::vector<const gpu_type*>& gpu_of,
                                const std::vector<fit_param>& params, int iterations, efficiency_model& cur) {
    const int P = static_cast<int>(params.size());
    const log_time_residuals residuals(samples, gpu_of);
    auto get_x = [&](efficiency_model& e) {
        Eigen::VectorXd x(P);
        for (int c = 0; c < P; ++c) x(c) = param_get(e, params[static_cast<std::size_t>(c)]);
        return x;
    };
    auto set_x = [&](efficiency_model& e, const Eigen::VectorXd& x) { params_set(e, params, x); };
    Eigen::VectorXd x = get_x(cur);
    set_x(cur, x);
    x = get_x(cur);
    Eigen::VectorXd r = residuals(cur);
    double cost = r.squaredNorm(), lambda = 1e-3;
    for (int it = 0; it < iterations; ++it) {
        const Eigen::MatrixXd J = residuals.jacobian(cur, params, x, r);
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
                if (gain < 1e-14 * std::max(1.0, cost)) it = iterations;  // converged
                cost = cn;
            } else {
                lambda *= 8;
            }
        }
        if (!improved) break;
    }
}

/// After the fit: the attention and fp8 ratios for chips without their own values (the mean over the fitted
/// chips that have them), aliases following their targets, and the default for chips without data (the least
/// efficient fitted chip, a conservative choice).
inline void settle_after_fit(efficiency_model& cur, const std::vector<std::string>& keys, bool fit_shared,
                             bool any_own_attention) {
    auto fitted = [&](const gpu_coefficient& c) {
        return c.source == "fit" && std::find(keys.begin(), keys.end(), c.gpu) != keys.end();
    };
    if (fit_shared && any_own_attention) {
        double sum = 0;
        int cnt = 0;
        for (const auto& c : cur.gpus)
            if (fitted(c) && c.attention > 0) {
                sum += c.attention / c.inverse;
                ++cnt;
            }
        if (cnt > 0) cur.attention_ratio = sum / cnt;
    }
    if (fit_shared) {
        double sum = 0;
        int cnt = 0;
        for (const auto& c : cur.gpus)
            if (fitted(c) && c.scaled > 0) {
                sum += c.scaled / c.inverse;
                ++cnt;
            }
        if (cnt > 0) cur.fp8_ratio = sum / cnt;
    }
    if (fit_shared) {
        double sum = 0;
        int cnt = 0;
        for (const auto& c : cur.gpus)
            if (fitted(c) && c.te_attention > 0) {
                sum += c.te_attention / c.inverse;
                ++cnt;
            }
        if (cnt > 0) cur.te_attention_ratio = sum / cnt;
    }
    // aliases follow their targets ("alias of KEY: ...")
    for (auto& c : cur.gpus)
        if (c.source.rfind("alias of ", 0) == 0) {
            const auto target = c.source.substr(9, c.source.find(':') - 9);
            for (const auto& d : cur.gpus)
                if (d.gpu == target && d.source == "fit") {
                    c.inverse = d.inverse;
                    c.attention = d.attention;
                    c.scaled = d.scaled;
                    c.te_attention = d.te_attention;
                }
        }
    double worst = 0;
    for (const auto& c : cur.gpus)
        if (c.source == "fit") worst = std::max(worst, c.inverse);
    if (worst > 0 && fit_shared) cur.default_inverse = worst;
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
    std::vector<std::string> keys, sample_key;
    std::vector<const gpu_type*> gpu_of;
    // a sample fits its type's own entry when the start has one (calibration files keyed by type name), else its chip's
    for (const auto& s : samples) {
        const auto& g = cat.at(s.gpu);
        gpu_of.push_back(&g);
        sample_key.push_back(start.entry(std::string_view(g.name)) ? g.name : detail::coefficient_key(g));
        if (std::find(keys.begin(), keys.end(), sample_key.back()) == keys.end()) keys.push_back(sample_key.back());
    }
    for (const auto& k : keys) detail::fit_entry(cur, k).source = "fit";
    const bool fit_shared = keys.size() >= 2 && static_cast<int>(samples.size()) >= opt.min_samples_for_shared;
    bool any_own_attention = false;
    const auto params = detail::choose_fit_params(samples, gpu_of, sample_key, keys, fit_shared, cur, any_own_attention);
    detail::levenberg_marquardt(samples, gpu_of, params, opt.iterations, cur);
    detail::settle_after_fit(cur, keys, fit_shared, any_own_attention);
    return cur;
}

/// Predicted against measured tokens/s per GPU for one sample in cross-validation.
struct cv_row {
    std::string id, gpu, model;
    int gpus = 0;
    double measured = 0, predicted = 0;
    std::string group;   ///< source label of the sample
    std::string regime;  ///< error-band regime (perf/error_band.hpp) of the sample
    std::string chip;    ///< the GPU generation: the type's chip (its name for a type without one)
    std::string gemms;   ///< precision class of the GEMMs: "16-bit" or "fp8/fp4"
    double rel_error() const { return (predicted - measured) / measured; }
};

namespace detail {
inline cv_row make_cv_row(const throughput_sample& s, const efficiency_model& e, const gpu_catalog& cat) {
    const auto& g = cat.at(s.gpu);
    return {s.id, s.gpu, s.job.model.name, static_cast<int>(s.job.parallel.gpus()), s.tokens_per_s_per_gpu,
            predict_tokens_per_gpu(s, e, cat), s.group, to_string(classify_regime(s.job, true)),
            g.chip.empty() ? g.name : g.chip, gpu_type::scaled_gemms(s.job.training.precision) ? "fp8/fp4" : "16-bit"};
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
/// no penalties, bandwidth efficiency 1, fp8 ratio 1, no portable-attention cap (the shipped one is read off
/// gh100's fit, so a held-out source would leak into it).
inline efficiency_model neutral_start(efficiency_model e = default_efficiency()) {
    e.gpus.clear();
    e.portable_attention_flops = 0;
    e.default_inverse = 2.0;
    e.weight_traffic = e.width_penalty = 0;
    e.attention_inverse = 2.0;
    e.fp8_ratio = 1.0;
    e.attention_ratio = 0;
    e.te_attention_ratio = 0;
    e.memory_inverse = 1.0;
    return e;
}


}  // namespace frenzy
