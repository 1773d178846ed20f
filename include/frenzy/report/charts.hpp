#pragma once
// The reports of `frenzy report` and `--html`: a page (report/page.hpp) built from the `--json` document of
// `frenzy estimate`, `frenzy plan` or `frenzy simulate --runs` (docs/formats.md), with Vega-Lite charts
// (https://vega.github.io/vega-lite/, schema v6) whose data are the document's own figures. The specs are plain
// JSON: the Python module returns the same pages' specs for a notebook.
//
// Each chart's marks are named (estimate: memory, capacity, band, step; plan: plans, frontier; simulate: runs,
// queue, utilization, jct): Vega draws a named mark's group with the class NAME_marks, which the browser tests
// count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/core/checked.hpp"  // printable
#include "frenzy/core/error.hpp"
#include "frenzy/report/page.hpp"

namespace frenzy::report {

enum class report_kind { estimate, plan, simulate };

namespace detail {

inline constexpr const char* vega_lite_schema = "https://vega.github.io/schema/vega-lite/v6.json";
inline constexpr double gib = 1024.0 * 1024.0 * 1024.0;

inline std::string fixed(double v, int digits) {
    if (!std::isfinite(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}
/// config_error naming field `key` of a report's input and what it holds instead of `wanted` (issue 57: a report
/// checks every field it draws rather than draw a default).
[[noreturn]] inline void wrong_field(const char* key, const nlohmann::json& v, const char* wanted) {
    throw config_error(std::string("report: field \"") + key + "\" holds " + printable(v.dump(), 60) + ", not " + wanted);
}
/// A number field: `fallback` when absent or null (a non-finite figure is written as null); anything but a number
/// is an error naming the field.
inline double num(const nlohmann::json& j, const char* key, double fallback = 0) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (!it->is_number()) wrong_field(key, *it, "a number");
    return it->get<double>();
}
/// A whole-number field (a count, a degree, a stage): `fallback` when absent; the value when it is a JSON integer
/// within int64 or a float within +-2^53 (rounded); a number beyond that is a config_error naming the field, and
/// anything else a config_error naming the field. A report reads documents a person
/// may have edited: it never converts a number the type cannot hold (found by fuzz_report: 1.9e57 GPUs).
inline std::int64_t count(const nlohmann::json& j, const char* key, std::int64_t fallback = 0) {
    const auto it = j.find(key);
    if (it == j.end()) return fallback;
    if (it->is_number_float()) {
        const double v = it->get<double>();
        if (!(std::isfinite(v) && std::fabs(v) <= 9007199254740992.0))
            throw config_error(std::string("report: field \"") + key + "\" holds " + it->dump() + ", not a count");
        return static_cast<std::int64_t>(std::llround(v));
    }
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        throw config_error(std::string("report: field \"") + key + "\" holds " + it->dump() + ", not a count");
    if (!it->is_number_integer()) wrong_field(key, *it, "a count");
    return it->get<std::int64_t>();
}
/// A text field: `fallback` when absent or null; anything but a string is an error naming the field.
inline std::string text(const nlohmann::json& j, const char* key, std::string fallback = {}) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (!it->is_string()) wrong_field(key, *it, "a string");
    return it->get<std::string>();
}
/// The array field `key` of object `j`, each element an object (stages, plans, runs, ...): an error naming the
/// field when it is missing, not an array, or holds something else than objects.
inline const nlohmann::json& objects(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) throw config_error(std::string("report: the document has no field \"") + key + "\"");
    if (!it->is_array()) wrong_field(key, *it, "an array");
    for (const auto& e : *it)
        if (!e.is_object()) wrong_field(key, e, "an array of objects");
    return *it;
}
/// The object field `key` of `j` (the job, a plan's layout): an error naming the field otherwise.
inline const nlohmann::json& object(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) throw config_error(std::string("report: the document has no field \"") + key + "\"");
    if (!it->is_object()) wrong_field(key, *it, "an object");
    return *it;
}
inline bool has_number(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number();
}
/// A duration for a person: seconds, minutes, hours or days.
inline std::string duration_text(double s) {
    if (!std::isfinite(s) || s < 0) return "-";
    if (s < 120) return fixed(s, s < 10 ? 2 : 1) + " s";
    if (s < 7200) return fixed(s / 60, 1) + " min";
    if (s < 172800) return fixed(s / 3600, 1) + " h";
    return fixed(s / 86400, 1) + " days";
}
inline nlohmann::json base_spec(double width, double height) {
    return {{"$schema", vega_lite_schema}, {"width", width}, {"height", height}};
}

}  // namespace detail

