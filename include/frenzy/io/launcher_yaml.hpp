#pragma once
// Helpers of the YAML configuration readers (frameworks/<name>/import.hpp): YAML 1.1 booleans, and the check that no
// key is given twice. Needs yaml-cpp (the frenzy::yaml CMake target, which defines FRENZY_HAS_YAML).
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"

namespace frenzy {

namespace detail {
/// Whether a YAML scalar is a boolean (YAML 1.1 words: true/false/yes/no/on/off, any case), and which.
inline std::optional<bool> yaml_bool(const YAML::Node& n) {
    bool b = false;
    if (YAML::convert<bool>::decode(n, b)) return b;
    return std::nullopt;
}

}  // namespace detail

/// A key given twice in one mapping is an error (yaml-cpp keeps both; Megatron's PyYAML loader keeps the last), in
/// the sections too: which value was meant is not Frenzy's to guess.
inline void check_yaml_keys(const YAML::Node& map, const std::string& section, std::size_t depth,
                            std::string_view what) {
    const std::string file(what);
    if (depth > bounds::json_depth)
        throw config_error(file + ": mappings nest deeper than " + std::to_string(bounds::json_depth));
    std::set<std::string> seen;
    for (const auto& kv : map) {
        if (!kv.first.IsScalar())
            throw config_error(file + ": a key that is not a name (line " + std::to_string(kv.first.Mark().line + 1) + ")");
        const auto key = kv.first.Scalar();
        const auto where = section.empty() ? key : section + "." + key;
        if (!seen.insert(key).second)
            throw config_error(file + ": " + where + " is given twice (line " +
                               std::to_string(kv.first.Mark().line + 1) + ")");
        if (kv.second.IsMap()) check_yaml_keys(kv.second, where, depth + 1, what);
    }
}

}  // namespace frenzy
