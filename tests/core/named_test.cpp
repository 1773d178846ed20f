// Things found by name (core/named.hpp): the one lookup, list of names and "is not one of" error that the
// framework and launcher catalogs and the policy registry share.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "frenzy/core/named.hpp"

namespace {
struct named_entry {  // an entry with a `name` field, as the policy registry's
    std::string name;
    int value;
};
struct named_handle {  // a handle with `name()`, as framework and launcher
    std::string n;
    std::string_view name() const { return n; }
};
}  // namespace

TEST_CASE("named: find by name, list the names, the unknown-name error names the field and suggests") {
    const std::vector<named_entry> all{{"has", 1}, {"fcfs", 2}, {"tiresias", 3}};
    REQUIRE(frenzy::find_named(all, "fcfs") != nullptr);
    CHECK(frenzy::find_named(all, "fcfs")->value == 2);
    CHECK(frenzy::find_named(all, "FCFS") == nullptr);  // names are exact
    CHECK(frenzy::find_named(all, "") == nullptr);
    CHECK(frenzy::join_names(frenzy::entry_names(all)) == "has | fcfs | tiresias");
    CHECK(frenzy::join_names(frenzy::entry_names(all), ", ") == "has, fcfs, tiresias");

    const std::string m = frenzy::not_one_of("--policy", "tiresas", frenzy::entry_names(all), {"all"}).what();
    CHECK(m == "--policy=\"tiresas\" is not one of: has | fcfs | tiresias | all (did you mean \"tiresias\"?)");
    // A value far from every name gets no suggestion; an unprintable one is shown escaped, not raw.
    CHECK(std::string(frenzy::not_one_of("f", "zzzzzzzz", {"has"}).what()) == "f=\"zzzzzzzz\" is not one of: has");
    CHECK(std::string(frenzy::not_one_of("f", "a\nb", {"has"}).what()).find('\n') == std::string::npos);

    const std::vector<named_handle> handles{{"megatron"}, {"fsdp"}};
    CHECK(frenzy::find_named(handles, "fsdp") == &handles[1]);
    CHECK_THROWS_WITH(frenzy::check_new_name(handles, "fsdp", "add_framework", "framework"),
                      "add_framework: a framework named \"fsdp\" exists");
    CHECK_THROWS_WITH(frenzy::check_new_name(handles, "", "add_framework", "framework"),
                      "add_framework: a framework needs a name");
    CHECK_NOTHROW(frenzy::check_new_name(handles, "toy", "add_framework", "framework"));
}