/// What kind of `--json` document `doc` is; config_error when it is none of them.
inline report_kind kind_of(const nlohmann::json& doc) {
    if (doc.is_object() && doc.contains("plans") && doc.contains("infeasible")) return report_kind::plan;
    if (doc.is_object() && doc.contains("stages") && doc.contains("job")) return report_kind::estimate;
    const auto is_sim = [](const nlohmann::json& p) { return p.is_object() && p.contains("policy") && p.contains("avg_jct_s"); };
    if (is_sim(doc) || (doc.is_array() && !doc.empty() && std::all_of(doc.begin(), doc.end(), is_sim)))
        return report_kind::simulate;
    throw config_error("report: the input is not the --json output of frenzy estimate, plan or simulate (an estimate "
                       "has 'job' and 'stages', a plan 'plans' and 'infeasible', a simulation 'policy' and 'avg_jct_s')");
}

// ---- estimate ---------------------------------------------------------------------------------------------------

namespace detail {

/// Stacked bars of each stage's memory by kind, the usable memory as a rule, the uncertainty as a bar from the
/// reserved peak to peak x (1 + uncertainty).
inline nlohmann::json memory_chart(const nlohmann::json& e) {
    static constexpr std::pair<const char*, const char*> kinds[] = {
        {"weights_bytes", "weights"},         {"gradients_bytes", "gradients"}, {"optimizer_bytes", "optimizer states"},
        {"activations_bytes", "activations"}, {"temporary_bytes", "temporaries"}};
    const double u = num(e, "uncertainty");
    nlohmann::json values = nlohmann::json::array(), band = nlohmann::json::array();
    for (const auto& st : objects(e, "stages")) {
        const std::string stage = "stage " + std::to_string(detail::count(st, "stage", 0));
        int order = 0;
        for (const auto& [key, label] : kinds)
            values.push_back({{"stage", stage}, {"kind", label}, {"order", order++}, {"GiB", num(st, key) / gib}});
        const double alloc = num(st, "peak_allocated_bytes");
        const double reserved = std::max(alloc, num(st, "peak_reserved_bytes", alloc));
        values.push_back({{"stage", stage}, {"kind", "allocator reserve"}, {"order", order}, {"GiB", (reserved - alloc) / gib}});
        band.push_back({{"stage", stage}, {"low", reserved / gib}, {"high", reserved * (1 + u) / gib}});
    }
    auto spec = base_spec(std::max(240.0, 90.0 * static_cast<double>(objects(e, "stages").size())), 320);
    nlohmann::json layers = nlohmann::json::array();
    layers.push_back({{"name", "memory"},
                      {"data", {{"values", values}}},
                      {"mark", "bar"},
                      {"encoding",
                       {{"x", {{"field", "stage"}, {"type", "nominal"}, {"title", "pipeline stage"}, {"sort", nullptr}}},
                        {"y", {{"field", "GiB"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "GiB per GPU"}}},
                        {"color", {{"field", "kind"}, {"type", "nominal"}, {"sort", nullptr}, {"title", "memory"}}},
                        {"order", {{"field", "order"}}},
                        {"tooltip", {{{"field", "stage"}}, {{"field", "kind"}}, {{"field", "GiB"}, {"format", ".2f"}}}}}}});
    layers.push_back({{"name", "band"},
                      {"data", {{"values", band}}},
                      {"mark", {{"type", "rule"}, {"strokeWidth", 3}, {"color", "#333"}}},
                      {"encoding",
                       {{"x", {{"field", "stage"}, {"type", "nominal"}, {"sort", nullptr}}},
                        {"y", {{"field", "low"}, {"type", "quantitative"}}},
                        {"y2", {{"field", "high"}}},
                        {"tooltip", {{{"field", "low"}, {"format", ".2f"}, {"title", "reserved peak, GiB"}},
                                     {{"field", "high"}, {"format", ".2f"}, {"title", "with the uncertainty, GiB"}}}}}}});
    if (has_number(e, "capacity_bytes")) {
        const double cap = num(e, "capacity_bytes") / gib;
        layers.push_back({{"name", "capacity"},
                          {"data", {{"values", {{{"capacity", cap}, {"label", "usable memory " + fixed(cap, 1) + " GiB"}}}}}},
                          {"mark", {{"type", "rule"}, {"color", "#c00"}, {"strokeDash", {6, 4}}, {"strokeWidth", 2}}},
                          {"encoding", {{"y", {{"field", "capacity"}, {"type", "quantitative"}}},
                                        {"tooltip", {{{"field", "label"}}}}}}});
    }
    spec["layer"] = std::move(layers);
    return spec;
}

/// Horizontal bars of the step's shares (estimate's step_parts), largest first.
inline nlohmann::json step_chart(const nlohmann::json& e) {
    nlohmann::json values = nlohmann::json::array();
    const double total = num(e, "step_time_s");
    for (const auto& p : objects(e, "step_parts"))
        values.push_back({{"part", p.value("part", "")}, {"seconds", num(p, "seconds")},
                          {"share", total > 0 ? num(p, "seconds") / total : 0.0}});
    auto spec = base_spec(560, std::max(60.0, 24.0 * static_cast<double>(values.size())));
    spec["name"] = "step";
    spec["data"] = {{"values", values}};
    spec["mark"] = "bar";
    spec["encoding"] = {{"y", {{"field", "part"}, {"type", "nominal"}, {"sort", "-x"}, {"title", nullptr}}},
                        {"x", {{"field", "seconds"}, {"type", "quantitative"}, {"title", "seconds per optimizer step"}}},
                        {"tooltip", {{{"field", "part"}}, {{"field", "seconds"}, {"format", ".4f"}},
                                     {{"field", "share"}, {"format", ".1%"}}}}};
    return spec;
}

inline table stage_table(const nlohmann::json& e) {
    table t{{"stage", "parameters per GPU", "weights", "gradients", "optimizer", "activations", "temporaries",
             "allocated peak", "reserved peak"}, {}};
    for (const auto& st : objects(e, "stages")) {
        const auto g = [&](const char* key) { return fixed(num(st, key) / gib, 2) + " GiB"; };
        // none held at the peak (forward/backward before backward allocates them): "-", as the CLI prints
        const std::string grads = num(st, "gradients_bytes") > 0 ? g("gradients_bytes") : std::string("-");
        t.rows.push_back({std::to_string(detail::count(st, "stage", 0)), fixed(num(st, "parameters") / 1e9, 3) + " B",
                          g("weights_bytes"), grads, g("optimizer_bytes"), g("activations_bytes"),
                          g("temporary_bytes"), g("peak_allocated_bytes"),
                          has_number(st, "peak_reserved_bytes") ? g("peak_reserved_bytes") : std::string("-")});
    }
    return t;
}

inline std::string estimate_subtitle(const nlohmann::json& e) {
    std::string s = "parameters " + fixed(num(e, "parameters") / 1e9, 2) + " B; peak reserved " +
                    fixed(num(e, "peak_reserved_bytes") / gib, 2) + " GiB per GPU (uncertainty " +
                    fixed(100 * num(e, "uncertainty"), 0) + "%)";
    std::string verdict = e.contains("verdict") ? text(e, "verdict") : "";
    std::replace(verdict.begin(), verdict.end(), '_', ' ');  // prose: "does not fit", not the JSON value
    if (e.contains("verdict"))
        s += "; verdict: " + verdict + " (needs " + fixed(num(e, "required_bytes") / gib, 2) + " of " +
             fixed(num(e, "capacity_bytes") / gib, 2) + " GiB usable)";
    if (has_number(e, "step_time_s"))
        s += "; step " + duration_text(num(e, "step_time_s")) + ", MFU " + fixed(100 * num(e, "mfu"), 1) + "% (band +-" +
             fixed(100 * num(e, "rel_error_band"), 0) + "%)";
    return s;
}

}  // namespace detail

