// Replacing one memory policy: a host whose training stack keeps the optimizer states in CPU memory
// (ZeRO-Offload style) swaps only the model-state policy, and the planner follows it, pruning by the new policy's
// own floor rather than the default's.
#include <cstdio>

#include "frenzy/io/cluster_json.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/plan/planner.hpp"

namespace {
/// The default policy, with the optimizer states on the host: nothing of them stays on the GPU.
struct cpu_optimizer_states {
    frenzy::model_state_bytes model_states(const frenzy::job_spec& j, const frenzy::stage_layout& l,
                                           const frenzy::framework_profile& f) const {
        auto s = frenzy::sharded_model_states{}.model_states(j, l, f);
        s.optimizer = frenzy::bytes{};
        return s;
    }
};
static_assert(frenzy::ModelStatePolicy<cpu_optimizer_states>);
}  // namespace

int main() {
    using namespace frenzy;
    using offloading_estimator = memory_estimator::with_model_states<cpu_optimizer_states>;  // one policy swapped
    job_spec job;
    job.model = preset("llama-3.1-8b");
    job.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 32, .total_tokens = 1e9};
    job.runtime.framework = frameworks::deepspeed::handle;
    const auto cluster = cluster_from_gpu_list("2xa100-80g");

    const auto standard = planner{}.plan(job, cluster);
    const auto offloaded = planner::with_memory_model<offloading_estimator>{}.plan(job, cluster);
    auto fewest = [](const plan_result& r) {
        int n = 0;
        for (const auto& p : r.plans) n = n == 0 ? p.gpus : std::min(n, p.gpus);
        return n;
    };
    std::printf("Llama 3.1 8B on A100-80G: fewest GPUs %d with optimizer states on the GPU, %d with them on the host\n",
                fewest(standard), fewest(offloaded));
    // 8B x 12 B of fp32 master + Adam moments (96 GB) no longer on the GPU: one card suffices, and the planner finds
    // it because it prunes by the offloading policy's own floor
    return fewest(offloaded) == 1 && fewest(standard) > 1 ? 0 : 1;
}
