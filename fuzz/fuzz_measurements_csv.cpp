// libFuzzer target: a table of measured runs (io/measurements_csv.hpp, io/csv.hpp), as `frenzy validate` reads it.
#include <sstream>
#include <string>

#include "frenzy/io/measurements_csv.hpp"
#include "fuzz_common.hpp"

FRENZY_FUZZ_TARGET({
    std::istringstream in{std::string(input)};
    std::vector<std::string> skipped;
    (void)frenzy::read_memory_measurements(in, "table.csv", &skipped);
})
