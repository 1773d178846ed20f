#pragma once
// Megatron-DeepSpeed: Megatron's layers under DeepSpeed ZeRO (microsoft/DeepSpeed@38327e07), gradients in the
// parameters' dtype. Its launcher (ds_config.json) is frameworks/deepspeed/launcher.hpp.
#include <string>

#include "frenzy/train/framework.hpp"

namespace frenzy::frameworks::deepspeed {

inline constexpr std::string_view field = "runtime.framework=\"deepspeed\"";

/// DeepSpeed's pipeline engine runs ZeRO stage 0 or 1 only.
inline std::string rejects_layout(const parallel_config& p, const training_spec&) {
    if (p.pp > 1 && (p.sharding == sharding::gradients || p.sharding == sharding::full))
        return "parallel.sharding=\"" + std::string(to_string(p.sharding)) + "\" with " + field_text("parallel.pp", p.pp) +
               " is not supported by " + std::string(field) + " (pipeline parallelism needs ZeRO stage 0 or 1)";
    return {};
}

/// deepspeed/runtime/zero/config.py: offload_optimizer needs ZeRO stage >= 1, offload_param stage 3.
inline std::string rejects_offload(const offload_spec& o, sharding sh) {
    const auto shs = [&] { return "parallel.sharding=\"" + std::string(to_string(sh)) + "\""; };
    if (o.optimizer && sh == sharding::none)
        return "runtime.offload.optimizer=true with " + std::string(field) + " needs ZeRO: " + shs() +
               " must be optimizer, gradients or full";
    if (o.parameters && sh != sharding::full)
        return "runtime.offload.parameters=true with " + std::string(field) + " needs ZeRO stage 3: " + shs() + " must be full";
    return {};
}

inline constexpr framework_traits traits{
    .name = "deepspeed",
    .summary = "Megatron-DeepSpeed: ZeRO stages 1-3 (pp with ZeRO 0/1), offload of optimizer and parameters",
    .table_words = {"deepspeed"},
    .memory = {.vocab_divisible_by = 128, .grad_bytes_bf16 = 2, .grad_bytes_fp16 = 2, .bucket_elements = 5e8,
               .eager_logit_softcap = true},
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload},
    .launch_programs = {"deepspeed"},  // microsoft/DeepSpeed bin/deepspeed@f2d7c558: deepspeed.launcher.runner.main
};

/// This framework as jobs and plans name it: a handle to `traits` (frameworks/registry.hpp lists it).
inline constexpr framework handle{traits};

}  // namespace frenzy::frameworks::deepspeed
