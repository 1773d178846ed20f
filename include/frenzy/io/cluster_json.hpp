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
    r.get("product", t.product);
    r.get("memory_mib", t.memory_mib);
    r.get("bf16_tflops", t.bf16_tflops);
    r.get("fp16_tflops", t.fp16_tflops);
    r.get("fp32_tflops", t.fp32_tflops);
    r.get("fp8_tflops", t.fp8_tflops);
    r.get("fp4_tflops", t.fp4_tflops);
    r.get("chip", t.chip);
    r.get("mem_bw_gbps", t.mem_bw_gbps);
    r.get("link", t.link);
    r.get("link_gbps", t.link_gbps);
    r.get("gpus_per_node", t.gpus_per_node);
    r.finish();
    try {
        gpu_catalog::validate(t);
    } catch (const config_error& e) {
        throw config_error(path + ": " + e.what());
    }
    return t;
}

inline cluster_spec cluster_from_json(const nlohmann::json& j) {
    detail::object_reader r(j, "cluster");
    cluster_spec c;
    if (r.has("gpu_types")) {
        const auto& arr = r.raw("gpu_types");
        if (!arr.is_array()) throw config_error("cluster.gpu_types must be an array");
        for (std::size_t i = 0; i < arr.size(); ++i)
            c.catalog.upsert(gpu_type_from_json(arr[i], "cluster.gpu_types[" + std::to_string(i) + "]", c.catalog));
    }
    if (!r.has("nodes")) throw config_error("cluster.nodes is missing");
    const auto& nodes = r.raw("nodes");
    if (!nodes.is_array()) throw config_error("cluster.nodes must be an array");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        detail::object_reader n(nodes[i], "cluster.nodes[" + std::to_string(i) + "]");
        node_group g;
        n.get("name", g.name);
        n.get("gpu", g.gpu);
        if (g.gpu.empty()) throw config_error(n.field("gpu") + " is missing");
        g.gpus_per_node = 0;
        n.get("gpus_per_node", g.gpus_per_node);
        if (g.gpus_per_node == 0 && !n.has("gpus_per_node")) {
            if (auto* t = c.catalog.find(g.gpu)) g.gpus_per_node = t->gpus_per_node;
        }
        n.get("count", g.count);
        n.get("network_gbps", g.network_gbps);
        n.finish();
        if (g.name.empty()) g.name = g.gpu;
        c.nodes.push_back(g);
    }
    r.finish();
    validate(c);
    return c;
}

inline cluster_spec load_cluster(const std::string& path) {
    try {
        return cluster_from_json(detail::read_json_file(path));
    } catch (const config_error& e) {
        throw config_error(path + ": " + e.what());
    }
}

inline nlohmann::json to_json(const gpu_type& t) {
    return {{"name", t.name}, {"product", t.product}, {"memory_mib", t.memory_mib}, {"bf16_tflops", t.bf16_tflops},
            {"fp16_tflops", t.fp16_tflops}, {"fp32_tflops", t.fp32_tflops}, {"fp8_tflops", t.fp8_tflops}, {"fp4_tflops", t.fp4_tflops}, {"chip", t.chip},
            {"mem_bw_gbps", t.mem_bw_gbps}, {"link", t.link}, {"link_gbps", t.link_gbps},
            {"gpus_per_node", t.gpus_per_node}};
}

}  // namespace frenzy
