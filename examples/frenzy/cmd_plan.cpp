// `frenzy plan`: which GPU types, how many, and which parallel configuration, ranked by an objective.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "frenzy/io/cluster_json.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/perf/calibration.hpp"
#include "frenzy/plan/planner.hpp"

namespace {

struct plan_args {
    std::string job, cluster, objective = "time", calibration;
    std::vector<std::string> prices, frameworks;
    int top = 0;
    double margin = 0.9;
    std::int64_t max_gpus = 0;
    bool tp_across_nodes = false;
    bool json = false;
};

std::string duration(double s) {
    if (s <= 0) return "-";
    if (s < 3600) return fmt::format("{:.0f} min", s / 60);
    if (s < 2 * 86400) return fmt::format("{:.1f} h", s / 3600);
    return fmt::format("{:.1f} d", s / 86400);
}

std::string layout(const frenzy::plan& p) {
    const auto& q = p.parallel;
    std::string s = fmt::format("dp{} tp{} pp{}", q.dp, q.tp, q.pp);
    if (q.vpp > 1) s += fmt::format(" vpp{}", q.vpp);
    if (q.ep > 1) s += fmt::format(" ep{}", q.ep);
    if (q.sequence_parallel) s += " sp";
    return s;
}

nlohmann::ordered_json plan_json(const frenzy::plan& p) {
    const auto& q = p.parallel;
    const nlohmann::ordered_json par{{"dp", q.dp}, {"tp", q.tp}, {"pp", q.pp}, {"vpp", q.vpp}, {"cp", q.cp}, {"ep", q.ep},
                                     {"sequence_parallel", q.sequence_parallel},
                                     {"sharding", frenzy::to_string(q.sharding)},
                                     {"recompute", frenzy::to_string(q.recompute)},
                                     {"pipeline_schedule", frenzy::to_string(q.schedule)}};
    return {{"gpu", p.gpu},
            {"gpus", p.gpus},
            {"nodes", p.nodes},
            {"parallel", par},
            {"micro_batch", p.micro_batch},
            {"peak_allocated_bytes", std::llround(p.peak_allocated.value)},
            {"capacity_bytes", std::llround(p.capacity.value)},
            {"step_time_s", p.step_time.value},
            {"tokens_per_s", p.tokens_per_s},
            {"est_time_s", p.est_time.value},
            {"gpu_hours", p.gpu_hours}};
}

void run_plan(const plan_args& a) {
    using namespace frenzy;
    const auto parsed = load_job(a.job);
    const auto cluster = load_cluster(a.cluster);
    plan_options opt;
    opt.objective = parse_enum<plan_objective>("--objective", a.objective);
    opt.memory_safety = a.margin;
    opt.max_gpus = a.max_gpus;
    opt.allow_tp_across_nodes = a.tp_across_nodes;
    for (const auto& f : a.frameworks) opt.frameworks.push_back(parse_enum<framework>("--framework", f));
    for (const auto& p : a.prices) {
        const auto eq = p.find('=');
        if (eq == std::string::npos || eq == 0) throw config_error("--price \"" + p + "\" must be TYPE=USD_PER_HOUR");
        const auto type = p.substr(0, eq);
        cluster.catalog.at(type, "--price");
        double usd = 0;
        try {
            std::size_t used = 0;
            usd = std::stod(p.substr(eq + 1), &used);
            if (used != p.size() - eq - 1) throw std::invalid_argument(p);
        } catch (const std::exception&) {
            throw config_error("--price \"" + p + "\": the price is not a number");
        }
        if (!(usd >= 0)) throw config_error("--price \"" + p + "\": the price must not be negative");
        opt.price_per_gpu_hour[type] = usd;
    }
    step_time_model time;
    if (!a.calibration.empty()) time = step_time_model(calibrated_compute{load_calibration(a.calibration)});
    const basic_planner<memory_estimator, step_time_model> planner(memory_estimator{}, time);
    plan_stats stats;
    const auto r = planner.plan(parsed.job, cluster, opt, &stats);
    const std::size_t shown = a.top > 0 ? std::min<std::size_t>(static_cast<std::size_t>(a.top), r.plans.size())
                                        : (a.json ? r.plans.size() : std::min<std::size_t>(10, r.plans.size()));
    if (a.json) {
        nlohmann::ordered_json out{{"plans", nlohmann::ordered_json::array()}, {"infeasible", nlohmann::ordered_json::array()}};
        for (std::size_t i = 0; i < shown; ++i) out["plans"].push_back(plan_json(r.plans[i]));
        for (const auto& f : r.infeasible) out["infeasible"].push_back({{"gpu", f.gpu}, {"reason", f.reason}});
        fmt::print("{}\n", out.dump(2));
        return;
    }
    const auto& j = parsed.job;
    fmt::print("job {}: {:.3g}B parameters, seq {}, global batch {}, {}, {} tokens; objective {}\n", j.name,
               total_parameters(j.model, j.training.seq_len) / 1e9, j.training.seq_len, j.training.global_batch,
               to_string(j.training.precision), j.training.total_tokens > 0 ? fmt::format("{:.3g}", j.training.total_tokens) : "no budget of",
               a.objective);
    fmt::print("searched {} layouts ({} configurations, {} memory estimates); memory margin {:.0f}%\n\n", stats.layouts,
               stats.configurations, stats.memory_estimates, 100 * opt.memory_safety);
    const bool cost = !opt.price_per_gpu_hour.empty();
    fmt::print("{:>3}  {:<10} {:>5} {:>5}  {:<22} {:<9} {:<9} {:>3}  {:>13}  {:>8} {:>10} {:>5} {:>9} {:>10}{}\n", "#", "gpu", "gpus",
               "nodes", "layout", "sharding", "recompute", "mb", "GiB used/cap", "step s", "tokens/s", "MFU", "time",
               "GPU-hours", cost ? "        cost" : "");
    for (std::size_t i = 0; i < shown; ++i) {
        const auto& p = r.plans[i];
        fmt::print("{:>3}  {:<10} {:>5} {:>5}  {:<22} {:<9} {:<9} {:>3}  {:>6}/{:<6}  {:>8.2f} {:>10.0f} {:>4.0f}% {:>9} {:>10.0f}{}\n",
                   i + 1, p.gpu, p.gpus, p.nodes, layout(p), to_string(p.parallel.sharding), to_string(p.parallel.recompute),
                   p.micro_batch, frenzy_cli::gib(p.peak_allocated.value), frenzy_cli::gib(p.capacity.value),
                   p.step_time.value, p.tokens_per_s, 100 * p.mfu, duration(p.est_time.value), p.gpu_hours,
                   cost ? fmt::format(" {:>10.0f} $", p.cost) : "");
    }
    if (shown < r.plans.size()) fmt::print("... {} more (--top N)\n", r.plans.size() - shown);
    // per type: the minimum-GPU plan and the fastest plan
    const auto per = summarize_by_type(r);
    if (!per.empty()) fmt::print("\nper GPU type (best type first):\n");
    for (const auto& t : per)
        fmt::print("  {:<10} minimum {:>4} GPUs ({}, {:.0f} tokens/s, {}); fastest {:>4} GPUs ({}, {:.0f} tokens/s, {})\n", t.gpu,
                   t.minimum.gpus, layout(t.minimum), t.minimum.tokens_per_s, duration(t.minimum.est_time.value),
                   t.fastest.gpus, layout(t.fastest), t.fastest.tokens_per_s, duration(t.fastest.est_time.value));
    if (!r.infeasible.empty()) fmt::print("\ninfeasible:\n");
    for (const auto& f : r.infeasible) fmt::print("  {:<10} {}\n", f.gpu, f.reason);
    if (r.plans.empty()) frenzy_cli::exit_code() = 1;
}

const frenzy_cli::registrar reg_plan{30, [](CLI::App& app) {
    auto a = std::make_shared<plan_args>();
    auto* c = app.add_subcommand("plan", "Rank GPU types, counts and parallel configurations for a job on a cluster");
    c->add_option("--job", a->job, "Job spec JSON (DESIGN.md; `parallel` is ignored)")->required()->check(CLI::ExistingFile);
    c->add_option("--cluster", a->cluster, "Cluster spec JSON (DESIGN.md)")->required()->check(CLI::ExistingFile);
    c->add_option("--objective", a->objective, "time | gpu-hours | cost (default time)");
    c->add_option("--price", a->prices, "Price per GPU-hour, TYPE=USD (repeatable; needed for --objective cost)");
    c->add_option("--top", a->top, "Show the N best plans (default 10 in the table, all in --json)")->check(CLI::NonNegativeNumber);
    c->add_option("--calibration", a->calibration, "Calibration JSON from `frenzy calibrate`")->check(CLI::ExistingFile);
    c->add_option("--margin", a->margin, "Usable share of GPU memory (default 0.9)")->check(CLI::Range(0.01, 1.0));
    c->add_option("--max-gpus", a->max_gpus, "Largest GPU count per plan (default: what the cluster has)")->check(CLI::NonNegativeNumber);
    c->add_option("--framework", a->frameworks, "Frameworks to consider (repeatable; default the job's runtime.framework)");
    c->add_flag("--tp-across-nodes", a->tp_across_nodes, "Allow tensor parallelism to span nodes");
    c->add_flag("--json", a->json, "Machine-readable output (DESIGN.md keys)");
    c->callback([a] { run_plan(*a); });
}};

}  // namespace
