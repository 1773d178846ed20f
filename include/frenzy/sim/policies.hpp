#pragma once
// The scheduling policies by name: the one mapping `frenzy simulate --policy` and `frenzy.simulate(policy=...)`
// use. `policy_names()` lists what `--policy all` runs in this build (gavel and sia need GLPK: FRENZY_HAS_GLPK), in
// that order; `selectable_policy_names()` adds the policies chosen only by name (gavel-las: Gavel's LAS policy, kept
// out of "all" so that every published `--policy all` table keeps its rows); `select_policies("all" | name)`
// resolves a request, with a "did you mean" for a typo;
// `make_scheduler(name, options)` builds the scheduler with the given knobs (the library's defaults otherwise).
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/core/suggest.hpp"
#include "frenzy/sched/fcfs.hpp"
#include "frenzy/sched/has.hpp"
#include "frenzy/sched/scheduler.hpp"
#include "frenzy/sched/tiresias.hpp"
#include "frenzy/sim/simulator.hpp"
#ifdef FRENZY_HAS_GLPK
#include "frenzy/sched/gavel.hpp"
#include "frenzy/sched/sia.hpp"
#endif

namespace frenzy {

/// Knobs of every policy `make_scheduler` can build (each defaults to the library's own defaults).
struct policy_options {
    has_options has{};
    shortest_remaining_first has_order{};
    tiresias_options tiresias{};
#ifdef FRENZY_HAS_GLPK
    gavel_options gavel{};
    sia_policy_options sia{};
#endif
};

/// The policies' view of one simulation's costs: HAS predicts with the simulator's start-up cost, Sia's restart
/// factor uses its restart cost (sim_options::restart_s) and Sia's restart lock its start-up cost, so that no policy
/// is told a cost other than the one charged.
inline policy_options policy_options_for(const sim_options& s, policy_options o = {}) {
    o.has.startup_s = s.startup_s;
#ifdef FRENZY_HAS_GLPK
    o.sia.ilp.restart_penalty_s = s.restart_s;
    o.sia.startup_s = s.startup_s;  // the restart lock's length for a first launch
#endif
    return o;
}

/// Names of the policies in this build, HAS first (the comparisons are against it).
inline std::vector<std::string> policy_names() {
    std::vector<std::string> n{"has", "fcfs", "tiresias"};
#ifdef FRENZY_HAS_GLPK
    n.push_back("gavel");
    n.push_back("sia");
#endif
    return n;
}

/// Every name make_scheduler knows in this build: policy_names(), then those run only when named.
inline std::vector<std::string> selectable_policy_names() {
    auto n = policy_names();
#ifdef FRENZY_HAS_GLPK
    n.push_back("gavel-las");
#endif
    return n;
}

/// "all" -> every policy_names(); a known name (selectable_policy_names()) -> just it; anything else: config_error
/// naming `field`, the value, the known names and the closest of them.
inline std::vector<std::string> select_policies(std::string_view name, std::string_view field = "policy") {
    if (name == "all") return policy_names();
    const auto all = selectable_policy_names();
    for (const auto& n : all)
        if (n == name) return {n};
    std::string known;
    for (const auto& n : all) known += (known.empty() ? "" : " | ") + n;
    auto with_all = all;
    with_all.push_back("all");
    throw config_error(std::string(field) + "=\"" + std::string(name) + "\" is not one of: " + known + " | all" +
                       detail::did_you_mean(name, with_all));
}

/// The scheduler called `name` (one of selectable_policy_names()), built with `o`.
inline any_scheduler make_scheduler(std::string_view name, const policy_options& o = {}) {
    if (name == "has") return has_scheduler<>(o.has, best_fit_placement{}, o.has_order);
    if (name == "fcfs") return fcfs_scheduler{};
    if (name == "tiresias") return tiresias_scheduler{o.tiresias};
#ifdef FRENZY_HAS_GLPK
    if (name == "gavel") {
        auto g = o.gavel;
        g.policy = gavel_policy::max_sum_throughput;
        return gavel_scheduler{g};
    }
    if (name == "gavel-las") {
        auto g = o.gavel;  // the same knobs (round length) as gavel
        g.policy = gavel_policy::las;
        return gavel_scheduler{g};
    }
    if (name == "sia") return sia_scheduler{o.sia};
#endif
    (void)select_policies(name);  // throws, naming the known policies and the closest
    throw config_error("policy=\"all\" names every policy: build them one by one (policy_names())");
}

}  // namespace frenzy
