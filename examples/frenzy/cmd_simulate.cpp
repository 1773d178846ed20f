// `frenzy simulate`: replay a job trace on a cluster under HAS or a baseline (or all side by side).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "frenzy/io/cluster_json.hpp"
#include "frenzy/plan/planner.hpp"
#include "frenzy/sim/policies.hpp"
#include "frenzy/sim/simulator.hpp"
#include "frenzy/sim/trace.hpp"

namespace {

struct simulate_args {
    std::string cluster, trace, policy = "has", jobs_csv, html;
    bool json = false, quiet = false, runs = false;
    std::uint64_t seed = 1;
    double startup_s = 30, restart_s = 30, mtbf_s = 0, repair_s = 3600, mtbf_h = -1, repair_h = -1, has_slack = 0.25, has_idle_slack = 1.0, has_max_share = 1.0, has_equi = 16.0, has_aging_s = 4 * 3600;
    bool has_no_expand = false;
    bool has_moves = false;
    double has_move_gain = 0.2;
    int has_max_moves = 2;
    double speed_error = 0, ckpt_GBps = 0, has_preempt_factor = 2.0;
    bool has_no_preempt = false, has_no_learn = false;
    bool mixed = false;  // plan pipelines over two GPU types too (plan_options::mixed); HAS may start them
    std::string sizes = "native";
    // Baselines' knobs (swept on the tuning workload, docs/results.md "Tuning"); defaults are the library's.
    std::vector<double> tiresias_queues_gpu_h{1.0, 10.0};
    double tiresias_promote = 8, gavel_round_s = 360, sia_p = -0.5, sia_lambda = 1.1;
    bool sia_no_restart_lock = false;
#ifdef FRENZY_HAS_GLPK
    int sia_nodes = frenzy::sia_policy_options{}.ilp.node_limit;
    double sia_time_limit_s = frenzy::sia_policy_options{}.ilp.time_limit_s;
    double sia_gap = frenzy::sia_policy_options{}.ilp.mip_gap;
#endif
    std::uint64_t max_events = 50'000'000;
    int max_failures = 50;
};

frenzy::size_regime parse_sizes(const std::string& s) {
    if (s == "native") return frenzy::size_regime::native;
    if (s == "requested") return frenzy::size_regime::requested;
    if (s == "free") return frenzy::size_regime::free;
    throw frenzy::config_error("--sizes=\"" + s + "\" is not one of: native | requested | free");
}

frenzy::any_scheduler make_policy(const std::string& n, const simulate_args& a, const frenzy::sim_options& so) {
    using namespace frenzy;
    policy_options po;
    po.has = has_options{.efficiency_slack = a.has_slack, .idle_slack = a.has_idle_slack, .max_share = a.has_max_share, .equi_share = a.has_equi, .expand_idle = !a.has_no_expand,
                         .learn = !a.has_no_learn, .preempt = !a.has_no_preempt, .preempt_factor = a.has_preempt_factor};
    po.has.moves = a.has_moves;
    po.has.move_gain = a.has_move_gain;
    po.has.max_moves = a.has_max_moves;
    po.has_order = shortest_remaining_first{.aging_s = a.has_aging_s};
    for (std::size_t i = 1; i < a.tiresias_queues_gpu_h.size(); ++i)
        if (!(a.tiresias_queues_gpu_h[i] > a.tiresias_queues_gpu_h[i - 1]))
            throw config_error("--tiresias-queues: the limits must ascend (" + std::to_string(a.tiresias_queues_gpu_h[i]) +
                               " GPU-hours follows " + std::to_string(a.tiresias_queues_gpu_h[i - 1]) + ")");
    frenzy::check_bound("--gavel-round", a.gavel_round_s, frenzy::bounds::sched_round_s);
    po.tiresias.thresholds_gpu_s.clear();
    for (double h : a.tiresias_queues_gpu_h) po.tiresias.thresholds_gpu_s.push_back(h * 3600);
    po.tiresias.promote_knob = a.tiresias_promote;
#ifdef FRENZY_HAS_GLPK
    po.gavel.round_s = a.gavel_round_s;
    po.sia.ilp.p = a.sia_p;
    po.sia.ilp.lambda = a.sia_lambda;
    po.sia.restart_lock = !a.sia_no_restart_lock;
    po.sia.ilp.node_limit = a.sia_nodes;
    if (!(a.sia_time_limit_s > 0)) throw config_error(fmt::format("--sia-time-limit={:g} s must be > 0", a.sia_time_limit_s));
    po.sia.ilp.time_limit_s = a.sia_time_limit_s;
    po.sia.ilp.mip_gap = a.sia_gap;
#endif
    return make_scheduler(n, policy_options_for(so, po));  // start-up and restart costs as charged
}

/// The simulator's options from the command line (the policy's name only labels the progress bar).
frenzy::sim_options sim_options_from(const simulate_args& a) {
    frenzy::sim_options o;
    o.seed = a.seed;
    o.startup_s = a.startup_s;
    o.restart_s = a.restart_s;
    o.node_mtbf_s = a.mtbf_h >= 0 ? a.mtbf_h * 3600 : a.mtbf_s;  // --mtbf-h/--repair-h: the older hour options
    o.node_repair_s = a.repair_h >= 0 ? a.repair_h * 3600 : a.repair_s;
    o.speed_error = a.speed_error;
    o.checkpoint_GBps = a.ckpt_GBps;
    o.sizes = parse_sizes(a.sizes);
    o.max_events = a.max_events;
    o.max_failures = a.max_failures;
    return o;
}

/// One policy's run, with a progress bar on a terminal (stderr) unless --quiet or --json.
frenzy::sim_result run_policy(const std::string& name, const simulate_args& a, const frenzy::cluster_spec& cluster,
                              const std::vector<frenzy::trace_job>& trace, const frenzy::plan_provider& plans) {
    auto o = sim_options_from(a);
    const bool bar = !a.quiet && !a.json && isatty(2);
    auto last = std::chrono::steady_clock::now();
    const auto began = last;
    bool shown = false;
    if (bar)
        o.progress = [&](double done, double now_s) {
            const auto t = std::chrono::steady_clock::now();
            if (t - last < std::chrono::milliseconds(200) || t - began < std::chrono::milliseconds(500)) return;
            last = t;
            shown = true;
            const int w = 30, k = static_cast<int>(done * w);
            fmt::print(stderr, "\r{:<9} [{}{}] {:3.0f}%  sim time {:.1f} h", name, std::string(static_cast<std::size_t>(k), '#'),
                       std::string(static_cast<std::size_t>(w - k), '.'), done * 100, now_s / 3600);
        };
    auto r = frenzy::simulate(cluster, trace, plans, make_policy(name, a, o), o);
    if (shown) fmt::print(stderr, "\r{:<70}\r", "");
    return r;
}

/// -o/--out: one row per job and policy, one header.
void write_jobs_file(const std::string& path, const std::vector<frenzy::sim_result>& results) {
    auto f = frenzy::open_output(path, "-o/--out", std::ios::out);
    for (std::size_t i = 0; i < results.size(); ++i) {
        std::ostringstream s;
        frenzy::write_jobs_csv(s, results[i]);
        std::string text = s.str();
        if (i > 0) text = text.substr(text.find('\n') + 1);  // one header
        f << text;
    }
}

/// One policy's `--json` object; with `runs`, every job's runs, the queue and busy GPUs over time, and the
/// cluster's GPU count (what the report draws).
nlohmann::json policy_json(const frenzy::sim_result& r, bool runs, int cluster_gpus) {
    nlohmann::json out = to_json(r.metrics);
    if (!runs) return out;
    out["cluster_gpus"] = cluster_gpus;
    nlohmann::json jobs = nlohmann::json::array(), line = nlohmann::json::array();
    for (const auto& j : r.jobs) jobs.push_back(to_json(j));
    for (const auto& p : frenzy::timeline(r.jobs)) line.push_back(to_json(p));
    out["job_runs"] = std::move(jobs);
    out["timeline"] = std::move(line);
    return out;
}

/// The `--json` document: one policy's object, or an array of them with --policy all.
nlohmann::json simulate_json(const simulate_args& a, const std::vector<frenzy::sim_result>& results, bool runs,
                             int cluster_gpus) {
    if (a.policy != "all") return policy_json(results.front(), runs, cluster_gpus);
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : results) arr.push_back(policy_json(r, runs, cluster_gpus));
    return arr;
}

