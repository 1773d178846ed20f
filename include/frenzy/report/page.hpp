#pragma once
// One self-contained HTML page: headings, text, tables and Vega-Lite charts, with the charting library inlined so
// the file opens offline, and the document the page was made from kept in it as JSON. Everything from the input
// enters the page escaped: text through html_escape, JSON through script_json (no "</script>" can close the
// element it sits in), the libraries through inline_script.
//
// The charts are rendered by vega-embed (https://github.com/vega/vega-embed, build/vega-embed.min.js) with Vega
// and Vega-Lite (their UMD builds, build/vega.min.js and build/vega-lite.min.js), which scripts/setup.sh installs
// from the npm registry at the versions of web/package-lock.json.
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/core/error.hpp"
#include "frenzy/io/file.hpp"

namespace frenzy::report {

/// The text of the three libraries a page inlines.
struct web_assets {
    std::string vega, vega_lite, vega_embed;
};

/// The node_modules folder holding vega, vega-lite and vega-embed: $FRENZY_WEB_DIR when set, else `built_in` (the
/// folder the host was built against: the CLI and the Python module pass CMake's FRENZY_WEB_DIR, which
/// scripts/setup.sh fills with npm ci --prefix web).
inline std::filesystem::path web_dir(std::string_view built_in) {
    if (const char* env = std::getenv("FRENZY_WEB_DIR"); env && *env) return env;
    return std::filesystem::path(built_in);
}

/// The libraries under an npm `node_modules` folder; io_error naming the missing file and how to install it.
inline web_assets load_web_assets(const std::filesystem::path& node_modules) {
    auto read = [&](const char* rel) {
        const auto p = node_modules / rel;
        if (!std::filesystem::is_regular_file(p))
            throw io_error("the charting library is not installed: " + p.string() +
                           " is missing (scripts/setup.sh installs it: npm ci --prefix web; or set FRENZY_WEB_DIR to "
                           "a node_modules folder holding vega, vega-lite and vega-embed)");
        return read_file_limited(p.string(), 64ull << 20);
    };
    return {read("vega/build/vega.min.js"), read("vega-lite/build/vega-lite.min.js"),
            read("vega-embed/build/vega-embed.min.js")};
}

/// A table: a header row and rows of text cells (escaped when written).
struct table {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
};

/// One part of a page: a heading, a paragraph, a chart (a Vega-Lite spec; null for none) named for the tests and
/// the reader, and a table (none when it has no rows).
struct section {
    std::string heading;
    std::string text;
    std::string chart_name;
    nlohmann::json chart;
    report::table table;
};

struct page {
    std::string title;
    std::string subtitle;
    std::vector<section> sections;
    nlohmann::json source;  ///< the document the page shows (a --json output), kept in the page
};

/// `s` as HTML text or attribute value.
inline std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

/// JSON safe inside a <script> element: '<', '>' and '&' as \u escapes (valid JSON, so nothing in a string can
/// close the element or open a comment), as are U+2028 and U+2029; invalid UTF-8 replaced.
inline std::string script_json(const nlohmann::json& j) {
    const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '<') out += "\\u003c";
        else if (c == '>') out += "\\u003e";
        else if (c == '&') out += "\\u0026";
        else if (c == '\xe2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {
            out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
            i += 2;
        } else out += c;
    }
    return out;
}

/// A library's text inside a <script> element: any "</script" (in a string or comment of the library) written
/// "<\/script", which JavaScript reads the same in a string and which cannot close the element.
inline std::string inline_script(std::string_view js) {
    std::string out(js);
    for (std::size_t at = 0; (at = out.find("</", at)) != std::string::npos;) {
        std::string tail = out.substr(at + 2, 6);
        for (auto& ch : tail) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (tail == "script") out.replace(at, 2, "<\\/");
        at += 2;
    }
    return out;
}

namespace detail {

inline std::string table_html(const table& t) {
    std::string out = "<table><thead><tr>";
    for (const auto& h : t.header) out += "<th>" + html_escape(h) + "</th>";
    out += "</tr></thead><tbody>\n";
    for (const auto& row : t.rows) {
        out += "<tr>";
        for (const auto& cell : row) out += "<td>" + html_escape(cell) + "</td>";
        out += "</tr>\n";
    }
    return out + "</tbody></table>\n";
}

inline constexpr std::string_view page_style = R"(body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222}
h1{font-size:1.5em;margin-bottom:.2em}.subtitle{color:#555;margin-top:0}h2{font-size:1.15em;margin-top:2em}
table{border-collapse:collapse;font-size:.85em;margin:1em 0}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}.chart{margin:1em 0}#frenzy-error{color:#b00;white-space:pre-wrap}footer{color:#777;font-size:.8em;margin-top:3em})";

/// Collects every error and console.error of the page on <body data-errors>, and marks <body data-rendered>
/// "ok" once every chart is drawn (what the browser tests read).
inline constexpr std::string_view error_watch = R"(window.frenzyErrors=[];
window.addEventListener('error',function(e){window.frenzyErrors.push(String(e.message));});
(function(){var ce=console.error;console.error=function(){window.frenzyErrors.push(Array.prototype.join.call(arguments,' '));ce.apply(console,arguments);};})();)";

inline constexpr std::string_view draw_charts = R"(var doc=JSON.parse(document.getElementById('frenzy-report').textContent);
Promise.all(doc.charts.map(function(c){return vegaEmbed('#'+c.id,c.spec,{renderer:'svg',actions:false});}))
.then(function(){document.body.dataset.rendered='ok';})
.catch(function(e){document.body.dataset.rendered='error';window.frenzyErrors.push(String(e));
document.getElementById('frenzy-error').textContent='A chart could not be drawn: '+e;})
.finally(function(){document.body.dataset.errors=String(window.frenzyErrors.length);});)";

}  // namespace detail

/// The page as one HTML document.
inline std::string to_html(const page& p, const web_assets& web) {
    std::string body;
    nlohmann::json charts = nlohmann::json::array();
    for (const auto& s : p.sections) {
        body += "<section>\n<h2>" + html_escape(s.heading) + "</h2>\n";
        if (!s.text.empty()) body += "<p>" + html_escape(s.text) + "</p>\n";
        if (!s.chart.is_null()) {
            const std::string id = "chart-" + std::to_string(charts.size());
            body += "<div class=\"chart\" id=\"" + id + "\" data-chart=\"" + html_escape(s.chart_name) + "\"></div>\n";
            charts.push_back({{"id", id}, {"name", s.chart_name}, {"spec", s.chart}});
        }
        if (!s.table.rows.empty()) body += detail::table_html(s.table);
        body += "</section>\n";
    }
    const nlohmann::json doc = {{"charts", charts}, {"source", p.source}};
    std::string out = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" + html_escape(p.title) +
                      "</title>\n<style>" + std::string(detail::page_style) + "</style>\n<script>" +
                      std::string(detail::error_watch) + "</script>\n";
    for (const auto* lib : {&web.vega, &web.vega_lite, &web.vega_embed}) out += "<script>" + inline_script(*lib) + "</script>\n";
    out += "</head><body>\n<h1>" + html_escape(p.title) + "</h1>\n<p class=\"subtitle\">" + html_escape(p.subtitle) +
           "</p>\n<div id=\"frenzy-error\"></div>\n" + body +
           "<footer>Made by frenzy; the data of this page is the JSON in the element frenzy-report.</footer>\n"
           "<script type=\"application/json\" id=\"frenzy-report\">" + script_json(doc) + "</script>\n<script>" +
           std::string(detail::draw_charts) + "</script>\n</body></html>\n";
    return out;
}

}  // namespace frenzy::report
