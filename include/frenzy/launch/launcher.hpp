#pragma once
// A launcher: how jobs of one or more frameworks are started (the files `frenzy launch` writes) and read back
// (`--from KIND:FILE`). launcher_traits is its descriptor, kept with its framework in
// include/frenzy/frameworks/<name>/launcher.hpp; launcher is the handle launch_options holds; frameworks/launchers.hpp
// lists them and finds one by name.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/model/transformer.hpp"
#include "frenzy/plan/plan.hpp"
// GCC 12 reports a false -Wrestrict in std::string operator+ inlined into planner.hpp's infeasible_reason when
// launch() instantiates the planner at -O2 (GCC bug 105329); silenced for that header only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include "frenzy/plan/planner.hpp"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include "frenzy/train/job.hpp"

namespace frenzy {

struct launch_options;
struct launch_file;

/// What a framework's own node start (launcher_payload::node_lines) is given: the single-type allocation, the
/// rendezvous port, its configuration file (launcher_payload::node_config) and what torchrun would start.
struct node_start {
    int nodes = 1, gpus_per_node = 1, rdzv_port = 29500;
    std::string config;  ///< a file of the payload's, in $LAUNCH_DIR
    std::string target;  ///< launcher_payload::torchrun_target
};

/// What a launcher adds to the batch script: its configuration files, shell before the command, and what torchrun
/// starts.
struct launcher_payload {
    std::vector<launch_file> files;  ///< besides launch.sbatch
    std::string preamble;
    std::string torchrun_target;
    std::vector<std::string> exports;  ///< environment the framework needs, "NAME=value" (written `export NAME=value`)
    /// The program srun starts on every node with torchrun's options and torchrun_target: torchrun, or a wrapper
    /// that takes torchrun's options (torchtune's `tune run`, torchtune/_cli/run.py).
    std::string runner = "torchrun";
    /// Set: the lines that start the job on every node of a single-type allocation instead of srun + runner, the
    /// framework's own launcher (hf: srun + `accelerate launch --config_file $LAUNCH_DIR/<node_config>`,
    /// frameworks/hf/launcher.hpp); torchrun_target is then what it starts.
    std::string (*node_lines)(const node_start& n) = nullptr;
    std::string node_config;  ///< the file of `files` node_lines reads

