#pragma once
// Plan -> launch files: a self-contained Slurm batch script (torchrun on every node, c10d rendezvous on the first
// host of $SLURM_JOB_NODELIST) and the framework's configuration, which its launcher writes
// (frameworks/<name>/launcher.hpp, found through launch/launchers.hpp). Spellings follow the frameworks' own parsers:
//  - Megatron-LM pretrain_gpt.py flags: NVIDIA/Megatron-LM@d98e8a64 megatron/training/arguments.py (+ the
//    ArgumentGroupFactory dataclass flags, megatron/training/argument_utils.py);
//  - torchtitan: a recipe module returning Trainer.Config (pytorch/torchtitan@b5bcd76c torchtitan/config/README.md,
//    configs.py, trainer.py, distributed/activation_checkpoint.py, components/quantization/float8.py): torchtitan no
//    longer reads TOML job files, runs are `--module M --config F`;
//  - DeepSpeed ds_config.json: microsoft/DeepSpeed@38327e07 deepspeed/runtime/constants.py, zero/config.py,
//    zero/offload_config.py, activation_checkpointing/config.py;
//  - plain FSDP/DDP: torchrun + fsdp_settings.json for the user's training script; sharding_strategy and
//    mixed_precision named as pytorch/pytorch@acd8c9e7 torch/distributed/fsdp/api.py (ShardingStrategy,
//    MixedPrecision), the other keys Frenzy's own (docs/launch.md).
// Lists of every flag/key those files define: tests/data/launch/*.txt (tests check every written one is listed).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/core/error.hpp"
#include "frenzy/hw/cluster.hpp"
#include "frenzy/launch/launcher.hpp"
#include "frenzy/launch/launchers.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

namespace detail {


/// The job's name as Slurm's --job-name: letters, digits and . _ + - kept, every other character written as _, so
/// that the #SBATCH line is one word whatever the name holds (the comment above it shows the name as given).
inline std::string slurm_job_name(const std::string& name) {
    if (name.empty()) return "frenzy";
    std::string s = name;
    for (auto& c : s)
        if (!word_char(c, "._+-")) c = '_';
    return s;
}

/// A Slurm GRES type as written in --gres=gpu:TYPE:N: letters, digits and . _ - (what gres.conf names hold).
inline const std::string& checked_gres_type(const std::string& type, const std::string& gpu) {
    if (type.empty() || !std::all_of(type.begin(), type.end(), [](char c) { return word_char(c, "._-"); }))
        throw field_error("launch_options::gres_names[" + gpu + "]", type,
                          "must be a Slurm GRES type: letters, digits, '.', '_' and '-' (--gres-map)");
    return type;
}

}  // namespace detail

/// The longest --time Slurm reads: SchedMD/slurm src/common/parse_time.c time_str2secs sums days x 86400 in an int,
/// so 24,855 days (2^31 s) is the last value that does not wrap.
inline constexpr double slurm_max_time_s = 24855.0 * 86400;

/// A Slurm --time value (D-HH:MM:00 or HH:MM:00) of at least `seconds`, rounded up to the minute; at most
/// slurm_max_time_s (launch_files states the cap in the script when it applies).
inline std::string slurm_time(double seconds) {
    seconds = std::min(check_finite("Slurm --time (s)", seconds), slurm_max_time_s);
    const auto total_min = static_cast<long long>(std::ceil(seconds / 60.0));
    const long long d = total_min / (24 * 60), h = (total_min / 60) % 24, m = total_min % 60;
    char buf[64];
    if (d > 0) std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:00", d, h, m);
    else std::snprintf(buf, sizeof buf, "%02lld:%02lld:00", h, m);
    return buf;
}

