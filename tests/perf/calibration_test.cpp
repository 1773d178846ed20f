// Calibration of the compute-efficiency coefficients: reading the throughput CSV, k-fold cross-validation against
// measured tokens/s (acceptance: median error <= 15%, GPU-type ordering preserved), the shipped constants, the
// calibration JSON, and the consistency check of the Sailor profiles.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "frenzy/perf/calibration.hpp"
#include "frenzy/perf/sailor.hpp"

using namespace frenzy;

namespace {
const std::string csv_path = std::string(FRENZY_DATA_DIR) + "/throughput/measured_calibration.csv";
const std::vector<throughput_sample>& samples() {
    static const auto s = load_throughput_csv(csv_path);
    return s;
}
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

TEST_CASE("the shared throughput file is read completely and mapped to catalog types") {
    const auto& s = samples();
    REQUIRE(s.size() == 142);
    std::map<std::string, int> by_type;
    for (const auto& x : s) ++by_type[x.gpu];
    CHECK(by_type["a100-40g"] == 78 + 8);  // llm-foundry A100-40GB + Megatron DGX-A100 (2020: 40 GB)
    CHECK(by_type["h100-80g"] == 52);
    CHECK(by_type["v100-32g"] == 4);
    const auto& r51 = s.front();  // row 51: MPT-70b, 64 x H100, FSDP full shard, activation checkpointing
    CHECK(r51.id == "51");
    CHECK(r51.job.parallel.gpus() == 64);
    CHECK(r51.job.parallel.sharding == sharding::full);
    CHECK(r51.job.parallel.recompute == recompute::full);
    CHECK(r51.job.runtime.framework == framework::fsdp);
    CHECK(r51.job.micro_batches() == 4);  // grad_accum column
    CHECK(measured_step_time(r51) == Approx(63.050));
}

TEST_CASE("a user file with the minimal columns is read; a missing column is named") {
    std::istringstream ok("gpu_type,num_gpus,num_layers,hidden,heads,ffn_hidden,vocab,seq_len,micro_batch,global_batch_seqs,dp,tp,pp,"
                          "tokens_per_s_per_gpu,precision,sharding,recompute,framework\n"
                          "a100-80g,8,32,4096,32,11008,32000,4096,1,64,8,1,1,3000,bf16-mixed,full,selective,fsdp\n");
    const auto s = read_throughput_csv(ok, "user.csv");
    REQUIRE(s.size() == 1);
    CHECK(s[0].gpu == "a100-80g");
    CHECK(s[0].job.parallel.recompute == recompute::selective);
    CHECK(measured_step_time(s[0]) == Approx(64.0 * 4096 / (3000.0 * 8)));
    std::istringstream bad("gpu_type,num_layers\na100-80g,32\n");
    CHECK_THROWS_WITH(read_throughput_csv(bad, "user.csv"), Catch::Matchers::Contains("column hidden is missing"));
}

TEST_CASE("k-fold cross-validation: median error of tokens/s per GPU <= 15%, GPU-type ordering preserved") {
    const int k = 5;
    const auto rows = cross_validate(samples(), k);
    REQUIRE(rows.size() == samples().size());
    std::printf("\n%d-fold cross-validation: predicted vs measured tokens/s per GPU\n", k);
    std::printf("%-6s %-9s %-24s %5s %10s %10s %8s\n", "row", "gpu", "model", "gpus", "measured", "predicted", "error");
    std::vector<double> errs;
    std::map<std::string, std::vector<double>> by_type;
    for (const auto& r : rows) {
        std::printf("%-6s %-9s %-24.24s %5d %10.0f %10.0f %+7.1f%%\n", r.id.c_str(), r.gpu.c_str(), r.model.c_str(), r.gpus,
                    r.measured, r.predicted, 100 * r.rel_error());
        errs.push_back(std::abs(r.rel_error()));
        by_type[r.gpu].push_back(std::abs(r.rel_error()));
    }
    const double med = median(errs);
    std::printf("median |error| %.1f%% over %zu rows", 100 * med, errs.size());
    for (const auto& [t, e] : by_type) std::printf("; %s %.1f%% (%zu)", t.c_str(), 100 * median(e), e.size());
    std::printf("\n");
    CHECK(med <= 0.15);  // acceptance criterion of the issue
    for (const auto& [t, e] : by_type) CHECK(median(e) <= 0.20);  // no GPU type is badly off on its own

    // ordering: for each model measured on several GPU types, ranking the types by mean measured tokens/s per GPU
    // and by mean predicted tokens/s per GPU must agree (MPT-* on A100-40G vs H100, GPT 1.2B-8.3B on V100 vs A100)
    std::map<std::string, std::map<std::string, std::pair<double, double>>> sums;  // model -> gpu -> (meas, pred)
    std::map<std::string, std::map<std::string, int>> counts;
    for (const auto& r : rows) {
        auto& s = sums[r.model][r.gpu];
        s.first += r.measured;
        s.second += r.predicted;
        ++counts[r.model][r.gpu];
    }
    int compared = 0;
    for (const auto& [model, per] : sums) {
        if (per.size() < 2) continue;
        std::vector<std::string> by_meas, by_pred;
        for (const auto& [g, _] : per) by_meas.push_back(g), by_pred.push_back(g);
        auto mean = [&](const std::string& g, bool meas) {
            const auto& s = per.at(g);
            return (meas ? s.first : s.second) / counts[model][g];
        };
        std::sort(by_meas.begin(), by_meas.end(), [&](auto& a, auto& b) { return mean(a, true) > mean(b, true); });
        std::sort(by_pred.begin(), by_pred.end(), [&](auto& a, auto& b) { return mean(a, false) > mean(b, false); });
        INFO("model " << model);
        CHECK(by_meas == by_pred);
        ++compared;
    }
    CHECK(compared >= 10);  // 7 MPT sizes on two types (some only on A100) + 4 GPT sizes on V100 and A100

    // pairwise, for the V100/A100 pairs of Megatron's weak-scaling table (same model, same tp, 1-8 GPUs)
    for (const auto& a : rows)
        for (const auto& b : rows)
            if (a.model == b.model && a.gpus == b.gpus && a.gpu == "a100-40g" && b.gpu == "v100-32g") {
                CHECK(a.measured > b.measured);
                CHECK(a.predicted > b.predicted);
            }
}

TEST_CASE("the shipped coefficients are the fit on the shared data") {
    // Re-fitting from scratch (a neutral start) must land within 1% of the constants in perf/efficiency.hpp.
    efficiency_model neutral = default_efficiency();
    for (auto& c : neutral.gpus) c.inverse = 2.0, c.attention = 0;
    neutral.token_penalty = neutral.width_penalty = 0;
    neutral.attention_inverse = 2.0;
    const auto fit = fit_efficiency(samples(), neutral);
    const auto shipped = default_efficiency();
    for (const auto& c : shipped.gpus) {
        INFO(c.gpu);
        CHECK(fit.gpu_inverse(c.gpu) == Approx(c.inverse).epsilon(0.01));
        CHECK(fit.gpu_attention_inverse(c.gpu) == Approx(shipped.gpu_attention_inverse(c.gpu)).epsilon(0.01));
    }
    CHECK(fit.token_penalty == Approx(shipped.token_penalty).epsilon(0.01));
    CHECK(fit.width_penalty == Approx(shipped.width_penalty).epsilon(0.01));
    CHECK(fit.default_inverse == Approx(shipped.default_inverse).epsilon(0.01));
    // physical: large GEMMs never exceed peak, and reach 40-100% of it on datacenter GPUs
    for (const auto& c : shipped.gpus) {
        CHECK(c.inverse >= 1.0);
        CHECK(c.inverse <= 2.5);
    }
}

TEST_CASE("calibration JSON round-trips and rejects unphysical values") {
    const auto e = default_efficiency();
    CHECK(efficiency_from_json(to_json(e)) == e);
    auto j = to_json(e);
    j["gpus"][0]["inverse_efficiency"] = 0.5;
    CHECK_THROWS_WITH(efficiency_from_json(j), Catch::Matchers::Contains("inverse_efficiency must be at least 1"));
    j = to_json(e);
    j["bogus"] = 1;
    CHECK_THROWS_WITH(efficiency_from_json(j), Catch::Matchers::Contains("bogus is not a known field"));
}

TEST_CASE("Sailor profiles: inconsistent files are found, the consistent ones support the model's conventions") {
    const auto ps = load_sailor_profiles(std::string(FRENZY_DATA_DIR) + "/profiles/sailor");
    REQUIRE(ps.size() == 14);
    std::vector<std::string> bad;
    for (const auto& p : ps) {
        std::printf("sailor %-12s %-10s layers %2d/%2d tensor cores %-3s %s\n", p.model.c_str(), p.gpu_dir.c_str(),
                    p.layers_in_file, p.layers_expected, p.tensor_regime ? "yes" : "no",
                    p.consistent() ? "consistent" : p.issues.front().c_str());
        if (!p.consistent()) bad.push_back(p.model + "/" + p.gpu_dir);
    }
    // GPT-Neo-2.7/GH-96 holds OPT-350's 26 layers (a copied file); OPT-30/A100-40 was measured without tensor
    // cores (18 TFLOP/s, below the fp32 peak of 19.5) while the other A100-40 files reach 67-78 TFLOP/s
    CHECK(bad == std::vector<std::string>{"GPT-Neo-2.7/GH-96", "OPT-30/A100-40"});
    // backward = 2 x forward: median over consistent tp = 1 points (measured ratios include kernel overheads)
    std::vector<double> ratio;
    for (const auto& p : ps)
        if (p.consistent())
            for (const auto& x : p.points)
                if (x.tp == 1 && x.forward > 0) ratio.push_back(x.backward / x.forward);
    CHECK(median(ratio) == Approx(2.4).margin(0.4));
    // A100-80G and A100-40G are one chip: the alias in the shipped calibration needs their speeds within 10%
    const double r = sailor_relative_speed(ps, "A100-80", "A100-40");
    std::printf("sailor A100-80 / A100-40 speed: %.3f\n", r);
    CHECK(r == Approx(1.0).margin(0.1));
}

TEST_CASE("a user's few runs on one type fit that type and keep the shared terms") {
    // synthetic measurements made by the model itself with c = 1.8 for rtx-3090: the fit must recover 1.8 (to
    // 1e-6: the data are exact) and leave the penalties, the default and the other types as shipped
    efficiency_model truth = default_efficiency();
    truth.gpus.push_back({"rtx-3090", 1.8, 0, "fit"});
    std::vector<throughput_sample> runs;
    for (auto [layers, hidden, mb] : {std::tuple{24, 1024, 4}, std::tuple{24, 2048, 2}, std::tuple{32, 2560, 1}, std::tuple{12, 768, 8}}) {
        throughput_sample s;
        s.id = std::to_string(runs.size());
        s.gpu = "rtx-3090";
        s.job.model = {.name = "gpt", .layers = layers, .hidden = hidden, .heads = 16, .ffn_hidden = 4 * hidden, .vocab = 50272};
        s.job.training = {.seq_len = 2048, .micro_batch = mb, .global_batch = 8 * mb * 4};
        s.job.parallel = {.dp = 8};
        s.topo = {8, 0};
        s.tokens_per_s_per_gpu = predict_tokens_per_gpu(s, truth);
        runs.push_back(s);
    }
    const auto fit = fit_efficiency(runs);
    const auto shipped = default_efficiency();
    CHECK(fit.gpu_inverse("rtx-3090") == Approx(1.8).epsilon(1e-6));
    CHECK(fit.token_penalty == shipped.token_penalty);
    CHECK(fit.width_penalty == shipped.width_penalty);
    CHECK(fit.default_inverse == shipped.default_inverse);
    CHECK(fit.gpu_inverse("a100-40g") == shipped.gpu_inverse("a100-40g"));
}
