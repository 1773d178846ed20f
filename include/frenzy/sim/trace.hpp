#pragma once
// Job traces (docs/formats.md "Trace"): one job a row,
//   job_id,submit_s,model,seq_len,global_batch,total_tokens,requested_gpus,requested_type
// `model` is a preset name; requested_* may be empty. Errors name the source, the line and the column.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <istream>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/io/csv.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

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

namespace detail {
/// A CSV line's fields (io/csv.hpp), trimmed of surrounding blanks.
inline std::vector<std::string> split_trimmed(std::string_view line) {
    auto out = split_csv_line(line);
    for (auto& f : out) f = trim(f);
    return out;
}

template <class T>
T parse_number(const std::string& text, const std::string& where, std::string_view column) {
    T v{};
    const char* b = text.data();
    const char* e = text.data() + text.size();
    std::from_chars_result r{};
    if constexpr (std::is_floating_point_v<T>) {
        // std::from_chars for double is fine in libstdc++ 11+
        r = std::from_chars(b, e, v, std::chars_format::general);
    } else {
        r = std::from_chars(b, e, v);
    }
    if (text.empty() || r.ec != std::errc{} || r.ptr != e)
        throw config_error(where + ": " + std::string(column) + "=\"" + text + "\" is not a number");
    if constexpr (std::is_floating_point_v<T>)
        if (!std::isfinite(v)) throw config_error(where + ": " + std::string(column) + " must be finite");
    return v;
}
}  // namespace detail

/// Reads a trace; rows are returned sorted by submit time (stable: equal times keep file order).
/// `source` names the input in error messages ("trace.csv line 7: seq_len=\"x\" is not a number").
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
        auto f = detail::split_trimmed(line);
        if (f.size() != 8)
            throw config_error(where + ": expected 8 columns, found " + std::to_string(f.size()));
        trace_job j;
        j.job_id = f[0];
        if (j.job_id.empty()) throw config_error(where + ": job_id must not be empty");
        j.submit_s = detail::parse_number<double>(f[1], where, "submit_s");
        if (j.submit_s < 0) throw config_error(where + ": submit_s must not be negative");
        j.model = f[2];
        if (j.model.empty()) throw config_error(where + ": model must not be empty");
        j.seq_len = detail::parse_number<std::int64_t>(f[3], where, "seq_len");
        if (j.seq_len <= 0) throw config_error(where + ": seq_len must be positive");
        j.global_batch = detail::parse_number<std::int64_t>(f[4], where, "global_batch");
        if (j.global_batch <= 0) throw config_error(where + ": global_batch must be positive");
        j.total_tokens = detail::parse_number<double>(f[5], where, "total_tokens");
        if (!(j.total_tokens > 0)) throw config_error(where + ": total_tokens must be positive");
        if (!f[6].empty()) {
            j.requested_gpus = detail::parse_number<int>(f[6], where, "requested_gpus");
            if (j.requested_gpus < 1) throw config_error(where + ": requested_gpus must be at least 1 (or empty)");
        }
        j.requested_type = f[7];
        if (!ids.insert(j.job_id).second) throw config_error(where + ": job_id \"" + j.job_id + "\" appears twice");
        jobs.push_back(std::move(j));
    }
    if (!header) throw config_error(source + ": empty trace (no header line)");
    std::stable_sort(jobs.begin(), jobs.end(), [](const trace_job& a, const trace_job& b) { return a.submit_s < b.submit_s; });
    return jobs;
}

inline std::vector<trace_job> load_trace(const std::string& path) {
    std::istringstream f(detail::read_file_limited(path));  // regular files only: /dev/zero is refused (io/file.hpp)
    return read_trace(f, path);
}

namespace detail {
inline std::string fmt_num(double v) {
    std::ostringstream o;
    o.precision(15);
    o << v;
    return o.str();
}
}  // namespace detail

inline void write_trace(std::ostream& out, const std::vector<trace_job>& jobs) {
    out << trace_header << '\n';
    for (const auto& j : jobs)
        out << j.job_id << ',' << detail::fmt_num(j.submit_s) << ',' << j.model << ',' << j.seq_len << ','
            << j.global_batch << ',' << detail::fmt_num(j.total_tokens) << ','
            << (j.requested_gpus > 0 ? std::to_string(j.requested_gpus) : std::string{}) << ',' << j.requested_type
            << '\n';
}

/// The job a trace row describes: the preset model, the row's sequence length, batch and token budget; the
/// parallel layout is left to the planner. Traces carry no precision column: jobs train in `p`, by default
/// fp16 mixed precision, which every catalog GPU runs (V100 and older have no bf16; on A100/H100/RTX 30xx the
/// fp16 and bf16 peaks are equal). Unknown presets throw config_error naming the job.
inline job_spec to_job_spec(const trace_job& t, precision p = precision::fp16_mixed) {
    job_spec j;
    j.name = t.job_id;
    try {
        j.model = preset(t.model);
    } catch (const config_error& e) {
        throw config_error("trace job " + t.job_id + ": " + e.what());
    }
    j.training.seq_len = t.seq_len;
    j.training.global_batch = t.global_batch;
    j.training.micro_batch = 1;
    j.training.total_tokens = t.total_tokens;
    j.training.precision = p;
    return j;
}

}  // namespace frenzy
