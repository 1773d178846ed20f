// MFU sanity (perf/mfu_ceiling.hpp): the shipped ceilings are the best MFU measured per chip, precision class and
// model size in data/throughput/ (recomputed here from the rows), and a prediction above its class's ceiling is
// flagged in the estimate (issue 25).
#include <catch2/catch.hpp>

#include <cstdio>

#include "frenzy/io/throughput_csv.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/perf/mfu_ceiling.hpp"
#include "frenzy/perf/step_time.hpp"
#include "frenzy/plan/estimate.hpp"

using namespace frenzy;

namespace mfu_ceilings {
/// The ceiling table of the shipped throughput files: each row's measured MFU in the model's convention is its
/// predicted MFU scaled by measured / predicted tokens per second (the same FLOP count and peak on both sides).
std::vector<mfu_ceiling_entry> from_data() {
    const std::string dir = std::string(FRENZY_DATA_DIR) + "/throughput/";
    std::vector<mfu_ceiling_entry> t;
    const gpu_catalog cat;
    step_time_model model;
    for (const char* f : {"measured_calibration.csv", "megatron_nemo_at_scale.csv"})
        for (const auto& s : load_throughput_csv(dir + f)) {
            const auto& g = cat.at(s.gpu);
            const auto e = model.predict(s.job, g, s.topo);
            add_measured_mfu(t, g, s.job, e.mfu * s.tokens_per_s_per_gpu / e.tokens_per_s_per_gpu, s.id);
        }
    return t;
}
}  // namespace mfu_ceilings

TEST_CASE("the shipped MFU ceilings are the best measured per chip, precision and size") {
    const auto t = mfu_ceilings::from_data();
    for (const auto& e : t)
        std::printf("{\"%s\", %s, model_size_class::%s, %.4f, \"%s\"},\n", e.chip.c_str(), e.scaled ? "true" : "false",
                    e.size == model_size_class::small ? "small" : e.size == model_size_class::medium ? "medium" : "large",
                    e.mfu, e.row.c_str());
    const auto& shipped = shipped_mfu_ceilings();
    REQUIRE(shipped.size() == t.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
        INFO(t[i].chip << " " << to_string(t[i].size) << (t[i].scaled ? " fp8" : ""));
        CHECK(shipped[i].chip == t[i].chip);
        CHECK(shipped[i].scaled == t[i].scaled);
        CHECK(shipped[i].size == t[i].size);
        CHECK(shipped[i].row == t[i].row);
        CHECK(shipped[i].mfu == Approx(t[i].mfu).margin(0.0005));  // printed to 4 decimals
        // physical: below the dense peak, above the worst MFU anyone publishes as a benchmark
        CHECK(t[i].mfu < 1.0);
        CHECK(t[i].mfu > 0.2);
    }
}

TEST_CASE("size classes by active parameters") {
    CHECK(size_class_of(1.3e9) == model_size_class::small);
    CHECK(size_class_of(3e9) == model_size_class::medium);
    CHECK(size_class_of(29.9e9) == model_size_class::medium);
    CHECK(size_class_of(30e9) == model_size_class::large);
    // a mixture of experts is sized by what a token runs: Mixtral 8x7B (46.7B total, 12.9B active) is medium
    const auto m = preset("mixtral-8x7b");
    CHECK(size_class_of(active_parameters(m)) == model_size_class::medium);
}

TEST_CASE("a prediction above its class's ceiling is flagged, one below is not") {
    const gpu_catalog cat;
    const auto& a100 = cat.at("a100-80g");
    job_spec j;
    j.model = preset("llama-3.1-70b");
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 512, .precision = precision::bf16_mixed};
    j.parallel = {.dp = 8, .tp = 8, .pp = 4, .sequence_parallel = true, .sharding = sharding::optimizer};
    const double ceiling = mfu_ceiling(j, a100);
    REQUIRE(ceiling > 0);  // large models were measured on A100 (Megatron SC'21, Korthikanti et al. 2022)
    const auto e = estimate(j, &a100);
    REQUIRE(e.speed);
    CHECK(e.speed->mfu_ceiling == ceiling);
    CHECK(e.speed->above_mfu_ceiling == (e.speed->mfu > ceiling));
    // the same job on a chip nobody measured has no ceiling and no flag
    const auto b = estimate(j, &cat.at("b200"));
    CHECK(b.speed->mfu_ceiling == 0);
    CHECK_FALSE(b.speed->above_mfu_ceiling);
    // a calibration that claims ideal GEMMs predicts past any measured run: flagged
    basic_step_time_model<> ideal(calibrated_compute{[] {
        auto m = default_efficiency();
        for (auto& c : m.gpus) c.inverse = 1.0, c.attention = 1.0, c.te_attention = 1.0;
        m.memory_inverse = 1.0;
        m.weight_traffic = 0;
        return m;
    }()});
    const auto fast = ideal.predict(job_on(j, a100), a100, {8, 0});
    CHECK(fast.mfu > ceiling);
    CHECK(fast.above_mfu_ceiling);
}
