#pragma once
// What a training framework keeps in memory, as data: each framework's preset lives with its traits
// (frameworks/<name>/traits.hpp, framework_profile in train/framework.hpp), so the memory policies are one general
// mechanism and frameworks differ only in these facts. profile_of(job) applies the job's runtime options.
#include "frenzy/train/job.hpp"

namespace frenzy {

/// The preset profile of a framework (before the job's runtime options; see profile_of(const job_spec&)).
inline framework_profile profile_of(framework f) { return f->memory; }

/// The profile a job runs with: its framework's preset adjusted by the job's runtime options.
inline framework_profile profile_of(const job_spec& j) {
    const auto& fw = j.runtime.framework.traits();
    auto f = fw.layout_memory ? fw.layout_memory(fw.memory, j.parallel) : fw.memory;
    // the release's defaults first (runtime.framework_version), so the job's explicit options below win over them
    for (const auto& v : fw.versions)
        if (v.name == j.runtime.framework_version && v.apply) f = v.apply(f);
    if (j.runtime.compile) f.fused_elementwise = true;
    if (j.runtime.dropout) f.dropout = *j.runtime.dropout;
    if (j.runtime.rope_fp32) f.rope_fp32_copies = *j.runtime.rope_fp32;
    if (j.runtime.norm_fp32) f.rmsnorm_fp32_copy = *j.runtime.norm_fp32;
    if (j.runtime.kv_repeat) f.gqa_kv_repeat = *j.runtime.kv_repeat;
    if (j.runtime.loss) f.loss = *j.runtime.loss;
    // Liger's kernels (runtime.liger): RMSNorm saves its 16-bit input and the row rstd, SwiGLU its two inputs, RoPE
    // cos/sin (Liger-Kernel@ead96b6 ops/rms_norm.py, swiglu.py, rope.py save_for_backward), the final norm too (the
    // patch replaces the norm class); the loss is the fused linear cross-entropy.
    if (j.runtime.liger) {
        f.fused_elementwise = true;
        f.rmsnorm_fp32_copy = false;
        f.rope_fp32_copies = false;
        f.loss = loss_style::liger_fused_linear;
    }
    // --grad-reduce-in-bf16: Megatron's main_grad buffers take the parameters' bf16 (arguments.py@d98e8a64).
    if (j.runtime.grad_reduce_bf16) f.grad_bytes_bf16 = 2;
    if (f.dtensor_tensor_parallel && j.parallel.tp > 1) {
        if (f.loss == loss_style::upcast_log_softmax) f.loss = loss_style::dtensor_loss_parallel;
        if (j.parallel.sequence_parallel) f.saves_gathered_inputs = true;
    }
    // TRL's DPO forward passes no labels, so Unsloth's model returns the full logits for selective_log_softmax
    // (unsloth/models/llama.py@015bdef: the fused loss needs labels) and the loss is the logits path.
    if (j.training.finetune.dpo() && f.loss == loss_style::unsloth_fused) f.loss = loss_style::upcast_log_softmax;
    if (j.runtime.optimizer == optimizer_impl::fused) f.foreach_optimizer = false;
    if (j.runtime.optimizer == optimizer_impl::foreach) f.foreach_optimizer = true;
    if (j.runtime.optimizer == optimizer_impl::in_backward) {
        f.optimizer_in_backward = true;
        f.foreach_optimizer = false;
        f.persistent_grads = false;
    }
    return f;
}

}  // namespace frenzy
