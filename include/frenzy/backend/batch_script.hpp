#pragma once
// The batch script a Slurm job of `frenzy serve` runs, written by the launch generator `frenzy launch` uses
// (launch/launch.hpp batch_script_text, launcher_payload_for): the same torchrun start and the same framework
// configuration, with the placement passed as sbatch options instead of #SBATCH lines (slurm.hpp) and the plan in
// the environment.
#include <optional>
#include <string>
#include <vector>

#include "frenzy/launch/launch.hpp"
#include "frenzy/plan/plan.hpp"

namespace frenzy {

struct batch_request {
    int job = 0;                       ///< Frenzy job id
    std::string name;                  ///< the job spec's name
    plan p;                            ///< the chosen plan
    std::vector<std::string> nodes;    ///< Slurm node names it is pinned to
    std::string run_command;           ///< replaces srun + torchrun ("" = torchrun of the framework's script)
    std::optional<job_spec> spec;      ///< the job as submitted: its framework's configuration is written when given
};

/// The script body (sbatch takes it on stdin). With the job spec, the plan's framework configuration (Megatron-LM
/// arguments, ds_config.json, FSDP settings) as `frenzy launch` writes it, its files written by the script into a
/// directory of the job's own; a job the launcher cannot express gets the generic start, with the reason noted.
inline std::string batch_script(const batch_request& r) {
    const auto& par = r.p.parallel;
    batch_script_spec b;
    std::string nodes;
    for (const auto& n : r.nodes) nodes += (nodes.empty() ? "" : ",") + n;
    b.comments = {"frenzy job " + std::to_string(r.job) + " (" + r.name + "): " + std::to_string(r.p.gpus) + " x " + r.p.gpu +
                  " on " + std::to_string(r.p.nodes) + " node(s)" + (nodes.empty() ? "" : " " + nodes) + ", tp=" +
                  std::to_string(par.tp) + " pp=" + std::to_string(par.pp) + " dp=" + std::to_string(par.dp) +
                  " micro_batch=" + std::to_string(r.p.micro_batch)};
    b.exports = {"FRENZY_JOB_ID=" + std::to_string(r.job), "FRENZY_JOB_NAME=" + sh_quote(r.name),
                 "FRENZY_GPU=" + sh_quote(r.p.gpu),
                 "FRENZY_TP=" + std::to_string(par.tp) + " FRENZY_PP=" + std::to_string(par.pp) + " FRENZY_DP=" +
                     std::to_string(par.dp) + " FRENZY_MICRO_BATCH=" + std::to_string(r.p.micro_batch)};
    b.launch_dir = "${LAUNCH_DIR:-${TMPDIR:-/tmp}/frenzy-job-$SLURM_JOB_ID}";
    b.launch_dir_note = "this job's configuration files";
    b.nodes = std::max(r.p.nodes, 1);
    b.gpus_per_node = r.p.nodes > 0 ? r.p.gpus / r.p.nodes : r.p.gpus;
    b.command = r.run_command;
    if (r.spec) {
        launch_options o;
        o.launcher = launcher_for(r.p.framework);
        try {
            const auto j = job_for_plan(*r.spec, r.p);
            auto payload = launcher_payload_for(j, o);
            for (auto& c : plan_comments(j, r.p, std::nullopt)) b.comments.push_back(std::move(c));
            b.inline_files = std::move(payload.files);
            for (auto& e : payload.exports) b.exports.push_back(std::move(e));
            b.preamble = std::move(payload.preamble);
            b.torchrun_target = std::move(payload.torchrun_target);
        } catch (const config_error& e) {
            b.comments.push_back("no " + std::string(to_string(o.launcher)) + " configuration written: " + e.what());
        }
    }
    if (b.torchrun_target.empty()) b.torchrun_target = "\"${FRENZY_TRAIN_SCRIPT:-train.py}\"";
    return batch_script_text(b);
}

}  // namespace frenzy
