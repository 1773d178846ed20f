#pragma once
// axolotl (axolotl-ai-cloud/axolotl@067b021c): a configuration front end over transformers' Trainer (AxolotlTrainer
// subclasses it: src/axolotl/core/trainers/base.py), PEFT, bitsandbytes, and DeepSpeed or FSDP through Trainer's
// own integrations. The layers it trains are the model's own transformers layers, so what it keeps in memory is
// hf's profile under every layout (frameworks/hf/traits.hpp: one place for that profile, reused here). What differs
// is how it is configured (config.yml, frameworks/axolotl/import.hpp) and its defaults: gradient checkpointing
// with use_reentrant=True when the file sets no kwargs (src/axolotl/utils/config/__init__.py), the base model
// loaded in bf16 when bf16 is on (resolve_dtype: cfg.torch_dtype), bitsandbytes NF4 with double quantization for
// QLoRA (src/axolotl/loaders/model.py). Offload comes from the DeepSpeed json or FSDP's offload_params, which
// Trainer's integrations run (its rules are DeepSpeed's: optimizer offload needs ZeRO, parameter offload ZeRO-3).
#include <string>

#include "frenzy/frameworks/deepspeed/traits.hpp"
#include "frenzy/frameworks/hf/traits.hpp"
#include "frenzy/train/framework.hpp"

namespace frenzy::frameworks::axolotl {

inline constexpr std::string_view field = "runtime.framework=\"axolotl\"";

inline std::string rejects_layout(const parallel_config& p, const training_spec& t) { return hf::rejects_layout_of(field, p, t); }

/// Offload as Trainer's DeepSpeed integration or FSDP's CPUOffload runs it.
inline std::string rejects_offload(const offload_spec& o, sharding sh) { return deepspeed::rejects_offload(o, sh); }

inline constexpr framework_traits traits{
    .name = "axolotl",
    .summary = "axolotl (config.yml): transformers' Trainer with PEFT, bitsandbytes, DeepSpeed or FSDP; hf's memory profile",
    .table_words = {"axolotl"},
    .memory = hf::traits.memory,
    .layout_memory = hf::traits.layout_memory,
    .perf = hf::traits.perf,
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload, .liger_kernels = true,
              .fp8_recipes = hf::traits.rules.fp8_recipes, .fp8_default = hf::traits.rules.fp8_default, .dpo = true},
};

/// This framework as jobs and plans name it: a handle to `traits` (frameworks/registry.hpp lists it).
inline constexpr framework handle{traits};

}  // namespace frenzy::frameworks::axolotl
