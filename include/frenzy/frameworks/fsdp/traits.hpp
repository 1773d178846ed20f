#pragma once
// PyTorch FSDP (torchtitan's FSDP2; llm-foundry's FSDP1 with MPT's layers is frameworks/llm_foundry): fp32 sharded parameters, eager PyTorch layers, no
// dropout, DTensor tensor parallelism. The layers are torchtitan's as of pytorch/torchtitan@b5bcd76c on PyTorch >=
// 2.9: torch.nn.RMSNorm (one fused kernel), SDPA with enable_gqa (no repeated k/v), rotary embedding that keeps no
// fp32 copy of q or k; measured on an H200 (data/memory/h200_measured.csv, scripts/measure/fsdp2_grid.py). Older
// torchtitan (own eager RMSNorm, repeat_kv) is runtime.norm_fp32 / runtime.kv_repeat. Its launchers are frameworks/fsdp/launcher.hpp (a torchrun script with
// fsdp_settings.json) and frameworks/torchtitan/launcher.hpp.
#include <array>
#include <string>

#include "frenzy/train/framework.hpp"

namespace frenzy::frameworks::fsdp {

inline constexpr std::string_view field = "runtime.framework=\"fsdp\"";

/// torch.distributed.fsdp: NO_SHARD, SHARD_GRAD_OP, FULL_SHARD (no ZeRO-1), no virtual pipeline stages.
inline std::string rejects_layout(const parallel_config& p, const training_spec&) {
    if (p.sharding == sharding::optimizer)
        return "parallel.sharding=\"optimizer\" is not supported by " + std::string(field) + " (use none, gradients or full)";
    if (p.vpp > 1) return field_text("parallel.vpp", p.vpp) + " is not supported by " + std::string(field);
    return {};
}

/// CPUOffload(offload_params=True) moves parameters, gradients and the optimizer step together.
inline std::string rejects_offload(const offload_spec& o, sharding) {
    if (o.optimizer && !o.parameters)
        return "runtime.offload.optimizer=true without runtime.offload.parameters=true is not supported by " +
               std::string(field) + " (CPUOffload moves parameters, gradients and optimizer together)";
    return {};
}

/// torchtitan releases whose layers differ from the default's (pytorch/torchtitan tags): up to v0.2.1 the Llama
/// attention repeats k and v to every query head before SDPA (torchtitan/models/llama3/model/model.py repeat_kv,
/// at v0.1.0 2025-06-17, v0.2.0 2025-10-17, v0.2.1 2025-12-26); from v0.2.2 (2026-02-20) SDPA takes them as they
/// are (enable_gqa = n_heads > n_kv_heads). Without checkpointing that moves Llama 3.1 70B's peak by 7% (8k tokens).
/// The job_config defaults that move memory (activation_checkpoint mode "selective" with selective_ac_option "2",
/// compile off, fsdp_reshard_after_forward "default", bf16 parameters / fp32 reduce) are the same at every tag.
/// The layers of the tags before 0.2.2: k and v repeated to every query head (repeat_kv).
inline constexpr framework_profile repeated_kv(framework_profile f) {
    f.gqa_kv_repeat = true;
    return f;
}
inline constexpr std::string_view repeated_kv_summary = "k and v repeated to every query head (repeat_kv)";

inline constexpr std::array<framework_version, 4> versions{{
    {"0.1.0", repeated_kv_summary, repeated_kv},
    {"0.2.0", repeated_kv_summary, repeated_kv},
    {"0.2.1", repeated_kv_summary, repeated_kv},
    {"0.2.2", "the same layers as the default", nullptr},
}};

inline constexpr framework_traits traits{
    .name = "fsdp",
    .summary = "PyTorch FSDP (torchtitan style): sharding none/gradients/full, DTensor tp, pp, cp",
    .table_words = {"fsdp", "torchtitan"},
    .memory = {.master = master_weights::in_params, .grad_bytes_bf16 = 4, .grad_bytes_fp16 = 4, .dropout = false,
               .loss = loss_style::upcast_log_softmax, .selective = selective_kind::every_other_mm,
               .attention_score_buffer = false, .fused_elementwise = false, .eager_final_norm = true,
               .rope_fp32_copies = false, .rmsnorm_fp32_copy = false, .gqa_kv_repeat = false,
               .persistent_grads = false, .foreach_optimizer = true,
               .dtensor_tensor_parallel = true, .side_stream_reduce_scatter = true, .eager_logit_softcap = true,
               .fp8 = fp8_style::torchao},
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload,
              .fp8_recipes = torchao_fp8_recipes, .fp8_default = fp8_recipe::rowwise},
    .default_version = "main",  // pytorch/torchtitan@b5bcd76c (2026-08-21), the layers described above
    .versions = versions,
};

/// This framework as jobs and plans name it: a handle to `traits` (frameworks/registry.hpp lists it).
inline constexpr framework handle{traits};

}  // namespace frenzy::frameworks::fsdp
