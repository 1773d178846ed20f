// libFuzzer target: estimate and plan on a parsed job spec. A spec with a parallel layout is estimated (MARP); a
// spec without one is planned on one node of 8 A100-80GB, the work the CLI's `estimate` and `plan` do.
#include "frenzy/io/job_json.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/plan/planner.hpp"
#include "fuzz_common.hpp"

FRENZY_FUZZ_TARGET({
    const auto parsed = frenzy::job_from_json(frenzy::parse_json_text(input, "job.json"));
    if (parsed.has_parallel) {
        const auto r = frenzy::memory_estimator{}.estimate(parsed.job);
        (void)r.peak_reserved.value;
    } else if (parsed.job.training.global_batch <= (1 << 16)) {
        // Until plan/planner.hpp's detail::divisors calls core/checked.hpp's O(sqrt n) divisors_of, planning costs
        // time linear in global_batch (~1 s at its bound 2^30): larger batches would only slow the fuzzer down.
        frenzy::cluster_spec c;
        c.nodes.push_back(frenzy::node_group{"n", "a100-80g", 8, 1, 0});
        frenzy::plan_options o;
        o.max_gpus = 8;
        (void)frenzy::planner{}.plan(parsed.job, c, o);
    }
})
