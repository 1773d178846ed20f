// The Python module `frenzy` (imported as frenzy._frenzy and re-exported by frenzy/__init__.py). It converts
// Python values to the library's specs and the library's results to Python; it computes nothing itself: every
// parse goes through frenzy/io/*.hpp (the CLI's parsers) and every to_dict() through the C++ to_json the CLI's
// --json prints.
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "frenzy/core/error.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/io/cluster_json.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/io/options_json.hpp"
#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/io/prices.hpp"
#include "frenzy/io/result_json.hpp"
#include "frenzy/launch/launch.hpp"
#include "frenzy/launch/launch_json.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/plan/estimate.hpp"
#include "frenzy/plan/nearest_fit.hpp"
#include "frenzy/plan/planner.hpp"
#include "frenzy/report/charts.hpp"
#include "frenzy/sim/policies.hpp"
#include "frenzy/sim/simulator.hpp"
#include "frenzy/sim/trace.hpp"
#include "frenzy/version.hpp"

#include "json_py.hpp"

namespace py = pybind11;
using namespace py::literals;

namespace frenzy_py {

// ---- inputs ----------------------------------------------------------------------------------------------------

/// An argument taken as any Python object and converted by the function that reads it (to_job, to_cluster, ...),
/// shown in help() and the signatures by what it accepts (Tag::name) rather than as pybind11's "handle".
template <class Tag>
struct arg_of {
    py::object o;
    operator py::handle() const { return o; }
    bool is_none() const { return o.is_none(); }
    template <class T>
    T cast() const { return o.cast<T>(); }
};
struct job_tag { static constexpr auto name = py::detail::const_name("Job | dict | str | os.PathLike"); };
struct cluster_tag { static constexpr auto name = py::detail::const_name("dict | str | os.PathLike"); };
struct gpu_tag { static constexpr auto name = py::detail::const_name("str | dict | None"); };
struct path_tag { static constexpr auto name = py::detail::const_name("str | os.PathLike"); };
struct dir_tag { static constexpr auto name = py::detail::const_name("str | os.PathLike | None"); };
struct prices_tag { static constexpr auto name = py::detail::const_name("dict[str, float] | str | None"); };
struct dict_tag { static constexpr auto name = py::detail::const_name("dict | None"); };
struct trace_tag { static constexpr auto name = py::detail::const_name("str | os.PathLike"); };
using job_arg = arg_of<job_tag>;
using cluster_arg = arg_of<cluster_tag>;
using gpu_arg = arg_of<gpu_tag>;
using path_arg = arg_of<path_tag>;
using dir_arg = arg_of<dir_tag>;
using prices_arg = arg_of<prices_tag>;
using dict_arg = arg_of<dict_tag>;
using trace_arg = arg_of<trace_tag>;

}  // namespace frenzy_py

namespace pybind11::detail {
template <class Tag>
struct type_caster<frenzy_py::arg_of<Tag>> {
    PYBIND11_TYPE_CASTER(frenzy_py::arg_of<Tag>, Tag::name);
    bool load(handle src, bool) {
        value.o = reinterpret_borrow<object>(src);
        return true;
    }
    static handle cast(const frenzy_py::arg_of<Tag>& v, return_value_policy, handle) { return v.o.inc_ref(); }
};
}  // namespace pybind11::detail

namespace frenzy_py {

/// A job as the library parses it (io/job_json.hpp), with whether it fixed its parallel layout.
struct job {
    frenzy::parsed_job parsed;
};

inline std::string fspath(py::handle o) { return py::str(py::module_::import("os").attr("fspath")(o)).cast<std::string>(); }

/// frenzy::write_launch_files with the keyword argument named in the error.
inline std::vector<std::string> write_files(const std::vector<frenzy::launch_file>& files, py::handle dir,
                                            const char* arg) {
    try {
        return frenzy::write_launch_files(files, fspath(dir));
    } catch (const frenzy::io_error& e) {
        throw frenzy::io_error(std::string(arg) + ": " + e.what());
    }
}

inline bool is_pathlike(py::handle o) {
    return py::isinstance<py::str>(o) || py::hasattr(o, "__fspath__");
}

/// Job, dict shaped like the job JSON, or a path to a job JSON file.
inline frenzy::parsed_job to_job(py::handle o) {
    if (py::isinstance<job>(o)) return o.cast<const job&>().parsed;
    if (py::isinstance<py::dict>(o)) return frenzy::job_from_json(from_py(o));
    if (is_pathlike(o)) return frenzy::load_job(fspath(o));
    throw py::type_error("job must be a frenzy.Job, a dict shaped like the job JSON or a path to a job JSON file, not " +
                         py::str(py::type::of(o).attr("__name__")).cast<std::string>());
}

/// Cluster: dict shaped like the cluster JSON, a path to a cluster JSON file, or a GPU list "8xh100-80g,16xa100-40g".
inline frenzy::cluster_spec to_cluster(py::handle o) {
    if (py::isinstance<py::dict>(o)) return frenzy::cluster_from_json(from_py(o));
    if (is_pathlike(o)) {
        const auto s = fspath(o);
        if (std::filesystem::exists(s) || s.ends_with(".json")) return frenzy::load_cluster(s);
        return frenzy::cluster_from_gpu_list(s, {}, "cluster");
    }
    throw py::type_error("cluster must be a dict shaped like the cluster JSON, a path to a cluster JSON file or a GPU "
                         "list such as \"8xh100-80g,16xa100-40g\", not " +
                         py::str(py::type::of(o).attr("__name__")).cast<std::string>());
}

/// A GPU type: a catalog name, or a dict with the catalog's fields (fields left out keep the named type's values).
inline frenzy::gpu_type to_gpu(py::handle o) {
    static const frenzy::gpu_catalog catalog;
    if (py::isinstance<py::str>(o)) return catalog.at(o.cast<std::string>(), "gpu");
    if (py::isinstance<py::dict>(o)) return frenzy::gpu_type_from_json(from_py(o), "gpu", catalog);
    throw py::type_error("gpu must be a GPU type name (frenzy.gpus()) or a dict of GPU type fields, not " +
                         py::str(py::type::of(o).attr("__name__")).cast<std::string>());
}


// ---- results ---------------------------------------------------------------------------------------------------

/// The C++ part of frenzy.estimate once the inputs are converted (what the benchmark times on its own).
inline frenzy::estimate_result estimate_core(const frenzy::job_spec& job, const frenzy::gpu_type* gpu, double margin) {
    frenzy::validate(job);
    return frenzy::estimate(job, gpu, margin);
}

inline frenzy::estimate_result estimate(job_arg job_in, gpu_arg gpu_in, double margin) {
    std::optional<frenzy::parsed_job> parsed;  // a Job is used in place, anything else parsed
    const frenzy::parsed_job& pj = py::isinstance<job>(job_in) ? job_in.cast<const job&>().parsed
                                                                : parsed.emplace(to_job(job_in));
    const frenzy::job_spec& j = pj.job;
    if (gpu_in.is_none()) return estimate_core(j, nullptr, margin);
    const auto gpu = to_gpu(gpu_in);
    auto e = estimate_core(j, &gpu, margin);
    // what would make it fit, as `frenzy estimate` reports it (an unstated global batch is the planner's to choose)
    e.advice = frenzy::advise(e, frenzy::advice_options{pj.global_batch_stated});
    return e;
}

/// Benchmark helper: mean nanoseconds of estimate_core over `iterations` calls, timed in C++.
inline double cpp_estimate_ns(job_arg job_in, gpu_arg gpu_in, double margin, int iterations) {
    frenzy::validate_margin(margin);
    if (iterations < 1) throw frenzy::config_error("iterations must be at least 1");
    const auto job = to_job(job_in).job;
    std::optional<frenzy::gpu_type> gpu;
    if (!gpu_in.is_none()) gpu = to_gpu(gpu_in);
    double sink = 0;
    for (int i = 0; i < iterations / 10 + 1; ++i) sink += estimate_core(job, gpu ? &*gpu : nullptr, margin).margin;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i)
        sink += estimate_core(job, gpu ? &*gpu : nullptr, margin).memory.peak_allocated.value;
    const auto t1 = std::chrono::steady_clock::now();
    if (sink == 42.0) py::print("");  // keeps the results alive
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / iterations;
}

