#pragma once
// RAII wrapper around a GLPK problem object, used only by the LP/ILP baselines (gavel_lp.hpp, sia_ilp.hpp).
// Needs <glpk.h> and libglpk (CMake target frenzy::glpk).
//
// Thread-compatibility: every problem object is owned by one `glpk_problem`; the only process state touched is
// GLPK's terminal switch (glp_term_out), which GLPK keeps per thread (its environment is thread-local), so we
// set it before every solve. GLPK aborts the process on invalid arguments (it has no exceptions), so callers
// validate their input first and this wrapper checks indices with asserts; solver failures are return codes,
// turned into frenzy::solver_error here. GLPK allocates its environment the first time a thread calls it and
// frees it only in glp_free_env(): a short-lived thread that used these solvers should call glp_free_env() before
// it exits (when it holds no other GLPK object), or ~5 KB per thread leak; pooled threads need nothing.
#include <glpk.h>

#include <cassert>
#include <climits>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "frenzy/core/error.hpp"

namespace frenzy::detail {

/// Silences GLPK's terminal output in the calling thread.
inline void glpk_silence() noexcept { glp_term_out(GLP_OFF); }

/// Name of a glp_simplex / glp_intopt return code, for error messages.
inline const char* glpk_return_name(int rc) noexcept {
    switch (rc) {
        case 0: return "ok";
        case GLP_EBADB: return "GLP_EBADB (invalid initial basis)";
        case GLP_ESING: return "GLP_ESING (singular basis)";
        case GLP_ECOND: return "GLP_ECOND (ill-conditioned basis)";
        case GLP_EBOUND: return "GLP_EBOUND (inconsistent bounds)";
        case GLP_EFAIL: return "GLP_EFAIL (solver failure)";
        case GLP_EOBJLL: return "GLP_EOBJLL (objective lower limit reached)";
        case GLP_EOBJUL: return "GLP_EOBJUL (objective upper limit reached)";
        case GLP_EITLIM: return "GLP_EITLIM (iteration limit)";
        case GLP_ETMLIM: return "GLP_ETMLIM (time limit)";
        case GLP_ENOPFS: return "GLP_ENOPFS (no primal feasible solution)";
        case GLP_ENODFS: return "GLP_ENODFS (no dual feasible solution)";
        case GLP_EROOT: return "GLP_EROOT (root LP optimum not provided)";
        case GLP_ESTOP: return "GLP_ESTOP (search terminated)";
        case GLP_EMIPGAP: return "GLP_EMIPGAP (relative mip gap reached)";
        default: return "unknown GLPK return code";
    }
}

/// Owns one glp_prob. Rows and columns are 0-based here (GLPK's are 1-based).
class glpk_problem {
public:
    glpk_problem() : p_(glp_create_prob()) {
        if (p_ == nullptr) throw solver_error("glpk: glp_create_prob failed");
    }
    ~glpk_problem() {
        if (p_ != nullptr) glp_delete_prob(p_);
    }
    glpk_problem(const glpk_problem&) = delete;
    glpk_problem& operator=(const glpk_problem&) = delete;
    glpk_problem(glpk_problem&& o) noexcept
        : p_(std::exchange(o.p_, nullptr)), ia_(std::move(o.ia_)), ja_(std::move(o.ja_)), ar_(std::move(o.ar_)) {}
    glpk_problem& operator=(glpk_problem&& o) noexcept {
        if (this != &o) {
            if (p_ != nullptr) glp_delete_prob(p_);
            p_ = std::exchange(o.p_, nullptr);
            ia_ = std::move(o.ia_);
            ja_ = std::move(o.ja_);
            ar_ = std::move(o.ar_);
        }
        return *this;
    }

    [[nodiscard]] glp_prob* get() const noexcept { return p_; }

    void maximize() { glp_set_obj_dir(p_, GLP_MAX); }
    void minimize() { glp_set_obj_dir(p_, GLP_MIN); }
    void set_objective_constant(double c) { glp_set_obj_coef(p_, 0, c); }

    /// Adds n rows; returns the 0-based index of the first.
    int add_rows(int n) {
        assert(n > 0);
        return glp_add_rows(p_, n) - 1;
    }
    /// Adds n columns; returns the 0-based index of the first.
    int add_cols(int n) {
        assert(n > 0);
        return glp_add_cols(p_, n) - 1;
    }
    [[nodiscard]] int rows() const { return glp_get_num_rows(p_); }
    [[nodiscard]] int cols() const { return glp_get_num_cols(p_); }

    /// Row i: expression <= ub.
    void row_upper(int i, double ub) { glp_set_row_bnds(p_, check_row(i), GLP_UP, 0.0, ub); }
    /// Row i: expression >= lb.
    void row_lower(int i, double lb) { glp_set_row_bnds(p_, check_row(i), GLP_LO, lb, 0.0); }
    /// Column j: lb <= x <= ub (a fixed column when lb == ub).
    void col_bounds(int j, double lb, double ub) {
        assert(lb <= ub);
        glp_set_col_bnds(p_, check_col(j), lb == ub ? GLP_FX : GLP_DB, lb, ub);
    }
    /// Column j: x >= lb.
    void col_lower(int j, double lb) { glp_set_col_bnds(p_, check_col(j), GLP_LO, lb, 0.0); }
    void col_binary(int j) { glp_set_col_kind(p_, check_col(j), GLP_BV); }
    void col_integer(int j) { glp_set_col_kind(p_, check_col(j), GLP_IV); }
    void objective(int j, double c) { glp_set_obj_coef(p_, check_col(j), c); }