/// The page of a `frenzy estimate --json` document.
inline page estimate_page(const nlohmann::json& e) {
    page p;
    const std::string name = detail::text(detail::object(e, "job"), "name", "job");
    p.title = "Estimate: " + name + (e.contains("gpu") ? " on " + std::to_string(detail::count(e, "gpus", 0)) + " x " + detail::text(e, "gpu") : "");
    p.subtitle = detail::estimate_subtitle(e);
    p.source = e;
    p.sections.push_back({"Memory per GPU, by pipeline stage",
                          "Each bar is one GPU of a stage at its peak; the black bar runs from the reserved peak to "
                          "it plus the uncertainty; the dashed line is the GPU's usable memory (1 - margin). A "
                          "gradient of \"-\": none on the GPU at that stage's peak (it comes before backward allocates "
                          "them, or they are offloaded, or the stage trains none); the optimizer step, which holds "
                          "them, peaks lower.",
                          "memory", detail::memory_chart(e), detail::stage_table(e)});
    if (e.contains("step_parts"))
        p.sections.push_back({"Where a step's time goes",
                              "One optimizer step on the bottleneck stage: compute by kernel class, the communication "
                              "left exposed, the pipeline bubble and the optimizer pass (they add up to the step time).",
                              "step", detail::step_chart(e), {}});
    return p;
}

