// Sia's round ILP (sia_ilp.hpp): hand-derived small instances and a brute-force enumeration of every choice.
// Tolerance: 1e-9 absolute on objectives. The objective is a sum of at most a few dozen terms of size ~1 computed
// by the same pow() calls in the same order, so values of the same choice agree to ~1e-15; 1e-9 is far below the
// gap between distinct choices in these instances (>= 1e-4 unless they tie exactly).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <random>
#include <thread>

#include "frenzy/sched/sia_ilp.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace {
constexpr double eps = 1e-9;

std::vector<sia_config> shapes_of(int type, int gpus_per_node, int nodes, std::vector<double> goodputs) {
    std::vector<sia_config> out;
    const auto s = sia_config_shapes(gpus_per_node, nodes);
    REQUIRE(goodputs.size() == s.size());
    for (std::size_t i = 0; i < s.size(); ++i) out.push_back({type, s[i].first, s[i].second, goodputs[i]});
    return out;
}

// ---- brute force, written independently of the solver -----------------------------------------------------------
struct cluster_t {
    std::vector<int> gpus_per_node;  // per type (all nodes of a type alike)
    std::vector<int> nodes;          // per type
};

// Explicit placement: multi-node configurations take whole nodes, then single-node ones are packed first-fit
// decreasing into the remaining nodes (exact for power-of-two sizes in power-of-two nodes).
bool placeable(const std::vector<sia_job>& jobs, const std::vector<int>& choice, const cluster_t& cl) {
    for (std::size_t t = 0; t < cl.nodes.size(); ++t) {
        int free_nodes = cl.nodes[t];
        std::vector<int> singles;
        for (std::size_t j = 0; j < jobs.size(); ++j) {
            if (choice[j] < 0) continue;
            const auto& c = jobs[j].configs[static_cast<std::size_t>(choice[j])];
            if (c.type != static_cast<int>(t)) continue;
            if (c.nodes >= 2) {
                if (c.gpus > c.nodes * cl.gpus_per_node[t]) return false;
                free_nodes -= c.nodes;
            } else {
                if (c.gpus > cl.gpus_per_node[t]) return false;
                singles.push_back(c.gpus);
            }
        }
        if (free_nodes < 0) return false;
        std::sort(singles.rbegin(), singles.rend());
        std::vector<int> room(static_cast<std::size_t>(free_nodes), cl.gpus_per_node[t]);
        for (int g : singles) {
            auto it = std::find_if(room.begin(), room.end(), [g](int r) { return r >= g; });
            if (it == room.end()) return false;
            *it -= g;
        }
    }
    return true;
}

// Sia's objective for a choice (p < 0: sum of normalised goodput^p plus lambda per idle job, lower is better;
// p > 0: sum of normalised goodput^p, higher is better). NaN when a chosen configuration has zero goodput.
double value_of(const std::vector<sia_job>& jobs, const std::vector<int>& choice, const sia_options& o) {
    double v = 0;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        if (choice[j] < 0) {
            if (o.p < 0) v += o.lambda;
            continue;
        }
        const auto& job = jobs[j];
        double gmin = 1e300;
        for (const auto& c : job.configs)
            if (c.goodput > 0) gmin = std::min(gmin, c.goodput);
        const double g = job.configs[static_cast<std::size_t>(choice[j])].goodput;
        if (g <= 0) return std::nan("");
        double r = 1;
        if (job.current >= 0 && job.current != choice[j]) {
            const double d = o.restart_penalty_s;
            r = o.restart_model == sia_restart_model::round ? o.round_s / (o.round_s + d)
                                                            : std::max(0.0, job.age_s - job.restarts * d) / (job.age_s + d);
            if (r <= 0) return std::nan("");
        }
        v += std::pow(r * g / gmin, o.p);
    }
    return v;
}

struct brute_result {
    double best;
    int count;  // number of choices reaching it
};
brute_result brute_force(const std::vector<sia_job>& jobs, const cluster_t& cl, const sia_options& o) {
    std::vector<int> choice(jobs.size(), -1);
    brute_result best{o.p < 0 ? 1e300 : -1e300, 0};
    std::function<void(std::size_t)> rec = [&](std::size_t j) {
        if (j == jobs.size()) {
            if (!placeable(jobs, choice, cl)) return;
            const double v = value_of(jobs, choice, o);
            if (std::isnan(v)) return;
            if (std::abs(v - best.best) <= eps)
                ++best.count;
            else if (o.p < 0 ? v < best.best : v > best.best)
                best = {v, 1};
            return;
        }
        for (int c = -1; c < static_cast<int>(jobs[j].configs.size()); ++c) {
            choice[j] = c;
            rec(j + 1);
        }
        choice[j] = -1;
    };
    rec(0);
    return best;
}

