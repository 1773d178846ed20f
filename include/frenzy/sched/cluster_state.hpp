#pragma once
// The resource orchestrator: live state of a heterogeneous cluster (nodes, GPU type, free GPUs per node, which
// job holds what), allocate/release, node failure and recovery, with invariants checked at every step.
// The cluster itself sits behind `cluster_backend`: the simulator is one implementation, a real cluster manager
// (Slurm) another; both are driven by the same `orchestrator` and scheduler code.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/hw/cluster.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// `gpus` GPUs on node `node` (index into cluster_state::nodes()).
struct node_share {
    int node = 0;
    int gpus = 0;
    bool operator==(const node_share&) const = default;
};

/// Where one job runs: GPUs on one or more nodes of one GPU type; for a pipeline over several types (a mixed plan,
/// plan/mixed.hpp) `type` and `parts` hold its first stage group and `next` the later groups, one type each, in
/// pipeline order.
struct allocation {
    int type = -1;  ///< index into cluster_state::types()
    std::vector<node_share> parts;
    std::vector<allocation> next = {};  ///< the later stage groups of a mixed plan (empty: one type)
    bool operator==(const allocation&) const = default;
    /// The one-type allocations it is made of: itself without `next`, then each of `next`.
    std::vector<allocation> components() const {
        std::vector<allocation> out{{type, parts, {}}};
        for (const auto& n : next)
            for (auto& c : n.components()) out.push_back(std::move(c));
        return out;
    }
    int gpus() const {
        int n = 0;
        for (const auto& p : parts) n += p.gpus;
        for (const auto& a : next) n += a.gpus();
        return n;
    }
    int nodes() const {
        int n = static_cast<int>(parts.size());
        for (const auto& a : next) n += a.nodes();
        return n;
    }
};

/// One node of the live cluster.
struct node_state {
    std::string name;  ///< "<group name>-<k>"
    int type = 0;      ///< index into cluster_state::types()
    int gpus = 0;      ///< GPUs installed
    int free = 0;      ///< GPUs neither held by a job nor down
    bool up = true;
};

/// Live state of the cluster. Every mutation checks its preconditions and throws frenzy::error when a caller
/// would break an invariant (a GPU held twice, a job on the wrong GPU type, a down node used).
class cluster_state {
public:
    cluster_state() = default;
    explicit cluster_state(const cluster_spec& spec) {
        validate(spec);
        for (const auto& g : spec.nodes) {
            int t = type_index(g.gpu);
            if (t < 0) {
                t = static_cast<int>(types_.size());
                types_.push_back(g.gpu);
                type_total_.push_back(0);
                type_free_.push_back(0);
                type_gpn_.push_back(0);
            }
            type_gpn_[static_cast<std::size_t>(t)] = std::max(type_gpn_[static_cast<std::size_t>(t)], g.gpus_per_node);
            for (int k = 0; k < g.count; ++k) {
                nodes_.push_back({g.name + "-" + std::to_string(k), t, g.gpus_per_node, g.gpus_per_node, true});
                type_total_[static_cast<std::size_t>(t)] += g.gpus_per_node;
                type_free_[static_cast<std::size_t>(t)] += g.gpus_per_node;
            }
        }
        type_nodes_.resize(types_.size());
        for (std::size_t i = 0; i < nodes_.size(); ++i)
            type_nodes_[static_cast<std::size_t>(nodes_[i].type)].push_back(static_cast<int>(i));
    }

