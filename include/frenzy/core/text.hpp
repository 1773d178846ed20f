#pragma once
// Small text utilities every layer and front end may use.
#include <cstddef>
#include <string>
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

/// `--flag value...` / `--flag=value` pairs of an argument list, in order. A flag's values are the words up to the
/// next word starting with "--" (none for a switch).
struct cli_argument {
    std::string flag;
    std::vector<std::string> values;
};

inline std::vector<cli_argument> split_arguments(const std::vector<std::string>& args, std::vector<std::string>* stray = nullptr) {
    std::vector<cli_argument> out;
    for (const auto& a : args) {
        if (a.rfind("--", 0) == 0 && a.size() > 2) {
            const auto eq = a.find('=');
            if (eq != std::string::npos) out.push_back({a.substr(0, eq), {a.substr(eq + 1)}});
            else out.push_back({a, {}});
        } else if (!out.empty()) {
            out.back().values.push_back(a);
        } else if (stray) {
            stray->push_back(a);
        }
    }
    return out;
}

}  // namespace frenzy
