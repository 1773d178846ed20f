// `frenzy estimate`: per-GPU memory of one job and parallel configuration (MARP), optionally on a GPU type;
// `frenzy validate`: MARP against a table of measured runs.
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/io/cluster_json.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/io/measurements_csv.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/perf/calibration.hpp"
#include "frenzy/perf/step_time.hpp"

namespace {

struct estimate_args {
    std::string spec, model, hf_config, gpu, gpu_types, calibration, precision, optimizer, sharding, recompute, schedule, framework,
        attention;
    std::int64_t seq_len = 0, micro_batch = 0, global_batch = 0, dp = 0, tp = 0, pp = 0, vpp = 0, cp = 0, ep = 0;
    bool sp = false, json = false;
    double margin = 0.0;
};

frenzy::job_spec build_job(const estimate_args& a) {
    using namespace frenzy;
    job_spec j;
    if (!a.spec.empty()) {
        auto parsed = load_job(a.spec);
        j = parsed.job;
    } else if (!a.model.empty()) {
        j.model = preset(a.model);
        j.name = j.model.name;
    } else if (!a.hf_config.empty()) {
        j.model = load_hf_config(a.hf_config);
        j.name = j.model.name;
    } else {
        throw config_error("give a job with --spec FILE, --model PRESET or --hf-config FILE");
    }
    auto set = [](std::int64_t v, std::int64_t& out) {
        if (v != 0) out = v;
    };
    set(a.seq_len, j.training.seq_len);
    set(a.micro_batch, j.training.micro_batch);
    set(a.global_batch, j.training.global_batch);
    set(a.dp, j.parallel.dp);
    set(a.tp, j.parallel.tp);
    set(a.pp, j.parallel.pp);
    set(a.vpp, j.parallel.vpp);
    set(a.cp, j.parallel.cp);
    set(a.ep, j.parallel.ep);
    if (a.sp) j.parallel.sequence_parallel = true;
    if (!a.precision.empty()) j.training.precision = parse_enum<precision>("--precision", a.precision);
    if (!a.optimizer.empty()) j.training.optimizer = parse_enum<optimizer_kind>("--optimizer", a.optimizer);
    if (!a.sharding.empty()) j.parallel.sharding = parse_enum<sharding>("--sharding", a.sharding);
    if (!a.recompute.empty()) j.parallel.recompute = parse_enum<recompute>("--recompute", a.recompute);
    if (!a.schedule.empty()) j.parallel.schedule = parse_enum<pipeline_schedule>("--schedule", a.schedule);
    if (!a.framework.empty()) j.runtime.framework = parse_enum<framework>("--framework", a.framework);
    if (!a.attention.empty()) j.runtime.attention = parse_enum<attention_impl>("--attention", a.attention);
    // A global batch left at its default follows dp x micro-batch (one micro-batch per step).
    if (a.spec.empty() && a.global_batch == 0) j.training.global_batch = j.training.micro_batch * j.parallel.dp;
    validate(j);
    return j;
}

void run_estimate(const estimate_args& a) {
    using namespace frenzy;
    const auto j = build_job(a);
    gpu_catalog catalog;
    if (!a.gpu_types.empty()) {
        const auto js = detail::read_json_file(a.gpu_types);
        const auto& arr = js.is_object() && js.contains("gpu_types") ? js.at("gpu_types") : js;
        if (!arr.is_array()) throw config_error(a.gpu_types + ": expected an array of GPU types or {\"gpu_types\": [...]}");
        for (std::size_t i = 0; i < arr.size(); ++i)
            catalog.upsert(gpu_type_from_json(arr[i], "gpu_types[" + std::to_string(i) + "]", catalog));
    }
    if (a.margin < 0 || a.margin >= 1) throw config_error("--margin=" + std::to_string(a.margin) + " must be in [0, 1)");
    const memory_estimator est;
    const auto r = est.estimate(j);
    const gpu_type* gpu = a.gpu.empty() ? nullptr : &catalog.at(a.gpu, "--gpu");
    std::optional<step_estimate> perf;
    bool fits = false;
    double capacity = 0;
    if (gpu) {
        capacity = gpu->memory().value * (1.0 - a.margin);
        fits = r.peak_reserved.value <= capacity;
        const step_time_model model =
            a.calibration.empty() ? step_time_model{} : step_time_model{calibrated_compute{load_calibration(a.calibration)}};
        perf = model.predict(j, *gpu, topology{gpu->gpus_per_node, 0.0});
    }
    if (a.json) {
        nlohmann::json out{{"job", to_json(j)},
                           {"parameters", r.parameters},
                           {"peak_allocated_bytes", r.peak_allocated.value},
                           {"peak_reserved_bytes", r.peak_reserved.value},
                           {"bottleneck_stage", r.bottleneck_stage},
                           {"gpus", j.parallel.gpus()}};
        auto& stages = out["stages"] = nlohmann::json::array();
        for (const auto& st : r.stages)
            stages.push_back({{"stage", st.stage},
                              {"parameters", st.parameters},
                              {"weights_bytes", st.breakdown.weights.value},
                              {"gradients_bytes", st.breakdown.gradients.value},
                              {"optimizer_bytes", st.breakdown.optimizer.value},
                              {"activations_bytes", st.breakdown.activations.value},
                              {"temporary_bytes", st.breakdown.temporary.value},
                              {"peak_allocated_bytes", st.peak_allocated.value},
                              {"in_flight_micro_batches", st.in_flight_micro_batches}});
        if (gpu) {
            out["gpu"] = gpu->name;
            out["fits"] = fits;
            out["capacity_bytes"] = capacity;
            if (perf && perf->supported) {
                out["step_time_s"] = perf->step_time.value;
                out["tokens_per_s"] = perf->tokens_per_s;
                out["mfu"] = perf->mfu;
            } else {
                out["step_time_s"] = nullptr;
                out["tokens_per_s"] = nullptr;
                if (perf) out["perf_reason"] = perf->reason;
            }
        }
        fmt::print("{}\n", out.dump(2));
        return;
    }
    const auto& p = j.parallel;
    fmt::print("job {}: {} ({:.3g}B parameters), seq {}, micro-batch {}, global batch {}, {}, {}\n", j.name,
               j.model.name, r.parameters / 1e9, j.training.seq_len, j.training.micro_batch, j.training.global_batch,
               to_string(j.training.precision), to_string(j.training.optimizer));
    fmt::print("parallel: {} GPUs = dp {} x tp {} x pp {} x cp {} (vpp {}, ep {}, sp {}), sharding {}, recompute {}, "
               "schedule {}, {} / {} attention\n",
               p.gpus(), p.dp, p.tp, p.pp, p.cp, p.vpp, p.ep, p.sequence_parallel ? "on" : "off", to_string(p.sharding),
               to_string(p.recompute), to_string(p.schedule), to_string(j.runtime.framework),
               to_string(j.runtime.attention));
    fmt::print("\nper-GPU memory by pipeline stage (GiB):\n");
    fmt::print("{:>5} {:>9} {:>9} {:>9} {:>11} {:>9} {:>10} {:>9}\n", "stage", "weights", "grads", "optim", "activations",
               "temp", "peak", "in-flight");
    for (const auto& st : r.stages) {
        const auto& b = st.breakdown;
        fmt::print("{:>5} {:>9} {:>9} {:>9} {:>11} {:>9} {:>10} {:>9.1f}{}\n", st.stage, frenzy_cli::gib(b.weights.value),
                   frenzy_cli::gib(b.gradients.value), frenzy_cli::gib(b.optimizer.value),
                   frenzy_cli::gib(b.activations.value), frenzy_cli::gib(b.temporary.value),
                   frenzy_cli::gib(st.peak_allocated.value), st.in_flight_micro_batches,
                   st.stage == r.bottleneck_stage && r.stages.size() > 1 ? "  <- bottleneck" : "");
    }
    fmt::print("\npeak allocated {} GiB, peak reserved (allocator model) {} GiB\n", frenzy_cli::gib(r.peak_allocated.value),
               frenzy_cli::gib(r.peak_reserved.value));
    if (gpu) {
        fmt::print("{} ({} GiB{}): {}\n", gpu->name, frenzy_cli::gib(capacity),
                   a.margin > 0 ? fmt::format(" after a {:.0f}% margin", 100 * a.margin) : "",
                   fits ? "FITS" : fmt::format("DOES NOT FIT (needs {} GiB reserved)", frenzy_cli::gib(r.peak_reserved.value)));
        if (perf && perf->supported)
            fmt::print("predicted step time {:.3f} s, {:.0f} tokens/s for the job ({:.0f} per GPU), MFU {:.1f}%\n",
                       perf->step_time.value, perf->tokens_per_s, perf->tokens_per_s / static_cast<double>(p.gpus()),
                       100 * perf->mfu);
        else if (perf)
            fmt::print("no step-time prediction: {}\n", perf->reason);
    }
}

void run_validate(const std::string& path, bool json, double tolerance) {
    using namespace frenzy;
    std::vector<std::string> skipped;
    const auto rows = read_memory_measurements(path, &skipped);
    if (rows.empty()) throw config_error(path + ": no measured rows");
    const memory_estimator est;
    nlohmann::json out = nlohmann::json::array();
    double sum = 0, worst = 0;
    if (!json)
        fmt::print("{:<5} {:<9} {:<40} {:>10} {:>10} {:>8}\n", "id", "metric", "run", "measured", "predicted", "error");
    for (const auto& m : rows) {
        const auto r = est.estimate(m.job);
        const auto& st = m.last_stage_only ? r.stages.back() : r.bottleneck();
        const double pred = m.metric == memory_metric::reserved ? r.peak_reserved.value : st.peak_allocated.value;
        const double err = pred / m.measured.value - 1.0;
        sum += std::fabs(err);
        worst = std::max(worst, std::fabs(err));
        const char* metric = m.metric == memory_metric::reserved ? "reserved" : m.metric == memory_metric::active ? "active" : "allocated";
        if (json)
            out.push_back({{"id", m.id}, {"run", m.label}, {"metric", metric}, {"measured_bytes", m.measured.value},
                           {"predicted_bytes", pred}, {"error", err}});
        else
            fmt::print("{:<5} {:<9} {:<40.40} {:>8} G {:>8} G {:>+7.1f}%\n", m.id, metric, m.label,
                       frenzy_cli::gib(m.measured.value), frenzy_cli::gib(pred), 100 * err);
    }
    const double mae = sum / static_cast<double>(rows.size());
    if (json)
        fmt::print("{}\n", nlohmann::json{{"rows", out}, {"mean_abs_error", mae}, {"max_abs_error", worst},
                                          {"skipped", skipped}}.dump(2));
    else {
        fmt::print("\n{} rows: mean absolute error {:.1f}%, worst {:.1f}%\n", rows.size(), 100 * mae, 100 * worst);
        for (const auto& s : skipped) fmt::print("skipped {}\n", s);
    }
    if (tolerance > 0 && worst > tolerance) frenzy_cli::exit_code() = 1;
}

const frenzy_cli::registrar reg_estimate{20, [](CLI::App& app) {
    auto a = std::make_shared<estimate_args>();
    auto* c = app.add_subcommand("estimate", "Per-GPU peak training memory (MARP) of one job and parallel configuration");
    c->add_option("--spec", a->spec, "Job spec JSON (DESIGN.md format); flags below override it")->check(CLI::ExistingFile);
    c->add_option("--model", a->model, "Model preset name (see `frenzy models`)");
    c->add_option("--hf-config", a->hf_config, "Hugging Face config.json")->check(CLI::ExistingFile);
    c->add_option("--seq-len", a->seq_len, "Sequence length (default 2048)")->check(CLI::PositiveNumber);
    c->add_option("--micro-batch", a->micro_batch, "Micro-batch size (default 1)")->check(CLI::PositiveNumber);
    c->add_option("--global-batch", a->global_batch, "Global batch in sequences (default micro-batch x dp)")->check(CLI::PositiveNumber);
    c->add_option("--precision", a->precision, "fp32 | fp16-mixed | bf16-mixed | bf16 | fp8-mixed");
    c->add_option("--optimizer", a->optimizer, "adam | adamw | sgd | adafactor");
    c->add_option("--dp", a->dp, "Data-parallel degree")->check(CLI::PositiveNumber);
    c->add_option("--tp", a->tp, "Tensor-parallel degree")->check(CLI::PositiveNumber);
    c->add_option("--pp", a->pp, "Pipeline-parallel degree")->check(CLI::PositiveNumber);
    c->add_option("--vpp", a->vpp, "Virtual pipeline stages per GPU (interleaved schedule)")->check(CLI::PositiveNumber);
    c->add_option("--cp", a->cp, "Context-parallel degree")->check(CLI::PositiveNumber);
    c->add_option("--ep", a->ep, "Expert-parallel degree")->check(CLI::PositiveNumber);
    c->add_flag("--sp,--sequence-parallel", a->sp, "Sequence parallelism (needs tp > 1)");
    c->add_option("--sharding", a->sharding, "none | optimizer | gradients | full");
    c->add_option("--recompute", a->recompute, "none | selective | full");
    c->add_option("--schedule", a->schedule, "1f1b | interleaved | gpipe");
    c->add_option("--framework", a->framework, "megatron | deepspeed | fsdp | ddp");
    c->add_option("--attention", a->attention, "flash | unfused");
    c->add_option("--gpu", a->gpu, "GPU type: report fit, step time and tokens/s on it");
    c->add_option("--gpu-types", a->gpu_types, "JSON file with extra or overriding GPU types")->check(CLI::ExistingFile);
    c->add_option("--calibration", a->calibration, "Calibration JSON from `frenzy calibrate` for the step time")
        ->check(CLI::ExistingFile);
    c->add_option("--margin", a->margin, "Share of GPU memory kept free for the fit verdict (default 0)");
    c->add_flag("--json", a->json, "Machine-readable output (DESIGN.md keys)");
    c->callback([a] { run_estimate(*a); });
}};

const frenzy_cli::registrar reg_validate{25, [](CLI::App& app) {
    auto path = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    auto tol = std::make_shared<double>(0.0);
    auto* c = app.add_subcommand("validate", "Compare MARP with measured peaks (CSV in the format of "
                                             "shared/data/memory/measured_calibration.csv)");
    c->add_option("--data", *path, "CSV of measured runs")->required()->check(CLI::ExistingFile);
    c->add_option("--tolerance", *tol, "Exit 1 when any row's relative error exceeds this (e.g. 0.12)");
    c->add_flag("--json", *json, "Machine-readable output");
    c->callback([path, json, tol] { run_validate(*path, *json, *tol); });
}};

}  // namespace
