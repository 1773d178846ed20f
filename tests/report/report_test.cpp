// HTML reports: what enters the page is escaped (no input can close a <script> element or add markup), the kind of
// a document is recognised, and the charts' data are the document's figures (hand-derived below). The rendering
// itself is checked in a real browser (tests/browser/check_reports.py).
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "frenzy/core/error.hpp"
#include "frenzy/report/charts.hpp"

using namespace frenzy;
using namespace frenzy::report;

namespace {
std::size_t count(const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}
constexpr double gib = 1024.0 * 1024.0 * 1024.0;

nlohmann::json two_stage_estimate() {
    return {{"job", {{"name", "</script><script>alert(1)</script>"}}},
            {"parameters", 8e9},
            {"peak_reserved_bytes", 60 * gib},
            {"uncertainty", 0.1},
            {"stages",
             {{{"stage", 0}, {"parameters", 4e9}, {"weights_bytes", 8 * gib}, {"gradients_bytes", 16 * gib},
               {"optimizer_bytes", 12 * gib}, {"activations_bytes", 20 * gib}, {"temporary_bytes", 1 * gib},
               {"peak_allocated_bytes", 57 * gib}, {"peak_reserved_bytes", 60 * gib}},
              {{"stage", 1}, {"parameters", 4e9}, {"weights_bytes", 8 * gib}, {"gradients_bytes", 16 * gib},
               {"optimizer_bytes", 12 * gib}, {"activations_bytes", 10 * gib}, {"temporary_bytes", 1 * gib},
               {"peak_allocated_bytes", 47 * gib}, {"peak_reserved_bytes", 50 * gib}}}},
            {"gpu", "h100-80g"},
            {"gpus", 16},
            {"verdict", "fits"},
            {"required_bytes", 66 * gib},
            {"capacity_bytes", 76 * gib},
            {"step_time_s", 2.0},
            {"mfu", 0.4},
            {"rel_error_band", 0.13},
            {"step_parts", {{{"part", "GEMMs"}, {"seconds", 1.5}}, {{"part", "pipeline bubble"}, {"seconds", 0.5}}}}};
}
}  // namespace

