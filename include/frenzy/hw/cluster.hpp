#pragma once
// Cluster inventory: node groups of one GPU type each.
#include <cstdint>
#include <string>
#include <vector>

#include "frenzy/hw/gpu.hpp"

namespace frenzy {

/// `count` identical nodes of `gpus_per_node` GPUs of type `gpu`.
struct node_group {
    std::string name;
    std::string gpu;
    int gpus_per_node = 8;
    int count = 1;
    double network_gbps = 0;  ///< inter-node bandwidth per node, GB/s; 0 = default for the GPU's class
    bool operator==(const node_group&) const = default;
};

struct cluster_spec {
    std::vector<node_group> nodes;
    gpu_catalog catalog;  ///< built-in types plus the spec's gpu_types overrides

    std::int64_t total_gpus() const {
        std::int64_t n = 0;
        for (const auto& g : nodes) n += static_cast<std::int64_t>(g.gpus_per_node) * g.count;
        return n;
    }
};

/// Default inter-node bandwidth of a node group, GB/s: 8x200 Gb/s InfiniBand for NVLink/HBM nodes
/// (DGX A100/H100 class: 200 GB/s), 100 Gb/s Ethernet (12.5 GB/s) for PCIe nodes.
inline double network_gbps(const node_group& g, const gpu_type& t) {
    if (g.network_gbps > 0) return g.network_gbps;
    return t.nvlink() ? 200.0 : 12.5;
}

inline void validate(const cluster_spec& c) {
    if (c.nodes.empty()) throw config_error("cluster.nodes must not be empty");
    for (std::size_t i = 0; i < c.nodes.size(); ++i) {
        const auto& g = c.nodes[i];
        const std::string f = "cluster.nodes[" + std::to_string(i) + "]";
        c.catalog.at(g.gpu, f + ".gpu");
        if (g.gpus_per_node < 1) throw config_error(f + ".gpus_per_node=" + std::to_string(g.gpus_per_node) + " must be at least 1");
        if (g.count < 1) throw config_error(f + ".count=" + std::to_string(g.count) + " must be at least 1");
        if (g.network_gbps < 0) throw config_error(f + ".network_gbps must not be negative");
        for (std::size_t k = 0; k < i; ++k)
            if (!g.name.empty() && c.nodes[k].name == g.name)
                throw config_error(f + ".name=\"" + g.name + "\" is used twice");
    }
}

}  // namespace frenzy
