// Gavel's max-sum-throughput and LAS LPs (gavel_lp.hpp) on instances whose optimum is derived by hand.
// Tolerance: 1e-9 absolute on allocations and objectives; the LPs are tiny and GLPK's simplex returns vertex
// solutions exact to round-off (~1e-15), so 1e-9 only absorbs floating-point noise, never a different vertex
// (LAS's tie-break holds z 1e-11 relative below z*, which moves X by about as much, well inside 1e-9).
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

namespace {
// A random instance: 20% of (job, type) pairs cannot run, throughputs in [1, 10], 1-8 GPUs per job, 0-16 per type,
// weights in [0.5, 1.5].
gavel_input random_gavel_input(std::mt19937& rng, int jobs, int types) {
    std::uniform_real_distribution<double> u(0, 1);
    std::uniform_int_distribution<int> scale(1, 8), cap(0, 16);
    gavel_input in;
    in.throughput = Eigen::MatrixXd(jobs, types);
    for (int j = 0; j < jobs; ++j)
        for (int t = 0; t < types; ++t) in.throughput(j, t) = u(rng) < 0.2 ? 0.0 : 1 + 9 * u(rng);
    for (int j = 0; j < jobs; ++j) in.scale_factor.push_back(scale(rng));
    for (int t = 0; t < types; ++t) in.capacity.push_back(cap(rng));
    for (int j = 0; j < jobs; ++j) in.weight.push_back(0.5 + u(rng));
    return in;
}
}  // namespace

