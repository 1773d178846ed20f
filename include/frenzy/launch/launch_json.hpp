#pragma once
// Launch results -> JSON: the one place the keys of `frenzy launch --json` are built (docs/formats.md lists them);
// the Python module's Launch.to_dict() serialises through it too. And launch_options' JSON codec (docs/formats.md
// "Options"), the reader of Python's frenzy.launch keywords and its "slurm" object. It sits in launch/ rather than io/ because io/
// is below launch/ in the include graph (tests/layers/check_layers.py); the plan and the job inside it are
// serialised by io/result_json.hpp and io/job_json.hpp.
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "frenzy/io/job_json.hpp"
#include "frenzy/io/options_json.hpp"
#include "frenzy/io/result_json.hpp"
#include "frenzy/launch/launch.hpp"

namespace frenzy {

/// `frenzy launch --json`: {plan (mixed_plan with launch --mixed), job (with the plan's layout), files (the paths
/// written; [] when not written)}.
inline void to_json(nlohmann::ordered_json& out, const launch_result& r) {
    out = nlohmann::ordered_json::object();
    out[r.plan.mixed() ? "mixed_plan" : "plan"] = r.plan;
    out["job"] = nlohmann::ordered_json(to_json(r.job));  // the job codec's keys, in its (sorted) order
    out["files"] = r.written;
}

namespace detail {

/// Sets the Slurm field of `o` that `key` of launch's "slurm" object names (docs/formats.md "Options").
inline void set_slurm_option(launch_options& o, const std::string& key, const nlohmann::json& v, const value_writer& w) {
    const std::string at = "slurm[\"" + key + "\"]";
    auto text = [&] {  // a name or a size: a string, or a number written as JSON writes it
        if (v.is_string()) return v.get<std::string>();
        if (v.is_number()) return v.dump();
        throw config_error(at + "=" + value_text(w, at, v) + " must be a string");
    };
    if (key == "partition") o.partition = text();
    else if (key == "account") o.account = text();
    else if (key == "qos") o.qos = text();
    else if (key == "mem") o.mem = text();
    else if (key == "cpus_per_task" && v.is_number_integer()) o.cpus_per_task = v.get<int>();
    else if (key == "requeue_signal_s" && v.is_number()) o.requeue_signal_s = v.get<double>();
    else if (key == "max_time_s" && v.is_number()) o.max_time_s = v.get<double>();  // launch_files checks its bounds
    else if (key == "cpus_per_task" || key == "requeue_signal_s" || key == "max_time_s")
        throw config_error(at + "=" + value_text(w, at, v) + " must be a number");
    else throw config_error(at + " is not a setting (partition, account, qos, cpus_per_task, mem, requeue_signal_s, max_time_s)");
}

/// Sets the launch_options field `key` names from `v` (GRES types against `catalog`); false where it is none.
inline bool set_launch_option(launch_options& o, const std::string& key, const nlohmann::json& v, const gpu_catalog& catalog,
                              const value_writer& w) {
    if (key == "framework") o.launcher = parse_enum<launcher>("framework", option_string(v, key));
    else if (key == "plan") {
        if (!v.is_number_integer()) throw config_error("plan=" + v.dump() + " must be a whole number");
        const auto n = v.get<std::int64_t>();
        if (n < 1) throw config_error("plan=" + std::to_string(n) + ": plans are numbered from 1");
        o.plan_index = static_cast<std::size_t>(n - 1);
    } else if (key == "mixed") o.mixed = option_bool(v, key);  // launch plans mixed plans too (launch.hpp)
    else if (key == "run_command") o.run_command = option_string(v, key);
    else if (key == "time_margin") {
        o.time_margin = option_number(v, key);
        if (!(o.time_margin >= 0) || !std::isfinite(o.time_margin))
            throw config_error("time_margin=" + std::to_string(o.time_margin) + " must be a finite fraction >= 0");
    } else if (key == "torchtitan_base") o.base_config = option_string(v, key);
    else if (key == "checkpoint_every_s") {
        o.checkpoint_every_s = option_number(v, key);
        check_bound("checkpoint_every_s", o.checkpoint_every_s, bounds::seconds);
    }
    else if (key == "gres") {
        if (!v.is_object()) throw config_error("gres=" + v.dump() + " must be a dict {catalog type: GRES type}");
        for (auto it = v.begin(); it != v.end(); ++it) {
            catalog.at(it.key(), "gres");
            const auto name = option_string(it.value(), "gres[\"" + it.key() + "\"]");
            if (name.empty()) throw config_error("gres[\"" + it.key() + "\"] must not be empty");
            o.gres_names[it.key()] = name;
        }
    } else if (key == "slurm") {
        if (!v.is_object()) throw config_error("slurm=" + v.dump() + " must be a dict of Slurm settings");
        for (auto it = v.begin(); it != v.end(); ++it) set_slurm_option(o, it.key(), it.value(), w);
    } else return false;
    return true;
}

}  // namespace detail

/// launch_options from a JSON object of Python's frenzy.launch keywords (docs/formats.md "Options"): framework,
/// plan (numbered from 1), mixed, gres, run_command, time_margin, torchtitan_base, checkpoint_every_s, slurm {partition,
/// account, qos, cpus_per_task, mem, requeue_signal_s, max_time_s}, and any plan option (io/options_json.hpp), which sets `planning`. Omitted
/// keys keep their defaults; an unknown key or a bad value is a config_error that names it. launch_files checks the
/// Slurm settings' shapes. `w` writes the values of bad prices and Slurm settings (io/options_json.hpp value_writer).
inline launch_options launch_options_from_json(const nlohmann::json& j, const gpu_catalog& catalog = {},
                                               const value_writer& w = {}) {
    launch_options o;
    if (j.is_null()) return o;
    if (!j.is_object()) throw config_error("launch options must be an object");
    for (auto it = j.begin(); it != j.end(); ++it)
        if (!detail::set_launch_option(o, it.key(), it.value(), catalog, w) &&
            !set_plan_option(o.planning, it.key(), it.value(), catalog, w))
            throw config_error("launch option \"" + it.key() + "\" is not one of: framework, plan, mixed, gres, run_command, "
                               "time_margin, torchtitan_base, checkpoint_every_s, slurm, " + std::string(plan_option_keys));
    return o;
}

/// launch_options -> the JSON launch_options_from_json reads back (every key; the plan options flat beside them).
inline void to_json(nlohmann::json& out, const launch_options& o) {
    out = nlohmann::json(o.planning);
    out["framework"] = std::string(to_string(o.launcher));
    out["plan"] = o.plan_index + 1;
    out["mixed"] = o.mixed;
    out["gres"] = o.gres_names;
    out["run_command"] = o.run_command;
    out["time_margin"] = o.time_margin;
    out["torchtitan_base"] = o.base_config;
    out["checkpoint_every_s"] = o.checkpoint_every_s;
    out["slurm"] = {{"partition", o.partition}, {"account", o.account}, {"qos", o.qos}, {"cpus_per_task", o.cpus_per_task},
                    {"mem", o.mem}, {"requeue_signal_s", o.requeue_signal_s}, {"max_time_s", o.max_time_s}};
}
/// nlohmann's ADL reader: launch_options_from_json against the built-in catalog.
inline void from_json(const nlohmann::json& in, launch_options& o) { o = launch_options_from_json(in); }

}  // namespace frenzy
