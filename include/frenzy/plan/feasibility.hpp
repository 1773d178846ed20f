#pragma once
// The planner's feasibility: the precision a GPU type runs a job in (fallback_precision), the fit rule applied
// through the memory model with the call's memo (memory_check: the model's floor first, then its estimate, each
// made once per job and reused for every GPU type) and why nothing fits a type (infeasible_reason).
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/core/units.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/memory/breakdown.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/plan/memo.hpp"
#include "frenzy/plan/options.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/plan/policies.hpp"
#include "frenzy/plan/search_space.hpp"
#include "frenzy/train/attention.hpp"
#include "frenzy/train/fp8_recipe.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// The precision a GPU type offers in place of one it lacks, nearest first: pure or mixed bf16 -> fp16-mixed
/// (V100, T4, Turing cards have fp16 tensor cores but no bf16), fp8-mixed -> bf16-mixed -> fp16-mixed, fp4-mixed ->
/// fp8-mixed -> ... (fp4 tensor cores are Blackwell-only).
/// Empty when the type has the precision or nothing close.
inline std::optional<precision> fallback_precision(precision p, const gpu_type& g) {
    if (g.peak_flops(p) > 0) return std::nullopt;
    std::vector<precision> order;
    switch (p) {
        case precision::fp4_mixed: order = {precision::fp8_mixed, precision::bf16_mixed, precision::fp16_mixed}; break;
        case precision::fp8_mixed: order = {precision::bf16_mixed, precision::fp16_mixed}; break;
        case precision::bf16_mixed:
        case precision::bf16: order = {precision::fp16_mixed}; break;
        case precision::fp16_mixed: order = {precision::bf16_mixed}; break;
        case precision::fp32: break;
    }
    for (auto q : order)
        if (g.peak_flops(q) > 0) return q;
    return std::nullopt;
}

/// Why GPU type `g` cannot run `j` as it stands (no fallback precision): its precision, its attention kernel
/// (train/attention.hpp) or its fp8 recipe (train/fp8_recipe.hpp); "" when it can.
inline std::string gpu_refuses(const job_spec& j, const gpu_type& g) {
    if (!(g.peak_flops(j.training.precision) > 0))
        return std::string(to_string(j.training.precision)) + " is not supported on " + g.name;
    if (auto why = attention_rejected(j, g); !why.empty()) return why;
    return fp8_recipe_rejected(j, g);
}

namespace detail {

/// The job as planned on `g`: its attention kernel resolved for the type (train/attention.hpp), in its own
/// precision or the nearest one the type has (a marked alternative); or nothing with the reason.
inline std::optional<job_spec> job_for_type(const job_spec& job, const gpu_type& g, const plan_options& opt,
                                        std::string& why) {
    if (why = attention_rejected(job, g); !why.empty()) return std::nullopt;
    const precision want = job.training.precision;
    if (g.peak_flops(want) > 0) {
        if (why = fp8_recipe_rejected(job, g); !why.empty()) return std::nullopt;  // train/fp8_recipe.hpp
        return job_on(job, g);
    }
    const std::string prec(to_string(want));
    why = prec + " is not supported on " + g.name + " (no " + prec.substr(0, prec.find('-')) + " tensor cores)";
    const auto alt = fallback_precision(want, g);
    if (!alt) return std::nullopt;
    if (opt.pin_precision) {
        why += "; the job pins its precision (without the pin, " + std::string(to_string(*alt)) + " is offered)";
        return std::nullopt;
    }
    job_spec j = job_on(job, g);
    j.training.precision = *alt;
    // what only the job's own precision allows goes with it (train/job.hpp validate): the fp8 recipe and the fp8
    // parameter gather with fp8, the bf16 gradient reduction with bf16 parameters
    if (*alt != precision::fp8_mixed) j.runtime.fp8_recipe.reset(), j.runtime.fp8_param_gather = false;
    if (*alt != precision::fp8_mixed && *alt != precision::bf16_mixed) j.runtime.grad_reduce_bf16 = false;
    return j;
}

/// The most frugal sharding framework `fw` offers for a layout (what the infeasibility search tries).
inline sharding frugal_sharding(framework fw, std::int64_t dp, std::int64_t pp) {
    if (dp == 1) return sharding::none;
    for (auto sh : {sharding::full, sharding::gradients, sharding::optimizer}) {
        parallel_config p;
        p.dp = dp;
        p.pp = pp;
        p.sharding = sh;
        if (framework_rejects(fw, p).empty()) return sh;
    }
    return sharding::none;
}

/// A memory model's prepared stages (memory/search.hpp), or an empty type for a model without them.
template <class M> struct stages_of_model { struct type {}; };
template <PreparedMemoryModel M> struct stages_of_model<M> { using type = typename memory_search<M>::prepared_stages; };

/// The fit rule (memory/fit.hpp) through memory model `M` within one plan() call: its answers are memoised by
/// the fields a search varies (memo.hpp), and a model with a search face (PreparedMemoryModel: the default's) takes
/// the layout's stages, prepared once per layout (memory/search.hpp stages_of); a host's model is called as the
/// MemoryModel concept says. A layout the memory model rejects (config_error) does not fit.
template <class M>
class memory_check {
public:
    using stages_type = typename stages_of_model<M>::type;
    static constexpr bool takes_stages = PreparedMemoryModel<M>;

