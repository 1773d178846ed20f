#pragma once
// The batch script a Slurm job of Frenzy runs. One function, batch_script(), so that the launch module
// (include/frenzy/launch/, issue 6) can take its place without touching the backend.
#include <string>
#include <vector>

#include "frenzy/plan/plan.hpp"

namespace frenzy {

struct batch_request {
    int job = 0;                       ///< Frenzy job id
    std::string name;                  ///< the job spec's name
    plan p;                            ///< the chosen plan
    std::vector<std::string> nodes;    ///< Slurm node names it is pinned to
    std::string run_command;           ///< replaces the training command ("" = torchrun placeholder)
};

namespace detail {
/// Single-quotes a value for /bin/sh.
inline std::string sh_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) {
        if (c == '\'') q += "'\\''";
        else q += c;
    }
    return q + "'";
}
}  // namespace detail

/// The script body (sbatch takes it on stdin; the placement travels as sbatch options, not #SBATCH lines).
inline std::string batch_script(const batch_request& r) {
    const auto& par = r.p.parallel;
    std::string s = "#!/bin/sh\n";
    s += "# frenzy job " + std::to_string(r.job) + " (" + r.name + "): " + std::to_string(r.p.gpus) + " x " + r.p.gpu + " on " +
         std::to_string(r.p.nodes) + " node(s), tp=" + std::to_string(par.tp) + " pp=" + std::to_string(par.pp) +
         " dp=" + std::to_string(par.dp) + " micro_batch=" + std::to_string(r.p.micro_batch) + "\n";
    s += "export FRENZY_JOB_ID=" + std::to_string(r.job) + "\n";
    s += "export FRENZY_JOB_NAME=" + detail::sh_quote(r.name) + "\n";
    s += "export FRENZY_GPU=" + detail::sh_quote(r.p.gpu) + "\n";
    s += "export FRENZY_TP=" + std::to_string(par.tp) + " FRENZY_PP=" + std::to_string(par.pp) +
         " FRENZY_DP=" + std::to_string(par.dp) + " FRENZY_MICRO_BATCH=" + std::to_string(r.p.micro_batch) + "\n";
    if (!r.run_command.empty()) {
        // The user's command, run by the shell of the batch script (it is the script's content, not an argv).
        s += r.run_command + "\n";
    } else {
        const int per_node = r.p.nodes > 0 ? r.p.gpus / r.p.nodes : r.p.gpus;
        s += "srun --ntasks-per-node=1 torchrun --nnodes=\"$SLURM_NNODES\" --nproc-per-node=" + std::to_string(per_node) +
             " --rdzv-backend=c10d --rdzv-endpoint=\"$(hostname):29500\" \"${FRENZY_TRAIN_SCRIPT:-train.py}\"\n";
    }
    return s;
}

}  // namespace frenzy
