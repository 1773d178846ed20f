// sim/policies.hpp: the one mapping from policy names to schedulers (the CLI's --policy, Python's policy=).
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
    CHECK(selectable_policy_names() == want);
    const auto all = select_policies("all");
    CHECK(std::find(all.begin(), all.end(), "gavel-las") == all.end());
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