// ---- plan -------------------------------------------------------------------------------------------------------

namespace detail {

/// Which figures a plan chart shows: time to the token budget against cost (or GPU-hours) when the plans have
/// them, else step time against GPUs.
struct plan_axes {
    const char* x_key;
    const char* x_title;
    double x_scale;
    const char* y_key;
    const char* y_title;
    const char* section;  ///< the chart's heading: what it plots, never "cost" without prices
};
inline plan_axes axes_of(const nlohmann::json& plans) {
    const auto all = [&](const char* key) {
        return !plans.empty() && std::all_of(plans.begin(), plans.end(), [&](const nlohmann::json& p) { return has_number(p, key); });
    };
    if (!all("est_time_s")) return {"step_time_s", "step time (s)", 1.0, "gpus", "GPUs", "Step time against GPUs"};
    if (all("cost"))
        return {"est_time_s", "time to the token budget (hours)", 1.0 / 3600, "cost", "cost (USD)", "Time against cost"};
    return {"est_time_s", "time to the token budget (hours)", 1.0 / 3600, "gpu_hours", "GPU-hours", "Time against GPU-hours"};
}

/// Indices of the plans no other plan beats on both axes (lower is better on each), by increasing x.
inline std::vector<std::size_t> frontier(const std::vector<std::pair<double, double>>& xy) {
    std::vector<std::size_t> idx(xy.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        return xy[a].first != xy[b].first ? xy[a].first < xy[b].first : xy[a].second < xy[b].second;
    });
    std::vector<std::size_t> out;
    double best = std::numeric_limits<double>::infinity();
    for (auto i : idx)
        if (xy[i].second < best) {
            out.push_back(i);
            best = xy[i].second;
        }
    return out;
}

inline std::string layout_text(const nlohmann::json& plan) {
    const auto& q = object(plan, "parallel");
    std::string s = "dp" + std::to_string(detail::count(q, "dp", 1)) + " tp" + std::to_string(detail::count(q, "tp", 1)) + " pp" +
                    std::to_string(detail::count(q, "pp", 1));
    if (detail::count(q, "cp", 1) > 1) s += " cp" + std::to_string(detail::count(q, "cp", 1));
    if (detail::count(q, "ep", 1) > 1) s += " ep" + std::to_string(detail::count(q, "ep", 1));
    if (detail::count(q, "vpp", 1) > 1) s += " vpp" + std::to_string(detail::count(q, "vpp", 1));
    return s + ", mb " + std::to_string(detail::count(plan, "micro_batch", 1)) + ", " + q.value("sharding", std::string("none")) +
           " sharding, " + q.value("recompute", std::string("none")) + " recompute";
}

