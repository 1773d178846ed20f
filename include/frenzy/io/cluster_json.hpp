#pragma once
// Cluster spec <-> JSON (docs/formats.md "Cluster spec"): node groups and optional GPU type overrides.
#include <algorithm>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "frenzy/hw/cluster.hpp"
#include "frenzy/io/json_reader.hpp"

namespace frenzy {

namespace detail {
/// Why the bandwidth fields were renamed from *_gbps: the value was always GB/s, which "gbps" reads as gigabits.
inline constexpr std::string_view gigabytes_per_second =
    "it holds GB/s, gigabytes per second, not Gb/s: a node with 8 x 400 Gb/s InfiniBand has 400 GB/s";
}  // namespace detail

/// A GPU type from JSON; fields left out keep the values of `base` (the catalog entry being overridden).
inline gpu_type gpu_type_from_json(const nlohmann::json& j, const std::string& path, const gpu_catalog& catalog) {
    detail::object_reader r(j, path);
    std::string name;
    r.get("name", name);
    if (name.empty()) throw config_error(path + ".name is missing");
    gpu_type t;
    if (auto* base = catalog.find(name)) t = *base;
    t.name = name;
    namespace b = bounds;
    r.get("product", t.product);
    r.get("memory_mib", t.memory_mib, b::memory_mib);
    if (r.has("memory_bytes")) {  // what `frenzy gpus --json` writes beside memory_mib: read back, the two agree
        double bytes = 0;
        r.get("memory_bytes", bytes, b::memory_bytes);
        const double mib = bytes / (1024.0 * 1024.0);
        if (r.has("memory_mib") && mib != t.memory_mib)
            throw field_error(r.field("memory_bytes"), number_text(bytes),
                              "disagrees with memory_mib=" + number_text(t.memory_mib) + " (memory_bytes = memory_mib x 2^20)");
        if (!r.has("memory_mib")) t.memory_mib = mib;
    }
    r.get("bf16_tflops", t.bf16_tflops, b::tflops);
    r.get("fp16_tflops", t.fp16_tflops, b::tflops);
    r.get("fp32_tflops", t.fp32_tflops, b::tflops);
    r.get("fp8_tflops", t.fp8_tflops, b::tflops);
    r.get("fp4_tflops", t.fp4_tflops, b::tflops);
    r.get("chip", t.chip);
    r.renamed("mem_bw_gbps", "mem_bw_GBps", detail::gigabytes_per_second);
    r.get("mem_bw_GBps", t.mem_bw_GBps, b::bandwidth_GBps);
    r.get("link", t.link);
    r.renamed("link_gbps", "link_GBps", detail::gigabytes_per_second);
    r.get("link_GBps", t.link_GBps, b::bandwidth_GBps);
    r.get("gpus_per_node", t.gpus_per_node, b::gpus_per_node);
    // a power-limited fleet: its cap, and the board power its peaks are quoted at (hw/gpu.hpp clock_scale)
    r.get("tdp_w", t.tdp_w, b::watts);
    r.get("power_limit_w", t.power_limit_w, b::watts);
    r.finish();
    if (t.power_limit_w > 0 && !(t.tdp_w > 0))
        throw field_error(r.field("power_limit_w"), number_text(t.power_limit_w),
                          "needs tdp_w, the board power its peaks are quoted at (the catalog has none for " + name + ")");
    try {
        gpu_catalog::validate(t);
    } catch (const config_error& e) {
        throw config_error(frenzy::printable(path, 200) + ": " + e.what());
    }
    return t;
}

/// Most GPU types and node groups a cluster spec may list (the readers and validate() are linear/quadratic in them).
inline constexpr std::size_t max_gpu_types = bounds::gpu_type_count;
inline constexpr std::size_t max_node_groups = bounds::node_groups;

/// move_costs <-> JSON (the cluster file's "moves" object): fields left out keep their defaults; a bad value throws
/// config_error naming the field (cluster.moves.storage_GBps=0 must be in [0.001, 1e+06]).
inline void to_json(nlohmann::json& j, const move_costs& m) {
    j = {{"storage_GBps", m.storage_GBps}, {"restart_s", m.restart_s}, {"startup_s", m.startup_s},
         {"checkpoint_interval_s", m.checkpoint_interval_s}};
}
inline move_costs move_costs_from_json(const nlohmann::json& j, const std::string& path = "cluster.moves") {
    detail::object_reader r(j, path);
    move_costs m;
    r.get("storage_GBps", m.storage_GBps);
    r.get("restart_s", m.restart_s);
    r.get("startup_s", m.startup_s);
    r.get("checkpoint_interval_s", m.checkpoint_interval_s);
    r.finish();
    validate(m, path);
    return m;
}
inline void from_json(const nlohmann::json& j, move_costs& m) { m = move_costs_from_json(j); }

/// A cluster's node groups and move costs as JSON (what cluster_from_json reads back; GPU type overrides are not
/// written: a catalog is written by `frenzy gpus --json`).
inline nlohmann::json cluster_to_json(const cluster_spec& c) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& g : c.nodes) {
        nlohmann::json n = {{"name", g.name}, {"gpu", g.gpu}, {"gpus_per_node", g.gpus_per_node}, {"count", g.count}};
        if (g.network_GBps > 0) n["network_GBps"] = g.network_GBps;
        if (g.host_memory_GiB > 0) n["host_memory_GiB"] = g.host_memory_GiB;
        nodes.push_back(std::move(n));
    }
    return {{"nodes", std::move(nodes)}, {"moves", c.moves}};
}

