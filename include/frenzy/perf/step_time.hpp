#pragma once
// Step-time model: compute (exact FLOPs at a calibrated fraction of peak), tensor/expert/pipeline/data-parallel
// communication, the pipeline bubble of each schedule, and the optimizer step; composed from policies.
//
// One optimizer step on the bottleneck (last) pipeline stage:
//   t_mb  = max(compute + tp + ep collectives, sharded-state traffic of ZeRO-2/3 per micro-batch) + pp send/recv
//   step  = (m + bubble) x t_mb + exposed gradient sync + ZeRO-2 parameter gather + optimizer pass
// with m = global_batch / (micro_batch x dp) micro-batches and bubble = pp - 1 micro-batch slots for 1F1B and
// GPipe, (pp - 1) / vpp for the interleaved schedule (Narayanan et al. 2021 Sec. 2.2: bubble fraction
// (p - 1) / m, and (p - 1) / (m v) interleaved).
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <string>

#include "frenzy/core/units.hpp"
#include "frenzy/hw/cluster.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/model/transformer.hpp"
#include "frenzy/perf/efficiency.hpp"
#include "frenzy/perf/flops.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// Where a job's GPUs sit: node size and inter-node bandwidth per node (GB/s; 0 = default for the GPU class).
struct topology {
    int gpus_per_node = 8;
    double network_gbps = 0;
    bool operator==(const topology&) const = default;
};

enum class collective { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };

// ---- policies ------------------------------------------------------------------------------------------------

/// Compute time of dense-GEMM and attention-core FLOPs on one GPU.
template <class C>
concept ComputePolicy = requires(const C& c, double f, const gpu_type& g, gemm_shape s) {
    { c.seconds(f, f, g, f, s) } -> std::convertible_to<double>;
};

/// Time of one collective of `bytes` (the full buffer) among `ranks` GPUs at `gbps` GB/s per GPU.
template <class N>
concept CommunicationPolicy = requires(const N& n, collective k, double bytes, std::int64_t ranks, double gbps) {
    { n.seconds(k, bytes, ranks, gbps) } -> std::convertible_to<double>;
};

/// Idle micro-batch slots of a pipeline schedule.
template <class B>
concept PipelinePolicy = requires(const B& b, const parallel_config& p, std::int64_t m) {
    { b.bubble_slots(p, m) } -> std::convertible_to<double>;
};

/// Default compute policy: the calibrated efficiency model (perf/efficiency.hpp).
struct calibrated_compute {
    efficiency_model efficiency = default_efficiency();
    double seconds(double dense, double attention, const gpu_type& g, double peak, gemm_shape s) const {
        return efficiency.seconds(dense, attention, g, peak, s);
    }
};
static_assert(ComputePolicy<calibrated_compute>);