    memory_check(const M& mem, plan_stats& st) : mem_(mem), st_(st) {}
    memory_check(const memory_check&) = delete;  // stages_ points into its own stages_by_key_
    memory_check& operator=(const memory_check&) = delete;

    /// Most usable bytes of a GPU of the call: the estimate's walk stops once the job fits none of them.
    double max_usable = std::numeric_limits<double>::infinity();

    /// Set where every job asked about has the name, model and training (but for the micro-batch) of one whose
    /// validate_inputs passed (the planner's inputs, check_inputs): an
    /// estimate then checks only what a search varies (train/job.hpp validate_layout), not the whole job again.
    bool inputs_checked = false;

    /// Host memory of a node of the pool being searched, GiB, and its GPUs: an offload job's offloaded states must
    /// fit it (memory/fit.hpp host_memory_per_node). 0 = not stated: not checked.
    double host_memory_GiB = 0;
    std::int64_t gpus_per_node = 8;

    /// Room in the memo for `estimates` required-bytes answers and `floors` floors: a search that sizes it before it
    /// starts never grows it (a growth copies the table, and where the allocator returned the last search's memory to
    /// the system, faults its pages in again: 87 faults of ~2-7 us each per 70B benchmark search before, 16 now).
    /// A hint only: a search that asks more grows the memo as before.
    void reserve(std::size_t estimates, std::size_t floors) {
        required_.reserve(estimates);
        floor_.reserve(floors);
    }
    /// Whether `j` fits on `g` with the margin of `opt` (memoised; counts plan_stats::memory_estimates), and, for an
    /// offload job on nodes that state their host memory, its offloaded states fit the node's host memory.
    bool fits(const job_spec& j, const gpu_type& g, const plan_options& opt) {
        return fits_entry(j, required_.try_emplace(j, -1.0), usable_memory(g, opt.margin).value);
    }
    /// The same for `j` of layout key `k` (layout_key_of(j): a search checks one layout at several recompute levels
    /// and micro-batches) on a GPU of `usable` bytes (usable_memory with the call's margin).
    bool fits(const job_spec& j, const layout_key& k, double usable) {
        return fits_entry(j, required_.try_emplace(j, k, -1.0), usable);
    }
    /// Whether the offloaded states of `j` fit the node's host memory (true where it is not checked).
    bool host_fits(const job_spec& j) {
        const auto& o = j.runtime.offload;
        if (host_memory_GiB <= 0 || !(o.optimizer || o.parameters)) return true;
        auto [h, fresh] = host_.try_emplace(j, -1.0);
        if (fresh) {  // per GPU: the memo is shared by pools of other node shapes
            try {
                *h = mem_.estimate(j).host_per_gpu.value;
            } catch (const config_error&) {
                *h = -1.0;
            }
        }
        return *h >= 0 &&
               host_memory_per_node(bytes{*h}, std::min(j.parallel.gpus(), gpus_per_node)).value <= host_memory_GiB * GiB;
    }
    /// The same, not memoised, with the model's full report in `out` (what a plan record shows).
    bool fits(const job_spec& j, const gpu_type& g, const plan_options& opt, memory_report* out) {
        ++st_.memory_estimates;
        try {
            auto r = mem_.estimate(j);
            const bool ok = check_fit(r, g, opt.margin).fits;
            if (out) *out = std::move(r);
            return ok;
        } catch (const config_error&) {
            return false;
        }
    }
    /// False when the memory model's own floor already exceeds the capacity (a model without a floor: true).
    bool may_fit(const job_spec& j, const gpu_type& g, const plan_options& opt) {
        if constexpr (BoundedMemoryModel<M>) return floor_entry(j, floor_.try_emplace(j, -1.0), usable_memory(g, opt.margin).value);
        else return true;
    }
    /// The same for `j` of layout key `k` on a GPU of `usable` bytes (as fits).
    bool may_fit(const job_spec& j, const layout_key& k, double usable) {
        if constexpr (BoundedMemoryModel<M>) return floor_entry(j, floor_.try_emplace(j, k, -1.0), usable);
        else return true;
    }

private:
    /// The fit rule on the memo's entry `e` of `j` (made now when fresh) for `usable` bytes.
    bool fits_entry(const job_spec& j, std::pair<double*, bool> e, double usable) {
        auto [v, fresh] = e;
        if (fresh) {
            ++st_.memory_estimates;
            try {
                *v = required_of(j);
            } catch (const config_error&) {
                *v = -1.0;
            }
        }
        return *v >= 0 && *v <= usable && host_fits(j);
    }
    /// The floor's test on the memo's entry `e` of `j` (made now when fresh) for `usable` bytes.
    bool floor_entry(const job_spec& j, std::pair<double*, bool> e, double usable) {
        auto [v, fresh] = e;
        if (fresh) {
            try {
                *v = floor_of(j).value;
            } catch (const config_error&) {
                *v = -1.0;
            }
        }
        return *v >= 0 && *v <= usable;
    }
    const stages_type& stages_for(const job_spec& j) {
        if (!stages_ || !is_stage_key_of(stages_->first, j)) {
            auto [it, fresh] = stages_by_key_.try_emplace(stage_key_of(j));
            if (fresh) it->second = memory_search<M>(mem_).stages_of(j);
            stages_ = &*it;
        }
        return stages_->second;
    }
    double required_of(const job_spec& j) {
        // the walk stops once the job fits no GPU of the call: the memo answers for all of them (fits())
        if constexpr (takes_stages) {
            const auto& s = stages_for(j);
            const memory_search<M> search(mem_);
            if (inputs_checked) {  // validate(j) throws exactly where validate_layout(j) does
                validate_layout(j);
                return required_memory(search.estimate_validated(j, s, false, max_usable)).value;
            }
            return required_memory(search.estimate(j, s, false, max_usable)).value;
        } else {
            return required_memory(mem_.estimate(j)).value;
        }
    }
    bytes floor_of(const job_spec& j) {
        if constexpr (takes_stages) return memory_search<M>(mem_).lower_bound(j, stages_for(j));
        else return mem_.lower_bound(j);
    }

