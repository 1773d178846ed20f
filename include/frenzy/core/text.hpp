#pragma once
// Small text utilities every layer and front end may use.
#include <cstddef>
#include <string_view>
#include <vector>

namespace frenzy {

/// The pieces of `s` between each `sep` ("a,,b" -> "a", "", "b"; "" -> one empty piece). The views point into `s`.
inline std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i)
        if (i == s.size() || s[i] == sep) {
            out.push_back(s.substr(start, i - start));
            start = i + 1;
        }
    return out;
}

}  // namespace frenzy