inline nlohmann::json plan_chart(const nlohmann::json& plans, const plan_axes& ax) {
    std::vector<std::pair<double, double>> xy;
    for (const auto& p : plans) xy.emplace_back(num(p, ax.x_key) * ax.x_scale, num(p, ax.y_key));
    const auto front = frontier(xy);
    const std::set<std::size_t> on(front.begin(), front.end());
    nlohmann::json values = nlohmann::json::array(), line = nlohmann::json::array();
    for (std::size_t i = 0; i < plans.size(); ++i) {
        const auto& p = plans[i];
        values.push_back({{"rank", i + 1}, {"gpu", text(p, "gpu")}, {"gpus", detail::count(p, "gpus", 0)}, {"x", xy[i].first},
                          {"y", xy[i].second}, {"frontier", on.count(i) ? "on the frontier" : "dominated"},
                          {"layout", layout_text(p)}, {"framework", text(p, "framework")}});
    }
    for (auto i : front) line.push_back({{"x", xy[i].first}, {"y", xy[i].second}});
    auto spec = base_spec(640, 380);
    const nlohmann::json x = {{"field", "x"}, {"type", "quantitative"}, {"title", ax.x_title}, {"scale", {{"zero", false}}}};
    nlohmann::json y = {{"field", "y"}, {"type", "quantitative"}, {"title", ax.y_title}, {"scale", {{"zero", false}}}};
    if (std::string_view(ax.y_key) == "gpus") y["axis"] = {{"tickMinStep", 1}, {"format", "d"}};  // whole GPUs only
    spec["layer"] = nlohmann::json::array(
        {{{"name", "frontier"},
          {"data", {{"values", line}}},
          {"mark", {{"type", "line"}, {"color", "#888"}, {"strokeDash", {4, 3}}}},
          {"encoding", {{"x", x}, {"y", y}}}},
         {{"name", "plans"},
          {"data", {{"values", values}}},
          {"mark", {{"type", "point"}, {"filled", true}, {"size", 90}}},
          {"encoding",
           {{"x", x},
            {"y", y},
            {"color", {{"field", "gpu"}, {"type", "nominal"}, {"title", "GPU type"}}},
            {"shape", {{"field", "frontier"}, {"type", "nominal"}, {"title", nullptr}}},
            {"tooltip", {{{"field", "rank"}}, {{"field", "gpu"}}, {{"field", "gpus"}}, {{"field", "layout"}},
                         {{"field", "framework"}}, {{"field", "x"}, {"title", ax.x_title}, {"format", ".3~f"}},
                         {{"field", "y"}, {"title", ax.y_title}, {"format", ".3~f"}}}}}}}});
    return spec;
}

/// The CLI table's markers (examples/frenzy/cmd_plan.cpp): MFU with "!" above the best measured for its class
/// (perf/mfu_ceiling.hpp), the speed's error band, the precision with "*" when it is the type's alternative.
/// "^" when the plan's speed was capped at that ceiling, with the model's own (uncapped) figure beside it.
inline std::string mfu_text(const nlohmann::json& p) {
    const double m = num(p, "mfu"), ceiling = num(p, "mfu_ceiling");
    if (has_number(p, "uncapped_tokens_per_s") && num(p, "uncapped_tokens_per_s") > 0)
        return fixed(100 * m, 1) + "% ^ (capped at the best measured; the model's own speed " +
               fixed(num(p, "uncapped_tokens_per_s"), 0) + " tokens/s)";
    return fixed(100 * m, 1) + "%" + (ceiling > 0 && m > ceiling ? " ! (best measured " + fixed(100 * ceiling, 1) + "%)" : "");
}
inline std::string band_text(const nlohmann::json& p) {
    return has_number(p, "rel_error_band") && num(p, "rel_error_band") > 0 ? "±" + fixed(100 * num(p, "rel_error_band"), 0) + "%" : "-";
}

inline table plan_table(const nlohmann::json& plans) {
    table t{{"#", "GPU", "GPUs", "layout", "precision", "framework", "memory (required / usable)", "step", "tokens/s",
             "MFU", "speed band", "time to budget", "GPU-hours", "cost (USD)"}, {}};
    for (std::size_t i = 0; i < plans.size(); ++i) {
        const auto& p = plans[i];
        t.rows.push_back({std::to_string(i + 1), text(p, "gpu"), std::to_string(detail::count(p, "gpus", 0)), layout_text(p),
                          text(p, "precision") + (p.value("precision_alternative", false) ? " *" : ""), text(p, "framework"),
                          fixed(num(p, "required_bytes") / gib, 1) + " / " + fixed(num(p, "capacity_bytes") / gib, 1) + " GiB",
                          duration_text(num(p, "step_time_s")), fixed(num(p, "tokens_per_s"), 0), mfu_text(p), band_text(p),
                          has_number(p, "est_time_s") ? duration_text(num(p, "est_time_s")) : "-",
                          has_number(p, "gpu_hours") ? fixed(num(p, "gpu_hours"), 0) : "-",
                          has_number(p, "cost") ? fixed(num(p, "cost"), 2) : "-"});
    }
    return t;
}