struct plan_result {
    frenzy::plan_result result;
};

/// Prices per GPU-hour as the options codec reads them (io/options_json.hpp "prices"): {type: USD}, "example" or
/// None; any other Python type is a TypeError, as pybind11 answers a wrong keyword type.
inline nlohmann::json prices_json(py::handle o) {
    if (o.is_none() || py::isinstance<py::str>(o) || py::isinstance<py::dict>(o)) return from_py(o, "prices");
    throw py::type_error("prices must be a dict {type: USD per GPU-hour} or \"example\", not " +
                         py::str(py::type::of(o).attr("__name__")).cast<std::string>());
}

/// The codec's value_writer for the dicts it reads entry by entry (`name` -> dict: prices, slurm): each entry's
/// Python repr under the name the codec's errors give it (`prices["a100-80g"]`), taken now, with the GIL held.
inline frenzy::value_writer python_reprs(std::initializer_list<std::pair<const char*, py::handle>> dicts) {
    std::map<std::string, std::string> text;
    for (const auto& [name, d] : dicts)
        if (py::isinstance<py::dict>(d))
            for (auto kv : d.cast<py::dict>())
                text[std::string(name) + "[\"" + py::str(kv.first).cast<std::string>() + "\"]"] = py::repr(kv.second).cast<std::string>();
    return [text = std::move(text)](const std::string& at, const nlohmann::json& v) {
        const auto it = text.find(at);
        return it != text.end() ? it->second : v.dump();
    };
}

/// frenzy.plan: the keywords are the options codec's keys (io/options_json.hpp plan_options_from_json).
inline plan_result plan(job_arg job_in, cluster_arg cluster_in, const std::string& objective, double margin,
                        std::int64_t max_gpus, prices_arg prices, const std::vector<std::string>& frameworks,
                        bool tp_across_nodes, bool whole_nodes, bool pin_precision, bool mixed) {
    frenzy::validate_margin(margin);
    auto parsed = to_job(job_in);
    parsed.choose_global_batch();  // as `frenzy plan` and `frenzy launch` do
    plan_result out;
    const auto cluster = to_cluster(cluster_in);
    const nlohmann::json keywords = {{"objective", objective},       {"margin", margin},
                                     {"max_gpus", max_gpus},         {"prices", prices_json(prices)},
                                     {"frameworks", frameworks},     {"tp_across_nodes", tp_across_nodes},
                                     {"whole_nodes", whole_nodes},   {"pin_precision", pin_precision},
                                     {"mixed", mixed}};
    auto opt = frenzy::plan_options_from_json(keywords, cluster.catalog, python_reprs({{"prices", prices}}));
    opt.constraints = parsed.stated;
    py::gil_scoped_release unlocked;
    out.result = frenzy::planner{}.plan(parsed.job, cluster, opt);
    return out;
}

/// frenzy.launch: the keywords are the options codec's keys (launch/launch_json.hpp launch_options_from_json, with
/// its "slurm" object), as examples/frenzy/cmd_launch.cpp's flags.
inline frenzy::launch_result launch(job_arg job_in, cluster_arg cluster_in, const std::string& framework, std::int64_t plan_no,
                         dir_arg out_dir, const std::string& objective, double margin,
                         const std::map<std::string, std::string>& gres, const std::string& run_command,
                         double time_margin, const std::string& torchtitan_base, const py::dict& slurm, bool mixed) {
    frenzy::validate_margin(margin);
    auto parsed = to_job(job_in);
    parsed.choose_global_batch();  // as `frenzy plan` and `frenzy launch` do
    const auto cluster = to_cluster(cluster_in);
    const nlohmann::json keywords = {{"framework", framework},     {"plan", plan_no},
                                     {"mixed", mixed},             {"run_command", run_command},
                                     {"time_margin", time_margin}, {"torchtitan_base", torchtitan_base},
                                     {"slurm", from_py(slurm, "slurm")}, {"gres", gres},
                                     {"objective", objective},     {"margin", margin}};
    auto o = frenzy::launch_options_from_json(keywords, cluster.catalog, python_reprs({{"slurm", slurm}}));
    o.planning.constraints = parsed.stated;
    frenzy::launch_result out;
    {
        py::gil_scoped_release unlocked;
        out = frenzy::launch(parsed.job, cluster, o);
    }
    if (!out_dir.is_none()) out.written = write_files(out.files, out_dir, "out_dir");
    return out;
}

