#pragma once
// Step-time model: compute by kernel class (GEMMs at the precision's peak, attention core in bf16, element-wise
// memory traffic at the memory bandwidth), tensor/context/expert/pipeline/data-parallel communication with the
// overlap each framework implements, the pipeline bubble of each schedule, and the optimizer step; composed from
// policies.
//
// One optimizer step on the bottleneck (last) pipeline stage:
//   t_mb  = max(compute + exposed tp + exposed cp + ep, sharded-state traffic of ZeRO-2/3) + exposed pp send/recv
//   step  = (m + bubble) x t_mb + exposed gradient sync + ZeRO-2 parameter gather + optimizer pass
// with m = global_batch / (micro_batch x dp) micro-batches and bubble = pp - 1 micro-batch slots for 1F1B and
// GPipe, (pp - 1) / vpp for the interleaved schedule (Narayanan et al. 2021 Sec. 2.2: bubble fraction
// (p - 1) / m, and (p - 1) / (m v) interleaved).
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/units.hpp"
#include "frenzy/hw/cluster.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/model/transformer.hpp"
#include "frenzy/perf/efficiency.hpp"
#include "frenzy/perf/error_band.hpp"
#include "frenzy/perf/flops.hpp"
#include "frenzy/perf/gpu_facts.hpp"
#include "frenzy/perf/mfu_ceiling.hpp"
#include "frenzy/perf/step_breakdown.hpp"
#include "frenzy/perf/stage_load.hpp"
#include "frenzy/perf/traffic.hpp"
#include "frenzy/train/attention.hpp"
#include "frenzy/train/fp8_recipe.hpp"
#include "frenzy/train/geometry.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

enum class collective { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };

// ---- policies ------------------------------------------------------------------------------------------------

/// Compute time of one micro-batch's work (GEMMs, attention core, element-wise traffic) on one GPU.
template <class C>
concept ComputePolicy = requires(const C& c, const compute_work& w, const gpu_type& g) {
    { c.seconds(w, g) } -> std::convertible_to<double>;
};

/// Time of one collective of `bytes` (the full buffer) among `ranks` GPUs at `GBps` GB/s per GPU.
template <class N>
concept CommunicationPolicy = requires(const N& n, collective k, double bytes, std::int64_t ranks, double GBps) {
    { n.seconds(k, bytes, ranks, GBps) } -> std::convertible_to<double>;
};

/// Idle micro-batch slots of a pipeline schedule.
template <class B>
concept PipelinePolicy = requires(const B& b, const parallel_config& p, std::int64_t m) {
    { b.bubble_slots(p, m) } -> std::convertible_to<double>;
};

/// Default compute policy: the calibrated efficiency model (perf/efficiency.hpp).
struct calibrated_compute {
    efficiency_model efficiency = default_efficiency();
    double seconds(const compute_work& w, const gpu_type& g) const { return efficiency.seconds(w, g); }
    kernel_seconds by_kernel(const compute_work& w, const gpu_type& g) const { return efficiency.by_kernel(w, g); }
    /// The same with g's entry already looked up (entry(g)): what a prepared model passes (gpu_facts).
    kernel_seconds by_kernel(const compute_work& w, const gpu_type& g, const gpu_coefficient* e) const {
        return efficiency.by_kernel(w, g, e);
    }
    const gpu_coefficient* entry(const gpu_type& g) const { return efficiency.entry(g); }
};
static_assert(ComputePolicy<calibrated_compute>);

/// Bandwidth-optimal ring collectives (Thakur et al. 2005; NCCL): all-reduce moves 2(n-1)/n of the buffer per
/// GPU, all-gather and reduce-scatter (n-1)/n, all-to-all (n-1)/n, send/recv the whole buffer; plus a fixed
/// latency per step of the ring.
struct ring_collectives {
    double latency_s = 10e-6;  ///< per ring step (NCCL small-message latency, order of 10 us)
    double seconds(collective k, double bytes, std::int64_t ranks, double GBps) const {
        if (bytes <= 0 || !(GBps > 0)) return 0;
        const double n = static_cast<double>(ranks);
        if (k == collective::send_recv) return latency_s + bytes / (GBps * 1e9);
        if (ranks <= 1) return 0;
        const double share = (n - 1) / n;
        const double factor = k == collective::all_reduce ? 2 * share : share;
        const double steps = k == collective::all_reduce ? 2 * (n - 1) : (n - 1);
        return steps * latency_s + factor * bytes / (GBps * 1e9);
    }
};
static_assert(CommunicationPolicy<ring_collectives>);