/// `plan --mixed`: the pipelines over several GPU types, their stage groups in pipeline order.
inline table mixed_table(const nlohmann::json& mixed) {
    table t{{"#", "stage groups (pipeline order)", "GPUs", "layout", "step", "tokens/s", "MFU", "time to budget",
             "GPU-hours", "cost (USD)"}, {}};
    for (std::size_t i = 0; i < mixed.size(); ++i) {
        const auto& p = mixed[i];
        std::string groups;
        for (const auto& g : objects(p, "groups"))
            groups += (groups.empty() ? "" : " -> ") + std::to_string(count(g, "gpus", 0)) + " x " + text(g, "gpu") + " (" +
                      std::to_string(count(g, "stages", 0)) + " stages, " + std::to_string(count(g, "layers", 0)) + " layers)";
        t.rows.push_back({std::to_string(i + 1), groups, std::to_string(count(p, "gpus", 0)), layout_text(p),
                          duration_text(num(p, "step_time_s")), fixed(num(p, "tokens_per_s"), 0), mfu_text(p),
                          has_number(p, "est_time_s") ? duration_text(num(p, "est_time_s")) : "-",
                          has_number(p, "gpu_hours") ? fixed(num(p, "gpu_hours"), 0) : "-",
                          has_number(p, "cost") ? fixed(num(p, "cost"), 2) : "-"});
    }
    return t;
}

}  // namespace detail

/// The page of a `frenzy plan --json` document.
inline page plan_page(const nlohmann::json& doc) {
    const auto& plans = detail::objects(doc, "plans");
    const auto& infeasible = detail::objects(doc, "infeasible");
    page p;
    p.title = "Plans: " + std::to_string(plans.size()) + " feasible" +
              (infeasible.empty() ? std::string() : ", " + std::to_string(infeasible.size()) + " GPU types without one");
    p.subtitle = plans.empty() ? "No plan fits." : "Best by the objective: " + std::to_string(detail::count(plans[0], "gpus", 0)) +
                                                      " x " + detail::text(plans[0], "gpu") + ", " + detail::layout_text(plans[0]);
    p.source = doc;
    if (!plans.empty()) {
        const auto ax = detail::axes_of(plans);
        p.sections.push_back({ax.section,
                              std::string("Each point is a feasible plan, coloured by GPU type; the dashed line joins "
                                          "the plans that no other plan beats on both ") + ax.x_title + " and " +
                                  ax.y_title + " (the frontier). In the table, an MFU marked ! is above the best measured "
                                  "for its chip, precision and model size; ^ marks a speed, time and cost capped at it.",
                              "plans", detail::plan_chart(plans, ax), detail::plan_table(plans)});
    }
    if (doc.contains("mixed_plans") && !detail::objects(doc, "mixed_plans").empty())
        p.sections.push_back({"Pipelines over several GPU types",
                              "Plans whose pipeline stages run on different GPU types (plan --mixed; Megatron-LM), the layers "
                              "split by each type's speed and memory, best first by the same objective.",
                              {}, nullptr, detail::mixed_table(doc.at("mixed_plans"))});
    else if (!detail::text(doc, "mixed_note").empty())
        p.sections.push_back({"Pipelines over several GPU types", detail::text(doc, "mixed_note"), {}, nullptr, {}});
    if (!infeasible.empty()) {
        section s{"GPU types without a plan", "Why no layout of the job fits or runs on them.", {}, nullptr, {{"GPU", "reason"}, {}}};
        for (const auto& i : infeasible) s.table.rows.push_back({detail::text(i, "gpu"), detail::text(i, "reason")});
        p.sections.push_back(std::move(s));
    }
    return p;
}

// ---- simulate ---------------------------------------------------------------------------------------------------

