#pragma once
// Sia's scheduling round as an integer program over job x configuration (Jayaram Subramanya et al., "Sia:
// Heterogeneity-aware, goodput-optimized ML-cluster scheduling", SOSP'23), solved with GLPK's
// branch-and-cut (glp_intopt, MIP presolve on, a node budget and a wall-clock backstop). Needs GLPK (CMake target frenzy::glpk).
//
// Configurations (Sia's configuration set): per GPU type, powers of two up to a node's GPUs inside one node, then whole
// nodes (k x gpus_per_node on k nodes); see sia_config_shapes. Each job lists its configurations with a goodput
// (> 0 feasible; the caller gives 0 where the job does not fit in memory, the same feasibility HAS uses).
//
// The program, for p < 0 (Sia's p = -0.5), with binary A_jc = "job j runs in configuration c this round":
//     minimise   sum_j [ sum_c A_jc * G_jc^p  +  lambda * (1 - sum_c A_jc) ]
//     subject to sum_c A_jc <= 1                                        (one configuration per job)
//                sum_{j, c of type t} gpus_c A_jc <= gpus_t             (GPUs of each type)
//                sum_{multi-node c of type t} nodes_c A_jc + y_t <= nodes_t,
//                gpus_per_node_t * y_t + partial_t >= sum_{single-node c of type t} gpus_c A_jc,  y_t integer
//                gpus_per_node_t * y_t >= sum_{single-node c of type t, gpus_c > largest_partial_t} gpus_c A_jc
//                (multi-node configurations take whole nodes; single-node ones pack into y_t further nodes and
//                the partial_t GPUs left on nodes that jobs outside the program hold in part, those larger than
//                the emptiest such node into the y_t nodes; the pooled partial_t is a relaxation: 2 + 2 partial
//                GPUs on two nodes pass for one 4-GPU job, which then waits;
//                exact for power-of-two node sizes; a single-node size that does not divide the node counts
//                as a whole node; with mixed node sizes in a type only the multi-node row is kept)
//   G_jc = r_jc * goodput_jc / min_c' goodput_jc'  (normalised per job by its smallest positive goodput, so
//          G >= 1 before the restart factor), r_jc = restart factor (1 for the running configuration or a job
//          that is not running).
// Sign convention: x^p is decreasing for p < 0, so Sia's "maximise the p-norm-like sum" becomes a
// minimisation of sum G^p: a bigger goodput gives a smaller term. lambda (1.1) is the cost of leaving a job
// unscheduled; since G^p <= 1 < lambda for every configuration without a restart, scheduling any job on any
// configuration beats leaving it idle when capacity allows, and p < 0 favours giving the job with the smallest
// normalised goodput more (fairness). For p > 0 the program is maximise sum A_jc G_jc^p (lambda unused).
// sia_solution::objective is the value of the program as written (for p < 0 lower is better, and it includes
// the constant lambda * number of jobs).
// Departures and choices (also in docs/baselines.md, "Sia"): the restart factor follows Pollux's re-allocation
// factor, which Sia reuses (or R/(R+delta) per round, see sia_restart_model); the normaliser is the job's
// smallest positive goodput; the node constraint above is our linear form of Sia's placement rule; Sia's
// limit on how fast a job may scale up between rounds and its restart lock are not in the program: the policy
// around it (sched/sia.hpp) applies both (the artifact forces a locked job inside its MIP; leaving the job out and
// its GPUs out of the pool is the same, the objective being a sum over jobs, once the nodes it holds in part are
// counted as partial_t GPUs and not as nodes).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/sched/detail/glpk.hpp"

