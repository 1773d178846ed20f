// Replacing one planner policy, the search space: a host whose training stack has no pipeline parallelism keeps
// the default axes but pins pp to 1, and swaps only the search space; memory model, time model and objective
// stay the defaults.
#include <cstdio>

#include "frenzy/io/cluster_json.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/plan/planner.hpp"

namespace {
/// The default search space without pipeline parallelism.
struct no_pipeline {
    frenzy::search_axes axes(const frenzy::job_spec& j, const frenzy::gpu_pool& pool, const frenzy::plan_options& o) const {
        auto a = frenzy::divisor_search_space{}.axes(j, pool, o);
        a.pp = {1};
        a.vpp = {1};
        return a;
    }
};
static_assert(frenzy::SearchSpace<no_pipeline>);
}  // namespace

int main() {
    using namespace frenzy;
    job_spec job;
    job.model = preset("llama-3.1-70b");
    job.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 256, .total_tokens = 1e10};
    job.runtime.framework = frameworks::megatron::handle;
    const auto cluster = cluster_from_gpu_list("64xh100-80g");

    const auto standard = planner{}.plan(job, cluster);
    const auto flat = planner::with_search_space<no_pipeline>{}.plan(job, cluster);  // one policy swapped
    auto uses_pp = [](const plan_result& r) {
        int n = 0;
        for (const auto& p : r.plans) n += p.parallel.pp > 1;
        return n;
    };
    std::printf("Llama 3.1 70B on up to 64 H100-80G: %zu plans, %d with pp > 1 (default search space)\n",
                standard.plans.size(), uses_pp(standard));
    std::printf("                                    %zu plans, %d with pp > 1 (no pipeline parallelism)\n",
                flat.plans.size(), uses_pp(flat));
    if (!flat.plans.empty()) {
        const auto& p = flat.plans.front();
        std::printf("best without pipelining: %d GPUs, dp=%lld tp=%lld, sharding %s, recompute %s\n", p.gpus,
                    static_cast<long long>(p.parallel.dp), static_cast<long long>(p.parallel.tp),
                    std::string(to_string(p.parallel.sharding)).c_str(), std::string(to_string(p.parallel.recompute)).c_str());
    }
    // The default uses pipelining somewhere in its ranking; the swapped space never does, yet still finds plans.
    return uses_pp(standard) > 0 && uses_pp(flat) == 0 && !flat.plans.empty() ? 0 : 1;
}
