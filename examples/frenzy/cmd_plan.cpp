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
#include "frenzy/io/result_json.hpp"
#include "frenzy/io/calibration_json.hpp"
#include "frenzy/io/prices.hpp"
#include "frenzy/plan/planner.hpp"

namespace {

struct plan_args {
    frenzy_cli::job_args job;
    frenzy_cli::cluster_args cluster;
    std::string objective = "time", calibration;
    std::vector<std::string> prices;
    int top = 0;
    double margin = frenzy::default_margin;
    std::int64_t max_gpus = 0;
    bool tp_across_nodes = false, whole_nodes = false, pin_precision = false, json = false, no_overlap = false;
    bool mixed = false;
    std::string html;
};

/// A run's length for a person (minutes, hours or days), or "no budget" without a token budget.
std::string duration_of(bool has_budget, double s) {
    if (!has_budget) return "no budget";
    if (s < 3600) return fmt::format("{:.0f} min", s / 60);
    if (s < 2 * 86400) return fmt::format("{:.1f} h", s / 3600);
    return fmt::format("{:.1f} d", s / 86400);
}

std::string duration(const frenzy::plan& p) { return duration_of(p.has_budget, p.est_time.value); }

/// The plan's GPU type has no measured run on its chip (perf/error_band.hpp's first regime).
bool uncalibrated(const frenzy::plan& p) {
    return p.error_regime == frenzy::to_string(frenzy::error_regime::uncalibrated_chip);
}
/// The plan's MFU exceeds the best measured for its class (perf/mfu_ceiling.hpp).
bool above_ceiling(const frenzy::plan& p) { return p.mfu_ceiling > 0 && p.mfu > p.mfu_ceiling; }
/// The plan's speed was capped at that ceiling (plan::uncapped_tokens_per_s).
bool capped(const frenzy::plan& p) { return p.uncapped_tokens_per_s > 0; }

std::string layout(const frenzy::plan& p) {
    const auto& q = p.parallel;
    std::string s = fmt::format("dp{} tp{} pp{}", q.dp, q.tp, q.pp);
    if (q.vpp > 1) s += fmt::format(" vpp{}", q.vpp);
    if (q.cp > 1) s += fmt::format(" cp{}", q.cp);
    if (q.ep > 1) s += fmt::format(" ep{}", q.ep);
    if (q.sequence_parallel) s += " sp";
    return s;
}

/// "t4 x8 (1 stage, 6 layers) -> v100-32g x16 (2 stages, 34 layers)"
std::string groups_text(const frenzy::plan& p) {
    std::string s;
    for (const auto& g : p.groups)
        s += fmt::format("{}{} x{} ({} stage{}, {} layers)", s.empty() ? "" : " -> ", g.gpu, g.gpus, g.stages,
                         g.stages == 1 ? "" : "s", g.layers);
    return s;
}

/// Row `i` (from 1) of a plan table: a one-type plan as a line of the plans table's columns; a pipeline over
/// several types (plan::groups) as a line, then its stage groups. `cost`: prices are known.
void print_plan_row(std::size_t i, const frenzy::plan& p, bool cost) {
    using namespace frenzy;
    const auto& q = p.parallel;
    if (p.mixed()) {
        std::string split;
        for (auto l : q.stage_layers) split += (split.empty() ? "" : " ") + std::to_string(l);
        fmt::print("{:>3}  {:>4} GPUs  dp{} tp{} pp{}{}  {}  {}  mb {}  step {:.2f} s  {:.0f} tokens/s  +-{:.0f}%  MFU {:.0f}%  {}{}\n",
                   i, p.gpus, q.dp, q.tp, q.pp, q.sequence_parallel ? " sp" : "", to_string(p.precision),
                   to_string(q.recompute), p.micro_batch, p.step_time.value, p.tokens_per_s, 100 * p.rel_error_band,
                   100 * p.mfu, duration(p), cost && p.cost && p.has_budget ? fmt::format("  {:.0f} $", *p.cost) : "");
        fmt::print("     {}; layers per stage {}\n", groups_text(p), split);
        for (const auto& g : p.groups)
            fmt::print("     {:<10} {:>6}/{:<6} GiB need/cap, micro-batch slot {:.3f} s\n", g.gpu,
                       frenzy_cli::gib(g.required.value), frenzy_cli::gib(g.capacity.value), g.slot_s);
        return;
    }
    const std::string prec = std::string(to_string(p.precision)) + (p.precision_alternative ? "*" : "");
    const std::string band = fmt::format("+-{:.0f}%{}", 100 * p.rel_error_band, uncalibrated(p) ? "~" : "");
    const std::string mfu = fmt::format("{:.0f}%{}", 100 * p.mfu, above_ceiling(p) ? "!" : capped(p) ? "^" : "");
    fmt::print("{:>3}  {:<10} {:>5} {:>5}  {:<9} {:<11} {:<20} {:<9} {:<9} {:>3}  {:>6}/{:<6}  {:>8.2f} {:>10.0f} {:>6} {:>5} {:>9} {:>10}{}\n",
               i, p.gpu, p.gpus, p.nodes, to_string(p.framework), prec, layout(p), to_string(q.sharding),
               to_string(q.recompute), p.micro_batch, frenzy_cli::gib(p.required.value), frenzy_cli::gib(p.capacity.value),
               p.step_time.value, p.tokens_per_s, band, mfu, duration(p),
               p.has_budget ? fmt::format("{:.0f}", p.billed_gpu_hours) : "-",
               cost ? (p.cost && p.has_budget ? fmt::format(" {:>10.0f} $", *p.cost) : fmt::format(" {:>12}", "-")) : "");
}

/// The mixed plans (plan --mixed): one row each (print_plan_row), or why there are none.
void print_mixed(const frenzy::plan_result& r, std::size_t shown, bool cost) {
    fmt::print("\nmixed plans (pipeline stages on two GPU types, Megatron-LM --pipeline-model-parallel-layout):\n");
    if (r.mixed.empty()) {
        fmt::print("  none: {}\n", r.mixed_note);
        return;
    }
    const auto n = std::min(shown, r.mixed.size());
    for (std::size_t i = 0; i < n; ++i) print_plan_row(i + 1, r.mixed[i], cost);
    if (n < r.mixed.size()) fmt::print("... {} more (--top N)\n", r.mixed.size() - n);
}

void print_plans(const frenzy::parsed_job& parsed, const frenzy::plan_result& r, const frenzy::plan_stats& stats,
                 const frenzy::plan_options& opt, std::size_t shown, const std::string& objective) {
    using namespace frenzy;
    const auto& j = parsed.job;
    fmt::print("job {}: {}, seq {}, global batch {}{}, {}{}, {}; objective {}\n", j.name,
               frenzy_cli::parameters_text(r.parameters, r.active_parameters), j.training.seq_len, j.training.global_batch,
               parsed.global_batch_chosen ? " (not given: DeepSeek LLM's batch-size law for the budget; --global-batch N sets it)" : "",
               frenzy_cli::precision_text(j), frenzy_cli::finetune_text(j),
               j.training.total_tokens > 0 ? fmt::format("{:.3g} tokens", j.training.total_tokens)
                                           : "no token budget (time and GPU-hours not known)",
               objective);
    fmt::print("searched {} layouts ({} configurations, {} memory estimates); {:.0f}% of GPU memory kept free{}\n\n",
               stats.layouts, stats.configurations, stats.memory_estimates, 100 * opt.margin,
               opt.whole_node_billing ? "; whole nodes billed" : "");
    const bool cost = !opt.price_per_gpu_hour.empty();
    fmt::print("{:>3}  {:<10} {:>5} {:>5}  {:<9} {:<11} {:<20} {:<9} {:<9} {:>3}  {:>13}  {:>8} {:>10} {:>6} {:>5} {:>9} {:>10}{}\n",
               "#", "gpu", "gpus", "nodes", "framework", "precision", "layout", "sharding", "recompute", "mb",
               "GiB need/cap", "step s", "tokens/s", "band", "MFU", "time", "GPU-hours", cost ? "        cost" : "");
    for (std::size_t i = 0; i < shown; ++i) print_plan_row(i + 1, r.plans[i], cost);
    if (shown < r.plans.size()) fmt::print("... {} more (--top N)\n", r.plans.size() - shown);
    if (std::any_of(r.plans.begin(), r.plans.begin() + static_cast<std::ptrdiff_t>(shown),
                    [](const plan& p) { return p.precision_alternative; }))
        fmt::print("* the GPU type lacks the job's {}: the nearest precision it has is offered (--pin-precision to "
                   "refuse)\n", to_string(j.training.precision));
    const auto first = r.plans.begin(), last = r.plans.begin() + static_cast<std::ptrdiff_t>(shown);
    fmt::print("band: the speed's error band (nine in ten runs of its regime within it; docs/perf-model.md)\n");
    if (std::any_of(first, last, uncalibrated))
        fmt::print("~ no measured run on this GPU type's chip: its speed rests on datasheet peaks alone\n");
    if (std::any_of(first, last, above_ceiling))
        fmt::print("! MFU above the best measured for the chip, precision and model size (data/throughput/): optimistic\n");
    if (std::any_of(first, last, capped))
        fmt::print("^ speed, time and cost capped at the best MFU measured for the chip, precision and model size "
                   "(data/throughput/); the model's own figure is uncapped_tokens_per_s in --json\n");
    const auto per = summarize_by_type(r);
    if (!per.empty()) fmt::print("\nper GPU type (best type first):\n");
    for (const auto& t : per)
        fmt::print("  {:<10} minimum {:>4} GPUs ({}, {:.0f} tokens/s, {}); fastest {:>4} GPUs ({}, {:.0f} tokens/s, {})\n", t.gpu,
                   t.minimum.gpus, layout(t.minimum), t.minimum.tokens_per_s, duration(t.minimum), t.fastest.gpus,
                   layout(t.fastest), t.fastest.tokens_per_s, duration(t.fastest));
    if (!r.infeasible.empty()) fmt::print("\ninfeasible:\n");
    for (const auto& f : r.infeasible) fmt::print("  {:<10} {}\n", f.gpu, f.reason);
}

void run_plan(const plan_args& a) {
    using namespace frenzy;
    auto parsed = frenzy_cli::build_job(frenzy_cli::with_import_world_size(a.job, a.cluster));
    parsed.choose_global_batch();
    const auto cluster = frenzy_cli::build_cluster(a.cluster);
    plan_options opt;
    opt.objective = parse_enum<plan_objective>("--objective", a.objective);
    opt.margin = a.margin;
    opt.max_gpus = a.max_gpus;
    opt.allow_tp_across_nodes = a.tp_across_nodes;
    opt.framework_overlap = !a.no_overlap;
    opt.whole_node_billing = a.whole_nodes;
    opt.pin_precision = a.pin_precision;
    opt.constraints = parsed.stated;
    opt.mixed = a.mixed;
    for (const auto& f : a.job.frameworks) opt.frameworks.push_back(parse_enum<framework>("--framework", f));
    frenzy_cli::apply_prices(opt, a.prices, cluster);
    step_time_model time;
    if (!a.calibration.empty()) time = step_time_model(calibrated_compute{load_calibration(a.calibration)});
    const planner::with_time_model<step_time_model> planner(memory_estimator{}, time);
    plan_stats stats;
    const auto r = planner.plan(parsed.job, cluster, opt, &stats);
    const std::size_t shown = a.top > 0 ? std::min<std::size_t>(static_cast<std::size_t>(a.top), r.plans.size())
                                        : (a.json ? r.plans.size() : std::min<std::size_t>(10, r.plans.size()));
    if (!a.html.empty()) frenzy_cli::write_html_report(plan_result_json(r, r.plans.size()).dump(), "the plans", a.html);
    if (a.json)
        fmt::print("{}\n", plan_result_json(r, shown).dump(2));
    else
        print_plans(parsed, r, stats, opt, shown, a.objective);
    if (!a.json && a.mixed)
        print_mixed(r, a.top > 0 ? static_cast<std::size_t>(a.top) : 10, !opt.price_per_gpu_hour.empty());
    // no plan: exit 1, or 2 when the job itself breaks a rule on every type (a bad input, docs/cli.md)
    if (r.plans.empty() && r.mixed.empty())
        frenzy_cli::exit_code() = !r.infeasible.empty() && std::all_of(r.infeasible.begin(), r.infeasible.end(),
                                                                       [](const auto& t) { return t.job_invalid(); })
                                      ? 2
                                      : 1;
    if (frenzy_cli::exit_code() == 2)  // a bad input: its reason on stderr too, as every other bad input's
        fmt::print(stderr, "error: {}\n", r.infeasible.front().reason);
}

}  // namespace

