#pragma once
// Plan values: a job on one GPU type, or a pipeline over several, with a parallel configuration; why a type is
// infeasible; the parts of a layout a job pins (the planner keeps them and searches the rest); the job a plan runs.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/units.hpp"
#include "frenzy/model/transformer.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// Consecutive pipeline stages of a mixed plan on one GPU type (plan/mixed.hpp): `stages` stages of tp x dp x cp
/// GPUs each, on whole nodes of the type. Memory figures are of its fullest stage on its own GPU; times of its
/// slowest stage.
struct stage_group {
    std::string gpu;
    int gpus = 0;
    int nodes = 0;
    int gpus_per_node = 0;
    std::int64_t first_stage = 0;  ///< pipeline rank of its first stage
    std::int64_t stages = 0;
    std::int64_t layers = 0;       ///< transformer layers on its stages together
    bytes peak_reserved{};         ///< the fullest of its stages
    bytes required{};              ///< what the fit rule compared for that stage (memory/fit.hpp)
    bytes capacity{};              ///< usable memory of one of its GPUs
    double slot_s = 0;             ///< one micro-batch slot of its slowest stage, with the sends to the next type
    double tail_s = 0;             ///< after the last micro-batch: exposed gradient sync, parameter gather, optimizer
    bool operator==(const stage_group&) const = default;
};

/// One way to run a job: `gpus` GPUs of type `gpu` over `nodes` nodes with `parallel`, in `framework` and
/// `precision`. Memory figures are per GPU; speed figures for the whole job. A pipeline over several GPU types
/// (plan/mixed.hpp) is a plan with stage `groups` in pipeline order, the same tp, dp and cp on every stage and the
/// layers split unevenly (parallel.stage_layers): then `gpu` joins the types with '+', `gpus` and `nodes` are the
/// sums (set_group_totals), `precision` is one every type runs, `mfu` is against every type's GPUs,
/// `rel_error_band` the widest of its types', and the memory figures are the groups' own (the plan's stay 0).
/// Megatron-LM runs it with --pipeline-model-parallel-layout.
struct plan {
    std::string gpu;
    int gpus = 0;
    int nodes = 0;
    int gpus_per_node = 0;
    frenzy::framework framework = framework::by_default;  ///< the framework the plan was checked against
    frenzy::precision precision = precision::bf16_mixed;
    /// True when `precision` is not the job's own: the GPU type lacks it and the planner offers the nearest one
    /// it has (fp16-mixed for bf16 on V100), as a marked alternative.
    bool precision_alternative = false;
    parallel_config parallel{};
    std::int64_t micro_batch = 1;
    /// The runtime overlap flags the plan was predicted with (plan_options::framework_overlap): Megatron
    /// --overlap-grad-reduce and --tp-comm-overlap (runtime_spec fields of the same names).
    bool overlap_grad_reduce = false;
    bool tp_comm_overlap = false;
    bytes peak_allocated{};
    bytes peak_reserved{};
    bytes required{};          ///< what the fit rule compared (memory/fit.hpp): reserved x (1 + uncertainty)
    bytes capacity{};          ///< usable memory per GPU: (1 - margin) x memory
    seconds step_time{};
    double tokens_per_s = 0;   ///< whole job
    double mfu = 0;            ///< predicted model FLOPs utilisation (perf/step_time.hpp convention)
    /// the best MFU measured on the GPU's chip for the precision class and model size (perf/mfu_ceiling.hpp); 0 = no
    /// measured run of that class
    double mfu_ceiling = 0;
    /// The model's own speed where it was above mfu_ceiling and the plan's tokens_per_s, step_time, time, cost and rank
    /// were capped at the ceiling (perf/mfu_ceiling.hpp mfu_capped_tokens_per_s_per_gpu); 0 = not capped.
    double uncapped_tokens_per_s = 0;
    /// relative error band of the speed figures (perf/error_band.hpp) and the regime it was taken from
    double rel_error_band = 0;
    std::string error_regime;
    /// the attention kernel the plan runs on its GPU type (train/attention.hpp)
    attention_impl attention = attention_impl::automatic;
    bool has_budget = false;   ///< the job gave training.total_tokens: est_time and gpu_hours are meaningful
    seconds est_time{};        ///< total_tokens / tokens_per_s (0 without a budget)
    double gpu_hours = 0;      ///< GPUs used x est_time
    double billed_gpu_hours = 0;  ///< = gpu_hours, or whole nodes x est_time with whole-node billing
    std::optional<double> cost;   ///< billed_gpu_hours x price per GPU-hour, when a price is known
    std::vector<stage_group> groups;  ///< a pipeline over several GPU types, in pipeline order; empty = one type
    bool mixed() const { return !groups.empty(); }
    bool operator==(const plan&) const = default;
};