    /// Replaces srun + runner when set: a single process started by the script itself (torchtune's single-device
    /// recipes, `tune run RECIPE --config FILE` without torchrun options).
    std::string command;
};

/// The peak learning rate of GPT-3's table for the nearest smaller model (Brown et al. 2020, "Language Models are
/// Few-Shot Learners", Table 2.1: 125M 6.0e-4 ... 175B 0.6e-4); the minimum is a tenth of it, as GPT-3 decays.
/// The launchers' default LR for a run from scratch.
inline double default_learning_rate(double parameters) {
    static constexpr std::pair<double, double> table[] = {{125e6, 6.0e-4}, {350e6, 3.0e-4}, {760e6, 2.5e-4}, {1.3e9, 2.0e-4},
                                                          {2.7e9, 1.6e-4}, {6.7e9, 1.2e-4}, {13e9, 1.0e-4}, {175e9, 0.6e-4}};
    double lr = table[0].second;
    for (const auto& [n, r] : table)
        if (parameters >= n) lr = r;
    return lr;
}

/// A set of training.finetune.method values as bits (launcher_traits::methods).
constexpr unsigned method_bits(std::initializer_list<finetune_method> ms) {
    unsigned b = 0;
    for (const auto m : ms) b |= 1u << static_cast<unsigned>(m);
    return b;
}

/// Everything `launch` and `import` know of one launcher.
struct launcher_traits {
    std::string_view name;     ///< launch --framework, --from KIND, frenzy.launch(framework=...)
    std::string_view summary;  ///< one line for --help and docs
    /// The frameworks whose plans it runs (up to three; the rest null).
    std::array<const framework_traits*, 3> runs{};
    /// It is the launcher of its frameworks when none is chosen (torchtitan is a choice, never inferred).
    bool inferred = true;
    /// It has settings for full recompute of groups of layers or of the first layers of a chunk
    /// (parallel.recompute_method / recompute_layers); otherwise it checkpoints every layer.
    bool recompute_groups = false;
    /// The files, preamble and torchrun target of job `j` (validated, runnable by this launcher).
    launcher_payload (*payload)(const job_spec& j, const launch_options& o) = nullptr;
    /// Its configuration describes the model (Megatron-LM's arguments); otherwise import needs the model beside it.
    bool describes_model = false;
    /// An example of the file --from KIND:FILE reads ("train.sh"), for help and messages.
    std::string_view config_example;
    /// Reads a configuration file written for it back into a job (frameworks/<name>/import.hpp hold the readers).
    launcher_import (*import_file)(const std::string& path, const import_options& o) = nullptr;
    /// The training.finetune.method values it writes (method_bits): training from scratch only by default; a
    /// launcher that loads pretrained weights names the fine-tunes it writes, and launch refuses the others.
    unsigned methods = method_bits({finetune_method::none});
    /// Its files configure the user's own training script (ds_config.json, fsdp_settings.json), which
    /// launch_options::run_command must name: launch refuses without one rather than start a script that does not exist.
    bool needs_run_command = false;
    /// Its configuration states per-device batches and no world size (a Trainer-based YAML, torchtune.yaml,
    /// frenzy_hf_train.py): `--gpus` of estimate, plan and launch gives the import its GPU count as the world size
    /// (import_options::world_size, world_size_from_gpus), so the global batch and budget are those GPUs' (issue 57).
    bool per_device_batches = false;
};

/// Which launcher writes a job's files: a handle to its traits, compared by identity and written by name. Each
/// framework's folder declares its own (frameworks::megatron::launcher_handle, ...; frameworks/launchers.hpp lists them).
class launcher {
public:
    constexpr launcher() noexcept;  ///< by_default
    constexpr explicit launcher(const launcher_traits& t) noexcept : t_(&t) {}
    constexpr const launcher_traits& traits() const noexcept { return *t_; }
    constexpr const launcher_traits* operator->() const noexcept { return t_; }
    constexpr std::string_view name() const noexcept { return t_->name; }
    friend constexpr bool operator==(launcher a, launcher b) noexcept { return a.t_ == b.t_; }