/// frenzy.import_launcher: a launcher configuration -> job (frameworks/launchers.hpp), as `frenzy import --from`.
inline frenzy::launcher_import import_launcher(const std::string& kind, path_arg path, dict_arg model,
                                               const std::string& name, std::int64_t world_size, dict_arg layout,
                                               dict_arg training) {
    frenzy::import_options o;
    o.name = name;
    if (!model.is_none()) o.model = frenzy::model_from_json(from_py(model), "model");
    if (world_size < 0) throw frenzy::config_error("world_size=" + std::to_string(world_size) + " must not be negative");
    o.world_size = world_size;
    if (!layout.is_none()) o.layout = frenzy::parallel_from_json(from_py(layout, "parallel"));
    if (!training.is_none()) o.training = frenzy::training_from_json(from_py(training, "training"));
    return frenzy::import_launcher_file(kind, fspath(path), o);
}

inline std::vector<frenzy::trace_job> to_trace(py::handle o) {
    if (py::isinstance<py::str>(o) && o.cast<std::string>().find('\n') != std::string::npos) {
        std::istringstream in(o.cast<std::string>());
        return frenzy::read_trace(in, "trace");
    }
    if (is_pathlike(o)) return frenzy::load_trace(fspath(o));
    throw py::type_error("trace must be a path to a trace CSV or the CSV text, not " +
                         py::str(py::type::of(o).attr("__name__")).cast<std::string>());
}

/// frenzy.simulate: one policy -> SimResult; policy="all" -> a list of them, in policy_names() order (as
/// `frenzy simulate --policy all`). The names and the schedulers are the registry's (sched/policy_registry.hpp).
inline py::object simulate(cluster_arg cluster_in, trace_arg trace_in, const std::string& policy,
                           std::uint64_t seed, double startup_s, double restart_s, double mtbf_h,
                           double repair_h) {
    const auto cluster = to_cluster(cluster_in);
    const auto trace = to_trace(trace_in);
    if (startup_s < 0) throw frenzy::config_error("startup_s must not be negative");
    if (restart_s < 0) throw frenzy::config_error("restart_s must not be negative");
    if (mtbf_h < 0) throw frenzy::config_error("mtbf_h must not be negative");
    if (!(repair_h > 0)) throw frenzy::config_error("repair_h must be positive");
    const auto names = frenzy::select_policies(policy, "policy");
    frenzy::sim_options o;
    o.seed = seed;
    o.startup_s = startup_s;
    o.restart_s = restart_s;
    o.node_mtbf_s = mtbf_h * 3600;
    o.node_repair_s = repair_h * 3600;
    std::vector<frenzy::sim_result> results;
    {
        py::gil_scoped_release unlocked;
        const frenzy::plan_provider plans =
            frenzy::cached_plan_provider([&cluster](const frenzy::job_spec& j) { return frenzy::planner{}.plan(j, cluster); });
        for (const auto& n : names)
            results.push_back(frenzy::simulate(cluster, trace, plans, frenzy::make_scheduler(n, frenzy::policy_options_for(o)), o));
    }
    if (policy != "all") return py::cast(std::move(results.front()));
    py::list l;
    for (auto& r : results) l.append(py::cast(std::move(r)));
    return l;
}

// ---- errors ----------------------------------------------------------------------------------------------------

struct exceptions {
    py::object base, config, io, solver;
};

inline exceptions& errors() {
    static exceptions e;
    return e;
}

}  // namespace frenzy_py

namespace frenzy_py {

// ---- bindings, one function per part of the module ---------------------------------------------------------

/// frenzy.Error and its subclasses, and the translation of the library's exceptions.
inline void bind_errors(py::module_& m) {
    // Exceptions: frenzy.Error is the base of everything the library throws; ConfigError is also a ValueError
    // (bad input), IoError an OSError (a file that cannot be read), SolverError a RuntimeError.
    auto& ex = errors();
    ex.base = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
        "frenzy.Error", "Base of every error Frenzy raises; the message is the library's.", PyExc_Exception, nullptr));
    auto derived = [&](const char* name, const char* doc, PyObject* also) {
        py::tuple bases = py::make_tuple(ex.base, py::handle(also));
        return py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(name, doc, bases.ptr(), nullptr));
    };
    ex.config = derived("frenzy.ConfigError",
                        "Invalid input; the message names the field, its value and the rule, e.g. "
                        "'parallel.tp=3 does not divide model.heads=32'.",
                        PyExc_ValueError);
    ex.io = derived("frenzy.IoError", "A file could not be read or parsed.", PyExc_OSError);
    ex.solver = derived("frenzy.SolverError", "A linear or integer program could not be solved (baseline schedulers).",
                        PyExc_RuntimeError);
    m.attr("Error") = ex.base;
    m.attr("ConfigError") = ex.config;
    m.attr("IoError") = ex.io;
    m.attr("SolverError") = ex.solver;
    py::register_exception_translator([](std::exception_ptr p) {
        auto& e = errors();
        try {
            if (p) std::rethrow_exception(p);
        } catch (const frenzy::config_error& x) {
            PyErr_SetString(e.config.ptr(), x.what());
        } catch (const frenzy::io_error& x) {
            PyErr_SetString(e.io.ptr(), x.what());
        } catch (const frenzy::solver_error& x) {
            PyErr_SetString(e.solver.ptr(), x.what());
        } catch (const frenzy::error& x) {
            PyErr_SetString(e.base.ptr(), x.what());
        }
    });
}

/// frenzy.Job.
inline void bind_job(py::module_& m) {
    // ---- Job ----
    py::class_<job>(m, "Job", "A training job: model, training, parallel layout and runtime, as in the job JSON.")
        .def_static(
            "from_dict", [](const py::dict& d) { return job{frenzy::job_from_json(from_py(d))}; }, "d"_a,
            "A job from a dict shaped like the job JSON (docs/formats.md). Unknown fields and values raise "
            "ConfigError naming them.")
        .def_static(
            "from_json",
            [](const std::string& text) {
                nlohmann::json j;
                try {
                    j = nlohmann::json::parse(text);
                } catch (const nlohmann::json::parse_error& e) {
                    throw frenzy::io_error(std::string("job JSON: invalid JSON: ") + e.what());
                }
                return job{frenzy::job_from_json(j)};
            },
            "text"_a, "A job from JSON text.")
        .def_static(
            "from_file", [](path_arg path) { return job{frenzy::load_job(fspath(path))}; }, "path"_a,
            "A job from a job JSON file (the file `frenzy estimate/plan --job` reads).")
        .def("to_dict", [](const job& j) { return to_py(frenzy::to_json(j.parsed.job)); },
             "The job with every field filled in, as a dict shaped like the job JSON.")
        .def_property_readonly("name", [](const job& j) { return j.parsed.job.name; })
        .def_property_readonly("has_parallel", [](const job& j) { return j.parsed.has_parallel; },
                               "Whether the job fixes its parallel layout (otherwise the planner chooses it).")
        .def_property_readonly("gpus", [](const job& j) { return j.parsed.job.parallel.gpus(); },
                               "GPUs of its layout: dp x tp x pp x cp.")
        .def_property_readonly("parameters", [](const job& j) { return frenzy::total_parameters(j.parsed.job.model); },
                               "Parameters of the whole model.")
        .def("__eq__", [](const job& a, const job& b) { return a.parsed.job == b.parsed.job; }, py::is_operator())
        .def("__repr__", [](const job& j) {
            const auto& p = j.parsed.job.parallel;
            return "<frenzy.Job " + j.parsed.job.name + ": " + j.parsed.job.model.name +
                   (j.parsed.has_parallel ? ", dp" + std::to_string(p.dp) + " tp" + std::to_string(p.tp) + " pp" +
                                                std::to_string(p.pp) + " cp" + std::to_string(p.cp)
                                          : ", layout left to the planner") +
                   ">";
        });
}

