// Scheduling cost against cluster size: one HAS decision vs one Sia ILP solve on the same state, side by side.
// Clusters of 64 .. 16384 GPUs (four GPU types, 8-GPU nodes), ~70% of GPUs busy with running jobs, and a few
// hundred waiting jobs, each with plans on every type (1 .. 64 GPUs, decreasing scaling efficiency). HAS decides
// the same state twice more with every other waiting job also carrying mixed plans (job_view::plans ending in pipelines
// over two types, 16 .. 64 GPUs, plan/mixed.hpp), the two variants alternating; their medians and ratio are printed.
// Last, HAS decides a state whose running jobs also carry their current plan (so that moves can be weighed) with
// moves off and on (has_options::moves, issue 56), alternating, each decision by a fresh scheduler (a move is
// remembered: a reused one would weigh fewer jobs); their medians and ratio are printed.
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
    std::vector<plan_rate> rates;  // rate_of each plan, likewise
    std::vector<plan> mixed;        // pipelines over two types (every other waiting job)
    std::vector<int> mixed_types;   // cluster type index per group of each mixed plan, as the simulator hands them
    std::vector<plan> with_mixed;   // plans, then mixed: job_view::plans with the pipelines
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

// Mixed plans over two of the types (the faster type first: it holds the embedding), half the GPUs on each, best
// first: a little faster than the two types' GPUs would be apart at the same scaling efficiency.
std::vector<plan> make_mixed_plans(std::mt19937_64& rng) {
    std::vector<plan> ms;
    const double base = 1000.0 * static_cast<double>(1 + rng() % 8);
    const int a = static_cast<int>(rng() % 3), b = a + 1 + static_cast<int>(rng() % static_cast<unsigned>(3 - a));
    for (int g = 64, k = 4; g >= 16; g /= 2, --k) {
        plan m;
        for (int t : {a, b}) {
            stage_group grp;
            grp.gpu = kTypes[t];
            grp.gpus = g / 2;
            grp.gpus_per_node = 8;
            grp.nodes = std::max(1, g / 16);
            grp.stages = 1;
            m.groups.push_back(grp);
        }
        m.parallel.tp = 2;
        m.parallel.dp = g / 4;
        m.parallel.pp = 2;
        m.tokens_per_s = base * (kSpeed[a] + kSpeed[b]) * (g / 2) * std::pow(0.93, k) * 1.05;
        set_group_totals(m);
        ms.push_back(std::move(m));
    }
    return ms;
}

// Median CPU microseconds of one HAS decision on the state of `views`, `reps` times; the last decision's starts in
// `started` (mixed ones in `mixed_started`).
double has_decision_us(has_scheduler<>& has, const cluster_state& cs, const std::vector<job_view>& views, int reps,
                       std::size_t& started, std::size_t& mixed_started) {
    std::vector<double> us;
    for (int r = 0; r < reps; ++r) {
        const double t0 = detail::thread_cpu_us();
        auto d = has.schedule({1000.0, &cs, views});
        us.push_back(detail::thread_cpu_us() - t0);
        started = d.start.size();
        mixed_started = static_cast<std::size_t>(std::count_if(d.start.begin(), d.start.end(), [](const auto& s) { return s.p.mixed(); }));
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
}
}  // namespace

namespace {
struct moves_cost {
    double off_us = 0, on_us = 0;
    std::size_t moved = 0;  ///< jobs the last decision with moves moved or shrank
};

// Median CPU microseconds of one HAS decision without and with moves on `views` whose running jobs (the first
// `running`) also carry their current plan and a predicted end from it, alternating, a fresh scheduler each.
moves_cost moves_us(const cluster_state& cs, std::vector<job_view> views, const std::vector<bench_job>& jobs,
                    const std::vector<std::size_t>& current, int running) {
    for (int k = 0; k < running; ++k) {
        auto& v = views[static_cast<std::size_t>(k)];
        v.current = &jobs[static_cast<std::size_t>(k)].plans[current[static_cast<std::size_t>(k)]];
        v.progress = 0.5;
        v.restart_s = 30;
        v.move_s = 90;
        v.predicted_end_s = 1000.0 + v.remaining_s(*v.current);
    }
    has_options off, on;
    on.moves = true;
    std::vector<double> off_us, on_us;
    moves_cost r;
    for (int rep = 0; rep < 15; ++rep)
        for (const auto* o : {&off, &on}) {
            has_scheduler<> h(*o);
            const double t0 = detail::thread_cpu_us();
            const auto d = h.schedule({1000.0, &cs, views});
            (o == &on ? on_us : off_us).push_back(detail::thread_cpu_us() - t0);
            if (o == &on) r.moved = static_cast<std::size_t>(std::count_if(d.start.begin(), d.start.end(), [](const auto& s) { return s.move; }));
        }
    std::sort(off_us.begin(), off_us.end());
    std::sort(on_us.begin(), on_us.end());
    r.off_us = off_us[off_us.size() / 2];
    r.on_us = on_us[on_us.size() / 2];
    return r;
}
}  // namespace

