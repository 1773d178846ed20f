// `frenzy report`: the HTML report of a saved `--json` document (estimate, plan, or simulate --runs), and the
// writer behind `--html` on those commands.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/io/file.hpp"
#include "frenzy/io/json_reader.hpp"
#include "frenzy/report/charts.hpp"

namespace {

struct report_args {
    std::string input, out;
};

}  // namespace

void frenzy_cli::write_html_report(const std::string& json_text, const std::string& source, const std::string& path,
                                   const std::string& field) {
    using namespace frenzy;
    const nlohmann::json doc = parse_json_text(json_text, source);  // strict: depth, duplicate keys (io/json_reader.hpp)
    report::page page;
    try {
        page = report::page_of(doc);
    } catch (const nlohmann::json::exception&) {  // a document of the right kind with a field of the wrong type
        throw config_error("report: " + printable(source, 200) +
                           " has a field of the wrong type or is missing one for its kind of document (docs/formats.md)");
    } catch (const config_error& e) {  // no known kind, a simulation without runs: named with the input
        throw config_error(printable(source, 200) + ": " + e.what());
    }
    const auto html = report::to_html(page, report::load_web_assets(report::web_dir(FRENZY_WEB_DIR)));
    auto f = open_output(path, field);  // io/file.hpp: no FIFO (it would block)
    f << html;
    if (!f.flush()) throw io_error("cannot write the HTML report " + printable(path, 200));
}

void frenzy_cli::add_report(CLI::App& app) {
    auto a = std::make_shared<report_args>();
    auto* c = app.add_subcommand("report", "Write a self-contained HTML report (charts and tables) of a saved --json output");
    c->footer("The input is what `frenzy estimate --json`, `frenzy plan --json` or `frenzy simulate --json --runs` printed "
              "(or - for standard input). Estimate: memory per pipeline stage by kind against the usable memory, and where "
              "a step's time goes. Plan: every plan's time against cost, the frontier, the table, the GPU types without a "
              "plan. Simulate: jobs on GPUs over time, queue and utilisation over time, completion times per policy. "
              "The page inlines Vega, Vega-Lite and vega-embed (installed by scripts/setup.sh into web/node_modules; "
              "FRENZY_WEB_DIR names another node_modules folder) and keeps the input as JSON inside it.");
    c->add_option("input", a->input, "The --json output to show (a file, or - for standard input)")->required();
    c->add_option("-o,--out", a->out, "The HTML file to write")->required();
    c->callback([a] {
        std::string text;
        if (a->input == "-") {  // at most the input limit, as from a file
            char buf[65536];
            while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) {
                text.append(buf, static_cast<std::size_t>(std::cin.gcount()));
                if (text.size() > frenzy::bounds::input_bytes)
                    throw frenzy::io_error("standard input is more than the limit of " + std::to_string(frenzy::bounds::input_bytes) + " bytes");
            }
        } else {
            text = frenzy::read_file_limited(a->input);
        }
        frenzy_cli::write_html_report(text, a->input == "-" ? "standard input" : a->input, a->out, "-o/--out");
        fmt::print(stderr, "wrote {}\n", frenzy::printable(a->out, 200));
    });
}