/// A Slurm batch script as Frenzy writes it. `frenzy launch` (launch.sbatch, with its #SBATCH directives) and
/// `frenzy serve` (the body it pipes to sbatch, whose placement travels as sbatch options) both write theirs with
/// batch_script_text(): the one place a job script is written.
struct batch_script_spec {
    std::vector<std::string> comments;    ///< header lines after the shebang, each written as "# " + line
    std::vector<std::string> directives;  ///< each written as "#SBATCH " + line (none: given as sbatch options)
    std::vector<std::string> exports;     ///< each written as "export " + line (values already shell-quoted)
    /// Where the script finds (or, with inline_files, writes) its configuration files, a shell word.
    std::string launch_dir = "${LAUNCH_DIR:-$SLURM_SUBMIT_DIR}";
    std::string launch_dir_note = "submit from the directory of these files: cd DIR && sbatch launch.sbatch";
    std::vector<launch_file> inline_files;  ///< written into $LAUNCH_DIR by the script itself (here-documents)
    std::string preamble;                   ///< shell before the command, verbatim (the MEGATRON_ARGS array)
    int nodes = 1, gpus_per_node = 1, rdzv_port = 29500;
    std::string torchrun_target;            ///< what torchrun starts on every node (script and arguments)
    std::string command;                    ///< replaces srun + torchrun when set (a test's or dry run's command)
    /// > 0: Slurm sends USR1 this long before the time limit (#SBATCH --signal=B:USR1@N, among `directives`); the
    /// script traps it and requeues the job, which resumes from its last checkpoint. The run is started in the
    /// background and waited for, so that the trap runs at once rather than when the run ends.
    double requeue_signal_s = 0;
};

/// Single-quotes a value for the shell (public: the Slurm backend's batch script quotes with it too).
inline std::string sh_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) {
        if (c == '\'') q += "'\\''";
        else q += c;
    }
    return q + "'";
}

namespace detail {

/// A comment line's text: control characters (a newline or carriage return would end the comment and start a
/// command) and invalid UTF-8 written as \xNN, whatever the text came from (names, error messages).
inline std::string comment_text(std::string_view s) { return printable(s, std::numeric_limits<std::size_t>::max()); }

/// A file the script writes itself: a quoted here-document, so nothing in it is expanded.
inline std::string heredoc_file(const launch_file& f) {
    std::string tag = "FRENZY_EOF";
    while (f.content.find(tag) != std::string::npos) tag += "_";
    std::string s = "cat > \"$LAUNCH_DIR/" + f.name + "\" <<'" + tag + "'\n" + f.content;
    if (!f.content.empty() && f.content.back() != '\n') s += "\n";
    return s + tag + "\n";
}

}  // namespace detail

inline std::string batch_script_text(const batch_script_spec& b) {
    std::string s = "#!/bin/bash\n";
    for (const auto& c : b.comments) s += "# " + detail::comment_text(c) + "\n";
    for (const auto& d : b.directives) s += "#SBATCH " + d + "\n";
    s += "\n";
    s += "set -euo pipefail\n";
    for (const auto& e : b.exports) s += "export " + e + "\n";
    s += "LAUNCH_DIR=\"" + b.launch_dir + "\"" + (b.launch_dir_note.empty() ? "" : "  # " + b.launch_dir_note) + "\n";
    s += "export PYTHONPATH=\"$LAUNCH_DIR${PYTHONPATH:+:$PYTHONPATH}\"\n";
    s += "HEAD_NODE=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n\n";
    if (!b.inline_files.empty()) {
        s += "mkdir -p \"$LAUNCH_DIR\"\n";
        for (const auto& f : b.inline_files) s += detail::heredoc_file(f);
        s += "\n";
    }
    s += b.preamble;
    if (!b.preamble.empty()) s += "\n";
    const bool requeue = b.requeue_signal_s > 0;
    if (requeue)
        s += "# Slurm signals USR1 " + number_text(b.requeue_signal_s) + " s before the time limit: the job goes back to the queue and\n"
             "# resumes from its last checkpoint when it starts again.\n"
             "trap 'echo \"launch.sbatch: time limit near: requeued, to resume from the last checkpoint\" >&2; "
             "scontrol requeue \"$SLURM_JOB_ID\"' USR1\n";
    const std::string background = requeue ? " &\nwait $!\n" : "\n";
    if (!b.command.empty())  // the user's command, run by this script's shell
        return s + (requeue ? "( " + b.command + " )" : b.command) + background;
    s += "srun --nodes=" + std::to_string(b.nodes) + " --ntasks-per-node=1 \\\n";
    s += "    torchrun --nnodes " + std::to_string(b.nodes) + " --nproc-per-node " + std::to_string(b.gpus_per_node) +
         " --rdzv-id \"$SLURM_JOB_ID\" --rdzv-backend c10d --rdzv-endpoint \"$HEAD_NODE:" + std::to_string(b.rdzv_port) + "\" \\\n";
    s += "    " + b.torchrun_target + background;
    return s;
}

