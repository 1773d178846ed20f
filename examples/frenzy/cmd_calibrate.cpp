// `frenzy calibrate`: fit the step-time model's efficiency coefficients to measured throughputs.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"
#include "frenzy/io/calibration_json.hpp"
#include "frenzy/io/throughput_csv.hpp"
#include "frenzy/perf/calibration.hpp"

namespace {

struct calibrate_args {
    std::vector<std::string> data;
    std::string out, start;
    int folds = 5;
    bool table = false;
    bool loso = false;
    bool quiet = false;
};

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
double p90(std::vector<double> v) {  // nearest rank, as tests/perf/calibration_test.cpp
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto k = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(v.size())));
    return v[std::max<std::size_t>(k, 1) - 1];
}

/// One table of leave-one-source-out errors grouped by `key` (source, GPU generation, precision class).
template <class Key>
void print_loso_table(const std::vector<frenzy::cv_row>& rows, const char* title, Key key) {
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by;  // group -> (|error|, signed)
    for (const auto& r : rows) {
        by[key(r)].first.push_back(std::abs(r.rel_error()));
        by[key(r)].second.push_back(r.rel_error());
    }
    fmt::print("{:<32} {:>5} {:>12} {:>14} {:>9}\n", title, "rows", "median |err|", "median signed", "p90 |err|");
    for (const auto& [g, v] : by)
        fmt::print("{:<32.32} {:>5} {:>11.1f}% {:>+13.1f}% {:>8.1f}%\n", g, v.first.size(), 100 * median(v.first),
                   100 * median(v.second), 100 * p90(v.first));
}

/// Leave-one-source-out: each source group predicted by a fit on the others from frenzy::neutral_start() (so
/// nothing of the held-out source enters through the start constants): the total, then the errors by held-out
/// source, by GPU generation (chip) and by precision class of the GEMMs.
void print_loso(const std::vector<frenzy::throughput_sample>& samples, frenzy_cli::progress_line& progress) {
    const auto rows = frenzy::leave_one_source_out(samples, frenzy::neutral_start());
    progress.done();
    std::vector<double> all;
    std::map<std::string, int> sources;
    for (const auto& r : rows) all.push_back(std::abs(r.rel_error())), ++sources[r.group];
    fmt::print("\nleave-one-source-out ({} rows, {} sources): median |error| {:.1f}%, p90 {:.1f}%\n", rows.size(),
               sources.size(), 100 * median(all), 100 * p90(all));
    print_loso_table(rows, "held-out source", [](const frenzy::cv_row& r) { return r.group; });
    fmt::print("\n");
    print_loso_table(rows, "GPU generation (chip)", [](const frenzy::cv_row& r) { return r.chip; });
    fmt::print("\n");
    print_loso_table(rows, "GEMM precision", [](const frenzy::cv_row& r) { return r.gemms; });
}

/// --folds: the k-fold cross-validated error (and with --table every row).
void print_cross_validation(const calibrate_args& a, const std::vector<frenzy::throughput_sample>& samples,
                            const frenzy::efficiency_model& start, frenzy_cli::progress_line& progress) {
    using namespace frenzy;
    if (a.folds >= 2 && static_cast<std::size_t>(a.folds) <= samples.size()) {
        try {
            progress.show("frenzy calibrate: cross-validating (" + std::to_string(a.folds) + " folds)");
            const auto cv = cross_validate(samples, a.folds, start);
            progress.done();
            std::vector<double> e;
            for (const auto& r : cv) e.push_back(std::abs(r.rel_error()));
            fmt::print("{}-fold cross-validated median |error|: {:.1f}%\n", a.folds, 100 * median(e));
            if (a.table) {
                fmt::print("\n{:<6} {:<10} {:<24} {:>5} {:>10} {:>10} {:>8}\n", "row", "gpu", "model", "gpus", "measured",
                           "predicted", "error");
                for (const auto& r : cv)
                    fmt::print("{:<6} {:<10} {:<24.24} {:>5} {:>10.0f} {:>10.0f} {:>+7.1f}%\n", r.id, r.gpu, r.model, r.gpus,
                               r.measured, r.predicted, 100 * r.rel_error());
            }
        } catch (const config_error& e) {
            fmt::print("cross-validation skipped: {}\n", e.what());
        }
    }
}

