#pragma once
// Gavel's heterogeneity-aware allocation LPs (Narayanan et al., "Heterogeneity-Aware Cluster Scheduling Policies
// for Deep Learning Workloads", OSDI'20) over job x GPU type, solved with GLPK's simplex: "max-sum-throughput"
// (solve_gavel_max_sum_throughput) and the LAS / max-min fairness policy (solve_gavel_las, below). Both share
// Gavel's base constraints (detail::gavel_base). Needs GLPK (CMake target frenzy::glpk).
//
// The max-sum LP (Gavel's allocation matrix X: X_jt = fraction of wall-clock time job j should spend on type t):
//     maximise   sum_j w_j sum_t (T_jt / max_t' T_jt') X_jt
//     subject to sum_t X_jt <= 1                       (a job runs at most all of the time)       for each j
//                sum_j scale_j X_jt <= capacity_t      (time-shared GPUs of type t) for each t
//                0 <= X_jt,  X_jt = 0 where T_jt = 0 or scale_j > capacity_t
// Departures from the paper (also in docs/baselines.md, "Gavel"):
//  - Gavel's max-sum-throughput sums raw throughputs; with `normalize` (default) each job's row is divided by its
//    best throughput so that jobs measured in different units (steps/s of different models) are comparable.
//    `normalize = false` gives the paper's objective sum_j w_j sum_t T_jt X_jt.
//  - A job is never given time on a type with fewer GPUs than it needs (scale_j > capacity_t): the paper's
//    constraint alone would allow a fraction capacity_t / scale_j there, which no round can realise.
//  - Space sharing (Gavel's job pairs) is not modelled: one job per GPU at a time.
// Turning X into per-round placements (Gavel's round-based mechanism, priorities X_jt / rounds received) is the
// simulator's policy's job, not this solver's.
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/sched/detail/glpk.hpp"

