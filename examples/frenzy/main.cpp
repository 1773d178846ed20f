// frenzy: memory-aware resource prediction, planning and heterogeneity-aware scheduling for LLM training.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/version.hpp"

namespace {

/// A message fit for a terminal: invalid UTF-8 and control bytes escaped (core/checked.hpp printable), at most
/// 2,000 characters, and decimal numbers of more than 25 digits (CLI11 prints DBL_MAX in full: 309 digits)
/// shortened to %g; 64-bit integers (at most 20 digits) are shown exactly.
std::string user_text(const std::string& msg) {
    std::string out;
    for (std::size_t i = 0; i < msg.size();) {
        std::size_t j = i;
        while (j < msg.size() && std::isdigit(static_cast<unsigned char>(msg[j]))) ++j;
        if (j - i > 25) {
            std::size_t k = j;
            if (k < msg.size() && msg[k] == '.') {
                ++k;
                while (k < msg.size() && std::isdigit(static_cast<unsigned char>(msg[k]))) ++k;
            }
            out += fmt::format("{:g}", std::strtod(msg.substr(i, k - i).c_str(), nullptr));
            i = k;
        } else if (j > i) {
            out.append(msg, i, j - i);
            i = j;
        } else {
            out += msg[i++];
        }
    }
    std::string lines;  // keep newlines (CLI11's help hints), escape the rest
    std::size_t start = 0;
    while (start <= out.size()) {
        const auto nl = out.find('\n', start);
        const auto piece = out.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        lines += frenzy::printable(piece, 2000);
        if (nl == std::string::npos) break;
        lines += '\n';
        start = nl + 1;
    }
    return lines;
}

int report(const char* what, const std::string& msg, int code) {
    fmt::print(stderr, "{}{}\n", what, user_text(msg));
    return code;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"frenzy: which GPUs, how many, and how to schedule LLM training jobs on a mixed cluster"};
    app.set_version_flag("--version", frenzy::version_string);
    app.require_subcommand(0, 1);
    app.footer("Formats of every input and --json output: docs/formats.md. `frenzy SUBCOMMAND --help` for each.");
    frenzy_cli::add_models(app);  // in the order `frenzy --help` lists them
    frenzy_cli::add_gpus(app);
    frenzy_cli::add_estimate(app);
    frenzy_cli::add_validate(app);
    frenzy_cli::add_plan(app);
    frenzy_cli::add_launch(app);
    frenzy_cli::add_calibrate(app);
    frenzy_cli::add_simulate(app);
    frenzy_cli::add_trace(app);
    frenzy_cli::add_report(app);
#ifdef FRENZY_HAS_SERVICE
    frenzy_cli::add_serve(app);
#endif
    frenzy_cli::add_completion(app);  // last: its script lists every subcommand and option added above
    frenzy_cli::check_every_option(app);
    if (argc <= 1) {  // bare `frenzy`: the help, and success
        fmt::print("{}", app.help());
        return 0;
    }
    // Exit codes: 0 success, 1 a file that cannot be read, 2 invalid input (flags, specs, tables), 3 a failure of
    // Frenzy itself, 4 `estimate` with a GPU: the job does not fit (frenzy_cli::exit_does_not_fit; docs/cli.md). No library's exception text (nlohmann, the standard library) is shown: each is mapped to a
    // message of our own.
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return app.exit(e);  // --help, --version
    } catch (const CLI::ParseError& e) {
        return report("error: ", std::string(e.what()) + "\nRun with --help for more information.", 2);
    } catch (const frenzy::config_error& e) {
        return report("error: ", e.what(), 2);
    } catch (const frenzy::error& e) {
        return report("error: ", e.what(), 1);
    } catch (const nlohmann::json::type_error& e) {
        if (e.id == 316)
            return report("error: ", "the output would contain text that is not valid UTF-8 (a name or value given "
                                     "in the input); give names in UTF-8", 2);
        return report("error: ", "a JSON value has the wrong type for its field", 2);
    } catch (const nlohmann::json::out_of_range&) {
        return report("error: ", "a JSON number is outside the range Frenzy accepts, or a required field is missing", 2);
    } catch (const nlohmann::json::exception&) {
        return report("error: ", "the JSON input could not be read", 2);
    } catch (const std::invalid_argument&) {
        return report("error: ", "a value that should be a number is not a number", 2);
    } catch (const std::out_of_range&) {
        return report("error: ", "a number is outside the range Frenzy accepts", 2);
    } catch (const std::bad_alloc&) {
        return report("error: ", "out of memory: the input asks for more than this machine has", 2);
    } catch (const std::length_error&) {
        return report("error: ", "the input asks for a size beyond what Frenzy supports", 2);
    } catch (const std::exception&) {
        return report("error: ", "unexpected failure inside frenzy (please report the command line)", 3);
    }
    return frenzy_cli::exit_code();
}
