#pragma once
// Shared pieces of the frenzy CLI: subcommand registry and output helpers.
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace frenzy_cli {

/// Each cmd_*.cpp adds its subcommands through a static `registrar`; main() calls them in `order`.
struct command_entry {
    int order;
    std::function<void(CLI::App&)> add;
};
inline std::vector<command_entry>& registry() {
    static std::vector<command_entry> r;
    return r;
}
struct registrar {
    registrar(int order, std::function<void(CLI::App&)> f) { registry().push_back({order, std::move(f)}); }
};

/// Exit code a subcommand wants (0 unless it sets it, e.g. validate with rows out of tolerance).
inline int& exit_code() {
    static int c = 0;
    return c;
}

/// Human-readable bytes in GiB with two decimals.
inline std::string gib(double b) { return fmt::format("{:.2f}", b / (1024.0 * 1024.0 * 1024.0)); }

}  // namespace frenzy_cli