inline cluster_spec cluster_from_json(const nlohmann::json& j) {
    namespace b = bounds;
    detail::object_reader r(j, "cluster");
    cluster_spec c;
    if (r.has("moves")) c.moves = move_costs_from_json(r.raw("moves"));
    if (const auto* arr = r.array("gpu_types", max_gpu_types))
        for (std::size_t i = 0; i < arr->size(); ++i)
            c.catalog.upsert(gpu_type_from_json((*arr)[i], "cluster.gpu_types[" + std::to_string(i) + "]", c.catalog));
    if (!r.has("nodes") || r.raw("nodes").is_null()) throw config_error("cluster.nodes is missing");
    const auto& nodes = *r.array("nodes", max_node_groups);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        detail::object_reader n(nodes[i], "cluster.nodes[" + std::to_string(i) + "]");
        node_group g;
        n.get("name", g.name);
        n.get("gpu", g.gpu);
        if (g.gpu.empty()) throw config_error(n.field("gpu") + " is missing");
        g.gpus_per_node = 0;
        n.get("gpus_per_node", g.gpus_per_node, b::gpus_per_node);
        if (g.gpus_per_node == 0 && !n.has("gpus_per_node")) {
            if (auto* t = c.catalog.find(g.gpu)) g.gpus_per_node = t->gpus_per_node;
        }
        n.get("count", g.count, b::node_count);
        n.renamed("network_gbps", "network_GBps", detail::gigabytes_per_second);
        n.get("network_GBps", g.network_GBps, b::bandwidth_GBps);
        n.get("host_memory_GiB", g.host_memory_GiB, b::host_memory_GiB);
        n.finish();
        if (g.name.empty()) g.name = g.gpu;
        c.nodes.push_back(g);
    }
    r.finish();
    validate(c);
    // Each group has at most 1024 x 10^6 GPUs and there are at most 10^4 groups: the sum fits int64.
    std::int64_t total = 0;
    for (const auto& g : c.nodes)
        total = frenzy::checked_add(total, frenzy::checked_mul(g.gpus_per_node, g.count, "gpus_per_node x count"),
                                    "cluster GPUs");
    frenzy::check_bound("cluster total GPUs (sum of gpus_per_node x count)", total, b::gpus);
    return c;
}

/// A list of GPU types, `[...]` or `{"gpu_types": [...]}` (frenzy estimate --gpu-types), added to `catalog`.
inline void gpu_types_from_json(const nlohmann::json& j, gpu_catalog& catalog, const std::string& path = "gpu_types") {
    const nlohmann::json* arr = &j;
    if (j.is_object()) {
        detail::object_reader r(j, "");
        arr = r.array("gpu_types", max_gpu_types);
        r.finish();
        if (!arr) throw config_error("gpu_types is missing");
    } else if (!j.is_array()) {
        throw frenzy::field_error(path, json_value_text(j), "must be an array of GPU types or {\"gpu_types\": [...]}");
    } else if (j.size() > max_gpu_types) {
        throw frenzy::field_error(path, json_value_text(j), "has more than " + std::to_string(max_gpu_types) + " elements");
    }
    for (std::size_t i = 0; i < arr->size(); ++i)
        catalog.upsert(gpu_type_from_json((*arr)[i], path + "[" + std::to_string(i) + "]", catalog));
}

/// Extra or overriding GPU types from the file `path` (`frenzy ... --gpu-types FILE`): an array of GPU types, or an
/// object whose "gpu_types" holds one (a cluster file's other keys are left alone), each upserted into `catalog`
/// in order (a later type overrides an earlier one of the same name). An empty path returns `catalog` unchanged.
/// Errors name the file and the element: "PATH: gpu_types[2].memory_mib=...".
inline gpu_catalog load_gpu_types(const std::string& path, gpu_catalog catalog = {}) {
    if (path.empty()) return catalog;
    const auto js = read_json_file(path);
    const auto& arr = js.is_object() && js.contains("gpu_types") ? js.at("gpu_types") : js;
    if (!arr.is_array()) throw config_error(path + ": expected an array of GPU types or {\"gpu_types\": [...]}");
    for (std::size_t i = 0; i < arr.size(); ++i)
        catalog.upsert(gpu_type_from_json(arr[i], path + ": gpu_types[" + std::to_string(i) + "]", catalog));
    return catalog;
}

inline cluster_spec load_cluster(const std::string& path) {
    const auto j = frenzy::read_json_file(path);  // its errors name the file already
    try {
        return cluster_from_json(j);
    } catch (const config_error& e) {
        throw config_error(frenzy::printable(path, 200) + ": " + e.what());
    }
}