namespace frenzy {

/// Input of Gavel's allocation LP.
struct gavel_input {
    Eigen::MatrixXd throughput{};     ///< jobs x types: steps/s (or tokens/s) of job j on scale_j GPUs of type t; 0 = cannot run
    std::vector<int> scale_factor{};  ///< per job: GPUs it needs (as requested; Gavel does not resize jobs)
    std::vector<int> capacity{};      ///< per type: GPUs in the cluster
    std::vector<double> weight{};     ///< per job priority weight; empty = all 1
    bool normalize = true;          ///< max-sum only: divide each job's throughputs by its best (header comment)
};

/// Gavel's allocation: time fractions per job and type.
struct gavel_allocation {
    Eigen::MatrixXd x{};  ///< jobs x types: fraction of time job j should run on type t (rows sum <= 1)
    double objective = 0;
};

namespace detail {
inline void validate_gavel(const gavel_input& in) {
    const auto jobs = in.throughput.rows();
    const auto types = in.throughput.cols();
    auto bad = [](const std::string& m) { throw config_error("gavel: " + m); };
    if (static_cast<Eigen::Index>(in.scale_factor.size()) != jobs)
        bad("scale_factor has " + std::to_string(in.scale_factor.size()) + " entries, throughput has " +
            std::to_string(jobs) + " rows (jobs); they must match");
    if (static_cast<Eigen::Index>(in.capacity.size()) != types)
        bad("capacity has " + std::to_string(in.capacity.size()) + " entries, throughput has " +
            std::to_string(types) + " columns (GPU types); they must match");
    if (!in.weight.empty() && static_cast<Eigen::Index>(in.weight.size()) != jobs)
        bad("weight has " + std::to_string(in.weight.size()) + " entries; it must be empty or have one per job (" +
            std::to_string(jobs) + ")");
    for (Eigen::Index j = 0; j < jobs; ++j) {
        const auto js = std::to_string(j);
        if (in.scale_factor[static_cast<std::size_t>(j)] < 1)
            bad("scale_factor[" + js + "]=" + std::to_string(in.scale_factor[static_cast<std::size_t>(j)]) +
                " must be >= 1");
        if (!in.weight.empty()) {
            const double w = in.weight[static_cast<std::size_t>(j)];
            if (!std::isfinite(w) || w < 0) bad("weight[" + js + "]=" + std::to_string(w) + " must be finite and >= 0");
        }
        for (Eigen::Index t = 0; t < types; ++t) {
            const double v = in.throughput(j, t);
            if (!std::isfinite(v) || v < 0)
                bad("throughput(" + js + "," + std::to_string(t) + ")=" + std::to_string(v) +
                    " must be finite and >= 0");
        }
    }
    for (std::size_t t = 0; t < in.capacity.size(); ++t)
        if (in.capacity[t] < 0)
            bad("capacity[" + std::to_string(t) + "]=" + std::to_string(in.capacity[t]) + " must be >= 0");
}
}  // namespace detail

namespace detail {
/// Gavel's base constraints (scheduler/policies/policy.py get_base_constraints: x >= 0, sum_j scale_j x_jt <=
/// num_workers_t, sum_t x_jt <= 1) plus our bounds (x_jt = 0 where T_jt = 0 or scale_j > capacity_t), shared by
/// every Gavel policy. Columns 0 .. jobs*types-1 are X (row-major); the caller adds its objective, any further rows
/// and columns, then loads the matrix.
struct gavel_base_lp {
    glpk_problem lp;
    int jobs = 0;
    int types = 0;
    std::vector<char> usable;  ///< jobs x types: X_jt may be > 0
    [[nodiscard]] int col(int j, int t) const { return j * types + t; }
    [[nodiscard]] bool can_run(int j) const {
        for (int t = 0; t < types; ++t)
            if (usable[static_cast<std::size_t>(col(j, t))]) return true;
        return false;
    }
};

/// Builds the base LP of a validated, non-empty input.
inline gavel_base_lp gavel_base(const gavel_input& in) {
    gavel_base_lp b;
    b.jobs = static_cast<int>(in.throughput.rows());
    b.types = static_cast<int>(in.throughput.cols());
    auto& lp = b.lp;
    lp.maximize();
    const int job_row0 = lp.add_rows(b.jobs);
    const int type_row0 = lp.add_rows(b.types);
    for (int j = 0; j < b.jobs; ++j) lp.row_upper(job_row0 + j, 1.0);
    for (int t = 0; t < b.types; ++t)
        lp.row_upper(type_row0 + t, static_cast<double>(in.capacity[static_cast<std::size_t>(t)]));
    lp.add_cols(b.jobs * b.types);
    b.usable.assign(static_cast<std::size_t>(b.jobs * b.types), 0);
    for (int j = 0; j < b.jobs; ++j) {
        const int scale = in.scale_factor[static_cast<std::size_t>(j)];
        for (int t = 0; t < b.types; ++t) {
            const int c = b.col(j, t);
            const bool usable = in.throughput(j, t) > 0 && scale <= in.capacity[static_cast<std::size_t>(t)];
            b.usable[static_cast<std::size_t>(c)] = usable ? 1 : 0;
            lp.col_bounds(c, 0.0, usable ? 1.0 : 0.0);
            lp.entry(job_row0 + j, c, 1.0);
            lp.entry(type_row0 + t, c, static_cast<double>(scale));
        }
    }
    return b;
}

/// X of a solved base LP, with simplex round-off cleaned so that callers see exact 0 and rows that sum to <= 1.
inline Eigen::MatrixXd gavel_x(const gavel_base_lp& b) {
    Eigen::MatrixXd x = Eigen::MatrixXd::Zero(b.jobs, b.types);
    for (int j = 0; j < b.jobs; ++j)
        for (int t = 0; t < b.types; ++t) {
            double v = b.lp.lp_value(b.col(j, t));
            if (v < 1e-12) v = 0.0;
            if (v > 1.0) v = 1.0;
            x(j, t) = v;
        }
    return x;
}
}  // namespace detail

/// Solves Gavel's max-sum-throughput LP. Throws config_error on malformed input, solver_error if GLPK fails.
inline gavel_allocation solve_gavel_max_sum_throughput(const gavel_input& in) {
    detail::validate_gavel(in);
    gavel_allocation out;
    out.x = Eigen::MatrixXd::Zero(in.throughput.rows(), in.throughput.cols());
    if (in.throughput.rows() == 0 || in.throughput.cols() == 0) return out;
    auto b = detail::gavel_base(in);
    for (int j = 0; j < b.jobs; ++j) {
        const double best = in.throughput.row(j).maxCoeff();
        const double w = in.weight.empty() ? 1.0 : in.weight[static_cast<std::size_t>(j)];
        for (int t = 0; t < b.types; ++t) {
            const int c = b.col(j, t);
            const double thr = in.throughput(j, t);
            // Gavel OSDI'20 effective throughput: throughput(j, X) = sum_t T_jt X_jt (normalised by the job's best type here)
            b.lp.objective(c, b.usable[static_cast<std::size_t>(c)] ? w * (in.normalize ? thr / best : thr) : 0.0);
        }
    }
    b.lp.load_matrix();
    b.lp.simplex("gavel");
    out.x = detail::gavel_x(b);
    out.objective = b.lp.lp_objective();
    return out;
}

/// Gavel's proportional-share throughput of each job (stanford-futuredata/gavel scheduler/policies/proportional.py
/// at c4fa400, ProportionalPolicy.get_throughputs): x_jt = capacity_t / m scaled so rows sum to 1, i.e.
/// capacity_t / sum_t' capacity_t' for every job, and prop_j = sum_t T_jt x_jt. 0 when the cluster is empty.
inline std::vector<double> gavel_proportional_throughputs(const gavel_input& in) {
    detail::validate_gavel(in);
    double total = 0;
    for (int c : in.capacity) total += c;
    std::vector<double> prop(static_cast<std::size_t>(in.throughput.rows()), 0.0);
    if (total <= 0) return prop;
    for (Eigen::Index j = 0; j < in.throughput.rows(); ++j)
        for (Eigen::Index t = 0; t < in.throughput.cols(); ++t)
            prop[static_cast<std::size_t>(j)] += in.throughput(j, t) * in.capacity[static_cast<std::size_t>(t)] / total;
    return prop;
}

/// Solves Gavel's heterogeneity-aware LAS (max-min fairness) LP: stanford-futuredata/gavel
/// scheduler/policies/max_min_fairness.py at c4fa400, MaxMinFairnessPolicyWithPerf:
///     maximise   z
///     subject to z <= sum_t T_jt / (w_j prop_j) * scale_j * X_jt    for each job j that can run somewhere
///                (plus the base constraints of gavel_base)
/// with prop_j from gavel_proportional_throughputs (T_jt / prop_j is unit-free, so `normalize` does not apply).
/// Departures (docs/baselines.md, "Gavel LAS"): a job that can be given time on no type (no throughput, or more
/// GPUs than any type has) is left out of the minimum and gets none, where Gavel's minimum would be 0 for every
/// job; Gavel's interior-point solver returns a point inside the optimal face, GLPK's simplex a vertex that may
/// leave GPUs idle that no job's minimum needs, so a second simplex keeps every job at >= z* and maximises the sum
/// of the same normalised throughputs (a tie-break among Gavel's optima: the minimum, `objective`, is Gavel's).
/// Weights must be > 0 (Gavel divides by them). Throws config_error on malformed input, solver_error if GLPK fails.
inline gavel_allocation solve_gavel_las(const gavel_input& in) {
    detail::validate_gavel(in);
    for (std::size_t j = 0; j < in.weight.size(); ++j)
        if (!(in.weight[j] > 0))
            throw config_error("gavel-las: weight[" + std::to_string(j) + "]=" + std::to_string(in.weight[j]) +
                               " must be > 0 (the LAS objective divides each job's throughput by its weight)");
    gavel_allocation out;
    out.x = Eigen::MatrixXd::Zero(in.throughput.rows(), in.throughput.cols());
    if (in.throughput.rows() == 0 || in.throughput.cols() == 0) return out;
    const auto prop = gavel_proportional_throughputs(in);
    auto b = detail::gavel_base(in);
    std::vector<int> counted;  // jobs in the minimum
    for (int j = 0; j < b.jobs; ++j)
        if (prop[static_cast<std::size_t>(j)] > 0 && b.can_run(j)) counted.push_back(j);
    if (counted.empty()) return out;
    auto& lp = b.lp;
    const int z = lp.add_cols(1);
    lp.col_lower(z, 0.0);
    const int row0 = lp.add_rows(static_cast<int>(counted.size()));
    // coefficient of X_jt in job j's normalised throughput rho_j
    auto coef = [&](int j, int t) {
        const auto uj = static_cast<std::size_t>(j);
        const double w = in.weight.empty() ? 1.0 : in.weight[uj];
        // max_min_fairness.py: throughputs * (1/w_j) * (1/prop_j) * scale_factors_array
        return in.throughput(j, t) / (w * prop[uj]) * in.scale_factor[uj];
    };
    for (std::size_t k = 0; k < counted.size(); ++k) {
        const int j = counted[k], r = row0 + static_cast<int>(k);
        lp.row_lower(r, 0.0);  // rho_j - z >= 0
        lp.entry(r, z, -1.0);
        for (int t = 0; t < b.types; ++t)
            if (b.usable[static_cast<std::size_t>(b.col(j, t))]) lp.entry(r, b.col(j, t), coef(j, t));
    }
    lp.objective(z, 1.0);
    lp.load_matrix();
    lp.simplex("gavel-las");
    const double zstar = lp.lp_objective();
    out.x = detail::gavel_x(b);
    // Tie-break: z fixed at z* (less 1e-11 relative, so round-off cannot make it infeasible), maximise sum_j rho_j.
    const double zfix = std::max(0.0, zstar - 1e-11 * std::max(1.0, zstar));
    lp.col_bounds(z, zfix, zfix);
    lp.objective(z, 0.0);
    for (int j : counted)
        for (int t = 0; t < b.types; ++t)
            if (b.usable[static_cast<std::size_t>(b.col(j, t))]) lp.objective(b.col(j, t), coef(j, t));
    try {
        lp.simplex("gavel-las");
        out.x = detail::gavel_x(b);
    } catch (const solver_error&) {
        // keep the first solve's vertex: an optimum of Gavel's LP, only without the tie-break
    }
    out.objective = zstar;
    return out;
}

}  // namespace frenzy