    /// Constraint-matrix entries, collected then loaded at once (duplicates are not allowed).
    void entry(int i, int j, double v) {
        if (v == 0.0) return;
        ia_.push_back(check_row(i));
        ja_.push_back(check_col(j));
        ar_.push_back(v);
    }
    void load_matrix() {
        // GLPK's arrays are 1-based: element 0 is ignored.
        if (ia_.size() < 2) return;
        const int ne = static_cast<int>(ia_.size()) - 1;
        glp_load_matrix(p_, ne, ia_.data(), ja_.data(), ar_.data());
    }

    /// Solves the LP with the simplex method (presolve on, silent); throws solver_error unless optimal.
    void simplex(const std::string& who) {
        glpk_silence();
        glp_smcp parm;
        glp_init_smcp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        parm.presolve = GLP_ON;
        const int rc = glp_simplex(p_, &parm);
        if (rc != 0) throw solver_error(who + ": glp_simplex failed: " + glpk_return_name(rc));
        const int st = glp_get_status(p_);
        if (st != GLP_OPT)
            throw solver_error(who + ": LP not solved to optimality (glp_get_status=" + std::to_string(st) + ")");
    }
    [[nodiscard]] double lp_value(int j) const { return glp_get_col_prim(p_, check_col(j)); }
    [[nodiscard]] double lp_objective() const { return glp_get_obj_val(p_); }

    /// Outcome of a branch-and-bound run.
    struct mip_outcome {
        bool has_solution = false;  ///< an integer-feasible point is available (mip_value)
        bool optimal = false;       ///< proven optimal (within the requested gap, which defaults to 0)
        bool timed_out = false;     ///< stopped by the wall-clock limit (the only stop that depends on the machine)
        int rc = 0;                 ///< glp_intopt's return code
        int nodes = 0;              ///< branch-and-bound subproblems generated (glp_ios_tree_size's t_cnt)
    };
    /// Limits of one branch-and-bound run. node_limit stops the search deterministically: GLPK is single-threaded
    /// and its default search has no randomness, so the same program stops at the same point on any machine.
    /// time_limit_s is a wall-clock backstop; hitting it is reported (timed_out) since the result then depends
    /// on the machine's speed and load.
    struct mip_limits {
        double time_limit_s = 10;  ///< glp_iocp::tm_lim
        int node_limit = 0;        ///< stop once this many subproblems exist (0 = no limit)
        double mip_gap = 0.0;      ///< glp_iocp::mip_gap
        bool cuts = false;         ///< GLPK's mixed-integer rounding and Gomory cuts (glp_iocp::mir_cuts, gmi_cuts)
    };
    /// Solves the MIP with glp_intopt (MIP presolve on, silent) within the limits. Hitting a limit or the gap is
    /// not an error: the outcome says whether a solution exists.
    mip_outcome intopt(const std::string& who, const mip_limits& lim) {
        glpk_silence();
        glp_iocp parm;
        glp_init_iocp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        parm.presolve = GLP_ON;
        parm.mip_gap = lim.mip_gap;
        parm.mir_cuts = lim.cuts ? GLP_ON : GLP_OFF;
        parm.gmi_cuts = lim.cuts ? GLP_ON : GLP_OFF;
        const double ms = std::ceil(lim.time_limit_s * 1000.0);
        parm.tm_lim = ms >= static_cast<double>(INT_MAX) ? INT_MAX : (ms < 1.0 ? 1 : static_cast<int>(ms));
        node_budget budget{lim.node_limit, 0};
        parm.cb_func = &node_budget::callback;
        parm.cb_info = &budget;
        const int rc = glp_intopt(p_, &parm);
        mip_outcome out;
        out.rc = rc;
        out.nodes = budget.seen;
        if (rc != 0 && rc != GLP_ETMLIM && rc != GLP_EMIPGAP && rc != GLP_ESTOP)
            throw solver_error(who + ": glp_intopt failed: " + glpk_return_name(rc));
        out.timed_out = rc == GLP_ETMLIM;
        const int st = glp_mip_status(p_);
        out.has_solution = st == GLP_OPT || st == GLP_FEAS;
        out.optimal = (rc == 0 && st == GLP_OPT) || (rc == GLP_EMIPGAP && out.has_solution);
        if (rc == 0 && st == GLP_NOFEAS)
            throw solver_error(who + ": integer program has no feasible solution");
        return out;
    }
    [[nodiscard]] double mip_value(int j) const { return glp_mip_col_val(p_, check_col(j)); }
    [[nodiscard]] double mip_objective() const { return glp_mip_obj_val(p_); }

private:
    [[nodiscard]] int check_row(int i) const {
        assert(i >= 0 && i < glp_get_num_rows(p_));
        return i + 1;
    }
    [[nodiscard]] int check_col(int j) const {
        assert(j >= 0 && j < glp_get_num_cols(p_));
        return j + 1;
    }

    /// glp_intopt's callback: counts subproblems and ends the search at the limit (glp_ios_terminate).
    struct node_budget {
        int limit = 0;
        int seen = 0;
        static void callback(glp_tree* tree, void* info) {
            auto& b = *static_cast<node_budget*>(info);
            int active = 0, current = 0, total = 0;
            glp_ios_tree_size(tree, &active, &current, &total);
            b.seen = total;
            if (b.limit > 0 && total >= b.limit && glp_ios_reason(tree) == GLP_ISELECT) glp_ios_terminate(tree);
        }
    };
    glp_prob* p_ = nullptr;
    std::vector<int> ia_{0};
    std::vector<int> ja_{0};
    std::vector<double> ar_{0.0};
};

}  // namespace frenzy::detail
