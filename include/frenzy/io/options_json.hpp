#pragma once
// The JSON codec of plan_options (docs/formats.md "Options"): the one reader of a planning call's options, behind
// Python's frenzy.plan / frenzy.launch keywords (python/src/module.cpp passes them through it) and anyone scripting
// the library with JSON; the keys are Python's keyword names. launch_options' codec is launch/launch_json.hpp (io/ is
// below launch/ in the include graph). The job's pinned layout fields (plan_options::constraints) come from the job
// spec, not from here.
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "frenzy/core/enum_names.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/hw/gpu.hpp"
#include "frenzy/io/prices.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/plan/options.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// The value checks of the options codecs (here and launch/launch_json.hpp), each naming the key in its error.
/// `v` as a bool, else config_error "KEY must be true or false".
inline bool option_bool(const nlohmann::json& v, std::string_view key) {
    if (!v.is_boolean()) throw config_error(std::string(key) + "=" + v.dump() + " must be true or false");
    return v.get<bool>();
}
/// `v` as a number (not a bool), else config_error "KEY=V must be a number".
inline double option_number(const nlohmann::json& v, std::string_view key) {
    if (!v.is_number()) throw config_error(std::string(key) + "=" + v.dump() + " must be a number");
    return v.get<double>();
}
/// `v` as a string, else config_error "KEY=V must be a string".
inline std::string option_string(const nlohmann::json& v, std::string_view key) {
    if (!v.is_string()) throw config_error(std::string(key) + "=" + v.dump() + " must be a string");
    return v.get<std::string>();
}

/// How a caller writes a value it passed, in the errors of the entries read one by one (prices, Slurm settings):
/// `at` names the entry (`prices["a100-80g"]`). Empty: JSON text. Python passes each entry's repr, the value as
/// the user wrote it.
using value_writer = std::function<std::string(const std::string& at, const nlohmann::json& v)>;
inline std::string value_text(const value_writer& w, const std::string& at, const nlohmann::json& v) {
    return w ? w(at, v) : v.dump();
}

namespace detail {

/// "prices": {type: USD per GPU-hour}, "example" (the built-in example prices) or null (none); every type in
/// `catalog`, every price checked by io/prices.hpp (the CLI's --price reader's rules).
inline price_table prices_from_json(const nlohmann::json& v, const gpu_catalog& catalog, const value_writer& w) {
    price_table out;
    if (v.is_null()) return out;
    if (v.is_string()) {
        if (v.get<std::string>() != example_prices_name)
            throw config_error("prices=\"" + v.get<std::string>() + "\" must be a dict {type: USD per GPU-hour} or \"example\"");
        add_example_prices(out);
        return out;
    }
    if (!v.is_object()) throw config_error("prices must be a dict {type: USD per GPU-hour} or \"example\", not " + v.dump());
    for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string entry = "prices[\"" + it.key() + "\"]";
        catalog.at(it.key(), "prices");
        if (!it.value().is_number() || it.value().is_boolean())
            throw config_error(entry + "=" + value_text(w, entry, it.value()) + " is not a number");
        add_price(out, catalog, it.key(), it.value().get<double>(), "prices", entry);
    }
    return out;
}

}  // namespace detail

/// Sets the plan_options field `key` names from `v` (prices against `catalog`); false where `key` is none of them:
/// what a reader of an object that holds plan options beside its own (launch options) calls.
inline bool set_plan_option(plan_options& o, const std::string& key, const nlohmann::json& v, const gpu_catalog& catalog,
                            const value_writer& w = {}) {
    if (key == "objective") o.objective = parse_enum<plan_objective>("objective", option_string(v, key));
    else if (key == "margin") {
        o.margin = option_number(v, key);
        validate_margin(o.margin);
    } else if (key == "max_gpus") {
        if (!v.is_number_integer()) throw config_error("max_gpus=" + v.dump() + " must be a whole number");
        o.max_gpus = v.get<std::int64_t>();
        if (o.max_gpus < 0) throw config_error("max_gpus=" + std::to_string(o.max_gpus) + " must not be negative");
    } else if (key == "prices") o.price_per_gpu_hour = detail::prices_from_json(v, catalog, w);
    else if (key == "frameworks") {
        if (!v.is_array()) throw config_error("frameworks=" + v.dump() + " must be a list of framework names");
        o.frameworks.clear();
        for (const auto& f : v) o.frameworks.push_back(parse_enum<framework>("frameworks", option_string(f, "frameworks[]")));
    } else if (key == "tp_across_nodes") o.allow_tp_across_nodes = option_bool(v, key);
    else if (key == "whole_nodes") o.whole_node_billing = option_bool(v, key);
    else if (key == "pin_precision") o.pin_precision = option_bool(v, key);
    else if (key == "framework_overlap") o.framework_overlap = option_bool(v, key);
    else if (key == "mixed") o.mixed = option_bool(v, key);
    else return false;
    return true;
}

/// The keys plan_options_from_json takes, for the unknown-key messages.
inline constexpr std::string_view plan_option_keys =
    "objective, margin, max_gpus, prices, frameworks, tp_across_nodes, whole_nodes, pin_precision, framework_overlap, mixed";

/// plan_options from a JSON object of Python's frenzy.plan keywords (docs/formats.md "Options"); omitted keys keep
/// their defaults, an unknown key or a bad value is a config_error that names it. Prices name types of `catalog`;
/// `w` writes the values of bad prices (value_writer).
inline plan_options plan_options_from_json(const nlohmann::json& j, const gpu_catalog& catalog = {},
                                           const value_writer& w = {}) {
    plan_options o;
    if (j.is_null()) return o;
    if (!j.is_object()) throw config_error("plan options must be an object");
    for (auto it = j.begin(); it != j.end(); ++it)
        if (!set_plan_option(o, it.key(), it.value(), catalog, w))
            throw config_error("plan option \"" + it.key() + "\" is not one of: " + std::string(plan_option_keys));
    return o;
}

/// plan_options -> the JSON plan_options_from_json reads back (every key; prices as {type: USD}).
inline void to_json(nlohmann::json& out, const plan_options& o) {
    nlohmann::json frameworks = nlohmann::json::array();
    for (const auto& f : o.frameworks) frameworks.push_back(std::string(to_string(f)));
    out = {{"objective", std::string(to_string(o.objective))},
           {"margin", o.margin},
           {"max_gpus", o.max_gpus},
           {"prices", nlohmann::json(o.price_per_gpu_hour)},
           {"frameworks", std::move(frameworks)},
           {"tp_across_nodes", o.allow_tp_across_nodes},
           {"whole_nodes", o.whole_node_billing},
           {"pin_precision", o.pin_precision},
           {"framework_overlap", o.framework_overlap},
           {"mixed", o.mixed}};
}
/// nlohmann's ADL reader: plan_options_from_json against the built-in catalog.
inline void from_json(const nlohmann::json& in, plan_options& o) { o = plan_options_from_json(in); }

}  // namespace frenzy
