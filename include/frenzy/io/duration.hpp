#pragma once
// Durations as text -> seconds: the one reader of "90", "90s", "30m", "2h", "1.5d" (a bare number is seconds), used
// by the CLI's duration options (--startup, --repair, ...) and by `frenzy serve`'s limits.deadline.
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <system_error>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"

namespace frenzy {

/// The longest duration parse_duration accepts, in seconds (about 100 years).
inline constexpr double max_duration_s = bounds::duration.max;

/// Seconds in `text`: a decimal number (no hexadecimal, no spaces) with an optional unit s, m, h or d; finite,
/// >= 0 and at most max_duration_s. Throws config_error `FIELD="TEXT" ...` naming what is wrong: empty, not a
/// duration, negative or not finite, longer than 100 years.
inline double parse_duration(std::string_view text, std::string_view field) {
    const std::string t(text);
    auto bad = [&](const std::string& why) { return config_error(std::string(field) + "=\"" + t + "\" " + why); };
    if (t.empty()) throw bad("is empty: give a duration such as 30s, 10m, 2h or 1d");
    double unit = 1;
    std::string num = t;
    switch (t.back()) {
        case 's': unit = 1; num.pop_back(); break;
        case 'm': unit = 60; num.pop_back(); break;
        case 'h': unit = 3600; num.pop_back(); break;
        case 'd': unit = 86400; num.pop_back(); break;
        default: break;
    }
    double v = 0;  // decimal only: from_chars takes no hexadecimal ("0x10"), unlike stod
    const auto r = std::from_chars(num.data(), num.data() + num.size(), v, std::chars_format::general);
    if (num.empty() || r.ec == std::errc::invalid_argument || r.ptr != num.data() + num.size())
        throw bad("is not a duration (a number with an optional unit s, m, h or d)");
    if (r.ec != std::errc{} || !std::isfinite(v) || v < 0) throw bad("must be a finite, non-negative duration");
    if (v * unit > max_duration_s) throw bad("is longer than 100 years");
    return v * unit;
}

}  // namespace frenzy
