#pragma once
// Things found by name: the framework and launcher catalogs (frameworks/registry.hpp, frameworks/launchers.hpp) and the
// scheduling-policy registry (sched/policy_registry.hpp) list entries; these are the one lookup, the one list of
// names and the one "is not one of" error they share.
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/suggest.hpp"

namespace frenzy {

/// An entry's name: a handle's `name()` (framework, launcher) or an entry's `name` field (policy_entry).
template <class T>
std::string_view entry_name(const T& x) {
    if constexpr (requires { x.name(); }) return x.name();
    else return x.name;
}

/// The entries' names, in the container's order.
template <class Range>
std::vector<std::string> entry_names(const Range& all) {
    std::vector<std::string> out;
    for (const auto& x : all) out.emplace_back(entry_name(x));
    return out;
}

/// Names joined by `sep` ("megatron | deepspeed | fsdp | ddp").
inline std::string join_names(const std::vector<std::string>& names, std::string_view sep = " | ") {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : std::string(sep)) + n;
    return out;
}

/// The entry called `name`, or null.
template <class Range>
auto find_named(const Range& all, std::string_view name) -> decltype(&*std::begin(all)) {
    for (const auto& x : all)
        if (entry_name(x) == name) return &x;
    return nullptr;
}

/// config_error `FIELD="VALUE" is not one of: A | B (did you mean "A"?)`: the one message for an unknown name.
/// `extra` names accepted beside the entries ("all") are listed and suggested too.
inline config_error not_one_of(std::string_view field, std::string_view value, std::vector<std::string> names,
                               const std::vector<std::string>& extra = {}) {
    names.insert(names.end(), extra.begin(), extra.end());
    return config_error(std::string(field) + "=\"" + printable(value) + "\" is not one of: " + join_names(names) +
                        did_you_mean(value, names));
}

/// config_error `CONTEXT: a WHAT named "NAME" exists` when `all` holds `name` already, or when it is empty.
template <class Range>
void check_new_name(const Range& all, std::string_view name, std::string_view context, std::string_view what) {
    if (name.empty()) throw config_error(std::string(context) + ": a " + std::string(what) + " needs a name");
    if (find_named(all, name))
        throw config_error(std::string(context) + ": a " + std::string(what) + " named \"" + std::string(name) + "\" exists");
}

}  // namespace frenzy