namespace frenzy {

/// One way to run a job: `gpus` GPUs of type `type` on `nodes` nodes, at `goodput` (> 0 feasible).
struct sia_config {
    int type = 0;
    int gpus = 0;
    int nodes = 0;
    double goodput = 0;
    /// Not to be chosen this round (the caller could not place it), though its goodput still normalises the job's
    /// terms, so that excluding one configuration leaves the others' terms as they were.
    bool excluded = false;
};

/// A job in a scheduling round.
struct sia_job {
    std::vector<sia_config> configs{};
    int current = -1;    ///< index in configs of the running configuration, -1 = not running
    double age_s = 0;    ///< seconds since the job was submitted (restart factor, sia_restart_model::age)
    int restarts = 0;    ///< re-allocations the job has had so far (restart factor, sia_restart_model::age)
};

/// How the goodput of a running job on a configuration other than its current one is discounted.
enum class sia_restart_model {
    age,    ///< Pollux's re-allocation factor, reused by Sia: max(0, age - restarts*delta) / (age + delta)
    round,  ///< one round's view: round / (round + delta)
};

struct sia_options {
    double p = -0.5;                ///< fairness exponent (Sia uses -0.5); must be non-zero
    double lambda = 1.1;            ///< cost of leaving a job unscheduled (p < 0)
    double restart_penalty_s = 30;  ///< delta: seconds lost by a checkpoint-restart
    double round_s = 60;            ///< scheduling round length
    double time_limit_s = 10;       ///< branch-and-cut wall-clock limit (presolve and setup come on top)
    /// Branch-and-bound subproblems after which the search stops with its incumbent (0 = no limit). Unlike the
    /// time limit it stops every machine at the same point, so a schedule built on it is reproducible.
    int node_limit = 0;
    double mip_gap = 0;             ///< relative gap at which GLPK may stop (0 = prove optimality)
    /// Mixed-integer rounding and Gomory cuts (GLPK's are off by default). A round with two dozen jobs of one
    /// configuration each (`--sizes requested`) is a knapsack whose LP bound is a fraction of a job above the
    /// best schedule: without cuts GLPK had not proved it after 30,000 subproblems; with them it closes at the root.
    bool cuts = true;
    sia_restart_model restart_model = sia_restart_model::age;
};

struct sia_solution {
    std::vector<int> choice{};  ///< per job: index into configs, -1 = not scheduled
    double objective = 0;     ///< value of the program (see header comment)
    bool optimal = false;     ///< proven optimal within mip_gap (false after hitting a limit)
    bool timed_out = false;   ///< stopped by time_limit_s (the answer then depends on the machine's speed)
    int nodes = 0;            ///< branch-and-bound subproblems GLPK generated
    double solve_s = 0;       ///< wall-clock seconds of the whole call
};

/// GPUs of one type left on nodes that jobs outside the program hold in part: in all, and on the emptiest such node.
struct sia_partial_nodes {
    int gpus = 0;
    int largest = 0;
};

/// Sia's configuration shapes for one GPU type: (gpus, nodes) pairs. Powers of two up to gpus_per_node within one
/// node (gpus_per_node itself included as a whole node even when it is not a power of two), then k whole nodes
/// (k x gpus_per_node GPUs) for k = 2..nodes.
inline std::vector<std::pair<int, int>> sia_config_shapes(int gpus_per_node, int nodes) {
    if (gpus_per_node < 1)
        throw config_error("sia_config_shapes: gpus_per_node=" + std::to_string(gpus_per_node) + " must be >= 1");
    if (nodes < 0) throw config_error("sia_config_shapes: nodes=" + std::to_string(nodes) + " must be >= 0");
    std::vector<std::pair<int, int>> out;
    if (nodes == 0) return out;
    for (int g = 1; g < gpus_per_node; g *= 2) out.emplace_back(g, 1);
    out.emplace_back(gpus_per_node, 1);
    for (int k = 2; k <= nodes; ++k) out.emplace_back(k * gpus_per_node, k);
    return out;
}

namespace detail {

/// Tie-break in the program's objective for each running job's current configuration. Sia's program values a
/// swap of two equal jobs (a running one stopped, a waiting one started on the same GPUs) at exactly zero, and
/// GLPK then picks either; when the program changes every round (a restart lock starting or ending), equal jobs
/// swap every round, each swap a restart (one 4-GPU job restarted 85 times in its first 7.4 h, --sizes requested,
/// restart 100 s). The artifact solves the same job order every round with CBC, whose pick among equals is then
/// stable; here a preference far below any real difference of terms (normalised goodputs^p differ by 1e-2 and
/// more; 1e-5 stays above GLPK's objective tolerance) keeps the running job. sia_solution::objective leaves it out.
inline constexpr double sia_tie_keep = 1e-5;

/// Per-type packing data shared by the ILP, the greedy fallback and the evaluator.
struct sia_type_info {
    int gpus = 0;           ///< all GPUs the program may hand out: whole nodes' and partly held nodes'
    int nodes = 0;          ///< whole nodes
    int gpus_per_node = 0;  ///< 0 when the whole nodes' GPUs are not a multiple of nodes (mixed node sizes: packing row omitted)
    int partial = 0;        ///< GPUs left on nodes partly held outside the program (single-node configurations only)
    int largest_partial = 0;  ///< most GPUs left on one such node
};

inline std::vector<sia_type_info> sia_types(const std::vector<int>& gpus_per_type, const std::vector<int>& nodes_per_type,
                                             const std::vector<sia_partial_nodes>& partial) {
    if (gpus_per_type.size() != nodes_per_type.size())
        throw config_error("sia: gpus_per_type has " + std::to_string(gpus_per_type.size()) +
                           " entries and nodes_per_type " + std::to_string(nodes_per_type.size()) +
                           "; they must match");
    if (!partial.empty() && partial.size() != gpus_per_type.size())
        throw config_error("sia: partial_per_type has " + std::to_string(partial.size()) + " entries and gpus_per_type " +
                           std::to_string(gpus_per_type.size()) + "; they must match (or be empty)");
    std::vector<sia_type_info> out(gpus_per_type.size());
    for (std::size_t t = 0; t < out.size(); ++t) {
        const auto ts = std::to_string(t);
        const sia_partial_nodes pt = partial.empty() ? sia_partial_nodes{} : partial[t];
        if (pt.gpus < 0 || pt.largest < 0 || pt.largest > pt.gpus || (pt.gpus > 0) != (pt.largest > 0))
            throw config_error("sia: partial_per_type[" + ts + "] has gpus=" + std::to_string(pt.gpus) + " and largest=" +
                               std::to_string(pt.largest) + ": need 0 < largest <= gpus, or both 0");
        const int g = gpus_per_type[t] - pt.gpus, n = nodes_per_type[t];
        if (g < 0 || n < 0)
            throw config_error("sia: gpus_per_type[" + ts + "]=" + std::to_string(gpus_per_type[t]) + " (" +
                               std::to_string(pt.gpus) + " of them on partly held nodes) and nodes_per_type[" + ts +
                               "]=" + std::to_string(n) + " must be >= 0");
        if ((g > 0) != (n > 0) || g < n)
            throw config_error("sia: gpus_per_type[" + ts + "]=" + std::to_string(gpus_per_type[t]) + " (" +
                               std::to_string(g) + " on whole nodes) on nodes_per_type[" + ts + "]=" +
                               std::to_string(n) + " nodes: every node must have at least one GPU");
        out[t] = {g + pt.gpus, n, n > 0 && g % n == 0 ? g / n : 0, pt.gpus, pt.largest};
    }
    return out;
}

inline void sia_validate(const std::vector<sia_job>& jobs, const std::vector<sia_type_info>& types, const sia_options& o) {
    auto bad = [](const std::string& m) { throw config_error("sia: " + m); };
    if (!std::isfinite(o.p) || o.p == 0) bad("options.p=" + std::to_string(o.p) + " must be finite and non-zero");
    if (!std::isfinite(o.lambda) || o.lambda < 0) bad("options.lambda=" + std::to_string(o.lambda) + " must be >= 0");
    if (!std::isfinite(o.restart_penalty_s) || o.restart_penalty_s < 0)
        bad("options.restart_penalty_s=" + std::to_string(o.restart_penalty_s) + " must be >= 0");
    if (!std::isfinite(o.round_s) || o.round_s <= 0) bad("options.round_s=" + std::to_string(o.round_s) + " must be > 0");
    if (!(o.time_limit_s > 0)) bad("options.time_limit_s=" + std::to_string(o.time_limit_s) + " must be > 0");
    if (o.node_limit < 0) bad("options.node_limit=" + std::to_string(o.node_limit) + " must be >= 0 (0 = no limit)");
    if (!std::isfinite(o.mip_gap) || o.mip_gap < 0) bad("options.mip_gap=" + std::to_string(o.mip_gap) + " must be >= 0");
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        const auto& job = jobs[j];
        const auto js = "jobs[" + std::to_string(j) + "]";
        if (job.current < -1 || job.current >= static_cast<int>(job.configs.size()))
            bad(js + ".current=" + std::to_string(job.current) + " must be -1 or an index into its " +
                std::to_string(job.configs.size()) + " configs");
        if (!std::isfinite(job.age_s) || job.age_s < 0) bad(js + ".age_s=" + std::to_string(job.age_s) + " must be >= 0");
        if (job.restarts < 0) bad(js + ".restarts=" + std::to_string(job.restarts) + " must be >= 0");
        for (std::size_t c = 0; c < job.configs.size(); ++c) {
            const auto& cf = job.configs[c];
            const auto cs = js + ".configs[" + std::to_string(c) + "]";
            if (cf.type < 0 || cf.type >= static_cast<int>(types.size()))
                bad(cs + ".type=" + std::to_string(cf.type) + " must index one of the " +
                    std::to_string(types.size()) + " GPU types");
            if (cf.nodes < 1 || cf.gpus < cf.nodes)
                bad(cs + " has gpus=" + std::to_string(cf.gpus) + " on nodes=" + std::to_string(cf.nodes) +
                    ": need nodes >= 1 and gpus >= nodes");
            if (!std::isfinite(cf.goodput) || cf.goodput < 0)
                bad(cs + ".goodput=" + std::to_string(cf.goodput) + " must be finite and >= 0");
        }
    }
}

/// Whole nodes a configuration holds exclusively: all of its nodes when it spans several (Sia's multi-node
/// configurations are whole nodes), one when it is a single-node size that does not divide the node (it cannot be
/// packed exactly with others), else 0 (it packs with other single-node configurations; exact when the node size
/// is a power of two, as with Sia's power-of-two shapes).
inline int sia_whole_nodes(const sia_config& c, const sia_type_info& t) {
    if (c.nodes >= 2) return c.nodes;
    if (t.gpus_per_node > 0 && t.gpus_per_node % c.gpus != 0) return 1;
    return 0;
}

/// Whether a configuration may take GPUs left on a partly held node: a packing single-node size no larger than the
/// emptiest such node. The others of its single-node kind go to whole nodes.
inline bool sia_fits_partial(const sia_config& c, const sia_type_info& t) {
    return sia_whole_nodes(c, t) == 0 && c.gpus <= t.largest_partial;
}

/// Whether a configuration can ever be placed on the cluster (ignoring other jobs).
inline bool sia_placeable(const sia_config& c, const sia_type_info& t) {
    if (c.excluded || c.goodput <= 0 || c.gpus > t.gpus) return false;
    if (sia_fits_partial(c, t)) return true;
    if (c.nodes > t.nodes) return false;
    if (t.gpus_per_node > 0) return c.gpus <= c.nodes * t.gpus_per_node;
    return true;
}

/// Restart factor r in [0, 1] of moving job j to configuration c.
inline double sia_restart_factor(const sia_job& job, int c, const sia_options& o) {
    if (job.current < 0 || job.current == c) return 1.0;
    const double d = o.restart_penalty_s;
    if (o.restart_model == sia_restart_model::round) return o.round_s / (o.round_s + d);
    if (job.age_s + d <= 0) return 1.0;  // delta = 0 and a brand-new job: no penalty
    // Pollux (Qiao et al., OSDI'21) re-allocation factor, reused by Sia: (age - restarts*delta) / (age + delta)
    return std::max(0.0, job.age_s - job.restarts * d) / (job.age_s + d);
}

/// Per (job, config): the term G^p of the program, or NaN when the configuration cannot be chosen.
inline std::vector<std::vector<double>> sia_terms(const std::vector<sia_job>& jobs,
                                                  const std::vector<sia_type_info>& types, const sia_options& o) {
    std::vector<std::vector<double>> out(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        const auto& job = jobs[j];
        double gmin = std::numeric_limits<double>::infinity();
        for (const auto& c : job.configs)
            if (c.goodput > 0) gmin = std::min(gmin, c.goodput);
        out[j].assign(job.configs.size(), std::numeric_limits<double>::quiet_NaN());
        for (std::size_t c = 0; c < job.configs.size(); ++c) {
            const auto& cf = job.configs[c];
            if (!sia_placeable(cf, types[static_cast<std::size_t>(cf.type)])) continue;
            const double r = sia_restart_factor(job, static_cast<int>(c), o);
            if (r <= 0) continue;
            // Sia SOSP'23 objective term: normalised goodput raised to p
            out[j][c] = std::pow(r * cf.goodput / gmin, o.p);
        }
    }
    return out;
}

/// Value of the program for a choice vector (see the header comment for the sign convention).
inline double sia_value(const std::vector<std::vector<double>>& terms, const std::vector<int>& choice,
                        const sia_options& o) {
    double v = 0;
    for (std::size_t j = 0; j < choice.size(); ++j) {
        if (choice[j] >= 0)
            v += terms[j][static_cast<std::size_t>(choice[j])];
        else if (o.p < 0)
            v += o.lambda;
    }
    return v;
}

/// Running usage of one GPU type while building a schedule.
struct sia_usage {
    int gpus = 0;
    int multi_nodes = 0;
    int single_gpus = 0;
    int big_single_gpus = 0;  ///< of single_gpus, those in configurations larger than the emptiest partly held node
    [[nodiscard]] bool fits(const sia_config& c, const sia_type_info& t) const {
        if (gpus + c.gpus > t.gpus) return false;
        const int whole = sia_whole_nodes(c, t);
        const int mn = multi_nodes + whole;
        const int sg = single_gpus + (whole > 0 ? 0 : c.gpus);
        const int big = big_single_gpus + (whole == 0 && !sia_fits_partial(c, t) ? c.gpus : 0);
        // Single-node GPUs on whole nodes: all beyond what the partly held nodes take, and at least the big ones.
        const int on_whole = std::max(big, sg - t.partial);
        const int single_nodes = t.gpus_per_node > 0 ? (on_whole + t.gpus_per_node - 1) / t.gpus_per_node : 0;
        return mn + single_nodes <= t.nodes;
    }
    void add(const sia_config& c, const sia_type_info& t, int sign = 1) {
        gpus += sign * c.gpus;
        const int whole = sia_whole_nodes(c, t);
        if (whole > 0) {
            multi_nodes += sign * whole;
        } else {
            single_gpus += sign * c.gpus;
            if (!sia_fits_partial(c, t)) big_single_gpus += sign * c.gpus;
        }
    }
    void remove(const sia_config& c, const sia_type_info& t) { add(c, t, -1); }
};

/// Greedy schedule used when branch-and-cut stops before finding an integer point: keep running jobs where they
/// are, add (job, configuration) pairs in order of benefit per GPU, then upgrade jobs to better configurations
/// while they fit. Benefit of a term v: lambda - v for p < 0, v for p > 0.
inline std::vector<int> sia_greedy(const std::vector<sia_job>& jobs, const std::vector<sia_type_info>& types,
                                   const std::vector<std::vector<double>>& terms, const sia_options& o) {
    std::vector<int> choice(jobs.size(), -1);
    std::vector<sia_usage> use(types.size());
    auto cfg = [&](std::size_t j, int c) -> const sia_config& { return jobs[j].configs[static_cast<std::size_t>(c)]; };
    auto term = [&](std::size_t j, int c) { return terms[j][static_cast<std::size_t>(c)]; };
    auto benefit = [&](std::size_t j, int c) { return o.p < 0 ? o.lambda - term(j, c) : term(j, c); };
    auto take = [&](std::size_t j, int c) {
        const auto& cf = cfg(j, c);
        const auto t = static_cast<std::size_t>(cf.type);
        if (choice[j] >= 0 || !use[t].fits(cf, types[t])) return;
        use[t].add(cf, types[t]);
        choice[j] = c;
    };
    auto release = [&](std::size_t j) {
        const auto& cf = cfg(j, choice[j]);
        use[static_cast<std::size_t>(cf.type)].remove(cf, types[static_cast<std::size_t>(cf.type)]);
        choice[j] = -1;
    };
    for (std::size_t j = 0; j < jobs.size(); ++j)
        if (jobs[j].current >= 0 && !std::isnan(term(j, jobs[j].current))) take(j, jobs[j].current);
    std::vector<std::pair<std::size_t, int>> cand;
    for (std::size_t j = 0; j < jobs.size(); ++j)
        for (std::size_t c = 0; c < terms[j].size(); ++c)
            if (!std::isnan(terms[j][c]) && benefit(j, static_cast<int>(c)) > 0) cand.emplace_back(j, static_cast<int>(c));
    std::stable_sort(cand.begin(), cand.end(), [&](const auto& a, const auto& b) {
        return benefit(a.first, a.second) / cfg(a.first, a.second).gpus >
               benefit(b.first, b.second) / cfg(b.first, b.second).gpus;
    });
    for (const auto& [j, c] : cand) take(j, c);
    // Upgrades: move a job to a better configuration when it fits once its own GPUs are released.
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        if (choice[j] < 0) continue;
        std::vector<int> better;
        for (std::size_t c = 0; c < terms[j].size(); ++c)
            if (!std::isnan(terms[j][c]) && benefit(j, static_cast<int>(c)) > benefit(j, choice[j]))
                better.push_back(static_cast<int>(c));
        std::stable_sort(better.begin(), better.end(), [&](int a, int b) { return benefit(j, a) > benefit(j, b); });
        for (int c : better) {
            const int old = choice[j];
            release(j);
            take(j, c);
            if (choice[j] == c) break;
            take(j, old);  // fits: it held exactly these GPUs a moment ago
        }
    }
    return choice;
}

