#pragma once
// A plan provider memoised across a trace's jobs (the simulator asks for the same model's plans many times).
#include <map>
#include <memory>
#include <string>

#include "frenzy/plan/plan.hpp"
#include "frenzy/sched/scheduler.hpp"

namespace frenzy {

namespace detail {
/// A cached plan (one type or mixed) for a job of `total_tokens`: its time, GPU-hours and cost to that budget.
inline void rescale(plan& p, double total_tokens) {
    if (!(p.tokens_per_s > 0)) return;
    const double old = p.est_time.value;
    p.est_time = seconds{total_tokens / p.tokens_per_s};
    p.has_budget = total_tokens > 0;
    p.gpu_hours = p.est_time.value * p.gpus / 3600.0;
    if (old > 0) p.billed_gpu_hours *= p.est_time.value / old;
    if (old > 0 && p.cost) *p.cost *= p.est_time.value / old;
}
}  // namespace detail

/// Memoises a plan provider on (model, seq_len, global_batch, micro_batch, precision): step times and memory do
/// not depend on the token budget, so only est_time, gpu_hours and cost are rescaled to each job's total_tokens.
inline plan_provider cached_plan_provider(plan_provider inner) {
    auto cache = std::make_shared<std::map<std::string, plan_result>>();
    return [inner = std::move(inner), cache](const job_spec& j) -> plan_result {
        const std::string key = j.model.name + "|" + std::to_string(j.training.seq_len) + "|" +
                                std::to_string(j.training.global_batch) + "|" + std::to_string(j.training.micro_batch) +
                                "|" + std::string(to_string(j.training.precision));
        auto it = cache->find(key);
        if (j.model.name.empty() || it == cache->end()) {
            plan_result r = inner(j);
            if (j.model.name.empty()) return r;
            it = cache->emplace(key, std::move(r)).first;
        }
        plan_result r = it->second;
        for (auto* list : {&r.plans, &r.mixed})
            for (auto& p : *list) detail::rescale(p, j.training.total_tokens);
        return r;
    };
}

}  // namespace frenzy