    const std::vector<std::string>& types() const { return types_; }
    const std::vector<node_state>& nodes() const { return nodes_; }
    /// Node indices of one type, in cluster-spec order.
    const std::vector<int>& nodes_of_type(int t) const { return type_nodes_.at(static_cast<std::size_t>(t)); }
    int type_index(std::string_view gpu) const {
        for (std::size_t i = 0; i < types_.size(); ++i)
            if (types_[i] == gpu) return static_cast<int>(i);
        return -1;
    }
    int total_gpus(int t) const { return type_total_.at(static_cast<std::size_t>(t)); }
    int free_gpus(int t) const { return type_free_.at(static_cast<std::size_t>(t)); }
    /// Largest node size of a type.
    int gpus_per_node(int t) const { return type_gpn_.at(static_cast<std::size_t>(t)); }
    int total_gpus() const {
        int n = 0;
        for (int x : type_total_) n += x;
        return n;
    }
    /// GPUs on nodes that are up (held or free).
    int up_gpus(int t) const {
        int n = 0;
        for (int i : nodes_of_type(t))
            if (nodes_[static_cast<std::size_t>(i)].up) n += nodes_[static_cast<std::size_t>(i)].gpus;
        return n;
    }
    const std::map<int, allocation>& holdings() const { return held_; }
    const allocation* holding(int job) const {
        auto it = held_.find(job);
        return it == held_.end() ? nullptr : &it->second;
    }
    /// Free GPUs per node, a scratch copy schedulers can plan on.
    std::vector<int> free_vector() const {
        std::vector<int> f(nodes_.size());
        for (std::size_t i = 0; i < nodes_.size(); ++i) f[i] = nodes_[i].free;
        return f;
    }

    /// Gives `a` to `job` for a plan on GPU type `gpu`. Throws frenzy::error if the job already holds GPUs,
    /// the allocation names another type, a node is down, or a node has too few free GPUs.
    void allocate(int job, std::string_view gpu, const allocation& a) {
        if (!a.next.empty()) throw error("orchestrator: job " + std::to_string(job) + " plan is for one GPU type but its allocation spans several");
        allocate(job, std::vector<std::string_view>{gpu}, a);
    }
    /// Gives `a` to `job` for a pipeline whose stage groups run on `gpus` in order (a mixed plan): component k of
    /// `a` (allocation::components) must be on type gpus[k]; the checks of the one-type form, for every component
    /// and across them (no node twice). Nothing changes when a check fails.
    void allocate(int job, const std::vector<std::string_view>& gpus, const allocation& a) {
        if (held_.count(job)) throw error("orchestrator: job " + std::to_string(job) + " already holds GPUs");
        const auto comps = a.components();
        if (comps.size() != gpus.size())
            throw error("orchestrator: job " + std::to_string(job) + " allocation has " + std::to_string(comps.size()) +
                        " components for a plan over " + std::to_string(gpus.size()) + " GPU types");
        std::vector<int> seen;
        for (std::size_t k = 0; k < comps.size(); ++k) check_component(job, gpus[k], comps[k], seen);
        for (const auto& c : comps) {
            for (const auto& p : c.parts) nodes_[static_cast<std::size_t>(p.node)].free -= p.gpus;
            type_free_[static_cast<std::size_t>(c.type)] -= c.gpus();
        }
        held_.emplace(job, a);
    }

    /// Returns the GPUs of `job` (to nodes that are up; GPUs of a down node stay unavailable).
    allocation release(int job) {
        auto it = held_.find(job);
        if (it == held_.end()) throw error("orchestrator: job " + std::to_string(job) + " holds no GPUs");
        allocation a = it->second;
        held_.erase(it);
        for (const auto& c : a.components())
            for (const auto& p : c.parts) {
                auto& n = nodes_[static_cast<std::size_t>(p.node)];
                if (n.up) {
                    n.free += p.gpus;
                    type_free_[static_cast<std::size_t>(n.type)] += p.gpus;
                }
            }
        return a;
    }

    /// GPUs `a` holds on node `node` (every component).
    static int held_on(const allocation& a, int node) {
        int g = 0;
        for (const auto& p : a.parts)
            if (p.node == node) g += p.gpus;
        for (const auto& n : a.next) g += held_on(n, node);
        return g;
    }

