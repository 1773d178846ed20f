#pragma once
// Reader and consistency check of the Sailor per-layer profiles (data/profiles/sailor, eth-easl/sailor,
// MIT): profile[micro_batch][tp][layer] = [forward s, backward s, update s], per-layer parameter and activation
// sizes in llm_info.json. The profiles were measured with different pipelines and precisions; before any use,
// each (model, GPU) file is checked:
//   layers  - the file has as many layers as llm_info.json gives for the model;
//   copy    - its entries are not those of another model's file on the same GPU (a copied file);
//   ratio   - backward / forward of a transformer layer at tp = 1 lies in [1.5, 3.5] (backward = 2 x forward
//             plus overheads; Narayanan et al. 2021 Sec. 5.1);
//   regime  - the achieved FLOP rate of a layer at tp = 1 says whether tensor cores were used (above the GPU's
//             fp32 peak) or not; the files of one GPU type must agree (a type measured in two regimes is
//             inconsistent, and the minority regime is rejected).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/hw/gpu.hpp"
#include "frenzy/io/json_reader.hpp"

namespace frenzy {

/// One (model, GPU) profile file, summarised by its middle transformer layer.
struct sailor_profile {
    std::string model, gpu_dir;  ///< directory names, e.g. "OPT-350", "A100-40"
    std::string gpu;             ///< catalog name ("" when the type is not in the catalog, e.g. GH-96)
    int layers_in_file = 0, layers_expected = 0;
    double hidden = 0, seq_len = 0;
    struct point {
        int micro_batch = 0, tp = 0;
        double forward = 0, backward = 0;  ///< seconds, middle layer
        double tflops = 0;                 ///< achieved (fwd + bwd FLOPs) / (fwd + bwd time), per GPU
    };
    std::vector<point> points;
    bool tensor_regime = false;  ///< achieved rate above the fp32 peak somewhere at tp = 1
    std::vector<std::string> issues;
    bool consistent() const { return issues.empty(); }
    /// The point at (mb, tp), if measured.
    const point* at(int mb, int tp) const {
        for (const auto& p : points)
            if (p.micro_batch == mb && p.tp == tp) return &p;
        return nullptr;
    }
};

namespace detail {
inline std::string sailor_gpu_name(const std::string& dir) {
    static const std::map<std::string, std::string> names{
        {"A100-40", "a100-40g"}, {"A100-80", "a100-80g"}, {"V100-16", "v100-16g"}, {"RTX-3090", "rtx-3090"},
        {"RTX-2080", "rtx-2080ti"},  // 11 GiB per GPU in basic_cluster_config.json: the 2080 Ti
        {"Titan-RTX", "titan-rtx"}};
    auto it = names.find(dir);
    return it == names.end() ? std::string{} : it->second;
}
}  // namespace detail

namespace detail {

/// The middle layer's times of one profile file (prof[micro_batch][tp][layer]) and the rate they achieve, sorted by
/// (tp, micro-batch); `params` is the layer's parameter count.
inline void read_sailor_points(const nlohmann::json& prof, double params, sailor_profile& p) {
    for (auto mb = prof.begin(); mb != prof.end(); ++mb)
        for (auto tp = mb.value().begin(); tp != mb.value().end(); ++tp) {
            const auto& layers = tp.value();
            p.layers_in_file = std::max(p.layers_in_file, static_cast<int>(layers.size()));
            const auto mid = std::to_string(layers.size() / 2);
            if (!layers.contains(mid)) continue;
            sailor_profile::point pt;
            pt.micro_batch = std::stoi(mb.key());
            pt.tp = std::stoi(tp.key());
            pt.forward = layers.at(mid).at(0).get<double>();
            pt.backward = layers.at(mid).at(1).get<double>();
            // forward FLOPs of the layer: 2 x params x tokens + attention core 4 x s^2 x h per sequence
            const double tokens = pt.micro_batch * p.seq_len;
            const double fwd = (2.0 * params * tokens + 4.0 * pt.micro_batch * p.seq_len * p.seq_len * p.hidden) / pt.tp;
            if (pt.forward > 0 && pt.backward > 0) pt.tflops = 3.0 * fwd / (pt.forward + pt.backward) / 1e12;
            p.points.push_back(pt);
        }
    std::sort(p.points.begin(), p.points.end(), [](const auto& a, const auto& b) {
        return a.tp != b.tp ? a.tp < b.tp : a.micro_batch < b.micro_batch;
    });
}

/// The checks of one file on its own: its layer count, backward / forward at tp = 1, and its regime (tensor cores
/// or not) from the GPU's fp32 peak.
inline void check_sailor_file(sailor_profile& p, const gpu_catalog& cat) {
    if (p.layers_in_file != p.layers_expected)
        p.issues.push_back("layers: " + std::to_string(p.layers_in_file) + " in the file, " +
                           std::to_string(p.layers_expected) + " in llm_info.json");
    for (const auto& pt : p.points)
        if (pt.tp == 1 && pt.forward > 0) {
            const double r = pt.backward / pt.forward;
            if (r < 1.5 || r > 3.5) {
                p.issues.push_back("ratio: backward/forward = " + std::to_string(r) + " at micro-batch " +
                                   std::to_string(pt.micro_batch));
                break;
            }
        }
    if (const auto* t = p.gpu.empty() ? nullptr : cat.find(p.gpu))
        for (const auto& pt : p.points)
            if (pt.tp == 1 && pt.tflops > t->fp32_tflops) p.tensor_regime = true;
}

/// One profile file, read and checked on its own; nothing when llm_info.json (`info`) does not list its model.
inline std::optional<sailor_profile> read_sailor_file(const std::filesystem::path& f, const nlohmann::json& info,
                                                      const gpu_catalog& cat) {
    sailor_profile p;
    p.gpu_dir = f.parent_path().filename().string();
    p.model = f.parent_path().parent_path().filename().string();
    p.gpu = sailor_gpu_name(p.gpu_dir);
    if (!info.contains(p.model)) return std::nullopt;
    const auto& li = info.at(p.model).at("1");
    p.layers_expected = static_cast<int>(li.size());
    const double params = li.at("1").at("params_floats").get<double>();
    p.hidden = std::round(std::sqrt(params / 12.0) / 64.0) * 64.0;
    p.seq_len = li.at("1").at("act_output_floats").get<double>() / p.hidden;
    read_sailor_points(frenzy::read_json_file(f.string()), params, p);
    check_sailor_file(p, cat);
    return p;
}

/// copy: same GPU, another model, identical middle-layer times at every shared (mb, tp)
inline void flag_sailor_copies(std::vector<sailor_profile>& out) {
    for (auto& a : out)
        for (const auto& b : out) {
            if (&a == &b || a.gpu_dir != b.gpu_dir || a.model == b.model) continue;
            int same = 0, shared = 0;
            for (const auto& pa : a.points)
                if (const auto* pb = b.at(pa.micro_batch, pa.tp)) {
                    ++shared;
                    same += pa.forward == pb->forward && pa.backward == pb->backward;
                }
            if (shared > 0 && same == shared && a.layers_in_file != a.layers_expected)
                a.issues.push_back("copy: entries equal those of " + b.model + " on " + b.gpu_dir);
        }
}

/// regime: per GPU type, the majority regime of the files wins
inline void flag_sailor_regimes(std::vector<sailor_profile>& out) {
    std::map<std::string, std::pair<int, int>> votes;  // gpu -> (tensor, not)
    for (const auto& p : out)
        if (!p.gpu.empty() && p.layers_in_file == p.layers_expected) (p.tensor_regime ? votes[p.gpu].first : votes[p.gpu].second)++;
    for (auto& p : out) {
        if (p.gpu.empty()) continue;
        const auto [t, n] = votes[p.gpu];
        if (t > 0 && n > 0 && (p.tensor_regime ? t < n : n < t))
            p.issues.push_back(std::string("regime: measured ") + (p.tensor_regime ? "with" : "without") +
                               " tensor cores, unlike the other files of " + p.gpu_dir);
    }
}

}  // namespace detail

/// Reads and checks every profile under `dir` (the sailor folder). Sequence length: llm_info's activation
/// output floats per layer / hidden, with hidden from the layer's parameters (12 h^2 + 13 h for these models).
inline std::vector<sailor_profile> load_sailor_profiles(const std::string& dir, const gpu_catalog& cat = gpu_catalog{}) {
    namespace fs = std::filesystem;
    const auto info = frenzy::read_json_file(dir + "/llm_info.json");
    std::vector<sailor_profile> out;
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(dir + "/profiles"))
        if (e.is_regular_file() && e.path().filename() == "profile.json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
        if (auto p = detail::read_sailor_file(f, info, cat)) out.push_back(std::move(*p));
    detail::flag_sailor_copies(out);
    detail::flag_sailor_regimes(out);
    return out;
}

/// Speed of GPU dir `a` relative to `b` (time on b / time on a, fwd + bwd of the middle layer), as the median
/// over the (model, micro-batch) points at tp = 1 that both measured in consistent files; 0 if none.
inline double sailor_relative_speed(const std::vector<sailor_profile>& ps, const std::string& a, const std::string& b) {
    std::vector<double> r;
    for (const auto& pa : ps)
        for (const auto& pb : ps) {
            if (pa.gpu_dir != a || pb.gpu_dir != b || pa.model != pb.model || !pa.consistent() || !pb.consistent()) continue;
            for (const auto& x : pa.points)
                if (const auto* y = pb.at(x.micro_batch, x.tp); y && x.tp == 1 && x.forward + x.backward > 0)
                    r.push_back((y->forward + y->backward) / (x.forward + x.backward));
        }
    if (r.empty()) return 0;
    std::sort(r.begin(), r.end());
    return r.size() % 2 ? r[r.size() / 2] : 0.5 * (r[r.size() / 2 - 1] + r[r.size() / 2]);
}

}  // namespace frenzy
