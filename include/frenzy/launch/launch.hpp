#pragma once
// Plan -> launch files: a self-contained Slurm batch script (torchrun on every node, c10d rendezvous on the first
// host of $SLURM_JOB_NODELIST; its format is backend/slurm_script.hpp's) and the framework's configuration, which
// its launcher writes (frameworks/<name>/launcher.hpp, found through frameworks/launchers.hpp). Spellings follow the
// frameworks' own parsers:
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

#include "frenzy/backend/slurm_script.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/hw/cluster.hpp"
#include "frenzy/io/file.hpp"
#include "frenzy/launch/launcher.hpp"
#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/train/attention.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {


/// launch_options::run_command is the script (and its arguments) torchrun starts, written into the batch script as
/// shell words: quotes and $VARIABLES work as in bash. Refused: a control character (a newline would start another
/// command), an open quote, a value of blanks (no script), and outside single quotes any of ; & | < > ( ) ` $( which
/// the batch shell would run itself, outside srun (a pipeline goes in a script).
inline void check_run_command(const std::string& c) {
    const std::string field = "launch_options::run_command (--run-command)";
    for (std::size_t i = 0; i < c.size(); ++i) {  // every byte, escaped or not (a backslash does not make \x01 safe)
        const auto ch = static_cast<unsigned char>(c[i]);
        if (ch < 0x20 || ch == 0x7f)
            throw config_error(field + " holds a control character (" + printable(c.substr(i, 1)) + " at byte " +
                               std::to_string(i) + "); it is written as one line of the batch script");
    }
    if (!c.empty() && c.find_first_not_of(' ') == std::string::npos)
        throw config_error(field + " is blank: it names no script for torchrun to start (leave it out for the framework's)");
    char quote = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
        const auto ch = static_cast<unsigned char>(c[i]);
        if (quote == '\'') { if (ch == '\'') quote = 0; continue; }
        if (ch == '\\' && i + 1 == c.size()) quote = '\\';  // a backslash escaping the line's end
        if (ch == '\\') { ++i; continue; }
        const bool substitution = ch == '`' || (ch == '$' && i + 1 < c.size() && c[i + 1] == '(');
        const bool control = quote == 0 && std::string_view(";&|<>()").find(static_cast<char>(ch)) != std::string_view::npos;
        if (substitution || control)
            throw config_error(field + "=" + printable(c, 80) + " holds " + (substitution ? std::string(ch == '`' ? "`" : "$(") : std::string(1, static_cast<char>(ch))) +
                               " at byte " + std::to_string(i) + ", which the batch shell would run itself, outside srun: it "
                               "names the script torchrun starts and its arguments (put a pipeline in a script)");
        if (quote == '"') { if (ch == '"') quote = 0; continue; }
        if (ch == '\'' || ch == '"') quote = static_cast<char>(ch);
    }
    if (quote) throw config_error(field + "=" + printable(c, 80) + " leaves a quote or a backslash open");
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

namespace detail {


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