/// The job a plan runs: its layout, framework, micro-batch, precision (a marked alternative where the GPU type
/// lacks the job's) and the overlap flags it was predicted with, in place of the job's own. The attention kernel
/// stays the job's: "auto" runs in the framework what the planner resolved for the type (train/attention.hpp), except
/// where that is the unfused kernel, which is written as such (Megatron --attention-backend unfused, MPT attn_impl
/// torch): a file that names no kernel gets a flash one in frameworks that cannot choose by GPU.
inline job_spec job_for_plan(job_spec j, const frenzy::plan& p) {
    if (j.runtime.attention == attention_impl::automatic && p.attention == attention_impl::unfused)
        j.runtime.attention = attention_impl::unfused;
    j.parallel = p.parallel;
    j.runtime.framework = p.framework;
    j.runtime.overlap_grad_reduce = p.overlap_grad_reduce;
    j.runtime.tp_comm_overlap = p.tp_comm_overlap;
    j.training.micro_batch = p.micro_batch;
    j.training.precision = p.precision;
    return j;
}

/// launch_options::run_command is the user's own command line, written as one line of the batch script: no control
/// character (a newline would start another command) and its quotes closed (an open quote swallows the script's
/// following lines), as bash reads single and double quotes and backslashes.
inline void check_run_command(const std::string& c) {
    for (std::size_t i = 0; i < c.size(); ++i) {  // every byte, escaped or not (a backslash does not make \x01 safe)
        const auto ch = static_cast<unsigned char>(c[i]);
        if (ch < 0x20 || ch == 0x7f)
            throw config_error("launch_options::run_command holds a control character (" + printable(c.substr(i, 1)) +
                               " at byte " + std::to_string(i) + "); it is written as one line of the batch script");
    }
    char quote = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
        const auto ch = static_cast<unsigned char>(c[i]);
        if (quote == '\'') { if (ch == '\'') quote = 0; continue; }
        if (ch == '\\' && i + 1 == c.size()) quote = '\\';  // a backslash escaping the line's end
        if (ch == '\\') { ++i; continue; }
        if (quote == '"') { if (ch == '"') quote = 0; continue; }
        if (ch == '\'' || ch == '"') quote = static_cast<char>(ch);
    }
    if (quote)
        throw config_error("launch_options::run_command=" + printable(c, 80) + " leaves a quote or a backslash open");
}

/// What the job's launcher adds to the batch script (launcher_traits::payload), after checking that the launcher can
/// run the job (config_error naming the field when not).
inline launcher_payload launcher_payload_for(const job_spec& j, const launch_options& o) {
    validate(j);
    check_run_command(o.run_command);
    if (!(j.training.finetune == finetune_spec{}) && !o.launcher->finetunes)
        throw config_error("training.finetune: the " + std::string(o.launcher.name()) + " launcher writes pretraining "
                           "runs; fine-tunes (a pretrained model, frozen layers, LoRA/QLoRA adapters) are written by the hf "
                           "launcher (--framework hf)");
    const auto& fws = launcher_frameworks(o.launcher);
    if (std::find(fws.begin(), fws.end(), j.runtime.framework) == fws.end())
        throw config_error("runtime.framework=\"" + std::string(to_string(j.runtime.framework)) + "\" cannot be launched by the " +
                           std::string(to_string(o.launcher)) + " launcher (launch_options::launcher)");
    // Only Megatron-LM checkpoints groups of layers or the first layers of a chunk; the others checkpoint every layer.
    const auto& q = j.parallel;
    if (!o.launcher->recompute_groups && (q.recompute_method != recompute_method::uniform || q.recompute_layers != 1))
        throw config_error("parallel.recompute_method=\"" + std::string(to_string(q.recompute_method)) + "\" with " +
                           "parallel.recompute_layers=" + std::to_string(q.recompute_layers) + " has no " +
                           std::string(to_string(o.launcher)) + " setting (it checkpoints every layer: uniform 1); "
                           "Megatron-LM's --recompute-method/--recompute-num-layers has it");
    return o.launcher->payload(j, o);
}

