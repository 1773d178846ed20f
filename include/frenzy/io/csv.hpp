#pragma once
// CSV reading shared by every table reader (RFC 4180: quoted fields, "" escapes, newlines inside quotes).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <istream>
#include <map>
#include <sstream>
#include <type_traits>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/io/file.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy::detail {

/// Splits one CSV line into fields.
inline std::vector<std::string> split_csv_line(std::string_view line) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                cur += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                cur += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.push_back(cur);
            cur.clear();
        } else if (c != '\r') {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

/// Reads one CSV record, which may span lines inside quotes; `line` counts newlines read. False at end of input.
inline bool read_csv_record(std::istream& in, std::vector<std::string>& out, std::size_t& line) {
    std::string record, part;
    bool any = false;
    std::size_t quotes = 0;
    while (std::getline(in, part)) {
        ++line;
        if (any) record += '\n';
        record += part;
        any = true;
        quotes += static_cast<std::size_t>(std::count(part.begin(), part.end(), '"'));
        if (quotes % 2 == 0) break;  // not inside a quoted field
    }
    if (!any) return false;
    if (quotes % 2 != 0) throw io_error("unterminated quoted field ending at line " + std::to_string(line));
    out = split_csv_line(record);
    return true;
}

/// Strips leading and trailing blanks and tabs.
inline std::string trim(std::string_view s);

/// The columns of a CSV table, by name. Built from the header record: names are trimmed, and an empty or repeated
/// name is an error (a repeated column would make one of the two silently ignored).
struct csv_columns {
    std::map<std::string, std::size_t> index;
    std::size_t width = 0;
    std::string source;

    bool has(const std::string& name) const { return index.contains(name); }
    /// Throws naming the first of `names` the header lacks.
    void require(std::initializer_list<const char*> names) const {
        for (const char* n : names)
            if (!has(n)) throw config_error(source + ": header: missing column \"" + std::string(n) + "\"");
    }
    /// Checks a data record has exactly one field per column: a short row (a lost cell) or a long one (a header
    /// missing a column) would shift every later column. `line` is the record's first line.
    void check_width(const std::vector<std::string>& row, std::size_t line) const {
        if (row.size() != width)
            throw config_error(source + ":" + std::to_string(line) + ": row has " + std::to_string(row.size()) +
                               " fields but the header has " + std::to_string(width) + " columns");
    }
    /// The cell of column `name` ("" when the table has no such column).
    const std::string& cell(const std::vector<std::string>& row, const std::string& name) const {
        static const std::string empty;
        const auto it = index.find(name);
        return it != index.end() && it->second < row.size() ? row[it->second] : empty;
    }
};

inline csv_columns csv_columns_from_header(const std::vector<std::string>& header, const std::string& source) {
    csv_columns c;
    c.source = printable(source, 200);
    c.width = header.size();
    for (std::size_t i = 0; i < header.size(); ++i) {
        const auto name = trim(header[i]);
        if (name.empty())
            throw config_error(c.source + ": header: column " + std::to_string(i + 1) + " has no name");
        if (!c.index.emplace(name, i).second)
            throw config_error(c.source + ": header: column \"" + printable(name) + "\" appears twice");
    }
    return c;
}


inline std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(" \t");
    return std::string(s.substr(b, e - b + 1));
}

inline std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

/// The decimal number at the start of `s` ("4096", "-1.5e3", ".5"; no blanks, no "inf"/"nan"/hex): its value and
/// length in `used`, or false when `s` does not start with one. A literal beyond a double's range (1e400) is a
/// config_error naming `field`. std::from_chars: no locale, no exception text, no silent infinity.
inline bool leading_number(std::string_view s, double& out, std::size_t& used, std::string_view field = "number") {
    std::size_t i = 0;
    if (i < s.size() && s[i] == '-') ++i;
    const std::size_t digits_at = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    bool any = i > digits_at;
    if (i < s.size() && s[i] == '.') {
        const std::size_t f = ++i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
        any = any || i > f;
    }
    if (!any) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {  // an exponent only when digits follow ("8e" stays "8")
        std::size_t k = i + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        const std::size_t e = k;
        while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
        if (k > e) i = k;
    }
    const auto r = std::from_chars(s.data(), s.data() + i, out, std::chars_format::general);
    if (r.ec == std::errc::result_out_of_range || (r.ec == std::errc{} && !std::isfinite(out)))
        throw field_error(field, s.substr(0, i), "is outside the range of a double");
    if (r.ec != std::errc{}) return false;
    used = static_cast<std::size_t>(r.ptr - s.data());
    return true;
}

