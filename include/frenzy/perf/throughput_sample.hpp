#pragma once
// A measured training run as the step-time calibration uses it (read by io/throughput_csv.hpp, fitted by
// perf/calibration.hpp).
#include <string>

#include "frenzy/perf/step_time.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// One measured run: the job (with its parallel layout), where it ran, and what was measured.
struct throughput_sample {
    std::string id;                  ///< row_id
    job_spec job;
    std::string gpu;                 ///< catalog name
    topology topo{};
    double tokens_per_s_per_gpu = 0; ///< measured
    double step_time_s = 0;          ///< measured or derived; 0 = unknown
    std::string source;
    std::string group;               ///< short source label for leave-one-source-out (source_group())
};

}  // namespace frenzy
