// libFuzzer target: a job trace (sim/trace.hpp), as `frenzy simulate --trace` reads it.
#include <sstream>
#include <string>

#include "frenzy/sim/trace.hpp"
#include "fuzz_common.hpp"

FRENZY_FUZZ_TARGET({
    std::istringstream in{std::string(input)};
    (void)frenzy::read_trace(in, "trace.csv");
})
