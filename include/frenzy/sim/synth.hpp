#pragma once
// Deriving an LLM workload from a real cluster trace (Microsoft Philly, 2017: submit time, duration, GPU count).
//
// Mapping (documented in docs/results.md):
//  - arrivals: a window of `jobs` consecutive jobs (after the duration filter), starting at row `skip` in submit
//    order; submit_s = (t - t_first) / load, so load > 1 compresses the real inter-arrival times;
//  - requested GPUs: the trace's GPU count, kept; rows asking for more GPUs than any type of the cluster has are
//    dropped (counted in synth_report);
//  - requested type: drawn at random (seeded), weighted by each type's share of the cluster's GPUs;
//  - model: drawn at random (seeded) from a size class of presets chosen by the GPU count (1 GPU: GPT-3
//    125M-1.3B; 2: 350M-2.7B; 4: 1.3B-6.7B; 8: 2.7B-8B; 16: 7B-13B; 32+: 13B-70B), among those that fit in memory
//    on the requested type and count; if none fits, the largest smaller-class preset that fits; if nothing fits on
//    that type at that count, the next type of the cluster where something does;
//  - token budget: duration x tokens/s of the fastest plan of that model on at most the requested GPUs of the
//    requested type (the rule the fcfs baseline uses), so that the job takes its trace duration as requested.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/hw/cluster.hpp"
#include "frenzy/io/file.hpp"
#include "frenzy/sched/scheduler.hpp"
#include "frenzy/sim/trace.hpp"

namespace frenzy {

struct philly_job {
    double submit_s = 0;  ///< seconds since 1970 (UTC) of the trace timestamp
    double duration_s = 0;
    int gpus = 1;
    std::string virtual_cluster;
};

namespace detail {
/// Days since 1970-01-01 of a civil date (H. Hinnant's days_from_civil).
constexpr std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}
inline double parse_timestamp(const std::string& s, const std::string& where) {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
    char tail = 0;
    if (std::sscanf(s.c_str(), "%d-%d-%d %d:%d:%d%c", &y, &mo, &d, &h, &mi, &se, &tail) != 6 || !within(std::int64_t{y}, bounds::year) ||
        mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 60)
        throw config_error(where + ": timestamp=\"" + printable(s) + "\" is not YYYY-MM-DD HH:MM:SS");
    // Days in the month, Gregorian leap years: 2017-02-30 is no date.
    static constexpr int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > mdays[mo - 1] + (mo == 2 && leap ? 1 : 0))
        throw config_error(where + ": timestamp=\"" + printable(s) + "\" has day " + std::to_string(d) + ", month " + std::to_string(mo) +
                           " of " + std::to_string(y) + " has " + std::to_string(mdays[mo - 1] + (mo == 2 && leap ? 1 : 0)));
    return static_cast<double>(days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 +
                               h * 3600 + mi * 60 + se);
}
}  // namespace detail

/// Reads the flattened Philly trace: timestamp,duration,num_gpus,gpu_time,cluster. Sorted by submit time.
/// The file is read through io/file.hpp's bounded reader: regular files only (/dev/zero, directories and FIFOs are
/// refused before anything is read), at most 256 MiB (the flattened Philly trace is ~10 MiB).
inline std::vector<philly_job> load_philly(const std::string& path) {
    std::istringstream in(frenzy::read_file_limited(path));
    const std::string shown = frenzy::printable(path, 200);
    std::string line;
    int n = 0;
    std::vector<philly_job> out;
    while (std::getline(in, line)) {
        ++n;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        const std::string where = shown + " line " + std::to_string(n);
        auto f = split_csv_trimmed(line);
        if (n == 1) {
            if (f.size() < 5 || f[0] != "timestamp" || f[1] != "duration" || f[2] != "num_gpus")
                throw config_error(where + ": header must start timestamp,duration,num_gpus,gpu_time,cluster");
            continue;
        }
        if (f.size() != 5) throw config_error(where + ": expected 5 columns, found " + std::to_string(f.size()));
        philly_job j;
        j.submit_s = detail::parse_timestamp(f[0], where);
        j.duration_s = csv_number<double>(f[1], where, "duration");
        if (!within(j.duration_s, bounds::seconds))
            throw config_error(where + ": duration=" + frenzy::printable(f[1]) + " must be in [0, " +
                               bound_text(bounds::seconds.max) + "] s");
        const double g = csv_number<double>(f[2], where, "num_gpus");
        if (!(within(g, real_bound{static_cast<double>(bounds::trace_gpus.min), static_cast<double>(bounds::trace_gpus.max)}) &&
              g == std::floor(g)))
            throw config_error(where + ": num_gpus=" + frenzy::printable(f[2]) + " must be a whole number in [" +
                               std::to_string(bounds::trace_gpus.min) + ", " + std::to_string(bounds::trace_gpus.max) + "]");
        j.gpus = static_cast<int>(g);
        j.virtual_cluster = f[4];
        if (j.gpus < 1) throw config_error(where + ": num_gpus must be at least 1");
        out.push_back(std::move(j));
    }
    std::stable_sort(out.begin(), out.end(), [](const philly_job& a, const philly_job& b) { return a.submit_s < b.submit_s; });
    return out;
}