/// Pipeline bubble of Megatron-LM's schedules (Narayanan et al. 2021 Sec. 2.2.1-2.2.2).
struct megatron_pipeline {
    /// Idle slots, in micro-batch times: pp - 1 for 1F1B and GPipe, (pp - 1) / vpp interleaved.
    double bubble_slots(const parallel_config& p, std::int64_t) const {
        const double b = static_cast<double>(p.pp - 1);
        return p.schedule == pipeline_schedule::interleaved ? b / static_cast<double>(p.vpp) : b;
    }
    /// Bubble time / ideal time: (pp - 1) / m, interleaved (pp - 1) / (m x vpp).
    static double bubble_fraction(const parallel_config& p, std::int64_t m) {
        return megatron_pipeline{}.bubble_slots(p, m) / static_cast<double>(m);
    }
};
static_assert(PipelinePolicy<megatron_pipeline>);

// ---- results ---------------------------------------------------------------------------------------------------

/// Predicted speed of a job on a GPU type.
struct step_estimate {
    bool supported = true;
    std::string reason;          ///< why not, e.g. "bf16 not supported on v100-32g"
    seconds step_time{};         ///< one optimizer step
    double tokens_per_s = 0;     ///< whole job (all dp x tp x pp x cp GPUs together)
    double tokens_per_s_per_gpu = 0;
    double mfu = 0;              ///< model FLOPs (perf/flops.hpp, no recompute, full s^2 attention) / (time x GPUs x peak)
    /// Relative error band of tokens/s (and step time) for the job's regime: the 90th percentile of |error| that
    /// leave-one-source-out validation shows for comparable runs (perf/error_band.hpp, docs/perf-model.md); the
    /// true throughput is expected within tokens_per_s x (1 +- rel_error_band) nine times in ten.
    double rel_error_band = 0;
    std::string_view error_regime;  ///< which regime the band was taken from (a static string)
    /// The best MFU measured for the job's class on the chip (perf/mfu_ceiling.hpp); 0 = no run of the class
    double mfu_ceiling = 0;
    /// The predicted MFU exceeds mfu_ceiling: nothing measured supports a prediction this high
    bool above_mfu_ceiling = false;
    flop_count flops{};          ///< whole step, all GPUs
    step_breakdown parts{};
};

/// Bytes one pipeline rank sends at a stage boundary per micro-batch, activations forward (their gradients come
/// back the same size): the micro-batch's hidden states on one GPU, 1/tp of them where Megatron sends a shard and
/// all-gathers it over NVLink (scatter-gather, Narayanan et al. 2021 Sec. 4.1) or sequence parallelism shards them.
inline double pipeline_send_bytes(const job_spec& j) {
    const auto& p = j.parallel;
    const bool split = p.sequence_parallel || j.runtime.framework->perf.pipeline_scatter_gather;
    return local_tokens(j) * static_cast<double>(j.model.hidden) * param_bytes(j.training.precision) /
           (split ? static_cast<double>(p.tp) : 1.0);
}

/// The composed step-time model. Hosts may replace any policy.
template <ComputePolicy C = calibrated_compute, CommunicationPolicy N = ring_collectives,
          PipelinePolicy B = megatron_pipeline>
class basic_step_time_model {
public:
    basic_step_time_model() = default;
    explicit basic_step_time_model(C compute, N comm = {}, B pipe = {})
        : compute_(std::move(compute)), comm_(std::move(comm)), pipe_(std::move(pipe)) {}

    const C& compute() const { return compute_; }
    C& compute() { return compute_; }