/// HAS against the best other policy by average JCT, when HAS ran with others.
void print_has_lead(const std::vector<frenzy::sim_result>& results) {
    if (results.size() < 2 || results.front().metrics.policy != "has") return;
    double best = 0;
    std::string who;
    for (std::size_t i = 1; i < results.size(); ++i)
        if (results[i].metrics.completed > 0 && (who.empty() || results[i].metrics.avg_jct_s < best)) {
            best = results[i].metrics.avg_jct_s;
            who = results[i].metrics.policy;
        }
    if (!who.empty() && best > 0)
        fmt::print("HAS average JCT is {:.1f}% {} than the best baseline ({})\n",
                   std::abs(1 - results.front().metrics.avg_jct_s / best) * 100,
                   results.front().metrics.avg_jct_s <= best ? "lower" : "higher", who);
}

void print_table(const simulate_args& a, const frenzy::cluster_spec& cluster, std::size_t jobs,
                 const std::vector<frenzy::sim_result>& results) {
    fmt::print("{} jobs on {} GPUs ({}), start-up {:.0f} s, restart {:.0f} s{}\n", jobs,
               cluster.total_gpus(), a.cluster, a.startup_s, a.restart_s,
               (a.mtbf_h > 0 || a.mtbf_s > 0 ? fmt::format(", node MTBF {:.0f} h", a.mtbf_h >= 0 ? a.mtbf_h : a.mtbf_s / 3600) : std::string{}) +
                   (a.speed_error > 0 ? fmt::format(", speed error {:g} (seed {})", a.speed_error, a.seed) : std::string{}) +
                   (a.sizes != "native" ? ", sizes " + a.sizes : std::string{}) + (a.mixed ? ", mixed plans on" : ""));
    fmt::print("{:<9} {:>5} {:>5} {:>10} {:>10} {:>10} {:>11} {:>10} {:>6} {:>6} {:>7} {:>10} {:>10}\n", "policy", "done",
               "fail", "avg JCT h", "p50 JCT h", "p99 JCT h", "makespan h", "avg queue h", "util", "calls", "",
               "mean us", "p99 us");
    for (const auto& r : results) {
        const auto& m = r.metrics;
        fmt::print("{:<9} {:>5} {:>5} {:>10.2f} {:>10.2f} {:>10.2f} {:>11.2f} {:>10.2f} {:>6.2f} {:>6} {:>7} {:>10.1f} {:>10.1f}\n",
                   m.policy, m.completed, m.failed_jobs, m.avg_jct_s / 3600, m.p50_jct_s / 3600, m.p99_jct_s / 3600,
                   m.makespan_s / 3600, m.avg_queue_s / 3600, m.gpu_utilization, m.sched_calls, "",
                   m.sched_mean_us, m.sched_p99_us);
    }
    for (const auto& r : results)
        if (r.metrics.solver_solves > 0)
            fmt::print("{}: the per-round program was solved {} times, proved optimal (within the gap) {} times ({:.1f}%), "
                       "stopped at the wall-clock limit {} times\n", r.metrics.policy, r.metrics.solver_solves,
                       r.metrics.solver_optimal, 100.0 * r.metrics.solver_optimal / r.metrics.solver_solves,
                       r.metrics.solver_timed_out);
    for (const auto& r : results)
        if (r.metrics.moves > 0)
            fmt::print("{}: {} moves of running jobs, {:.2f} h spent moving (no progress)\n", r.metrics.policy, r.metrics.moves,
                       r.metrics.moving_s / 3600);
    print_has_lead(results);
}

