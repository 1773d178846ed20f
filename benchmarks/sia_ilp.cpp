// Solve time of Sia's round ILP (and Gavel's LP, for scale) against the number of jobs and the cluster size.
// Usage: bench_sia_ilp [max_jobs=500] [max_gpus=2048] [time_limit_s=10]
// Workload (synthetic, seeded): three GPU types (relative speed 3, 1.5, 1; 8 GPUs per node, the cluster split
// 1/4, 1/4, 1/2), each job with a random scaling exponent in [0.4, 1], a minimum GPU count (1, 2, 4 or 8: smaller
// configurations do not fit in memory, goodput 0), a 10% loss across nodes, and half the jobs already running
// on a random feasible configuration (age 0-2 h). Prints one CSV row per (jobs, GPUs).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "frenzy/sched/gavel_lp.hpp"
#include "frenzy/sched/sia_ilp.hpp"

namespace {
struct instance {
    std::vector<frenzy::sia_job> jobs;
    std::vector<int> gpus, nodes;
    frenzy::gavel_input gavel;
};

instance make(int njobs, int total_gpus, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    const double speed[3] = {3.0, 1.5, 1.0};
    const int nodes_total = std::max(3, total_gpus / 8);
    instance in;
    in.nodes = {std::max(1, nodes_total / 4), std::max(1, nodes_total / 4), 0};
    in.nodes[2] = std::max(1, nodes_total - in.nodes[0] - in.nodes[1]);
    for (int n : in.nodes) in.gpus.push_back(8 * n);
    in.gavel.throughput = Eigen::MatrixXd::Zero(njobs, 3);
    in.gavel.capacity = in.gpus;
    for (int j = 0; j < njobs; ++j) {
        frenzy::sia_job job;
        const double eff = 0.4 + 0.6 * u(rng);
        const int min_gpus = 1 << static_cast<int>(u(rng) * 4);  // 1, 2, 4, 8
        for (int t = 0; t < 3; ++t)
            for (auto [g, n] : frenzy::sia_config_shapes(8, in.nodes[static_cast<std::size_t>(t)])) {
                const int need = t == 2 ? 2 * min_gpus : min_gpus;  // the slow type has half the memory
                const double gp = g < need ? 0.0 : speed[t] * std::pow(g, eff) * (n > 1 ? 0.9 : 1.0);
                job.configs.push_back({t, g, n, gp});
                if (g == min_gpus) in.gavel.throughput(j, t) = gp;
            }
        if (u(rng) < 0.5) {
            std::vector<int> ok;
            for (std::size_t c = 0; c < job.configs.size(); ++c)
                if (job.configs[c].goodput > 0 && job.configs[c].gpus <= 16) ok.push_back(static_cast<int>(c));
            if (!ok.empty()) {
                job.current = ok[static_cast<std::size_t>(u(rng) * static_cast<double>(ok.size()))];
                job.age_s = 7200 * u(rng);
            }
        }
        in.gavel.scale_factor.push_back(min_gpus);
        in.jobs.push_back(std::move(job));
    }
    return in;
}
}  // namespace

int main(int argc, char** argv) {
    const int max_jobs = argc > 1 ? std::atoi(argv[1]) : 500;
    const int max_gpus = argc > 2 ? std::atoi(argv[2]) : 2048;
    const double limit = argc > 3 ? std::atof(argv[3]) : 10.0;
    std::printf("jobs,gpus,sia_vars,sia_solve_s,sia_optimal,sia_objective,sia_scheduled,gavel_solve_s\n");
    for (int gpus : {64, 128, 512, 2048, 8192, 16384}) {
        if (gpus > max_gpus) break;
        for (int jobs : {50, 100, 200, 300, 500, 1000}) {
            if (jobs > max_jobs) break;
            const auto in = make(jobs, gpus, 42u + static_cast<unsigned>(jobs) + static_cast<unsigned>(gpus));
            std::size_t vars = 0;
            for (const auto& j : in.jobs)
                for (const auto& c : j.configs) vars += c.goodput > 0 ? 1 : 0;
            const auto s = frenzy::solve_sia(in.jobs, in.gpus, in.nodes, {.time_limit_s = limit});
            int scheduled = 0;
            for (int c : s.choice) scheduled += c >= 0 ? 1 : 0;
            const auto g0 = std::chrono::steady_clock::now();
            const auto g = frenzy::solve_gavel_max_sum_throughput(in.gavel);
            const double gs = std::chrono::duration<double>(std::chrono::steady_clock::now() - g0).count();
            (void)g;
            std::printf("%d,%d,%zu,%.4f,%d,%.4f,%d,%.5f\n", jobs, gpus, vars, s.solve_s, s.optimal ? 1 : 0, s.objective,
                        scheduled, gs);
            std::fflush(stdout);
        }
    }
}
