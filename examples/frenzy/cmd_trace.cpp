// `frenzy trace synth`: derive an LLM job trace from the Philly cluster trace (mapping in sim/synth.hpp).
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli.hpp"
#include "frenzy/io/cluster_json.hpp"
#include "frenzy/plan/planner.hpp"
#include "frenzy/sim/simulator.hpp"
#include "frenzy/sim/synth.hpp"

namespace {

struct synth_args {
    std::string cluster, input = std::string(FRENZY_DATA_DIR) + "/traces/philly_jobs.csv", out;
    frenzy::synth_options o;
};

void run_synth(const synth_args& a) {
    using namespace frenzy;
    const cluster_spec cluster = load_cluster(a.cluster);
    const auto rows = load_philly(a.input);
    const plan_provider plans =
        cached_plan_provider([&cluster](const job_spec& j) { return planner{}.plan(j, cluster); });
    synth_report rep;
    const auto jobs = synth_trace(rows, cluster, plans, a.o, &rep);
    if (a.out.empty()) {
        write_trace(std::cout, jobs);
    } else {
        auto f = open_output(a.out, "-o/--out", std::ios::out);
        write_trace(f, jobs);
    }
    fmt::print(stderr, "{} jobs over {:.1f} h of arrivals (load x{}); {} rows dropped (more GPUs than any type has); "
                       "{} jobs took a smaller model class to fit\n",
               jobs.size(), jobs.empty() ? 0.0 : jobs.back().submit_s / 3600, a.o.load, rep.dropped_too_large,
               rep.fallback_model);
}

}  // namespace

void frenzy_cli::add_trace(CLI::App& app) {
    auto* t = app.add_subcommand("trace", "Job traces");
    t->require_subcommand(1);
    auto a = std::make_shared<synth_args>();
    auto* c = t->add_subcommand("synth", "Derive an LLM workload from the Philly trace (arrivals, sizes, durations kept)");
    c->add_option("--cluster", a->cluster, "Cluster spec JSON (requested types and durations refer to it)")->required()->check(CLI::ExistingFile);
    c->add_option("--philly", a->input, "Philly trace CSV (default: data/traces/philly_jobs.csv)")->check(CLI::ExistingFile);
    c->add_option("--jobs", a->o.jobs, "Number of jobs (default 500)")->check(CLI::PositiveNumber);
    c->add_option("--skip", a->o.skip, "First row of the window, after filtering (default 0)")->check(CLI::NonNegativeNumber);
    c->add_option("--load", a->o.load, "Arrival-rate multiplier (default 1: real inter-arrival times)")->check(CLI::PositiveNumber);
    c->add_option("--min-duration", a->o.min_duration_s, "Drop trace jobs shorter than this, s (default 60)")->check(CLI::NonNegativeNumber);
    c->add_option("--max-duration", a->o.max_duration_s, "Drop trace jobs longer than this, s (default 0: keep)")->check(CLI::NonNegativeNumber);
    c->add_option("--vc", a->o.virtual_cluster, "Keep only this Philly virtual cluster");
    c->add_option("--seed", a->o.seed, "Seed of the type and model draws (default 1)");
    c->add_option("-o,--out", a->out, "Output CSV (default stdout)");
    c->callback([a] { run_synth(*a); });
}