namespace detail {

/// Hours from the first submission to the last event of any policy (run ends, timeline points, makespans): the one
/// x range of every timeline of a simulate page, so its charts line up (issue 55: each chart had its own range).
inline double time_range_h(const nlohmann::json& policies) {
    double end_s = 0;
    for (const auto& pol : policies) {
        end_s = std::max(end_s, num(pol, "makespan_s", 0));
        if (pol.contains("timeline"))
            for (const auto& pt : objects(pol, "timeline")) end_s = std::max(end_s, num(pt, "t_s"));
        if (pol.contains("job_runs"))
            for (const auto& j : objects(pol, "job_runs"))
                for (const auto& r : objects(j, "runs")) end_s = std::max({end_s, num(r, "start_s"), num(r, "end_s", 0)});
    }
    return end_s / 3600;
}

/// The time axis of a simulate page's timelines: hours since the first submission over [0, range_h] (none: its own).
inline nlohmann::json time_axis(const char* field, double range_h) {
    nlohmann::json x = {{"field", field}, {"type", "quantitative"}, {"title", "hours since the first submission"}};
    if (range_h > 0) x["scale"] = {{"domain", {0.0, range_h}}, {"nice", false}};
    return x;
}

/// Bars from each run's start to its end on its job's row, coloured by GPU type; x over [0, range_h] when given.
inline nlohmann::json gantt_chart(const nlohmann::json& policy, double range_h = 0) {
    nlohmann::json values = nlohmann::json::array();
    double horizon = 0;
    for (const auto& j : objects(policy, "job_runs"))
        for (const auto& r : objects(j, "runs")) horizon = std::max({horizon, num(r, "start_s"), num(r, "end_s")});
    for (const auto& j : objects(policy, "job_runs"))
        for (const auto& r : objects(j, "runs")) {
            const double end = num(r, "end_s", -1) >= 0 ? num(r, "end_s") : horizon;
            values.push_back({{"job", text(j, "job_id")}, {"model", text(j, "model")}, {"start_h", num(r, "start_s") / 3600},
                              {"end_h", end / 3600}, {"gpu", text(r, "gpu")}, {"gpus", detail::count(r, "gpus", 0)},
                              {"nodes", detail::count(r, "nodes", 0)}, {"ended", text(r, "ended")}});
        }
    std::set<std::string> rows;
    for (const auto& v : values) rows.insert(v.at("job").get<std::string>());
    auto spec = base_spec(760, std::clamp(12.0 * static_cast<double>(rows.size()), 80.0, 1600.0));
    spec["name"] = "runs";
    spec["data"] = {{"values", values}};
    spec["mark"] = {{"type", "bar"}, {"height", {{"band", 0.8}}}};
    spec["encoding"] = {
        {"y", {{"field", "job"}, {"type", "ordinal"}, {"sort", nullptr}, {"title", "job"},
               {"axis", {{"labels", rows.size() <= 60}, {"ticks", rows.size() <= 60}}}}},
        {"x", time_axis("start_h", range_h)},
        {"x2", {{"field", "end_h"}}},
        {"color", {{"field", "gpu"}, {"type", "nominal"}, {"title", "GPU type"}}},
        {"tooltip", {{{"field", "job"}}, {{"field", "model"}}, {{"field", "gpu"}}, {{"field", "gpus"}},
                     {{"field", "nodes"}}, {{"field", "start_h"}, {"format", ".2f"}}, {{"field", "end_h"}, {"format", ".2f"}},
                     {{"field", "ended"}}}}};
    return spec;
}

/// The queue and the GPU utilisation over time, one line each per policy (step lines: the state after each change).
inline nlohmann::json timeline_chart(const nlohmann::json& policies, const char* name, const char* title,
                                     double range_h = 0) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& pol : policies) {
        const double total = num(pol, "cluster_gpus");
        for (const auto& pt : objects(pol, "timeline")) {
            const double v = std::string(name) == "queue" ? num(pt, "queued") : (total > 0 ? num(pt, "busy_gpus") / total : 0.0);
            values.push_back({{"policy", text(pol, "policy")}, {"t_h", num(pt, "t_s") / 3600}, {"value", v}});
        }
    }
    auto spec = base_spec(760, 200);
    spec["name"] = name;
    spec["data"] = {{"values", values}};
    spec["mark"] = {{"type", "line"}, {"interpolate", "step-after"}};
    nlohmann::json y = {{"field", "value"}, {"type", "quantitative"}, {"title", title}};
    if (std::string(name) == "utilization") y["axis"] = {{"format", "%"}};
    spec["encoding"] = {{"x", time_axis("t_h", range_h)},
                        {"y", y},
                        {"color", {{"field", "policy"}, {"type", "nominal"}}}};
    return spec;
}

