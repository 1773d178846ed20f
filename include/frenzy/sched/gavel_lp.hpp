#pragma once
// Gavel's heterogeneity-aware "max-sum-throughput" allocation (Narayanan et al., "Heterogeneity-Aware Cluster
// Scheduling Policies for Deep Learning Workloads", OSDI'20) as a linear program over job x GPU type,
// solved with GLPK's simplex. Needs GLPK (CMake target frenzy::glpk).
//
// The LP (Gavel's allocation matrix X: X_jt = fraction of wall-clock time job j should spend on type t):
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
    bool normalize = true;          ///< divide each job's throughputs by its best (see the header comment)
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

/// Solves Gavel's max-sum-throughput LP. Throws config_error on malformed input, solver_error if GLPK fails.
inline gavel_allocation solve_gavel_max_sum_throughput(const gavel_input& in) {
    detail::validate_gavel(in);
    const int jobs = static_cast<int>(in.throughput.rows());
    const int types = static_cast<int>(in.throughput.cols());
    gavel_allocation out;
    out.x = Eigen::MatrixXd::Zero(jobs, types);
    if (jobs == 0 || types == 0) return out;

    detail::glpk_problem lp;
    lp.maximize();
    const int job_row0 = lp.add_rows(jobs);
    const int type_row0 = lp.add_rows(types);
    for (int j = 0; j < jobs; ++j) lp.row_upper(job_row0 + j, 1.0);
    for (int t = 0; t < types; ++t) lp.row_upper(type_row0 + t, static_cast<double>(in.capacity[static_cast<std::size_t>(t)]));
    lp.add_cols(jobs * types);
    auto col = [types](int j, int t) { return j * types + t; };
    for (int j = 0; j < jobs; ++j) {
        const double best = in.throughput.row(j).maxCoeff();
        const double w = in.weight.empty() ? 1.0 : in.weight[static_cast<std::size_t>(j)];
        const int scale = in.scale_factor[static_cast<std::size_t>(j)];
        for (int t = 0; t < types; ++t) {
            const int c = col(j, t);
            const double thr = in.throughput(j, t);
            const bool usable = thr > 0 && scale <= in.capacity[static_cast<std::size_t>(t)];
            lp.col_bounds(c, 0.0, usable ? 1.0 : 0.0);
            // Gavel OSDI'20 effective throughput: throughput(j, X) = sum_t T_jt X_jt (normalised by the job's best type here)
            lp.objective(c, usable ? w * (in.normalize ? thr / best : thr) : 0.0);
            lp.entry(job_row0 + j, c, 1.0);
            lp.entry(type_row0 + t, c, static_cast<double>(scale));
        }
    }
    lp.load_matrix();
    lp.simplex("gavel");
    for (int j = 0; j < jobs; ++j)
        for (int t = 0; t < types; ++t) {
            double v = lp.lp_value(col(j, t));
            // Clean simplex round-off so that callers see exact 0 and rows that sum to <= 1.
            if (v < 1e-12) v = 0.0;
            if (v > 1.0) v = 1.0;
            out.x(j, t) = v;
        }
    out.objective = lp.lp_objective();
    return out;
}

}  // namespace frenzy