void run_simulate(const simulate_args& a) {
    using namespace frenzy;
    if (a.runs && !a.json) throw config_error("--runs adds to the --json output: give --json too (or --html FILE for the report)");
    const cluster_spec cluster = load_cluster(a.cluster);
    const auto trace = load_trace(a.trace);
    plan_options popt;
    popt.mixed = a.mixed;
    const plan_provider plans =
        cached_plan_provider([&cluster, popt](const job_spec& j) { return planner{}.plan(j, cluster, popt); });
    std::vector<sim_result> results;
    for (const auto& name : select_policies(a.policy, "--policy")) results.push_back(run_policy(name, a, cluster, trace, plans));
    if (!a.jobs_csv.empty()) write_jobs_file(a.jobs_csv, results);
    if (!a.html.empty()) frenzy_cli::write_html_report(simulate_json(a, results, true, cluster.total_gpus()).dump(), "the simulation", a.html);
    if (a.json)
        fmt::print("{}\n", simulate_json(a, results, a.runs, cluster.total_gpus()).dump(2));
    else
        print_table(a, cluster, trace.size(), results);
}

}  // namespace

namespace {
/// --json, --runs, --html, --quiet.
void add_output_options(CLI::App* c, simulate_args& a) {
    c->add_flag("--json", a.json, "Machine-readable output (keys in docs/formats.md); with --policy all an array");
    c->add_flag("--runs", a.runs, "With --json: every job's runs (start, end, GPU type, GPUs, nodes, how it ended), the "
                                  "queue and busy GPUs over time, and the cluster's GPUs (what `frenzy report` draws)");
    frenzy_cli::add_html_option(c, a.html);
    c->add_flag("--quiet", a.quiet, "No progress bar");
}
/// --has-no-expand, and HAS's moves: --has-moves, --has-move-gain, --has-max-moves (issue 56).
void add_move_options(CLI::App* c, simulate_args& a) {
    c->add_flag("--has-no-expand", a.has_no_expand, "HAS: do not restart running jobs on idle GPUs of their type");
    c->add_flag("--has-moves", a.has_moves, "HAS: move running jobs to another plan (GPU count or type) when that ends them "
                                             "--has-move-gain of their remaining time earlier, the move's cost (the cluster's "
                                             "\"moves\") included, and shrink running jobs to start waiting ones (replaces expansion)");
    c->add_option("--has-move-gain", a.has_move_gain, "HAS with --has-moves: the margin a move must gain, a fraction of the "
                                                       "job's remaining time (default 0.2)")->check(frenzy_cli::finite_number(frenzy::bounds::fraction));
    c->add_option("--has-max-moves", a.has_max_moves, "HAS with --has-moves: moves per job at most (default 2)")->check(frenzy_cli::whole_number(frenzy::bounds::scan));
}
}  // namespace