/// The distribution of completed jobs' completion times per policy, as cumulative shares.
inline nlohmann::json jct_chart(const nlohmann::json& policies) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& pol : policies)
        for (const auto& j : objects(pol, "job_runs"))
            if (text(j, "status") == "completed")
                values.push_back({{"policy", text(pol, "policy")}, {"jct_h", (num(j, "end_s") - num(j, "submit_s")) / 3600}});
    auto spec = base_spec(760, 260);
    spec["name"] = "jct";
    spec["data"] = {{"values", values}};
    spec["transform"] = {{{"sort", {{{"field", "jct_h"}}}}, {"groupby", {"policy"}},
                          {"window", {{{"op", "cume_dist"}, {"as", "share"}}}}}};
    spec["mark"] = {{"type", "line"}, {"interpolate", "step-after"}, {"point", true}};
    spec["encoding"] = {
        {"x", {{"field", "jct_h"}, {"type", "quantitative"}, {"title", "job completion time (hours)"}, {"scale", {{"type", "symlog"}}}}},
        {"y", {{"field", "share"}, {"type", "quantitative"}, {"title", "share of completed jobs"}, {"axis", {{"format", "%"}}}}},
        {"color", {{"field", "policy"}, {"type", "nominal"}}}};
    return spec;
}

inline table policy_table(const nlohmann::json& policies) {
    table t{{"policy", "jobs", "completed", "mean JCT", "median JCT", "p99 JCT", "mean queue", "makespan", "GPU utilisation"}, {}};
    for (const auto& p : policies)
        t.rows.push_back({text(p, "policy"), std::to_string(detail::count(p, "jobs", 0)), std::to_string(detail::count(p, "completed", 0)),
                          duration_text(num(p, "avg_jct_s")), duration_text(num(p, "p50_jct_s")),
                          duration_text(num(p, "p99_jct_s")), duration_text(num(p, "avg_queue_s")),
                          duration_text(num(p, "makespan_s")), fixed(100 * num(p, "gpu_utilization"), 1) + "%"});
    return t;
}

}  // namespace detail

/// The page of a `frenzy simulate --json --runs` document (one policy, or an array of them).
inline page simulate_page(const nlohmann::json& doc) {
    const nlohmann::json policies = doc.is_array() ? doc : nlohmann::json::array({doc});
    for (const auto& p : policies)
        if (!p.contains("job_runs") || !p.contains("timeline"))
            throw config_error("report: the simulation of policy '" + detail::text(p, "policy") +
                               "' has no runs; make it with `frenzy simulate --json --runs` (or --html)");
    page p;
    p.title = "Simulation: " + std::to_string(detail::count(policies[0], "jobs", 0)) + " jobs, " +
              std::to_string(policies.size()) + (policies.size() == 1 ? " policy" : " policies");
    p.subtitle = "Policies: ";
    for (std::size_t i = 0; i < policies.size(); ++i) p.subtitle += (i ? ", " : "") + detail::text(policies[i], "policy");
    p.source = doc;
    p.sections.push_back({"Summary", "", "", nullptr, detail::policy_table(policies)});
    const double range_h = detail::time_range_h(policies);  // one x range for every timeline below
    for (const auto& pol : policies)
        p.sections.push_back({"Jobs on GPUs over time: " + detail::text(pol, "policy"),
                              "One row per job that ran, one bar per run (start-up included), coloured by GPU type.",
                              "runs", detail::gantt_chart(pol, range_h), {}});
    p.sections.push_back({"Queue length over time", "Jobs waiting for GPUs.", "queue",
                          detail::timeline_chart(policies, "queue", "jobs waiting", range_h), {}});
    p.sections.push_back({"GPU utilisation over time", "GPUs held by runs over the cluster's GPUs.", "utilization",
                          detail::timeline_chart(policies, "utilization", "GPUs busy", range_h), {}});
    p.sections.push_back({"Job completion times", "Cumulative share of the completed jobs by completion time.", "jct",
                          detail::jct_chart(policies), {}});
    return p;
}

/// The page of any of the three documents.
inline page page_of(const nlohmann::json& doc) {
    switch (kind_of(doc)) {
        case report_kind::estimate: return estimate_page(doc);
        case report_kind::plan: return plan_page(doc);
        case report_kind::simulate: return simulate_page(doc);
    }
    throw config_error("report: unknown document");
}

}  // namespace frenzy::report
