#pragma once
// The estimator's search face: what a planner that estimates one layout at many points calls (the layout's stages
// prepared once, estimates and floors from them, a walk that stops once nothing fits), kept off the estimator's
// public face (memory/estimator.hpp: estimate and lower_bound, what a host needs). The planner reaches it through
// plan/policies.hpp PreparedMemoryModel; a host's own memory model may offer the same by specialising memory_search.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "frenzy/memory/breakdown.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/memory/framework_profile.hpp"
#include "frenzy/memory/layout.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// The search face of the composed estimator (memory/estimator.hpp basic_memory_estimator): a view of it, cheap to
/// make at each call. Every answer is the estimator's own for the same job, bit for bit.
template <ModelStatePolicy S, ActivationPolicy A, OverheadPolicy O, AllocatorPolicy R>
class memory_search<basic_memory_estimator<S, A, O, R>> {
public:
    using estimator = basic_memory_estimator<S, A, O, R>;
    explicit memory_search(const estimator& e) : e_(e) {}

    /// What estimate(j) computes before its per-stage work: the stages (memory/layout.hpp stage_layouts with the
    /// job's profile) and the whole model's parameters. They depend on the model, the sequence length, the
    /// framework and the layout fields tp, etp, ep, pp, vpp, the uneven split and the embedding/loss stages only,
    /// not on dp, sharding, recompute, the micro-batch or the precision, so a planner that estimates one layout at
    /// many points prepares them once.
    struct prepared_stages {
        std::vector<stage_layout> layouts;
        double parameters = 0;
        /// Indices of the stages a walk without its per-stage list visits: each stage but those `dominated` by the
        /// last one kept (empty: every stage).
        std::vector<std::uint32_t> walk;
    };
    prepared_stages stages_of(const job_spec& j) const {
        prepared_stages s;
        stages_of(j, s);
        return s;
    }
    /// The same into `out`, its storage reused (no allocation once it has grown).
    void stages_of(const job_spec& j, prepared_stages& out) const {
        const auto f = profile_of(j);
        out.layouts.clear();
        out.layouts.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, j.parallel.pp)));
        for_each_stage_layout(j, f, [&](const stage_layout& l) { out.layouts.push_back(l); });
        out.parameters = estimator::parameters_of(j, f);
        set_walk(out);
    }
    /// stages_of(j, out) with the stages first .. last - 1 alone (a mixed plan's stage group), the walk set for them:
    /// what the whole list gives with the others erased and set_walk called.
    void stages_of(const job_spec& j, prepared_stages& out, std::int64_t first, std::int64_t last) const {
        const auto f = profile_of(j);
        out.layouts.clear();
        out.layouts.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, last - first)));
        for_each_stage_layout(j, f.vocab_divisible_by, first, last, [&](const stage_layout& l) { out.layouts.push_back(l); });
        out.parameters = estimator::parameters_of(j, f);
        set_walk(out);
    }
    /// Sets `s.walk` from `s.layouts` (stages_of does it last): what a caller that changes the list calls again.
    static void set_walk(prepared_stages& s) {
        s.walk.clear();
        s.walk.reserve(s.layouts.size());  // one allocation: a fresh list grows otherwise
        for (std::size_t i = 0, kept = 0; i < s.layouts.size(); ++i)
            if (i == 0 || !estimator::dominated(s.layouts[i], s.layouts[kept]))
                s.walk.push_back(static_cast<std::uint32_t>(kept = i));
    }
    /// estimate(j) with `s` = stages_of(j): the same report, bit for bit (the caller guarantees that `s` is
    /// stages_of(j)), without its per-stage list unless `with_stages`. With `stop_above`, the walk stops at the
    /// first stage whose bytes alone make the fit rule's requirement (memory/fit.hpp required_memory) exceed it:
    /// then the report covers the stages up to that one, and its requirement, though below the whole job's,
    /// already exceeds `stop_above` (what a planner needs to know when no GPU has more usable memory).
    memory_report estimate(const job_spec& j, const prepared_stages& s, bool with_stages = true,
                           double stop_above = std::numeric_limits<double>::infinity()) const {
        validate(j);
        return estimate_validated(j, s, with_stages, stop_above);
    }
    /// The same for a job the caller has validated (validate(j) passed): a search that varies only fields validate
    /// cannot fail on once it passed (a mixed plan's layer split between groups of fixed stage counts) checks once.
    memory_report estimate_validated(const job_spec& j, const prepared_stages& s, bool with_stages = true,
                                     double stop_above = std::numeric_limits<double>::infinity()) const {
        return e_.estimate_stages(j, profile_of(j), s.layouts, s.parameters, with_stages, stop_above, s.walk);
    }
    /// lower_bound(j) with `s` = stages_of(j).
    bytes lower_bound(const job_spec& j, const prepared_stages& s) const {
        return e_.lower_bound_stages(j, profile_of(j), s.layouts, s.walk);
    }

private:
    const estimator& e_;
};

template <class M> memory_search(const M&) -> memory_search<M>;

}  // namespace frenzy