/// The header comments after the first line: the layout and the prediction (with the time limit's margin when the
/// script has one). Public: the Slurm backend's batch script writes the same lines.
inline std::vector<std::string> plan_comments(const job_spec& j, const frenzy::plan& p, std::optional<double> time_margin) {
    const auto& q = j.parallel;
    char pred[160];
    std::snprintf(pred, sizeof pred, "predicted: step %.3f s, %.0f tokens/s, run %.0f s", p.step_time.value, p.tokens_per_s,
                  p.est_time.value);
    std::string limit;
    if (time_margin) {
        char buf[48];
        std::snprintf(buf, sizeof buf, " (time limit +%.0f%%)", 100 * *time_margin);
        limit = buf;
    }
    return {"layout dp=" + std::to_string(q.dp) + " tp=" + std::to_string(q.tp) + " pp=" + std::to_string(q.pp) +
                " vpp=" + std::to_string(q.vpp) + " cp=" + std::to_string(q.cp) + " ep=" + std::to_string(q.ep) +
                " sp=" + (q.sequence_parallel ? "on" : "off") + " sharding=" + std::string(to_string(q.sharding)) +
                " recompute=" + std::string(to_string(q.recompute)) + " micro_batch=" + std::to_string(j.training.micro_batch),
            pred + limit};
}

/// The #SBATCH lines of launch_options' Slurm settings (partition, account, qos, cpus per task, memory, requeue),
/// each checked: names are Slurm words (letters, digits, '.', '_', '-'; a partition list also ','), memory a whole
/// number with an optional unit K|M|G|T, the requeue signal within sbatch's 65535 s and before half the time limit.
inline std::vector<std::string> slurm_option_directives(const launch_options& o, double time_limit_s) {
    std::vector<std::string> d;
    const auto word = [&](const char* field, const char* flag, const std::string& v, std::string_view extra) {
        if (v.empty()) return;
        if (!std::all_of(v.begin(), v.end(), [&](char c) { return word_char(c, extra); }))
            throw field_error(std::string("launch_options::") + field, v, "must be a Slurm name: letters, digits, '.', '_', '-'");
        d.push_back(std::string(flag) + "=" + v);
    };
    word("partition", "--partition", o.partition, "._-,");
    word("account", "--account", o.account, "._-");
    word("qos", "--qos", o.qos, "._-");
    if (o.cpus_per_task != 0)
        d.push_back("--cpus-per-task=" + std::to_string(check_bound("launch_options::cpus_per_task", o.cpus_per_task, bounds::cpus_per_task)));
    if (!o.mem.empty()) {
        const auto digits = o.mem.find_first_not_of("0123456789");
        if (digits == 0 || (digits != std::string::npos && (digits + 1 != o.mem.size() || std::string_view("KMGT").find(o.mem.back()) == std::string_view::npos)))
            throw field_error("launch_options::mem", o.mem, "must be a whole number of megabytes, or with a unit K, M, G or T (\"0\" = the whole node)");
        d.push_back("--mem=" + o.mem);
    }
    if (o.requeue_signal_s != 0) {
        check_bound("launch_options::requeue_signal_s", o.requeue_signal_s, bounds::slurm_signal_s);
        if (o.requeue_signal_s * 2 > time_limit_s)
            throw field_error("launch_options::requeue_signal_s", number_text(o.requeue_signal_s),
                              "must be less than half the time limit (" + number_text(time_limit_s) + " s): the job would requeue "
                              "before it makes progress");
        d.push_back("--requeue");
        d.push_back("--signal=B:USR1@" + std::to_string(static_cast<long long>(std::ceil(o.requeue_signal_s))));
    }
    return d;
}