    const M& mem_;
    plan_stats& st_;
    memo required_;  ///< bytes the fit rule requires; < 0: the model rejects the layout
    memo floor_;     ///< the memory model's lower bound; < 0: it rejects the layout
    memo host_;      ///< host memory one GPU's offload holds (memory_report::host_per_gpu)
    /// Each layout's stages (memory models that take them), prepared once per plan() call: they read the stage key's
    /// fields alone, not dp, sharding, recompute, the micro-batch, the precision or the GPU type.
    std::map<stage_key, stages_type> stages_by_key_{};
    const std::pair<const stage_key, stages_type>* stages_ = nullptr;  ///< the last layout's entry
};

/// "dp=8 tp=2 pp=4 [ep=4] [FRAMEWORK]": the layout infeasible_reason names.
inline std::string layout_text(const parallel_config& p, std::string_view framework_name) {
    return "dp=" + std::to_string(p.dp) + " tp=" + std::to_string(p.tp) + " pp=" + std::to_string(p.pp) +
           (p.ep > 1 ? " ep=" + std::to_string(p.ep) : "") + (framework_name.empty() ? "" : " " + std::string(framework_name));
}

/// The most frugal settings frameworks `fws` offer, in words, for infeasible_reason: "full sharding and recompute"
/// where one shards everything, else what they have of tensor+pipeline parallelism and a sharded optimizer, with
/// full recompute ("data parallelism and full recompute" for a data-parallel-only framework such as hf).
inline std::string frugal_settings_text(const std::vector<framework>& fws) {
    bool full = false, model_parallel = false, sharded = false;
    for (auto fw : fws) {
        const auto sh = frugal_sharding(fw, 2, 1);
        full = full || sh == sharding::full;
        sharded = sharded || sh != sharding::none;
        parallel_config p;
        p.tp = 2;
        model_parallel = model_parallel || framework_rejects(fw, p).empty();
    }
    if (full) return "full sharding and recompute";
    std::string s = model_parallel ? "tensor+pipeline parallelism, " : "data parallelism, ";
    return s + (sharded ? "sharded optimizer and full recompute" : "full recompute and no sharding (the framework has none)");
}

/// Why nothing fits: the smallest GPU count that would fit with the most frugal settings (keeping what the job
/// pins), if any, up to 2^16 GPUs.
template <class M>
std::string infeasible_reason(const job_spec& job0, const gpu_pool& pool, std::int64_t avail, const search_axes& ax,
                              const plan_options& opt, memory_check<M>& mem) {
    const auto& g = pool.gpu;
    const auto& c = opt.constraints;
    const std::string gib = std::to_string(static_cast<long long>(std::llround(g.memory().value / GiB)));
    const std::string have = std::to_string(pool.nodes) + (pool.nodes == 1 ? " node of " : " nodes of ") +
                             std::to_string(pool.gpus_per_node) + " available";
    const std::string how = frugal_settings_text(ax.frameworks) +
                            (c == plan_constraints{} ? "" : " (keeping the layout fields the job pins)");
    std::int64_t need = 0, tried = 0, invalid = 0;
    std::string layout, rule;  // rule: why validate() rejected the frugal layouts, when it rejected every one
    std::string refused;       // why the framework's rules refused the first layout they refused
    const std::int64_t limit = 1 << 16;
    for (auto fw : ax.frameworks)
        for (auto tp : ax.tp)
            for (auto pp : pinned_or(c.pp, divisors_of(job0.model.layers)))
                for (auto dp : pinned_or(c.dp, divisors_of(job0.training.global_batch))) {
                    const auto n = dp * tp * pp * ax.cp.back();
                    if (n > limit || (need > 0 && n >= need)) continue;
                    std::int64_t ep = 1;
                    for (auto e : ax.ep)
                        if ((dp * ax.cp.back()) % e == 0) ep = std::max(ep, e);
                    job_spec j = layout_job(job0, ax, fw, tp, pp, ax.vpp.front(), ax.cp.back(),
                                            c.sharding.value_or(frugal_sharding(fw, dp, pp)), ep, dp, opt);
                    j.training.micro_batch = c.micro_batch.value_or(1);
                    j.parallel.recompute = c.recompute.value_or(recompute::full);
                    if (auto why = framework_rejects(fw, j.parallel, j.training); !why.empty()) {
                        if (refused.empty()) refused = std::move(why);
                        continue;
                    }
                    ++tried;
                    try {
                        validate(j);
                    } catch (const config_error& e) {
                        ++invalid;
                        if (rule.empty()) rule = e.what();
                        continue;
                    }
                    if (!mem.may_fit(j, g, opt)) continue;
                    if (mem.fits(j, g, opt)) {
                        need = n;
                        layout = layout_text(j.parallel, ax.frameworks.size() > 1 ? to_string(fw) : std::string_view{});
                    }
                }
    if (need == 0 && tried > 0 && invalid == tried)  // the input breaks a rule, whatever the layout: name the rule
        return std::string(invalid_job_prefix) + rule;
    if (need == 0 && tried == 0 && !refused.empty())  // the framework refuses every frugal layout: say why
        return "the framework refuses every layout tried: " + refused;
    // an offload job on nodes that state their host memory: the host side is part of "fits"
    const std::string host = mem.host_memory_GiB > 0 && (job0.runtime.offload.optimizer || job0.runtime.offload.parameters)
                                 ? " with its offloaded states within the nodes' host_memory_GiB=" + number_text(mem.host_memory_GiB)
                                 : "";
    if (need == 0)
        return "does not fit on " + gib + " GiB cards" + host + " even with " + how + " at micro-batch 1 (up to " +
               std::to_string(limit) + " GPUs)";
    if (need <= avail)
        return "no layout satisfies the framework rules and node shape (" + std::to_string(pool.gpus_per_node) +
               " GPUs per node) within " + std::to_string(avail) + " GPUs";
    return "needs " + std::to_string(need) + " x " + gib + " GiB" + host + " even with " + how + " (" + layout + "); " + have +
           (opt.max_gpus > 0 && opt.max_gpus < pool.gpus() ? " (max_gpus " + std::to_string(opt.max_gpus) + ")" : "");
}

}  // namespace detail

}  // namespace frenzy
