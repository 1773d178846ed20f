#pragma once
// What an importer of a launcher configuration returns: the job, and what it did not use.
#include <string>
#include <vector>

#include "frenzy/train/job.hpp"

namespace frenzy {

/// A job read from a launcher configuration (Megatron-LM arguments, torchtitan recipe, DeepSpeed JSON, FSDP settings).
struct launcher_import {
    job_spec job;
    bool has_parallel = true;            ///< the configuration fixes the layout (dp from the world size)
    std::int64_t world_size = 0;         ///< GPUs the launcher starts (0 = not said)
    std::vector<std::string> ignored;    ///< arguments/keys irrelevant to memory and speed, as written
    std::vector<std::string> unknown;    ///< arguments/keys not understood (or understood but not modelled: "... (not modelled)")
    std::vector<std::string> notes;      ///< shell constructs the script reader could not follow
};

/// What the configuration itself does not say.
struct import_options {
    std::string name;                    ///< job name (launcher configs carry none); empty = the model's
    transformer_spec model;              ///< for torchtitan / DeepSpeed / FSDP, whose configs do not describe the model
    std::int64_t world_size = 0;         ///< GPUs, when the configuration does not start the processes itself
    /// world_size is the GPU count the command plans on (--gpus), not one stated for this file: a configuration
    /// that states its own world size (accelerate_config.yaml's num_processes) keeps it, with a note.
    bool world_size_from_gpus = false;
    parallel_config layout;              ///< tp/pp/cp/ep for DeepSpeed (set by the training script, not ds_config)
    training_spec training;              ///< seq_len, optimizer, total_tokens for DeepSpeed (ds_config has none of them)
    std::vector<std::string> positional; ///< $1, $2, ... of a shell script
};

/// Finishes an import: the job's name (the model's when the options give none), the world size, and the checks
/// every job passes.
inline void finish_import(launcher_import& out, const import_options& opt, std::int64_t world) {
    auto& j = out.job;
    j.name = opt.name.empty() ? j.model.name : opt.name;
    out.world_size = world;
    validate(j.model);
    validate(j.training);
    validate(j);
}

}  // namespace frenzy