    /// Predicts one optimizer step of `j` (its parallel layout as given; assumed valid) on GPUs of type `g`.
    step_estimate predict(const job_spec& j, const gpu_type& g, const topology& topo) const {
        return predict(j, g, topo, bottleneck_stage(j));
    }
    /// The same with the job's bottleneck stage given (`bottleneck_stage` of its model, sequence length
    /// and layout: it does not depend on dp, the micro-batch, recompute, precision or the GPU), so a planner that
    /// predicts one layout at many points walks its stages once.
    step_estimate predict(const job_spec& j, const gpu_type& g, const topology& topo, const stage_load& stage) const {
        step_estimate r;
        const auto& t = j.training;
        const auto& p = j.parallel;
        const double peak = g.peak_flops(t.precision);
        if (!(peak > 0)) {
            r.supported = false;
            r.reason = std::string(to_string(t.precision)) + " not supported on " + g.name;
            return r;
        }
        if (auto why = fp8_recipe_rejected(j, g); !why.empty()) {  // train/fp8_recipe.hpp
            r.supported = false;
            r.reason = std::move(why);
            return r;
        }
        auto& b = r.parts;
        fill_parts(j, g, topo, stage, peak, b);
        if (!(std::isfinite(b.total) && b.total > 0)) {  // issue 57: a bandwidth of 1e-300 GB/s gave null in --json
            r.supported = false;
            r.reason = "the predicted step time is " + number_text(b.total) + " s, not a finite positive time: a "
                       "bandwidth or peak of " + g.name + " is too small";
            return r;
        }
        const std::int64_t gpus = p.gpus();
        r.step_time = seconds{b.total};
        r.flops = step_flops(j);
        r.tokens_per_s = j.tokens_per_step() / b.total;
        r.tokens_per_s_per_gpu = r.tokens_per_s / static_cast<double>(gpus);
        r.mfu = r.flops.model().value / (b.total * static_cast<double>(gpus) * peak);
        const auto band = error_band_for(j, g, compute_);
        r.rel_error_band = band.first;
        r.error_regime = band.second;
        r.mfu_ceiling = mfu_ceiling(j, g);
        r.above_mfu_ceiling = r.mfu_ceiling > 0 && r.mfu > r.mfu_ceiling;
        return r;
    }

    /// The parts of the step alone (predict's `parts`, bit for bit, without the FLOP count, MFU and error band):
    /// what a planner's speed bound reads. All zero where the GPU lacks the job's precision.
    step_breakdown step_parts(const job_spec& j, const gpu_type& g, const topology& topo, const stage_load& stage) const {
        step_breakdown b;
        const double peak = g.peak_flops(j.training.precision);
        if (peak > 0) fill_parts(j, g, topo, stage, peak, b);
        return b;
    }
    /// What one micro-batch slot takes before data parallelism: compute by kernel class and the exposed tensor-,
    /// context- and expert-parallel traffic (step_parts' first pieces). They read neither dp nor the sharding nor
    /// the offload, so a planner that bounds one layout at many dp and shardings takes them once per micro-batch and
    /// recompute level. All zero where the GPU lacks the job's precision.
    step_breakdown micro_batch_parts(const job_spec& j, const gpu_type& g, const topology& topo, const stage_load& stage) const {
        return micro_batch_parts(j, stage, prepare(g, topo));
    }
    /// step_parts(j, g, topo, stage) from `mb` = micro_batch_parts of a job that differs from `j` at most in dp, the
    /// sharding and the offload: the same parts, bit for bit.
    step_breakdown step_parts(const job_spec& j, const gpu_type& g, const topology& topo, const stage_load& stage,
                              const step_breakdown& mb) const {
        return step_parts(j, stage, mb, prepare(g, topo));
    }

