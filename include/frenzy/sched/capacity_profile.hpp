#pragma once
// Free GPUs of one GPU type as a step function of time: what HAS (sched/has.hpp) reserves in for conservative
// backfilling and asks whether a run fits now or when it fits at the earliest.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace frenzy {

/// Free GPUs of one type as a step function of time.
class capacity_profile {
public:
    void reset(double now, int free_now, std::vector<std::pair<double, int>>& releases) {
        std::sort(releases.begin(), releases.end());
        t_.assign(1, now);
        f_.assign(1, free_now);
        for (const auto& [when, g] : releases) {
            const double w = std::max(now, when);
            if (w == t_.back()) f_.back() += g;
            else {
                t_.push_back(w);
                f_.push_back(f_.back() + g);
            }
        }
        prefix_min();
    }
    /// Whether `g` GPUs stay free from now for `dur` seconds: a binary search on the prefix minimum.
    bool fits_now(int g, double dur) const {
        const auto it = std::lower_bound(t_.begin(), t_.end(), t_[0] + dur);
        const std::size_t k = it == t_.begin() ? 0 : static_cast<std::size_t>(it - t_.begin()) - 1;
        return pmin_[k] >= g;
    }
    /// Earliest step start at which `g` GPUs stay free for `dur` seconds; infinity if never. Linear: a window
    /// that fails at step k cannot start anywhere before k + 1.
    double earliest(int g, double dur) const {
        std::size_t i = 0;
        while (i < t_.size()) {
            if (f_[i] < g) {
                ++i;
                continue;
            }
            const double end = t_[i] + dur;
            std::size_t k = i + 1;
            while (k < t_.size() && t_[k] < end && f_[k] >= g) ++k;
            if (k == t_.size() || t_[k] >= end) return t_[i];
            i = k + 1;
        }
        return std::numeric_limits<double>::infinity();
    }
    void claim(double s, double dur, int g) {
        const std::size_t a = split(s), b = split(s + dur);
        for (std::size_t i = a; i < b; ++i) f_[i] -= g;
        prefix_min();
    }

private:
    void prefix_min() {
        pmin_.resize(f_.size());
        int m = std::numeric_limits<int>::max();
        for (std::size_t i = 0; i < f_.size(); ++i) pmin_[i] = m = std::min(m, f_[i]);
    }
    std::size_t split(double x) {
        auto it = std::lower_bound(t_.begin(), t_.end(), x);
        const auto k = static_cast<std::size_t>(it - t_.begin());
        if (it != t_.end() && *it == x) return k;
        t_.insert(it, x);
        f_.insert(f_.begin() + static_cast<std::ptrdiff_t>(k), f_[k - 1]);
        return k;
    }
    std::vector<double> t_;
    std::vector<int> f_;
    std::vector<int> pmin_;  // pmin_[i] = min(f_[0..i])
};

}  // namespace frenzy