/// frenzy.StageMemory: one pipeline stage of an estimate.
inline void bind_stage_memory(py::module_& m) {
    py::class_<frenzy::stage_memory>(m, "StageMemory", "Per-GPU memory of one pipeline stage at its peak (bytes).")
        .def_readonly("stage", &frenzy::stage_memory::stage)
        .def_readonly("parameters", &frenzy::stage_memory::parameters)
        .def_property_readonly("weights_bytes", [](const frenzy::stage_memory& s) { return s.breakdown.weights.value; })
        .def_property_readonly("gradients_bytes", [](const frenzy::stage_memory& s) { return s.breakdown.gradients.value; })
        .def_property_readonly("optimizer_bytes", [](const frenzy::stage_memory& s) { return s.breakdown.optimizer.value; })
        .def_property_readonly("activations_bytes",
                               [](const frenzy::stage_memory& s) { return s.breakdown.activations.value; })
        .def_property_readonly("temporary_bytes", [](const frenzy::stage_memory& s) { return s.breakdown.temporary.value; })
        .def_property_readonly("peak_allocated_bytes", [](const frenzy::stage_memory& s) { return s.peak_allocated.value; })
        .def_readonly("in_flight_micro_batches", &frenzy::stage_memory::in_flight_micro_batches)
        .def("__repr__", [](const frenzy::stage_memory& s) {
            return "<frenzy.StageMemory " + std::to_string(s.stage) + ": " +
                   std::to_string(s.peak_allocated.value / (1024.0 * 1024 * 1024)) + " GiB>";
        });
}

/// frenzy.Estimate's speed properties (None without a GPU or where the type lacks the job's precision).
inline void bind_estimate_speed(py::class_<frenzy::estimate_result>& cls) {
    using frenzy::estimate_result;
    auto when_speed = [](const estimate_result& r, auto&& f) -> py::object {
        return r.speed && r.speed->supported ? py::cast(f(*r.speed)) : py::none();
    };
    cls.def_property_readonly("step_time_s",
                              [=](const estimate_result& r) { return when_speed(r, [](auto& s) { return s.step_time.value; }); })
        .def_property_readonly("tokens_per_s",
                               [=](const estimate_result& r) { return when_speed(r, [](auto& s) { return s.tokens_per_s; }); })
        .def_property_readonly("mfu", [=](const estimate_result& r) { return when_speed(r, [](auto& s) { return s.mfu; }); })
        .def_property_readonly(
            "mfu_ceiling", [=](const estimate_result& r) { return when_speed(r, [](auto& s) { return s.mfu_ceiling; }); },
            "best MFU measured for the chip, precision class and model size (0: none measured); None without a GPU")
        .def_property_readonly(
            "above_mfu_ceiling",
            [=](const estimate_result& r) -> py::object {
                if (!r.speed || !r.speed->supported) return py::none();
                return py::bool_(r.speed->above_mfu_ceiling);
            },
            "the predicted MFU exceeds every measured run of its class: treat the speed as optimistic")
        .def_property_readonly(
            "rel_error_band", [=](const estimate_result& r) { return when_speed(r, [](auto& s) { return s.rel_error_band; }); },
            "relative error band of the speed (nine in ten runs of its regime within it)")
        .def_property_readonly(
            "error_regime",
            [](const estimate_result& r) -> py::object {
                if (!r.speed || !r.speed->supported) return py::none();
                return py::str(std::string(r.speed->error_regime));
            },
            "the regime the band comes from (\"chip without calibration data\" for an uncalibrated GPU type)");
}

/// The reports (report/charts.hpp) of a result's --json document, for Python: the Vega-Lite specs, the tables as
/// HTML for a notebook's _repr_html_, the whole self-contained page.
namespace report_py {
/// A pandas DataFrame of `rows` (JSON objects; nested ones become dotted columns), or ImportError naming `who`.
inline py::object dataframe(const char* who, const nlohmann::ordered_json& rows) {
    py::object pd;
    try {
        pd = py::module_::import("pandas");
    } catch (const py::error_already_set&) {
        throw py::import_error(std::string(who) + " needs pandas (apt install python3-pandas, or pip install pandas)");
    }
    return pd.attr("json_normalize")(to_py(rows));
}
inline frenzy::report::page page_of(const nlohmann::ordered_json& doc) { return frenzy::report::page_of(nlohmann::json(doc)); }
inline py::list charts(const nlohmann::ordered_json& doc) {
    py::list out;
    for (const auto& s : page_of(doc).sections)
        if (!s.chart.is_null()) out.append(py::dict("name"_a = s.chart_name, "title"_a = s.heading, "spec"_a = to_py(nlohmann::ordered_json(s.chart))));
    return out;
}
/// Title, subtitle and tables, no script: what a notebook shows for the object.
inline std::string tables_html(const nlohmann::ordered_json& doc) {
    const auto p = page_of(doc);
    std::string out = "<div><b>" + frenzy::report::html_escape(p.title) + "</b><br><small>" +
                      frenzy::report::html_escape(p.subtitle) + "</small>";
    for (const auto& s : p.sections)
        if (!s.table.rows.empty()) out += frenzy::report::detail::table_html(s.table);
    return out + "</div>";
}
inline std::string page_html(const nlohmann::ordered_json& doc) {
    return frenzy::report::to_html(page_of(doc), frenzy::report::load_web_assets(frenzy::report::web_dir(FRENZY_WEB_DIR)));
}
/// charts(), report_html() and _repr_html_ on a class whose --json document `doc_of` gives.
template <class Cls, class F>
void bind_report_methods(Cls& cls, F doc_of) {
    cls.def("charts", [doc_of](const typename Cls::type& r) { return charts(doc_of(r)); },
            "The report's charts: [{'name', 'title', 'spec'}], each spec a Vega-Lite v6 dict (usable with altair's "
            "alt.Chart.from_dict or vega-embed).")
        .def("report_html", [doc_of](const typename Cls::type& r) { return page_html(doc_of(r)); },
             "The self-contained HTML report, as `frenzy report` writes it (needs the charting library that "
             "scripts/setup.sh installs; FRENZY_WEB_DIR names another node_modules folder).")
        .def("_repr_html_", [doc_of](const typename Cls::type& r) { return tables_html(doc_of(r)); },
             "The report's title and tables as HTML (Jupyter shows this).");
}
}  // namespace report_py