    /// What the model reads of `g` on `topo` alone, for the prepared overloads below (gpu_facts).
    gpu_facts prepare(const gpu_type& g, const topology& topo) const {
        gpu_facts f{&g, topo, g.compute_capability(), g.flash_attention(), detail::intra_node_GBps(g),
                    detail::node_network_GBps(g, topo)};
        if constexpr (requires { { compute_.entry(g) } -> std::convertible_to<const gpu_coefficient*>; })
            f.efficiency = compute_.entry(g);
        return f;
    }
    /// step_parts(j, *f.gpu, f.topo, stage), bit for bit, with the type's facts taken before (prepare).
    step_breakdown step_parts(const job_spec& j, const stage_load& stage, const gpu_facts& f) const {
        step_breakdown b;
        const double peak = f.gpu->peak_flops(j.training.precision);
        if (peak > 0) {
            const auto c = context_of(j, stage, f);
            fill_micro_batch(c, peak, b);
            fill_data_parallel(c, b);
        }
        return b;
    }
    /// micro_batch_parts(j, *f.gpu, f.topo, stage), bit for bit, with the type's facts taken before (prepare).
    step_breakdown micro_batch_parts(const job_spec& j, const stage_load& stage, const gpu_facts& f) const {
        step_breakdown b;
        const double peak = f.gpu->peak_flops(j.training.precision);
        if (peak > 0) fill_micro_batch(context_of(j, stage, f), peak, b);
        return b;
    }
    /// step_parts(j, *f.gpu, f.topo, stage, mb), bit for bit, with the type's facts taken before (prepare).
    step_breakdown step_parts(const job_spec& j, const stage_load& stage, const step_breakdown& mb, const gpu_facts& f) const {
        step_breakdown b = mb;
        if (f.gpu->peak_flops(j.training.precision) > 0) fill_data_parallel(context_of(j, stage, f), b);
        return b;
    }
    /// The same in place, without copying the micro-batch parts: `b` holds micro_batch_parts of a job that differs
    /// from `j` at most in dp, the sharding and the offload, perhaps completed before for another of them; its
    /// data-parallel pieces (those fill_data_parallel sets) go back to their defaults and are set for `j`, so `b`
    /// becomes step_parts(j, stage, its micro-batch parts, f), bit for bit.
    void complete_step_parts(const job_spec& j, const stage_load& stage, const gpu_facts& f, step_breakdown& b) const {
        const step_breakdown none{};
        b.pp_mb = none.pp_mb;
        b.pp_exposed_mb = none.pp_exposed_mb;
        b.shard_mb = none.shard_mb;
        b.micro_batch = none.micro_batch;
        b.micro_batches = none.micro_batches;
        b.bubble_slots = none.bubble_slots;
        b.pipeline = none.pipeline;
        b.dp_sync = none.dp_sync;
        b.dp_exposed = none.dp_exposed;
        b.param_gather = none.param_gather;
        b.optimizer = none.optimizer;
        b.total = none.total;
        if (f.gpu->peak_flops(j.training.precision) > 0) fill_data_parallel(context_of(j, stage, f), b);
    }

private:
    void fill_parts(const job_spec& j, const gpu_type& g, const topology& topo, const stage_load& stage,
                    double peak, step_breakdown& b) const {
        const auto f = prepare(g, topo);
        const auto c = context_of(j, stage, f);
        fill_micro_batch(c, peak, b);
        fill_data_parallel(c, b);
    }

    /// compute_mb of b.work on g, by kernel class where the compute policy offers by_kernel.
    void set_compute(step_breakdown& b, const gpu_facts& f) const {
        const gpu_type& g = *f.gpu;
        if constexpr (requires { compute_.by_kernel(b.work, g, f.efficiency); }) {
            b.kernels_mb = compute_.by_kernel(b.work, g, f.efficiency);
            b.compute_mb = b.kernels_mb.total();
        } else if constexpr (requires { compute_.by_kernel(b.work, g); }) {
            b.kernels_mb = compute_.by_kernel(b.work, g);
            b.compute_mb = b.kernels_mb.total();
        } else {
            b.compute_mb = compute_.seconds(b.work, g);
        }
    }

    /// What every step of predict reads: the job, the GPU, the topology, the bottleneck stage and the per-GPU
    /// micro-batch quantities.
    struct step_context {
        const job_spec& j;
        const gpu_type& g;
        const topology& topo;
        const stage_load& stage;
        const gpu_facts& f;  ///< what the model reads of g on topo (prepare)
        double tp, cp;
        double gpu_tokens;  ///< tokens of one micro-batch on one GPU
        double act;         ///< activation element bytes (communication)
        int gpn;            ///< GPUs per node
        double intra;       ///< intra-node bandwidth per rank (detail::intra_node_GBps)
    };
    static step_context context_of(const job_spec& j, const stage_load& stage, const gpu_facts& f) {
        const auto& p = j.parallel;
        return {j, *f.gpu, f.topo, stage, f, static_cast<double>(p.tp), static_cast<double>(p.cp),
                // tokens of one micro-batch on one GPU (train/geometry.hpp); DPO's pairs run as 2b sequences
                local_tokens(j) * detail::sequences_per_sample(j.training),
                param_bytes(j.training.precision),  // activation element bytes (communication)
                std::max(1, f.topo.gpus_per_node), f.intra_GBps};
    }
    void fill_micro_batch(const step_context& c, double peak, step_breakdown& b) const {
        compute_step(c, peak, b);
        tensor_parallel_step(c, b);
        context_parallel_step(c, b);
        expert_parallel_step(c, b);
    }
    /// Sets pp_mb, pp_exposed_mb, shard_mb, micro_batch(es), bubble_slots, pipeline, dp_sync, dp_exposed,
    /// param_gather, optimizer and total, and no other field (complete_step_parts resets exactly these).
    void fill_data_parallel(const step_context& c, step_breakdown& b) const {
        pipeline_step(c, b);
        data_parallel_step(c, b);
        b.total = b.pipeline + b.dp_exposed + b.param_gather + b.optimizer;
    }

