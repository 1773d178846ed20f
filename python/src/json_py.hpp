#pragma once
// Conversion between nlohmann::json and Python objects: the only translation the module does. Objects keep the
// key order of the C++ to_json (nlohmann::json sorts keys, ordered_json keeps insertion order).
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

#include "frenzy/core/error.hpp"

namespace frenzy_py {

namespace py = pybind11;

template <class Json>
py::object to_py(const Json& j) {
    switch (j.type()) {
        case nlohmann::json::value_t::null: return py::none();
        case nlohmann::json::value_t::boolean: return py::bool_(j.template get<bool>());
        case nlohmann::json::value_t::number_integer: return py::int_(j.template get<std::int64_t>());
        case nlohmann::json::value_t::number_unsigned: return py::int_(j.template get<std::uint64_t>());
        case nlohmann::json::value_t::number_float: {
            // nlohmann serialises a non-finite double as null: so does the CLI's --json.
            const double d = j.template get<double>();
            if (!std::isfinite(d)) return py::none();
            return py::float_(d);
        }
        case nlohmann::json::value_t::string: return py::str(j.template get_ref<const std::string&>());
        case nlohmann::json::value_t::array: {
            py::list l;
            for (const auto& e : j) l.append(to_py(e));
            return l;
        }
        case nlohmann::json::value_t::object: {
            py::dict d;
            for (auto it = j.begin(); it != j.end(); ++it) d[py::str(it.key())] = to_py(it.value());
            return d;
        }
        default: return py::none();  // binary and discarded values never come out of Frenzy's to_json
    }
}

/// A Python value shaped like JSON (dict with str keys, list/tuple, str, bool, int, float, None). `path` names
/// the place of a value that is none of these in the error.
inline nlohmann::json from_py(py::handle o, const std::string& path = "") {
    const auto here = [&](const std::string& k) { return path.empty() ? k : path + "." + k; };
    if (o.is_none()) return nullptr;
    if (py::isinstance<py::bool_>(o)) return o.cast<bool>();
    if (py::isinstance<py::int_>(o)) {
        try {
            return o.cast<std::int64_t>();
        } catch (const py::cast_error&) {
            throw frenzy::config_error((path.empty() ? std::string("value") : path) + "=" + py::str(o).cast<std::string>() +
                                       " is out of range");
        }
    }
    if (py::isinstance<py::float_>(o)) return o.cast<double>();
    if (py::isinstance<py::str>(o)) return o.cast<std::string>();
    if (py::isinstance<py::dict>(o)) {
        nlohmann::json j = nlohmann::json::object();
        for (auto kv : o.cast<py::dict>()) {
            if (!py::isinstance<py::str>(kv.first))
                throw frenzy::config_error((path.empty() ? std::string("the top level") : path) + ": key " +
                                           py::repr(kv.first).cast<std::string>() + " must be a string");
            const auto k = kv.first.cast<std::string>();
            j[k] = from_py(kv.second, here(k));
        }
        return j;
    }
    if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
        nlohmann::json j = nlohmann::json::array();
        std::size_t i = 0;
        for (auto e : o) {
            j.push_back(from_py(e, (path.empty() ? std::string("value") : path) + "[" + std::to_string(i) + "]"));
            ++i;
        }
        return j;
    }
    throw frenzy::config_error((path.empty() ? std::string("value") : path) + " has Python type " +
                               py::str(py::type::of(o).attr("__name__")).cast<std::string>() +
                               ", which is not JSON (dict, list, str, int, float, bool or None)");
}

}  // namespace frenzy_py
