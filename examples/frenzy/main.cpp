// frenzy: memory-aware resource prediction, planning and heterogeneity-aware scheduling for LLM training.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "cli.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/version.hpp"

int main(int argc, char** argv) {
    CLI::App app{"frenzy: which GPUs, how many, and how to schedule LLM training jobs on a mixed cluster"};
    app.set_version_flag("--version", frenzy::version_string);
    app.require_subcommand(0, 1);
    app.footer("Formats of every input and --json output: docs/formats.md. `frenzy SUBCOMMAND --help` for each.");
    auto& reg = frenzy_cli::registry();
    std::stable_sort(reg.begin(), reg.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
    for (auto& c : reg) c.add(app);
    if (argc <= 1) {  // bare `frenzy`: the help, and success
        fmt::print("{}", app.help());
        return 0;
    }
    try {
        app.parse(argc, argv);
        if (app.get_subcommands().empty()) {
            fmt::print(stderr, "error: give a subcommand\n{}", app.help());
            return 2;
        }
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    } catch (const frenzy::config_error& e) {
        fmt::print(stderr, "error: {}\n", e.what());
        return 2;
    } catch (const frenzy::error& e) {
        fmt::print(stderr, "error: {}\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        fmt::print(stderr, "internal error: {}\n", e.what());
        return 3;
    }
    return frenzy_cli::exit_code();
}