    /// Compute of one micro-batch on one GPU of the bottleneck stage, by kernel class (perf/efficiency.hpp).
    void compute_step(const step_context& c, double peak, step_breakdown& b) const {
        const auto& m = c.j.model;
        const auto& t = c.j.training;
        const auto& p = c.j.parallel;
        const auto& rt = c.j.runtime;
        const auto& g = c.g;
        const auto& stage = c.stage;
        const double tp = c.tp, gpu_tokens = c.gpu_tokens;
        const bool scaled = gpu_type::scaled_gemms(t.precision);
        const attention_impl kernel = attention_on(c.j, c.f.flash_attention);  // train/attention.hpp
        const auto& f = stage.flops;  // forward_flops_per_token(m, t.seq_len), computed with the stage
        // compute of one micro-batch on one GPU of the bottleneck stage (with the logits when it is the last)
        const double stage_dense = stage.dense_layers() * f.dense_layer + stage.moe_layers * f.moe_layer;
        const double stage_attn = stage.layers * f.attention_core;
        const double full_rec = full_recompute_share(c.j, stage);  // layers run forward twice
        const double rec_dense = full_rec * stage_dense;
        const double rec_attn = (p.recompute == recompute::selective ? 1.0 : full_rec) * stage_attn;
        const double gemm_passes = 1.0 + detail::backward_gemm_passes(t);  // forward + backward
        const double ref = detail::reference_forwards(t);  // DPO's no-grad reference forward, logits included
        const double dense_tok = (gemm_passes + ref) * stage_dense + rec_dense + (stage.logits ? (gemm_passes + ref) * f.logits : 0.0);
        const double attn_tok = (3.0 + ref) * stage_attn + rec_attn;
        b.dense_flops_mb = dense_tok * gpu_tokens / tp;
        b.attention_flops_mb = attn_tok * gpu_tokens / tp;
        // the reference forward's layers move what a recomputed forward moves (its log-softmax over the logits is not counted)
        b.memory_bytes_mb = detail::stage_elementwise_bytes(c.j, stage, full_rec + ref, c.f.compute_capability) * gpu_tokens;
        const double stream_bytes =
            (kernel == attention_impl::unfused ? detail::unfused_stream_bytes(c.j, stage, full_rec, ref) * gpu_tokens : 0.0) +
            detail::qlora_dequant_bytes(c.j, stage, full_rec + ref);
        b.peak = peak;
        b.shape = {gpu_tokens, static_cast<double>(m.hidden) / tp, detail::gemm_weight_bytes(t, full_rec + ref)};
        b.work = {b.dense_flops_mb, b.attention_flops_mb, b.memory_bytes_mb, peak, g.non_gemm_peak_flops(t.precision),
                  scaled, b.shape, 0.0, 0.0, rt.framework->perf.transformer_engine && kernel == attention_impl::flash,
                  kernel == attention_impl::unfused, stream_bytes};
        if (m.is_moe()) {  // routed experts: top_k expert MLPs per token, on tokens x top_k x ep / experts rows each
            // Balanced routing; a capacity drops tokens above it, padding to capacity computes the padded rows too
            // (moe_spec::expert_load).
            const double load = m.moe.expert_load(1.0);
            const double e_mlp = 2.0 * static_cast<double>(m.hidden * m.expert_ffn()) * (is_gated(m.activation) ? 3.0 : 2.0);
            const double routed = e_mlp * static_cast<double>(m.moe.top_k) * load;
            const double rec = full_rec + ref;
            b.work.expert_flops = (gemm_passes + rec) * routed * stage.moe_layers * gpu_tokens / tp;
            b.work.expert_tokens = load * gpu_tokens * static_cast<double>(m.moe.top_k * p.ep) / static_cast<double>(m.moe.experts);
        }
        set_compute(b, c.f);
    }