void frenzy_cli::add_plan(CLI::App& app) {
    auto a = std::make_shared<plan_args>();
    auto* c = app.add_subcommand("plan", "Rank GPU types, counts and parallel configurations for a job on a cluster");
    c->footer("Layout fields the job states (its `parallel` keys, training.micro_batch, or the --dp/--tp/... flags) are "
              "kept; the rest is searched. Exit 0 with plans, 1 when no GPU type can run the job, 2 on invalid input.\n\n"
              "Examples:\n"
              "  frenzy plan --model llama-3.1-8b --seq-len 8192 --global-batch 256 --total-tokens 2e10 --gpus 8xh100-80g\n"
              "  frenzy plan --job examples/jobs/plan-llama-2-7b.json --cluster examples/clusters/three-type.json "
              "--price example --objective cost --html plan.html\n"
              "  frenzy plan --model llama-2-13b --cluster examples/clusters/three-type.json --mixed --top 3");
    frenzy_cli::add_job_options(c, a->job);
    frenzy_cli::add_cluster_options(c, a->cluster);
    c->add_option("--objective", a->objective, "time | gpu-hours | cost (default time; ties go to the faster plan)");
    frenzy_cli::add_price_option(c, a->prices);
    c->add_flag("--whole-nodes", a->whole_nodes, "Bill whole nodes: 5 GPUs of an 8-GPU node cost 8");
    c->add_flag("--pin-precision", a->pin_precision, "Never offer another precision on types that lack the job's");
    c->add_option("--top", a->top, "Show the N best plans (default 10 in the table, all in --json)")->check(frenzy_cli::whole_number(frenzy::bounds::shown));
    c->add_option("--calibration", a->calibration, "Calibration JSON from `frenzy calibrate`")->check(CLI::ExistingFile);
    frenzy_cli::add_margin(c, a->margin);
    c->add_option("--max-gpus", a->max_gpus, "Largest GPU count per plan (default: what the cluster has)")->check(frenzy_cli::whole_number(frenzy::bounds::gpu_limit));
    c->add_flag("--tp-across-nodes", a->tp_across_nodes, "Allow tensor parallelism to span nodes");
    c->add_flag("--mixed", a->mixed,
                "Also plan pipelines whose stages run on two GPU types (Megatron-LM; the layers split unevenly so "
                "that each type's stages are as fast as its memory allows; docs/perf-model.md, \"Mixed plans\")");
    c->add_flag("--no-overlap", a->no_overlap,
                "Keep the job's own overlap flags instead of turning on what the framework supports (Megatron "
                "--overlap-grad-reduce, --tp-comm-overlap)");
    c->add_flag("--json", a->json, fmt::format("Machine-readable output (keys in {})", frenzy_cli::formats_doc));
    frenzy_cli::add_html_option(c, a->html);
    c->callback([a] { run_plan(*a); });
}
