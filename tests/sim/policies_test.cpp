// sched/policy_registry.hpp through sim/policies.hpp: the one mapping from policy names to schedulers (the CLI's
// --policy of simulate and serve, Python's policy=).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/sim/policies.hpp"

using namespace frenzy;

TEST_CASE("policies: the names this build has, HAS first, and 'all' selects every one") {
    std::vector<std::string> want{"has", "fcfs", "tiresias"};
#ifdef FRENZY_HAS_GLPK
    want.push_back("gavel");
    want.push_back("sia");
#endif
    CHECK(policy_names() == want);
    CHECK(select_policies("all") == want);
    CHECK(select_policies("tiresias") == std::vector<std::string>{"tiresias"});
}

TEST_CASE("policies: gavel-las is chosen by name only, so 'all' (and every published --policy all table) is unchanged") {
    auto want = policy_names();
#ifdef FRENZY_HAS_GLPK
    want.push_back("gavel-las");
    CHECK(select_policies("gavel-las") == std::vector<std::string>{"gavel-las"});
#endif
    want.push_back("rubick");  // also by name only (issue 56's baseline)
    CHECK(selectable_policy_names() == want);
    const auto all = select_policies("all");
    CHECK(std::find(all.begin(), all.end(), "gavel-las") == all.end());
    CHECK(std::find(all.begin(), all.end(), "rubick") == all.end());
}

TEST_CASE("policies: make_scheduler builds the scheduler of each name") {
    for (const auto& n : selectable_policy_names()) CHECK(make_scheduler(n).name() == n);
#ifdef FRENZY_HAS_GLPK
    // gavel-las takes gavel's knobs (its round length), only the LP differs
    policy_options o;
    o.gavel.round_s = 60;
    CHECK(make_scheduler("gavel-las", o).round_s() == 60);
    o.gavel.policy = gavel_policy::las;  // "gavel" is max-sum whatever the option says
    CHECK(make_scheduler("gavel", o).name() == std::string_view("gavel"));
#endif
}

TEST_CASE("policies: a mistyped name is an error naming the field, the value, the known names and the closest") {
    try {
        (void)select_policies("tiresas", "--policy");
        FAIL("no error");
    } catch (const config_error& e) {
        const std::string m = e.what();
        CHECK(m.find("--policy=\"tiresas\" is not one of: has | fcfs | tiresias") != std::string::npos);
        CHECK(m.find("did you mean \"tiresias\"") != std::string::npos);
    }
    CHECK_THROWS_AS(make_scheduler("hass"), config_error);
    CHECK_THROWS_AS(make_scheduler("all"), config_error);  // a selection, not one scheduler
}

TEST_CASE("policies: every policy is told the start-up and restart costs the simulator charges") {
    sim_options s;
    s.startup_s = 45;
    s.restart_s = 300;
    const policy_options o = policy_options_for(s);
    CHECK(o.has.startup_s == 45);
#ifdef FRENZY_HAS_GLPK
    CHECK(o.sia.ilp.restart_penalty_s == 300);
    CHECK(o.sia.startup_s == 45);
#endif
    // Knobs given by the caller are kept.
    policy_options mine;
    mine.has.preempt_factor = 3;
    mine.tiresias.promote_knob = 4;
    const auto kept = policy_options_for(s, mine);
    CHECK(kept.has.preempt_factor == 3);
    CHECK(kept.tiresias.promote_knob == 4);
}

TEST_CASE("policy registry: one entry per name, each builds its scheduler, describes itself, and says where it runs") {
    std::vector<std::string> seen, in_all;
    for (const auto& e : policy_registry()) {
        CHECK(std::find(seen.begin(), seen.end(), e.name) == seen.end());
        seen.emplace_back(e.name);
        if (e.in_all) in_all.emplace_back(e.name);
        CHECK_FALSE(e.description.empty());
        REQUIRE(e.make != nullptr);
        CHECK(e.make(policy_options{}).name() == e.name);
        CHECK(find_policy(e.name) == &e);
        CHECK(policy_help(true).find(std::string(e.name) + ": " + std::string(e.description)) != std::string::npos);
#ifndef FRENZY_HAS_GLPK
        CHECK_FALSE(e.needs_glpk);  // absent from a build without GLPK
#endif
    }
    CHECK(seen == selectable_policy_names());
    CHECK(in_all == policy_names());
    CHECK(find_policy("all") == nullptr);
    CHECK((find_policy("gavel") != nullptr) == (find_policy("sia") != nullptr));  // both need GLPK
    CHECK(policy_help(true).rfind("has | fcfs | tiresias", 0) == 0);
    CHECK(policy_help(false).find("| all") == std::string::npos);
}

TEST_CASE("policy registry: a host that has no 'all' (frenzy serve) names the choices without it") {
    CHECK(checked_policy_name("fcfs", "--policy", false) == "fcfs");
    try {
        (void)checked_policy_name("all", "--policy", false);
        FAIL("no error");
    } catch (const config_error& e) {
        const std::string m = e.what();
        CHECK(m.find("--policy=\"all\" is not one of: has | fcfs | tiresias") != std::string::npos);
        CHECK(m.find("| all") == std::string::npos);
    }
}

TEST_CASE("policy registry: HAS with priorities puts a higher-priority job first, and is HAS without them") {
    cluster_spec c;
    c.nodes = {{"n", "a100-80g", 1, 1, 0}};
    cluster_state cs(c);
    plan p;
    p.gpu = "a100-80g";
    p.gpus = 1;
    p.nodes = 1;
    p.tokens_per_s = 1000;
    p.has_budget = true;
    p.est_time = seconds{10};
    const std::vector<plan> plans{p};
    std::vector<job_view> jobs(2);
    for (int i = 0; i < 2; ++i) {
        jobs[static_cast<std::size_t>(i)].id = i + 1;
        jobs[static_cast<std::size_t>(i)].plans = &plans;
        jobs[static_cast<std::size_t>(i)].total_tokens = i == 0 ? 1e4 : 1e6;  // job 1 is the shorter
    }
    const sched_context ctx{0, &cs, jobs};
    auto plain = make_scheduler("has");
    auto d = plain.schedule(ctx);
    REQUIRE(d.start.size() == 1);
    CHECK(d.start[0].job == 1);  // shortest remaining first
    policy_options o;
    o.priority = [](int job) { return job == 2 ? 5 : 0; };
    auto prio = make_scheduler("has", o);
    CHECK(prio.name() == std::string_view("has"));
    d = prio.schedule(ctx);
    REQUIRE(d.start.size() == 1);
    CHECK(d.start[0].job == 2);  // the higher priority first
}
