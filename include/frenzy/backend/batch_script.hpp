#pragma once
// The batch script a Slurm job of `frenzy serve` runs, written by the launch generator `frenzy launch` uses
// (backend/slurm_script.hpp batch_script_text, launch/launch.hpp launcher_payload_for): the same torchrun start and
// the same framework configuration, with the placement passed as sbatch options instead of #SBATCH lines (slurm.hpp)
// and the plan in the environment.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frenzy/launch/launch.hpp"
#include "frenzy/plan/plan.hpp"

namespace frenzy {

struct batch_request {
    int job = 0;                       ///< Frenzy job id
    std::string name;                  ///< the job spec's name
    plan p;                            ///< the chosen plan; one with stage groups runs as a Slurm heterogeneous
                                       ///< job with one component per group
    std::vector<std::string> nodes;    ///< Slurm node names it is pinned to (every component's, in order)
    std::string run_command;           ///< replaces srun + torchrun ("" = torchrun of the framework's script)
    std::optional<job_spec> spec;      ///< the job as submitted: its framework's configuration is written when given
};

namespace detail {

/// What a batch script says of the plan it runs: the header line, the FRENZY_* exports and its Slurm components.
struct batch_plan_facts {
    std::string where;                       ///< "8 x a100-80g on 1 node(s)", "4 x t4 + 8 x v100-32g on 2 node(s)"
    std::string gpu;                         ///< "a100-80g", "t4+v100-32g"
    const parallel_config* par = nullptr;
    std::int64_t micro_batch = 1;
    std::vector<slurm_component> components;  ///< one per GPU type, in pipeline order
};

inline batch_plan_facts plan_facts(const batch_request& r) {
    batch_plan_facts f;
    f.components = slurm_components(r.p);
    f.par = &r.p.parallel;
    f.micro_batch = r.p.micro_batch;
    if (!r.p.mixed()) {
        f.where = std::to_string(r.p.gpus) + " x " + r.p.gpu + " on " + std::to_string(r.p.nodes) + " node(s)";
        f.gpu = r.p.gpu;
        return f;
    }
    int nodes = 0;
    for (const auto& g : r.p.groups) {
        f.where += (f.where.empty() ? "" : " + ") + std::to_string(g.gpus) + " x " + g.gpu;
        f.gpu += (f.gpu.empty() ? "" : "+") + g.gpu;
        nodes += g.nodes;
    }
    f.where += " on " + std::to_string(nodes) + " node(s)";
    return f;
}

/// The framework's configuration of the job the plan runs, into `b` (job_for_plan, as `frenzy
/// launch` writes it); a job the launcher cannot express gets the generic start, with the reason noted.
inline void add_framework_payload(batch_script_spec& b, const batch_request& r) {
    launch_options o;
    o.launcher = launcher_for(r.p.framework);
    if (o.launcher->needs_run_command) o.run_command = "\"${FRENZY_TRAIN_SCRIPT:-train.py}\"";  // the user's script, as the generic start
    try {
        const auto j = job_for_plan(*r.spec, r.p);
        auto payload = launcher_payload_for(j, o);
        for (auto& c : plan_comments(j, r.p, std::nullopt))
            b.comments.push_back(std::move(c));
        b.inline_files = std::move(payload.files);
        for (auto& e : payload.exports) b.exports.push_back(std::move(e));
        b.preamble = std::move(payload.preamble);
        b.torchrun_target = std::move(payload.torchrun_target);
        b.runner = std::move(payload.runner);  // torchtune: `tune run` takes torchrun's options
        if (!payload.command.empty() && b.command.empty()) b.command = std::move(payload.command);
    } catch (const config_error& e) {
        b.comments.push_back("no " + std::string(to_string(o.launcher)) + " configuration written: " + e.what());
    }
}

}  // namespace detail

/// The script body (sbatch takes it on stdin). With the job spec, the plan's framework configuration (Megatron-LM
/// arguments, ds_config.json, FSDP settings) as `frenzy launch` writes it, its files written by the script into a
/// directory of the job's own; a job the launcher cannot express gets the generic start, with the reason noted. A
/// mixed plan starts torchrun on every node of every component, ranks in pipeline order (het_torchrun_lines).
inline std::string batch_script(const batch_request& r) {
    const auto f = detail::plan_facts(r);
    const auto& par = *f.par;
    batch_script_spec b;
    std::string nodes;
    for (const auto& n : r.nodes) nodes += (nodes.empty() ? "" : ",") + n;
    b.comments = {"frenzy job " + std::to_string(r.job) + " (" + r.name + "): " + f.where + (nodes.empty() ? "" : " " + nodes) +
                  ", tp=" + std::to_string(par.tp) + " pp=" + std::to_string(par.pp) + " dp=" + std::to_string(par.dp) +
                  " micro_batch=" + std::to_string(f.micro_batch)};
    b.exports = {"FRENZY_JOB_ID=" + std::to_string(r.job), "FRENZY_JOB_NAME=" + sh_quote(r.name),
                 "FRENZY_GPU=" + sh_quote(f.gpu),
                 "FRENZY_TP=" + std::to_string(par.tp) + " FRENZY_PP=" + std::to_string(par.pp) + " FRENZY_DP=" +
                     std::to_string(par.dp) + " FRENZY_MICRO_BATCH=" + std::to_string(f.micro_batch)};
    b.launch_dir = "${LAUNCH_DIR:-${TMPDIR:-/tmp}/frenzy-job-$SLURM_JOB_ID}";
    b.launch_dir_note = "this job's configuration files";
    b.nodes = f.components.front().nodes;
    b.gpus_per_node = f.components.front().gpus_per_node;
    if (f.components.size() > 1) b.components = f.components;
    b.command = r.run_command;
    if (r.spec) detail::add_framework_payload(b, r);
    if (b.torchrun_target.empty()) b.torchrun_target = "\"${FRENZY_TRAIN_SCRIPT:-train.py}\"";
    return batch_script_text(b);
}

}  // namespace frenzy
