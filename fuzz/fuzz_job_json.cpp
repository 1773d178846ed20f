// libFuzzer target: a job spec file (io/job_json.hpp) through the strict JSON reader, then every validation rule.
#include "frenzy/io/job_json.hpp"
#include "fuzz_common.hpp"

FRENZY_FUZZ_TARGET({
    const auto parsed = frenzy::job_from_json(frenzy::parse_json_text(input, "job.json"));
    (void)frenzy::to_json(parsed.job).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
})
