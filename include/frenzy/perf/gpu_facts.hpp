#pragma once
// What the step-time model reads of a GPU type on a topology (perf/step_time.hpp): the node shape and network, the
// effective bandwidths of the collectives, and those facts of a type taken once (gpu_facts) for a planner that asks
// the model about one type many times.
#include <algorithm>
#include <cstdint>

#include "frenzy/hw/cluster.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/perf/efficiency.hpp"

namespace frenzy {

/// Where a job's GPUs sit: node size and inter-node bandwidth per node (GB/s; 0 = default for the GPU class).
struct topology {
    int gpus_per_node = 8;
    double network_GBps = 0;
    bool operator==(const topology&) const = default;
};

namespace detail {
/// Effective bandwidths (GB/s per rank): NCCL reaches about 75% of the NVLink/PCIe unidirectional rate
/// (nccl-tests busbw on DGX A100: ~230 of 300 GB/s) and ~90% of the NIC rate across nodes.
inline double intra_node_GBps(const gpu_type& g) { return 0.75 * g.link_GBps / 2.0; }
inline double node_network_GBps(const gpu_type& g, const topology& t) {
    return t.network_GBps > 0 ? t.network_GBps : default_network_GBps(g, t.gpus_per_node);  // hw/cluster.hpp
}
/// Bus bandwidth of a collective whose group has `per_node` members in each of several nodes: NCCL runs one ring
/// per NIC, so the members of a node share the node's network bandwidth (a group with one member per node gets
/// one NIC's share, a group filling the node gets all of it); never more than the intra-node link. From the
/// intra-node and node network bandwidths (what gpu_facts holds), or from the type and topology below.
inline double spanning_GBps(double intra_GBps, double network_GBps, int gpus_per_node, std::int64_t per_node) {
    const double gpn = static_cast<double>(std::max(1, gpus_per_node));
    const double k = std::clamp(static_cast<double>(per_node), 1.0, gpn);
    return std::min(intra_GBps, 0.9 * network_GBps * k / gpn);
}
inline double spanning_GBps(const gpu_type& g, const topology& t, std::int64_t per_node) {
    return spanning_GBps(intra_node_GBps(g), node_network_GBps(g, t), t.gpus_per_node, per_node);
}
inline double inter_node_GBps(const gpu_type& g, const topology& t) { return spanning_GBps(g, t, 1); }

}  // namespace detail

/// What the step-time model reads of one GPU type on one topology that is the same for every job asked about it:
/// the compute policy's efficiency entry (looked up by the type's name, then its chip), the compute capability (by
/// chip), whether flash attention runs, the intra-node and node network bandwidths (the default network by link
/// name). A planner takes it once per pool (basic_step_time_model::prepare) instead of comparing those strings on
/// every call; the prepared overloads give the unprepared ones' parts bit for bit (the same values, the same
/// operations). A value the caller holds, no cache; it points at the type and at the model's efficiency entry, so
/// it is valid while both live.
struct gpu_facts {
    const gpu_type* gpu = nullptr;  ///< the type it was taken for
    topology topo{};                ///< the topology it was taken for
    int compute_capability = 0;     ///< gpu_type::compute_capability
    bool flash_attention = false;   ///< gpu_type::flash_attention
    double intra_GBps = 0;          ///< detail::intra_node_GBps
    double network_GBps = 0;        ///< detail::node_network_GBps
    /// the compute policy's entry for the type where it offers one (calibrated_compute::entry; null: none)
    const gpu_coefficient* efficiency = nullptr;
    /// detail::spanning_GBps(*gpu, topo, per_node), with the same operations
    double spanning_GBps(std::int64_t per_node) const {
        return detail::spanning_GBps(intra_GBps, network_GBps, topo.gpus_per_node, per_node);
    }
};

}  // namespace frenzy
