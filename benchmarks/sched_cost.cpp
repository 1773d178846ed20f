// Scheduling cost against cluster size: one HAS decision vs one Sia ILP solve on the same state, side by side.
// Clusters of 64 .. 16384 GPUs (four GPU types, 8-GPU nodes), ~70% of GPUs busy with running jobs, and a few
// hundred waiting jobs, each with plans on every type (1 .. 64 GPUs, decreasing scaling efficiency).
// Usage: bench_sched_cost [waiting_jobs=500] [sia_time_limit_s=10] [max_gpus=16384]
// Times are CPU time of the deciding thread (detail::thread_cpu_us), as in `frenzy simulate`; Sia's solve likewise.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "frenzy/sched/cluster_state.hpp"
#include "frenzy/sched/has.hpp"
#include "frenzy/sim/simulator.hpp"
#ifdef FRENZY_HAS_GLPK
#include "frenzy/sched/sia_ilp.hpp"
#endif

using namespace frenzy;

namespace {
const char* kTypes[] = {"h100-80g", "a100-80g", "v100-32g", "rtx-3090"};
const double kSpeed[] = {4.0, 2.0, 1.0, 0.8};

struct bench_job {
    std::vector<plan> plans;
    double tokens = 0;
    std::vector<int> types;  // cluster type index per plan, as the simulator hands them to policies
};

std::vector<plan> make_plans(std::mt19937_64& rng) {
    std::vector<plan> ps;
    const double base = 1000.0 * static_cast<double>(1 + rng() % 8);
    for (int t = 0; t < 4; ++t) {
        const int min_g = 1 << (rng() % 4);  // memory: needs at least 1, 2, 4 or 8 GPUs of this type
        for (int g = min_g, k = 0; g <= 64; g *= 2, ++k) {
            plan p;
            p.gpu = kTypes[t];
            p.gpus = g;
            p.nodes = std::max(1, g / 8);
            p.parallel.tp = std::min(g, 2);
            p.parallel.dp = g / p.parallel.tp;
            p.tokens_per_s = base * kSpeed[t] * g * std::pow(0.93, k);
            ps.push_back(p);
        }
    }
    return ps;
}
}  // namespace

int main(int argc, char** argv) {
    const int waiting = argc > 1 ? std::atoi(argv[1]) : 500;
    const double limit = argc > 2 ? std::atof(argv[2]) : 10.0;
    const int max_gpus = argc > 3 ? std::atoi(argv[3]) : 16384;
    std::printf("%8s %8s %8s %14s %14s %14s %10s %8s\n", "GPUs", "running", "waiting", "HAS decision us", "HAS max us",
                "Sia solve ms", "Sia/HAS", "optimal");
    for (int n = 64; n <= max_gpus; n *= 2) {
        std::mt19937_64 rng(42);
        cluster_spec cluster;
        for (int t = 0; t < 4; ++t) cluster.nodes.push_back({kTypes[t], kTypes[t], 8, n / 32});
        cluster_state cs(cluster);
        // Running jobs fill ~70% of each type.
        std::vector<bench_job> jobs;
        std::vector<job_view> views;
        std::vector<allocation> allocs;
        allocs.reserve(static_cast<std::size_t>(n));
        const int want_busy = n * 7 / 10;
        int busy = 0, id = 0;
        jobs.reserve(static_cast<std::size_t>(n + waiting));
        for (int attempt = 0; busy < want_busy && attempt < 100000; ++attempt) {
            bench_job j{make_plans(rng), 1e9 * static_cast<double>(1 + rng() % 100), {}};
            const plan& p = j.plans[rng() % j.plans.size()];
            const int t = cs.type_index(p.gpu);
            auto a = best_fit_placement{}.place(cs, cs.free_vector(), {t, p.gpus, static_cast<int>(p.parallel.tp)});
            if (!a) continue;
            cs.allocate(id, p.gpu, *a);
            busy += p.gpus;
            jobs.push_back(std::move(j));
            allocs.push_back(*a);
            job_view v;
            v.id = id++;
            v.running = true;
            v.alloc = &allocs.back();
            v.predicted_end_s = 100.0 + static_cast<double>(rng() % 100000);
            views.push_back(v);
        }
        const int running = id;
        for (int w = 0; w < waiting; ++w) {
            jobs.push_back({make_plans(rng), 1e9 * static_cast<double>(1 + rng() % 100), {}});
            job_view v;
            v.id = id++;
            v.submit_s = static_cast<double>(w);
            views.push_back(v);
        }
        for (std::size_t k = 0; k < views.size(); ++k) {
            for (const auto& p : jobs[k].plans) jobs[k].types.push_back(cs.type_index(p.gpu));
            views[k].plans = &jobs[k].plans;
            views[k].plan_types = jobs[k].types;
            views[k].total_tokens = jobs[k].tokens;
        }
        // HAS: the same decision, repeated.
        std::vector<double> us;
        std::size_t started = 0;
        has_options ho;
        if (std::getenv("NOPRE")) ho.preempt = false;
        if (std::getenv("NOEXP")) ho.expand_idle = false;
        has_scheduler<> has(ho);  // one scheduler for all repeats, as the simulator keeps one per run
        for (int r = 0; r < 30; ++r) {
            const double t0 = detail::thread_cpu_us();
            auto d = has.schedule({1000.0, &cs, views});
            started = d.start.size();
            us.push_back(detail::thread_cpu_us() - t0);
        }
        std::sort(us.begin(), us.end());
        const double has_med = us[us.size() / 2];
        const double has_p99 = us.back();
        double sia_ms = -1;
        bool optimal = false;
#ifdef FRENZY_HAS_GLPK
        std::vector<sia_job> sj;
        std::vector<int> gpus_t, nodes_t;
        for (int t = 0; t < 4; ++t) {
            gpus_t.push_back(cs.total_gpus(t));
            nodes_t.push_back(static_cast<int>(cs.nodes_of_type(t).size()));
        }
        for (const auto& v : views) {
            sia_job j;
            for (int t = 0; t < 4; ++t)
                for (auto [g, nn] : sia_config_shapes(8, nodes_t[static_cast<std::size_t>(t)])) {
                    const plan* best = nullptr;
                    for (const auto& p : *v.plans)
                        if (p.gpu == kTypes[t] && p.gpus == g) best = &p;
                    if (!best) continue;
                    if (v.running && v.alloc->type == t && v.alloc->gpus() == g) j.current = static_cast<int>(j.configs.size());
                    j.configs.push_back({t, g, nn, best->tokens_per_s});
                }
            j.age_s = 3600;
            sj.push_back(std::move(j));
        }
        sia_options so;
        so.time_limit_s = limit;
        const double t0 = detail::thread_cpu_us();
        const auto sol = solve_sia(sj, gpus_t, nodes_t, so);
        sia_ms = (detail::thread_cpu_us() - t0) / 1000.0;
        optimal = sol.optimal;
#endif
        std::printf("%8d %8d %8d %14.1f %14.1f %14.1f %10.0f %8s   (HAS started %zu)\n", n, running, waiting, has_med,
                    has_p99, sia_ms, sia_ms > 0 ? sia_ms * 1000.0 / has_med : 0.0, sia_ms < 0 ? "-" : optimal ? "yes" : "no",
                    started);
        std::fflush(stdout);
    }
    return 0;
}