/// A pipeline's `gpu` (its groups' types joined with '+'), `gpus` and `nodes` (the sums over its groups), from
/// its groups: what the mixed search and the JSON reader set once the groups are known.
inline void set_group_totals(plan& p) {
    p.gpu.clear();
    p.gpus = 0;
    p.nodes = 0;
    for (const auto& g : p.groups) {
        p.gpu += (p.gpu.empty() ? "" : "+") + g.gpu;
        p.gpus += g.gpus;
        p.nodes += g.nodes;
    }
}

/// The job a plan runs: its layout (a pipeline's with every stage's layer count, parallel.stage_layers),
/// framework, micro-batch, precision (a marked alternative where the GPU type lacks the job's) and the overlap flags
/// it was predicted with, in place of the job's own. The attention kernel stays the job's: "auto" runs in the
/// framework what the planner resolved for the type (train/attention.hpp), except where that is the unfused kernel,
/// which is written as such (Megatron --attention-backend unfused, MPT attn_impl torch): a file that names no kernel
/// gets a flash one in frameworks that cannot choose by GPU.
inline job_spec job_for_plan(job_spec j, const plan& p) {
    if (j.runtime.attention == attention_impl::automatic && p.attention == attention_impl::unfused)
        j.runtime.attention = attention_impl::unfused;
    j.parallel = p.parallel;
    j.runtime.framework = p.framework;
    j.runtime.overlap_grad_reduce = p.overlap_grad_reduce;
    j.runtime.tp_comm_overlap = p.tp_comm_overlap;
    j.training.micro_batch = p.micro_batch;
    j.training.precision = p.precision;
    if (p.precision != precision::fp8_mixed) j.runtime.fp8_recipe.reset();  // a recipe of fp8 casts only
    return j;
}

/// How infeasible_reason (plan/feasibility.hpp) begins when the job breaks a rule whatever the layout: the input is
/// wrong, not the cluster too small (the CLI exits 2 for it, as for any other bad input).
inline constexpr std::string_view invalid_job_prefix = "the job is invalid on every layout tried: ";

struct infeasible_type {
    std::string gpu;
    std::string reason;
    bool operator==(const infeasible_type&) const = default;
    bool job_invalid() const { return reason.starts_with(invalid_job_prefix); }
};

/// All feasible plans, best first by the chosen objective, and the types that cannot run the job.
struct plan_result {
    std::vector<plan> plans;
    std::vector<infeasible_type> infeasible;
    double parameters = 0;         ///< the job's parameters (model/transformer.hpp total_parameters; 0 = not set)
    double active_parameters = 0;  ///< parameters one token passes through (a MoE's routed top-k; else = parameters)
    /// Plans over several GPU types (plan::groups; plan_options::mixed), best first by the same objective; why
    /// there are none
    std::vector<plan> mixed;
    std::string mixed_note;
};

/// The parts of a layout a job states: the planner keeps these and searches the rest. A job file's `parallel`
/// fields and `training.micro_batch`, or the CLI's --dp/--tp/... flags, become these (io/job_json.hpp).
struct plan_constraints {
    std::optional<std::int64_t> dp, tp, pp, vpp, cp, ep, micro_batch;
    std::optional<bool> sequence_parallel;
    std::optional<frenzy::sharding> sharding;
    std::optional<frenzy::recompute> recompute;
    std::optional<pipeline_schedule> schedule;
    bool operator==(const plan_constraints&) const = default;

    /// Every field of a layout stated (what `frenzy estimate` takes): then the planner checks just that layout.
    static plan_constraints all_of(const job_spec& j) {
        const auto& p = j.parallel;
        return {p.dp, p.tp, p.pp, p.vpp, p.cp, p.ep, j.training.micro_batch, p.sequence_parallel, p.sharding,
                p.recompute, p.schedule};
    }
};

/// An empty result for `job`, with its total and active parameters (what plan --json and the plan table state):
/// where a planner, or a scheduler answering for one, starts.
inline plan_result plan_result_for(const job_spec& job) {
    plan_result r;
    r.parameters = total_parameters(job.model, job.training.seq_len);
    r.active_parameters = active_parameters(job.model, job.training.seq_len);
    return r;
}

/// For one GPU type: its plan with the fewest GPUs (the fastest among those) and its fastest plan.
struct type_summary {
    std::string gpu;
    plan minimum;
    plan fastest;
};

/// Per-type minimum-GPU and fastest plans of a result, in the order the types first appear in it (best first).
inline std::vector<type_summary> summarize_by_type(const plan_result& r) {
    std::vector<type_summary> out;
    for (const auto& p : r.plans) {
        auto it = std::find_if(out.begin(), out.end(), [&](const type_summary& t) { return t.gpu == p.gpu; });
        if (it == out.end()) {
            out.push_back({p.gpu, p, p});
            continue;
        }
        if (p.gpus < it->minimum.gpus || (p.gpus == it->minimum.gpus && p.tokens_per_s > it->minimum.tokens_per_s))
            it->minimum = p;
        if (p.tokens_per_s > it->fastest.tokens_per_s) it->fastest = p;
    }
    return out;
}

}  // namespace frenzy
