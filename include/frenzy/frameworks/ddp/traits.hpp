#pragma once
// Plain PyTorch: DDP when dp > 1, a single device otherwise (torchtune's single-device recipes); eager layers under
// autocast. Launched by the torchrun launcher of frameworks/fsdp/launcher.hpp (fsdp_settings.json with NO_SHARD).
#include <string>

#include "frenzy/train/framework.hpp"

namespace frenzy::frameworks::ddp {

inline constexpr std::string_view field = "runtime.framework=\"ddp\"";

/// torch.nn.parallel.DistributedDataParallel: data parallel only, nothing sharded.
inline std::string rejects_layout(const parallel_config& p, const training_spec&) {
    if (p.sharding != sharding::none)
        return "parallel.sharding=\"" + std::string(to_string(p.sharding)) + "\" is not supported by " + std::string(field);
    return rejects_model_parallel(field, p);
}

inline std::string rejects_offload(const offload_spec& o, sharding) {
    if (o.optimizer || o.parameters) return "runtime.offload.optimizer/parameters are not supported by " + std::string(field);
    return {};
}

inline constexpr framework_traits traits{
    .name = "ddp",
    .summary = "plain PyTorch DDP (or one device, torchtune style): data parallel only",
    .table_words = {"ddp"},
    .table_flags = {.unnamed_rows = true},
    .memory = {.master = master_weights::in_params, .grad_bytes_bf16 = 4, .grad_bytes_fp16 = 4, .dropout = false,
               .loss = loss_style::upcast_log_softmax, .selective = selective_kind::every_other_mm,
               .attention_score_buffer = false, .grad_bucket_copies = 1, .fused_elementwise = false,
               .eager_final_norm = true, .rope_fp32_copies = true, .persistent_grads = false, .foreach_optimizer = true,
               .dtensor_tensor_parallel = true, .eager_logit_softcap = true, .fp8 = fp8_style::torchao},
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload,
              .fp8_recipes = torchao_fp8_recipes, .fp8_default = fp8_recipe::rowwise},
};

/// This framework as jobs and plans name it: a handle to `traits` (frameworks/registry.hpp lists it).
inline constexpr framework handle{traits};

}  // namespace frenzy::frameworks::ddp
