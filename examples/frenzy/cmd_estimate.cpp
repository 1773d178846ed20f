// `frenzy estimate`: per-GPU memory of one job and parallel configuration (MARP), optionally on a GPU type;
// `frenzy validate`: MARP against a table of measured runs.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/io/cluster_json.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/io/measurements_csv.hpp"
#include "frenzy/io/result_json.hpp"
#include "frenzy/io/seq_lengths.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/plan/estimate.hpp"
#include "frenzy/plan/nearest_fit.hpp"
#include "frenzy/io/calibration_json.hpp"
#include "frenzy/perf/step_time.hpp"

namespace {

struct estimate_args {
    frenzy_cli::job_args job;
    std::string gpu, gpus, gpu_types, calibration, seq_lengths, batching = "pad";
    bool json = false, max_micro_batch = false;
    std::string html;
    double margin = frenzy::default_margin;
};

/// The GPU type and count of `--gpus COUNTxTYPE` (one type): estimate on that type; dp follows the count unless
/// given.
const frenzy::gpu_type* resolve_gpu(const estimate_args& a, const frenzy::gpu_catalog& catalog, frenzy::job_spec& j) {
    using namespace frenzy;
    if (!a.gpu.empty() && !a.gpus.empty()) throw config_error("give --gpu TYPE or --gpus COUNTxTYPE, not both");
    if (!a.gpu.empty()) return &catalog.at(a.gpu, "--gpu");
    if (a.gpus.empty()) return nullptr;
    const auto c = cluster_from_gpu_list(a.gpus, catalog, "--gpus");
    for (const auto& g : c.nodes)
        if (g.gpu != c.nodes.front().gpu) throw config_error("--gpus=\"" + a.gpus + "\": estimate takes one GPU type");
    const auto n = c.total_gpus();
    const auto per_replica = j.parallel.tp * j.parallel.pp * j.parallel.cp;
    if (a.job.dp == 0) {
        if (n % per_replica != 0)
            throw config_error("--gpus=\"" + a.gpus + "\": " + std::to_string(n) + " GPUs is not a multiple of tp x pp x cp = " +
                               std::to_string(per_replica));
        j.parallel.dp = n / per_replica;
        if (a.job.file.empty() && a.job.from.empty() && a.job.global_batch == 0) j.training.global_batch = j.training.micro_batch * j.parallel.dp;
    } else if (j.parallel.gpus() != n) {
        throw config_error("--gpus=\"" + a.gpus + "\" has " + std::to_string(n) + " GPUs but the layout uses dp x tp x pp x cp = " +
                           std::to_string(j.parallel.gpus()));
    }
    return &catalog.at(c.nodes.front().gpu, "--gpus");
}

/// The per-stage memory table; a stage holding no gradient at its peak shows "-" and a line says why.
void print_stage_table(const frenzy::memory_report& r) {
    fmt::print("\nper-GPU memory by pipeline stage (GiB):\n");
    fmt::print("{:>5} {:>9} {:>9} {:>9} {:>11} {:>9} {:>10} {:>9}\n", "stage", "weights", "grads", "optim", "activations",
               "temp", "peak", "in-flight");
    bool no_grads = false;  // a stage whose peak holds no gradient: "-", explained under the table (not "0.00")
    for (const auto& st : r.stages) {
        const auto& b = st.breakdown;
        no_grads = no_grads || b.gradients.value <= 0;
        fmt::print("{:>5} {:>9} {:>9} {:>9} {:>11} {:>9} {:>10} {:>9.1f}{}\n", st.stage, frenzy_cli::gib(b.weights.value),
                   b.gradients.value > 0 ? frenzy_cli::gib(b.gradients.value) : "-", frenzy_cli::gib(b.optimizer.value),
                   frenzy_cli::gib(b.activations.value), frenzy_cli::gib(b.temporary.value),
                   frenzy_cli::gib(st.peak_allocated.value), st.in_flight_micro_batches,
                   st.stage == r.bottleneck_stage && r.stages.size() > 1 ? "  <- bottleneck" : "");
    }
    if (no_grads) fmt::print("{}\n", frenzy_cli::no_gradients_note);
}

/// "FITS (needs ...)", "TIGHT: ..." or "DOES NOT FIT (needs ...)": the verdict and by how much.
std::string verdict_text(const frenzy::fit_check& f, double band) {
    using frenzy::fit_verdict;
    const auto gib = [](double b) { return frenzy_cli::gib(b); };
    switch (f.verdict) {
        case fit_verdict::fits:
            return fmt::format("FITS (needs {} GiB with the +{:.0f}% band)", gib(f.required.value), 100 * band);
        case fit_verdict::tight:
            if (f.cache_flushes && f.allocated_required.value > f.capacity.value)  // memory/fit.hpp: whole cache returned
                return fmt::format("TIGHT: the allocated peak fits at the central estimate ({} GiB, {} GiB to spare) but "
                                   "not with the +{:.0f}% band ({} GiB), and the reserved peak ({} GiB) does not: the "
                                   "allocator's options (expandable segments, or the cache emptied every step) let it "
                                   "hand back its cache and retry, which slows the steps",
                                   gib(f.allocated_required.value / (1 + band)),
                                   gib(f.capacity.value - f.allocated_required.value / (1 + band)), 100 * band,
                                   gib(f.allocated_required.value), gib(f.central.value));
            if (f.cache_flushes)
                return fmt::format("TIGHT: the allocated peak fits ({} GiB with the +{:.0f}% band) but the caching "
                                   "allocator's reserved peak ({} GiB) does not: it will release its cache and retry, "
                                   "which slows the steps (PYTORCH_ALLOC_CONF=expandable_segments:True or a smaller "
                                   "micro-batch avoids it)", gib(f.allocated_required.value), 100 * band,
                                   gib(f.central.value));
            return fmt::format("TIGHT: fits at the central estimate ({} GiB, {} GiB to spare) but not with the +{:.0f}% "
                               "band ({} GiB, {} GiB over)", gib(f.central.value), gib(f.capacity.value - f.central.value),
                               100 * band, gib(f.required.value), gib(f.required.value - f.capacity.value));
        case fit_verdict::does_not_fit: break;
    }
    return fmt::format("DOES NOT FIT (needs {} GiB at the central estimate, {} GiB over; {} GiB with the +{:.0f}% band)",
                       gib(f.central.value), gib(f.central.value - f.capacity.value), gib(f.required.value), 100 * band);
}

/// One line of a plan the planner offers instead.
std::string plan_line(const frenzy::plan& p) {
    using frenzy::to_string;
    const auto& q = p.parallel;
    return fmt::format("{} x {}: dp {} x tp {} x pp {}{}, micro-batch {}, sharding {}, recompute {} (needs {} GiB)", p.gpus,
                       p.gpu, q.dp, q.tp, q.pp, q.cp > 1 ? fmt::format(" x cp {}", q.cp) : "", p.micro_batch,
                       to_string(q.sharding), to_string(q.recompute), frenzy_cli::gib(p.required.value));
}

/// The job this command describes and the GPU type it names, as run_estimate builds them.
std::pair<frenzy::parsed_job, const frenzy::gpu_type*> build(const estimate_args& a, const frenzy::gpu_catalog& catalog) {
    auto args = a.job;  // an imported per-device configuration runs on the --gpus count (its world size)
    if (!a.gpus.empty() && !a.job.from.empty())
        args.import_world_size = cluster_from_gpu_list(a.gpus, catalog, "--gpus").total_gpus();
    auto parsed = frenzy_cli::build_job(args);
    const auto* gpu = resolve_gpu(a, catalog, parsed.job);
    return {std::move(parsed), gpu};
}

/// The layout flags that turn `before` (this command's job) into `after` (a suggestion), set in `r` too: the GPU
/// count through --gpus COUNTxTYPE when the command gave one (else through --dp), dp only where the command does not
/// derive it from the count, sequence parallelism where the change turns it on.
std::vector<std::string> layout_flags(const frenzy::job_spec& before, const frenzy::job_spec& after,
                                      const frenzy::gpu_type& g, estimate_args& r) {
    using frenzy::to_string;
    std::vector<std::string> f;
    const auto& p = before.parallel;
    const auto& q = after.parallel;
    auto number = [&f](const char* flag, std::int64_t was, std::int64_t now, std::int64_t& field) {
        if (was == now) return;
        f.push_back(fmt::format("{} {}", flag, now));
        field = now;
    };
    if (!r.gpus.empty() && p.gpus() != q.gpus()) f.push_back("--gpus " + (r.gpus = fmt::format("{}x{}", q.gpus(), g.name)));
    if (r.gpus.empty() || r.job.dp != 0) number("--dp", p.dp, q.dp, r.job.dp);
    number("--tp", p.tp, q.tp, r.job.tp);
    number("--pp", p.pp, q.pp, r.job.pp);
    number("--cp", p.cp, q.cp, r.job.cp);
    number("--ep", p.ep, q.ep, r.job.ep);
    number("--vpp", p.vpp, q.vpp, r.job.vpp);
    if (p.schedule != q.schedule) f.push_back("--schedule " + (r.job.schedule = to_string(q.schedule)));
    if (before.training.precision != after.training.precision)
        f.push_back("--precision " + (r.job.precision = to_string(after.training.precision)));
    if (q.sequence_parallel && !p.sequence_parallel) f.push_back("--sp"), r.job.sp = true;
    number("--micro-batch", before.training.micro_batch, after.training.micro_batch, r.job.micro_batch);
    if (p.sharding != q.sharding) f.push_back("--sharding " + (r.job.sharding = to_string(q.sharding)));
    if (p.recompute != q.recompute) f.push_back("--recompute " + (r.job.recompute = to_string(q.recompute)));
    if (after.runtime.offload.optimizer && !before.runtime.offload.optimizer)
        f.push_back("--offload optimizer"), r.job.offload.push_back("optimizer");
    return f;
}

/// The flags that, given to this command (`a`), make `frenzy estimate` report `after`, which needs `required` bytes,
/// instead of `before`: the changed layout, then what a re-run would otherwise derive differently (its global batch
/// from micro-batch x dp, its default framework from the fine-tuning method and layout), found by re-building the
/// job, whose estimate must then need `required`; nothing when it does not. A job imported from a launcher file is
/// not re-built (the importer's notes would print again): its flags are unchecked, or nothing unless `unchecked`.
std::optional<std::string> reproducing_flags(const estimate_args& a, const frenzy::gpu_catalog& catalog,
                                             const frenzy::job_spec& before, const frenzy::job_spec& after,
                                             const frenzy::gpu_type& g, double required, bool unchecked) {
    estimate_args r = a;
    auto f = layout_flags(before, after, g, r);
    if (!a.job.from.empty() && !unchecked) return std::nullopt;
    if (a.job.from.empty()) {
        try {
            const auto j = build(r, catalog).first.job;
            if (j.training.global_batch != after.training.global_batch)
                f.push_back(fmt::format("--global-batch {}", r.job.global_batch = after.training.global_batch));
            if (j.runtime.framework != after.runtime.framework)
                f.push_back("--framework " + r.job.frameworks.emplace_back(frenzy::to_string(after.runtime.framework)));
            const auto [parsed, gpu] = build(r, catalog);
            if (frenzy::estimate(parsed.job, gpu, a.margin).fit->required.value != required) return std::nullopt;
        } catch (const frenzy::config_error&) {
            return std::nullopt;
        }
    }
    std::string out;
    for (const auto& x : f) out += (out.empty() ? "" : " ") + x;
    return out;
}

/// "tp 2 (was 1), dp 4 (was 8), sequence parallelism on": what a suggestion changes, in words.
std::string change_text(const frenzy::job_spec& before, const frenzy::job_spec& after) {
    using frenzy::to_string;
    std::vector<std::string> parts;
    auto number = [&parts](const char* name, std::int64_t was, std::int64_t now) {
        if (was != now) parts.push_back(fmt::format("{} {} (was {})", name, now, was));
    };
    auto word = [&parts](const char* name, std::string_view was, std::string_view now) {
        if (was != now) parts.push_back(fmt::format("{} {} (was {})", name, now, was));
    };
    const auto &p = before.parallel, &q = after.parallel;
    number("micro-batch", before.training.micro_batch, after.training.micro_batch);
    word("recompute", to_string(p.recompute), to_string(q.recompute));
    word("sharding", to_string(p.sharding), to_string(q.sharding));
    if (after.runtime.offload.optimizer && !before.runtime.offload.optimizer) parts.emplace_back("optimizer offload on");
    number("tp", p.tp, q.tp);
    number("pp", p.pp, q.pp);
    number("cp", p.cp, q.cp);
    number("dp", p.dp, q.dp);
    if (q.sequence_parallel && !p.sequence_parallel) parts.emplace_back("sequence parallelism on");
    number("global batch", before.training.global_batch, after.training.global_batch);
    std::string out;
    for (const auto& x : parts) out += (out.empty() ? "" : ", ") + x;
    return out;
}

/// The flags of each piece of advice (reproducing_flags): one per single change, and the planner's two layouts.
struct advice_flags {
    std::vector<std::optional<std::string>> changes;
    std::optional<std::string> same_gpus, fewest_gpus;
};

advice_flags flags_of(const estimate_args& a, const frenzy::gpu_catalog& catalog, const frenzy::estimate_result& e) {
    advice_flags out;
    if (!e.advice) return out;
    for (const auto& s : e.advice->changes)
        out.changes.push_back(reproducing_flags(a, catalog, e.job, s.job, *e.gpu, s.fit.required.value, true));
    auto with_batch = e.job;  // the planner's layouts are for its global batch
    with_batch.training.global_batch = e.advice->planner.global_batch;
    auto of_plan = [&](const std::optional<frenzy::plan>& p) -> std::optional<std::string> {
        if (!p) return std::nullopt;
        return reproducing_flags(a, catalog, e.job, frenzy::job_for_plan(with_batch, *p), *e.gpu, p->required.value,
                                 false);
    };
    out.same_gpus = of_plan(e.advice->planner.same_gpus);
    out.fewest_gpus = of_plan(e.advice->planner.fewest_gpus);
    return out;
}

/// ": --tp 2 --sp" after a piece of advice whose flags reproduce it.
std::string flags_text(const std::optional<std::string>& f) { return f ? ": " + *f : ""; }

/// What would make it fit: each single change with the flags that reproduce its figure, then the planner's layouts
/// on the same GPU type (with theirs where flags can state them), and the global batch the planner searched with.
void print_advice(const frenzy::fit_advice& a, const frenzy::job_spec& job, const std::string& gpu,
                  const advice_flags& flags) {
    const auto n = job.parallel.gpus();
    fmt::print("to make it fit on {} x {} (one change each; this command with its flags, which replace any of the same "
               "name, shows it):\n", n, gpu);
    for (std::size_t i = 0; i < a.changes.size(); ++i) {
        const auto& s = a.changes[i];
        const auto m = s.job.parallel.gpus();
        fmt::print("  {}{}: needs {} GiB{}\n", m != n ? fmt::format("on {} GPUs: ", m) : "", change_text(job, s.job),
                   frenzy_cli::gib(s.fit.required.value), flags.changes[i] ? flags_text(flags.changes[i]) : " (no flags state it)");
    }
    if (a.changes.empty()) fmt::print("  no single change of micro-batch, recompute, sharding, offload or layout\n");
    const auto& pl = a.planner;
    if (pl.same_gpus) fmt::print("  the planner, same GPUs: {}{}\n", plan_line(*pl.same_gpus), flags_text(flags.same_gpus));
    if (pl.fewest_gpus)
        fmt::print("  the planner, fewest GPUs: {}{}\n", plan_line(*pl.fewest_gpus), flags_text(flags.fewest_gpus));
    if (!pl.fewest_gpus)
        fmt::print("  the planner finds no layout on up to {} {} GPUs{}\n", pl.max_gpus, gpu,
                   pl.none_reason.empty() ? "" : ": " + pl.none_reason);
    if (pl.global_batch != job.training.global_batch)
        fmt::print("  (the planner searched with global batch {}{})\n", pl.global_batch,
                   pl.global_batch_chosen ? ", which `frenzy plan` chooses when none is given" : "");
}

/// What each common readout would show at the peak (memory/device.hpp).
void print_readouts(const frenzy::device_footprint& d) {
    const auto g = [](frenzy::bytes b) { return frenzy_cli::gib(b.value); };
    fmt::print("readouts at the peak: torch.cuda.max_memory_allocated {} GiB, max_memory_reserved {} GiB, nvidia-smi "
               "about {} GiB (+ CUDA context {}, NCCL buffers {}{})\n",
               g(d.allocated), g(d.reserved), g(d.device), g(d.cuda_context), g(d.nccl),
               d.paged.value > 0 ? fmt::format(", paged states {} of {} resident", g(d.paged_resident), g(d.paged))
                                 : std::string());
}

/// The pinned host memory of offloaded activations (Unsloth's checkpoints, runtime.offload.activations), per GPU and
/// on a node of the GPU type: each of the node's processes pins its own.
void print_host_activations(const frenzy::estimate_result& e) {
    const double per_gpu = e.memory.host_activations.value;
    if (!(per_gpu > 0)) return;
    fmt::print("offloaded activations: {} GiB of pinned host memory per GPU", frenzy_cli::gib(per_gpu));
    if (e.gpu) {
        const auto n = std::min<std::int64_t>(e.job.parallel.gpus(), e.gpu->gpus_per_node);
        fmt::print("; {} GiB on a node with {} of its GPUs", frenzy_cli::gib(per_gpu * static_cast<double>(n)), n);
    }
    fmt::print("\n");
}

void print_estimate(const frenzy::estimate_result& e) {
    using namespace frenzy;
    const auto& j = e.job;
    const auto& r = e.memory;
    const auto& p = j.parallel;
    fmt::print("job {}: {} ({}), seq {}, micro-batch {}, global batch {}, {}, {}{}\n", j.name, j.model.name,
               frenzy_cli::parameters_text(r.parameters, j.model.is_moe() ? active_parameters(j.model, j.training.seq_len) : 0),
               j.training.seq_len, j.training.micro_batch,
               j.training.global_batch, frenzy_cli::precision_text(j), to_string(j.training.optimizer),
               frenzy_cli::finetune_text(j));
    fmt::print("parallel: {} GPUs = dp {} x tp {} x pp {} x cp {} (vpp {}, ep {}, sp {}), sharding {}, recompute {}, "
               "schedule {}, {} / {} attention\n",
               p.gpus(), p.dp, p.tp, p.pp, p.cp, p.vpp, p.ep, p.sequence_parallel ? "on" : "off", to_string(p.sharding),
               to_string(p.recompute), to_string(p.schedule), to_string(j.runtime.framework),
               to_string(j.runtime.attention));
    // said first (issue 55: it came after the whole table): the memory below is still the job as given
    if (e.gpu && e.speed && !e.speed->supported) fmt::print("no step-time prediction: {}\n", e.speed->reason);
    print_stage_table(r);
    fmt::print("\npeak allocated {} GiB, peak reserved (allocator model) {} GiB{}\n", frenzy_cli::gib(r.peak_allocated.value),
               frenzy_cli::gib(r.peak_reserved.value),
               r.uncertainty > 0 ? fmt::format(", uncertainty +{:.0f}%", 100 * r.uncertainty) : "");
    if (r.host_per_gpu.value > 0)
        fmt::print("offload: {} GiB of states in host memory per GPU{}\n", frenzy_cli::gib(r.host_per_gpu.value),
                   e.gpu ? fmt::format("; a node with {} of its GPUs ({} per {} node) needs {} GiB of host memory (the "
                                       "states x {}, DeepSpeed's estimator)",
                                       std::min<std::int64_t>(p.gpus(), e.gpu->gpus_per_node), e.gpu->gpus_per_node, e.gpu->name,
                                       frenzy_cli::gib(host_memory_per_node(r, p.gpus(), e.gpu->gpus_per_node).value),
                                       host_buffer_factor)
                         : std::string());
    print_host_activations(e);
    if (r.paged.value > 0)
        fmt::print("paged optimizer: {} GiB of states in CUDA unified memory, outside both peaks (the driver moves them "
                   "to host memory when the device is full)\n", frenzy_cli::gib(r.paged.value));
    if (!e.gpu) return;
    const auto& f = *e.fit;
    fmt::print("{}: {} GiB usable of {} GiB ({:.0f}% kept free): {}\n", e.gpu->name, frenzy_cli::gib(f.capacity.value),
               frenzy_cli::gib(e.gpu->memory().value), 100 * e.margin, verdict_text(f, r.uncertainty));
    print_readouts(device_readouts(r, *e.gpu));
    if (e.speed && e.speed->supported) {
        const auto& sp = *e.speed;
        fmt::print("predicted step time {:.3f} s, {:.0f} tokens/s for the job ({:.0f} per GPU), MFU {:.1f}%; +-{:.0f}% "
                   "({})\n",
                   sp.step_time.value, sp.tokens_per_s, sp.tokens_per_s / static_cast<double>(p.gpus()), 100 * sp.mfu,
                   100 * sp.rel_error_band, sp.error_regime);
        if (sp.above_mfu_ceiling)
            fmt::print("note: MFU {:.1f}% is above the best measured on {} for this precision and model size ({:.1f}%, "
                       "data/throughput/): treat the speed as optimistic\n",
                       100 * sp.mfu, e.gpu->chip.empty() ? e.gpu->name : e.gpu->chip, 100 * sp.mfu_ceiling);
    }
}

/// --seq-lengths FILE: the job over the dataset as it will be batched (plan/dataset_fit.hpp).
std::optional<frenzy::dataset_fit> dataset_of(const estimate_args& a, const frenzy::job_spec& j, const frenzy::gpu_type* gpu) {
    using namespace frenzy;
    const auto b = parse_enum<batching>("--batching", a.batching);
    if (a.seq_lengths.empty()) return std::nullopt;
    if (!gpu) throw config_error("--seq-lengths needs --gpu TYPE or --gpus COUNTxTYPE");
    // errors name the option with the file (io/seq_lengths.hpp adds the line and the field)
    const auto lengths = parse_seq_lengths(read_file_limited(a.seq_lengths), "--seq-lengths " + printable(a.seq_lengths, 200));
    return fit_dataset(j, lengths, b, *gpu, a.margin);
}

void print_dataset(const frenzy::dataset_fit& d, const frenzy::job_spec& j) {
    using namespace frenzy;
    const auto& e = d.longest_batch;
    fmt::print("\ndataset: {} samples, tokens p50 {}, p95 {}, longest {}{}\n", d.samples, d.p50, d.p95, d.longest,
               d.truncated > 0 ? fmt::format(" ({} cut to seq_len {})", d.truncated, j.training.seq_len) : std::string());
    fmt::print("batching {}: the longest micro-batch is {} x {} tokens: peak reserved {} GiB, {}\n", to_string(d.batching),
               j.training.micro_batch, d.longest_batch_length, frenzy_cli::gib(e.memory.peak_reserved.value),
               e.fit->verdict == fit_verdict::does_not_fit ? "does not fit" : to_string(e.fit->verdict));
    fmt::print("micro-batch {} fits padded lengths up to {} tokens; the largest micro-batch that fits the longest "
               "batch: {} (with the band), {} at the central estimate\n",
               j.training.micro_batch, d.fit_length, d.micro_batch.fits, d.micro_batch.tight);
    if (d.steps_at_risk > 0)
        fmt::print("steps at risk of running out of memory: {:.2f}%{}\n", 100 * d.steps_at_risk,
                   d.batching == batching::sorted ? " at most" : "");
}

void run_estimate(const estimate_args& a) {
    using namespace frenzy;
    if (a.job.frameworks.size() > 1) throw config_error("estimate takes one --framework");
    const gpu_catalog catalog = load_gpu_types(a.gpu_types);
    const auto [parsed, gpu] = build(a, catalog);
    const auto& j = parsed.job;
    validate(j);
    const step_time_model time =
        a.calibration.empty() ? step_time_model{} : step_time_model{calibrated_compute{load_calibration(a.calibration)}};
    auto e = estimate(j, gpu, a.margin, memory_estimator{}, time);
    // without a stated global batch, one micro-batch per step (cli.hpp build_job) and the planner chooses its own
    e.advice = advise(e, advice_options{parsed.global_batch_stated});
    const auto flags = flags_of(a, catalog, e);
    if (a.max_micro_batch && !gpu) throw config_error("--max-micro-batch needs --gpu TYPE or --gpus COUNTxTYPE");
    const auto limit = a.max_micro_batch ? std::optional(frenzy::max_micro_batch(j, *gpu, a.margin)) : std::nullopt;
    if (gpu && e.fit->verdict == fit_verdict::does_not_fit) frenzy_cli::exit_code() = frenzy_cli::exit_does_not_fit;
    nlohmann::ordered_json out = e;
    for (std::size_t i = 0; i < flags.changes.size(); ++i)
        if (flags.changes[i]) out["nearest_fits"][i]["flags"] = *flags.changes[i];
    if (flags.same_gpus) out["planner_same_gpus"]["flags"] = *flags.same_gpus;
    if (flags.fewest_gpus) out["planner_fewest_gpus"]["flags"] = *flags.fewest_gpus;
    if (limit) out["max_micro_batch"] = *limit;
    const auto data = dataset_of(a, j, gpu);
    if (data) out["dataset"] = *data;
    if (!a.html.empty()) frenzy_cli::write_html_report(out.dump(), "the estimate", a.html);
    if (a.json) {
        fmt::print("{}\n", out.dump(2));
        return;
    }
    print_estimate(e);
    if (limit)
        fmt::print("largest micro-batch that fits this layout: {} with the band, {} at the central estimate (of 1-{})\n",
                   limit->fits, limit->tight, limit->tried);
    if (data) print_dataset(*data, j);
    if (e.advice) print_advice(*e.advice, e.job, gpu->name, flags);
}

struct validate_args {
    std::vector<std::string> data;
    bool json = false, markdown = false, summary = false;
    double tolerance = 0;
};

/// One table x framework of `validate --summary`: how many rows, their mean and worst error, and how many the fit
/// rule covers: measured <= predicted x (1 + the estimate's uncertainty), what `fits` compares with the GPU's memory.
struct validation_group {
    std::string table, framework;
    int rows = 0, covered = 0;
    double sum_abs = 0, worst = 0;
};

void print_validation_summary(const std::vector<validation_group>& groups, bool markdown) {
    if (markdown) fmt::print("| table | framework | rows | mean abs error | worst | covered by its band |\n|---|---|---|---|---|---|\n");
    else fmt::print("{:<28} {:<14} {:>5} {:>9} {:>8} {:>12}\n", "table", "framework", "rows", "mean |e|", "worst", "covered");
    for (const auto& g : groups) {
        const double mae = g.sum_abs / g.rows;
        if (markdown)
            fmt::print("| {} | {} | {} | {:.1f}% | {:+.1f}% | {} of {} |\n", g.table, g.framework, g.rows, 100 * mae,
                       100 * g.worst, g.covered, g.rows);
        else
            fmt::print("{:<28.28} {:<14.14} {:>5} {:>8.1f}% {:>+7.1f}% {:>7} of {}\n", g.table, g.framework, g.rows, 100 * mae,
                       100 * g.worst, g.covered, g.rows);
    }
}

/// MARP against measurement tables: one row per measured run, predicted with the metric and stage the row states.
void run_validate(const validate_args& a) {
    using namespace frenzy;
    if (!(a.tolerance >= 0 && a.tolerance < 10))
        throw config_error("--tolerance=" + std::to_string(a.tolerance) + " must be a relative error in [0, 10)");
    std::vector<std::string> skipped, table_of;  // table_of[i]: the file of rows[i]
    std::vector<memory_measurement> rows;
    for (const auto& path : a.data) {
        auto part = read_memory_measurements(path, &skipped);
        if (part.empty()) throw config_error(path + ": no measured rows");
        rows.insert(rows.end(), part.begin(), part.end());
        table_of.resize(rows.size(), std::filesystem::path(path).filename().string());
    }
    std::vector<validation_group> groups;
    const memory_estimator est;
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    double sum = 0, worst = 0, worst_signed = 0;
    if (a.summary) {
    } else if (a.markdown)
        fmt::print("| id | run | metric | measured GiB | predicted GiB | error |\n|---|---|---|---|---|---|\n");
    else if (!a.json)
        fmt::print("{:<5} {:<9} {:<40} {:>10} {:>10} {:>8}\n", "id", "metric", "run", "measured", "predicted", "error");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& m = rows[i];
        const auto report = est.estimate(m.job);
        const double pred = compared_prediction(report, m);
        const double err = pred / m.measured.value - 1.0;
        sum += std::fabs(err);
        if (std::fabs(err) > worst) worst = std::fabs(err), worst_signed = err;
        const char* metric = to_string(m.metric);
        const std::string fw(to_string(m.job.runtime.framework));
        auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.table == table_of[i] && x.framework == fw; });
        if (g == groups.end()) g = groups.insert(groups.end(), validation_group{table_of[i], fw});
        ++g->rows;
        g->sum_abs += std::fabs(err);
        g->covered += m.measured.value <= pred * (1 + report.uncertainty);
        if (std::fabs(err) > std::fabs(g->worst)) g->worst = err;
        if (a.summary && !a.json) continue;
        if (a.json)
            out.push_back({{"id", m.id}, {"run", m.label}, {"metric", metric}, {"measured_bytes", m.measured.value},
                           {"predicted_bytes", pred}, {"error", err}});
        else if (a.markdown)
            fmt::print("| {} | {} | {} | {} | {} | {:+.1f}% |\n", m.id, m.label, metric, frenzy_cli::gib(m.measured.value),
                       frenzy_cli::gib(pred), 100 * err);
        else
            fmt::print("{:<5} {:<9} {:<40.40} {:>8} G {:>8} G {:>+7.1f}%\n", m.id, metric, m.label,
                       frenzy_cli::gib(m.measured.value), frenzy_cli::gib(pred), 100 * err);
    }
    const double mae = sum / static_cast<double>(rows.size());
    if (a.summary && !a.json) print_validation_summary(groups, a.markdown);
    if (a.json)
        fmt::print("{}\n", nlohmann::ordered_json{{"rows", out}, {"mean_abs_error", mae}, {"max_abs_error", worst},
                                                  {"skipped", skipped}}.dump(2));
    else {
        fmt::print("\n{} rows: mean absolute error {:.1f}%, worst {:+.1f}%\n", rows.size(), 100 * mae, 100 * worst_signed);
        for (const auto& s : skipped) fmt::print("{}skipped {}\n", a.markdown ? "- " : "", s);
    }
    if (a.tolerance > 0 && worst > a.tolerance) frenzy_cli::exit_code() = 1;
}

}  // namespace

