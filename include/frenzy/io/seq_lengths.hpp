#pragma once
// `--seq-lengths FILE`: the token count of every sample of a dataset, or a histogram of them (plan/dataset_fit.hpp
// batches them). Two forms, told apart by the first character that is not blank:
//  - JSON Lines ('{' or a number on its own line): a number per line, or an object with the count under "tokens",
//    "length", "num_tokens" or "n_tokens" (or "input_ids": its length), and optionally "count" (a histogram bin);
//  - CSV: one column of counts, or two (length, count); a header row names them (tokens|length|num_tokens|
//    n_tokens|seq_len, and count).
// Errors name the file, the line and the field.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/io/csv.hpp"
#include "frenzy/io/file.hpp"
#include "frenzy/plan/dataset_fit.hpp"

namespace frenzy {

namespace detail {
inline constexpr int_bound sample_tokens{1, 1'000'000'000};
inline constexpr int_bound sample_count{0, 1'000'000'000};
inline constexpr std::string_view length_keys[] = {"tokens", "length", "num_tokens", "n_tokens", "seq_len"};

inline std::string at_line(const std::string& source, std::size_t line) { return source + ":" + std::to_string(line); }

/// One JSON Lines record: (length, count).
inline std::pair<std::int64_t, std::int64_t> seq_length_record(const nlohmann::json& v, const std::string& where) {
    const auto integer = [&](const nlohmann::json& x, const std::string& field, int_bound b) {
        if (!x.is_number_integer() && !x.is_number_unsigned())
            throw config_error(where + ": " + field + " must be an integer, not " + printable(x.dump(), 40));
        return check_bound(where + ": " + field, x.get<std::int64_t>(), b);
    };
    if (!v.is_object()) return {integer(v, "the token count", sample_tokens), 1};
    std::int64_t len = -1;
    for (const auto key : length_keys)
        if (v.contains(key)) len = integer(v.at(key), std::string(key), sample_tokens);
    if (len < 0 && v.contains("input_ids")) {
        if (!v.at("input_ids").is_array()) throw config_error(where + ": input_ids must be an array");
        len = check_bound(where + ": input_ids (its length)", static_cast<std::int64_t>(v.at("input_ids").size()),
                          sample_tokens);
    }
    if (len < 0) throw config_error(where + ": no token count (tokens, length, num_tokens, n_tokens or input_ids)");
    const std::int64_t count = v.contains("count") ? integer(v.at("count"), "count", sample_count) : 1;
    return {len, count};
}

inline length_histogram seq_lengths_jsonl(const std::string& text, const std::string& source) {
    length_histogram h;
    std::size_t line = 0, at = 0;
    while (at <= text.size()) {
        const auto end = std::min(text.find('\n', at), text.size());
        const auto row = trim(std::string_view(text).substr(at, end - at));
        ++line;
        at = end + 1;
        if (row.empty()) continue;
        const auto v = nlohmann::json::parse(row, nullptr, false);
        if (v.is_discarded()) throw config_error(at_line(source, line) + ": not a JSON value");
        h.bins.push_back(seq_length_record(v, at_line(source, line)));
    }
    return h;
}

inline length_histogram seq_lengths_csv(const std::string& text, const std::string& source) {
    std::istringstream in(text);
    std::vector<std::string> row;
    std::size_t line = 0;
    int len_col = 0, count_col = -1;
    bool first = true;
    length_histogram h;
    while (read_csv_record(in, row, line)) {
        if (row.size() == 1 && trim(row[0]).empty()) continue;
        if (first && !row.empty() && !std::isdigit(static_cast<unsigned char>(trim(row[0]).c_str()[0]))) {
            len_col = -1;  // a header: find the columns by name
            for (std::size_t i = 0; i < row.size(); ++i) {
                const auto name = lower(trim(row[i]));
                for (const auto key : length_keys) if (name == key) len_col = static_cast<int>(i);
                if (name == "count") count_col = static_cast<int>(i);
            }
            if (len_col < 0) throw config_error(at_line(source, line) + ": the header names no token-count column "
                                                "(tokens, length, num_tokens, n_tokens or seq_len)");
            first = false;
            continue;
        }
        if (first && row.size() >= 2) count_col = 1;  // no header: length, count
        first = false;
        const auto cell = [&](int c, const char* field) -> std::string {
            if (c >= static_cast<int>(row.size())) throw config_error(at_line(source, line) + ": no " + field + " column");
            return trim(row[static_cast<std::size_t>(c)]);
        };
        const auto len = parse_int64(cell(len_col, "token-count"), at_line(source, line) + ": token count", sample_tokens);
        const auto count = count_col < 0 ? 1 : parse_int64(cell(count_col, "count"), at_line(source, line) + ": count",
                                                           sample_count);
        h.bins.emplace_back(len, count);
    }
    return h;
}
}  // namespace detail

/// The lengths in `text` (the content of `source`), normalised: sorted, equal lengths merged.
inline length_histogram parse_seq_lengths(const std::string& text, const std::string& source) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) throw config_error(source + ": empty (no token counts)");
    const bool jsonl = text[first] == '{' || source.ends_with(".jsonl") || source.ends_with(".json");
    return normalized(jsonl ? detail::seq_lengths_jsonl(text, source) : detail::seq_lengths_csv(text, source), source);
}

/// `--seq-lengths FILE`.
inline length_histogram read_seq_lengths(const std::string& path) {
    return parse_seq_lengths(read_file_limited(path), printable(path, 200));
}

}  // namespace frenzy
