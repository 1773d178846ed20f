#pragma once
// Heterogeneous pipeline plans: one job's pipeline stages on two GPU types (what Metis, ATC'24, and Sailor, SOSP'25,
// plan for one job alone), every stage with the same tp and dp on GPUs of one type, the layers split unevenly
// (parallel.stage_layers: Megatron-LM's --pipeline-model-parallel-layout, which runs such a pipeline as written:
// megatron/core/transformer/pipeline_parallel_layer_layout.py @d98e8a64) so that the slowest stage is as fast as the
// memory of each type allows.
//
//   memory  each stage's peak on its own type: the memory model's per-stage report of the job as that type runs it
//           (its attention kernel, train/attention.hpp), by the one fit rule (memory/fit.hpp)
//   time    per group of stages on one type, one micro-batch slot of its slowest stage (the step-time model's parts
//           over the group's stages only: perf/stage_load.hpp bottleneck_stage(j, f, first, last)), at least the
//           send of a micro-batch's activations forward and their gradients backward over the link between the
//           types (the slower of the two types' inter-node bandwidths). 1F1B over stage slots t_s takes
//           (m - 1) x max t_s + sum t_s: every micro-batch passes the slowest stage, and the fill and drain pass
//           each stage once (= (m + pp - 1) x t for equal stages, the single-type model's). Then the slowest
//           group's exposed gradient sync, parameter gather and optimizer pass (each stage's data-parallel group
//           lies inside its type).
//   split   per pair of stage counts, the layers on the first type grow until its slowest stage is as slow as
//           the second's (binary search on the time alone), then move to the nearest split that both types'
//           memory holds (the first type's stages fill as its layers grow, the second's empty).
//
// The search (plan/mixed_search.hpp plan_mixed) tries every ordered pair of types, tp dividing both node sizes, every dp, Megatron's
// distributed optimizer, stage counts on whole nodes up to plan_options::max_mixed_stages, the recompute levels
// from none up, and per level the largest micro-batch that fits; it keeps the best plan by the objective per pair
// of types and GPU count.
#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/perf/flops.hpp"
#include "frenzy/perf/stage_load.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/plan/feasibility.hpp"
#include "frenzy/plan/objective.hpp"
#include "frenzy/plan/options.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/plan/policies.hpp"
#include "frenzy/plan/search_space.hpp"
#include "frenzy/train/attention.hpp"
#include "frenzy/train/geometry.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// `stages` consecutive pipeline stages on GPUs of `pool` (a group of a mixed plan, before it is evaluated).
struct stage_group_shape {
    const gpu_pool* pool = nullptr;
    std::int64_t stages = 0;
};

/// A mixed plan evaluated, or why not: bit k of `over` is set when a stage of group k does not fit its GPU (every
/// group is checked), `why` says what failed.
struct mixed_evaluation {
    std::optional<frenzy::plan> plan;
    unsigned over = 0;
    std::string why;
};

/// `per_group[k]` layers over groups of `stages[k]` stages each, as even as possible inside each group; a group's
/// extra layers go to its stages that are neither the pipeline's first (it holds the most micro-batches in flight
/// under 1F1B) nor its last (the output layer and the loss), in order, then to those.
/// `out` is overwritten (its storage reused: no allocation once it has grown).
inline void spread_layers(std::span<const std::int64_t> per_group, std::span<const std::int64_t> stages,
                          std::vector<std::int64_t>& out) {
    std::int64_t pp = 0;
    for (auto s : stages) pp += s;
    out.clear();
    out.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, pp)));
    std::int64_t first = 0;
    for (std::size_t k = 0; k < stages.size(); ++k) {
        const auto s = stages[k], n = per_group[k];
        const auto base = static_cast<std::size_t>(out.size());
        for (std::int64_t i = 0; i < s; ++i) out.push_back(n / s);
        std::int64_t extra = n % s;  // to the group's middle stages in order, then to its pipeline ends in order
        for (const bool ends : {false, true})
            for (std::int64_t i = 0; i < s && extra > 0; ++i)
                if ((first + i == 0 || first + i == pp - 1) == ends) {
                    ++out[base + static_cast<std::size_t>(i)];
                    --extra;
                }
        first += s;
    }
}
inline std::vector<std::int64_t> spread_layers(std::span<const std::int64_t> per_group, std::span<const std::int64_t> stages) {
    std::vector<std::int64_t> out;
    spread_layers(per_group, stages, out);
    return out;
}

namespace detail {

/// The link between two stage groups: the slower of their inter-node bandwidths per rank (GB/s).
inline double link_GBps(const gpu_pool& a, const gpu_pool& b) {
    return std::min(inter_node_GBps(a.gpu, topology{a.gpus_per_node, a.network_GBps}),
                    inter_node_GBps(b.gpu, topology{b.gpus_per_node, b.network_GBps}));
}

/// Seconds to send one micro-batch's activations forward and their gradients backward between two stages over
/// `GBps` (the buffer of perf/step_time.hpp pipeline_send_bytes, as the one-type pipeline step sends it).
inline double boundary_seconds(const job_spec& j, double GBps) {
    return 2.0 * ring_collectives{}.seconds(collective::send_recv, pipeline_send_bytes(j), 2, GBps);
}

}  // namespace detail