void frenzy_cli::add_estimate(CLI::App& app) {
    auto a = std::make_shared<estimate_args>();
    auto* c = app.add_subcommand("estimate", "Per-GPU peak training memory (MARP) of one job and parallel configuration, "
                                             "and with --gpu whether it fits and how fast it runs");
    frenzy_cli::add_job_options(c, a->job);
    c->add_option("--gpu", a->gpu, "GPU type: report fit, step time and tokens/s on it (`frenzy gpus` lists them)");
    c->add_option("--gpus", a->gpus, "COUNTxTYPE, e.g. 8xh100-80g: that type, and dp = COUNT / (tp x pp x cp) unless --dp is given");
    c->add_option("--gpu-types", a->gpu_types, "JSON file with extra or overriding GPU types")->check(CLI::ExistingFile);
    c->add_option("--calibration", a->calibration, "Calibration JSON from `frenzy calibrate` for the step time")
        ->check(CLI::ExistingFile);
    frenzy_cli::add_margin(c, a->margin);
    c->add_option("--seq-lengths", a->seq_lengths, "With --gpu: token counts of the dataset's samples (CSV column or "
                                                  "length,count histogram; or JSON Lines): the peak over the dataset as "
                                                  "batched, the largest micro-batch that fits its longest batch, the "
                                                  "share of steps at risk (--seq-len is the cutoff)")
        ->check(CLI::ExistingFile);
    c->add_option("--batching", a->batching, "How --seq-lengths samples are batched: pad (random order, padded to the "
                                             "longest; default) | sorted (group_by_length) | pack (packed to --seq-len)");
    c->add_flag("--max-micro-batch", a->max_micro_batch, "With --gpu: also the largest micro-batch that fits this layout "
                                                        "(global batch kept; every divisor of global batch / dp tried)");
    c->add_flag("--json", a->json, fmt::format("Machine-readable output (keys in {})", frenzy_cli::formats_doc));
    frenzy_cli::add_html_option(c, a->html);
    c->footer("Exit status: 0 fits or tight, 4 does not fit (with --gpu/--gpus), 2 invalid input, 1 unreadable file.\n\n"
              "Examples:\n"
              "  frenzy estimate --model llama-3.1-8b --seq-len 8192 --sharding optimizer --recompute selective "
              "--gpus 8xh100-80g\n"
              "  frenzy estimate --model llama-3.1-8b --framework hf --finetune qlora --recompute full --gpus 1xrtx-4090\n"
              "  frenzy estimate --from megatron:train_llama3_8b_h100_fp8.sh --gpu h100-80g --json");
    c->callback([a] { run_estimate(*a); });
}

void frenzy_cli::add_validate(CLI::App& app) {
    auto a = std::make_shared<validate_args>();
    auto* c = app.add_subcommand("validate", "Compare MARP with measured peak memory (tables in the format of "
                                             "docs/formats.md, \"Measurement tables\")");
    c->add_option("--data", a->data, "CSV of measured runs (repeatable)")->required()->check(CLI::ExistingFile);
    c->add_option("--tolerance", a->tolerance, "Exit 1 when any row's relative error exceeds this (e.g. 0.12)")
        ->check(frenzy_cli::finite_number(frenzy::bounds::relative_error));
    auto* json = c->add_flag("--json", a->json, "Machine-readable output");
    c->add_flag("--markdown", a->markdown, "A Markdown table (what the README shows)")->excludes(json);  // issue 57
    c->add_flag("--summary", a->summary, "One line per table and framework instead of per row: rows, mean absolute "
                                         "error, worst, rows whose measured peak is within predicted x (1 + uncertainty), as the fit rule "
                                         "compares");
    c->callback([a] { run_validate(*a); });
}
