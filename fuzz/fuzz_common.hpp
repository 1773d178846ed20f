#pragma once
// Shared by the libFuzzer targets (scripts/fuzz.sh builds them with clang-14 -fsanitize=fuzzer,address,undefined).
// A target may only end an input with a frenzy::error (config_error, io_error, ...): any other exception escapes
// LLVMFuzzerTestOneInput, aborts, and is reported as a finding, as are crashes, leaks, hangs and sanitizer reports.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "frenzy/core/error.hpp"

namespace frenzy_fuzz {
inline std::string_view text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}
}  // namespace frenzy_fuzz

/// Defines LLVMFuzzerTestOneInput running `body` (which sees `input`, a std::string_view of the bytes).
#define FRENZY_FUZZ_TARGET(body)                                                     \
    extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { \
        const std::string_view input = frenzy_fuzz::text(data, size);               \
        try {                                                                       \
            body                                                                    \
        } catch (const frenzy::error&) {                                            \
        }                                                                           \
        return 0;                                                                   \
    }
