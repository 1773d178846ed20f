#pragma once
// Unsloth (unslothai/unsloth@015bdef0 with unslothai/unsloth-zoo@ce232d6c): FastLanguageModel patches the model's
// transformers layers and trains them under TRL's SFTTrainer (transformers' Trainer) with PEFT LoRA, bitsandbytes
// NF4 for QLoRA (load_in_4bit) and torchrun's DDP for several GPUs. What differs from hf's profile
// (frameworks/hf/traits.hpp, reused here for the layers) is two mechanisms:
//  - use_gradient_checkpointing="unsloth" (get_peft_model's default): each decoder layer's checkpointed input goes
//    to pinned host memory in forward and back in backward (unsloth_zoo/gradient_checkpointing.py
//    UnslothCheckpointFunction), but the last layer's (LAST_GC_INDEX) and those of 2 MiB or less (MINIMUM_SIZE),
//    through two GPU staging buffers (GPU_BUFFERS, GPU_BUFFERS_B, resized to the largest input; B grows only once
//    more than 512 MiB is free, which is counted here as if it always did): framework_profile::offloaded_checkpoints,
//    with parallel.recompute "full";
//  - the chunked fused cross-entropy (unsloth/models/llama.py -> unsloth_zoo/fused_losses/cross_entropy_loss.py
//    unsloth_fused_ce_loss): loss_style::unsloth_fused.
// Not modelled apart: Unsloth's own LoRA kernels (unsloth/kernels/fast_lora.py) save a different set of tensors
// than PEFT's layers; with checkpointing on (its default) that set lives only while one layer is recomputed, and
// hf's per-layer terms stand for it. use_gradient_checkpointing=True (torch's checkpoint, nothing offloaded) is
// runtime.framework "hf"'s accounting of the layers.
#include <string>

#include "frenzy/frameworks/hf/traits.hpp"
#include "frenzy/train/framework.hpp"

namespace frenzy::frameworks::unsloth {

inline constexpr std::string_view field = "runtime.framework=\"unsloth\"";

/// Data parallel only, unsharded (torchrun + DDP: unsloth/models/loader.py loads the model on each rank's device),
/// and Trainer's rules otherwise.
inline std::string rejects_layout(const parallel_config& p, const training_spec& t) {
    if (t.precision == precision::fp8_mixed)
        return "training.precision=\"fp8-mixed\" is not supported by " + std::string(field) +
               " (its training path has no fp8 linears: \"bf16-mixed\" or \"bf16\")";
    if (p.sharding != sharding::none)
        return "parallel.sharding=\"" + std::string(to_string(p.sharding)) + "\" is not supported by " + std::string(field) +
               " (each GPU holds the whole model under DDP: parallel.sharding \"none\")";
    return hf::rejects_layout_of(field, p, t);
}

/// Nothing is offloaded but the checkpointed layer inputs, which parallel.recompute "full" offloads by itself.
inline std::string rejects_offload(const offload_spec& o, sharding) {
    if (o.any())
        return "runtime.offload is not supported by " + std::string(field) +
               " (its gradient checkpointing offloads the layer inputs by itself: parallel.recompute \"full\")";
    return {};
}

/// hf's single-process / DDP profile with Unsloth's offloaded checkpoints and fused loss.
inline constexpr framework_profile profile() {
    auto f = hf::traits.memory;
    f.loss = loss_style::unsloth_fused;
    f.offloaded_checkpoints = true;
    return f;
}

inline constexpr framework_traits traits{
    .name = "unsloth",
    .summary = "Unsloth (FastLanguageModel + TRL): hf's layers with offloaded gradient checkpointing and a chunked fused loss; DDP only",
    .table_words = {"unsloth"},
    .memory = profile(),
    .perf = hf::traits.perf,
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload, .liger_kernels = false,
              .fp8_recipes = 0, .dpo = true},
};

/// This framework as jobs and plans name it: a handle to `traits` (frameworks/registry.hpp lists it).
inline constexpr framework handle{traits};

}  // namespace frenzy::frameworks::unsloth
