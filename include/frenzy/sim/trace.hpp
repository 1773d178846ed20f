#pragma once
// The simulator's side of job traces: the job a trace row describes. The rows and their CSV text (trace_job,
// trace_header, read_trace, load_trace, write_trace) are io/trace_csv.hpp's, re-exported here.
#include <algorithm>
#include <cstdint>
#include <fstream>  // kept: includers of this header rely on it
#include <istream>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/io/csv.hpp"
#include "frenzy/io/trace_csv.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

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
