#pragma once
// The scheduling policies by name: one table (policy_registry()) that `frenzy simulate --policy`, `frenzy serve
// --policy`, `frenzy.simulate(policy=...)` and their --help read. Each entry names a policy, says whether
// `--policy all` runs it (gavel-las and rubick are chosen by name only, so that every published `--policy all` table
// keeps its rows), whether it needs GLPK (gavel and sia: built only with FRENZY_HAS_GLPK), describes it in one line and
// builds it from policy_options. Adding a policy is one entry here.
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/core/named.hpp"
#include "frenzy/sched/fcfs.hpp"
#include "frenzy/sched/has.hpp"
#include "frenzy/sched/rubick.hpp"
#include "frenzy/sched/scheduler.hpp"
#include "frenzy/sched/tiresias.hpp"
#ifdef FRENZY_HAS_GLPK
#include "frenzy/sched/gavel.hpp"
#include "frenzy/sched/sia.hpp"
#endif

namespace frenzy {

/// HAS's queue order with a host's job priorities first: a higher priority goes first, equal priorities keep
/// `base`'s order (`frenzy serve`'s limits.priority). Without `priority` it is `base`.
struct priority_first_order {
    std::function<int(int job)> priority;  ///< empty = every job has priority 0
    shortest_remaining_first base{};
    double key(const job_view& j, double best_remaining_gpu_s, double now) const {
        const double k = base.key(j, best_remaining_gpu_s, now);
        const int p = priority ? priority(j.id) : 0;
        return p == 0 ? k : k - static_cast<double>(p) * 1e15;
    }
};
static_assert(QueueOrder<priority_first_order>);

/// Knobs of every policy the registry builds (each defaults to the library's own defaults).
struct policy_options {
    has_options has{};
    shortest_remaining_first has_order{};
    /// Job priorities HAS orders its queue by first (priority_first_order); empty = none. The other policies have
    /// no notion of priority and ignore it.
    std::function<int(int job)> priority;
    tiresias_options tiresias{};
    rubick_options rubick{};
#ifdef FRENZY_HAS_GLPK
    gavel_options gavel{};
    sia_policy_options sia{};
#endif
};

/// One scheduling policy of the registry.
struct policy_entry {
    std::string_view name;
    bool in_all = true;       ///< `--policy all` runs it (false: chosen by name only)
    bool needs_glpk = false;  ///< built only with FRENZY_HAS_GLPK (absent from the registry otherwise)
    std::string_view description;  ///< one line, for --help
    any_scheduler (*make)(const policy_options&) = nullptr;
};

namespace detail {
inline any_scheduler make_has(const policy_options& o) {
    if (o.priority) return has_scheduler<best_fit_placement, priority_first_order>(o.has, {}, {o.priority, o.has_order});
    return has_scheduler<>(o.has, best_fit_placement{}, o.has_order);
}
#ifdef FRENZY_HAS_GLPK
inline any_scheduler make_gavel(const policy_options& o, gavel_policy p) {
    auto g = o.gavel;  // the same knobs (round length) for both LPs; "gavel" is max-sum whatever o.gavel says
    g.policy = p;
    return gavel_scheduler{g};
}
#endif
}  // namespace detail

/// The policies of this build, in the order `--policy all` runs them (HAS first: the comparisons are against it),
/// then those chosen by name only.
inline std::span<const policy_entry> policy_registry() {
    static const policy_entry entries[] = {
        {"has", true, false, "Heterogeneity-aware scheduling: earliest predicted completion over every GPU type and size",
         detail::make_has},
        {"fcfs", true, false, "First come, first served on the user's request", [](const policy_options&) -> any_scheduler { return fcfs_scheduler{}; }},
        {"tiresias", true, false, "Tiresias: discretised two-dimensional least attained service",
         [](const policy_options& o) -> any_scheduler { return tiresias_scheduler{o.tiresias}; }},
#ifdef FRENZY_HAS_GLPK
        {"gavel", true, true, "Gavel: heterogeneity-aware rounds maximising total throughput (an LP)",
         [](const policy_options& o) { return detail::make_gavel(o, gavel_policy::max_sum_throughput); }},
        {"sia", true, true, "Sia: goodput-optimal rounds over GPU types and counts (an ILP)",
         [](const policy_options& o) -> any_scheduler { return sia_scheduler{o.sia}; }},
        {"gavel-las", false, true, "Gavel's LAS policy: max-min fairness of normalised throughput",
         [](const policy_options& o) { return detail::make_gavel(o, gavel_policy::las); }},
#endif
        {"rubick", false, false, "Rubick-like: re-plans running jobs' layout and size on their GPU type, paying each move",
         [](const policy_options& o) -> any_scheduler { return rubick_scheduler{o.rubick}; }},
    };
    return entries;
}

/// The entry called `name`, or null.
inline const policy_entry* find_policy(std::string_view name) { return find_named(policy_registry(), name); }

/// Names of the policies `--policy all` runs in this build, HAS first.
inline std::vector<std::string> policy_names() {
    std::vector<std::string> n;
    for (const auto& e : policy_registry())
        if (e.in_all) n.emplace_back(e.name);
    return n;
}

/// Every name the registry knows in this build: policy_names(), then those run only when named.
inline std::vector<std::string> selectable_policy_names() {
    auto n = policy_names();
    for (const auto& e : policy_registry())
        if (!e.in_all) n.emplace_back(e.name);
    return n;
}

/// A known name (selectable_policy_names()) -> it; anything else: config_error naming `field`, the value, the
/// known names (with " | all" when `with_all`) and the closest of them.
inline std::string checked_policy_name(std::string_view name, std::string_view field = "policy", bool with_all = true) {
    const auto all = selectable_policy_names();
    for (const auto& n : all)
        if (n == name) return n;
    throw not_one_of(field, name, all, with_all ? std::vector<std::string>{"all"} : std::vector<std::string>{});
}

/// "all" -> every policy_names(); a known name -> just it; anything else: checked_policy_name's error.
inline std::vector<std::string> select_policies(std::string_view name, std::string_view field = "policy") {
    if (name == "all") return policy_names();
    return {checked_policy_name(name, field)};
}

/// The scheduler called `name` (one of selectable_policy_names()), built with `o`.
inline any_scheduler make_scheduler(std::string_view name, const policy_options& o = {}) {
    if (const auto* e = find_policy(name)) return e->make(o);
    (void)select_policies(name);  // throws, naming the known policies and the closest
    throw config_error("policy=\"all\" names every policy: build them one by one (policy_names())");
}

/// --help text of a --policy option: the choices (with "all" when `with_all`), the default, and one line per policy.
inline std::string policy_help(bool with_all, std::string_view default_name = "has") {
    std::string s;
    for (const auto& n : selectable_policy_names()) s += n + " | ";
    if (with_all) {
        s += "all (default " + std::string(default_name) + "; all runs";
        for (const auto& n : policy_names()) s += " " + n;
        s += ')';
    } else {
        s.resize(s.size() - 3);
        s += " (default " + std::string(default_name) + ")";
    }
    for (const auto& e : policy_registry())
        s += "\n  " + std::string(e.name) + ": " + std::string(e.description) + (with_all && !e.in_all ? " (not in all)" : "");
    return s;
}

}  // namespace frenzy