struct synth_options {
    int jobs = 500;
    int skip = 0;                  ///< first row of the window (after filtering)
    double load = 1.0;             ///< arrival-rate multiplier
    double min_duration_s = 60;    ///< drop shorter rows (Philly has many jobs that died within seconds)
    double max_duration_s = 0;     ///< drop longer rows; 0 = keep all
    std::string virtual_cluster;   ///< keep only this Philly virtual cluster; "" = all
    std::uint64_t seed = 1;
    std::int64_t seq_len = 2048;
    std::int64_t global_batch = 256;
};

struct synth_report {
    int rows_in_window = 0;
    int dropped_too_large = 0;
    int fallback_model = 0;  ///< jobs whose size class had no preset that fits (a smaller class was used)
};

/// Size classes of presets by requested GPU count (see the header comment).
inline const std::vector<std::string>& synth_models_for(int gpus) {
    static const std::array<std::vector<std::string>, 6> classes{{
        {"gpt3-125m", "gpt3-350m", "gpt3-760m", "gpt3-1.3b"},
        {"gpt3-350m", "gpt3-760m", "gpt3-1.3b", "gpt3-2.7b"},
        {"gpt3-1.3b", "gpt3-2.7b", "llama-3.2-1b", "gpt3-6.7b"},
        {"gpt3-2.7b", "llama-2-7b", "mistral-7b", "llama-3.1-8b"},
        {"llama-2-7b", "llama-3.1-8b", "llama-2-13b", "gpt3-13b"},
        {"llama-2-13b", "gpt3-13b", "gpt-neox-20b", "llama-3.1-70b"},
    }};
    const int k = gpus <= 1 ? 0 : gpus <= 2 ? 1 : gpus <= 4 ? 2 : gpus <= 8 ? 3 : gpus <= 16 ? 4 : 5;
    return classes[static_cast<std::size_t>(k)];
}

namespace detail {

/// The cluster's GPU types, in the order its node groups first name them, and each type's GPUs.
struct synth_types {
    std::vector<std::string> names;
    std::vector<int> gpus;
};

inline synth_types synth_cluster_types(const cluster_spec& cluster) {
    synth_types ty;
    for (const auto& g : cluster.nodes) {
        auto it = std::find(ty.names.begin(), ty.names.end(), g.gpu);
        if (it == ty.names.end()) {
            ty.names.push_back(g.gpu);
            ty.gpus.push_back(0);
            it = ty.names.end() - 1;
        }
        ty.gpus[static_cast<std::size_t>(it - ty.names.begin())] += g.gpus_per_node * g.count;
    }
    return ty;
}

/// The rows of the window: past the duration and virtual-cluster filters, o.jobs rows from row o.skip on, less the
/// rows asking for more GPUs than any type has (`max_type`; counted in rep).
inline std::vector<const philly_job*> synth_window(const std::vector<philly_job>& rows, const synth_options& o,
                                                   int max_type, synth_report& rep) {
    std::vector<const philly_job*> win;
    int seen = 0;
    for (const auto& r : rows) {
        if (r.duration_s < o.min_duration_s) continue;
        if (o.max_duration_s > 0 && r.duration_s > o.max_duration_s) continue;
        if (!o.virtual_cluster.empty() && r.virtual_cluster != o.virtual_cluster) continue;
        if (seen++ < o.skip) continue;
        ++rep.rows_in_window;
        if (r.gpus > max_type) {
            ++rep.dropped_too_large;
            continue;
        }
        win.push_back(&r);
        if (static_cast<int>(win.size()) == o.jobs) break;
    }
    return win;
}

/// The random draws of one synthesis (one generator seeded with o.seed, drawn row after row) and the planner's
/// speeds they are weighed with.
class synth_drawer {
public:
    synth_drawer(const synth_types& types, const plan_provider& plans, const synth_options& o)
        : types_(types), plans_(plans), o_(o), rng_(o.seed) {}

    /// Requested type, weighted by GPUs, among types with enough GPUs.
    std::size_t draw_type(int gpus) {
        int total = 0;
        for (std::size_t t = 0; t < types_.names.size(); ++t)
            if (types_.gpus[t] >= gpus) total += types_.gpus[t];
        auto pick = static_cast<int>(uniform(static_cast<std::uint64_t>(total)));
        std::size_t type = 0;
        for (std::size_t t = 0; t < types_.names.size(); ++t) {
            if (types_.gpus[t] < gpus) continue;
            if (pick < types_.gpus[t]) { type = t; break; }
            pick -= types_.gpus[t];
        }
        return type;
    }