/// Bandwidth-optimal ring collectives (Thakur et al. 2005; NCCL): all-reduce moves 2(n-1)/n of the buffer per
/// GPU, all-gather and reduce-scatter (n-1)/n, all-to-all (n-1)/n, send/recv the whole buffer; plus a fixed
/// latency per step of the ring.
struct ring_collectives {
    double latency_s = 10e-6;  ///< per ring step (NCCL small-message latency, order of 10 us)
    double seconds(collective k, double bytes, std::int64_t ranks, double gbps) const {
        if (bytes <= 0 || !(gbps > 0)) return 0;
        const double n = static_cast<double>(ranks);
        if (k == collective::send_recv) return latency_s + bytes / (gbps * 1e9);
        if (ranks <= 1) return 0;
        const double share = (n - 1) / n;
        const double factor = k == collective::all_reduce ? 2 * share : share;
        const double steps = k == collective::all_reduce ? 2 * (n - 1) : (n - 1);
        return steps * latency_s + factor * bytes / (gbps * 1e9);
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

/// The pieces of one step (seconds). Per-micro-batch pieces are on the bottleneck stage.
struct step_breakdown {
    double compute_mb = 0;     ///< fwd + bwd + recompute of one micro-batch on one GPU
    double tp_mb = 0;          ///< tensor-parallel all-reduces (or reduce-scatter + all-gather with SP)
    double ep_mb = 0;          ///< expert-parallel all-to-alls
    double pp_mb = 0;          ///< pipeline send/recv of activations and their gradients
    double shard_mb = 0;       ///< ZeRO-3/FSDP parameter gathers + gradient reduce-scatter (ZeRO-2: reduce-scatter)
    double micro_batch = 0;    ///< time of one micro-batch slot
    std::int64_t micro_batches = 1;
    double bubble_slots = 0;   ///< idle micro-batch slots of the schedule
    double pipeline = 0;       ///< (micro_batches + bubble_slots) x micro_batch
    double dp_sync = 0;        ///< gradient all-reduce (or ZeRO-1 reduce-scatter + all-gather), before overlap
    double dp_exposed = 0;     ///< the part of dp_sync not hidden behind the last backward
    double param_gather = 0;   ///< ZeRO-2: all-gather of updated parameters after the optimizer
    double optimizer = 0;      ///< memory-bandwidth-bound optimizer pass
    double total = 0;
    // inputs of the compute term (what calibration inverts)
    double dense_flops_mb = 0, attention_flops_mb = 0, peak = 0;
    gemm_shape shape{};
};

/// Predicted speed of a job on a GPU type.
struct step_estimate {
    bool supported = true;
    std::string reason;          ///< why not, e.g. "bf16 not supported on v100-32g"
    seconds step_time{};         ///< one optimizer step
    double tokens_per_s = 0;     ///< whole job (all dp x tp x pp x cp GPUs together)
    double tokens_per_s_per_gpu = 0;
    double mfu = 0;              ///< model FLOPs (perf/flops.hpp, no recompute, full s^2 attention) / (time x GPUs x peak)
    flop_count flops{};          ///< whole step, all GPUs
    step_breakdown parts{};
};

namespace detail {
/// Effective bandwidths (GB/s per rank): NCCL reaches about 75% of the NVLink/PCIe unidirectional rate
/// (nccl-tests busbw on DGX A100: ~230 of 300 GB/s) and ~90% of the NIC rate across nodes.
inline double intra_node_gbps(const gpu_type& g) { return 0.75 * g.link_gbps / 2.0; }
inline double node_network_gbps(const gpu_type& g, const topology& t) {
    return t.network_gbps > 0 ? t.network_gbps : (g.nvlink() ? 200.0 : 12.5);  // hw/cluster.hpp defaults
}
/// Bus bandwidth of a collective whose group has `per_node` members in each of several nodes: NCCL runs one ring
/// per NIC, so the members of a node share the node's network bandwidth (a group with one member per node gets
/// one NIC's share, a group filling the node gets all of it); never more than the intra-node link.
inline double spanning_gbps(const gpu_type& g, const topology& t, std::int64_t per_node) {
    const double gpn = static_cast<double>(std::max(1, t.gpus_per_node));
    const double k = std::clamp(static_cast<double>(per_node), 1.0, gpn);
    return std::min(intra_node_gbps(g), 0.9 * node_network_gbps(g, t) * k / gpn);
}
inline double inter_node_gbps(const gpu_type& g, const topology& t) { return spanning_gbps(g, t, 1); }

/// Optimizer-step bytes per parameter (weights + gradients + optimizer states), each read and written once.
inline double optimizer_pass_bytes(precision p, optimizer_kind o) {
    const bool pure = p == precision::bf16 || p == precision::fp32;
    const double w = param_bytes(p);
    const double master = pure ? 0.0 : 4.0;          // fp32 master copy of mixed precision
    const double state_elem = p == precision::bf16 ? 2.0 : 4.0;
    double states = 0;
    switch (o) {
        case optimizer_kind::adam:
        case optimizer_kind::adamw: states = 2 * state_elem; break;     // m and v
        case optimizer_kind::sgd: states = state_elem; break;            // momentum
        case optimizer_kind::adafactor: states = 0.1 * state_elem; break; // factored second moment (small)
        case optimizer_kind::adamw_8bit: states = 2 * (1.0 + 4.0 / 256); break;  // memory/methods.hpp adam8bit_state_bytes
    }
    const double grad = pure ? w : 4.0;  // mixed precision accumulates fp32 main gradients (Megatron)
    return 2.0 * (w + master + states + grad);
}

/// Parameters one GPU of the bottleneck pipeline stage holds before data-parallel sharding.
inline double stage_parameters(const transformer_spec& m, const parallel_config& p, std::int64_t seq_len) {
    const auto c = count_parameters(m, m.vocab, m.max_positions > 0 ? m.max_positions : seq_len);
    const double dense = static_cast<double>(m.layers - m.moe_layers());
    const double moe = static_cast<double>(m.moe_layers());
    const double nonexpert = dense * c.dense_layer() + moe * (c.attention + c.layer_norms + c.router + c.shared_expert);
    const double experts = moe * static_cast<double>(m.moe.experts) * c.expert;
    const double pp = static_cast<double>(p.pp), tp = static_cast<double>(p.tp), ep = static_cast<double>(p.ep);
    const double first = c.word_embedding + c.position_embedding;
    const double last = (m.tied_embeddings ? c.word_embedding : c.output_layer) + c.final_norm;
    const double emb = p.pp == 1 ? first + (m.tied_embeddings ? 0.0 : last) : std::max(first, last);
    return (nonexpert / pp + experts / (pp * ep) + emb) / tp;
}
}  // namespace detail

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
        step_estimate r;
        const auto& m = j.model;
        const auto& t = j.training;
        const auto& p = j.parallel;
        const double peak = g.peak_flops(t.precision);
        if (!(peak > 0)) {
            r.supported = false;
            r.reason = std::string(to_string(t.precision)) + " not supported on " + g.name;
            return r;
        }
        auto& b = r.parts;
        const double s = static_cast<double>(t.seq_len);
        const double tp = static_cast<double>(p.tp), pp = static_cast<double>(p.pp), cp = static_cast<double>(p.cp);
        const double mb_tokens = static_cast<double>(t.micro_batch) * s;
        const double act = param_bytes(t.precision);  // activation element bytes
        const auto f = forward_flops_per_token(m, t.seq_len);

        // compute of one micro-batch on one GPU of the last stage (it also holds the logits)
        const double rec_dense = p.recompute == recompute::full ? f.layers_dense() : 0.0;
        const double rec_attn = p.recompute == recompute::none ? 0.0 : f.layers_attention();
        const double dense_tok = 3.0 * (f.layers_dense() / pp + f.logits) + rec_dense / pp;
        const double attn_tok = (3.0 * f.layers_attention() + rec_attn) / pp;
        b.dense_flops_mb = dense_tok * mb_tokens / (tp * cp);
        b.attention_flops_mb = attn_tok * mb_tokens / (tp * cp);
        b.peak = peak;
        b.shape = {mb_tokens / cp, static_cast<double>(m.hidden) / tp};
        b.compute_mb = compute_.seconds(b.dense_flops_mb, b.attention_flops_mb, g, peak, b.shape);

        const int gpn = std::max(1, topo.gpus_per_node);
        const std::int64_t gpus = p.gpus();
        const double intra = detail::intra_node_gbps(g);
        const double layers_stage = static_cast<double>(m.layers) / pp;
        // tensor parallel: 2 all-reduces forward, 2 backward, 2 more per recomputed forward (Megatron-LM
        // Shoeybi et al. 2019 Fig. 3); with sequence parallelism reduce-scatter + all-gather of the same volume
        if (p.tp > 1) {
            const double bw = p.tp <= gpn ? intra : detail::spanning_gbps(g, topo, gpn);
            const double n = 4.0 + (p.recompute == recompute::full ? 2.0 : 0.0);
            const double buf = mb_tokens / cp * static_cast<double>(m.hidden) * act;
            b.tp_mb = layers_stage * n * comm_.seconds(collective::all_reduce, buf, p.tp, bw);
        }
        // data-parallel group: contiguous after tp (Megatron order tp-cp-dp-pp), spans nodes when tp x cp x dp > node
        const bool dp_intra = p.tp * p.cp * p.dp <= gpn;
        const double dp_bw = dp_intra ? intra : detail::spanning_gbps(g, topo, std::max<std::int64_t>(1, gpn / (p.tp * p.cp)));
        if (p.ep > 1 && m.is_moe()) {  // two all-to-alls forward (dispatch, combine), two backward per MoE layer
            const double buf = mb_tokens / cp * static_cast<double>(m.hidden * m.moe.top_k) * act / tp;
            const double bw = p.tp * p.ep <= gpn ? intra : detail::spanning_gbps(g, topo, std::max<std::int64_t>(1, gpn / p.tp));
            b.ep_mb = static_cast<double>(m.moe_layers()) / pp * 4.0 * comm_.seconds(collective::all_to_all, buf, p.ep, bw);
        }
        if (p.pp > 1) {  // activations forward, their gradients backward, per model chunk (vpp)
            const double buf = mb_tokens / cp * static_cast<double>(m.hidden) * act / (p.sequence_parallel ? tp : 1.0);
            const double bw = gpus <= gpn ? intra : detail::inter_node_gbps(g, topo);
            b.pp_mb = 2.0 * static_cast<double>(p.vpp) * comm_.seconds(collective::send_recv, buf, 2, bw);
        }
        const double params = detail::stage_parameters(m, p, t.seq_len);
        const double wbytes = params * param_bytes(t.precision);
        const double gbytes = params * param_bytes(t.precision);  // gradients are reduced in the compute precision
        if (p.dp > 1 && p.sharding == sharding::full)  // ZeRO-3/FSDP: gather fwd, gather bwd, reduce-scatter grads
            b.shard_mb = 2.0 * comm_.seconds(collective::all_gather, wbytes, p.dp, dp_bw) +
                         comm_.seconds(collective::reduce_scatter, gbytes, p.dp, dp_bw);
        else if (p.dp > 1 && p.sharding == sharding::gradients)  // ZeRO-2: reduce-scatter every micro-batch
            b.shard_mb = comm_.seconds(collective::reduce_scatter, gbytes, p.dp, dp_bw);

        // sharded-state traffic is prefetched/overlapped with compute (FSDP forward/backward prefetch)
        b.micro_batch = std::max(b.compute_mb + b.tp_mb + b.ep_mb, b.shard_mb) + b.pp_mb;
        b.micro_batches = std::max<std::int64_t>(1, j.micro_batches());
        b.bubble_slots = pipe_.bubble_slots(p, b.micro_batches);
        b.pipeline = (static_cast<double>(b.micro_batches) + b.bubble_slots) * b.micro_batch;

        if (p.dp > 1 && (p.sharding == sharding::none || p.sharding == sharding::optimizer)) {
            // all-reduce, or ZeRO-1 reduce-scatter + all-gather (same volume); bucketed and overlapped with the
            // backward of the last micro-batch (PyTorch DDP, Megatron overlap_grad_reduce)
            b.dp_sync = comm_.seconds(collective::all_reduce, gbytes, p.dp, dp_bw);
            const double backward = b.compute_mb * 2.0 / 3.0;
            b.dp_exposed = std::max(0.0, b.dp_sync - backward);
        }
        if (p.dp > 1 && p.sharding == sharding::gradients)
            b.param_gather = comm_.seconds(collective::all_gather, wbytes, p.dp, dp_bw);
        // optimizer: element-wise pass over this GPU's share of the states at ~80% of the datasheet bandwidth
        const double shard = p.sharding == sharding::none ? 1.0 : static_cast<double>(p.dp);
        b.optimizer = params / shard * detail::optimizer_pass_bytes(t.precision, t.optimizer) / (0.8 * g.mem_bw_gbps * 1e9);

        b.total = b.pipeline + b.dp_exposed + b.param_gather + b.optimizer;
        r.step_time = seconds{b.total};
        r.flops = step_flops(j);
        r.tokens_per_s = j.tokens_per_step() / b.total;
        r.tokens_per_s_per_gpu = r.tokens_per_s / static_cast<double>(gpus);
        r.mfu = r.flops.model().value / (b.total * static_cast<double>(gpus) * peak);
        return r;
    }

private:
    C compute_{};
    N comm_{};
    B pipe_{};
};

using step_time_model = basic_step_time_model<>;

/// Step time, tokens/s (whole job) and MFU of `j` with its parallel layout on `gpus_per_node`-GPU nodes of type
/// `g` connected at `network_gbps` GB/s per node (0 = default for the GPU class), with the shipped calibration.
inline step_estimate predict_step(const job_spec& j, const gpu_type& g, int gpus_per_node, double network_gbps) {
    return step_time_model{}.predict(j, g, topology{gpus_per_node, network_gbps});
}

}  // namespace frenzy
