#pragma once
// Cluster spec <-> JSON (DESIGN.md "Cluster spec"): node groups and optional GPU type overrides.
#include <string>

#include <nlohmann/json.hpp>

#include "frenzy/hw/cluster.hpp"
#include "frenzy/io/json_reader.hpp"

namespace frenzy {

/// A GPU type from JSON; fields left out keep the values of `base` (the catalog entry being overridden).
inline gpu_type gpu_type_from_json(const nlohmann::json& j, const std::string& path, const gpu_catalog& catalog) {
    detail::object_reader r(j, path);
    std::string name;
    r.get("name", name);
    if (name.empty()) throw config_error(path + ".name is missing");
    gpu_type t;
    if (auto* base = catalog.find(name)) t = *base;
    t.name = name;
    namespace b = detail::bounds;
    r.get("product", t.product);
    r.get("memory_mib", t.memory_mib, b::memory_mib);
    r.get("bf16_tflops", t.bf16_tflops, b::tflops);
    r.get("fp16_tflops", t.fp16_tflops, b::tflops);
    r.get("fp32_tflops", t.fp32_tflops, b::tflops);
    r.get("fp8_tflops", t.fp8_tflops, b::tflops);
    r.get("mem_bw_gbps", t.mem_bw_gbps, b::bandwidth_gbps);
    r.get("link", t.link);
    r.get("link_gbps", t.link_gbps, b::bandwidth_gbps);
    r.get("gpus_per_node", t.gpus_per_node, b::gpus_per_node);
    r.finish();
    try {
        gpu_catalog::validate(t);
    } catch (const config_error& e) {
        throw config_error(detail::printable(path, 200) + ": " + e.what());
    }
    return t;
}

/// Most GPU types and node groups a cluster spec may list (the readers and validate() are linear/quadratic in them).
inline constexpr std::size_t max_gpu_types = 1024;
inline constexpr std::size_t max_node_groups = 10000;

inline cluster_spec cluster_from_json(const nlohmann::json& j) {
    namespace b = detail::bounds;
    detail::object_reader r(j, "cluster");
    cluster_spec c;
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
        n.get("network_gbps", g.network_gbps, b::bandwidth_gbps);
        n.finish();
        if (g.name.empty()) g.name = g.gpu;
        c.nodes.push_back(g);
    }
    r.finish();
    validate(c);
    // Each group has at most 1024 x 10^6 GPUs and there are at most 10^4 groups: the sum fits int64.
    std::int64_t total = 0;
    for (const auto& g : c.nodes)
        total = detail::checked_add(total, detail::checked_mul(g.gpus_per_node, g.count, "gpus_per_node x count"),
                                    "cluster GPUs");
    detail::check_bound("cluster total GPUs (sum of gpus_per_node x count)", total, b::gpus);
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
        throw detail::field_error(path, detail::describe(j), "must be an array of GPU types or {\"gpu_types\": [...]}");
    } else if (j.size() > max_gpu_types) {
        throw detail::field_error(path, detail::describe(j), "has more than " + std::to_string(max_gpu_types) + " elements");
    }
    for (std::size_t i = 0; i < arr->size(); ++i)
        catalog.upsert(gpu_type_from_json((*arr)[i], path + "[" + std::to_string(i) + "]", catalog));
}

inline cluster_spec load_cluster(const std::string& path) {
    const auto j = detail::read_json_file(path);  // its errors name the file already
    try {
        return cluster_from_json(j);
    } catch (const config_error& e) {
        throw config_error(detail::printable(path, 200) + ": " + e.what());
    }
}

inline nlohmann::json to_json(const gpu_type& t) {
    return {{"name", t.name}, {"product", t.product}, {"memory_mib", t.memory_mib}, {"bf16_tflops", t.bf16_tflops},
            {"fp16_tflops", t.fp16_tflops}, {"fp32_tflops", t.fp32_tflops}, {"fp8_tflops", t.fp8_tflops},
            {"mem_bw_gbps", t.mem_bw_gbps}, {"link", t.link}, {"link_gbps", t.link_gbps},
            {"gpus_per_node", t.gpus_per_node}};
}

}  // namespace frenzy
