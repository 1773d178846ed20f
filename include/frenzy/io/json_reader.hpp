#pragma once
// Strict reading of JSON: documents are parsed with duplicate keys rejected and nesting bounded, every field has a
// type, integers are checked for overflow, floats for finiteness (core/checked.hpp), and unknown fields are errors
// naming their path. No nlohmann exception text reaches a user: errors name the file, the JSON path and the rule.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/enum_names.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/suggest.hpp"
#include "frenzy/io/file.hpp"

namespace frenzy {

/// Short, bounded, printable description of a JSON value for error messages: scalars as JSON text (strings cut
/// to 80 characters), containers by kind and size only. Never recursive, so a 10^5-deep array cannot overflow
/// the stack and an error never dumps megabytes.
inline std::string json_value_text(const nlohmann::json& v) {
    switch (v.type()) {
        case nlohmann::json::value_t::object: return "{...} (an object of " + std::to_string(v.size()) + " fields)";
        case nlohmann::json::value_t::array: return "[...] (an array of " + std::to_string(v.size()) + " elements)";
        case nlohmann::json::value_t::string: return "\"" + printable(v.get_ref<const std::string&>()) + "\"";
        case nlohmann::json::value_t::null: return "null";
        case nlohmann::json::value_t::boolean: return v.get<bool>() ? "true" : "false";
        case nlohmann::json::value_t::number_integer: return std::to_string(v.get<std::int64_t>());
        case nlohmann::json::value_t::number_unsigned: return std::to_string(v.get<std::uint64_t>());
        case nlohmann::json::value_t::number_float: return number_text(v.get<double>());
        default: return "a binary value";
    }
}

}  // namespace frenzy

namespace frenzy::detail {

/// Deepest nesting of arrays/objects a document may have (Frenzy's formats need 4; core/checked.hpp).
inline constexpr std::size_t max_json_depth = bounds::json_depth;
/// Largest JSON file read (a job, cluster, HF config or calibration file is a few KiB; core/checked.hpp).
inline constexpr std::uint64_t max_json_bytes = bounds::json_bytes;

/// SAX handler of parse_json_text: builds the document with nlohmann's own DOM builder while tracking the JSON
/// path, rejecting duplicate keys and nesting deeper than max_json_depth. (nlohmann's parser_callback_t would do
/// the same checks but scans the parent container after every element: quadratic in an array's length.)
class strict_json_handler {
public:
    using json = nlohmann::json;
    strict_json_handler(json& out, std::string where) : dom_(out, true), where_(std::move(where)) {}

    bool null() { done(); return dom_.null(); }
    bool boolean(bool v) { done(); return dom_.boolean(v); }
    bool number_integer(json::number_integer_t v) { done(); return dom_.number_integer(v); }
    bool number_unsigned(json::number_unsigned_t v) { done(); return dom_.number_unsigned(v); }
    bool number_float(json::number_float_t v, const json::string_t& s) { done(); return dom_.number_float(v, s); }
    bool string(json::string_t& v) { done(); return dom_.string(v); }
    bool binary(json::binary_t& v) { done(); return dom_.binary(v); }
    bool start_object(std::size_t n) { push(true); return dom_.start_object(n); }
    bool start_array(std::size_t n) { push(false); return dom_.start_array(n); }
    bool end_object() { stack_.pop_back(); done(); return dom_.end_object(); }
    bool end_array() { stack_.pop_back(); done(); return dom_.end_array(); }
    bool key(json::string_t& k) {
        auto& f = stack_.back();
        f.key = k;
        f.has_key = true;
        if (!f.keys.insert(k).second)
            throw config_error(where_ + path() + " is given twice in the same object (duplicate key)");
        return dom_.key(k);
    }
    template <class Exception>
    bool parse_error(std::size_t byte, const std::string& token, const Exception& ex) {
        const auto p = path();
        if (ex.id == 406)  // out_of_range.406: a number literal beyond a double's range (1e400)
            throw field_error(where_ + (p.empty() ? std::string("a number") : p), token,
                              "is outside the range of a double (numbers must be finite)");
        throw io_error(where_ + "invalid JSON at " + position(byte) + (p.empty() ? std::string() : " (in " + p + ")") +
                       ": " + reason(ex.what()));
    }
    void set_text(std::string_view t) { text_ = t; }

private:
    struct frame {
        bool object = false;
        bool has_key = false;
        std::set<std::string> keys;
        std::string key;
        std::size_t index = 0;
    };
    void push(bool object) {
        if (stack_.size() >= max_json_depth) {
            const auto p = path();
            throw config_error(where_ + (p.empty() ? std::string("the document") : p) + " nests deeper than " +
                               std::to_string(max_json_depth) + " levels of arrays/objects");
        }
        frame f;
        f.object = object;
        stack_.push_back(std::move(f));
    }
    /// A value (scalar or container) ended: the enclosing array moves to its next index.
    void done() {
        if (!stack_.empty() && !stack_.back().object) ++stack_.back().index;
    }
    std::string path() const {
        std::string p;
        for (std::size_t i = 0; i < stack_.size(); ++i) {
            const auto& f = stack_[i];
            // appended piece by piece: `"[" + std::to_string(...)` trips GCC 12's -Wrestrict false positive
            if (f.object) {
                if (!f.has_key) continue;
                if (!p.empty()) p += '.';
                p += printable(f.key, 60);
            } else {
                p += '[';
                p += std::to_string(f.index);
                p += ']';
            }
        }
        return p;
    }
    std::string position(std::size_t byte) const {
        std::size_t line = 1, col = 1;
        const std::size_t at = byte == 0 ? 0 : std::min(byte - 1, text_.size());
        for (std::size_t i = 0; i < at; ++i) {
            if (text_[i] == '\n') { ++line; col = 1; }
            else ++col;
        }
        return "line " + std::to_string(line) + ", column " + std::to_string(col);
    }
    /// nlohmann's phrase without its exception id, position and "last read" (which may hold raw bytes).
    static std::string reason(std::string w) {
        if (const auto c = w.rfind("column "); c != std::string::npos)
            if (const auto d = w.find(": ", c); d != std::string::npos) w = w.substr(d + 2);
        if (const auto l = w.find("; last read"); l != std::string::npos) w = w.substr(0, l);
        return printable(w, 120);
    }
    nlohmann::detail::json_sax_dom_parser<json> dom_;
    std::string where_;
    std::string_view text_;
    std::vector<frame> stack_;
};

}  // namespace frenzy::detail