/// The summary and the examples of `simulate --help` (issue 55: examples per subcommand).
constexpr const char* simulate_summary = "Replay a job trace on a cluster under HAS or a baseline scheduler";
constexpr const char* simulate_examples =
    "Examples:\n"
    "  frenzy simulate --cluster examples/clusters/three-type.json --trace examples/traces/small.csv --policy all\n"
    "  frenzy simulate --cluster examples/clusters/three-type.json --trace examples/traces/small.csv --policy all "
    "--html sim.html";

void frenzy_cli::add_simulate(CLI::App& app) {
    auto a = std::make_shared<simulate_args>();
    auto* c = app.add_subcommand("simulate", simulate_summary)->footer(simulate_examples);
    c->add_option("--cluster", a->cluster, "Cluster spec JSON")->required()->check(CLI::ExistingFile);
    c->add_option("--trace", a->trace, "Trace CSV (docs/formats.md; see `frenzy trace synth`)")->required()->check(CLI::ExistingFile);
    c->add_option("--policy", a->policy, frenzy::policy_help(true));  // the registry (sched/policy_registry.hpp)
    c->add_option("--seed", a->seed, "Seed of the random node failures (default 1)");
    c->add_option("-o,--out,--jobs-csv", a->jobs_csv, "Write one row per job (and policy) to this CSV");
    frenzy_cli::add_duration(c, "--startup", a->startup_s, "Start-up cost of a job's first launch (default 30s)");
    frenzy_cli::add_duration(c, "--restart", a->restart_s, "Cost of every later launch (default 30s)");
    frenzy_cli::add_duration(c, "--mtbf", a->mtbf_s, "Mean time between failures of one node (default 0: no failures)");
    frenzy_cli::add_duration(c, "--repair", a->repair_s, "Time until a failed node is back (default 1h)");
    c->add_option("--mtbf-h", a->mtbf_h, "Same as --mtbf, in hours (older spelling)")->check(frenzy_cli::finite_number(frenzy::bounds::hours));
    c->add_option("--repair-h", a->repair_h, "Same as --repair, in hours (older spelling)")->check(frenzy_cli::finite_number(frenzy::bounds::repair_hours));
    c->add_option("--has-slack", a->has_slack, "HAS: scale a job out while its GPU-seconds stay within (1 + slack) of its "
                                               "most efficient plan on that type (default 0.25)")->check(CLI::NonNegativeNumber);
    c->add_option("--has-idle-slack", a->has_idle_slack, "HAS: with idle GPUs, allow (1 + this) x the least GPU-seconds "
                                                         "within the job's share of free GPUs (default 1; 0 = off)")->check(CLI::NonNegativeNumber);
    c->add_option("--has-max-share", a->has_max_share, "HAS: most of a GPU type's GPUs one job may take (default 1)")->check(frenzy_cli::finite_number(frenzy::bounds::fraction));
    c->add_option("--has-equi", a->has_equi, "HAS: a job takes at most this x (type's GPUs / jobs in the system) (default 16; 0 = off)")->check(CLI::NonNegativeNumber);
    c->add_flag("--has-no-preempt", a->has_no_preempt, "HAS: never preempt running jobs for waiting ones");
    c->add_flag("--has-no-learn", a->has_no_learn, "HAS: use predictions only, not measured speeds");
    c->add_option("--has-preempt-factor", a->has_preempt_factor, "HAS: preempt a job whose remaining time exceeds this x "
                                                                 "(the waiting job's run + the restart) (default 2)")->check(frenzy_cli::finite_number(frenzy::bounds::preempt_factor));
    c->add_flag("--mixed", a->mixed, "Also plan pipelines whose stages run on two GPU types (Megatron-LM; `plan --mixed`): "
                                     "HAS starts a job on one when it ends the job sooner than waiting for one type; "
                                     "the baselines do not use them");
    add_move_options(c, *a);
    frenzy_cli::add_duration(c, "--has-aging", a->has_aging_s, "HAS: a job that waited this long counts as half its size (default 4h)");
    c->add_option("--speed-error", a->speed_error, "Sigma of the log-normal true/predicted speed factor per job x GPU type "
                                                   "(seeded by --seed; default 0: speeds are the predictions), the factor kept within 1/10..10")->check(frenzy_cli::finite_number(frenzy::bounds::speed_sigma));
    c->add_option("--sizes", a->sizes, "GPU counts: native (each policy as built) | requested (every policy runs the trace's "
                                       "request) | free (every policy chooses) (default native)");
    c->add_option("--ckpt-GBps", a->ckpt_GBps, "Storage bandwidth, GB/s: each restart also saves and loads the job's checkpoint "
                                               "(14 B/parameter) at this rate (default 0: --restart only)")->check(frenzy_cli::finite_number(frenzy::bounds::bandwidth_GBps));
    c->add_option("--max-events", a->max_events, "Stop with an error after this many events (default 50000000)")->check(frenzy_cli::whole_number(frenzy::bounds::events));
    c->add_option("--max-failures", a->max_failures, "A job whose runs failed this often (node failure, out of memory) fails with "
                                                     "\"too many restarts\" (default 50)")->check(frenzy_cli::whole_number(frenzy::bounds::restarts));
    c->add_option("--tiresias-queues", a->tiresias_queues_gpu_h, "Tiresias: queue limits of attained service, GPU-hours, "
                                                                 "ascending (default 1 10)")->check(frenzy_cli::finite_number(frenzy::bounds::gpu_hours));
    c->add_option("--tiresias-promote", a->tiresias_promote, "Tiresias: promote a job that waited this x its executed time "
                                                             "(default 8; 0 = never)")->check(frenzy_cli::finite_number(frenzy::bounds::rate));
    frenzy_cli::add_duration(c, "--gavel-round", a->gavel_round_s, "Gavel: round length (default 6m)");
    c->add_option("--sia-p", a->sia_p, "Sia: goodput exponent p (default -0.5)")->check(frenzy_cli::finite_number(frenzy::bounds::exponent));
    c->add_option("--sia-lambda", a->sia_lambda, "Sia: lambda, the value of running a job at all (default 1.1)")->check(frenzy_cli::finite_number(frenzy::bounds::rate));
    c->add_flag("--sia-no-restart-lock", a->sia_no_restart_lock, "Sia: let the ILP re-allocate a job whose start-up or "
                                                                  "restart is still under way (default: locked, as Sia's artifact)");
#ifdef FRENZY_HAS_GLPK
    c->add_option("--sia-nodes", a->sia_nodes, "Sia: branch-and-bound subproblems per round before the ILP keeps its best "
                                               "schedule; the same on every machine (default " +
                                                   std::to_string(a->sia_nodes) + "; 0 = no limit)")->check(frenzy_cli::whole_number(frenzy::bounds::solver_nodes));
    c->add_option("--sia-gap", a->sia_gap, "Sia: relative gap at which the ILP's search stops (default " + fmt::format("{:g}", a->sia_gap) +
                                           " = prove optimality; Sia's artifact gives CBC 1e-4, docs/baselines.md)")->check(frenzy_cli::finite_number(frenzy::bounds::fraction));
    frenzy_cli::add_duration(c, "--sia-time-limit", a->sia_time_limit_s, "Sia: wall-clock backstop per round's ILP; a round "
                                                                        "stopped by it depends on the machine and is counted (default " +
                                                                            fmt::format("{:g}", a->sia_time_limit_s) + "s)");
#endif
    add_output_options(c, *a);
    c->callback([a] { run_simulate(*a); });
}