namespace detail {

/// Group k of `shape` before it is evaluated: its type, stages from pipeline rank `first`, GPUs on whole nodes, its
/// layers and the usable memory of one of its GPUs.
inline stage_group group_of(const job_spec& j, const stage_group_shape& shape, std::int64_t first, const plan_options& opt) {
    const auto& p = j.parallel;
    const auto& pool = *shape.pool;
    stage_group grp;
    grp.gpu = pool.gpu.name;
    grp.gpus_per_node = pool.gpus_per_node;
    grp.first_stage = first;
    grp.stages = shape.stages;
    grp.gpus = static_cast<int>(shape.stages * p.tp * p.dp * p.cp);
    grp.nodes = (grp.gpus + pool.gpus_per_node - 1) / pool.gpus_per_node;
    for (std::int64_t s = first; s < first + grp.stages; ++s) grp.layers += stage_layer_count(j, s);
    grp.capacity = usable_memory(pool.gpu, opt.margin);
    return grp;
}

/// The fullest of the group's stages in `rep` (the job as the group's type runs it), by the fit rule's requirement.
inline void set_group_memory(stage_group& grp, const memory_report& rep) {
    for (std::int64_t s = grp.first_stage; s < grp.first_stage + grp.stages; ++s) {
        const auto& st = rep.stages.at(static_cast<std::size_t>(s));
        const bytes need{st.peak_reserved.value * (1.0 + rep.uncertainty)};
        if (need.value > grp.required.value) {
            grp.required = need;
            grp.peak_reserved = st.peak_reserved;
        }
    }
}

/// The slowest link from group k to a neighbouring group (GB/s per rank; 0 with no neighbour).
inline double neighbour_link_GBps(std::span<const stage_group_shape> shape, std::size_t k) {
    double link = 0;
    for (std::size_t n : {k - 1, k + 1})  // k - 1 wraps past the end for k = 0
        if (n < shape.size()) {
            const double l = link_GBps(*shape[k].pool, *shape[n].pool);
            link = link > 0 ? std::min(link, l) : l;
        }
    return link;
}

/// The step of a 1F1B pipeline over the groups (see the top of the file) and what follows from it: tokens/s, MFU
/// against `peak` (every GPU's peak FLOP/s together), the time to the token budget, GPU-hours and cost.
inline void set_mixed_totals(const job_spec& j, const plan_options& opt, double peak, plan& out) {
    double max_slot = 0, sum_slots = 0, max_tail = 0;
    for (const auto& g : out.groups) {
        max_slot = std::max(max_slot, g.slot_s);
        sum_slots += static_cast<double>(g.stages) * g.slot_s;
        max_tail = std::max(max_tail, g.tail_s);
    }
    const double m = static_cast<double>(std::max<std::int64_t>(1, j.micro_batches()));
    const double step = (m - 1.0) * max_slot + sum_slots + max_tail;
    set_group_totals(out);
    out.framework = j.runtime.framework;
    out.precision = j.training.precision;
    out.parallel = j.parallel;
    out.micro_batch = j.training.micro_batch;
    out.overlap_grad_reduce = j.runtime.overlap_grad_reduce;
    out.tp_comm_overlap = j.runtime.tp_comm_overlap;
    out.step_time = seconds{step};
    out.tokens_per_s = j.tokens_per_step() / step;
    out.mfu = step_flops(j).model().value / (step * peak);
    const double tokens = j.training.total_tokens;
    out.has_budget = tokens > 0;
    out.est_time = seconds{tokens > 0 ? tokens / out.tokens_per_s : 0.0};
    double cost = 0;
    bool priced = true;
    for (const auto& g : out.groups) {
        out.gpu_hours += out.est_time.value * g.gpus / 3600.0;
        const double b = out.est_time.value * (opt.whole_node_billing ? g.nodes * g.gpus_per_node : g.gpus) / 3600.0;
        out.billed_gpu_hours += b;
        if (auto it = opt.price_per_gpu_hour.find(g.gpu); it != opt.price_per_gpu_hour.end()) cost += b * it->second;
        else priced = false;
    }
    if (priced) out.cost = cost;
}

}  // namespace detail