/// Estimate's verdict on its GPU type (None without one): the fit rule's figures.
inline void bind_estimate_fit(py::class_<frenzy::estimate_result>& cls) {
    using frenzy::estimate_result;
    auto when_gpu = [](const estimate_result& r, auto&& f) -> py::object { return r.gpu ? py::cast(f(r)) : py::none(); };
    cls.def_property_readonly("fits", [=](const estimate_result& r) { return when_gpu(r, [](auto& x) { return x.fit->fits; }); },
                               "Whether it fits the GPU with the margin kept free (None without a GPU).")
        .def_property_readonly("verdict",
                               [=](const estimate_result& r) {
                                   return when_gpu(r, [](auto& x) { return std::string(frenzy::to_string(x.fit->verdict)); });
                               },
                               "\"fits\", \"tight\" (fits at the central estimate, not with the band) or \"does_not_fit\" "
                               "(None without a GPU).")
        .def_property_readonly("allocated_required_bytes",
                               [=](const estimate_result& r) {
                                   return when_gpu(r, [](auto& x) { return x.fit->allocated_required.value; });
                               },
                               "Peak allocated x (1 + uncertainty): what must fit once the caching allocator has released "
                               "its cache (None without a GPU).")
        .def_property_readonly("cache_flushes",
                               [=](const estimate_result& r) { return when_gpu(r, [](auto& x) { return x.fit->cache_flushes; }); },
                               "Tight because the reserved peak exceeds the usable memory while the allocated peak "
                               "fits: PyTorch's caching allocator will release its cache and retry (None without a GPU).")
        .def_property_readonly("central_bytes",
                               [=](const estimate_result& r) { return when_gpu(r, [](auto& x) { return x.fit->central.value; }); },
                               "Peak reserved, the central estimate the tight verdict compares (None without a GPU).")
        .def_property_readonly("required_bytes",
                               [=](const estimate_result& r) { return when_gpu(r, [](auto& x) { return x.fit->required.value; }); },
                               "Peak reserved x (1 + uncertainty): what the fit rule compares (None without a GPU).")
        .def_property_readonly("capacity_bytes",
                               [=](const estimate_result& r) { return when_gpu(r, [](auto& x) { return x.fit->capacity.value; }); },
                               "(1 - margin) x the GPU's memory (None without a GPU).");
}

/// frenzy.Estimate: the result of frenzy.estimate.
inline void bind_estimate_result(py::module_& m) {
    using frenzy::estimate_result;
    auto when_gpu = [](const estimate_result& r, auto&& f) -> py::object { return r.gpu ? py::cast(f(r)) : py::none(); };
    py::class_<estimate_result> cls(m, "Estimate", "MARP's per-GPU memory of one job, with the fit and speed on a GPU type.");
    bind_estimate_speed(cls);
    bind_estimate_fit(cls);
    report_py::bind_report_methods(cls, [](const estimate_result& r) { return nlohmann::ordered_json(r); });
    cls.def("to_dict", [](const estimate_result& r) { return to_py(nlohmann::ordered_json(r)); },
             "The CLI's `frenzy estimate --json` for the same job, GPU and margin.")
        .def("to_dataframe",
             [](const estimate_result& r) {
                 return report_py::dataframe("Estimate.to_dataframe", nlohmann::ordered_json(r.memory)["stages"]);
             },
             "The memory by pipeline stage as a pandas DataFrame, one row per stage: parameters, weights_bytes, "
             "gradients_bytes, optimizer_bytes, activations_bytes, temporary_bytes, peak_allocated_bytes, "
             "peak_reserved_bytes, in_flight_micro_batches (to_dict()'s stages).")
        .def_property_readonly("job", [](const estimate_result& r) { return to_py(frenzy::to_json(r.job)); },
                               "The job estimated, as a dict shaped like the job JSON.")
        .def_property_readonly("parameters", [](const estimate_result& r) { return r.memory.parameters; })
        .def_property_readonly(
            "active_parameters",
            [](const estimate_result& r) { return frenzy::active_parameters(r.job.model, r.job.training.seq_len); },
            "parameters one token passes through (a mixture of experts' routed top-k and shared experts; the whole "
            "model otherwise)")
        .def_property_readonly("peak_allocated_bytes", [](const estimate_result& r) { return r.memory.peak_allocated.value; })
        .def_property_readonly("peak_reserved_bytes", [](const estimate_result& r) { return r.memory.peak_reserved.value; })
        .def_property_readonly("uncertainty", [](const estimate_result& r) { return r.memory.uncertainty; },
                               "Validated upper relative error of the mechanisms the job uses (raises the fit check).")
        .def_property_readonly("bottleneck_stage", [](const estimate_result& r) { return r.memory.bottleneck_stage; })
        .def_property_readonly("stages", [](const estimate_result& r) { return r.memory.stages; })
        .def_property_readonly("paged_bytes", [](const estimate_result& r) { return r.memory.paged.value; },
                               "Optimizer states in CUDA unified memory (runtime.paged_optimizer): outside both peaks.")
        .def_property_readonly("host_activation_bytes_per_gpu", [](const estimate_result& r) { return r.memory.host_activations.value; },
                               "Pinned host memory of one GPU's offloaded activations (Unsloth's offloaded checkpoints, "
                               "runtime.offload.activations): outside both peaks.")
        .def_property_readonly(
            "readouts",
            [](const estimate_result& r) -> py::object {
                if (!r.gpu) return py::none();
                return to_py(nlohmann::ordered_json(frenzy::device_readouts(r.memory, *r.gpu)));
            },
            "With a GPU: what torch.cuda.max_memory_allocated, max_memory_reserved and nvidia-smi would show at the "
            "peak, and the CUDA context, NCCL buffers and paged states (memory/device.hpp); None without one.")
        .def_readonly("margin", &estimate_result::margin)
        .def_property_readonly("gpu", [=](const estimate_result& r) { return when_gpu(r, [](auto& x) { return x.gpu->name; }); })
        .def("__repr__", [](const estimate_result& r) {
            std::string s = "<frenzy.Estimate " + r.job.name + ": peak reserved " +
                            std::to_string(r.memory.peak_reserved.value / (1024.0 * 1024 * 1024)) + " GiB";
            if (r.gpu) s += ", " + std::string(frenzy::to_string(r.fit->verdict)) + " " + r.gpu->name;
            return s + ">";
        });
}

