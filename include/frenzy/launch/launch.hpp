#pragma once
// Plan -> launch files: a self-contained Slurm batch script (torchrun on every node, c10d rendezvous on the first
// host of $SLURM_JOB_NODELIST) and the framework's configuration, which its launcher writes
// (frameworks/<name>/launcher.hpp, found through frameworks/launchers.hpp). Spellings follow the frameworks' own parsers:
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
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/core/error.hpp"
#include "frenzy/hw/cluster.hpp"
#include "frenzy/io/file.hpp"
#include "frenzy/launch/launcher.hpp"
#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/train/attention.hpp"
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

/// Seconds of a Slurm time value as sinfo and scontrol print a partition's MaxTime and sbatch --time reads it
/// (SchedMD/slurm src/common/parse_time.c time_str2mins: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS);
/// "UNLIMITED", "infinite" and "" are 0 (no limit). config_error naming `field` otherwise.
inline double slurm_time_seconds(const std::string& v, const std::string& field) {
    if (v.empty() || v == "UNLIMITED" || v == "infinite" || v == "INFINITE") return 0;
    const auto bad = [&] { return config_error(field + "=\"" + printable(v, 40) + "\" is not a Slurm time (MM, HH:MM:SS, D-HH:MM:SS, ...)"); };
    long long parts[4] = {0, 0, 0, 0};  // days, then up to three ':' fields
    std::string_view rest(v);
    bool days = false;
    if (const auto dash = rest.find('-'); dash != std::string_view::npos) {
        const auto r = std::from_chars(rest.data(), rest.data() + dash, parts[0]);
        if (r.ec != std::errc{} || r.ptr != rest.data() + dash || dash == 0) throw bad();
        rest.remove_prefix(dash + 1);
        days = true;
    }
    int n = 0;
    for (std::size_t start = 0; n < 3; ++n) {
        const auto colon = rest.find(':', start);
        const auto end = colon == std::string_view::npos ? rest.size() : colon;
        const auto r = std::from_chars(rest.data() + start, rest.data() + end, parts[1 + n]);
        if (end == start || r.ec != std::errc{} || r.ptr != rest.data() + end) throw bad();
        if (colon == std::string_view::npos) { ++n; break; }
        start = colon + 1;
        if (n == 2) throw bad();
    }
    // with days the fields are hours[:minutes[:seconds]]; without, minutes[:seconds] or hours:minutes:seconds
    const long long h = days || n == 3 ? parts[1] : 0, m = days ? parts[2] : n == 3 ? parts[2] : parts[1],
                    sec = days ? parts[3] : n == 3 ? parts[3] : n == 2 ? parts[2] : 0;
    return static_cast<double>(((parts[0] * 24 + h) * 60 + m) * 60 + sec);
}

/// Nodes of one GPU type that a job's script runs on: the whole allocation of a single-type plan, or one component of
/// a Slurm heterogeneous job per stage group of a mixed plan (in pipeline order).
struct slurm_component {
    std::string gpu;        ///< catalog name
    int nodes = 1;
    int gpus_per_node = 1;
    bool operator==(const slurm_component&) const = default;
};