    /// Model: random among the class's presets that fit; else the largest fitting one of smaller classes; if
    /// nothing fits on the drawn type at that count, the next type (in cluster order) where something does, which
    /// becomes `type`. Returns the model and its tokens/s, or ("", 0) when nothing fits anywhere.
    std::pair<std::string, double> draw_model(int gpus, std::size_t& type, synth_report& rep) {
        const auto& cls = synth_models_for(gpus);
        std::pair<std::string, double> chosen{"", 0.0};
        for (std::size_t attempt = 0; attempt < types_.names.size() && chosen.second == 0; ++attempt) {
            const std::size_t ty = (type + attempt) % types_.names.size();
            if (types_.gpus[ty] < gpus) continue;
            std::vector<std::pair<std::string, double>> fit;
            for (const auto& m : cls)
                if (double s = speed(m, types_.names[ty], gpus); s > 0) fit.push_back({m, s});
            if (!fit.empty()) {
                chosen = fit[uniform(fit.size())];
            } else {
                chosen = smaller_class_model(gpus, types_.names[ty]);
                if (chosen.second > 0) ++rep.fallback_model;
            }
            if (chosen.second > 0) type = ty;
        }
        return chosen;
    }

private:
    std::size_t uniform(std::uint64_t n) { return static_cast<std::size_t>(rng_() % n); }

    /// Tokens/s of the fastest plan of `model` on at most `gpus` GPUs of type `gpu`; 0 when it does not fit.
    double speed(const std::string& model, const std::string& gpu, int gpus) const {
        trace_job t;
        t.job_id = "synth";
        t.model = model;
        t.seq_len = o_.seq_len;
        t.global_batch = o_.global_batch;
        t.total_tokens = 1e9;
        const auto pr = plans_(to_job_spec(t));
        const plan* p = plan_for_request(pr.plans, gpu, gpus);
        return p ? p->tokens_per_s : 0.0;
    }

    /// The largest preset of the smaller size classes (halving the GPU count) that fits; ("", 0) when none does.
    std::pair<std::string, double> smaller_class_model(int gpus, const std::string& gpu) const {
        std::pair<std::string, double> chosen{"", 0.0};
        for (int g = gpus / 2; g >= 1 && chosen.second == 0; g /= 2) {
            const auto& smaller = synth_models_for(g);
            for (auto it = smaller.rbegin(); it != smaller.rend(); ++it)
                if (double s = speed(*it, gpu, gpus); s > 0) { chosen = {*it, s}; break; }
        }
        return chosen;
    }

    const synth_types& types_;
    const plan_provider& plans_;
    const synth_options& o_;
    std::mt19937_64 rng_;
};

/// The trace job of Philly row `r`: arrival relative to `t0` and compressed by the load, its drawn model and type,
/// and the tokens it processes in its trace duration at the model's speed.
inline trace_job synth_job(const philly_job& r, std::string id, double t0, const std::pair<std::string, double>& chosen,
                           const std::string& type, const synth_options& o) {
    trace_job j;
    j.job_id = std::move(id);
    j.submit_s = (r.submit_s - t0) / o.load;
    j.model = chosen.first;
    j.seq_len = o.seq_len;
    j.global_batch = o.global_batch;
    j.total_tokens = r.duration_s * chosen.second;  // runs for the trace duration on its request
    if (!std::isfinite(j.total_tokens) || !(j.total_tokens > 0))
        throw config_error("synth: Philly row with duration " + csv_decimal(r.duration_s) + " s gives total_tokens=" +
                           csv_decimal(j.total_tokens) + ", which must be finite and positive");
    j.requested_gpus = r.gpus;
    j.requested_type = type;
    return j;
}

}  // namespace detail

/// Derives a trace of LLM jobs from Philly rows for `cluster`, using `plans` (the planner) for memory fit and speed.
inline std::vector<trace_job> synth_trace(const std::vector<philly_job>& rows, const cluster_spec& cluster,
                                          const plan_provider& plans, const synth_options& o,
                                          synth_report* report = nullptr) {
    if (o.jobs < 1) throw config_error("synth.jobs must be at least 1");
    if (!(o.load > 0)) throw config_error("synth.load must be positive");
    if (o.skip < 0) throw config_error("synth.skip must not be negative");
    validate(cluster);
    const auto types = detail::synth_cluster_types(cluster);
    const int max_type = *std::max_element(types.gpus.begin(), types.gpus.end());
    synth_report rep;
    const auto win = detail::synth_window(rows, o, max_type, rep);
    if (win.empty()) throw config_error("synth: no trace rows left after filtering (skip=" + std::to_string(o.skip) + ")");
    detail::synth_drawer draw(types, plans, o);
    std::vector<trace_job> out;
    const double t0 = win.front()->submit_s;
    int idx = 0;
    for (const philly_job* r : win) {
        std::size_t type = draw.draw_type(r->gpus);
        const auto chosen = draw.draw_model(r->gpus, type, rep);
        if (chosen.second == 0)
            throw config_error("synth: no preset of any size class fits on " + std::to_string(r->gpus) +
                               " GPUs of any type of the cluster");
        out.push_back(detail::synth_job(*r, "p" + std::to_string(idx++), t0, chosen, types.names[type], o));
    }
    if (report) *report = rep;
    return out;
}

}  // namespace frenzy