/// frenzy.estimate and its result.
inline void bind_estimate(py::module_& m) {
    // ---- estimate ----
    bind_stage_memory(m);
    bind_estimate_result(m);
    m.def(
        "estimate", [](frenzy_py::job_arg job, frenzy_py::gpu_arg gpu, double margin) { return frenzy_py::estimate(job, gpu, margin); },
        "job"_a, "gpu"_a = py::none(), "margin"_a = frenzy::default_margin,
        "Per-GPU peak training memory of `job` (a Job, a dict shaped like the job JSON, or a job file path) with its "
        "parallel layout. With `gpu` (a catalog name or a dict of GPU type fields) also whether it fits, keeping "
        "`margin` of the GPU's memory free (memory/fit.hpp), and the predicted step time.");

    m.def("_cpp_estimate_ns", &frenzy_py::cpp_estimate_ns, "job"_a, "gpu"_a = py::none(), "margin"_a = frenzy::default_margin,
          "iterations"_a = 100000,
          "Benchmark helper (benchmarks/python_estimate.py): mean ns of the C++ estimate behind frenzy.estimate, "
          "timed in a C++ loop with the inputs already converted.");
}

/// frenzy.Plan: one plan of a PlanResult.
inline void bind_plan_class(py::module_& m) {
    using frenzy::plan;
    auto budget = [](const plan& p, double v) -> py::object { return p.has_budget ? py::cast(v) : py::none(); };
    py::class_<plan>(m, "Plan", "One way to run a job: a GPU type, a count and a parallel layout; or a pipeline over "
                                "several GPU types (stage `groups`, mixed True).")
        .def("to_dict", [](const plan& p) { return to_py(nlohmann::ordered_json(p)); },
             "One entry of the CLI's `frenzy plan --json` plans (of its mixed_plans for a pipeline over several types).")
        .def_property_readonly("mixed", &plan::mixed, "True for a pipeline over several GPU types (see groups).")
        .def_property_readonly("groups", [](const plan& p) { return to_py(nlohmann::ordered_json(p.groups)); },
                               "The stage groups of a pipeline over several GPU types, in pipeline order, as dicts "
                               "(the keys of `frenzy plan --json`'s groups); [] for a plan on one type.")
        .def_readonly("gpu", &plan::gpu)
        .def_readonly("gpus", &plan::gpus)
        .def_readonly("nodes", &plan::nodes)
        .def_readonly("gpus_per_node", &plan::gpus_per_node)
        .def_property_readonly("framework", [](const plan& p) { return std::string(frenzy::to_string(p.framework)); })
        .def_property_readonly("precision", [](const plan& p) { return std::string(frenzy::to_string(p.precision)); })
        .def_readonly("precision_alternative", &plan::precision_alternative,
                      "True when the GPU type lacks the job's precision and the plan uses the nearest one it has.")
        .def_property_readonly("parallel", [](const plan& p) { return to_py(nlohmann::ordered_json(p.parallel)); })
        .def_readonly("micro_batch", &plan::micro_batch)
        .def_readonly("overlap_grad_reduce", &plan::overlap_grad_reduce,
                      "Megatron's --overlap-grad-reduce, on in the plan and in its prediction.")
        .def_readonly("tp_comm_overlap", &plan::tp_comm_overlap,
                      "Megatron's --tp-comm-overlap, on in the plan and in its prediction.")
        .def_property_readonly("peak_allocated_bytes", [](const plan& p) { return p.peak_allocated.value; })
        .def_property_readonly("peak_reserved_bytes", [](const plan& p) { return p.peak_reserved.value; })
        .def_property_readonly("required_bytes", [](const plan& p) { return p.required.value; })
        .def_property_readonly("capacity_bytes", [](const plan& p) { return p.capacity.value; })
        .def_property_readonly("step_time_s", [](const plan& p) { return p.step_time.value; })
        .def_readonly("tokens_per_s", &plan::tokens_per_s)
        .def_readonly("mfu", &plan::mfu)
        .def_readonly("mfu_ceiling", &plan::mfu_ceiling, "best MFU measured for the plan's class (0: none measured)")
        .def_readonly("uncapped_tokens_per_s", &plan::uncapped_tokens_per_s,
                      "the model's own tokens/s where the plan's speed was capped at mfu_ceiling (0: not capped)")
        .def_readonly("rel_error_band", &plan::rel_error_band, "relative error band of the plan's speed")
        .def_readonly("error_regime", &plan::error_regime, "the regime the band comes from")
        .def_property_readonly("attention", [](const plan& p) { return std::string(frenzy::to_string(p.attention)); },
                               "the attention kernel the plan runs on its GPU type")
        .def_property_readonly("est_time_s", [=](const plan& p) { return budget(p, p.est_time.value); },
                               "Time to train the job's total_tokens (None when it has no token budget).")
        .def_property_readonly("gpu_hours", [=](const plan& p) { return budget(p, p.gpu_hours); })
        .def_property_readonly("billed_gpu_hours", [=](const plan& p) { return budget(p, p.billed_gpu_hours); })
        .def_property_readonly("cost", [](const plan& p) -> py::object {
            return p.has_budget && p.cost ? py::cast(*p.cost) : py::none();
        }, "Billed GPU-hours x price (None without a budget or a price).")
        .def("__repr__", [](const frenzy::plan& p) {
            const auto& q = p.parallel;
            return "<frenzy.Plan " + std::to_string(p.gpus) + "x " + p.gpu + ": dp" + std::to_string(q.dp) + " tp" +
                   std::to_string(q.tp) + " pp" + std::to_string(q.pp) + ", " + std::to_string(p.tokens_per_s) +
                   " tokens/s>";
        });
}