/// The Slurm components a plan runs on: one for a single-type plan (at least one node; its GPUs split evenly, else
/// all on one), one per stage group of a pipeline over several types, in pipeline order.
inline std::vector<slurm_component> slurm_components(const frenzy::plan& p) {
    if (!p.mixed()) return {{p.gpu, std::max(p.nodes, 1), p.nodes > 0 ? p.gpus / p.nodes : p.gpus}};
    std::vector<slurm_component> out;
    for (const auto& g : p.groups) out.push_back({g.gpu, std::max(g.nodes, 1), g.gpus_per_node});
    return out;
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
    std::string runner = "torchrun";        ///< torchrun, or a wrapper taking its options (launcher_payload::runner)
    std::string (*node_lines)(const node_start&) = nullptr;  ///< the framework's node start (launcher_payload)
    std::string node_config;                ///< its configuration file (launcher_payload::node_config)
    std::string command;                    ///< replaces srun + torchrun when set (a test's or dry run's command)
    /// > 0: Slurm sends USR1 this long before the time limit (#SBATCH --signal=B:USR1@N, among `directives`); the
    /// script traps it and requeues the job, which resumes from its last checkpoint. The run is started in the
    /// background and waited for, so that the trap runs at once rather than when the run ends.
    double requeue_signal_s = 0;
    /// More than one: a Slurm heterogeneous job (`#SBATCH hetjob` between the components' directives), started on
    /// every node of every component with ranks in component order (detail::het_torchrun_lines); `nodes` and
    /// `gpus_per_node` are then unused.
    std::vector<slurm_component> components;
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

/// srun + torchrun on every node of a single-type allocation, ranks agreed by c10d rendezvous on the first host.
inline std::string torchrun_lines(const batch_script_spec& b) {
    return "srun --nodes=" + std::to_string(b.nodes) + " --ntasks-per-node=1 \\\n" +
           "    " + b.runner + " --nnodes " + std::to_string(b.nodes) + " --nproc-per-node " + std::to_string(b.gpus_per_node) +
           " --rdzv-id \"$SLURM_JOB_ID\" --rdzv-backend c10d --rdzv-endpoint \"$HEAD_NODE:" + std::to_string(b.rdzv_port) +
           "\" \\\n    " + b.torchrun_target;
}

/// srun + torchrun on every node of every component of a heterogeneous job. srun numbers the tasks of a step over
/// several components in component order (SLURM_PROCID), one per node here; each node's torchrun takes that number as
/// its --node-rank (static rendezvous on the first node of component 0) and the GPUs of its component as
/// --nproc-per-node. torchelastic gives node k the global ranks after those of nodes 0..k-1 whatever their sizes
/// (pytorch/pytorch torch/distributed/elastic/agent/server/api.py, SimpleElasticAgent._assign_worker_ranks), and
/// Megatron-LM orders ranks tp-cp-ep-dp-pp, pipeline outermost (NVIDIA/Megatron-LM@d98e8a64
/// megatron/training/initialize.py, megatron/core/parallel_state.py RankGenerator): the ranks of the stages of
/// component k are on component k's nodes. The script run by bash -c is Frenzy's own text (numbers only); the
/// head node and the training command reach it as arguments.
inline std::string het_torchrun_lines(const batch_script_spec& b) {
    std::string groups, nprocs;
    int nodes = 0;
    for (std::size_t k = 0; k < b.components.size(); ++k) {
        groups += (k ? "," : "") + std::to_string(k);
        for (int n = 0; n < b.components[k].nodes; ++n, ++nodes)
            nprocs += (nprocs.empty() ? "" : " ") + std::to_string(b.components[k].gpus_per_node);
    }
    return "srun --het-group=" + groups + " \\\n" +
           "    bash -c 'nprocs=(" + nprocs + "); exec torchrun --nnodes " + std::to_string(nodes) +
           " --nproc-per-node \"${nprocs[$SLURM_PROCID]}\" --node-rank \"$SLURM_PROCID\" --master-addr \"$1\" --master-port " +
           std::to_string(b.rdzv_port) + " \"${@:2}\"' frenzy-node \"$HEAD_NODE\" \\\n    " + b.torchrun_target;
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
    const bool het = b.components.size() > 1;
    s += std::string("HEAD_NODE=$(scontrol show hostnames \"$SLURM_JOB_NODELIST") + (het ? "_HET_GROUP_0" : "") +
         "\" | head -n 1)\n\n";
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
    if (b.node_lines && !het)
        return s + b.node_lines({.nodes = b.nodes, .gpus_per_node = b.gpus_per_node, .rdzv_port = b.rdzv_port,
                                 .config = b.node_config, .target = b.torchrun_target}) + background;
    return s + (het ? detail::het_torchrun_lines(b) : detail::torchrun_lines(b)) + background;
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

/// config_error naming training.finetune.method when `l` does not write it (launcher_traits::methods), with the
/// launchers that do.
inline void check_launcher_method(finetune_method m, launcher l) {
    const unsigned bit = method_bits({m});
    if (l->methods & bit) return;
    std::string by;
    for (const auto other : launcher_catalog())
        if (other->methods & bit) by += (by.empty() ? "" : ", ") + std::string(other.name());
    const std::string what = m == finetune_method::none ? "a run from scratch (no pretrained weights)"
                                                        : "this fine-tune of pretrained weights";
    throw config_error("training.finetune.method=\"" + std::string(to_string(m)) + "\" is not written by the " +
                       std::string(l.name()) + " launcher; " + what + " is written by: " + (by.empty() ? "none" : by));
}

/// config_error naming the fine-tuning field no launcher writes yet: DPO, int8 base weights, modules_to_save and frozen
/// leading layers are estimated (memory/methods.hpp), but every launcher writes an SFT script with a 16-bit or 4-bit
/// base and adapters only, which would run something else than what was estimated.
inline void check_launcher_finetune_fields(const finetune_spec& f) {
    const char* field = f.dpo() ? "objective=\"dpo\"" : f.load_in_8bit ? "load_in_8bit=true" : f.modules_to_save ? "modules_to_save"
                        : f.frozen_layers > 0 ? "frozen_layers" : nullptr;
    if (field)
        throw config_error("training.finetune." + std::string(field) + " is estimated but not written by any launcher "
                           "(the launchers write supervised fine-tunes with 16-bit or 4-bit bases and adapters only)");
}

/// What the job's launcher adds to the batch script (launcher_traits::payload), after checking that the launcher can
/// run the job (config_error naming the field when not).
inline launcher_payload launcher_payload_for(const job_spec& j, const launch_options& o) {
    validate(j);
    check_run_command(o.run_command);
    if (!o.launcher->payload)
        throw config_error("the " + std::string(to_string(o.launcher)) + " launcher only reads configurations (--from); it writes none");
    check_launcher_method(j.training.finetune.method, o.launcher);
    check_launcher_finetune_fields(j.training.finetune);
    if (o.launcher->needs_run_command && o.run_command.empty())
        throw config_error("launch_options::run_command=\"\": the " + std::string(to_string(o.launcher)) + " launcher writes the "
                           "configuration of your own training script, not a script; name it "
                           "with --run-command 'train.py ARGS' (the script and its arguments torchrun starts), or launch with "
                           "--framework hf, which writes its training script (Trainer, with DeepSpeed or FSDP through accelerate)");
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

namespace detail {

/// "layout dp=.. tp=.. ..." of the job as launched.
inline std::string layout_comment(const job_spec& j) {
    const auto& q = j.parallel;
    std::string s = "layout dp=" + std::to_string(q.dp) + " tp=" + std::to_string(q.tp) + " pp=" + std::to_string(q.pp) +
                    " vpp=" + std::to_string(q.vpp) + " cp=" + std::to_string(q.cp) + " ep=" + std::to_string(q.ep) +
                    " sp=" + (q.sequence_parallel ? "on" : "off") + " sharding=" + std::string(to_string(q.sharding)) +
                    " recompute=" + std::string(to_string(q.recompute)) + " micro_batch=" + std::to_string(j.training.micro_batch);
    if (!q.stage_layers.empty()) {
        s += " stage_layers=";
        for (std::size_t i = 0; i < q.stage_layers.size(); ++i) s += (i ? "," : "") + std::to_string(q.stage_layers[i]);
    }
    return s;
}

/// "predicted: step .. s, .. tokens/s, run .. s" (with the time limit's margin when the script has one).
inline std::string prediction_comment(seconds step, double tokens_per_s, seconds run, std::optional<double> time_margin) {
    char pred[160];
    std::snprintf(pred, sizeof pred, "predicted: step %.3f s, %.0f tokens/s, run %.0f s", step.value, tokens_per_s, run.value);
    std::string limit;
    if (time_margin) {
        char buf[48];
        std::snprintf(buf, sizeof buf, " (time limit +%.0f%%)", 100 * *time_margin);
        limit = buf;
    }
    return pred + limit;
}

}  // namespace detail

/// The header comments after the first line: one line per stage group of a pipeline over several types (its
/// component of the heterogeneous job), the layout and the prediction (with the time limit's margin when the
/// script has one). Public: the Slurm backend's batch script writes the same lines.
inline std::vector<std::string> plan_comments(const job_spec& j, const frenzy::plan& p, std::optional<double> time_margin) {
    std::vector<std::string> out;
    for (std::size_t k = 0; k < p.groups.size(); ++k) {
        const auto& g = p.groups[k];
        out.push_back("component " + std::to_string(k) + ": " + std::to_string(g.gpus) + " x " + g.gpu + " on " +
                      std::to_string(g.nodes) + " node(s), pipeline stages " + std::to_string(g.first_stage) + "-" +
                      std::to_string(g.first_stage + g.stages - 1) + " (" + std::to_string(g.layers) + " layers)");
    }
    out.push_back(detail::layout_comment(j));
    out.push_back(detail::prediction_comment(p.step_time, p.tokens_per_s, p.est_time, time_margin));
    return out;
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

namespace detail {

/// The #SBATCH lines of each component: the job's name first; nodes, one task per node, the GPUs as typed GRES, the
/// time limit, whole nodes and the Slurm settings of launch_options in every component; the requeue signal in the
/// first only (it acts on the whole job); `#SBATCH hetjob` between components.
inline std::vector<std::string> component_directives(const job_spec& j, const std::vector<slurm_component>& parts,
                                                     const std::string& time, const std::vector<std::string>& options,
                                                     const launch_options& o) {
    std::vector<std::string> d{"--job-name=" + slurm_job_name(j.name)};
    for (std::size_t k = 0; k < parts.size(); ++k) {
        const auto& c = parts[k];
        const auto gres = o.gres_names.find(c.gpu);
        if (k > 0) d.push_back("hetjob");
        d.push_back("--nodes=" + std::to_string(c.nodes));
        d.push_back("--ntasks-per-node=1");
        d.push_back("--gres=gpu:" + checked_gres_type(gres == o.gres_names.end() ? c.gpu : gres->second, c.gpu) + ":" +
                    std::to_string(c.gpus_per_node));
        d.push_back("--time=" + time);
        d.push_back("--exclusive");
        for (const auto& x : options)
            if (k == 0 || (x != "--requeue" && x.rfind("--signal=", 0) != 0)) d.push_back(x);
    }
    return d;
}

/// The launch files of job `j` on `parts` (one component per GPU type, in pipeline order), predicted to run `est_s`
/// seconds (0 = unknown: launch_options::default_time_s), with `comments` after the first line.
inline std::vector<launch_file> script_files(const job_spec& j, const std::vector<slurm_component>& parts, double est_s,
                                             std::vector<std::string> comments, const launch_options& o) {
    auto payload = launcher_payload_for(j, o);
    check_bound("launch_options.time_margin", o.time_margin, bounds::rate);
    check_bound("launch_options.default_time_s", o.default_time_s, bounds::seconds);
    const double est = est_s > 0 ? est_s * (1 + o.time_margin) : o.default_time_s;
    check_bound("launch_options.max_time_s", o.max_time_s, bounds::seconds);
    std::string where;
    for (const auto& c : parts) where += (where.empty() ? "" : " + ") + std::to_string(c.nodes * c.gpus_per_node) + " x " + c.gpu;
    batch_script_spec b;
    b.comments = {"Written by `frenzy launch`: job \"" + j.name + "\" on " + where + " (" + std::string(to_string(o.launcher)) +
                  (parts.size() > 1 ? ", a Slurm heterogeneous job: one component per GPU type" : "") + ")"};
    for (auto& c : comments) b.comments.push_back(std::move(c));
    if (est > slurm_max_time_s)
        b.comments.push_back("time limit capped at Slurm's largest, " + slurm_time(slurm_max_time_s) + " (the run needs " +
                             number_text(std::ceil(est / 86400)) + " days; Slurm reads --time as an int of seconds): "
                             "checkpoint and resubmit");
    double asked = std::max(est, 600.0);
    if (o.max_time_s > 0 && asked > o.max_time_s) {  // the partition's MaxTime: capped, the run resumes over requeues
        if (o.requeue_signal_s == 0)
            throw config_error("the run needs a time limit of " + slurm_time(asked) + ", more than the partition's MaxTime " +
                               slurm_time(o.max_time_s) + " (launch_options::max_time_s, --max-time), and the job does not "
                               "requeue itself (--requeue-signal 0): it would stop unfinished");
        asked = std::floor(o.max_time_s / 60) * 60;
        b.comments.push_back("time limit capped at the partition's MaxTime, " + slurm_time(asked) + " (the run needs " +
                             slurm_time(std::max(est, 600.0)) + "): it requeues itself and resumes from its last checkpoint");
    }
    const double limit = std::min(std::ceil(asked / 60) * 60, slurm_max_time_s);  // what slurm_time writes
    b.directives = component_directives(j, parts, slurm_time(asked), slurm_option_directives(o, limit), o);
    b.requeue_signal_s = o.requeue_signal_s;
    b.exports = std::move(payload.exports);
    b.preamble = payload.preamble;
    b.nodes = parts.front().nodes;
    b.gpus_per_node = parts.front().gpus_per_node;
    if (parts.size() > 1) b.components = parts;
    b.rdzv_port = o.rdzv_port;
    b.torchrun_target = payload.torchrun_target;
    b.runner = payload.runner;
    b.node_lines = payload.node_lines;
    b.node_config = payload.node_config;
    b.command = payload.command;
    auto files = std::move(payload.files);
    files.insert(files.begin(), launch_file{"launch.sbatch", batch_script_text(b)});
    return files;
}

}  // namespace detail


/// Throws config_error unless the launcher writes stage layouts of uneven layer counts (framework_rules::
/// stage_layer_layout, Megatron-LM's --pipeline-model-parallel-layout), which a pipeline over several GPU types needs.
inline void check_launches_mixed(launcher l) {
    for (const auto* fw : l->runs)
        if (fw && fw->rules.stage_layer_layout) return;
    throw config_error("launch_options::mixed: the " + std::string(to_string(l)) + " launcher cannot write a pipeline over "
                       "several GPU types: its stages need their own layer counts, which only Megatron-LM's "
                       "--pipeline-model-parallel-layout states (--framework megatron)");
}

namespace detail {
/// Throws config_error when a group of pipeline `p` over several types does not hold its stages' ranks (stages x
/// tp x cp x dp of `j`, on whole nodes) or its stages do not follow the previous group's.
inline void check_stage_groups(const job_spec& j, const frenzy::plan& p) {
    const auto& q = j.parallel;
    const std::int64_t per_stage = q.tp * q.cp * q.dp;
    std::int64_t next = 0;
    for (std::size_t k = 0; k < p.groups.size(); ++k) {
        const auto& g = p.groups[k];
        const std::string at = "mixed plan group " + std::to_string(k) + " (" + g.gpu + "): ";
        if (g.nodes < 1 || g.gpus_per_node < 1 || g.gpus != g.nodes * g.gpus_per_node)
            throw config_error(at + std::to_string(g.gpus) + " GPUs are not " + std::to_string(g.nodes) + " node(s) of " +
                               std::to_string(g.gpus_per_node));
        if (g.stages < 1 || g.gpus != g.stages * per_stage)
            throw config_error(at + std::to_string(g.gpus) + " GPUs are not its " + std::to_string(g.stages) +
                               " stage(s) x tp x cp x dp = " + std::to_string(per_stage) + " ranks each");
        if (g.first_stage != next)
            throw config_error(at + "its first stage is " + std::to_string(g.first_stage) + ", not " + std::to_string(next));
        next += g.stages;
    }
    if (next != q.pp)
        throw config_error("mixed plan: its groups hold " + std::to_string(next) + " stages, parallel.pp is " + std::to_string(q.pp));
}
}  // namespace detail

/// The launch files for a job whose `parallel` is the plan's layout (job_for_plan): on `p.nodes` nodes of `p.gpu`,
/// or a pipeline over several types as a Slurm heterogeneous job with one component per stage group, in pipeline
/// order (config_error unless the launcher writes uneven stage layouts and the groups hold their stages' ranks).
inline std::vector<launch_file> launch_files(const job_spec& j, const frenzy::plan& p, const launch_options& o) {
    if (p.mixed()) {
        check_launches_mixed(o.launcher);
        detail::check_stage_groups(j, p);
    } else if (p.nodes < 1 || p.gpus < 1 || p.gpus % p.nodes != 0) {
        throw config_error("plan: " + std::to_string(p.gpus) + " GPUs do not split evenly over " + std::to_string(p.nodes) + " nodes");
    }
    auto with_step = o;  // the launchers' checkpoint interval is a time over the predicted step (save_interval_steps)
    with_step.step_time_s = p.step_time.value;
    return detail::script_files(j, slurm_components(p), p.est_time.value, plan_comments(j, p, o.time_margin), with_step);
}

namespace detail {

/// Plan `o.plan_index` of `r`'s ranking (of its mixed plans with launch_options::mixed), or config_error with the
/// planner's reasons there is none: the infeasible types' for a plan on one type, mixed_note for a mixed one.
inline frenzy::plan plan_at(const plan_result& r, const launch_options& o) {
    const auto& ranked = o.mixed ? r.mixed : r.plans;
    if (o.plan_index < ranked.size()) return ranked[o.plan_index];
    std::string why = std::string(o.mixed ? "no mixed plan " : "no plan ") + std::to_string(o.plan_index + 1) +
                      " (the planner found " + std::to_string(ranked.size());
    if (o.mixed) throw config_error(why + (r.mixed_note.empty() ? ")" : "): " + r.mixed_note));
    why += ")";
    for (const auto& f : r.infeasible) why += "; " + f.gpu + ": " + f.reason;
    throw config_error(why);
}

}  // namespace detail

namespace detail {
/// A pipeline over several types runs one attention backend on every stage (Megatron-LM's --attention-backend is
/// global): "auto" becomes the unfused kernel where any group's type runs that one (a V100 beside A100s), as the launch
/// on that type alone writes it (job_for_plan). Types the catalog lacks are left to the framework.
inline void settle_mixed_attention(job_spec& j, const frenzy::plan& p, const gpu_catalog& catalog) {
    if (!p.mixed() || j.runtime.attention != attention_impl::automatic) return;
    for (const auto& g : p.groups)
        if (const auto* t = catalog.find(g.gpu); t && attention_on(j, *t) == attention_impl::unfused)
            j.runtime.attention = attention_impl::unfused;
}
}  // namespace detail

/// Plans `job` on `cluster` for the launcher's frameworks, takes plan `plan_index` of the ranking (of the mixed plans
/// with launch_options::mixed) and writes its files. Throws config_error when there is no such plan (the planner's
/// infeasibility reasons in the message).
inline launch_result launch(const job_spec& job, const cluster_spec& cluster, const launch_options& o = {}) {
    if (o.mixed) check_launches_mixed(o.launcher);
    auto opt = o.planning;
    opt.frameworks = launcher_frameworks(o.launcher);
    opt.mixed = opt.mixed || o.mixed;
    const auto r = planner{}.plan(job, cluster, opt);
    launch_result out;
    out.plan = detail::plan_at(r, o);
    out.job = job_for_plan(job, out.plan);
    detail::settle_mixed_attention(out.job, out.plan, cluster.catalog);
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
        check_output_path(path, "launch output directory " + dir + ": " + f.name);  // io/file.hpp: no FIFO
        std::ofstream out(path, std::ios::binary);
        if (!out) throw io_error("launch output directory " + dir + ": cannot write " + path);
        out << f.content;
        paths.push_back(path);
    }
    return paths;
}

}  // namespace frenzy
