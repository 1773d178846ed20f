// Today's error of the shipped step-time model on data/throughput/wild_2026-12.csv (issue 52): 45 measured runs of
// 2024-26 hardware and stacks (torchao/torchtitan on H100, MI300X and power-limited B200; MLPerf v4.1/v5.0 on B200,
// GB200, MI300X, MI325X; llm.q on RTX 4090), held out of the fit (the shipped constants are the fit on
// measured_calibration.csv + megatron_nemo_at_scale.csv alone, tests/perf/calibration_test.cpp). This asserts what
// is true today (how many rows the model expresses, and bounds on today's error), not issue 52's acceptance target,
// and prints the tables of docs/perf-model.md ("Held-out 2026 runs"): `test_perf "wild*"`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "frenzy/io/throughput_csv.hpp"
#include "frenzy/perf/calibration.hpp"

using namespace frenzy;

namespace wild_validation {
const std::string wild_file = std::string(FRENZY_DATA_DIR) + "/throughput/wild_2026-12.csv";

struct wild_set {
    std::vector<throughput_sample> usable;
    std::vector<std::string> skipped;
    std::vector<cv_row> rows;  ///< each usable row predicted with the shipped constants
};
const wild_set& data() {
    static const wild_set w = [] {
        wild_set out;
        const gpu_catalog cat;
        out.usable = load_throughput_csv(wild_file, cat, &out.skipped);
        for (const auto& s : out.usable) out.rows.push_back(detail::make_cv_row(s, default_efficiency(), cat));
        return out;
    }();
    return w;
}
double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
double p90_of(std::vector<double> v) {  // nearest rank, as calibration_test.cpp
    std::sort(v.begin(), v.end());
    const auto k = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(v.size())));
    return v[std::max<std::size_t>(k, 1) - 1];
}
/// Prints one table (group, rows, median |error|, median signed, p90 |error|) as markdown rows.
template <class Key>
void print_by(const char* title, Key key) {
    std::map<std::string, std::vector<double>> by;
    for (const auto& r : data().rows) by[key(r)].push_back(r.rel_error());
    std::printf("\n| %s | rows | median abs | median signed | p90 abs |\n|---|---|---|---|---|\n", title);
    for (const auto& [g, v] : by) {
        std::vector<double> a;
        for (double e : v) a.push_back(std::abs(e));
        std::printf("| %s | %zu | %.1f%% | %+.1f%% | %.1f%% |\n", g.c_str(), v.size(), 100 * median_of(a),
                    100 * median_of(v), 100 * p90_of(a));
    }
}
}  // namespace wild_validation

TEST_CASE("wild 2026-12: every row is read, the inexpressible ones skipped by name") {
    using namespace wild_validation;
    const auto& w = data();
    CHECK(w.usable.size() + w.skipped.size() == 45);  // no row dropped silently
    CHECK(w.usable.size() == 25);
    // each skipped row names what the model lacks (the model_gap column); none is skipped for another reason
    std::ifstream in(wild_file);
    std::string line;
    std::getline(in, line);
    const auto columns = detail::csv_columns_from_header(detail::split_csv_line(line), "wild");
    std::set<std::string> with_gap;
    while (std::getline(in, line)) {
        const auto f = detail::split_csv_line(line);
        if (!detail::trim(columns.cell(f, "model_gap")).empty()) with_gap.insert(columns.cell(f, "row_id"));
    }
    CHECK(std::set<std::string>(w.skipped.begin(), w.skipped.end()) == with_gap);
}

TEST_CASE("wild 2026-12: today's error of the shipped constants, per source, chip and precision") {
    using namespace wild_validation;
    const auto& rows = data().rows;
    REQUIRE(rows.size() == 25);
    std::vector<double> abs_err, signed_err;
    int too_fast = 0;
    std::printf("\n%-30s %-10s %10s %10s %8s\n", "row", "gpu", "measured", "predicted", "error");
    for (const auto& r : rows) {
        std::printf("%-30s %-10s %10.0f %10.0f %+7.1f%%\n", r.id.c_str(), r.gpu.c_str(), r.measured, r.predicted,
                    100 * r.rel_error());
        abs_err.push_back(std::abs(r.rel_error()));
        signed_err.push_back(r.rel_error());
        too_fast += r.rel_error() > 0;
    }
    std::printf("\nall %zu rows: median |error| %.1f%%, median signed %+.1f%%, p90 |error| %.1f%%, %d too fast\n",
                rows.size(), 100 * median_of(abs_err), 100 * median_of(signed_err), 100 * p90_of(abs_err), too_fast);
    print_by("source", [](const cv_row& r) { return r.group; });
    print_by("GPU generation (chip)", [](const cv_row& r) { return r.chip; });
    print_by("GEMM precision", [](const cv_row& r) { return r.gemms; });
    // Measured 2026-12-07 with the portable-attention cap (perf/efficiency.hpp: SDPA's FlashAttention-2 kernels
    // at H100's rate on newer chips): median 25.3%, p90 63.5% (45.1% / 113.7% without it). Bounds a little above,
    // so that a change that makes it worse fails here; docs/perf-model.md has the tables. Issue 52's target is
    // median <= 10%, p90 <= 25%: not met.
    CHECK(median_of(abs_err) < 0.28);
    CHECK(p90_of(abs_err) < 0.70);
    // still mostly too fast (torchtitan on power-limited B200 +25..40%, MI300X +57..68%), RTX 4090 about half
    CHECK(too_fast >= 18);
}

TEST_CASE("wild 2026-12: the band of chips without calibration rows covers nine in ten of their held-out runs") {
    using namespace wild_validation;
    std::vector<double> uncal;
    const auto shipped = default_efficiency();
    for (const auto& r : data().rows)  // the chip has no coefficients of its own: error_band_for's uncalibrated_chip
        if (!shipped.has(r.chip)) uncal.push_back(std::abs(r.rel_error()));
    REQUIRE(uncal.size() == 20);  // gb100 (13), cdna3 (2), ad102 (5); the 5 H100 rows are in calibrated regimes
    const double q = p90_of(uncal);
    std::printf("\nchips without calibration rows: %zu held-out rows, p90 |error| %.1f%%, band %.2f\n", uncal.size(),
                100 * q, error_band(error_regime::uncalibrated_chip));
    CHECK(error_band(error_regime::uncalibrated_chip) >= q);         // covers nine in ten
    CHECK(error_band(error_regime::uncalibrated_chip) <= q + 0.02);  // the rounded-up p90, not a loose guess
    int inside = 0;
    for (double e : uncal) inside += e <= error_band(error_regime::uncalibrated_chip);
    CHECK(inside == 18);
}