/// frenzy.PlanResult: the result of frenzy.plan.
inline void bind_plan_result(py::module_& m) {
    py::class_<plan_result> cls(m, "PlanResult", "Every feasible plan, best first, and the GPU types that cannot run the job.");
    report_py::bind_report_methods(cls, [](const plan_result& r) { return frenzy::plan_result_json(r.result); });
    cls.def(
            "to_dataframe",
            [](const plan_result& r) {
                auto rows = nlohmann::ordered_json::array();
                for (const auto& p : r.result.plans) rows.push_back(p);
                return report_py::dataframe("PlanResult.to_dataframe", rows);
            },
            "The plans as a pandas DataFrame, one row per plan (best first), one column per key of to_dict()'s plans "
            "(the layout's as parallel.dp, parallel.tp, ...).")
        .def_property_readonly("parameters", [](const plan_result& r) { return r.result.parameters; },
                               "The job's parameters.")
        .def_property_readonly(
            "mixed_plans",
            [](const plan_result& r) { return r.result.mixed; },
            "With plan(mixed=True): the pipelines over two GPU types, best first, as Plans with stage groups (to_dict "
            "gives an element of `frenzy plan --json`'s mixed_plans); [] otherwise.")
        .def_property_readonly("active_parameters", [](const plan_result& r) { return r.result.active_parameters; },
                               "Parameters one token passes through (a mixture of experts' routed top-k and shared "
                               "experts; the whole model otherwise).")
        .def(
            "to_dict",
            [](const plan_result& r, std::optional<std::size_t> top) {
                return to_py(frenzy::plan_result_json(r.result, top ? *top : 0));
            },
            "top"_a = py::none(), "The CLI's `frenzy plan --json` (with `top`, `--top N`; None or 0: every plan).")
        .def_property_readonly("plans", [](const plan_result& r) { return r.result.plans; })
        .def_property_readonly("best", [](const plan_result& r) -> py::object {
            return r.result.plans.empty() ? py::none() : py::cast(r.result.plans.front());
        }, "The best plan, or None when no GPU type can run the job.")
        .def_property_readonly("infeasible", [](const plan_result& r) {
            py::list l;
            for (const auto& f : r.result.infeasible) l.append(py::dict("gpu"_a = f.gpu, "reason"_a = f.reason));
            return l;
        }, "[{'gpu': ..., 'reason': ...}] for each GPU type that cannot run the job.")
        .def("__len__", [](const plan_result& r) { return r.result.plans.size(); })
        .def(
            "__iter__", [](const plan_result& r) { return py::make_iterator(r.result.plans.begin(), r.result.plans.end()); },
            py::keep_alive<0, 1>())
        .def("__getitem__", [](const plan_result& r, std::int64_t i) {
            const auto n = static_cast<std::int64_t>(r.result.plans.size());
            if (i < 0) i += n;
            if (i < 0 || i >= n) throw py::index_error("plan index out of range");
            return r.result.plans[static_cast<std::size_t>(i)];
        })
        .def("__repr__", [](const plan_result& r) {
            return "<frenzy.PlanResult " + std::to_string(r.result.plans.size()) + " plans, " +
                   std::to_string(r.result.infeasible.size()) + " infeasible GPU types>";
        });
}

/// frenzy.plan and its results.
inline void bind_plan(py::module_& m) {
    // ---- plan ----
    bind_plan_class(m);
    bind_plan_result(m);
    m.def("plan", &frenzy_py::plan, "job"_a, "cluster"_a, "objective"_a = "time", "margin"_a = frenzy::default_margin,
          "max_gpus"_a = 0, "prices"_a = py::none(), "frameworks"_a = std::vector<std::string>{},
          "tp_across_nodes"_a = false, "whole_nodes"_a = false, "pin_precision"_a = false, "mixed"_a = false,
          "Ranks GPU types, counts and parallel layouts for `job` on `cluster` (a dict shaped like the cluster JSON, a "
          "cluster file path, or a GPU list such as \"8xh100-80g,16xa100-40g\"). Layout fields the job states (its "
          "`parallel` keys, training.micro_batch) are kept, the rest searched. `objective`: time | gpu-hours | cost "
          "(cost needs `prices`: {type: USD per GPU-hour} or \"example\"); `margin`: share of each GPU's memory kept "
          "free; `frameworks`: those to consider (default the job's); `whole_nodes`: bill whole nodes; "
          "`pin_precision`: never offer another precision on types that lack the job's; `mixed`: also plan "
          "pipelines whose stages run on two GPU types (Megatron-LM; PlanResult.mixed_plans).");
}

/// frenzy.Launch, the result of frenzy.launch.
inline void bind_launch_result(py::module_& m) {
    using frenzy::launch_result;
    py::class_<launch_result>(m, "Launch", "A plan turned into launch files (launch.sbatch and the framework's configuration).")
        .def("to_dict", [](const launch_result& l) { return to_py(nlohmann::ordered_json(l)); },
             "The CLI's `frenzy launch --json`: the plan, the job with the plan's layout and the files written.")
        .def_property_readonly("plan", [](const launch_result& l) { return l.plan; },
                               "The plan the files run (with launch(mixed=True) a pipeline over two GPU types: "
                               "Plan.mixed, Plan.groups).")
        .def_property_readonly("job", [](const launch_result& l) { return job{{l.job, true, {}}}; },
                               "The job with the plan's layout, micro-batch, framework and precision.")
        .def_property_readonly("files", [](const launch_result& l) {
            py::dict d;
            for (const auto& f : l.files) d[py::str(f.name)] = f.content;
            return d;
        }, "{file name: content}, launch.sbatch first.")
        .def_readonly("written", &launch_result::written,
                      "Paths of the files written, by out_dir or the last write() (empty before either).")
        .def("write", [](launch_result& l, frenzy_py::path_arg dir) {
            l.written = write_files(l.files, dir, "dir");
            return l.written;
        }, "dir"_a, "Writes the files into `dir` (created if missing); returns their paths, which `written` and "
                    "to_dict()'s \"files\" then hold.")
        .def("__repr__", [](const launch_result& l) {
            std::string where = std::to_string(l.plan.gpus) + "x " + l.plan.gpu;
            if (l.plan.mixed()) {
                where.clear();
                for (const auto& g : l.plan.groups) where += (where.empty() ? "" : " + ") + std::to_string(g.gpus) + "x " + g.gpu;
            }
            return "<frenzy.Launch " + where + ", " + std::to_string(l.files.size()) + " files>";
        });
}

