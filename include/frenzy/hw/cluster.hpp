#pragma once
// Cluster inventory: node groups of one GPU type each.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/hw/gpu.hpp"

namespace frenzy {

/// `count` identical nodes of `gpus_per_node` GPUs of type `gpu`.
struct node_group {
    std::string name;
    std::string gpu;
    int gpus_per_node = 8;
    int count = 1;
    double network_GBps = 0;  ///< inter-node bandwidth per node, GB/s; 0 = default for the GPU's class
    /// Host memory per node, GiB, for the host side of offload (memory/fit.hpp host_memory_per_node); 0 = not
    /// stated: offload plans are not checked against it.
    double host_memory_GiB = 0;
    bool operator==(const node_group&) const = default;
};

/// What moving a running job to another plan costs on this cluster (HAS's moves, issue 56; docs/formats.md
/// "Cluster spec"): the job saves its model states, is requeued, starts its framework again and loads the states
/// resharded for the new layout. Defaults are assumptions, stated so that a site can set its own.
struct move_costs {
    /// Storage bandwidth one job's checkpoint save or load gets, GB/s (a per-job share of a parallel file system;
    /// assumed, not measured). Save and load each take state bytes / this.
    double storage_GBps = 5;
    double restart_s = 30;  ///< requeue, allocation and container start of the new run, s
    double startup_s = 30;  ///< framework start-up of the new run (process groups, NCCL, model build), s
    /// 0: the job checkpoints when asked to move (the launch files' signal path), so no work is lost; > 0: it
    /// checkpoints only every this many seconds of computing and a move loses the work since the last one.
    double checkpoint_interval_s = 0;
    bool operator==(const move_costs&) const = default;
};

/// Bounds of move_costs' fields: the bandwidth must be positive (a save would never end), the seconds as the
/// simulator's (bounds::sim_seconds).
inline constexpr real_bound storage_GBps_bound{1e-3, 1e6};

/// Checks every field of `m`; config_error naming the field (cluster.moves.storage_GBps=0 must be in ...).
inline void validate(const move_costs& m, const std::string& path = "cluster.moves") {
    check_bound(path + ".storage_GBps", m.storage_GBps, storage_GBps_bound);
    check_bound(path + ".restart_s", m.restart_s, bounds::sim_seconds);
    check_bound(path + ".startup_s", m.startup_s, bounds::sim_seconds);
    check_bound(path + ".checkpoint_interval_s", m.checkpoint_interval_s, bounds::sim_seconds);
}

/// Seconds a move of a job whose checkpoint holds `state_bytes` costs before it computes again, lost work
/// excluded: save + restart + start-up + load.
inline double move_seconds(const move_costs& m, double state_bytes) {
    return 2.0 * state_bytes / (m.storage_GBps * 1e9) + m.restart_s + m.startup_s;
}

struct cluster_spec {
    std::vector<node_group> nodes;
    gpu_catalog catalog;  ///< built-in types plus the spec's gpu_types overrides
    move_costs moves;     ///< what moving a running job costs here (defaults when the file has no "moves")

    std::int64_t total_gpus() const {
        std::int64_t n = 0;
        for (const auto& g : nodes) n += static_cast<std::int64_t>(g.gpus_per_node) * g.count;
        return n;
    }
};

/// Default network (NIC) bandwidth per GPU, GB/s, of the reference system of a GPU's class: DGX A100 has one
/// 200 Gb/s HDR InfiniBand NIC per GPU (25 GB/s), DGX H100/H200/B200 and MI300X platforms one 400 Gb/s NDR NIC per
/// GPU (50 GB/s), GB300 NVL72 one 800 Gb/s ConnectX-8 per GPU (100 GB/s) (NVIDIA DGX A100/H100/B200 and GB300
/// NVL72 datasheets; AMD Instinct MI300X platform brief); older NVLink systems (DGX-1/2) 100 Gb/s EDR (12.5 GB/s);
/// PCIe servers share one 100 Gb/s Ethernet port per node.
inline double default_nic_GBps_per_gpu(const gpu_type& t) {
    if (t.link == "nvlink3") return 25.0;
    if (t.link == "nvlink4" || t.link == "infinity-fabric") return 50.0;
    if (t.link == "nvlink5") return t.chip == "gb110" ? 100.0 : 50.0;
    return 12.5;
}
/// Default inter-node bandwidth of a node of `gpus_per_node` GPUs of type `t`, GB/s: the per-GPU NICs above, or
/// one 100 Gb/s Ethernet port (12.5 GB/s) for PCIe nodes.
inline double default_network_GBps(const gpu_type& t, int gpus_per_node) {
    if (!t.nvlink()) return 12.5;
    return default_nic_GBps_per_gpu(t) * static_cast<double>(std::max(1, gpus_per_node));
}
/// Inter-node bandwidth of a node group, GB/s: its own `network_GBps`, else the default of its GPU class.
inline double network_GBps(const node_group& g, const gpu_type& t) {
    if (g.network_GBps > 0) return g.network_GBps;
    return default_network_GBps(t, g.gpus_per_node);
}

inline void validate(const cluster_spec& c) {
    if (c.nodes.empty()) throw config_error("cluster.nodes must not be empty");
    validate(c.moves);
    for (std::size_t i = 0; i < c.nodes.size(); ++i) {
        const auto& g = c.nodes[i];
        const std::string f = "cluster.nodes[" + std::to_string(i) + "]";
        c.catalog.at(g.gpu, f + ".gpu");
        if (g.gpus_per_node < 1) throw config_error(f + ".gpus_per_node=" + std::to_string(g.gpus_per_node) + " must be at least 1");
        if (g.count < 1) throw config_error(f + ".count=" + std::to_string(g.count) + " must be at least 1");
        if (g.network_GBps < 0) throw config_error(f + ".network_GBps must not be negative");
        for (std::size_t k = 0; k < i; ++k)
            if (!g.name.empty() && c.nodes[k].name == g.name)
                throw config_error(f + ".name=\"" + g.name + "\" is used twice");
    }
}

}  // namespace frenzy
