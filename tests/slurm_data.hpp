#pragma once
// The recorded Slurm outputs of tests/data/slurm (its README says how they were recorded), for the tests of the
// parsers and of the Slurm backend.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

inline std::string slurm_file(const std::string& name) {
    std::ifstream f(std::string(FRENZY_SOURCE_DIR) + "/tests/data/slurm/" + name);
    REQUIRE(f.good());
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}