/// The program's columns and rows. Columns: one binary per choosable (job, config), then one integer y_t per type
/// with single-node configs. Rows: one per job with a choice, then per type: GPUs, nodes, and (when y_t exists)
/// single-node packing, and the packing of the configurations larger than the emptiest partly held node.
struct sia_program {
    std::vector<std::vector<int>> col;  ///< per job and configuration: its column, -1 when it cannot be chosen
    std::vector<int> ycol;              ///< per type: y_t's column, -1 when none
    int ncols = 0;
    std::vector<int> job_row, gpu_row, node_row, pack_row, big_row;
    int nrows = 0;
};

/// The binary columns, one per (job, configuration) with a term (the others cannot be chosen).
inline sia_program sia_choice_columns(const std::vector<sia_job>& jobs, const std::vector<std::vector<double>>& terms) {
    sia_program g;
    g.col.resize(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        g.col[j].assign(jobs[j].configs.size(), -1);
        for (std::size_t c = 0; c < terms[j].size(); ++c)
            if (!std::isnan(terms[j][c])) g.col[j][c] = g.ncols++;
    }
    return g;
}

/// The integer columns y_t (whole nodes the single-node configurations of type t pack into), then the rows.
inline void sia_pack_columns_and_rows(sia_program& g, const std::vector<sia_job>& jobs,
                                      const std::vector<sia_type_info>& types) {
    const std::size_t ntypes = types.size();
    g.ycol.assign(ntypes, -1);
    for (std::size_t j = 0; j < jobs.size(); ++j)
        for (std::size_t c = 0; c < g.col[j].size(); ++c) {
            const auto& cf = jobs[j].configs[c];
            const auto t = static_cast<std::size_t>(cf.type);
            if (g.col[j][c] >= 0 && sia_whole_nodes(cf, types[t]) == 0 && types[t].gpus_per_node > 0 && g.ycol[t] < 0)
                g.ycol[t] = g.ncols++;
        }
    g.job_row.assign(jobs.size(), -1);
    g.gpu_row.assign(ntypes, 0);
    g.node_row.assign(ntypes, 0);
    g.pack_row.assign(ntypes, -1);
    g.big_row.assign(ntypes, -1);
    for (std::size_t j = 0; j < jobs.size(); ++j)
        if (std::any_of(g.col[j].begin(), g.col[j].end(), [](int v) { return v >= 0; })) g.job_row[j] = g.nrows++;
    for (std::size_t t = 0; t < ntypes; ++t) {
        g.gpu_row[t] = g.nrows++;
        g.node_row[t] = g.nrows++;
        if (g.ycol[t] >= 0) g.pack_row[t] = g.nrows++;
        if (g.ycol[t] >= 0 && types[t].partial > 0) g.big_row[t] = g.nrows++;
    }
}