    /// Marks a node down: its free GPUs become unavailable. Returns the jobs that held GPUs there (they still
    /// hold them until released; the caller releases and restarts them).
    std::vector<int> fail(int node) {
        auto& n = nodes_.at(static_cast<std::size_t>(node));
        if (!n.up) return {};
        n.up = false;
        type_free_[static_cast<std::size_t>(n.type)] -= n.free;
        n.free = 0;
        std::vector<int> hit;
        for (const auto& [job, a] : held_)
            if (held_on(a, node) > 0) hit.push_back(job);
        return hit;
    }

    /// Brings a node back: its GPUs not held by a job become free.
    void recover(int node) {
        auto& n = nodes_.at(static_cast<std::size_t>(node));
        if (n.up) return;
        int held = 0;
        for (const auto& [job, a] : held_) held += held_on(a, node);
        n.up = true;
        n.free = n.gpus - held;
        type_free_[static_cast<std::size_t>(n.type)] += n.free;
    }

    /// Recomputes the accounting from scratch; an empty string when every invariant holds, else what broke.
    std::string check_invariants() const {
        std::vector<int> held(nodes_.size(), 0);
        for (const auto& [job, a] : held_)
            for (const auto& c : a.components())
                for (const auto& p : c.parts) {
                    if (p.node < 0 || p.node >= static_cast<int>(nodes_.size())) return "job " + std::to_string(job) + " on bad node";
                    if (nodes_[static_cast<std::size_t>(p.node)].type != c.type)
                        return "job " + std::to_string(job) + " holds GPUs of another type than its allocation";
                    held[static_cast<std::size_t>(p.node)] += p.gpus;
                }
        std::vector<int> tf(types_.size(), 0);
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            const auto& n = nodes_[i];
            if (held[i] > n.gpus) return "node " + n.name + " has " + std::to_string(held[i]) + " GPUs held of " + std::to_string(n.gpus);
            const int expect = n.up ? n.gpus - held[i] : 0;
            if (n.free != expect) return "node " + n.name + " free=" + std::to_string(n.free) + " but " + std::to_string(expect) + " expected";
            tf[static_cast<std::size_t>(n.type)] += n.free;
        }
        for (std::size_t t = 0; t < types_.size(); ++t)
            if (tf[t] != type_free_[t]) return "type " + types_[t] + " free count out of balance";
        return {};
    }

private:
    /// One one-type component of an allocation for `job`, to run GPU type `gpu`; `seen` collects the nodes named.
    void check_component(int job, std::string_view gpu, const allocation& a, std::vector<int>& seen) const {
        const int t = type_index(gpu);
        if (t < 0) throw error("orchestrator: job " + std::to_string(job) + " plan is for GPU type \"" + std::string(gpu) +
                               "\" which the cluster does not have");
        if (a.type != t) throw error("orchestrator: job " + std::to_string(job) + " allocation type does not match plan GPU \"" +
                                     std::string(gpu) + "\"");
        if (a.parts.empty()) throw error("orchestrator: job " + std::to_string(job) + " allocation is empty");
        for (const auto& p : a.parts) {
            if (p.node < 0 || p.node >= static_cast<int>(nodes_.size()))
                throw error("orchestrator: job " + std::to_string(job) + " names node " + std::to_string(p.node) + " out of range");
            const auto& n = nodes_[static_cast<std::size_t>(p.node)];
            if (std::find(seen.begin(), seen.end(), p.node) != seen.end())
                throw error("orchestrator: job " + std::to_string(job) + " names node " + n.name + " twice");
            seen.push_back(p.node);
            if (n.type != t) throw error("orchestrator: job " + std::to_string(job) + " plan for " + std::string(gpu) +
                                         " placed on node " + n.name + " of type " + types_[static_cast<std::size_t>(n.type)]);
            if (!n.up) throw error("orchestrator: job " + std::to_string(job) + " placed on down node " + n.name);
            if (p.gpus < 1 || p.gpus > n.free)
                throw error("orchestrator: job " + std::to_string(job) + " wants " + std::to_string(p.gpus) + " GPUs on node " +
                            n.name + " which has " + std::to_string(n.free) + " free");
        }
    }

    std::vector<std::string> types_;
    std::vector<int> type_total_, type_free_, type_gpn_;
    std::vector<std::vector<int>> type_nodes_;
    std::vector<node_state> nodes_;
    std::map<int, allocation> held_;
};

