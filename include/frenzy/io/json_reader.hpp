#pragma once
// Strict reading of JSON objects: every field has a type, unknown fields are errors naming their path.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "frenzy/core/enum_names.hpp"
#include "frenzy/core/error.hpp"

namespace frenzy::detail {

/// Reads fields of one JSON object under a dotted path ("parallel", "model.moe"), then `finish()` rejects
/// fields nobody asked for.
class object_reader {
public:
    object_reader(const nlohmann::json& j, std::string path) : j_(j), path_(std::move(path)) {
        if (!j_.is_object()) throw config_error(path_ + " must be a JSON object");
    }
    bool has(const char* key) const { return j_.contains(key); }
    std::string field(const char* key) const { return path_.empty() ? std::string(key) : path_ + "." + key; }
    const nlohmann::json& raw(const char* key) { seen_.insert(key); return j_.at(key); }

    void get(const char* key, std::int64_t& out) {
        if (!take(key)) return;
        const auto& v = j_.at(key);
        if (v.is_number_integer()) { out = v.get<std::int64_t>(); return; }
        if (v.is_number_float()) {
            const double d = v.get<double>();
            if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) { out = static_cast<std::int64_t>(d); return; }
        }
        throw config_error(field(key) + "=" + v.dump() + " must be an integer");
    }
    void get(const char* key, int& out) {
        std::int64_t v = out;
        get(key, v);
        if (v < -2147483647 || v > 2147483647) throw config_error(field(key) + "=" + std::to_string(v) + " is out of range");
        out = static_cast<int>(v);
    }
    void get(const char* key, double& out) {
        if (!take(key)) return;
        const auto& v = j_.at(key);
        if (!v.is_number()) throw config_error(field(key) + "=" + v.dump() + " must be a number");
        out = v.get<double>();
        if (!std::isfinite(out)) throw config_error(field(key) + " must be finite");
    }
    void get(const char* key, bool& out) {
        if (!take(key)) return;
        const auto& v = j_.at(key);
        if (!v.is_boolean()) throw config_error(field(key) + "=" + v.dump() + " must be true or false");
        out = v.get<bool>();
    }
    void get(const char* key, std::string& out) {
        if (!take(key)) return;
        const auto& v = j_.at(key);
        if (!v.is_string()) throw config_error(field(key) + "=" + v.dump() + " must be a string");
        out = v.get<std::string>();
    }
    template <class E>
        requires std::is_enum_v<E>
    void get(const char* key, E& out) {
        if (!take(key)) return;
        const auto& v = j_.at(key);
        if (!v.is_string()) throw config_error(field(key) + "=" + v.dump() + " must be a string");
        out = parse_enum<E>(field(key), v.get<std::string>());
    }
    /// Throws for any field that was not read.
    void finish() const {
        for (auto it = j_.begin(); it != j_.end(); ++it)
            if (!seen_.contains(it.key())) throw config_error(field(it.key().c_str()) + " is not a known field");
    }

private:
    bool take(const char* key) {
        seen_.insert(key);
        return j_.contains(key) && !j_.at(key).is_null();
    }
    const nlohmann::json& j_;
    std::string path_;
    std::set<std::string> seen_;
};

/// Reads and parses a JSON file; errors name the file.
inline nlohmann::json read_json_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw io_error("cannot open " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        return nlohmann::json::parse(ss.str());
    } catch (const nlohmann::json::parse_error& e) {
        throw io_error(path + ": invalid JSON: " + e.what());
    }
}

}  // namespace frenzy::detail
