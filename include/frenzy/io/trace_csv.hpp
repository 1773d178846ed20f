#pragma once
// Job traces <-> CSV (docs/formats.md "Trace"): one job a row,
//   job_id,submit_s,model,seq_len,global_batch,total_tokens,requested_gpus,requested_type
// `model` is a preset name; requested_* may be empty. Errors name the source, the line and the column. The
// simulator's view of a row (the job it describes) is sim/trace.hpp's to_job_spec.
#include <algorithm>
#include <cstdint>
#include <istream>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/io/csv.hpp"
#include "frenzy/io/file.hpp"

namespace frenzy {

/// One row of a trace.
struct trace_job {
    std::string job_id;
    double submit_s = 0;
    std::string model;               ///< preset name
    std::int64_t seq_len = 2048;
    std::int64_t global_batch = 1;
    double total_tokens = 0;
    int requested_gpus = 0;          ///< 0 = no request
    std::string requested_type;      ///< "" = no request
    bool operator==(const trace_job&) const = default;
};

inline constexpr std::string_view trace_header =
    "job_id,submit_s,model,seq_len,global_batch,total_tokens,requested_gpus,requested_type";

/// One data row of a trace (its 8 trimmed fields); `where` is "SOURCE line N".
inline trace_job trace_row(const std::vector<std::string>& f, const std::string& where) {
    if (f.size() != 8) throw config_error(where + ": expected 8 columns, found " + std::to_string(f.size()));
    trace_job j;
    j.job_id = f[0];
    if (j.job_id.empty()) throw config_error(where + ": job_id must not be empty");
    j.submit_s = csv_number<double>(f[1], where, "submit_s");
    if (j.submit_s < 0) throw config_error(where + ": submit_s must not be negative");
    j.model = f[2];
    if (j.model.empty()) throw config_error(where + ": model must not be empty");
    j.seq_len = csv_number<std::int64_t>(f[3], where, "seq_len");
    if (j.seq_len <= 0) throw config_error(where + ": seq_len must be positive");
    j.global_batch = csv_number<std::int64_t>(f[4], where, "global_batch");
    if (j.global_batch <= 0) throw config_error(where + ": global_batch must be positive");
    j.total_tokens = csv_number<double>(f[5], where, "total_tokens");
    if (!(j.total_tokens > 0)) throw config_error(where + ": total_tokens must be positive");
    if (!f[6].empty()) {
        j.requested_gpus = csv_number<int>(f[6], where, "requested_gpus");
        if (j.requested_gpus < 1) throw config_error(where + ": requested_gpus must be at least 1 (or empty)");
    }
    j.requested_type = f[7];
    return j;
}

/// Reads a trace; rows are returned sorted by submit time (stable: equal times keep file order). Blank lines and
/// lines starting with '#' are skipped. `source` names the input in error messages ("trace.csv line 7:
/// seq_len=\"x\" is not a number").
inline std::vector<trace_job> read_trace(std::istream& in, const std::string& source = "trace") {
    std::string line;
    int lineno = 0;
    bool header = false;
    std::vector<trace_job> jobs;
    std::unordered_set<std::string> ids;  // duplicate check in linear time
    while (std::getline(in, line)) {
        ++lineno;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#') continue;
        const std::string where = source + " line " + std::to_string(lineno);
        if (!header) {
            if (line != trace_header)
                throw config_error(where + ": header must be \"" + std::string(trace_header) + "\"");
            header = true;
            continue;
        }
        auto j = trace_row(split_csv_trimmed(line), where);
        if (!ids.insert(j.job_id).second) throw config_error(where + ": job_id \"" + j.job_id + "\" appears twice");
        jobs.push_back(std::move(j));
    }
    if (!header) throw config_error(source + ": empty trace (no header line)");
    std::stable_sort(jobs.begin(), jobs.end(), [](const trace_job& a, const trace_job& b) { return a.submit_s < b.submit_s; });
    return jobs;
}

/// Reads the trace file `path` (regular files only: /dev/zero is refused, io/file.hpp).
inline std::vector<trace_job> load_trace(const std::string& path) {
    std::istringstream f(read_file_limited(path));
    return read_trace(f, path);
}

/// Writes `jobs` as a trace (the header, then one row each, numbers as csv_decimal writes them).
inline void write_trace(std::ostream& out, const std::vector<trace_job>& jobs) {
    out << trace_header << '\n';
    for (const auto& j : jobs)
        out << j.job_id << ',' << csv_decimal(j.submit_s) << ',' << j.model << ',' << j.seq_len << ','
            << j.global_batch << ',' << csv_decimal(j.total_tokens) << ','
            << (j.requested_gpus > 0 ? std::to_string(j.requested_gpus) : std::string{}) << ',' << j.requested_type
            << '\n';
}

}  // namespace frenzy