    /// The launcher of launch_options that name none (one line of frameworks/launchers.hpp).
    static const launcher by_default;

private:
    const launcher_traits* t_;
};

inline std::string_view to_string(launcher l) { return l.name(); }

struct launch_options {
    frenzy::launcher launcher = launcher::by_default;
    std::size_t plan_index = 0;                       ///< which plan of the ranking (0 = the best)
    /// Take a mixed plan (plan_options::mixed; plan_index counts those): the files are a Slurm heterogeneous job,
    /// one component per GPU type. Megatron-LM only (its --pipeline-model-parallel-layout).
    bool mixed = false;
    std::map<std::string, std::string> gres_names;    ///< catalog name -> Slurm GRES type (default: the catalog name)
    std::string run_command;                          ///< script (and its arguments) torchrun starts; "" = the framework's
    double time_margin = 0.2;                         ///< --time = predicted run time x (1 + margin), at least 10 minutes
    double default_time_s = 24 * 3600;                ///< --time when the job has no token budget
    int rdzv_port = 29500;
    /// The configuration the launcher's generated one starts from (torchtitan: a recipe, MODULE:FUNCTION); "" = the
    /// launcher's own for the model.
    std::string base_config;
    // Slurm placement and resumption (launch.sbatch's #SBATCH lines; "" or 0 = not written: the cluster's default)
    std::string partition;                            ///< --partition (one name, or a comma-separated list)
    std::string account;                              ///< --account
    std::string qos;                                  ///< --qos
    int cpus_per_task = 0;                            ///< --cpus-per-task (the one task per node starts every rank)
    std::string mem;                                  ///< --mem per node: MB, or with a unit K|M|G|T ("0" = all of it)
    /// > 0: #SBATCH --requeue --signal=B:USR1@this; the script requeues itself on that signal, so a run longer than
    /// its time limit resumes from its last checkpoint when it starts again. 0 = no requeue.
    double requeue_signal_s = 300;
    /// The longest --time the partition allows (sinfo's MaxTime; 0 = not known): a longer time limit is capped at it
    /// with a note in the script (the run then resumes over several requeued jobs), never left for sbatch to refuse.
    double max_time_s = 0;
    /// Seconds of training between checkpoints: each launcher's save interval is this over the plan's predicted step
    /// time (save_interval_steps), and at least ten checkpoint writes long (checkpoint_write_s).
    double checkpoint_every_s = 1800;
    /// The plan's predicted step time in seconds (launch_files sets it from the plan; 0 = unknown: 1000 steps).
    double step_time_s = 0;
    plan_options planning{};                          ///< frameworks are set from the launcher
};

struct launch_file {
    std::string name;     ///< file name inside the output directory
    std::string content;
    bool operator==(const launch_file&) const = default;
};

struct launch_result {
    frenzy::plan plan;          ///< the plan the files run (with stage groups: launch_options::mixed)
    job_spec job;               ///< the job with the plan's layout (what the files describe)
    std::vector<launch_file> files;
    std::vector<std::string> written;  ///< paths write_launch_files wrote them to (empty until written)
};

/// A letter or digit (ASCII), or one of `extra`: the characters a Slurm word or a Python identifier may hold.
inline bool word_char(char c, std::string_view extra) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || extra.find(c) != std::string_view::npos;
}

/// A node's sustained checkpoint write to a parallel file system, GB/s: an assumption stated in docs/launch.md, not a
/// measurement.
inline constexpr double checkpoint_write_GBps = 1.0;

/// Seconds one checkpoint of `j` takes to write: its trainable parameters with their fp32 master copy and two Adam
/// moments (16 bytes each; adapters are taken as 1% of the model, the frozen base is not saved), written by its
/// nodes (its GPUs in nodes of 8) at checkpoint_write_GBps each.
inline double checkpoint_write_s(const job_spec& j) {
    const double all = total_parameters(j.model, j.training.seq_len);
    const double params = j.training.finetune.adapters() ? 0.01 * all : all;
    const double nodes = std::ceil(static_cast<double>(j.parallel.gpus()) / 8);
    return 16.0 * params / (checkpoint_write_GBps * 1e9 * std::max(nodes, 1.0));
}

/// Optimizer steps between checkpoints: launch_options::checkpoint_every_s of training at the plan's predicted step
/// time, and at least ten checkpoint writes' worth (saving costs at most a tenth of the run), whole steps, at least
/// one; 1000 where the step time is unknown.
inline std::int64_t save_interval_steps(const job_spec& j, const launch_options& o) {
    if (!(o.step_time_s > 0) || !(o.checkpoint_every_s > 0)) return 1000;
    const double every = std::max(o.checkpoint_every_s, 10 * checkpoint_write_s(j));
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(every / o.step_time_s)));
}

/// The comment after a settings line of save_interval_steps: what the interval is in time ("" when not known).
inline std::string save_interval_note(const job_spec& j, const launch_options& o) {
    if (!(o.step_time_s > 0) || !(o.checkpoint_every_s > 0)) return "";
    const double minutes = static_cast<double>(save_interval_steps(j, o)) * o.step_time_s / 60;
    return ": about every " + std::to_string(std::max(1LL, std::llround(minutes))) + " min at the predicted step time";
}

/// Optimizer steps of the job's token budget (0 without one).
inline std::int64_t train_steps(const job_spec& j) {
    const double per = j.tokens_per_step();
    return j.training.total_tokens > 0 ? static_cast<std::int64_t>(std::ceil(j.training.total_tokens / per)) : 0;
}

}  // namespace frenzy
