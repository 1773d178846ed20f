#pragma once
// Built-in EXAMPLE prices per GPU-hour (USD), for `--price example` and quick cost comparisons. They are round
// figures in the range of public on-demand cloud list prices of 2024-2025 for one GPU of each type, chosen to keep
// the types' relative order; they are not a quote from any provider. Give your own with --price TYPE=USD.
#include <map>
#include <string>

namespace frenzy {

inline const std::map<std::string, double>& example_prices() {
    static const std::map<std::string, double> p{
        {"p100-16g", 0.40},  {"v100-16g", 0.60},   {"v100-32g", 0.80},     {"t4", 0.35},
        {"rtx-2080ti", 0.20}, {"quadro-rtx-6000", 0.45}, {"titan-rtx", 0.30}, {"a10", 0.75},
        {"l4", 0.70},        {"rtx-3090", 0.25},   {"rtx-4090", 0.40},     {"l40s", 1.00},
        {"a100-40g", 1.30},  {"a100-80g", 1.80},   {"a100-80g-pcie", 1.60}, {"h100-80g", 3.00},
        {"h100-pcie", 2.50}, {"h200", 3.80},       {"b200", 6.00},         {"mi300x", 3.00},
    };
    return p;
}

}  // namespace frenzy