namespace detail {

/// evaluate_mixed's walk over the groups, each group's memory from `memory(k, jk, grp)` (the job as group k's type
/// runs it; it sets grp.required and grp.peak_reserved, or returns why it cannot: what the memory model's
/// config_error says), nothing for it when `memory` is null; each group's bottleneck stage from `stage(k)` and the
/// job as its type runs it (job_on) from `jobs(k)` where given (a caller that has them), else computed.
template <StagedStepTimeModel T, class Memory, class Stage = stage_load (*)(std::size_t),
          class Jobs = const job_spec& (*)(std::size_t)>
mixed_evaluation evaluate_groups(const job_spec& j, std::span<const stage_group_shape> shape, const T& time,
                                 const plan_options& opt, const Memory* memory, const Stage* stage = nullptr,
                                 const Jobs* jobs = nullptr) {
    mixed_evaluation ev;
    const auto f = forward_flops_per_token(j.model, j.training.seq_len);
    plan out;
    out.groups.reserve(shape.size());
    double peak = 0;
    std::int64_t first = 0;
    for (std::size_t k = 0; k < shape.size(); first += shape[k].stages, ++k) {
        const auto& pool = *shape[k].pool;
        const auto& g = pool.gpu;
        const auto refused = gpu_refuses(j, g);
        if (!refused.empty()) {
            ev.why = refused;
            return ev;
        }
        std::optional<job_spec> own;
        const job_spec& jk = jobs ? (*jobs)(k) : own.emplace(job_on(j, g));
        assert(jk == job_on(j, g));
        auto grp = group_of(j, shape[k], first, opt);
        if (memory) {
            if (auto why = (*memory)(k, jk, grp)) {
                ev.why = std::move(*why);
                return ev;
            }
            if (grp.required.value > grp.capacity.value) {
                ev.over |= 1u << k;
                ev.why = "a stage on " + g.name + " needs more than its usable memory";
            }
        }
        if (ev.over != 0) continue;  // the other groups' memory is still checked: the split search reads every bit
        const topology topo{pool.gpus_per_node, pool.network_GBps};
        const auto e = stage ? time.predict(jk, g, topo, (*stage)(k))
                             : time.predict(jk, g, topo, bottleneck_stage(jk, f, first, first + grp.stages));
        if (!e.supported || !(e.step_time.value > 0)) {
            ev.why = e.reason;
            return ev;
        }
        const double link = neighbour_link_GBps(shape, k);
        const double boundary = link > 0 ? boundary_seconds(jk, link) : 0.0;
        grp.slot_s = e.parts.micro_batch + std::max(0.0, boundary - e.parts.pp_exposed_mb);
        grp.tail_s = e.parts.dp_exposed + e.parts.param_gather + e.parts.optimizer;
        peak += static_cast<double>(grp.gpus) * g.peak_flops(j.training.precision);
        out.rel_error_band = std::max(out.rel_error_band, e.rel_error_band);
        out.groups.push_back(std::move(grp));
    }
    if (ev.over != 0) return ev;
    if (first != j.parallel.pp)
        throw config_error("evaluate_mixed: the groups hold " + std::to_string(first) + " stages; " + field_text("parallel.pp", j.parallel.pp));
    set_mixed_totals(j, opt, peak, out);
    ev.plan = std::move(out);
    return ev;
}

}  // namespace detail

/// Predicts `j` (its layout's pp = the groups' stages together, its stage_layers the split, its precision one every
/// type runs) with the groups of `shape` in pipeline order: each stage's memory on its own type by the fit rule
/// with `opt.margin`, and the step time (see the top of the file). `check_memory` false: the time alone.
template <MemoryModel M, StagedStepTimeModel T>
mixed_evaluation evaluate_mixed(const job_spec& j, std::span<const stage_group_shape> shape, const M& mem, const T& time,
                                const plan_options& opt, bool check_memory = true) {
    const auto memory = [&](std::size_t, const job_spec& jk, stage_group& grp) -> std::optional<std::string> {
        try {
            detail::set_group_memory(grp, mem.estimate(jk));
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        return std::nullopt;
    };
    return detail::evaluate_groups(j, shape, time, opt, check_memory ? &memory : nullptr);
}

/// What a mixed plan scores under the default objective (plan/objective.hpp selectable_objective, lower is
/// better): time per token; GPU-hours per token, every type's GPUs (whole nodes with whole-node billing); cost per
/// token at each type's price.
inline double mixed_score(const plan& p, const plan_options& o) {
    const double per_token = p.tokens_per_s > 0 ? 1.0 / p.tokens_per_s : 1e300;
    if (o.objective != plan_objective::gpu_hours && o.objective != plan_objective::cost) return per_token;
    // the prices are looked up for the cost objective alone (the mixed search's speed bounds score often)
    double billed = 0, priced = 0;
    for (const auto& g : p.groups) {
        const double n = o.whole_node_billing ? static_cast<double>(g.nodes) * g.gpus_per_node : g.gpus;
        billed += n;
        if (o.objective != plan_objective::cost) continue;
        if (auto it = o.price_per_gpu_hour.find(g.gpu); it != o.price_per_gpu_hour.end()) priced += n * it->second;
    }
    return o.objective == plan_objective::gpu_hours ? per_token * billed : per_token * priced;
}

}  // namespace frenzy
