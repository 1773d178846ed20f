// Gavel's max-sum-throughput LP (gavel_lp.hpp) on instances whose optimum is derived by hand.
// Tolerance: 1e-9 absolute on allocations and objectives; the LPs are tiny and GLPK's simplex returns vertex
// solutions exact to round-off (~1e-15), so 1e-9 only absorbs floating-point noise, never a different vertex.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "frenzy/sched/gavel_lp.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace {
constexpr double eps = 1e-9;

Eigen::MatrixXd mat(std::initializer_list<std::initializer_list<double>> rows) {
    Eigen::MatrixXd m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.begin()->size()));
    Eigen::Index i = 0;
    for (const auto& r : rows) {
        Eigen::Index k = 0;
        for (double v : r) m(i, k++) = v;
        ++i;
    }
    return m;
}

std::string error_of(const gavel_input& in) {
    try {
        (void)solve_gavel_max_sum_throughput(in);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("gavel: 2 jobs x 2 types, one GPU each, known optimum") {
    // Normalised throughputs: job0 [1, 0.25], job1 [1, 0.5]. Rows and columns sum to <= 1, so X is doubly
    // sub-stochastic and (Birkhoff) the optimum is a (partial) permutation: {0->0, 1->1} = 1 + 0.5 = 1.5 beats
    // {0->1, 1->0} = 0.25 + 1 = 1.25 and any single entry.
    const auto a = solve_gavel_max_sum_throughput({.throughput = mat({{4, 1}, {2, 1}}),
                                                   .scale_factor = {1, 1},
                                                   .capacity = {1, 1}});
    CHECK(a.objective == Approx(1.5).margin(eps));
    CHECK(a.x(0, 0) == Approx(1).margin(eps));
    CHECK(a.x(0, 1) == Approx(0).margin(eps));
    CHECK(a.x(1, 0) == Approx(0).margin(eps));
    CHECK(a.x(1, 1) == Approx(1).margin(eps));
}

TEST_CASE("gavel: normalisation changes the optimum, normalize=false is the paper's raw sum") {
    // T = [[10, 8], [2, 1]], one GPU of each type.
    // Normalised: job0 [1, 0.8], job1 [1, 0.5]: {0->0,1->1} = 1.5 < {0->1,1->0} = 0.8 + 1 = 1.8.
    // Raw:        {0->0,1->1} = 10 + 1 = 11 > {0->1,1->0} = 8 + 2 = 10.
    gavel_input in{.throughput = mat({{10, 8}, {2, 1}}), .scale_factor = {1, 1}, .capacity = {1, 1}};
    const auto n = solve_gavel_max_sum_throughput(in);
    CHECK(n.objective == Approx(1.8).margin(eps));
    CHECK(n.x(0, 1) == Approx(1).margin(eps));
    CHECK(n.x(1, 0) == Approx(1).margin(eps));
    in.normalize = false;
    const auto r = solve_gavel_max_sum_throughput(in);
    CHECK(r.objective == Approx(11).margin(eps));
    CHECK(r.x(0, 0) == Approx(1).margin(eps));
    CHECK(r.x(1, 1) == Approx(1).margin(eps));
}

TEST_CASE("gavel: scale factors and weights against a binding capacity") {
    // One type with 2 GPUs. Job A needs 2 GPUs, B and C one each, equal (normalised 1) throughput.
    // Objective x_A + x_B + x_C <= 2 - x_A by the capacity row 2x_A + x_B + x_C <= 2, so the unique optimum is
    // x_A = 0, x_B = x_C = 1, value 2.
    gavel_input in{.throughput = mat({{5}, {3}, {7}}), .scale_factor = {2, 1, 1}, .capacity = {2}};
    auto a = solve_gavel_max_sum_throughput(in);
    CHECK(a.objective == Approx(2).margin(eps));
    CHECK(a.x(0, 0) == Approx(0).margin(eps));
    CHECK(a.x(1, 0) == Approx(1).margin(eps));
    CHECK(a.x(2, 0) == Approx(1).margin(eps));
    // With w_A = 3, A earns 1.5 per GPU-share against 1 for B and C: x_A = 1 fills the type, value 3.
    in.weight = {3, 1, 1};
    a = solve_gavel_max_sum_throughput(in);
    CHECK(a.objective == Approx(3).margin(eps));
    CHECK(a.x(0, 0) == Approx(1).margin(eps));
    CHECK(a.x(1, 0) == Approx(0).margin(eps));
    CHECK(a.x(2, 0) == Approx(0).margin(eps));
}

TEST_CASE("gavel: a job with zero throughput on a type gets no time there") {
    // Both jobs run only on type 1 (one GPU); type 0 has 4 idle GPUs and zero objective weight there, so only
    // the bounds keep x(.,0) at 0. Type 1 is shared: x01 + x11 = 1, value 1.
    const auto a = solve_gavel_max_sum_throughput({.throughput = mat({{0, 5}, {0, 5}}),
                                                   .scale_factor = {1, 1},
                                                   .capacity = {4, 1}});
    CHECK(a.x(0, 0) == 0.0);
    CHECK(a.x(1, 0) == 0.0);
    CHECK(a.x(0, 1) + a.x(1, 1) == Approx(1).margin(eps));
    CHECK(a.objective == Approx(1).margin(eps));
}

TEST_CASE("gavel: a job never gets time on a type with fewer GPUs than it needs") {
    // The job needs 4 GPUs; type 0 (10x faster) has only 2. The paper's rows alone would allow x0 = 2/4 there
    // (value 0.5 + 0.5 * 0.1 = 0.55); we fix x0 = 0 and give it all of type 1: value 0.1.
    const auto a = solve_gavel_max_sum_throughput({.throughput = mat({{10, 1}}),
                                                   .scale_factor = {4},
                                                   .capacity = {2, 4}});
    CHECK(a.x(0, 0) == 0.0);
    CHECK(a.x(0, 1) == Approx(1).margin(eps));
    CHECK(a.objective == Approx(0.1).margin(eps));
}

TEST_CASE("gavel: random instances respect every constraint and beat a greedy feasible allocation") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(0, 1);
    std::uniform_int_distribution<int> scale(1, 8), cap(0, 16);
    for (int rep = 0; rep < 25; ++rep) {
        const int jobs = 1 + rep % 12, types = 1 + rep % 4;
        gavel_input in;
        in.throughput = Eigen::MatrixXd(jobs, types);
        for (int j = 0; j < jobs; ++j)
            for (int t = 0; t < types; ++t) in.throughput(j, t) = u(rng) < 0.2 ? 0.0 : 1 + 9 * u(rng);
        for (int j = 0; j < jobs; ++j) in.scale_factor.push_back(scale(rng));
        for (int t = 0; t < types; ++t) in.capacity.push_back(cap(rng));
        for (int j = 0; j < jobs; ++j) in.weight.push_back(0.5 + u(rng));
        const auto a = solve_gavel_max_sum_throughput(in);
        REQUIRE(a.x.rows() == jobs);
        REQUIRE(a.x.cols() == types);
        double value = 0;
        for (int j = 0; j < jobs; ++j) {
            CHECK(a.x.row(j).sum() <= 1 + eps);
            const double best = in.throughput.row(j).maxCoeff();
            for (int t = 0; t < types; ++t) {
                CHECK(a.x(j, t) >= 0);
                if (in.throughput(j, t) == 0 || in.scale_factor[static_cast<std::size_t>(j)] > in.capacity[static_cast<std::size_t>(t)])
                    CHECK(a.x(j, t) == 0.0);
                if (best > 0) value += in.weight[static_cast<std::size_t>(j)] * in.throughput(j, t) / best * a.x(j, t);
            }
        }
        for (int t = 0; t < types; ++t) {
            double used = 0;
            for (int j = 0; j < jobs; ++j) used += in.scale_factor[static_cast<std::size_t>(j)] * a.x(j, t);
            CHECK(used <= in.capacity[static_cast<std::size_t>(t)] + 1e-7);
        }
        // The reported objective is the objective of the returned x.
        CHECK(a.objective == Approx(value).margin(1e-7));
        // Greedy feasible allocation: each job in order takes as much time as fits on its best usable type.
        std::vector<double> left(in.capacity.begin(), in.capacity.end());
        double greedy = 0;
        for (int j = 0; j < jobs; ++j) {
            const double best = in.throughput.row(j).maxCoeff();
            double rest = 1;
            std::vector<int> order(static_cast<std::size_t>(types));
            for (int t = 0; t < types; ++t) order[static_cast<std::size_t>(t)] = t;
            std::sort(order.begin(), order.end(), [&](int x, int y) { return in.throughput(j, x) > in.throughput(j, y); });
            for (int t : order) {
                const int s = in.scale_factor[static_cast<std::size_t>(j)];
                if (in.throughput(j, t) == 0 || s > in.capacity[static_cast<std::size_t>(t)]) continue;
                const double f = std::min(rest, left[static_cast<std::size_t>(t)] / s);
                rest -= f;
                left[static_cast<std::size_t>(t)] -= f * s;
                greedy += in.weight[static_cast<std::size_t>(j)] * in.throughput(j, t) / best * f;
            }
        }
        CHECK(a.objective >= greedy - 1e-7);
    }
}

TEST_CASE("gavel: empty input and malformed input") {
    const auto a = solve_gavel_max_sum_throughput({.throughput = Eigen::MatrixXd(0, 3), .capacity = {1, 2, 3}});
    CHECK(a.x.rows() == 0);
    CHECK(a.objective == 0.0);
    CHECK_THAT(error_of({.throughput = mat({{1, 2}}), .scale_factor = {1}, .capacity = {1}}),
               Contains("capacity") && Contains("columns"));
    CHECK_THAT(error_of({.throughput = mat({{1, 2}}), .scale_factor = {}, .capacity = {1, 1}}), Contains("scale_factor"));
    CHECK_THAT(error_of({.throughput = mat({{1, -2}}), .scale_factor = {1}, .capacity = {1, 1}}),
               Contains("throughput(0,1)"));
    CHECK_THAT(error_of({.throughput = mat({{1, 2}}), .scale_factor = {0}, .capacity = {1, 1}}),
               Contains("scale_factor[0]=0"));
    CHECK_THAT(error_of({.throughput = mat({{1, 2}}), .scale_factor = {1}, .capacity = {1, 1}, .weight = {1, 2}}),
               Contains("weight"));
}
