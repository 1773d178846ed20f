#pragma once
// MARP: the composed per-GPU memory estimator.
#include <algorithm>
#include <concepts>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "frenzy/memory/activations.hpp"
#include "frenzy/memory/allocator.hpp"
#include "frenzy/memory/breakdown.hpp"
#include "frenzy/memory/device.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/memory/framework_profile.hpp"
#include "frenzy/memory/layout.hpp"
#include "frenzy/memory/methods.hpp"
#include "frenzy/memory/model_states.hpp"
#include "frenzy/memory/overheads.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// Upper-error band of MARP per mechanism: measured / predicted - 1 at its worst on the calibration rows of
/// data/memory (tests/memory/calibration_test.cpp prints them), rounded up, plus a margin where a
/// mechanism has one row or none. Additive over the mechanisms a job uses. Derivation: docs/memory-model.md.
struct uncertainty_band {
    double base = 0.04;          ///< dense rows (8): worst upper error 2.2% (row 16), + 2 points
    double interleaved = 0.02;   ///< row 45: 2.4% upper error: base + 2 points
    double moe = 0.08;           ///< row 46 fits the routing imbalance; balanced routing would leave 4.6%: + routing spread
    /// MoE padded to capacity (model.moe.pad_to_capacity): every expert receives exactly its capacity, so no routing
    /// spread is left; row 46's balanced-routing upper error, 4.6%, rounded up.
    double moe_padded = 0.05;
    double fp8 = 0.08;           ///< row 28 (float8 linears, TP 8): 6.4% upper error, no mechanism for it: base + 8 points
    double megatron_fsdp = 0.08; ///< no measured row
    double expert_tp = 0.03;     ///< etp != tp: no measured row
    double uneven_pipeline = 0.02;  ///< first/last stage layer counts, embedding/loss stages: no measured row
    double context_parallel = 0.02; ///< cp > 1: no measured row in data/memory
    /// tp > 1 without sequence parallelism: rows 1 and 16 are within 2.2%, but issue 10 reports the hidden dense
    /// tp 4 runs under by 8-10% before this work, with no mechanism found in the code for the gap: base + 7 = 11%.
    double tp_without_sp = 0.07;
};

/// The band of `j`: the sum of the bands of the mechanisms it uses.
inline double memory_uncertainty(const job_spec& j, const uncertainty_band& b = {}) {
    const auto& p = j.parallel;
    double u = b.base;
    if (p.schedule == pipeline_schedule::interleaved) u += b.interleaved;
    if (j.model.is_moe()) u += j.model.moe.pad_to_capacity ? b.moe_padded : b.moe;
    if (scaled_gemm_precision(j.training.precision)) u += b.fp8;  // fp8 or NVFP4 GEMMs: the same caches and casts
    if (j.runtime.framework->memory.megatron_fsdp && (p.sharding == sharding::full || p.sharding == sharding::gradients))
        u += b.megatron_fsdp;
    if (j.model.is_moe() && p.expert_tp() != p.tp) u += b.expert_tp;
    if (p.first_stage_layers > 0 || p.last_stage_layers > 0 || p.embedding_stage || p.loss_stage) u += b.uneven_pipeline;
    if (p.cp > 1) u += b.context_parallel;
    if (p.tp > 1 && !p.sequence_parallel) u += b.tp_without_sp;
    return u + method_uncertainty(j);  // LoRA/QLoRA, frozen layers, 8-bit Adam, offload (memory/methods.hpp)
}

/// The search face of memory model M (memory/search.hpp): defined for basic_memory_estimator; a host's model may
/// specialise it (plan/policies.hpp PreparedMemoryModel says what it offers).
template <class M> class memory_search;

/// Peak per-GPU training memory of every pipeline stage: model states (S), activations (A) and temporaries (O),
/// with the framework's profile (profile_of(job) unless one is given); the allocator policy (R) turns each stage's
/// allocated peak into its reserved peak.
template <ModelStatePolicy S = sharded_model_states, ActivationPolicy A = transformer_activations,
          OverheadPolicy O = framework_overheads, AllocatorPolicy R = caching_allocator>