/// The rows' bounds (one configuration per job; GPUs, nodes and packing per type) and the y_t columns.
inline void sia_capacity_rows(glpk_problem& ilp, const sia_program& g, const std::vector<sia_type_info>& types) {
    for (std::size_t j = 0; j < g.job_row.size(); ++j)
        if (g.job_row[j] >= 0) ilp.row_upper(g.job_row[j], 1.0);
    for (std::size_t t = 0; t < types.size(); ++t) {
        ilp.row_upper(g.gpu_row[t], types[t].gpus);
        ilp.row_upper(g.node_row[t], types[t].nodes);
        if (g.ycol[t] >= 0) {
            ilp.row_lower(g.pack_row[t], -types[t].partial);
            ilp.col_integer(g.ycol[t]);
            ilp.col_bounds(g.ycol[t], 0.0, types[t].nodes);
            ilp.objective(g.ycol[t], 0.0);
            ilp.entry(g.node_row[t], g.ycol[t], 1.0);
            ilp.entry(g.pack_row[t], g.ycol[t], types[t].gpus_per_node);
            if (g.big_row[t] >= 0) {
                ilp.row_lower(g.big_row[t], 0.0);
                ilp.entry(g.big_row[t], g.ycol[t], types[t].gpus_per_node);
            }
        }
    }
}