/// frenzy.launch and frenzy.import_launcher, and their results.
inline void bind_launch(py::module_& m) {
    bind_launch_result(m);
    // the launchers' names from their catalog (frameworks/launchers.hpp); the docstring must outlive the module
    static const std::string launch_doc =
        "Plans `job` on `cluster` for `framework` (" + frenzy::launcher_names() + "), takes plan number "
        "`plan` of the ranking (1 = the best) and makes its launch files: launch.sbatch (Slurm + torchrun) and the "
        "framework's configuration; with `out_dir` also writes them there, as `frenzy launch -o DIR` does. "
        "`gres` maps catalog names to Slurm GRES types; `time_margin` pads the predicted run time for --time; "
        "`slurm` takes partition, account, qos, cpus_per_task, mem and requeue_signal_s (seconds before the time limit at "
        "which the job requeues itself; 0 = never; default 300). `mixed`: take mixed plan number `plan` (pipeline "
        "stages on two GPU types, Megatron-LM) and write it as one Slurm heterogeneous job (Launch.plan.groups). "
        "Raises ConfigError when there is no such plan (the planner's reasons in the message).";
    m.def("launch", &frenzy_py::launch, "job"_a, "cluster"_a, "framework"_a = std::string(frenzy::launcher::by_default.name()), "plan"_a = 1,
          "out_dir"_a = py::none(), "objective"_a = "time", "margin"_a = frenzy::default_margin,
          "gres"_a = std::map<std::string, std::string>{}, "run_command"_a = "", "time_margin"_a = 0.2,
          "torchtitan_base"_a = "", "slurm"_a = py::dict{}, "mixed"_a = false, launch_doc.c_str());

    py::class_<frenzy::launcher_import>(m, "Import", "A job read from a launcher configuration, and what was not used.")
        .def("to_dict", [](const frenzy::launcher_import& r) { return to_py(nlohmann::ordered_json(r)); }, "The CLI's `frenzy import --json`: {job, ignored, not_understood, notes}.")
        .def_property_readonly("job", [](const frenzy::launcher_import& r) { return job{{r.job, r.has_parallel, {}}}; })
        .def_readonly("world_size", &frenzy::launcher_import::world_size, "GPUs the launcher starts (0 = not said).")
        .def_readonly("ignored", &frenzy::launcher_import::ignored,
                      "Arguments/keys irrelevant to memory and speed (or not modelled), as written.")
        .def_readonly("not_understood", &frenzy::launcher_import::unknown, "Arguments/keys not understood, as written.")
        .def_readonly("notes", &frenzy::launcher_import::notes, "Shell constructs the script reader could not follow.");

    m.def("import_launcher", &frenzy_py::import_launcher, "kind"_a, "path"_a, "model"_a = py::none(), "name"_a = "",
          "world_size"_a = 0, "layout"_a = py::none(), "training"_a = py::none(),
          "Reads a launcher configuration into a job: `kind` megatron (a launch script as Megatron-LM's examples are "
          "written, a JSON argument list, or a Megatron YAML argument file *.yaml / *.yml as `--yaml-cfg` reads it, "
          "whose world size `world_size` gives), torchtitan (recipe module), deepspeed (ds_config.json) or fsdp "
          "(fsdp_settings.json). The last three do not describe the model: give `model` (a preset name or a dict "
          "shaped like the job JSON's model). `world_size`, `layout` ({tp, pp, cp, ep}) and `training` ({seq_len, "
          "total_tokens, ...}) supply what the configuration does not say.");
}

/// frenzy.simulate and its result.
inline void bind_simulate(py::module_& m) {
    // ---- simulate ----
    py::class_<frenzy::sim_result>(m, "SimResult", "Metrics of one simulated run of a trace under one policy.")
        .def("to_dict", [](const frenzy::sim_result& r) { return to_py(frenzy::to_json(r.metrics)); },
             "The CLI's `frenzy simulate --json`.")
        .def("jobs_csv", [](const frenzy::sim_result& r) {
            std::ostringstream s;
            frenzy::write_jobs_csv(s, r);
            return s.str();
        }, "One CSV row per job (the file `frenzy simulate --jobs-csv` writes).")
        .def_property_readonly("policy", [](const frenzy::sim_result& r) { return r.metrics.policy; })
        .def_property_readonly("completed", [](const frenzy::sim_result& r) { return r.metrics.completed; })
        .def_property_readonly("avg_jct_s", [](const frenzy::sim_result& r) { return r.metrics.avg_jct_s; })
        .def_property_readonly("makespan_s", [](const frenzy::sim_result& r) { return r.metrics.makespan_s; })
        .def_property_readonly("gpu_utilization", [](const frenzy::sim_result& r) { return r.metrics.gpu_utilization; })
        .def("__repr__", [](const frenzy::sim_result& r) {
            return "<frenzy.SimResult " + r.metrics.policy + ": " + std::to_string(r.metrics.completed) + "/" +
                   std::to_string(r.metrics.jobs) + " jobs completed>";
        });

    static const std::string simulate_doc =  // the choices from the registry (sched/policy_registry.hpp)
        "Replays `trace` (a trace CSV path or its text) on `cluster` under `policy` (" + frenzy::policy_help(true) +
        "\n), as `frenzy simulate` does; policy=\"all\" returns a list with one SimResult per policy, HAS first.";
    m.def("simulate", &frenzy_py::simulate, "cluster"_a, "trace"_a, "policy"_a = "has", "seed"_a = 1,
          "startup_s"_a = 30.0, "restart_s"_a = 30.0, "mtbf_h"_a = 0.0, "repair_h"_a = 1.0, simulate_doc.c_str());
}

/// frenzy.gpus and frenzy.models.
inline void bind_catalogs(py::module_& m) {
    // ---- catalogs ----
    m.def("gpus", [] {
        py::list l;
        const frenzy::gpu_catalog catalog;
        for (const auto& t : catalog.types()) l.append(to_py(nlohmann::ordered_json(t)));
        return l;
    }, "The built-in GPU types, one dict each (`frenzy gpus --json`).");
    m.def("models", [] {
        py::list l;
        for (const auto& p : frenzy::model_presets()) l.append(to_py(nlohmann::ordered_json(p)));
        return l;
    }, "The built-in model presets with their parameter counts (`frenzy models --json`).");
}

}  // namespace frenzy_py

PYBIND11_MODULE(_frenzy, m) {
    using namespace frenzy_py;
    m.doc() = "Frenzy: per-GPU memory (MARP), GPU plans and heterogeneity-aware scheduling of LLM training jobs.\n\n"
              "The C++ library underneath; every result's to_dict() equals the `frenzy` CLI's --json.";
    m.attr("__version__") = frenzy::version_string;

    bind_errors(m);
    bind_job(m);
    bind_estimate(m);
    bind_plan(m);
    bind_launch(m);
    bind_simulate(m);
    bind_catalogs(m);
}