namespace frenzy {

/// Parses JSON text strictly: duplicate keys in one object and nesting deeper than max_json_depth are config_errors
/// naming the JSON path; syntax errors are io_errors naming line and column; numbers outside a double's range are
/// config_errors naming the field. `source` (a file name) prefixes every message. Linear in the text's length.
inline nlohmann::json parse_json_text(std::string_view text, const std::string& source) {
    nlohmann::json out;
    detail::strict_json_handler h(out, source.empty() ? std::string() : printable(source, 200) + ": ");
    h.set_text(text);
    nlohmann::json::sax_parse(text.begin(), text.end(), &h);
    return out;
}

/// Reads and parses a JSON file (regular files only, at most max_json_bytes); errors name the file.
inline nlohmann::json read_json_file(const std::string& path) {
    return parse_json_text(read_file_limited(path, detail::max_json_bytes), path);
}

}  // namespace frenzy

namespace frenzy::detail {

/// Reads fields of one JSON object under a dotted path ("parallel", "model.moe"), then `finish()` rejects
/// fields nobody asked for.
class object_reader {
public:
    object_reader(const nlohmann::json& j, std::string path) : j_(j), path_(std::move(path)) {
        if (!j_.is_object())
            throw field_error(path_.empty() ? std::string("the document") : path_, json_value_text(j_),
                              "must be a JSON object");
    }
    bool has(const char* key) const { return j_.contains(key); }
    std::string field(const char* key) const {
        const auto k = printable(key, 60);
        return path_.empty() ? k : path_ + "." + k;
    }
    const nlohmann::json& raw(const char* key) { seen_.insert(key); return j_.at(key); }
    /// A field that was renamed: its old name is an error that names the new one, so a file written for the old
    /// meaning is never read under either name silently. `why` says what changed.
    void renamed(const char* old_key, const char* new_key, std::string_view why) const {
        if (has(old_key)) throw config_error(field(old_key) + " was renamed " + new_key + " (" + std::string(why) + ")");
    }

