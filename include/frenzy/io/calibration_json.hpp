#pragma once
// The calibration file (`frenzy calibrate -o FILE`, read by `--calibration FILE`) <-> efficiency_model
// (perf/efficiency.hpp). No Eigen: estimate and plan load a calibration without the fitting machinery.
#include <string>

#include <nlohmann/json.hpp>

#include "frenzy/core/error.hpp"
#include "frenzy/io/json_reader.hpp"
#include "frenzy/perf/efficiency.hpp"

namespace frenzy {

inline nlohmann::json to_json(const efficiency_model& e) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& c : e.gpus)
        gpus.push_back({{"gpu", c.gpu}, {"inverse_efficiency", c.inverse}, {"attention_inverse_efficiency", c.attention},
                        {"scaled_inverse_efficiency", c.scaled}, {"te_attention_inverse_efficiency", c.te_attention},
                        {"source", c.source}});
    return {{"format", "frenzy-calibration-2"}, {"source", e.source}, {"gpus", gpus},
            {"default_inverse_efficiency", e.default_inverse}, {"weight_traffic", e.weight_traffic},
            {"width_penalty", e.width_penalty}, {"attention_inverse_efficiency", e.attention_inverse},
            {"fp8_ratio", e.fp8_ratio}, {"attention_ratio", e.attention_ratio},
            {"te_attention_ratio", e.te_attention_ratio},
            {"memory_inverse_efficiency", e.memory_inverse},
            {"portable_attention_flops", e.portable_attention_flops}};
}

/// Inverse efficiencies (peak time / achieved time) are at least 1; 10^6 (a GPU at a millionth of its peak) bounds
/// them so that no step time derived from a calibration overflows to inf. Ratios lie in [0, 10^6], penalties in [0, 10^9].
inline constexpr real_bound inverse_bound = bounds::inverse_efficiency;

namespace detail {
/// An inverse efficiency: finite, at least 1 ("FIELD must be at least 1 (got V)", the wording calibrate's tests
/// match), at most inverse_bound.max.
inline void check_inverse(const std::string& field, double v) {
    check_finite(field, v);
    if (v < 1.0) throw config_error(field + " must be at least 1 (got " + number_text(v) + ")");
    check_bound(field, v, inverse_bound);
}
}  // namespace detail

inline efficiency_model efficiency_from_json(const nlohmann::json& j) {
    detail::object_reader r(j, "calibration");
    efficiency_model e;
    std::string format;
    r.get("format", format);
    if (format == "frenzy-calibration-1")  // its token_penalty was a fixed time per GEMM row, now weight_traffic
        throw frenzy::field_error("calibration.format", "\"" + format + "\"",
                                  "is an earlier Frenzy's, whose token_penalty this version does not read: run frenzy "
                                  "calibrate again on the same rows");
    if (format != "frenzy-calibration-2")
        throw frenzy::field_error("calibration.format", "\"" + format + "\"", "is not \"frenzy-calibration-2\"");
    r.get("source", e.source);
    r.get("default_inverse_efficiency", e.default_inverse);
    r.get("weight_traffic", e.weight_traffic);
    r.get("width_penalty", e.width_penalty);
    r.get("attention_inverse_efficiency", e.attention_inverse);
    r.get("fp8_ratio", e.fp8_ratio);
    r.get("attention_ratio", e.attention_ratio);
    r.get("te_attention_ratio", e.te_attention_ratio);
    r.get("memory_inverse_efficiency", e.memory_inverse);
    r.get("portable_attention_flops", e.portable_attention_flops);
    if (r.has("gpus")) {
        const auto& arr = r.raw("gpus");
        if (!arr.is_array()) throw frenzy::field_error("calibration.gpus", json_value_text(arr), "must be an array");
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
            const std::string at = "calibration.gpus[" + std::to_string(i) + "].";
            detail::check_inverse(at + "inverse_efficiency", c.inverse);
            frenzy::check_bound(at + "attention_inverse_efficiency", c.attention, {0, inverse_bound.max});
            frenzy::check_bound(at + "scaled_inverse_efficiency", c.scaled, {0, inverse_bound.max});
            frenzy::check_bound(at + "te_attention_inverse_efficiency", c.te_attention, {0, inverse_bound.max});
            e.gpus.push_back(c);
        }
    }
    r.finish();
    using frenzy::check_bound;
    detail::check_inverse("calibration.default_inverse_efficiency", e.default_inverse);
    check_bound("calibration.weight_traffic", e.weight_traffic, bounds::penalty);  // real fits: about 1
    check_bound("calibration.width_penalty", e.width_penalty, bounds::penalty);  // GEMM widths
    check_bound("calibration.attention_inverse_efficiency", e.attention_inverse, {0, inverse_bound.max});
    check_bound("calibration.attention_ratio", e.attention_ratio, {0, inverse_bound.max});
    check_bound("calibration.te_attention_ratio", e.te_attention_ratio, {0, inverse_bound.max});
    check_bound("calibration.fp8_ratio", e.fp8_ratio, {1e-6, inverse_bound.max});
    detail::check_inverse("calibration.memory_inverse_efficiency", e.memory_inverse);
    check_bound("calibration.portable_attention_flops", e.portable_attention_flops, {0, 1e18});
    return e;
}

inline efficiency_model load_calibration(const std::string& path) {
    try {
        return efficiency_from_json(frenzy::read_json_file(path));
    } catch (const config_error& e) {
        throw config_error(path + ": " + e.what());
    }
}

/// ADL hooks in nlohmann's style: `nlohmann::json j = model;` and `j.get<frenzy::efficiency_model>()`.
inline void to_json(nlohmann::json& out, const efficiency_model& e) { out = to_json(e); }
inline void from_json(const nlohmann::json& in, efficiency_model& e) { e = efficiency_from_json(in); }

}  // namespace frenzy
