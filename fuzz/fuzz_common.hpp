#pragma once
// Shared by the libFuzzer targets. scripts/fuzz.sh compiles every fuzz/fuzz_*.cpp into one translation unit and one
// binary (clang-14 -fsanitize=fuzzer,address,undefined): they parse the same headers, and one compile instead of eight
// saves the suite about four minutes of CPU. The environment variable FRENZY_FUZZ_TARGET names the target a run
// exercises (the file's name without .cpp, e.g. fuzz_job_json); libFuzzer's corpus, dictionary and findings stay per
// target. A target may only end an input with a frenzy::error (config_error, io_error, ...): any other exception
// escapes LLVMFuzzerTestOneInput, aborts, and is reported as a finding, as are crashes, leaks, hangs and sanitizer
// reports.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

#include "frenzy/core/error.hpp"

namespace frenzy_fuzz {
using target_fn = void (*)(std::string_view);

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

/// Every target of the binary, by its file's stem ("fuzz/fuzz_job_json.cpp" -> "fuzz_job_json").
inline std::map<std::string, target_fn>& targets() {
    static std::map<std::string, target_fn> all;
    return all;
}

inline std::string stem(std::string_view file) {
    if (const auto slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
    if (const auto dot = file.rfind('.'); dot != std::string_view::npos) file.remove_suffix(file.size() - dot);
    return std::string(file);
}

struct registrar {
    registrar(const char* file, target_fn f) { targets()[stem(file)] = f; }
};

/// The target FRENZY_FUZZ_TARGET names; set once, before the first input (LLVMFuzzerInitialize).
inline target_fn& selected() {
    static target_fn f = nullptr;
    return f;
}

inline void select_from_environment() {
    const char* name = std::getenv("FRENZY_FUZZ_TARGET");
    const auto it = targets().find(name ? name : "");
    if (it == targets().end()) {
        std::fprintf(stderr, "FRENZY_FUZZ_TARGET=\"%s\" names no target; this binary has:", name ? name : "");
        for (const auto& [n, f] : targets()) std::fprintf(stderr, " %s", n.c_str());
        std::fprintf(stderr, "\n");
        std::exit(2);
    }
    selected() = it->second;
}
}  // namespace frenzy_fuzz

#define FRENZY_FUZZ_JOIN2(a, b) a##b
#define FRENZY_FUZZ_JOIN(a, b) FRENZY_FUZZ_JOIN2(a, b)
#define FRENZY_FUZZ_TARGET_AT(id, ...)                                                         \
    namespace {                                                                                 \
    void FRENZY_FUZZ_JOIN(fuzz_target_, id)(std::string_view input) {                           \
        try {                                                                                   \
            __VA_ARGS__                                                                         \
        } catch (const frenzy::error&) {                                                        \
        }                                                                                       \
    }                                                                                           \
    const frenzy_fuzz::registrar FRENZY_FUZZ_JOIN(fuzz_registrar_, id){__FILE__,                \
                                                                       &FRENZY_FUZZ_JOIN(fuzz_target_, id)}; \
    }
/// Defines a target running its argument, a block that sees `input` (a std::string_view of the bytes), named after
/// its file.
#define FRENZY_FUZZ_TARGET(...) FRENZY_FUZZ_TARGET_AT(__COUNTER__, __VA_ARGS__)