/// The launch files for a job whose `parallel` is the plan's layout, on `p.nodes` nodes of `p.gpu`.
inline std::vector<launch_file> launch_files(const job_spec& j, const frenzy::plan& p, const launch_options& o) {
    auto payload = launcher_payload_for(j, o);
    check_bound("launch_options.time_margin", o.time_margin, bounds::rate);
    check_bound("launch_options.default_time_s", o.default_time_s, bounds::seconds);
    if (p.nodes < 1 || p.gpus < 1 || p.gpus % p.nodes != 0)
        throw config_error("plan: " + std::to_string(p.gpus) + " GPUs do not split evenly over " + std::to_string(p.nodes) + " nodes");
    const int per_node = p.gpus / p.nodes;
    auto gres = o.gres_names.find(p.gpu);
    const std::string gres_name = detail::checked_gres_type(gres == o.gres_names.end() ? p.gpu : gres->second, p.gpu);
    const double est = p.est_time.value > 0 ? p.est_time.value * (1 + o.time_margin) : o.default_time_s;
    batch_script_spec b;
    b.comments = {"Written by `frenzy launch`: job \"" + j.name + "\" on " + std::to_string(p.gpus) + " x " + p.gpu + " (" +
                  std::string(to_string(o.launcher)) + ")"};
    for (auto& c : plan_comments(j, p, o.time_margin)) b.comments.push_back(std::move(c));
    if (est > slurm_max_time_s)
        b.comments.push_back("time limit capped at Slurm's largest, " + slurm_time(slurm_max_time_s) + " (the run needs " +
                             number_text(std::ceil(est / 86400)) + " days; Slurm reads --time as an int of seconds): "
                             "checkpoint and resubmit");
    const double limit = std::min(std::ceil(std::max(est, 600.0) / 60) * 60, slurm_max_time_s);  // what slurm_time writes
    b.directives = {"--job-name=" + detail::slurm_job_name(j.name), "--nodes=" + std::to_string(p.nodes),
                    "--ntasks-per-node=1", "--gres=gpu:" + gres_name + ":" + std::to_string(per_node),
                    "--time=" + slurm_time(std::max(est, 600.0)), "--exclusive"};
    for (auto& d : slurm_option_directives(o, limit)) b.directives.push_back(std::move(d));
    b.requeue_signal_s = o.requeue_signal_s;
    b.exports = std::move(payload.exports);
    b.preamble = payload.preamble;
    b.nodes = p.nodes;
    b.gpus_per_node = per_node;
    b.rdzv_port = o.rdzv_port;
    b.torchrun_target = payload.torchrun_target;
    auto files = std::move(payload.files);
    files.insert(files.begin(), launch_file{"launch.sbatch", batch_script_text(b)});
    return files;
}

/// Plans `job` on `cluster` for the launcher's frameworks, takes plan `plan_index` of the ranking and writes its
/// files. Throws config_error when there is no such plan (the planner's infeasibility reasons in the message).
inline launch_result launch(const job_spec& job, const cluster_spec& cluster, const launch_options& o = {}) {
    auto opt = o.planning;
    opt.frameworks = launcher_frameworks(o.launcher);
    const auto r = planner{}.plan(job, cluster, opt);
    if (o.plan_index >= r.plans.size()) {
        std::string why = "no plan " + std::to_string(o.plan_index + 1) + " (the planner found " + std::to_string(r.plans.size()) + ")";
        for (const auto& f : r.infeasible) why += "; " + f.gpu + ": " + f.reason;
        throw config_error(why);
    }
    launch_result out;
    out.plan = r.plans[o.plan_index];
    out.job = job_for_plan(job, out.plan);
    out.files = launch_files(out.job, out.plan, o);
    return out;
}

/// Writes the files into `dir` (created with its parents when missing) and returns the paths written, in the
/// order of `files`. io_error naming the directory when it cannot be created or a file cannot be written.
inline std::vector<std::string> write_launch_files(const std::vector<launch_file>& files, const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw io_error("launch output directory " + dir + ": " + ec.message());
    std::vector<std::string> paths;
    for (const auto& f : files) {
        const std::string path = (std::filesystem::path(dir) / f.name).string();
        std::ofstream out(path, std::ios::binary);
        if (!out) throw io_error("launch output directory " + dir + ": cannot write " + path);
        out << f.content;
        paths.push_back(path);
    }
    return paths;
}

}  // namespace frenzy
