#pragma once
// HAS's learned speeds: per GPU type, the geometric mean of the observed/predicted speed ratios of the jobs in view,
// shrunk towards 1 (has_options::learn, prior_jobs); a job's own ratio on a type where it was measured wins.
#include <cmath>
#include <cstddef>
#include <vector>

#include "frenzy/sched/scheduler.hpp"

namespace frenzy::detail {

class speed_ratios {
public:
    /// Learns the types' ratios from the jobs of `c` (with `on` false every ratio is 1).
    void learn(const sched_context& c, std::size_t ntypes, bool on, double prior_jobs) {
        on_ = on;
        type_.assign(ntypes, 1.0);
        if (!on) return;
        log_sum_.assign(ntypes, 0.0);
        count_.assign(ntypes, 0.0);
        for (const auto& j : c.jobs)
            for (std::size_t t = 0; t < j.measured_ratio.size() && t < ntypes; ++t)
                if (j.measured_ratio[t] > 0) {
                    log_sum_[t] += std::log(j.measured_ratio[t]);
                    count_[t] += 1;
                }
        for (std::size_t t = 0; t < ntypes; ++t)
            if (count_[t] > 0) type_[t] = std::exp(log_sum_[t] / (count_[t] + prior_jobs));
    }
    /// Job `j`'s speed ratio on cluster type `t` (1 where `t` < 0, a type not in the cluster, or learning is off).
    double of(const job_view& j, int t) const {
        return on_ && t >= 0 ? j.ratio_on(t, type_[static_cast<std::size_t>(t)]) : 1.0;
    }
    /// of(j, t) of every type t at [t + 1], [0] = 1 (t = -1): taken once per job rather than once per plan.
    const double* all(const job_view& j) {
        buf_.resize(type_.size() + 1);
        buf_[0] = 1.0;
        for (std::size_t t = 0; t < type_.size(); ++t) buf_[t + 1] = of(j, static_cast<int>(t));
        return buf_.data();
    }
    /// Estimated seconds the rest of `j` takes on plan `p` (of cluster type `t`): the prediction corrected by the
    /// job's measured speed ratio on that type, else by the type's learned ratio.
    double rem(const job_view& j, const plan& p, int t) const {
        if (!on_ || t < 0) return j.remaining_s(p);
        return j.remaining_s(p) / j.ratio_on(t, type_[static_cast<std::size_t>(t)]);
    }

private:
    bool on_ = false;
    std::vector<double> type_, log_sum_, count_, buf_;
};

}  // namespace frenzy::detail