/// What actually runs jobs: the simulator, or a real cluster manager. `launch` starts job `id` (the job `job` as
/// its host holds it) on plan `p` over its allocation (a pipeline over several GPU types, plan::groups, has one
/// component of `a` per stage group; a backend that cannot run one throws frenzy::error), `stop` ends it
/// (preemption: the job checkpoints first).
class cluster_backend {
public:
    virtual ~cluster_backend() = default;
    virtual void launch(int id, const job_spec& job, const plan& p, const allocation& a) = 0;
    virtual void stop(int job) = 0;
};

/// Drives a backend from scheduler decisions, keeping `cluster_state` in step.
class orchestrator {
public:
    orchestrator(const cluster_spec& spec, cluster_backend& backend) : state_(spec), backend_(&backend) {}

    const cluster_state& state() const { return state_; }
    /// Allocates and launches job `id` (its spec `job`); a pipeline over several GPU types has component k of `a`
    /// hold stage group k, on its type, with its GPUs. Throws frenzy::error (state unchanged) if it would break an
    /// invariant; an exception of the backend's launch leaves the GPUs held (the host releases them: finished).
    void start(int id, const job_spec& job, const plan& p, const allocation& a) {
        adopt(id, p, a);
        backend_->launch(id, job, p, a);
    }
    /// Holds the GPUs of a job the backend already runs on `a` (found again after a host restarts), without a
    /// launch; the same checks as start().
    void adopt(int job, const plan& p, const allocation& a) {
        if (p.mixed()) return adopt_groups(job, p, a);
        if (p.gpus != a.gpus())
            throw error("orchestrator: job " + std::to_string(job) + " plan needs " + std::to_string(p.gpus) +
                        " GPUs but allocation has " + std::to_string(a.gpus()));
        if (p.capacity.value > 0 && p.required > p.capacity)
            throw error("orchestrator: job " + std::to_string(job) + " plan on " + p.gpu + " does not fit in memory");
        state_.allocate(job, p.gpu, a);
    }
    /// Preempts a running job.
    void stop(int job) {
        state_.release(job);
        backend_->stop(job);
    }
    /// A job ended by itself (completed or crashed).
    void finished(int job) { state_.release(job); }
    /// A node failed: returns the jobs that were on it, already released (the backend restarts them).
    std::vector<int> node_failed(int node) {
        auto hit = state_.fail(node);
        for (int j : hit) state_.release(j);
        return hit;
    }
    void node_recovered(int node) { state_.recover(node); }

private:
    void adopt_groups(int job, const plan& p, const allocation& a) {
        const auto comps = a.components();
        std::vector<std::string_view> types;
        for (std::size_t k = 0; k < p.groups.size(); ++k) {
            const auto& g = p.groups[k];
            if (k < comps.size() && g.gpus != comps[k].gpus())
                throw error("orchestrator: job " + std::to_string(job) + " stage group " + std::to_string(k) + " needs " +
                            std::to_string(g.gpus) + " x " + g.gpu + " but its allocation has " + std::to_string(comps[k].gpus()));
            if (g.capacity.value > 0 && g.required > g.capacity)
                throw error("orchestrator: job " + std::to_string(job) + " stage group " + std::to_string(k) + " on " + g.gpu +
                            " does not fit in memory");
            types.push_back(g.gpu);
        }
        state_.allocate(job, types, a);
    }

    cluster_state state_;
    cluster_backend* backend_;
};

}  // namespace frenzy