int main(int argc, char** argv) {
    const int waiting = argc > 1 ? std::atoi(argv[1]) : 500;
    const double limit = argc > 2 ? std::atof(argv[2]) : 10.0;
    const int max_gpus = argc > 3 ? std::atoi(argv[3]) : 16384;
    std::printf("%8s %8s %8s %14s %14s %14s %10s %8s %14s %8s\n", "GPUs", "running", "waiting", "HAS decision us", "HAS max us",
                "Sia solve ms", "Sia/HAS", "optimal", "+mixed us", "ratio");
    for (int n = 64; n <= max_gpus; n *= 2) {
        std::mt19937_64 rng(42);
        cluster_spec cluster;
        for (int t = 0; t < 4; ++t) cluster.nodes.push_back({kTypes[t], kTypes[t], 8, n / 32});
        cluster_state cs(cluster);
        // Running jobs fill ~70% of each type.
        std::vector<bench_job> jobs;
        std::vector<job_view> views;
        std::vector<allocation> allocs;
        std::vector<std::size_t> current;  // index of each running job's plan
        allocs.reserve(static_cast<std::size_t>(n));
        const int want_busy = n * 7 / 10;
        int busy = 0, id = 0;
        jobs.reserve(static_cast<std::size_t>(n + waiting));
        for (int attempt = 0; busy < want_busy && attempt < 100000; ++attempt) {
            bench_job j{make_plans(rng), 1e9 * static_cast<double>(1 + rng() % 100), {}, {}, {}, {}, {}};
            const std::size_t pi = rng() % j.plans.size();
            const plan& p = j.plans[pi];
            const int t = cs.type_index(p.gpu);
            auto a = best_fit_placement{}.place(cs, cs.free_vector(), {t, p.gpus, static_cast<int>(p.parallel.tp)});
            if (!a) continue;
            cs.allocate(id, p.gpu, *a);
            busy += p.gpus;
            jobs.push_back(std::move(j));
            allocs.push_back(*a);
            current.push_back(pi);
            job_view v;
            v.id = id++;
            v.running = true;
            v.alloc = &allocs.back();
            v.predicted_end_s = 100.0 + static_cast<double>(rng() % 100000);
            views.push_back(v);
        }
        const int running = id;
        std::mt19937_64 mixed_rng(7);  // its own stream: the state without mixed plans is the one it always was
        for (int w = 0; w < waiting; ++w) {
            jobs.push_back({make_plans(rng), 1e9 * static_cast<double>(1 + rng() % 100), {}, {}, {}, {}, {}});
            if (w % 2 == 0) jobs.back().mixed = make_mixed_plans(mixed_rng);
            job_view v;
            v.id = id++;
            v.submit_s = static_cast<double>(w);
            views.push_back(v);
        }
        for (std::size_t k = 0; k < views.size(); ++k) {
            for (const auto& p : jobs[k].plans) {
                jobs[k].types.push_back(cs.type_index(p.gpu));
                jobs[k].rates.push_back(rate_of(p));
            }
            views[k].plans = &jobs[k].plans;
            views[k].plan_types = jobs[k].types;
            views[k].plan_rates = jobs[k].rates;  // as the simulator hands them to policies
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
        // The same state with and without the mixed plans, alternating (one ratio per run of this program).
        std::vector<job_view> with_mixed = views;
        for (std::size_t k = 0; k < views.size(); ++k) {
            if (jobs[k].mixed.empty()) continue;
            for (const auto& m : jobs[k].mixed)
                for (const auto& g : m.groups) jobs[k].mixed_types.push_back(cs.type_index(g.gpu));
            jobs[k].with_mixed = jobs[k].plans;
            jobs[k].with_mixed.insert(jobs[k].with_mixed.end(), jobs[k].mixed.begin(), jobs[k].mixed.end());
            with_mixed[k].plans = &jobs[k].with_mixed;
            with_mixed[k].mixed_types = jobs[k].mixed_types;
        }
        std::vector<double> plain_us, mixed_us;
        std::size_t plain_started = 0, mixed_started = 0, of_them_mixed = 0, none = 0;
        for (int r = 0; r < 15; ++r) {
            plain_us.push_back(has_decision_us(has, cs, views, 1, plain_started, none));
            mixed_us.push_back(has_decision_us(has, cs, with_mixed, 1, mixed_started, of_them_mixed));
        }
        std::sort(plain_us.begin(), plain_us.end());
        std::sort(mixed_us.begin(), mixed_us.end());
        const double plain_med = plain_us[plain_us.size() / 2], mixed_med = mixed_us[mixed_us.size() / 2];
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
        const auto mv = moves_us(cs, views, jobs, current, running);
        std::printf("%8d %8d %8d %14.1f %14.1f %14.1f %10.0f %8s %14.1f %8.2f   (HAS started %zu; with mixed plans %zu, "
                    "%zu of them mixed; alternating medians %.1f / %.1f us) moves off/on %.1f / %.1f us, ratio %.2f, %zu moved\n",
                    n, running, waiting, has_med, has_p99, sia_ms, sia_ms > 0 ? sia_ms * 1000.0 / has_med : 0.0,
                    sia_ms < 0 ? "-" : optimal ? "yes" : "no", mixed_med, mixed_med / plain_med, started, mixed_started,
                    of_them_mixed, plain_med, mixed_med, mv.off_us, mv.on_us, mv.on_us / mv.off_us, mv.moved);
        std::fflush(stdout);
    }
    return 0;
}