    /// Tensor-parallel collectives and the part of them the GEMMs do not hide.
    void tensor_parallel_step(const step_context& c, step_breakdown& b) const {
        const auto& m = c.j.model;
        const auto& p = c.j.parallel;
        const auto& rt = c.j.runtime;
        const double tp = c.tp, gpu_tokens = c.gpu_tokens, act = c.act, intra = c.intra, layers_stage = c.stage.layers;
        const int gpn = c.gpn;
        // tensor parallel: 2 all-reduces forward, 2 backward, 2 more per recomputed forward (Megatron-LM
        // Shoeybi et al. 2019 Fig. 3); with sequence parallelism reduce-scatter + all-gather of the same volume.
        // With --tp-comm-overlap (Megatron-Core + Transformer Engine userbuffers, megatron/core/
        // model_parallel_config.py tp_comm_overlap) each collective is split into tp chunks pipelined with the
        // GEMM it feeds: only the first chunk (1/tp) and what exceeds the GEMM time stays exposed.
        if (p.tp > 1) {
            const double bw = p.tp <= gpn ? intra : c.f.spanning_GBps(gpn);
            const double n = 4.0 + 2.0 * (full_recompute_share(c.j, c.stage) + detail::reference_forwards(c.j.training));
            const double buf = gpu_tokens * static_cast<double>(m.hidden) * act;
            b.tp_mb = layers_stage * n * comm_.seconds(collective::all_reduce, buf, p.tp, bw);
            if (rt.tp_comm_overlap) {
                const double gemm_s = b.compute_mb * b.dense_flops_mb / std::max(1.0, b.dense_flops_mb + b.attention_flops_mb);
                b.tp_exposed_mb = b.tp_mb / tp + std::max(0.0, b.tp_mb * (tp - 1.0) / tp - gemm_s);
            } else {
                b.tp_exposed_mb = b.tp_mb;
            }
        }
    }

    /// Context-parallel K/V exchange (ring in Megatron/TE, all-gather in PyTorch's context_parallel).
    void context_parallel_step(const step_context& c, step_breakdown& b) const {
        const auto& m = c.j.model;
        const auto& p = c.j.parallel;
        const auto& rt = c.j.runtime;
        const double tp = c.tp, cp = c.cp, gpu_tokens = c.gpu_tokens, act = c.act, intra = c.intra;
        const double layers_stage = c.stage.layers;
        const int gpn = c.gpn;
        // context parallel. Megatron-Core/Transformer Engine (ring attention, AttnFuncWithCPAndKVP2P in
        // transformer_engine/pytorch/attention.py): cp - 1 exchanges of a K/V chunk per layer forward, of K/V and
        // their gradients backward (and again when the layer is recomputed), each overlapped with the attention of
        // the chunk in hand, so only what exceeds the attention time is exposed. PyTorch's context_parallel (what
        // torchtitan uses with FSDP; torch/distributed/tensor/experimental/_attention.py, rotate_method all-gather
        // by default, convert_to_f32 on) all-gathers K/V before the attention (backward: all-gather again and
        // reduce-scatter their gradients), not overlapped, and merges the cp partial outputs and log-sum-exps in
        // fp32 (read + write of an fp32 output chunk per merge, forward and twice backward): added to the
        // element-wise traffic.
        if (p.cp > 1) {
            const double kv_elems = 2.0 * static_cast<double>(m.kv() * m.hdim()) / tp;
            const double chunk = gpu_tokens * kv_elems * act;
            const double bw = p.tp * p.cp <= gpn ? intra : c.f.spanning_GBps(std::max<std::int64_t>(1, gpn / p.tp));
            const double fwd_passes = 1.0 + (p.recompute == recompute::selective ? 1.0 : full_recompute_share(c.j, c.stage)) +
                                      detail::reference_forwards(c.j.training);
            if (rt.framework->perf.context_parallel == context_parallel_impl::ring_p2p) {
                b.cp_mb = layers_stage * (fwd_passes + 2.0) * (cp - 1.0) * comm_.seconds(collective::send_recv, chunk, 2, bw);
                const double attn_s = b.compute_mb * b.attention_flops_mb / std::max(1.0, b.dense_flops_mb + b.attention_flops_mb);
                b.cp_exposed_mb = std::max(0.0, b.cp_mb - attn_s * (cp - 1.0) / cp);
            } else {
                const double full = chunk * cp;  // the gathered K/V of the whole sequence
                b.cp_mb = layers_stage * ((fwd_passes + 1.0) * comm_.seconds(collective::all_gather, full, p.cp, bw) +
                                          comm_.seconds(collective::reduce_scatter, full, p.cp, bw));
                b.cp_exposed_mb = b.cp_mb;
                const double q_elems = static_cast<double>(m.heads * m.hdim()) / tp;
                const double merge = layers_stage * (fwd_passes + 2.0) * cp * gpu_tokens * q_elems * 2.0 * 4.0;
                b.memory_bytes_mb += merge;
                b.work.memory_bytes = b.memory_bytes_mb;
                set_compute(b, c.f);
            }
        }
    }