void run_calibrate(const calibrate_args& a) {
    using namespace frenzy;
    std::vector<throughput_sample> samples;
    std::string files;
    for (const auto& d : a.data) {
        const auto s = load_throughput_csv(d);
        samples.insert(samples.end(), s.begin(), s.end());
        files += (files.empty() ? "" : " + ") + d;
    }
    const efficiency_model start = a.start.empty() ? default_efficiency() : load_calibration(a.start);
    frenzy_cli::progress_line progress(a.quiet);
    progress.show("frenzy calibrate: fitting " + std::to_string(samples.size()) + " rows");
    auto fit = fit_efficiency(samples, start);
    progress.done();
    fit.source = "frenzy calibrate --data " + files + " (" + std::to_string(samples.size()) + " rows)";
    fmt::print("fitted on {} rows of {}\n", samples.size(), files);
    fmt::print("{:<14} {:>10} {:>10}  {}\n", "gpu", "dense eff", "attn eff", "source");
    for (const auto& c : fit.gpus)
        fmt::print("{:<14} {:>9.1f}% {:>9.1f}%  {}\n", c.gpu, 100 / c.inverse,
                   100 / fit.gpu_attention_inverse(c.gpu), c.source);
    fmt::print("other types: {:.1f}% of peak; weight traffic x{:.2f}, width penalty {:.1f}\n", 100 / fit.default_inverse,
               fit.weight_traffic, fit.width_penalty);
    std::vector<double> in_sample;
    for (const auto& s : samples)
        in_sample.push_back(std::abs(predict_tokens_per_gpu(s, fit) - s.tokens_per_s_per_gpu) / s.tokens_per_s_per_gpu);
    fmt::print("in-sample median |error| of tokens/s per GPU: {:.1f}%\n", 100 * median(in_sample));
    print_cross_validation(a, samples, start, progress);
    if (a.loso) {
        try {
            progress.show("frenzy calibrate: leave-one-source-out (a fit per source)");
            std::fflush(stdout);
            print_loso(samples, progress);
        } catch (const config_error& e) {
            fmt::print("leave-one-source-out skipped: {}\n", e.what());
        }
    }
    if (!a.out.empty()) {
        auto f = open_output(a.out, "-o/--out", std::ios::out);
        f << to_json(fit).dump(2) << "\n";
        fmt::print("wrote {} (use with `frenzy plan --calibration {}`)\n", printable(a.out, 200), printable(a.out, 200));  // no raw bytes on stdout
    }
}

}  // namespace

void frenzy_cli::add_calibrate(CLI::App& app) {
    auto a = std::make_shared<calibrate_args>();
    auto* c = app.add_subcommand("calibrate", "Fit the step-time model's efficiency coefficients to measured throughputs");
    c->add_option("--data", a->data,
                  "Throughput CSV (columns of data/throughput/measured_calibration.csv); repeat to fit several "
                  "files together")
        ->required()
        ->check(CLI::ExistingFile);
    c->add_option("-o,--out", a->out, "Write the calibration JSON here");
    c->add_option("--start", a->start, "Calibration JSON to start from (types without rows keep its values)")
        ->check(CLI::ExistingFile);
    c->add_option("--folds", a->folds, "Cross-validation folds (default 5; 0 = none)")->check(CLI::NonNegativeNumber);
    c->add_flag("--quiet", a->quiet, "No progress line on stderr (shown only on a terminal)");
    c->add_flag("--table", a->table, "Print the cross-validated predicted-vs-measured table");
    c->add_flag("--loso", a->loso,
                "Print the leave-one-source-out table (each source, by the files' source column, predicted by a fit "
                "on the others from a neutral start)");
    c->callback([a] { run_calibrate(*a); });
}