    /// Integers: JSON integers inside int64, or floats holding an exact integer (1e3); anything else, including
    /// 18446744073709551615 and 1e19, is an error, never a wrapped or clamped value.
    void get(const char* key, std::int64_t& out) {
        if (!take(key)) return;
        out = integer(j_.at(key), field(key));
    }
    /// An array of integers (null or absent = empty), each read as above, at most `max_size` of them; errors name
    /// the element ("parallel.stage_layers[2]").
    void get(const char* key, std::vector<std::int64_t>& out, std::size_t max_size) {
        const auto* a = array(key, max_size);
        if (!a) return;
        out.clear();
        for (std::size_t i = 0; i < a->size(); ++i) out.push_back(integer((*a)[i], field(key) + "[" + std::to_string(i) + "]"));
    }
    void get(const char* key, int& out) {
        std::int64_t v = out;
        get(key, v);
        if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
            throw field_error(field(key), v, "is outside the 32-bit integer range");
        out = static_cast<int>(v);
    }
    void get(const char* key, double& out) {
        if (!take(key)) return;
        const auto& v = j_.at(key);
        if (!v.is_number()) throw field_error(field(key), json_value_text(v), "must be a number");
        out = check_finite(field(key), v.get<double>());
    }
    /// Bounded reads: the value must also lie in `b` (core/checked.hpp bounds).
    void get(const char* key, std::int64_t& out, int_bound b) {
        if (!take(key)) return;
        get(key, out);
        check_bound(field(key), out, b);
    }
    void get(const char* key, int& out, int_bound b) {
        if (!take(key)) return;
        get(key, out);
        check_bound(field(key), static_cast<std::int64_t>(out), b);
    }
    void get(const char* key, double& out, real_bound b) {
        if (!take(key)) return;
        get(key, out);
        check_bound(field(key), out, b);
    }
    void get(const char* key, bool& out) {
        if (!take(key)) return;
        const auto& v = j_.at(key);
        if (!v.is_boolean()) throw field_error(field(key), json_value_text(v), "must be true or false");
        out = v.get<bool>();
    }
    void get(const char* key, std::string& out) {
        if (!take(key)) return;
        const auto& v = j_.at(key);
        if (!v.is_string()) throw field_error(field(key), json_value_text(v), "must be a string");
        out = v.get<std::string>();
    }
    /// An enum, or a value found by name (framework, launcher: parse_enum<E> finds it in its catalog).
    template <class E>
        requires(std::is_enum_v<E> || requires(const E& e) { e.name(); })
    void get(const char* key, E& out) {
        if (!take(key)) return;
        const auto& v = j_.at(key);
        if (!v.is_string()) throw field_error(field(key), json_value_text(v), "must be a string");
        out = parse_enum<E>(field(key), printable(v.get_ref<const std::string&>()));
    }
    /// An array field (null or absent = empty) of at most `max_size` elements; the caller reads the elements.
    const nlohmann::json* array(const char* key, std::size_t max_size) {
        if (!take(key)) return nullptr;
        const auto& v = j_.at(key);
        if (!v.is_array()) throw field_error(field(key), json_value_text(v), "must be an array");
        if (v.size() > max_size)
            throw field_error(field(key), json_value_text(v), "has more than " + std::to_string(max_size) + " elements");
        return &v;
    }
    /// Throws for any field that was not read, naming the closest field this object has (a typo such as
    /// `globl_batch`).
    void finish() const {
        for (auto it = j_.begin(); it != j_.end(); ++it)
            if (!seen_.contains(it.key()))
                throw config_error(field(it.key().c_str()) + " is not a known field" +
                                   did_you_mean(it.key(), std::vector<std::string>(seen_.begin(), seen_.end())));
    }

private:
    static std::int64_t integer(const nlohmann::json& v, const std::string& name) {
        if (v.is_number_unsigned()) {
            const auto u = v.get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                throw field_error(name, std::to_string(u), "is outside the 64-bit integer range");
            return static_cast<std::int64_t>(u);
        }
        if (v.is_number_integer()) return v.get<std::int64_t>();
        if (v.is_number_float()) return integer_from_double(v.get<double>(), name, json_value_text(v));
        throw field_error(name, json_value_text(v), "must be an integer");
    }
    bool take(const char* key) {
        seen_.insert(key);
        return j_.contains(key) && !j_.at(key).is_null();
    }
    const nlohmann::json& j_;
    std::string path_;
    std::set<std::string> seen_;
};

}  // namespace frenzy::detail

namespace frenzy {

/// A value of a launcher's JSON configuration, checked: config_error naming `key` and the value when it is not an
/// integer in the 64-bit range, a string, an object or a boolean.
inline std::int64_t json_int(const nlohmann::json& v, const std::string& key) {
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > 9223372036854775807ull))
        throw config_error(key + "=" + json_value_text(v) + " must be an integer in the 64-bit range");  // no wrap to -1
    return v.get<std::int64_t>();
}
inline std::string json_str(const nlohmann::json& v, const std::string& key) {
    if (!v.is_string()) throw config_error(key + "=" + json_value_text(v) + " must be a string");
    return v.get<std::string>();
}
inline const nlohmann::json& json_obj(const nlohmann::json& v, const std::string& key) {
    if (!v.is_object()) throw config_error(key + "=" + json_value_text(v) + " must be an object");
    return v;
}
inline bool json_bool(const nlohmann::json& v, const std::string& key) {
    if (!v.is_boolean()) throw config_error(key + "=" + json_value_text(v) + " must be true or false");
    return v.get<bool>();
}

}  // namespace frenzy
