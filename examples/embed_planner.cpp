// Embedding the planner in a launcher: build a job in code, plug in an own objective policy, pick a plan.
//
// The objective here is a launcher's typical rule: finish within a deadline, and among the plans that do, use
// the fewest GPU-hours (plans that miss the deadline rank after all that meet it, fastest first).
#include <cstdio>

#include "frenzy/model/presets.hpp"
#include "frenzy/plan/planner.hpp"

namespace {
struct deadline_then_gpu_hours {
    double deadline_s = 14 * 86400.0;
    // lower is better; never worse for a faster plan of the same GPU count (what the planner's pruning assumes)
    double score(const frenzy::plan& p, const frenzy::plan_options&) const {
        const double time = p.est_time.value;          // total_tokens / tokens_per_s
        if (time > deadline_s) return 1e12 + time;     // late: after every on-time plan, the faster the better
        return p.gpu_hours;                             // on time: the fewest GPU-hours
    }
};
static_assert(frenzy::Objective<deadline_then_gpu_hours>);
}  // namespace

int main() {
    using namespace frenzy;
    job_spec job;
    job.name = "finetune-8b";
    job.model = preset("llama-3.1-8b");
    job.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 256, .precision = precision::bf16_mixed,
                    .optimizer = optimizer_kind::adamw, .total_tokens = 5e10};
    job.runtime.framework = frameworks::megatron::handle;

    cluster_spec cluster;
    cluster.nodes = {{"a100", "a100-80g", 8, 4}, {"h100", "h100-80g", 8, 2}, {"l40s", "l40s", 8, 4}};
    validate(cluster);

    planner::with_objective<deadline_then_gpu_hours> planner;  // only the objective replaced; the rest default
    const plan_result r = planner.plan(job, cluster);
    if (r.plans.empty()) {
        std::printf("no feasible plan\n");
        for (const auto& f : r.infeasible) std::printf("  %s: %s\n", f.gpu.c_str(), f.reason.c_str());
        return 1;
    }
    const plan& p = r.plans.front();
    std::printf("chosen: %d x %s on %d node(s), dp=%lld tp=%lld pp=%lld, sharding %s, recompute %s, micro-batch %lld\n",
                p.gpus, p.gpu.c_str(), p.nodes, static_cast<long long>(p.parallel.dp),
                static_cast<long long>(p.parallel.tp), static_cast<long long>(p.parallel.pp),
                std::string(to_string(p.parallel.sharding)).c_str(), std::string(to_string(p.parallel.recompute)).c_str(),
                static_cast<long long>(p.micro_batch));
    std::printf("        %.1f of %.1f GiB usable per GPU, %.0f tokens/s, %.1f days, %.0f GPU-hours\n",
                p.required.value / GiB, p.capacity.value / GiB, p.tokens_per_s, p.est_time.value / 86400,
                p.gpu_hours);
    // the launcher's rule holds: the chosen plan meets the deadline if any plan does
    return p.est_time.value <= planner.objective().deadline_s || r.plans.back().est_time.value > planner.objective().deadline_s ? 0 : 1;
}
