#pragma once
// Slurm's batch-script format as Frenzy writes it: job names, GRES types and time values as sbatch reads them, the
// components of a (heterogeneous) job, the #SBATCH lines of the Slurm settings, and the script text itself
// (batch_script_text), the one place a job script is written. `frenzy launch` writes launch.sbatch with it
// (launch/launch.hpp) and the Slurm backend the body it pipes to sbatch (backend/batch_script.hpp). It stands on the
// launch floor (tests/layers/check_layers.py): the launch files are written in it; the backends that submit stand above.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/launch/launcher.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/train/job_spec.hpp"

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
        const double scale[] = {1.0 / 1024, 1, 1024, 1024.0 * 1024};  // K, M, G, T in MB (sbatch's units are powers of 1024)
        const auto unit = digits == std::string::npos ? std::string_view::npos : std::string_view("KMGT").find(o.mem.back());
        const double mb = std::strtod(o.mem.substr(0, digits).c_str(), nullptr) * (unit == std::string_view::npos ? 1 : scale[unit]);
        if (mb * 1024 * 1024 > bounds::memory_bytes.max)  // sbatch reads a 64-bit count of MB; no node holds a petabyte
            throw field_error("launch_options::mem", o.mem, "is more than " + number_text(std::floor(bounds::memory_bytes.max / std::pow(1024.0, 4))) +
                              " TiB per node");
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

}  // namespace detail

}  // namespace frenzy