std::vector<int> gpus_of(const cluster_t& cl) {
    std::vector<int> g;
    for (std::size_t t = 0; t < cl.nodes.size(); ++t) g.push_back(cl.nodes[t] * cl.gpus_per_node[t]);
    return g;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("sia_config_shapes: powers of two in a node, then whole nodes") {
    using v = std::vector<std::pair<int, int>>;
    CHECK(sia_config_shapes(8, 3) == v{{1, 1}, {2, 1}, {4, 1}, {8, 1}, {16, 2}, {24, 3}});
    CHECK(sia_config_shapes(6, 2) == v{{1, 1}, {2, 1}, {4, 1}, {6, 1}, {12, 2}});
    CHECK(sia_config_shapes(1, 2) == v{{1, 1}, {2, 2}});
    CHECK(sia_config_shapes(4, 0).empty());
    CHECK_THROWS_AS(sia_config_shapes(0, 1), config_error);
}

TEST_CASE("sia: p < 0 shares fairly, p > 0 maximises normalised goodput (sign convention)") {
    // One node of 4 GPUs. Job A scales poorly (goodput 1, 1.8, 3 on 1, 2, 4 GPUs), job B perfectly (2, 4, 8).
    // Normalised by each job's 1-GPU goodput: A = 1, 1.8, 3; B = 1, 2, 4.
    const std::vector<sia_job> jobs{{.configs = shapes_of(0, 4, 1, {1, 1.8, 3})},
                                    {.configs = shapes_of(0, 4, 1, {2, 4, 8})}};
    // p = -0.5, lambda = 1.1 (minimise): A2+B2 = 1.8^-.5 + 2^-.5 = 0.745356 + 0.707107 = 1.452463 beats
    // A1+B2 = 1.707107, A2+B1 = 1.745356, A1+B1 = 2, B4 alone = 0.5 + 1.1 = 1.6, A4 alone = 0.577350 + 1.1.
    auto s = solve_sia(jobs, {4}, {1});
    CHECK(s.optimal);
    CHECK(s.choice == std::vector<int>{1, 1});
    CHECK(s.objective == Approx(1 / std::sqrt(1.8) + 1 / std::sqrt(2.0)).margin(eps));
    // p = 1 (maximise the sum): B4 alone = 4 beats A2+B2 = 3.8, A1+B2 = 3, A4 alone = 3.
    s = solve_sia(jobs, {4}, {1}, {.p = 1});
    CHECK(s.optimal);
    CHECK(s.choice == std::vector<int>{-1, 2});
    CHECK(s.objective == Approx(4).margin(eps));
}

TEST_CASE("sia: matches brute-force enumeration of every choice") {
    // Two types: 2 nodes x 4 GPUs (shapes 1,2,4 | 8 on 2 nodes) and 3 nodes x 2 GPUs (1,2 | 4 on 2, 6 on 3).
    const cluster_t cl{{4, 2}, {2, 3}};
    std::mt19937 rng(2024);
    std::uniform_real_distribution<double> u(0, 1);
    int checked = 0;
    for (int rep = 0; rep < 40; ++rep) {
        const int njobs = 3 + rep % 3;  // 3..5 jobs: at most 9^5 = 59049 choices
        sia_options o;
        if (rep % 4 == 1) o.restart_model = sia_restart_model::round;
        if (rep % 4 == 2) o.p = 0.5;
        if (rep % 4 == 3) o.p = -1.0, o.lambda = 1.3;
        std::vector<sia_job> jobs;
        for (int j = 0; j < njobs; ++j) {
            sia_job job;
            const double speed1 = 1 + 2 * u(rng), eff = 0.5 + 0.5 * u(rng);
            for (std::size_t t = 0; t < 2; ++t) {
                const double speed = t == 0 ? speed1 : 1.0;
                for (auto [g, n] : sia_config_shapes(cl.gpus_per_node[t], cl.nodes[t])) {
                    // Sub-linear scaling g^eff, an extra 10% loss across nodes, and ~15% of configs infeasible
                    // (as if the job did not fit in memory there).
                    double gp = speed * std::pow(g, eff) * (n > 1 ? 0.9 : 1.0);
                    if (u(rng) < 0.15) gp = 0;
                    job.configs.push_back({static_cast<int>(t), g, n, gp});
                }
            }
            if (u(rng) < 0.5) {
                job.current = static_cast<int>(u(rng) * static_cast<double>(job.configs.size()));
                job.age_s = 100 * u(rng) * u(rng) * 10;
                job.restarts = u(rng) < 0.3 ? 1 : 0;
            }
            jobs.push_back(job);
        }
        const auto s = solve_sia(jobs, gpus_of(cl), cl.nodes, o);
        const auto b = brute_force(jobs, cl, o);
        INFO("rep " << rep << " brute " << b.best << " solver " << s.objective);
        REQUIRE(s.optimal);
        REQUIRE(s.choice.size() == jobs.size());
        CHECK(placeable(jobs, s.choice, cl));
        const double v = value_of(jobs, s.choice, o);
        REQUIRE_FALSE(std::isnan(v));  // never a zero-goodput configuration
        CHECK(v == Approx(s.objective).margin(eps));
        CHECK(s.objective == Approx(b.best).margin(eps));
        ++checked;
    }
    CHECK(checked == 40);
}

TEST_CASE("sia: the restart penalty keeps a running job where it is unless the gain is large") {
    // One node of 8 GPUs; the job runs on 4 GPUs (goodput 1) and could move to 8 GPUs.
    auto job_with = [](double gain) {
        return sia_job{.configs = {{0, 4, 1, 1.0}, {0, 8, 1, gain}}, .current = 0, .age_s = 600, .restarts = 0};
    };
    // Age model: r = 600 / (600 + 30) = 0.952381. Gain 1.03: (0.952381 * 1.03)^-0.5 = 1.00961 > 1 (stay term).
    auto s = solve_sia({job_with(1.03)}, {8}, {1});
    CHECK(s.choice == std::vector<int>{0});
    CHECK(s.objective == Approx(1.0).margin(eps));
    // Not running: no penalty, 1.03^-0.5 = 0.985329 < 1, it takes 8 GPUs.
    auto idle = job_with(1.03);
    idle.current = -1;
    s = solve_sia({idle}, {8}, {1});
    CHECK(s.choice == std::vector<int>{1});
    CHECK(s.objective == Approx(1 / std::sqrt(1.03)).margin(eps));
    // Gain 2: (0.952381 * 2)^-0.5 = 0.724569 < 1, it moves.
    s = solve_sia({job_with(2.0)}, {8}, {1});
    CHECK(s.choice == std::vector<int>{1});
    CHECK(s.objective == Approx(1 / std::sqrt(2.0 * 600 / 630)).margin(eps));
    // One restart already paid: r = (600 - 30) / 630 = 0.904762; gain 1.08: 0.904762 * 1.08 = 0.977143,
    // term 1.011623 > 1, it stays; with no restarts 0.952381 * 1.08 = 1.028571, term 0.986013 < 1, it moves.
    auto twice = job_with(1.08);
    twice.restarts = 1;
    CHECK(solve_sia({twice}, {8}, {1}).choice == std::vector<int>{0});
    CHECK(solve_sia({job_with(1.08)}, {8}, {1}).choice == std::vector<int>{1});
    // Round model: r = 60 / (60 + 30) = 2/3. Gain 1.4 -> 0.9333 < 1: stays; gain 1.6 -> 1.0667: moves.
    const sia_options round{.restart_model = sia_restart_model::round};
    CHECK(solve_sia({job_with(1.4)}, {8}, {1}, round).choice == std::vector<int>{0});
    CHECK(solve_sia({job_with(1.6)}, {8}, {1}, round).choice == std::vector<int>{1});
}

TEST_CASE("sia: GPU capacity and whole-node constraints") {
    SECTION("GPU count: three jobs on one 4-GPU node") {
        // Each job: 1, 2, 4 GPUs with perfect scaling (normalised 1, 2, 4). Lower is better: 2+2 with one job
        // idle = 2 * 2^-.5 + 1.1 = 2.514214 beats 4 + two idle = 0.5 + 2.2 = 2.7, 2+1+1 = 2.707107 and
        // 1+1+1 = 3 (a second GPU saves 1 - 0.707 = 0.293 while running the third job saves only 1.1 - 1).
        const std::vector<sia_job> jobs(3, sia_job{.configs = shapes_of(0, 4, 1, {1, 2, 4})});
        const auto s = solve_sia(jobs, {4}, {1});
        CHECK(s.objective == Approx(2 / std::sqrt(2.0) + 1.1).margin(eps));
        int used = 0;
        for (std::size_t j = 0; j < 3; ++j)
            if (s.choice[j] >= 0) used += jobs[j].configs[static_cast<std::size_t>(s.choice[j])].gpus;
        CHECK(used == 4);
        CHECK(std::count(s.choice.begin(), s.choice.end(), -1) == 1);
    }
    SECTION("nodes: a multi-node configuration takes its nodes whole") {
        // 2 nodes x 4 GPUs. Job A only runs as 4 GPUs over 2 nodes; job B on 2 or 4 GPUs of one node (goodput
        // 0.8 and 1: normalised 1 and 1.25). By GPU count alone A + B(4) = 8 GPUs would fit (1 + 0.894427), but A
        // holds both nodes, so the best is B(4) alone: 0.894427 + 1.1 = 1.994427 (A alone: 1 + 1.1 = 2.1).
        const std::vector<sia_job> jobs{{.configs = {{0, 4, 2, 1.0}}}, {.configs = {{0, 2, 1, 0.8}, {0, 4, 1, 1.0}}}};
        const auto s = solve_sia(jobs, {8}, {2});
        CHECK(s.choice == std::vector<int>{-1, 1});
        CHECK(s.objective == Approx(1 / std::sqrt(1.25) + 1.1).margin(eps));
    }
    SECTION("nodes: single-node configurations must pack into nodes") {
        // 2 nodes x 4 GPUs; three jobs that only run on 4 GPUs in one node (goodput 1): at most two run.
        const std::vector<sia_job> jobs(3, sia_job{.configs = {{0, 4, 1, 1.0}}});
        const auto s = solve_sia(jobs, {8}, {2});
        CHECK(std::count(s.choice.begin(), s.choice.end(), 0) == 2);
        CHECK(s.objective == Approx(2 + 1.1).margin(eps));
    }
    SECTION("GPUs left on partly held nodes take single-node configurations only") {
        // 3 nodes x 8 GPUs, two of them half held by jobs outside the program (the restart lock, sched/sia.hpp):
        // 16 GPUs, 1 whole node, 8 partial GPUs (at most 4 on one node). Job A runs as 16 GPUs on 2 nodes
        // (goodput 2, normalised 2: 2^-.5 = 0.707107) or 8 on one (1); jobs B and C as 4 on one node (1). A's 16
        // would need 2 whole nodes: A takes the whole node's 8, B and C the two half nodes: 1 + 1 + 1 = 3.
        const std::vector<sia_job> jobs{{.configs = {{0, 16, 2, 2.0}, {0, 8, 1, 1.0}}},
                                        {.configs = {{0, 4, 1, 1.0}}},
                                        {.configs = {{0, 4, 1, 1.0}}}};
        const std::vector<sia_partial_nodes> half_held{{8, 4}};
        const auto s = solve_sia(jobs, {16}, {1}, {}, half_held);
        CHECK(s.choice == std::vector<int>{1, 0, 0});
        CHECK(s.objective == Approx(3.0).margin(eps));
        // The same 16 GPUs as 2 whole nodes: A on both (0.707107), B and C wait: 0.707107 + 2.2 = 2.907107 beats
        // A on 8 with B and C on the other node (3).
        const auto w = solve_sia(jobs, {16}, {2});
        CHECK(w.choice == std::vector<int>{0, -1, -1});
        CHECK(w.objective == Approx(1 / std::sqrt(2.0) + 2.2).margin(eps));
        // An 8-GPU single-node job does not fit in 4 + 4 partial GPUs: of two, one runs (1 + 1.1).
        const std::vector<sia_job> eights(2, sia_job{.configs = {{0, 8, 1, 1.0}}});
        const auto e = solve_sia(eights, {16}, {1}, {}, half_held);
        CHECK(std::count(e.choice.begin(), e.choice.end(), 0) == 1);
        CHECK(e.objective == Approx(2.1).margin(eps));
        // Only partial GPUs (no whole node): a 4-GPU job runs there, an 8-GPU one cannot.
        const auto p = solve_sia({{.configs = {{0, 4, 1, 1.0}}}, {.configs = {{0, 8, 1, 1.0}}}}, {8}, {0}, {}, half_held);
        CHECK(p.choice == std::vector<int>{0, -1});
    }
    SECTION("a size that does not divide the node holds a whole node") {
        // 2 nodes x 6 GPUs: jobs of 4, 4 and 4 GPUs total 12 <= 12, yet no two share a 6-GPU node.
        const std::vector<sia_job> jobs(3, sia_job{.configs = {{0, 4, 1, 1.0}}});
        const auto s = solve_sia(jobs, {12}, {2});
        CHECK(std::count(s.choice.begin(), s.choice.end(), 0) == 2);
    }
}

TEST_CASE("sia: a running job keeps its configuration against an equal waiting job (tie-break)") {
    // One 4-GPU node; two jobs that each run only as 4 GPUs at the same goodput: either one runs (1 + 1.1 = 2.1).
    // The running one keeps the node, whichever order the jobs come in; the objective leaves the tie-break out.
    const sia_job running{.configs = {{0, 4, 1, 1.0}}, .current = 0, .age_s = 600};
    const sia_job waiting{.configs = {{0, 4, 1, 1.0}}, .age_s = 600};
    const auto a = solve_sia({running, waiting}, {4}, {1});
    CHECK(a.choice == std::vector<int>{0, -1});
    CHECK(a.objective == Approx(2.1).margin(eps));
    const auto b = solve_sia({waiting, running}, {4}, {1});
    CHECK(b.choice == std::vector<int>{-1, 0});
    CHECK(b.objective == Approx(2.1).margin(eps));
    // A real difference still wins: a waiting job whose 4 GPUs run 1.9x its 2 takes the node, 1.1 + 1.9^-.5 =
    // 1.825510 against 1 + 1.1 = 2.1 with the running job kept.
    const sia_job faster{.configs = {{0, 2, 1, 1.0}, {0, 4, 1, 1.9}}, .age_s = 600};
    const auto f = solve_sia({running, faster}, {4}, {1});
    CHECK(f.choice == std::vector<int>{-1, 1});
    CHECK(f.objective == Approx(1.1 + 1 / std::sqrt(1.9)).margin(eps));
}

TEST_CASE("sia: infeasible configurations (goodput 0) are never chosen") {
    // 8 free GPUs; the job's 4- and 8-GPU configurations do not fit in memory (goodput 0), so it takes 2 GPUs.
    const std::vector<sia_job> jobs{{.configs = {{0, 1, 1, 1.0}, {0, 2, 1, 1.9}, {0, 4, 1, 0.0}, {0, 8, 1, 0.0}}},
                                    {.configs = {{0, 4, 1, 0.0}}}};
    const auto s = solve_sia(jobs, {8}, {1});
    CHECK(s.choice == std::vector<int>{1, -1});
    CHECK(s.objective == Approx(1 / std::sqrt(1.9) + 1.1).margin(eps));
    // A configuration larger than the cluster is never chosen either.
    const auto t = solve_sia({{.configs = {{0, 16, 2, 5.0}, {0, 8, 1, 1.0}}}}, {8}, {1});
    CHECK(t.choice == std::vector<int>{1});
}

TEST_CASE("sia: the time limit stops the search and flags the solution as not proven optimal") {
    // 400 jobs x 2 types x 6 shapes on 2 x 32 nodes: without a limit GLPK proves the optimum in ~0.1 s on the
    // development machine, of which ~25 ms before the first integer point, so with a 1 ms limit the search cannot
    // finish (it would take a machine ~25x faster to). The answer must still be a feasible schedule whose value
    // is reported correctly (there: 298.44 against the optimum 291.78).
    const cluster_t cl{{8, 8}, {32, 32}};
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<sia_job> jobs;
    for (int j = 0; j < 400; ++j) {
        sia_job job;
        const double eff = 0.3 + 0.7 * u(rng);
        for (int t = 0; t < 2; ++t)
            for (auto [g, n] : sia_config_shapes(cl.gpus_per_node[static_cast<std::size_t>(t)], 3))
                job.configs.push_back({t, g, n, (t == 0 ? 2.0 : 1.0) * std::pow(g, eff) * (0.9 + 0.2 * u(rng))});
        jobs.push_back(job);
    }
    const sia_options o{.time_limit_s = 0.001};
    const auto s = solve_sia(jobs, gpus_of(cl), cl.nodes, o);
    CHECK_FALSE(s.optimal);
    CHECK(s.timed_out);
    CHECK(placeable(jobs, s.choice, cl));
    CHECK(value_of(jobs, s.choice, o) == Approx(s.objective).margin(1e-6));
    // The cluster (512 GPUs) can hold many of the 400 jobs: the fallback schedules work, not nothing.
    CHECK(s.objective < 400 * 1.1 - 100);
}

TEST_CASE("sia: the node budget stops the search at the same point every time, whatever the clock") {
    // 40 jobs on three types of 2 nodes (8, 8 and 4 GPUs per node), seeded: a quarter of the jobs do not fit their
    // smallest shapes, half are running (so restart factors differ). GLPK proves this one optimal only after a
    // branch-and-bound search (113 subproblems with Debian's GLPK 5.0; asserted only as "more than 4"). With
    // node_limit 3 and a generous wall clock the search stops at the budget: the callback ends it at the first
    // subproblem selection with >= 3 subproblems, and branching adds them two at a time, so GLPK reports 3 or 4.
    // Two solves give the same schedule: the budget, unlike the clock, does not depend on the machine's load.
    const cluster_t cl{{8, 8, 4}, {2, 2, 2}};
    std::mt19937 rng(6);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<sia_job> jobs;
    for (int j = 0; j < 40; ++j) {
        sia_job job;
        const double eff = 0.3 + 0.7 * u(rng);
        const int too_small = static_cast<int>(u(rng) * 4);  // shapes of each type below the job's memory floor
        for (int t = 0; t < 3; ++t) {
            int k = 0;
            for (auto [g, n] : sia_config_shapes(cl.gpus_per_node[static_cast<std::size_t>(t)], 2))
                job.configs.push_back({t, g, n, k++ < too_small ? 0.0 : std::array{3.0, 1.7, 1.0}[static_cast<std::size_t>(t)] *
                                                                      std::pow(g, eff) * (0.9 + 0.2 * u(rng))});
        }
        if (u(rng) < 0.5) {
            int c = 0;
            do c = static_cast<int>(u(rng) * static_cast<double>(job.configs.size()));
            while (job.configs[static_cast<std::size_t>(c)].goodput == 0);
            job.current = c;
            job.age_s = 36000 * u(rng);
            job.restarts = static_cast<int>(u(rng) * 3);
        }
        jobs.push_back(job);
    }
    const auto full = solve_sia(jobs, gpus_of(cl), cl.nodes, {.time_limit_s = 600, .cuts = false});
    REQUIRE(full.optimal);
    REQUIRE(full.nodes > 4);
    const sia_options o{.time_limit_s = 600, .node_limit = 3, .cuts = false};
    const auto a = solve_sia(jobs, gpus_of(cl), cl.nodes, o);
    const auto b = solve_sia(jobs, gpus_of(cl), cl.nodes, o);
    CHECK_FALSE(a.optimal);
    CHECK_FALSE(a.timed_out);
    CHECK(a.nodes >= 3);
    CHECK(a.nodes <= 4);
    CHECK(a.choice == b.choice);
    CHECK(placeable(jobs, a.choice, cl));
    CHECK(value_of(jobs, a.choice, o) == Approx(a.objective).margin(1e-6));
    // Minimisation (p < 0): a stopped search is at best the proven optimum.
    CHECK(a.objective >= full.objective - 1e-9);

    // A relative gap (Sia's artifact stops CBC at 1e-4) ends the search once the incumbent is provably within it
    // of the optimum: flagged optimal, no more subproblems than the full search, and within the gap of its value.
    const auto g = solve_sia(jobs, gpus_of(cl), cl.nodes, {.time_limit_s = 600, .mip_gap = 0.05, .cuts = false});
    CHECK(g.optimal);
    CHECK(g.nodes <= full.nodes);
    CHECK(g.objective >= full.objective - 1e-9);
    CHECK(g.objective <= full.objective * 1.05 + 1e-9);
}

TEST_CASE("sia: with cuts a round of single-configuration jobs is proved at the root, keeping the running jobs") {
    // A round taken from `frenzy simulate --sizes requested` (skip 40000, seed 1): 30 jobs with one configuration
    // each (so every term is 1 against lambda 1.1: the program maximises the number of jobs run), on types of 1 x 8,
    // 2 x 8 and 2 x 8 GPUs. By hand the most that fit: type 0, two of its 1/4/4/4-GPU jobs (4 + 4 or 1 + 4); types 1
    // and 2, five each (1 + 1 + 4 + 4 + 4 = 14 of 16 GPUs; a sixth 4 or an 8 exceeds 16). The 12 running jobs are
    // exactly such a set, so the optimum keeps them all (the 1e-5 keep preference breaks the tie with waiting jobs of
    // the same sizes): objective 30 x 1.1 - 12 x 0.1 = 31.8. Without cuts GLPK 5.0 had not proved this after 30,000
    // subproblems and its incumbent had swapped two running 4-GPU jobs for waiting ones of equal value (measured);
    // with MIR and Gomory cuts it closes at the root.
    struct row { int type, gpus; bool running; };
    const std::vector<row> rows{{2, 1, true},  {1, 8, false}, {1, 1, true},  {1, 1, true},  {1, 4, true},  {2, 8, false},
                                {2, 8, false}, {2, 1, true},  {1, 4, true},  {0, 4, true},  {2, 4, true},  {1, 4, true},
                                {2, 4, true},  {1, 4, false}, {2, 4, true},  {2, 4, false}, {1, 4, false}, {1, 4, false},
                                {2, 4, false}, {2, 4, false}, {0, 4, true},  {1, 4, false}, {2, 4, false}, {1, 4, false},
                                {1, 4, false}, {2, 4, false}, {1, 4, false}, {2, 4, false}, {0, 4, false}, {0, 1, false}};
    std::vector<sia_job> jobs;
    for (const auto& r : rows)
        jobs.push_back({.configs = {{r.type, r.gpus, 1, 100.0}}, .current = r.running ? 0 : -1, .age_s = 3600});
    const cluster_t cl{{8, 8, 8}, {1, 2, 2}};
    const auto s = solve_sia(jobs, gpus_of(cl), cl.nodes, {.time_limit_s = 600, .node_limit = 30000});
    CHECK(s.optimal);
    CHECK(s.nodes <= 3);
    CHECK(s.objective == Approx(31.8).margin(1e-6));
    for (std::size_t j = 0; j < rows.size(); ++j) CHECK(s.choice[j] == (rows[j].running ? 0 : -1));
    // The same program without cuts is never better (it may only be unproven).
    const auto n = solve_sia(jobs, gpus_of(cl), cl.nodes, {.time_limit_s = 600, .node_limit = 30000, .cuts = false});
    CHECK(n.objective >= s.objective - 1e-9);
}

TEST_CASE("sia: an excluded configuration is never chosen, and still normalises the job's terms") {
    // One job, 1 GPU at 100 or 2 GPUs at 150 tok/s, on one 8-GPU node. Unexcluded it takes 2 GPUs: term
    // (150/100)^-0.5 = 0.8165. With the 2-GPU configuration excluded it takes 1 GPU (term 1); with the 1-GPU one
    // excluded it takes 2 GPUs and the term is still 0.8165 (normalised by the excluded 100, not by 150 itself).
    const double eps = 1e-4;  // GLPK's tolerance plus the 1e-5 keep preference (not part of `objective`)
    sia_job j{.configs = {{0, 1, 1, 100.0}, {0, 2, 1, 150.0}}};
    auto s = solve_sia({j}, {8}, {1});
    CHECK(s.choice == std::vector<int>{1});
    CHECK(s.objective == Approx(1 / std::sqrt(1.5)).margin(eps));
    j.configs[1].excluded = true;
    s = solve_sia({j}, {8}, {1});
    CHECK(s.choice == std::vector<int>{0});
    CHECK(s.objective == Approx(1.0).margin(eps));
    j.configs[1].excluded = false;
    j.configs[0].excluded = true;
    s = solve_sia({j}, {8}, {1});
    CHECK(s.choice == std::vector<int>{1});
    CHECK(s.objective == Approx(1 / std::sqrt(1.5)).margin(eps));
}

TEST_CASE("sia: malformed input names the field") {
    const sia_job ok{.configs = {{0, 1, 1, 1.0}}};
    CHECK_THAT(error_of([&] { (void)solve_sia({ok}, {8}, {1, 2}); }), Contains("nodes_per_type"));
    CHECK_THAT(error_of([&] { (void)solve_sia({{.configs = {{1, 1, 1, 1.0}}}}, {8}, {1}); }),
               Contains("jobs[0].configs[0].type=1"));
    CHECK_THAT(error_of([&] { (void)solve_sia({{.configs = {{0, 1, 1, 1.0}}, .current = 1}}, {8}, {1}); }),
               Contains("jobs[0].current=1"));
    CHECK_THAT(error_of([&] { (void)solve_sia({{.configs = {{0, 1, 2, 1.0}}}}, {8}, {2}); }), Contains("gpus >= nodes"));
    CHECK_THAT(error_of([&] { (void)solve_sia({{.configs = {{0, 1, 1, -1.0}}}}, {8}, {1}); }), Contains("goodput"));
    CHECK_THAT(error_of([&] { (void)solve_sia({ok}, {8}, {1}, {.p = 0}); }), Contains("options.p"));
    CHECK_THAT(error_of([&] { (void)solve_sia({ok}, {8}, {1}, {.time_limit_s = 0}); }), Contains("time_limit_s"));
    CHECK_THAT(error_of([&] { (void)solve_sia({ok}, {8}, {1}, {.node_limit = -1}); }), Contains("options.node_limit=-1"));
    CHECK_THAT(error_of([&] { (void)solve_sia({ok}, {8}, {0}); }), Contains("every node"));
    CHECK_THAT(error_of([&] { (void)solve_sia({ok}, {8}, {1}, {}, {{2, 2}, {1, 1}}); }), Contains("partial_per_type has 2"));
    CHECK_THAT(error_of([&] { (void)solve_sia({ok}, {8}, {1}, {}, {{2, 3}}); }), Contains("partial_per_type[0]"));
    CHECK_THAT(error_of([&] { (void)solve_sia({ok}, {8}, {1}, {}, {{9, 4}}); }), Contains("gpus_per_type[0]=8"));
    // No jobs, or no choosable configuration: trivially optimal.
    CHECK(solve_sia({}, {8}, {1}).optimal);
    const auto none = solve_sia({{.configs = {{0, 1, 1, 0.0}}}}, {8}, {1});
    CHECK(none.optimal);
    CHECK(none.choice == std::vector<int>{-1});
    CHECK(none.objective == Approx(1.1).margin(eps));
}

TEST_CASE("sia and gavel: concurrent solves in several threads give the serial answers") {
    // GLPK keeps its environment per thread; nothing else is shared, so four threads solving different instances
    // at once must each reproduce the serial objective exactly (same instance, same deterministic solver).
    const cluster_t cl{{4, 2}, {2, 3}};
    std::vector<std::vector<sia_job>> inst;
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(0, 1);
    for (int k = 0; k < 4; ++k) {
        std::vector<sia_job> jobs;
        for (int j = 0; j < 12; ++j) {
            sia_job job;
            for (std::size_t t = 0; t < 2; ++t)
                for (auto [g, n] : sia_config_shapes(cl.gpus_per_node[t], cl.nodes[t]))
                    job.configs.push_back({static_cast<int>(t), g, n, (1 + u(rng)) * std::pow(g, 0.4 + 0.6 * u(rng))});
            jobs.push_back(job);
        }
        inst.push_back(jobs);
    }
    std::vector<double> serial;
    for (const auto& jobs : inst) serial.push_back(solve_sia(jobs, gpus_of(cl), cl.nodes).objective);
    std::vector<double> par(inst.size());
    std::vector<std::thread> th;
    for (std::size_t k = 0; k < inst.size(); ++k)
        th.emplace_back([&, k] {
            for (int rep = 0; rep < 5; ++rep) par[k] = solve_sia(inst[k], gpus_of(cl), cl.nodes).objective;
            glp_free_env();  // a thread that used GLPK frees its GLPK environment before it exits
        });
    for (auto& t : th) t.join();
    for (std::size_t k = 0; k < inst.size(); ++k) CHECK(par[k] == serial[k]);
}