namespace detail {
/// A positive whole number of at most `b.max` from text (digits only); the error names `what` in `field`=`spec`.
inline int gpu_list_count(std::string_view text, std::string_view what, std::string_view spec, int_bound b,
                          const std::string& field) {
    const long max = static_cast<long>(b.max);
    if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string_view::npos)
        throw config_error(field + "=\"" + std::string(spec) + "\": " + std::string(what) + " \"" + std::string(text) +
                           "\" is not a positive whole number");
    const long v = std::stol(std::string(text));
    if (v < 1 || v > max)
        throw config_error(field + "=\"" + std::string(spec) + "\": " + std::string(what) + "=" + std::to_string(v) +
                           " must be in [1, " + std::to_string(max) + "]");
    return static_cast<int>(v);
}
}  // namespace detail

/// A cluster from a GPU list, as `frenzy plan --gpus` takes it: comma-separated `COUNTxTYPE` (GPUs of a catalog
/// type, in nodes of the type's typical size, the last node holding the rest) or `NODESxPER_NODExTYPE`, e.g.
/// "8xh100-80g,16xa100-40g" or "2x4xt4". Types come from `catalog` (the built-in one by default). Errors name
/// `field` (the CLI passes its flag, `--gpus`).
inline cluster_spec cluster_from_gpu_list(std::string_view spec, const gpu_catalog& catalog = {},
                                         const std::string& field = "gpus") {
    cluster_spec c;
    c.catalog = catalog;
    std::size_t start = 0;
    if (spec.empty()) throw config_error(field + " is empty: give COUNTxTYPE[,COUNTxTYPE...], e.g. 8xh100-80g");
    while (start <= spec.size()) {
        const auto comma = spec.find(',', start);
        const auto item = spec.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        start = comma == std::string_view::npos ? spec.size() + 1 : comma + 1;
        const auto x1 = item.find('x');
        if (x1 == std::string_view::npos || x1 == 0)
            throw config_error(field + "=\"" + std::string(spec) + "\": \"" + std::string(item) +
                               "\" must be COUNTxTYPE (e.g. 8xh100-80g) or NODESxPER_NODExTYPE (e.g. 2x4xt4)");
        const auto rest = item.substr(x1 + 1);
        const auto x2 = rest.find('x');
        const bool shaped = x2 != std::string_view::npos && x2 > 0 &&
                            rest.substr(0, x2).find_first_not_of("0123456789") == std::string_view::npos;
        const auto type = shaped ? rest.substr(x2 + 1) : rest;
        const auto* found = c.catalog.find(type);
        if (!found) {
            std::vector<std::string> names;
            for (const auto& k : c.catalog.types()) names.push_back(k.name);
            throw config_error(field + "=\"" + std::string(spec) + "\": \"" + std::string(type) + "\" is not a known GPU type" +
                               frenzy::did_you_mean(type, names) + "; `frenzy gpus` lists them");
        }
        const auto& t = *found;
        node_group g;
        g.name = std::string(type);
        g.gpu = std::string(type);
        if (shaped) {
            g.count = detail::gpu_list_count(item.substr(0, x1), "node count", spec, bounds::node_count, field);
            g.gpus_per_node = detail::gpu_list_count(rest.substr(0, x2), "GPUs per node", spec, bounds::gpus_per_node, field);
            c.nodes.push_back(g);
            continue;
        }
        const int n = detail::gpu_list_count(item.substr(0, x1), "GPU count", spec, bounds::gpus, field);
        g.gpus_per_node = std::min(n, t.gpus_per_node);
        g.count = n / g.gpus_per_node;
        c.nodes.push_back(g);
        if (const int left = n % g.gpus_per_node; left > 0) {
            g.name += "-part";
            g.gpus_per_node = left;
            g.count = 1;
            c.nodes.push_back(g);
        }
    }
    for (std::size_t i = 0; i < c.nodes.size(); ++i)  // the same type twice: distinct group names
        for (std::size_t k = 0; k < i; ++k)
            if (c.nodes[k].name == c.nodes[i].name) c.nodes[i].name += "-" + std::to_string(i);
    validate(c);
    return c;
}

inline nlohmann::json to_json(const gpu_type& t) {
    return {{"name", t.name}, {"product", t.product}, {"memory_mib", t.memory_mib}, {"bf16_tflops", t.bf16_tflops},
            {"fp16_tflops", t.fp16_tflops}, {"fp32_tflops", t.fp32_tflops}, {"fp8_tflops", t.fp8_tflops}, {"fp4_tflops", t.fp4_tflops}, {"chip", t.chip},
            {"mem_bw_GBps", t.mem_bw_GBps}, {"link", t.link}, {"link_GBps", t.link_GBps},
            {"gpus_per_node", t.gpus_per_node}, {"tdp_w", t.tdp_w}, {"power_limit_w", t.power_limit_w}};
}

}  // namespace frenzy