/// The binary columns' objective terms and their entries in the rows; returns the jobs whose lambda goes into the
/// objective's constant (all of them for p < 0).
inline int sia_choice_entries(glpk_problem& ilp, const sia_program& g, const std::vector<sia_job>& jobs,
                              const std::vector<sia_type_info>& types, const std::vector<std::vector<double>>& terms,
                              const sia_options& o) {
    int lambda_jobs = 0;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        if (o.p < 0) ++lambda_jobs;
        for (std::size_t c = 0; c < g.col[j].size(); ++c) {
            const int k = g.col[j][c];
            if (k < 0) continue;
            const auto& cf = jobs[j].configs[c];
            const auto t = static_cast<std::size_t>(cf.type);
            ilp.col_binary(k);
            // p < 0: lambda * (1 - sum_c A_jc) moves -lambda onto each A_jc and lambda * jobs into the constant.
            // A running job's current configuration wins ties (sia_tie_keep).
            const double keep = jobs[j].current == static_cast<int>(c) ? sia_tie_keep : 0.0;
            ilp.objective(k, o.p < 0 ? terms[j][c] - o.lambda - keep : terms[j][c] + keep);
            ilp.entry(g.job_row[j], k, 1.0);
            ilp.entry(g.gpu_row[t], k, cf.gpus);
            if (const int whole = sia_whole_nodes(cf, types[t]); whole > 0)
                ilp.entry(g.node_row[t], k, whole);
            else if (g.pack_row[t] >= 0) {
                ilp.entry(g.pack_row[t], k, -cf.gpus);
                if (g.big_row[t] >= 0 && !sia_fits_partial(cf, types[t])) ilp.entry(g.big_row[t], k, -cf.gpus);
            }
        }
    }
    return lambda_jobs;
}

