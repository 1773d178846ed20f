// libFuzzer target: a `frenzy report` input (any JSON) through the strict reader, the page of its kind, and the HTML:
// whatever the document holds, the page has exactly its own six <script> elements (the input cannot add markup or
// close one) and every chart spec serialises.
#include <cstdlib>

#include "frenzy/io/json_reader.hpp"
#include "frenzy/report/charts.hpp"
#include "fuzz_common.hpp"

namespace {
std::size_t report_count(const std::string& s, const char* what) {
    std::size_t n = 0;
    for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}
}  // namespace

FRENZY_FUZZ_TARGET({
    const auto doc = frenzy::parse_json_text(input, "report.json");
    frenzy::report::page page;
    try {
        page = frenzy::report::page_of(doc);
    } catch (const nlohmann::json::exception&) {  // a field of the wrong type: the CLI's config_error
        throw frenzy::config_error("report: a field of the wrong type");
    }
    const auto html = frenzy::report::to_html(page, {"", "", ""});
    if (report_count(html, "<script") != 6 || report_count(html, "</script") != 6) std::abort();
})