    /// Expert-parallel all-to-alls.
    void expert_parallel_step(const step_context& c, step_breakdown& b) const {
        const auto& m = c.j.model;
        const auto& p = c.j.parallel;
        const auto& stage = c.stage;
        const double tp = c.tp, gpu_tokens = c.gpu_tokens, act = c.act, intra = c.intra;
        const int gpn = c.gpn;
        if (p.ep > 1 && m.is_moe()) {  // two all-to-alls forward (dispatch, combine), two backward per MoE layer
            const double buf = m.moe.expert_load(1.0) * gpu_tokens * static_cast<double>(m.hidden * m.moe.top_k) * act / tp;
            const double bw = p.tp * p.ep <= gpn ? intra : c.f.spanning_GBps(std::max<std::int64_t>(1, gpn / p.tp));
            const double passes = 4.0 + 2.0 * detail::reference_forwards(c.j.training);  // + the reference forward's two
            b.ep_mb = stage.moe_layers * passes * comm_.seconds(collective::all_to_all, buf, p.ep, bw);
        }
    }

    /// Pipeline send/recv of activations and their gradients, and what of it is on the critical path.
    void pipeline_step(const step_context& c, step_breakdown& b) const {
        const auto& p = c.j.parallel;
        const std::int64_t gpus = p.gpus();
        // pipeline: activations forward, their gradients backward, per model chunk (vpp). Megatron sends 1/tp of
        // the tensor per rank and all-gathers it over NVLink (scatter-gather optimisation, Narayanan et al. 2021
        // Sec. 4.1; sequence parallelism shards it anyway); the interleaved schedule overlaps the sends with the
        // next chunk's compute (--overlap-p2p-communication, on by default: megatron/training/arguments.py),
        // 1F1B and GPipe wait for them.
        if (p.pp > 1) {
            const double buf = pipeline_send_bytes(c.j);
            const double bw = gpus <= c.gpn ? c.intra : c.f.spanning_GBps(1);
            b.pp_mb = 2.0 * static_cast<double>(p.vpp) * comm_.seconds(collective::send_recv, buf, 2, bw);
            b.pp_exposed_mb = p.schedule == pipeline_schedule::interleaved
                                  ? std::max(0.0, b.pp_mb - b.compute_mb) + b.pp_mb / (2.0 * static_cast<double>(p.vpp))
                                  : b.pp_mb;
        }
    }

    /// One micro-batch slot. Sharded-state traffic is prefetched one unit (layer) ahead of the compute that needs
    /// it (FSDP forward/backward prefetch, ZeRO-3 prefetch): per layer the slower of the two runs, and the first
    /// layer's gather (or, when the gathers are the slower, the last layer's compute) has nothing to hide behind:
    /// a pipeline of L layers takes max(C, S) + min(C, S) / L.
    static double micro_batch_slot(const step_breakdown& b, double layers) {
        const double work = b.compute_mb + b.tp_exposed_mb + b.cp_exposed_mb + b.ep_mb;
        return std::max(work, b.shard_mb) + std::min(work, b.shard_mb) / std::max(1.0, layers) + b.pp_exposed_mb;
    }