/// The choice after the solve: GLPK's when proven optimal; stopped early, the better of GLPK's incumbent (if any)
/// and the greedy schedule.
inline std::vector<int> sia_chosen(const glpk_problem& ilp, const glpk_problem::mip_outcome& res, const sia_program& g,
                                   const std::vector<sia_job>& jobs, const std::vector<sia_type_info>& types,
                                   const std::vector<std::vector<double>>& terms, const sia_options& o) {
    std::vector<int> mip_choice(jobs.size(), -1);
    if (res.has_solution)
        for (std::size_t j = 0; j < jobs.size(); ++j)
            for (std::size_t c = 0; c < g.col[j].size(); ++c)
                if (g.col[j][c] >= 0 && ilp.mip_value(g.col[j][c]) > 0.5) mip_choice[j] = static_cast<int>(c);
    if (res.optimal) return mip_choice;
    auto greedy = sia_greedy(jobs, types, terms, o);
    if (!res.has_solution) return greedy;
    const double vm = sia_value(terms, mip_choice, o), vg = sia_value(terms, greedy, o);
    const bool greedy_better = o.p < 0 ? vg < vm : vg > vm;
    return greedy_better ? greedy : mip_choice;
}

}  // namespace detail

/// Solves one Sia scheduling round. gpus_per_type / nodes_per_type: GPUs and whole nodes of each type available this
/// round; partial_per_type (empty = none): per type, the GPUs of gpus_per_type that lie on nodes partly held by jobs
/// outside the program (they take single-node configurations only). Throws config_error on malformed input and
/// solver_error if GLPK fails.
inline sia_solution solve_sia(const std::vector<sia_job>& jobs, const std::vector<int>& gpus_per_type,
                              const std::vector<int>& nodes_per_type, const sia_options& o = {},
                              const std::vector<sia_partial_nodes>& partial_per_type = {}) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto types = detail::sia_types(gpus_per_type, nodes_per_type, partial_per_type);
    detail::sia_validate(jobs, types, o);
    const auto terms = detail::sia_terms(jobs, types, o);

    sia_solution out;
    out.choice.assign(jobs.size(), -1);
    auto finish = [&] {
        out.objective = detail::sia_value(terms, out.choice, o);
        out.solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return out;
    };

    auto g = detail::sia_choice_columns(jobs, terms);
    if (g.ncols == 0) {
        out.optimal = true;
        return finish();
    }
    detail::sia_pack_columns_and_rows(g, jobs, types);

    detail::glpk_problem ilp;
    o.p < 0 ? ilp.minimize() : ilp.maximize();
    ilp.add_cols(g.ncols);
    ilp.add_rows(g.nrows);
    detail::sia_capacity_rows(ilp, g, types);
    const int lambda_jobs = detail::sia_choice_entries(ilp, g, jobs, types, terms, o);
    ilp.set_objective_constant(o.lambda * lambda_jobs);
    ilp.load_matrix();
    const auto res = ilp.intopt("sia", {.time_limit_s = o.time_limit_s, .node_limit = o.node_limit, .mip_gap = o.mip_gap,
                                        .cuts = o.cuts});
    out.optimal = res.optimal;
    out.timed_out = res.timed_out;
    out.nodes = res.nodes;
    out.choice = detail::sia_chosen(ilp, res, g, jobs, types, terms, o);
    return finish();
}

}  // namespace frenzy
