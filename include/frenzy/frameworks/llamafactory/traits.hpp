#pragma once
// LLaMA-Factory (hiyouga/LLaMA-Factory@ff6d4d12): `llamafactory-cli train` runs transformers' Trainer (its
// CustomSeq2SeqTrainer, src/llamafactory/train/sft/trainer.py, subclasses Seq2SeqTrainer) on the model's own
// transformers layers with PEFT, bitsandbytes, and DeepSpeed or FSDP through Trainer's integrations, so what it keeps
// in memory is hf's profile under every layout (frameworks/hf/traits.hpp, reused here). Its own defaults are in how
// train.yaml is read (frameworks/llamafactory/import.hpp): gradient checkpointing on unless disabled, trainable
// parameters upcast to fp32 unless pure_bf16, LoRA on every linear (lora_target all). Offload comes from the
// DeepSpeed json (its rules are DeepSpeed's: optimizer offload needs ZeRO, parameter offload ZeRO-3).
#include <string>

#include "frenzy/frameworks/deepspeed/traits.hpp"
#include "frenzy/frameworks/hf/traits.hpp"
#include "frenzy/train/framework.hpp"

namespace frenzy::frameworks::llamafactory {

inline constexpr std::string_view field = "runtime.framework=\"llamafactory\"";

inline std::string rejects_layout(const parallel_config& p, const training_spec& t) { return hf::rejects_layout_of(field, p, t); }

/// Offload as Trainer's DeepSpeed integration or FSDP's CPUOffload runs it.
inline std::string rejects_offload(const offload_spec& o, sharding sh) { return deepspeed::rejects_offload(o, sh); }

inline constexpr framework_traits traits{
    .name = "llamafactory",
    .summary = "LLaMA-Factory (train.yaml): transformers' Trainer with PEFT, bitsandbytes, DeepSpeed or FSDP; hf's memory profile",
    .table_words = {"llama-factory", "llamafactory"},
    .memory = hf::traits.memory,
    .layout_memory = hf::traits.layout_memory,
    .perf = hf::traits.perf,
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload, .liger_kernels = true,
              .fp8_recipes = hf::traits.rules.fp8_recipes, .fp8_default = hf::traits.rules.fp8_default, .dpo = true},
};

/// This framework as jobs and plans name it: a handle to `traits` (frameworks/registry.hpp lists it).
inline constexpr framework handle{traits};

}  // namespace frenzy::frameworks::llamafactory