class basic_memory_estimator {
public:
    /// Replace one policy, keep the others: `memory_estimator::with_overheads<my_overheads>`.
    template <ModelStatePolicy S2> using with_model_states = basic_memory_estimator<S2, A, O, R>;
    template <ActivationPolicy A2> using with_activations = basic_memory_estimator<S, A2, O, R>;
    template <OverheadPolicy O2> using with_overheads = basic_memory_estimator<S, A, O2, R>;
    template <AllocatorPolicy R2> using with_allocator = basic_memory_estimator<S, A, O, R2>;

    basic_memory_estimator() = default;
    basic_memory_estimator(S s, A a, O o, R r = {})
        : states_(std::move(s)), acts_(std::move(a)), over_(std::move(o)), alloc_(std::move(r)) {}

    /// Validates the job (config_error on a rule the framework would reject) and estimates it.
    memory_report estimate(const job_spec& j) const { return estimate(j, profile_of(j)); }

    memory_report estimate(const job_spec& j, const framework_profile& f) const {
        validate(j);
        return estimate_stages(j, f, stage_layouts(j, f), parameters_of(j, f), true);
    }

private:
    template <class M> friend class memory_search;  // the search face (memory/search.hpp) walks prepared stages

    /// A policy's per-job terms where it offers them (terms_of: what it reads of the job alone, the same on every
    /// stage), else nothing.
    template <class P>
    static auto terms_of(const P& p, const job_spec& j, const framework_profile& f) {
        if constexpr (requires { p.terms_of(j, f); }) return p.terms_of(j, f);
        else return 0;
    }
    template <class P> using terms_t = decltype(terms_of(std::declval<const P&>(), std::declval<const job_spec&>(),
                                                         std::declval<const framework_profile&>()));
    /// What an estimate's stages share: the policies' per-job terms and the per-job switches, taken once.
    struct job_terms {
        terms_t<S> states;
        terms_t<A> acts;
        terms_t<O> over;
        terms_t<R> alloc;
        bool methods = false;        ///< training methods or architecture extras adjust the answers (adjusts_memory)
        bool grads_at_peak = false;  ///< gradients_at_forward_peak
    };
    job_terms terms_of(const job_spec& j, const framework_profile& f) const {
        return {terms_of(states_, j, f), terms_of(acts_, j, f), terms_of(over_, j, f), terms_of(alloc_, j, f),
                adjusts_memory(j, f), gradients_at_forward_peak(j, f)};
    }
    /// The policies' answers for stage `l`, with their terms where they take them.
    model_state_bytes stage_states(const job_spec& j, const stage_layout& l, const framework_profile& f,
                                   const job_terms& t) const {
        model_state_bytes ms;
        if constexpr (requires { states_.model_states(j, l, f, t.states); }) ms = states_.model_states(j, l, f, t.states);
        else ms = states_.model_states(j, l, f);
        return t.methods ? method_model_states(j, l, f, ms) : ms;
    }
    activation_bytes stage_activations(const job_spec& j, const stage_layout& l, const framework_profile& f,
                                       const job_terms& t) const {
        activation_bytes a;
        if constexpr (requires { acts_.activations(j, l, f, t.acts); }) a = acts_.activations(j, l, f, t.acts);
        else a = acts_.activations(j, l, f);
        return t.methods ? method_activations(j, l, f, a) : a;
    }
    overhead_bytes stage_temporaries(const job_spec& j, const stage_layout& l, const framework_profile& f,
                                     const model_state_bytes& ms, const job_terms& t) const {
        overhead_bytes ov;
        if constexpr (requires { over_.temporaries(j, l, f, ms, t.over); }) ov = over_.temporaries(j, l, f, ms, t.over);
        else ov = over_.temporaries(j, l, f, ms);
        if (t.methods) ov.train += bytes{method_temporaries(j, l, f)};
        return ov;
    }
    bytes stage_reserved(const job_spec& j, const framework_profile& f, bytes allocated, const activation_bytes& a,
                         const model_state_bytes& ms, const job_terms& t) const {
        if constexpr (requires { alloc_.reserved(j, f, allocated, a, ms, t.alloc); })
            return alloc_.reserved(j, f, allocated, a, ms, t.alloc);
        else return alloc_.reserved(j, f, allocated, a, ms);
    }
    /// The default policies (what `dominated` is proven for).
    static constexpr bool default_policies =
        std::same_as<S, sharded_model_states> && std::same_as<A, transformer_activations> &&
        std::same_as<O, framework_overheads> && std::same_as<R, caching_allocator>;
    /// Whether the default policies give stage `l` no figure above those of `before`, the stage walked before it,
    /// for a job without training methods or architecture extras (adjusts_memory false): both hold neither the
    /// embedding nor the loss and have the same layers, chunk slots and parameters, so their model states,
    /// temporaries and per-micro-batch activations are the same (the policies read a stage's index only through
    /// pipeline_in_flight_counts, and its first/last flags), and `l`, later in the pipeline, holds no more
    /// micro-batches in flight (every schedule's count falls or stays with the rank): its stored activations, so
    /// its allocated and reserved peaks, are at most `before`'s, each sum and product monotone in floating point.
    /// The maxima a report keeps, the bottleneck stage (the first strictly largest) and the walk's early stop are
    /// then those of the full walk; only its per-stage list would differ, so the walk skips `l` where it keeps none.
    static bool dominated(const stage_layout& l, const stage_layout& before) {
        return !l.first && !l.last && same_shape(l, before) && l.stage > before.stage;
    }
    /// The same stage but for its index.
    static bool same_shape(const stage_layout& a, const stage_layout& b) {
        return a.first == b.first && a.last == b.last && a.layers == b.layers && a.moe_layers == b.moe_layers &&
               a.chunk_slots == b.chunk_slots && a.dense_params == b.dense_params && a.expert_params == b.expert_params;
    }
    static double parameters_of(const job_spec& j, const framework_profile& f) {
        auto m = j.model;  // whole model with the framework's padded vocabulary
        m.vocab = framework_vocab(j, f);
        return total_parameters(m, j.training.seq_len);
    }
    /// walk_stages for `j`, or for its chosen + rejected pair under DPO (dpo_pair_job: twice the sequences).
    memory_report estimate_stages(const job_spec& j, const framework_profile& f, std::span<const stage_layout> layouts,
                                  double parameters, bool with_stages,
                                  double stop_above = std::numeric_limits<double>::infinity(),
                                  std::span<const std::uint32_t> walk = {}) const {
        if (j.training.finetune.dpo()) return walk_stages(dpo_pair_job(j), f, layouts, parameters, with_stages, stop_above, walk);
        return walk_stages(j, f, layouts, parameters, with_stages, stop_above, walk);
    }
    /// The memory outside the GPU's peaks a stage holds, the largest stage's: offloaded states (host), offloaded
    /// activations (pinned host) and paged optimizer states (unified memory).
    static void take_off_device(memory_report& r, const model_state_bytes& ms, const activation_bytes& act) {
        r.host_per_gpu = std::max(r.host_per_gpu, ms.host);
        r.host_activations = std::max(r.host_activations, act.host);
        r.paged = std::max(r.paged, ms.paged);
    }
    memory_report walk_stages(const job_spec& j, const framework_profile& f, std::span<const stage_layout> layouts,
                              double parameters, bool with_stages, double stop_above,
                              std::span<const std::uint32_t> walk) const {
        memory_report r;
        r.parameters = parameters;
        r.uncertainty = memory_uncertainty(j);
        r.nccl = nccl_buffer_bytes(j);
        r.cache_returned_whole = cache_returned_whole(j);
        double best_reserved = 0;
        if (with_stages) r.stages.reserve(layouts.size());
        const auto t = terms_of(j, f);  // what every stage reads of the job alone, once
        // the stages a walk without its list needs (prepared_stages::walk): the others change no figure of the report
        const bool skip = !with_stages && !t.methods && default_policies && !walk.empty();
        const std::size_t n = skip ? walk.size() : layouts.size();
        for (std::size_t i = 0; i < n; ++i) {
            const auto& l = layouts[skip ? walk[i] : i];
            // Training methods and architecture extras (memory/methods.hpp: LoRA/QLoRA, frozen layers, 8-bit Adam,
            // offload, fp8, parallel attention, MLA) adjust the policies' answers; identity for plain jobs.
            const auto ms = stage_states(j, l, f, t);
            const auto act = stage_activations(j, l, f, t);
            const auto ov = stage_temporaries(j, l, f, ms, t);
            // With the optimizer fused into backward there is no step phase either.
            const bytes grads_fwd = t.grads_at_peak ? ms.gradients : bytes{};
            const bytes train_peak = ms.weights + ms.optimizer + grads_fwd + act.stored + act.transient + ov.train;
            const bytes step_peak =
                f.optimizer_in_backward ? bytes{} : ms.weights + ms.gradients + ms.optimizer + ov.step;
            stage_memory st;
            st.stage = l.stage;
            st.parameters = l.params();
            st.in_flight_micro_batches = act.in_flight;
            st.breakdown.weights = ms.weights;
            st.breakdown.gradients = ms.gradients;
            st.breakdown.optimizer = ms.optimizer;
            if (train_peak >= step_peak) {
                st.breakdown.gradients = grads_fwd;
                st.breakdown.activations = act.stored + act.transient;
                st.breakdown.temporary = ov.train;
            } else {
                st.breakdown.temporary = ov.step;
            }
            st.peak_allocated = st.breakdown.total();
            // Reserved: the allocator model asks the forward/backward phase's allocation (the activations' blocks
            // and a side stream's gradient pool come on top of it); the optimizer step holds at least its own
            // allocation. Passing the step's allocation instead counted the gradients twice where the step is the
            // allocated peak (Llama 3.1 8B on one H200, data/memory/h200_measured.csv: +10..+20% reserved, now
            // within the allocated rows' band).
            const double reserved = std::max({stage_reserved(j, f, train_peak, act, ms, t).value, step_peak.value,
                                              st.peak_allocated.value});
            st.peak_reserved = bytes{reserved};
            if (st.peak_allocated > r.peak_allocated) {
                r.peak_allocated = st.peak_allocated;
                r.bottleneck_stage = l.stage;
            }
            best_reserved = std::max(best_reserved, reserved);
            take_off_device(r, ms, act);
            if (with_stages) r.stages.push_back(st);
            r.peak_reserved = bytes{best_reserved};
            if (required_memory(r).value > stop_above) return r;
        }
        r.peak_reserved = bytes{best_reserved};
        return r;
    }

public:
    /// A floor under estimate(j).peak_allocated from the model-state policy alone (no activations): the largest
    /// stage's weights + optimizer states, plus its gradients unless the optimizer runs inside backward (then the
    /// gradients never exist together). Both phases of estimate() hold at least that. The planner prunes layouts
    /// with it, so a host's own ModelStatePolicy (CPU offload, say) is bounded by its own answer.
    bytes lower_bound(const job_spec& j) const { return lower_bound(j, profile_of(j)); }
    bytes lower_bound(const job_spec& j, const framework_profile& f) const {
        return lower_bound_stages(j, f, stage_layouts(j, f));
    }

    const O& overheads() const { return over_; }
    const R& allocator() const { return alloc_; }

private:
    bytes lower_bound_stages(const job_spec& j, const framework_profile& f, std::span<const stage_layout> layouts,
                             std::span<const std::uint32_t> walk = {}) const {
        double floor = 0;
        // the default model-state policy reads a stage's layers, flags and parameters only, not its index: a stage
        // left out of `walk` has the same shape as one in it, so the same states (without methods, which read the
        // index)
        const bool skip = std::same_as<S, sharded_model_states> && !adjusts_memory(j, f) && !walk.empty();
        const std::size_t n = skip ? walk.size() : layouts.size();
        for (std::size_t i = 0; i < n; ++i) {
            const auto& l = layouts[skip ? walk[i] : i];
            const auto ms = method_model_states(j, l, f, states_.model_states(j, l, f));
            const bytes b = ms.weights + ms.optimizer + (f.optimizer_in_backward ? bytes{} : ms.gradients);
            floor = std::max(floor, b.value);
        }
        return bytes{floor};
    }

    S states_{};
    A acts_{};
    O over_{};
    R alloc_{};
};

using memory_estimator = basic_memory_estimator<>;

}  // namespace frenzy
