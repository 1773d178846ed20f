#pragma once
// "Did you mean": the closest known name to a mistyped one (Damerau-Levenshtein distance, as git and CLI11 hint).
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace frenzy {

/// Optimal-string-alignment distance between a and b (insert, delete, substitute, swap neighbours), ASCII
/// case-insensitive. Inputs longer than 256 characters are compared by their first 256 (bounded work).
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
    a = a.substr(0, std::min<std::size_t>(a.size(), 256));
    b = b.substr(0, std::min<std::size_t>(b.size(), 256));
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::size_t> d((n + 1) * (m + 1));
    auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * (m + 1) + j]; };
    for (std::size_t i = 0; i <= n; ++i) at(i, 0) = i;
    for (std::size_t j = 0; j <= m; ++j) at(0, j) = j;
    for (std::size_t i = 1; i <= n; ++i)
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
            at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
                at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
        }
    return at(n, m);
}

/// The known names closest to any of `spellings` (one name written several ways), best first: those within a third
/// of the spelling's length in edits (at least 2), a known name containing the spelling (an abbreviation of 3+
/// characters) counting as half an edit; only those within one edit of the best; at most `limit`. Of equal
/// distances, one to a later spelling ranks first.
inline std::vector<std::string> closest_names(std::initializer_list<std::string_view> spellings,
                                              const std::vector<std::string>& known, std::size_t limit = 3) {
    std::vector<std::pair<double, std::string>> scored;
    for (const auto& k : known) {
        double best = 1e9, tie = 0;  // equal distances favour the later spellings (the more normalised ones)
        for (const auto name : spellings) {
            const double budget = static_cast<double>(std::max<std::size_t>(2, name.size() / 3));
            double dist = static_cast<double>(edit_distance(name, k));
            if (name.size() >= 3 && k.find(name) != std::string::npos) dist = std::min(dist, 0.5);
            if (dist <= budget) best = std::min(best, dist - tie);
            tie += 0.01;
        }
        if (best < 1e9) scored.emplace_back(best, k);
    }
    std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<std::string> out;
    for (const auto& [dist, k] : scored)
        if (out.size() < limit && dist <= scored.front().first + 1.0) out.push_back(k);
    return out;
}

inline std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& known,
                                              std::size_t limit = 3) {
    return closest_names({name}, known, limit);
}

/// " (did you mean \"a\" or \"b\"?)" for the names closest to any of `spellings`, or "" when nothing is close.
inline std::string did_you_mean(std::initializer_list<std::string_view> spellings, const std::vector<std::string>& known) {
    const auto near = closest_names(spellings, known);
    if (near.empty()) return "";
    std::string s = " (did you mean ";
    for (std::size_t i = 0; i < near.size(); ++i)
        s += (i == 0 ? "\"" : (i + 1 == near.size() ? " or \"" : ", \"")) + near[i] + "\"";
    return s + "?)";
}

/// " (did you mean \"a\" or \"b\"?)" or "" when nothing is close.
inline std::string did_you_mean(std::string_view name, const std::vector<std::string>& known) {
    return did_you_mean({name}, known);
}

}  // namespace frenzy