    /// Sharded-state traffic, the micro-batch slot and the schedule, the gradient sync with its overlap, the
    /// ZeRO-2 parameter gather and the optimizer pass.
    void data_parallel_step(const step_context& c, step_breakdown& b) const {
        const auto& j = c.j;
        const auto& t = c.j.training;
        const auto& p = c.j.parallel;
        const auto& rt = c.j.runtime;
        const auto& g = c.g;
        const auto& stage = c.stage;
        const double intra = c.intra, layers_stage = c.stage.layers;
        const int gpn = c.gpn;
        // gradient-reduction group: dp x cp (Megatron reduces gradients over the data-parallel group with context
        // parallelism, parallel_state.get_data_parallel_group(with_context_parallel=True); torchtitan shards FSDP
        // over dp_shard x cp); contiguous after tp (order tp-cp-dp-pp), spans nodes when tp x cp x dp > node
        const std::int64_t dpg = p.dp * p.cp;
        const bool dp_intra = p.tp * dpg <= gpn;
        const double dp_bw = dp_intra ? intra : c.f.spanning_GBps(std::max<std::int64_t>(1, gpn / p.tp));
        // fine-tuning reduces and updates only what it trains (adapters, unfrozen layers); gathers move every
        // weight, QLoRA's linears in NF4
        const double params = stage.trainable_params;
        const double wbytes = (stage.params - stage.nf4_params) * param_bytes(t.precision) +
                              stage.nf4_params * nf4_bytes_per_param(t.finetune.double_quant);
        const double gbytes = params * param_bytes(t.precision);  // gradients are reduced in the compute precision
        // ZeRO-3/FSDP: gather fwd, gather bwd, reduce-scatter grads; DPO's reference forward gathers once more
        const double gathers = 2.0 + detail::reference_forwards(t);
        if (dpg > 1 && p.sharding == sharding::full)
            b.shard_mb = gathers * comm_.seconds(collective::all_gather, wbytes, dpg, dp_bw) +
                         comm_.seconds(collective::reduce_scatter, gbytes, dpg, dp_bw);
        // parameter offload (ZeRO-Infinity offload_param, FSDP CPUOffload): each GPU's shard comes up from the host
        // before its gathers, forward and backward, prefetched like them
        if (rt.offload.parameters) b.shard_mb += gathers * detail::host_copy_seconds(g, wbytes / static_cast<double>(dpg));
        else if (dpg > 1 && p.sharding == sharding::gradients)  // ZeRO-2: reduce-scatter every micro-batch
            b.shard_mb = comm_.seconds(collective::reduce_scatter, gbytes, dpg, dp_bw);

        b.micro_batch = micro_batch_slot(b, layers_stage);
        b.micro_batches = std::max<std::int64_t>(1, j.micro_batches());
        b.bubble_slots = pipe_.bubble_slots(p, b.micro_batches);
        b.pipeline = (static_cast<double>(b.micro_batches) + b.bubble_slots) * b.micro_batch;

        if (dpg > 1 && (p.sharding == sharding::none || p.sharding == sharding::optimizer)) {
            // all-reduce, or ZeRO-1 reduce-scatter + all-gather (same volume). PyTorch DDP, DeepSpeed and
            // Megatron with --overlap-grad-reduce bucket it behind the last micro-batch's backward (Megatron's
            // distributed optimizer also overlaps the parameter all-gather with the next forward,
            // --overlap-param-gather); one bucket (a layer's gradients) always stays exposed. Megatron-LM
            // without it reduces after the backward (megatron/core/distributed/distributed_data_parallel.py).
            b.dp_sync = comm_.seconds(collective::all_reduce, gbytes, dpg, dp_bw);
            const bool overlapped = !rt.framework->perf.overlap_is_a_flag || rt.overlap_grad_reduce;
            if (overlapped) {
                const double window = b.compute_mb * (p.sharding == sharding::optimizer ? 1.0 : 2.0 / 3.0);
                b.dp_exposed = std::max(b.dp_sync / std::max(1.0, layers_stage), b.dp_sync - window);
            } else {
                b.dp_exposed = b.dp_sync;
            }
        }
        if (dpg > 1 && p.sharding == sharding::gradients)  // the updated (trained) parameters
            b.param_gather = comm_.seconds(collective::all_gather, params * param_bytes(t.precision), dpg, dp_bw);
        // optimizer: element-wise pass over this GPU's share of the states at ~80% of the datasheet bandwidth
        const double shard = p.sharding == sharding::none ? 1.0 : static_cast<double>(dpg);
        b.optimizer = rt.offload.optimizer
                          ? detail::offloaded_optimizer_seconds(j, g, params / shard)
                          : params / shard * detail::optimizer_pass_bytes(t.precision, t.optimizer) / (0.8 * g.mem_bw_GBps * 1e9);
    }

    C compute_{};
    N comm_{};
    B pipe_{};
};

using step_time_model = basic_step_time_model<>;

/// Step time, tokens/s (whole job) and MFU of `j` with its parallel layout on `gpus_per_node`-GPU nodes of type
/// `g` connected at `network_GBps` GB/s per node (0 = default for the GPU class), with the shipped calibration.
inline step_estimate predict_step(const job_spec& j, const gpu_type& g, int gpus_per_node, double network_GBps) {
    return step_time_model{}.predict(j, g, topology{gpus_per_node, network_GBps});
}

}  // namespace frenzy
