#pragma once
// Placement policies: which nodes of one GPU type a job's GPUs go to. The default, best_fit_placement, is HAS's:
// nodes whose free GPUs match the request exactly, else the tightest fit (least remaining), else a greedy spread
// across nodes that keeps every tensor-parallel group inside one node.
#include <algorithm>
#include <concepts>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include "frenzy/sched/cluster_state.hpp"

namespace frenzy {

/// `gpus` GPUs of type `type`, in groups of `tp` that must each sit on one node.
struct placement_request {
    int type = 0;
    int gpus = 1;
    int tp = 1;
};

/// A placement policy: given the cluster and a scratch vector of free GPUs per node (down nodes have 0), an
/// allocation of exactly `gpus` GPUs on nodes of `type`, or nothing.
template <class P>
concept PlacementPolicy = requires(const P& p, const cluster_state& c, std::span<const int> free, const placement_request& r) {
    { p.place(c, free, r) } -> std::same_as<std::optional<allocation>>;
};

struct best_fit_placement {
    std::optional<allocation> place(const cluster_state& c, std::span<const int> free, const placement_request& r) const {
        const auto& nodes = c.nodes_of_type(r.type);
        const int tp = std::max(1, r.tp);
        if (r.gpus < 1 || r.gpus % tp != 0) return std::nullopt;
        int avail = 0;
        for (int n : nodes) avail += free[static_cast<std::size_t>(n)];
        if (avail < r.gpus) return std::nullopt;
        allocation a;
        a.type = r.type;
        // 1. exact: one node with exactly the request free ...
        for (int n : nodes)
            if (free[static_cast<std::size_t>(n)] == r.gpus) {
                a.parts.push_back({n, r.gpus});
                return a;
            }
        // ... or whole free nodes that add up to it exactly.
        const int gpn = c.gpus_per_node(r.type);
        if (r.gpus > gpn && r.gpus % gpn == 0) {
            for (int n : nodes) {
                const auto& ns = c.nodes()[static_cast<std::size_t>(n)];
                if (ns.gpus == gpn && free[static_cast<std::size_t>(n)] == gpn) a.parts.push_back({n, gpn});
                if (a.gpus() == r.gpus) return a;
            }
            a.parts.clear();
        }
        // 2. tightest single node: least GPUs left over.
        int best = -1;
        for (int n : nodes) {
            const int f = free[static_cast<std::size_t>(n)];
            if (f >= r.gpus && (best < 0 || f < free[static_cast<std::size_t>(best)])) best = n;
        }
        if (best >= 0) {
            a.parts.push_back({best, r.gpus});
            return a;
        }
        // 3. greedy spread, fullest-free nodes first, whole tp groups per node.
        std::vector<int> order(nodes.begin(), nodes.end());
        std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
            return free[static_cast<std::size_t>(x)] > free[static_cast<std::size_t>(y)];
        });
        int left = r.gpus;
        for (int n : order) {
            const int take = std::min(left, free[static_cast<std::size_t>(n)] / tp * tp);
            if (take <= 0) continue;
            a.parts.push_back({n, take});
            left -= take;
            if (left == 0) return a;
        }
        return std::nullopt;
    }
};
static_assert(PlacementPolicy<best_fit_placement>);

namespace detail {
/// Takes the GPUs of `a` (every component) out of a scratch vector of free GPUs per node.
inline void take(std::vector<int>& free, const allocation& a) {
    for (const auto& p : a.parts) free[static_cast<std::size_t>(p.node)] -= p.gpus;
    for (const auto& n : a.next) take(free, n);
}
/// Gives the GPUs of `a` (every component) back to a scratch vector of free GPUs per node.
inline void give(std::vector<int>& free, const allocation& a) {
    for (const auto& p : a.parts) free[static_cast<std::size_t>(p.node)] += p.gpus;
    for (const auto& n : a.next) give(free, n);
}
}  // namespace detail

}  // namespace frenzy
