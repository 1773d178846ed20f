#pragma once
// One mechanism for enum <-> string: each enum specialises enum_names<E> with a table of (value, name).
#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "frenzy/core/error.hpp"

namespace frenzy {

/// Specialise with `static constexpr std::array<std::pair<E, std::string_view>, N> table`.
template <class E>
struct enum_names;

template <class E>
constexpr std::string_view to_string(E v)
    requires requires { enum_names<E>::table; }
{
    for (const auto& [e, n] : enum_names<E>::table)
        if (e == v) return n;
    return "?";
}

/// Parses `text` as an E; the error names `field`, the bad value and the allowed values.
template <class E>
E parse_enum(std::string_view field, std::string_view text) {
    for (const auto& [e, n] : enum_names<E>::table)
        if (n == text) return e;
    std::string allowed;
    for (const auto& [e, n] : enum_names<E>::table) {
        if (!allowed.empty()) allowed += " | ";
        allowed += n;
    }
    throw config_error(std::string(field) + "=\"" + std::string(text) + "\" is not one of: " + allowed);
}

}  // namespace frenzy