TEST_CASE("gavel: random instances respect every constraint and beat a greedy feasible allocation") {
    std::mt19937 rng(7);
    for (int rep = 0; rep < 25; ++rep) {
        const int jobs = 1 + rep % 12, types = 1 + rep % 4;
        const gavel_input in = random_gavel_input(rng, jobs, types);
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

// ---- Gavel's LAS (max-min fairness with performance) LP: solve_gavel_las ----
// rho_j = sum_t T_jt / (w_j prop_j) * scale_j * X_jt with prop_j = sum_t T_jt cap_t / sum_t cap_t
// (gavel scheduler/policies/max_min_fairness.py and proportional.py); the LP maximises z = min_j rho_j.

namespace {
std::string las_error_of(const gavel_input& in) {
    try {
        (void)solve_gavel_las(in);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("gavel-las: 2 jobs x 2 types where max-min and max-sum differ (hand-derived)") {
    // Job 0 runs only on type 0 (T = [1, 0]); job 1 on both (T = [3, 1]); one GPU of each type, scale 1.
    // Write a = X00, c = X10, d = X11.
    // Max-sum (normalised rows job0 [1, 0], job1 [1, 1/3]): maximise a + c + d/3 with a + c <= 1 (type 0),
    //   c + d <= 1 (job 1): a = 1, d = 1 gives 4/3; any c > 0 costs a as much as it adds. Unique: X = [[1,0],[0,1]].
    // LAS: prop_0 = (1*1 + 0*1)/2 = 1/2, prop_1 = (3*1 + 1*1)/2 = 2, so rho_0 = 2a, rho_1 = 1.5c + 0.5d.
    //   rho_0 > 1 needs a > 1/2; rho_1 <= 1.5c + 0.5(1 - c) = 0.5 + c, so rho_1 > 1 needs c > 1/2; but a + c <= 1.
    //   So z* = 1, reached only at a = c = d = 1/2 (rho_1 >= 1 with c = 1/2 forces d >= 1/2, and c + d <= 1).
    //   Max-sum's X has min(rho) = rho_1 = 0.5.
    const gavel_input in{.throughput = mat({{1, 0}, {3, 1}}), .scale_factor = {1, 1}, .capacity = {1, 1}};
    const auto s = solve_gavel_max_sum_throughput(in);
    CHECK(s.objective == Approx(4.0 / 3.0).margin(eps));
    CHECK(s.x(0, 0) == Approx(1).margin(eps));
    CHECK(s.x(1, 0) == Approx(0).margin(eps));
    CHECK(s.x(1, 1) == Approx(1).margin(eps));
    const auto l = solve_gavel_las(in);
    CHECK(l.objective == Approx(1).margin(eps));
    CHECK(l.x(0, 0) == Approx(0.5).margin(eps));
    CHECK(l.x(0, 1) == 0.0);  // T = 0 there: fixed at 0
    CHECK(l.x(1, 0) == Approx(0.5).margin(eps));
    CHECK(l.x(1, 1) == Approx(0.5).margin(eps));
    const auto prop = gavel_proportional_throughputs(in);
    REQUIRE(prop.size() == 2);
    CHECK(prop[0] == Approx(0.5).margin(eps));
    CHECK(prop[1] == Approx(2).margin(eps));
}

TEST_CASE("gavel-las: a weight divides the job's normalised throughput, so the job gets more") {
    // The instance above with w_0 = 2: rho_0 = 2a / 2 = a, rho_1 <= 0.5 + c as before, a + c <= 1.
    // z <= min(a, 0.5 + 1 - a), largest at a = 3/4: z* = 3/4, c = 1/4, and rho_1 >= 3/4 with c = 1/4 forces
    // d >= 3/4 while c + d <= 1: d = 3/4. Unique.
    const auto l = solve_gavel_las({.throughput = mat({{1, 0}, {3, 1}}), .scale_factor = {1, 1}, .capacity = {1, 1},
                                    .weight = {2, 1}});
    CHECK(l.objective == Approx(0.75).margin(eps));
    CHECK(l.x(0, 0) == Approx(0.75).margin(eps));
    CHECK(l.x(1, 0) == Approx(0.25).margin(eps));
    CHECK(l.x(1, 1) == Approx(0.75).margin(eps));
}

TEST_CASE("gavel-las: Gavel's scale-factor multiplier") {
    // One type, 2 GPUs; job A needs 2 GPUs, job B one; T = 1 for both, so prop_A = prop_B = 1 (cap 2 / total 2).
    // With Gavel's multiplier rho_A = 2 x_A, rho_B = x_B, capacity 2 x_A + x_B <= 2, rows <= 1.
    // z <= x_B <= 1; z = 1 needs x_B = 1, then 2 x_A <= 1 and 2 x_A >= 1: x_A = 1/2. (Without the multiplier the
    // answer would be x_A = x_B = 2/3, z = 2/3.)
    const auto l = solve_gavel_las({.throughput = mat({{1}, {1}}), .scale_factor = {2, 1}, .capacity = {2}});
    CHECK(l.objective == Approx(1).margin(eps));
    CHECK(l.x(0, 0) == Approx(0.5).margin(eps));
    CHECK(l.x(1, 0) == Approx(1).margin(eps));
}

TEST_CASE("gavel-las: among the max-min optima, GPUs no job's minimum needs are still handed out") {
    // Job A only on type 0 (T = [1, 0]), job B on both (T = [1, 1]), one GPU each. prop_A = 1/2, prop_B = 1:
    // rho_A = 2 X_A0, rho_B = X_B0 + X_B1 <= 1, so z* = 1, reached whenever X_A0 >= 1/2 and X_B0 + X_B1 = 1.
    // A simplex vertex may stop at X_A0 = 1/2 (half of type 0 idle); the tie-break maximises
    // 2 X_A0 + X_B0 + X_B1 on that face: X_A0 = 1, X_B0 = 0, X_B1 = 1.
    const auto l = solve_gavel_las({.throughput = mat({{1, 0}, {1, 1}}), .scale_factor = {1, 1}, .capacity = {1, 1}});
    CHECK(l.objective == Approx(1).margin(eps));
    CHECK(l.x(0, 0) == Approx(1).margin(eps));
    CHECK(l.x(1, 0) == Approx(0).margin(eps));
    CHECK(l.x(1, 1) == Approx(1).margin(eps));
}

TEST_CASE("gavel-las: a job that can run nowhere is left out of the minimum") {
    // Job C needs 4 GPUs and no type has 4: it gets no time, and the others get the allocation of the first case
    // (z* = 1 at a = c = d = 1/2; C's throughputs enter neither the LP nor the others' prop_j).
    const auto l = solve_gavel_las({.throughput = mat({{1, 0}, {3, 1}, {5, 5}}), .scale_factor = {1, 1, 4},
                                    .capacity = {1, 1}});
    CHECK(l.objective == Approx(1).margin(eps));
    CHECK(l.x(0, 0) == Approx(0.5).margin(eps));
    CHECK(l.x(1, 0) == Approx(0.5).margin(eps));
    CHECK(l.x(1, 1) == Approx(0.5).margin(eps));
    CHECK(l.x.row(2).sum() == 0.0);
    // Nobody can run: an all-zero allocation, objective 0.
    const auto none = solve_gavel_las({.throughput = mat({{0, 0}}), .scale_factor = {1}, .capacity = {1, 1}});
    CHECK(none.x.sum() == 0.0);
    CHECK(none.objective == 0.0);
}

TEST_CASE("gavel-las: random instances respect every constraint, and no job is below the reported minimum") {
    std::mt19937 rng(11);
    for (int rep = 0; rep < 25; ++rep) {
        const int jobs = 1 + rep % 12, types = 1 + rep % 4;
        const gavel_input in = random_gavel_input(rng, jobs, types);
        const auto a = solve_gavel_las(in);
        const auto prop = gavel_proportional_throughputs(in);
        double lowest = 1e300;
        for (int j = 0; j < jobs; ++j) {
            CHECK(a.x.row(j).sum() <= 1 + eps);
            bool runs = false;
            double rho = 0;
            for (int t = 0; t < types; ++t) {
                const auto uj = static_cast<std::size_t>(j);
                const bool usable = in.throughput(j, t) > 0 && in.scale_factor[uj] <= in.capacity[static_cast<std::size_t>(t)];
                runs |= usable;
                CHECK(a.x(j, t) >= 0);
                if (!usable) CHECK(a.x(j, t) == 0.0);
                if (prop[uj] > 0) rho += in.throughput(j, t) * in.scale_factor[uj] / (in.weight[uj] * prop[uj]) * a.x(j, t);
            }
            if (runs) lowest = std::min(lowest, rho);
        }
        for (int t = 0; t < types; ++t) {
            double used = 0;
            for (int j = 0; j < jobs; ++j) used += in.scale_factor[static_cast<std::size_t>(j)] * a.x(j, t);
            CHECK(used <= in.capacity[static_cast<std::size_t>(t)] + 1e-7);
        }
        // The objective is the smallest normalised throughput of the jobs that can run (1e-7: the tie-break's
        // z is fixed 1e-9 relative below z*, plus simplex round-off).
        if (lowest < 1e300) CHECK(lowest == Approx(a.objective).margin(1e-7 * std::max(1.0, a.objective)));
        // Max-min is at least max-sum's minimum: max-sum's X is feasible for the LAS LP.
        const auto s = solve_gavel_max_sum_throughput(in);
        double sum_min = 1e300;
        for (int j = 0; j < jobs; ++j) {
            const auto uj = static_cast<std::size_t>(j);
            bool runs = false;
            double rho = 0;
            for (int t = 0; t < types; ++t) {
                runs |= in.throughput(j, t) > 0 && in.scale_factor[uj] <= in.capacity[static_cast<std::size_t>(t)];
                if (prop[uj] > 0) rho += in.throughput(j, t) * in.scale_factor[uj] / (in.weight[uj] * prop[uj]) * s.x(j, t);
            }
            if (runs) sum_min = std::min(sum_min, rho);
        }
        if (sum_min < 1e300) CHECK(a.objective >= sum_min - 1e-7);
    }
}

TEST_CASE("gavel-las: malformed input is an error naming the field") {
    // The shared validation (the same messages as max-sum) ...
    CHECK_THAT(las_error_of({.throughput = mat({{1, 2}}), .scale_factor = {1}, .capacity = {1}}),
               Contains("capacity") && Contains("columns"));
    CHECK_THAT(las_error_of({.throughput = mat({{1, -2}}), .scale_factor = {1}, .capacity = {1, 1}}),
               Contains("throughput(0,1)"));
    CHECK_THAT(las_error_of({.throughput = mat({{1, 2}}), .scale_factor = {0}, .capacity = {1, 1}}),
               Contains("scale_factor[0]=0"));
    // ... and LAS's own rule: a weight of 0 is allowed for max-sum (the job counts for nothing) but LAS divides by it.
    CHECK_THAT(las_error_of({.throughput = mat({{1, 2}, {1, 1}}), .scale_factor = {1, 1}, .capacity = {1, 1},
                             .weight = {1, 0}}),
               Contains("weight[1]=0") && Contains("> 0"));
    CHECK_NOTHROW(solve_gavel_max_sum_throughput({.throughput = mat({{1, 2}, {1, 1}}), .scale_factor = {1, 1},
                                                  .capacity = {1, 1}, .weight = {1, 0}}));
    CHECK_THAT(las_error_of({.throughput = mat({{1, 2}}), .scale_factor = {1}, .capacity = {-1, 1}}),
               Contains("capacity[0]=-1"));
}