/// Substring test (callers lower-case first when the match is case-insensitive).
inline bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

/// Sharding named in a measurement table's free text (docs/formats.md names, ZeRO stages, FSDP strategies, Megatron's
/// distributed optimizer).
inline sharding sharding_from_text(const std::string& text) {
    const auto t = lower(text);
    for (const auto& [e, n] : enum_names<sharding>::table)
        if (t == n) return e;
    if (contains(t, "full_shard") || contains(t, "full shard") || contains(t, "zero-3") || contains(t, "zero3"))
        return sharding::full;
    if (contains(t, "shard_grad_op") || contains(t, "zero-2")) return sharding::gradients;
    if (contains(t, "zero-1") || contains(t, "distributed optimizer")) return sharding::optimizer;
    if (t.empty() || contains(t, "none") || contains(t, "no_shard")) return sharding::none;
    throw config_error("sharding=\"" + printable(text) + "\" is not recognised");
}
/// Attention kernel named in a measurement table's free text: "unfused ..." (the s x s scores in memory),
/// "memory-efficient"/"xformers", a flash-style kernel ("flash", "fused", "cudnn", "sdpa (flash)"); empty or naming
/// no kernel (e.g. "TE"): "auto", the framework's kernel on the row's GPU (train/attention.hpp). `notes` may state
/// "unfused attention" where the kernel cell does not.
inline attention_impl attention_from_text(const std::string& text, const std::string& notes = {}) {
    const auto t = lower(text);
    if (contains(t, "unfused")) return attention_impl::unfused;
    if (contains(t, "memory-efficient") || contains(t, "mem_efficient") || contains(t, "xformers"))
        return attention_impl::memory_efficient;
    if (contains(t, "flash") || contains(t, "fused") || contains(t, "cudnn") || contains(t, "sdpa")) return attention_impl::flash;
    return contains(lower(notes), "unfused attention") ? attention_impl::unfused : attention_impl::automatic;
}
/// Recompute named in free text: "full ...", "selective ...", "none"/"no"/empty.
inline recompute recompute_from_text(const std::string& text) {
    const auto t = lower(text);
    if (t.rfind("full", 0) == 0) return recompute::full;
    if (t.rfind("selective", 0) == 0) return recompute::selective;
    if (t.empty() || t.rfind("none", 0) == 0 || t == "no") return recompute::none;
    throw config_error("recompute=\"" + printable(text) + "\" is not recognised");
}

}  // namespace frenzy::detail

namespace frenzy {

/// One CSV line's fields (detail::split_csv_line), each trimmed of surrounding blanks and tabs.
inline std::vector<std::string> split_csv_trimmed(std::string_view line) {
    auto out = detail::split_csv_line(line);
    for (auto& f : out) f = detail::trim(f);
    return out;
}

/// A CSV cell as a number of type T: the whole cell, decimal (std::from_chars: no sign '+', no blanks, no hex),
/// finite for floating types. Else config_error "WHERE: COLUMN=\"TEXT\" is not a number" (or "WHERE: COLUMN must be
/// finite"), `where` naming the file and line.
template <class T>
T csv_number(const std::string& text, const std::string& where, std::string_view column) {
    T v{};
    const char* b = text.data();
    const char* e = text.data() + text.size();
    std::from_chars_result r{};
    if constexpr (std::is_floating_point_v<T>)
        r = std::from_chars(b, e, v, std::chars_format::general);
    else
        r = std::from_chars(b, e, v);
    if (text.empty() || r.ec != std::errc{} || r.ptr != e)
        throw config_error(where + ": " + std::string(column) + "=\"" + text + "\" is not a number");
    if constexpr (std::is_floating_point_v<T>)
        if (!std::isfinite(v)) throw config_error(where + ": " + std::string(column) + " must be finite");
    return v;
}

/// The text CSV writers give a double: at most 15 significant digits, so that it reads back as written
/// ("5.5", "1e+09", "2048").
inline std::string csv_decimal(double v) {
    std::ostringstream o;
    o.precision(15);
    o << v;
    return o.str();
}

}  // namespace frenzy
