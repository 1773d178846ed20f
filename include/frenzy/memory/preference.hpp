#pragma once
// Preference fine-tuning's forward (training.finetune.objective "dpo"): the job whose activations DPO holds.
#include "frenzy/train/job_spec.hpp"

namespace frenzy {

/// The job whose forward DPO runs: DPOTrainer's collator stacks each pair's chosen and rejected sequences into one
/// batch (huggingface/trl@f2cd5771 trl/trainer/dpo_trainer.py DataCollatorForPreference.torch_call: torch.cat of the
/// padded chosen and rejected ids), so b pairs are one forward of 2b sequences, activations and logits alike; the
/// global batch doubles with it (the same accumulation steps). The reference model's weights and logits are counted
/// by memory/methods.hpp.
inline job_spec dpo_pair_job(const job_spec& j) {
    auto d = j;
    d.training.micro_batch *= 2;
    d.training.global_batch *= 2;
    return d;
}

}  // namespace frenzy