TEST_CASE("report: text, JSON and libraries enter the page escaped") {
    CHECK(html_escape("<a href=\"x\">&'</a>") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
    // JSON: '<', '>' and '&' as \u escapes, U+2028 too; the text still parses to the same value
    const nlohmann::json j = {{"name", "</script><!-- & \u2028"}};
    const std::string s = script_json(j);
    CHECK(s.find('<') == std::string::npos);
    CHECK(s.find('>') == std::string::npos);
    CHECK(s.find("\xe2\x80\xa8") == std::string::npos);
    CHECK(nlohmann::json::parse(s) == j);
    // a library's "</script" (any case) cannot close its element; other closing tags are left alone
    CHECK(inline_script("var a='</SCRIPT>'+'</div>';") == "var a='<\\/SCRIPT>'+'</div>';");
}

TEST_CASE("report: a page holds one element per script and none from its input") {
    const page p = estimate_page(two_stage_estimate());
    const std::string html = to_html(p, {"/*vega*/", "/*vega-lite*/", "/*vega-embed*/"});
    // the error watch, three libraries, the data, the drawing: six <script> elements, each closed once
    CHECK(count(html, "<script") == 6);
    CHECK(count(html, "</script>") == 6);
    CHECK(count(html, "<h1>Estimate: &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; on 16 x h100-80g</h1>") == 1);
    CHECK(count(html, "data-chart=\"memory\"") == 1);
    CHECK(count(html, "data-chart=\"step\"") == 1);
}

TEST_CASE("report: the kind of a document, and a clear error for anything else") {
    CHECK(kind_of(two_stage_estimate()) == report_kind::estimate);
    CHECK(kind_of({{"plans", nlohmann::json::array()}, {"infeasible", nlohmann::json::array()}}) == report_kind::plan);
    const nlohmann::json sim = {{"policy", "has"}, {"avg_jct_s", 1.0}};
    CHECK(kind_of(sim) == report_kind::simulate);
    CHECK(kind_of(nlohmann::json::array({sim, sim})) == report_kind::simulate);
    CHECK_THROWS_WITH(kind_of({{"nodes", 1}}), Catch::Contains("not the --json output of frenzy estimate, plan or simulate"));
    CHECK_THROWS_WITH(simulate_page(sim), Catch::Contains("has no runs; make it with `frenzy simulate --json --runs`"));
}

TEST_CASE("report: the memory chart's bars are the stages' figures, the band and the capacity the fit's") {
    const auto spec = detail::memory_chart(two_stage_estimate());
    const auto& bars = spec.at("layer")[0].at("data").at("values");
    REQUIRE(bars.size() == 12);  // 2 stages x (5 kinds + the allocator reserve)
    // stage 0: reserve = reserved 60 - allocated 57 = 3 GiB; stage 1: 50 - 47 = 3 GiB
    CHECK(bars[5].at("kind") == "allocator reserve");
    CHECK(bars[5].at("GiB").get<double>() == Approx(3.0));
    CHECK(bars[3].at("GiB").get<double>() == Approx(20.0));  // stage 0 activations
    const auto& band = spec.at("layer")[1].at("data").at("values");
    CHECK(band[0].at("low").get<double>() == Approx(60.0));
    CHECK(band[0].at("high").get<double>() == Approx(66.0));  // x (1 + 0.1)
    CHECK(band[1].at("high").get<double>() == Approx(55.0));
    CHECK(spec.at("layer")[2].at("data").at("values")[0].at("capacity").get<double>() == Approx(76.0));
}

TEST_CASE("report: a stage holding no gradient at its peak shows \"-\", and the verdict reads as prose (issue 55)") {
    auto e = two_stage_estimate();
    e["stages"][1]["gradients_bytes"] = 0.0;  // FSDP: the peak comes before backward allocates the gradients
    e["verdict"] = "does_not_fit";
    const auto t = detail::stage_table(e);
    CHECK(t.rows[0][3] == "16.00 GiB");
    CHECK(t.rows[1][3] == "-");
    CHECK(count(detail::estimate_subtitle(e), "verdict: does not fit (needs") == 1);
    CHECK(count(estimate_page(e).sections[0].text, "A gradient of \"-\"") == 1);
}

TEST_CASE("report: the plan frontier keeps the plans no other beats on both axes") {
    // (time, cost): (1, 9) (2, 5) (3, 6) (4, 2) (2, 7): the frontier is (1,9) (2,5) (4,2)
    const auto f = detail::frontier({{1, 9}, {2, 5}, {3, 6}, {4, 2}, {2, 7}});
    CHECK(f == std::vector<std::size_t>{0, 1, 3});
    // the axes: time to the budget against cost where every plan has both, GPU-hours without prices, step time
    // against GPUs without a token budget
    nlohmann::json costed = {{{"est_time_s", 3600.0}, {"cost", 10.0}, {"gpu_hours", 8.0}}};
    CHECK(std::string(detail::axes_of(costed).y_key) == "cost");
    costed[0].erase("cost");
    CHECK(std::string(detail::axes_of(costed).y_key) == "gpu_hours");
    nlohmann::json no_budget = {{{"step_time_s", 2.0}, {"gpus", 8}}};
    CHECK(std::string(detail::axes_of(no_budget).x_key) == "step_time_s");
    // issue 55: the heading says what is plotted ("Time against cost" titled GPU-hours and step time too), costs
    // carry their unit, and GPU counts tick in whole GPUs
    CHECK(std::string(detail::axes_of(no_budget).section) == "Step time against GPUs");
    CHECK(std::string(detail::axes_of(costed).section) == "Time against GPU-hours");
    costed[0]["cost"] = 10.0;
    CHECK(std::string(detail::axes_of(costed).section) == "Time against cost");
    CHECK(std::string(detail::axes_of(costed).y_title) == "cost (USD)");
    no_budget[0]["parallel"] = {{"dp", 8}};
    const auto spec = detail::plan_chart(no_budget, detail::axes_of(no_budget));
    CHECK(spec.at("layer")[1].at("encoding").at("y").at("axis").at("tickMinStep") == 1);
}

TEST_CASE("report: the plan table keeps the CLI's markers and plan --mixed's pipelines are shown (issue 55)") {
    const nlohmann::json plan = {{"gpu", "a100-80g"}, {"gpus", 8}, {"parallel", {{"dp", 8}}}, {"precision", "bf16-mixed"},
                                 {"precision_alternative", true}, {"mfu", 0.62}, {"mfu_ceiling", 0.55},
                                 {"rel_error_band", 0.12}, {"step_time_s", 1.0}, {"tokens_per_s", 1000.0}};
    const auto t = detail::plan_table(nlohmann::json::array({plan}));
    REQUIRE(t.rows.size() == 1);
    CHECK(t.rows[0][4] == "bf16-mixed *");                          // the type's alternative precision
    CHECK(t.rows[0][9] == "62.0% ! (best measured 55.0%)");         // above the measured ceiling
    CHECK(t.rows[0][10] == "\u00b112%");                            // its error band
    CHECK(t.header.back() == "cost (USD)");
    // a speed capped at the ceiling keeps the CLI's "^" and shows the model's own figure as such (issue 55)
    nlohmann::json capped = plan;
    capped["mfu"] = 0.55;
    capped["uncapped_tokens_per_s"] = 1127.0;
    CHECK(detail::plan_table(nlohmann::json::array({capped})).rows[0][9] ==
          "55.0% ^ (capped at the best measured; the model's own speed 1127 tokens/s)");
    nlohmann::json pipe = plan;
    pipe.erase("gpu");
    pipe["gpus"] = 12;
    pipe["groups"] = {{{"gpu", "a100-80g"}, {"gpus", 8}, {"stages", 2}, {"layers", 24}},
                      {{"gpu", "v100-32g"}, {"gpus", 4}, {"stages", 2}, {"layers", 8}}};
    const nlohmann::json doc = {{"plans", nlohmann::json::array({plan})}, {"infeasible", nlohmann::json::array()},
                                {"mixed_plans", nlohmann::json::array({pipe})}};
    const auto page = plan_page(doc);
    REQUIRE(page.sections.size() == 2);
    CHECK(page.sections[1].heading == "Pipelines over several GPU types");
    CHECK(page.sections[1].table.rows[0][1] ==
          "8 x a100-80g (2 stages, 24 layers) -> 4 x v100-32g (2 stages, 8 layers)");
}

TEST_CASE("report: every timeline of a simulate page spans the same hours (issue 55)") {
    // two policies: HAS ends at 2 h, FCFS's last run ends at 5 h and its queue's last point is at 4 h
    const auto policy = [](const char* name, double run_end_s, double last_t_s) {
        const nlohmann::json run = {{"start_s", 0.0}, {"end_s", run_end_s}, {"gpu", "a100-80g"}, {"gpus", 8}, {"nodes", 1}};
        return nlohmann::json{{"policy", name}, {"jobs", 1}, {"completed", 1}, {"cluster_gpus", 8},
                              {"makespan_s", run_end_s},
                              {"job_runs", {{{"job_id", "j0"}, {"model", "m"}, {"status", "completed"}, {"submit_s", 0.0},
                                             {"end_s", run_end_s}, {"runs", {run}}}}},
                              {"timeline", {{{"t_s", 0.0}, {"queued", 0}, {"busy_gpus", 8}},
                                            {{"t_s", last_t_s}, {"queued", 0}, {"busy_gpus", 0}}}}};
    };
    const nlohmann::json doc = nlohmann::json::array({policy("has", 7200.0, 7200.0), policy("fcfs", 18000.0, 14400.0)});
    CHECK(detail::time_range_h(doc) == Approx(5.0));
    const auto page = simulate_page(doc);
    int timelines = 0;
    for (const auto& s : page.sections) {
        if (s.chart.is_null() || !s.chart.contains("encoding") || s.chart_name == "jct") continue;
        const auto& x = s.chart.at("encoding").at("x");
        REQUIRE(x.contains("scale"));
        CHECK(x.at("scale").at("domain") == nlohmann::json::array({0.0, 5.0}));  // runs of both, queue, utilisation
        ++timelines;
    }
    CHECK(timelines == 4);
}

TEST_CASE("report: a whole-number field the document cannot hold is an error naming it, not a cast") {
    // the input fuzz_report found (minimised): a simulate document whose run holds 1.9e57 GPUs; converting it to an
    // integer is undefined behaviour (UBSan float-cast-overflow), so the read must refuse it by name
    const nlohmann::json run = {{"start_s", 0.0}, {"end_s", 3600.0}, {"gpu", "a100-80g"}, {"gpus", 1.9e57}, {"nodes", 1}};
    const nlohmann::json sim = {{"policy", "has"}, {"avg_jct_s", 1.0},
                                {"job_runs", {{{"job_id", "j0"}, {"model", "m"}, {"runs", {run}}}}}};
    CHECK_THROWS_WITH(detail::gantt_chart(sim), Catch::Contains("field \"gpus\" holds 1.9e+57, not a count"));
    // the edges: 2^53 as a float is still a count, one past int64 as an unsigned integer is not
    CHECK(detail::count({{"n", 9007199254740992.0}}, "n") == 9007199254740992LL);
    CHECK_THROWS_WITH(detail::count({{"n", 9223372036854775808ULL}}, "n"), Catch::Contains("field \"n\" holds 9223372036854775808"));
    CHECK(detail::count({{"n", 4.0}}, "n") == 4);
    CHECK(detail::count(nlohmann::json::object(), "n", 7) == 7);
    CHECK_THROWS_WITH(detail::count({{"n", "4"}}, "n"), "report: field \"n\" holds \"4\", not a count");
}

TEST_CASE("report: every field it draws is checked, and a bad one is named (issue 57)") {
    const auto e = two_stage_estimate();
    REQUIRE_NOTHROW(estimate_page(e));
    auto bad = e;
    bad["stages"] = "bogus";  // was drawn as one stage of zeros
    CHECK_THROWS_WITH(estimate_page(bad), "report: field \"stages\" holds \"bogus\", not an array");
    bad["stages"] = nlohmann::json::array({"x"});
    CHECK_THROWS_WITH(estimate_page(bad), "report: field \"stages\" holds \"x\", not an array of objects");
    bad = e;
    bad["stages"][1]["weights_bytes"] = "8";  // a number in quotes was drawn as 0
    CHECK_THROWS_WITH(estimate_page(bad), "report: field \"weights_bytes\" holds \"8\", not a number");
    bad = e;
    bad["step_parts"] = {{"part", "GEMMs"}};  // an object where the parts are an array
    CHECK_THROWS_WITH(estimate_page(bad), Catch::Contains("field \"step_parts\" holds {\"part\":\"GEMMs\"}, not an array"));
    bad = e;
    bad["gpu"] = 80;  // was shown as no GPU
    CHECK_THROWS_WITH(estimate_page(bad), "report: field \"gpu\" holds 80, not a string");
    bad = e;
    bad["job"] = "llama";
    CHECK_THROWS_WITH(estimate_page(bad), "report: field \"job\" holds \"llama\", not an object");
    // absent optional figures and null (a non-finite figure as --json writes it) keep their defaults
    bad = e;
    bad["mfu"] = nullptr;
    CHECK_NOTHROW(estimate_page(bad));
    const nlohmann::json plan = {{"plans", {{{"gpu", "h100-80g"}, {"parallel", 8}}}}, {"infeasible", nlohmann::json::array()}};
    CHECK_THROWS_WITH(plan_page(plan), "report: field \"parallel\" holds 8, not an object");
    const nlohmann::json plan_without = {{"plans", nlohmann::json::array()}, {"infeasible", 3}};
    CHECK_THROWS_WITH(plan_page(plan_without), "report: field \"infeasible\" holds 3, not an array");
}
