// Calibration of the compute-efficiency coefficients on the shared throughput data (measured_calibration.csv and
// megatron_nemo_at_scale.csv): reading the files' free text, the acceptance targets of issue 11 (median error
// <= 8% and no source's median signed error beyond +-10%, out of sample), the leave-one-source-out table, the
// error bands, GPU-type ordering, the shipped constants, the calibration JSON, and the Sailor profiles.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "frenzy/io/calibration_json.hpp"
#include "frenzy/io/throughput_csv.hpp"
#include "frenzy/perf/calibration.hpp"
#include "frenzy/io/sailor.hpp"

using namespace frenzy;

namespace {
const std::string data_dir = std::string(FRENZY_DATA_DIR) + "/throughput/";
const std::vector<throughput_sample>& base_samples() {
    static const auto s = load_throughput_csv(data_dir + "measured_calibration.csv");
    return s;
}
const std::vector<throughput_sample>& scale_samples() {
    static const auto s = load_throughput_csv(data_dir + "megatron_nemo_at_scale.csv");
    return s;
}
const std::vector<throughput_sample>& samples() {  // both files, the data the shipped constants are fitted on
    static const auto s = [] {
        auto a = base_samples();
        a.insert(a.end(), scale_samples().begin(), scale_samples().end());
        return a;
    }();
    return s;
}
const throughput_sample& row(const std::string& id) {
    for (const auto& s : samples())
        if (s.id == id) return s;
    throw std::runtime_error("no row " + id);
}
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
double p90(std::vector<double> v) {  // nearest-rank 90th percentile
    std::sort(v.begin(), v.end());
    const auto k = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(v.size())));
    return v[std::max<std::size_t>(k, 1) - 1];
}
struct slice {
    std::vector<double> abs, signed_;
};
/// Prints a per-group table (median |error|, median signed error, p90 |error|) and returns the slices.
std::map<std::string, slice> print_table(const char* title, const std::vector<cv_row>& rows, bool by_regime) {
    std::map<std::string, slice> out;
    std::vector<double> all;
    for (const auto& r : rows) {
        auto& s = out[by_regime ? r.regime : r.group];
        s.abs.push_back(std::abs(r.rel_error()));
        s.signed_.push_back(r.rel_error());
        all.push_back(std::abs(r.rel_error()));
    }
    std::printf("\n%s (%zu rows): median |error| %.1f%%, p90 %.1f%%\n", title, rows.size(), 100 * median(all), 100 * p90(all));
    std::printf("  %-32s %5s %12s %14s %9s\n", by_regime ? "regime" : "source", "rows", "median |err|", "median signed", "p90 |err|");
    for (const auto& [g, s] : out)
        std::printf("  %-32s %5zu %11.1f%% %+13.1f%% %8.1f%%\n", g.c_str(), s.abs.size(), 100 * median(s.abs),
                    100 * median(s.signed_), 100 * p90(s.abs));
    return out;
}
const std::vector<cv_row>& loso_rows() {
    static const auto r = leave_one_source_out(samples(), neutral_start());
    return r;
}
}  // namespace

TEST_CASE("both shared throughput files are read, free-text cells map as documented") {
    REQUIRE(base_samples().size() == 142);
    // 35 rows: 290-291 have no measured throughput, 286-289 (recalled baseline) no micro-batch size, 310-312 are
    // fine-tuning on packed sequences: 26 remain
    std::vector<std::string> skipped;
    const auto s = load_throughput_csv(data_dir + "megatron_nemo_at_scale.csv", gpu_catalog{}, &skipped);
    CHECK(s.size() == 26);
    CHECK(skipped == std::vector<std::string>{"286", "287", "288", "289", "290", "291", "310", "311", "312"});
    std::map<std::string, int> by_group;
    for (const auto& x : samples()) ++by_group[x.group];
    CHECK(by_group["llm-foundry A100"] == 78);
    CHECK(by_group["llm-foundry H100"] == 52);
    CHECK(by_group["Megatron-LM 2020"] == 12);
    CHECK(by_group["Megatron-LM SC'21"] == 10);
    CHECK(by_group["Korthikanti 2022"] == 4);
    CHECK(by_group["NeMo 24.07 H100"] == 12);

    const auto& r260 = row("260");  // "not in README (paper: small, e.g. 1-2)" -> 1; "8x 200 Gb/s" -> 200 GB/s
    CHECK(r260.gpu == "a100-80g");
    CHECK(r260.job.training.micro_batch == 1);
    CHECK(r260.topo.network_GBps == Approx(200));
    CHECK(r260.job.parallel.recompute == recompute::full);
    CHECK(r260.job.training.precision == precision::fp16_mixed);
    CHECK(row("282").job.training.micro_batch == 4);  // "4 (22B) / 1 (others)", model "GPT-3 style 22B"
    CHECK(row("283").job.training.micro_batch == 1);  // same cell, model 175B
    CHECK(row("282").job.parallel.sequence_parallel);
    CHECK(row("282").job.parallel.recompute == recompute::selective);
    const auto& r298 = row("298");  // NeMo: "~50k GPT-2 BPE" -> 50257; fp8; distributed optimizer; overlaps on
    CHECK(r298.job.model.vocab == 50257);
    CHECK(r298.job.training.precision == precision::fp8_mixed);
    CHECK(r298.job.parallel.sharding == sharding::optimizer);
    CHECK(r298.job.runtime.overlap_grad_reduce);
    CHECK_FALSE(r298.job.runtime.tp_comm_overlap);  // tp = 1
    const auto& r304 = row("304");  // Llama 2 70B: tp 4, pp 4, vpp 20 -> interleaved, SP "typically on when TP>1"
    CHECK(r304.job.parallel.schedule == pipeline_schedule::interleaved);
    CHECK(r304.job.parallel.vpp == 20);
    CHECK(r304.job.parallel.sequence_parallel);
    CHECK(r304.job.runtime.tp_comm_overlap);
    CHECK(r304.job.model.kv_heads == 8);
    CHECK(row("305").job.model.vocab == 256000);  // "256000 (inferred)"
    CHECK(row("305").job.model.activation == activation::squared_relu);
    CHECK(row("309").job.parallel.cp == 2);
}

TEST_CASE("free-text numbers and bandwidths of measurement tables") {
    using detail::number_from_text;
    CHECK(number_from_text("4096", "") == 4096);
    CHECK(number_from_text("256000 (inferred)", "") == 256000);
    CHECK(number_from_text("~50k tokens", "") == 50000);
    CHECK(number_from_text("4 (22B) / 1 (others) per paper", "GPT 22B") == 4);
    CHECK(number_from_text("4 (22B) / 1 (others) per paper", "GPT 175B") == 1);
    CHECK(std::isnan(number_from_text("not stated", "")));
    CHECK(detail::network_from_text("1600 Gbps node-node interconnect") == Approx(200));
    CHECK(detail::network_from_text("NVSwitch + 8x200Gb/s HDR IB per node") == Approx(200));
    CHECK(detail::network_from_text("not stated") == 0);
    std::istringstream bad("gpu_type,num_layers,hidden,heads,ffn_hidden,vocab,seq_len,micro_batch,global_batch_seqs,dp,tp,pp,"
                           "tokens_per_s_per_gpu\na100-80g,32,lots,32,11008,32000,4096,1,64,8,1,1,3000\n");
    CHECK_THROWS_WITH(read_throughput_csv(bad, "user.csv"), Catch::Matchers::Contains("hidden=\"lots\" is not a number"));
}

TEST_CASE("a user file with the minimal columns is read, a missing column is named") {
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

TEST_CASE("acceptance: 5-fold median error <= 8%, every source's median signed error within +-10%") {
    // Out of sample: each fold is predicted by a fit on the other four (rows dealt in file order, so every fold
    // mixes sources). Targets of issue 11 on the shipped data.
    const auto rows = cross_validate(samples(), 5, neutral_start());
    REQUIRE(rows.size() == samples().size());
    std::printf("\n5-fold cross-validation: predicted vs measured tokens/s per GPU\n");
    std::printf("%-6s %-9s %-18s %-22s %5s %10s %10s %8s\n", "row", "gpu", "source", "model", "gpus", "measured", "predicted", "error");
    for (const auto& r : rows)
        std::printf("%-6s %-9s %-18.18s %-22.22s %5d %10.0f %10.0f %+7.1f%%\n", r.id.c_str(), r.gpu.c_str(), r.group.c_str(),
                    r.model.c_str(), r.gpus, r.measured, r.predicted, 100 * r.rel_error());
    const auto by_source = print_table("5-fold by source", rows, false);
    print_table("5-fold by regime", rows, true);
    std::vector<double> all;
    for (const auto& r : rows) all.push_back(std::abs(r.rel_error()));
    CHECK(median(all) <= 0.08);
    for (const auto& [g, s] : by_source) {
        INFO("source " << g);
        CHECK(std::abs(median(s.signed_)) <= 0.10);
    }
    // the shipped constants in sample meet the same targets
    std::vector<cv_row> fitted;
    for (const auto& s : samples()) fitted.push_back(detail::make_cv_row(s, default_efficiency(), gpu_catalog{}));
    const auto in = print_table("shipped constants, in sample, by source", fitted, false);
    std::vector<double> fa;
    for (const auto& r : fitted) fa.push_back(std::abs(r.rel_error()));
    CHECK(median(fa) <= 0.08);
    for (const auto& [g, s] : in) {
        INFO("source " << g);
        CHECK(std::abs(median(s.signed_)) <= 0.10);
    }
}

TEST_CASE("leave-one-source-out: each source predicted by a fit on the others (table in docs/perf-model.md)") {
    const auto& rows = loso_rows();
    REQUIRE(rows.size() == samples().size());
    const auto by_source = print_table("leave-one-source-out by source", rows, false);
    print_table("leave-one-source-out by regime", rows, true);
    std::vector<double> all;
    for (const auto& r : rows) all.push_back(std::abs(r.rel_error()));
    // regression guard on the measured 6.4% (docs/perf-model.md; 9.9% before the attention kernel was read per
    // row): a mechanism change that makes the model depend on its own source again shows up here first
    CHECK(median(all) <= 0.08);
    // the sources with their own chip in other sources stay within 15% median signed error; NeMo (the only fp8
    // source) and llm-foundry H100 (the only bf16 H100 source) are the extrapolations the bands account for
    for (const auto& [g, s] : by_source) {
        INFO("source " << g);
        if (g != "NeMo 24.07 H100") CHECK(std::abs(median(s.signed_)) <= 0.15);
    }
}

TEST_CASE("error bands cover the leave-one-source-out p90 of their regime") {
    std::map<std::string, std::vector<double>> by;
    for (const auto& r : loso_rows()) by[r.regime].push_back(std::abs(r.rel_error()));
    for (auto reg : {error_regime::context_parallel, error_regime::expert_parallel, error_regime::scaled_precision,
                     error_regime::pipeline, error_regime::tensor_parallel, error_regime::data_parallel}) {
        const std::string name = to_string(reg);
        INFO("regime " << name);
        if (by[name].size() < 5) {  // no or too few rows: the band is a stated prior, wider than any measured one
            CHECK(error_band(reg) >= 0.35);
            continue;
        }
        const double q = p90(by[name]);
        std::printf("band %-26s p90 %.3f band %.2f (%zu rows)\n", name.c_str(), q, error_band(reg), by[name].size());
        CHECK(error_band(reg) >= q);          // covers nine in ten
        CHECK(error_band(reg) <= std::max(q + 0.02, 0.10));  // the rounded-up p90 (floor 10%), not a loose guess
    }
    CHECK(error_band(error_regime::uncalibrated_chip) >= error_band(error_regime::scaled_precision));
}

TEST_CASE("GPU-type ordering is preserved for every model measured on several types") {
    const auto rows = cross_validate(samples(), 5, neutral_start());
    std::map<std::string, std::map<std::string, std::pair<double, double>>> sums;  // model -> gpu -> (meas, pred)
    std::map<std::string, std::map<std::string, int>> counts;
    for (const auto& r : rows) {
        auto& s = sums[r.model][r.gpu];
        s.first += r.measured;
        s.second += r.predicted;
        ++counts[r.model][r.gpu];
    }
    int compared = 0;
    for (const auto& entry : sums) {  // not a structured binding: clang 14 cannot capture one in a lambda
        const auto& model = entry.first;
        const auto& per = entry.second;
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
    CHECK(compared >= 10);  // 7 MPT sizes on A100-40G and H100 + 4 GPT sizes on V100 and A100
    for (const auto& a : rows)  // every V100/A100 pair of Megatron's 2020 table (same model, same GPU count)
        for (const auto& b : rows)
            if (a.model == b.model && a.gpus == b.gpus && a.gpu == "a100-40g" && b.gpu == "v100-32g") {
                CHECK(a.measured > b.measured);
                CHECK(a.predicted > b.predicted);
            }
}

TEST_CASE("the shipped coefficients are the fit on the shared data") {
    // Re-fitting from a neutral start must land within 1% of the constants in perf/detail/shipped_efficiency.hpp.
    const auto fit = fit_efficiency(samples(), neutral_start());
    const auto shipped = default_efficiency();
    for (const auto& c : fit.gpus) std::printf("fit %-6s inverse %.6f attention %.6f scaled %.6f te %.6f\n", c.gpu.c_str(), c.inverse, c.attention, c.scaled, c.te_attention);
    std::printf("fit weight traffic %.4f width %.4f attention %.6f ratio %.6f memory %.6f fp8 ratio %.6f default %.6f\n", fit.weight_traffic,
                fit.width_penalty, fit.attention_inverse, fit.attention_ratio, fit.memory_inverse, fit.fp8_ratio, fit.default_inverse);
    for (const auto& c : shipped.gpus) {
        INFO(c.gpu);
        REQUIRE(fit.has(c.gpu));
        CHECK(fit.gpu_inverse(c.gpu) == Approx(c.inverse).epsilon(0.01));
        CHECK(fit.gpu_attention_inverse(c.gpu) == Approx(shipped.gpu_attention_inverse(c.gpu)).epsilon(0.01));
        CHECK(fit.entry(std::string_view(c.gpu))->scaled == Approx(c.scaled).epsilon(0.01).margin(1e-9));
        CHECK(fit.entry(std::string_view(c.gpu))->te_attention == Approx(c.te_attention).epsilon(0.01).margin(1e-9));
    }
    CHECK(fit.weight_traffic == Approx(shipped.weight_traffic).epsilon(0.01));
    CHECK(fit.width_penalty == Approx(shipped.width_penalty).epsilon(0.01).margin(0.5));
    CHECK(fit.memory_inverse == Approx(shipped.memory_inverse).epsilon(0.01));
    CHECK(fit.attention_ratio == Approx(shipped.attention_ratio).epsilon(0.01));
    CHECK(fit.te_attention_ratio == Approx(shipped.te_attention_ratio).epsilon(0.01));
    CHECK(fit.fp8_ratio == Approx(shipped.fp8_ratio).epsilon(0.01));
    CHECK(fit.default_inverse == Approx(shipped.default_inverse).epsilon(0.01));
    // physical: large GEMMs never exceed peak, and reach 40-100% of it on datacenter GPUs; element-wise kernels
    // reach 25-100% of the memory bandwidth
    for (const auto& c : shipped.gpus) {
        CHECK(c.inverse >= 1.0);
        CHECK(c.inverse <= 2.5);
    }
    CHECK(shipped.memory_inverse >= 1.0);
    CHECK(shipped.memory_inverse <= 4.0);
}

TEST_CASE("calibration JSON round-trips and rejects unphysical values") {
    const auto e = default_efficiency();
    CHECK(efficiency_from_json(to_json(e)) == e);
    CHECK(to_json(e)["portable_attention_flops"] == 318e12);
    // fits from scratch do not see the portable-attention cap: it is read off gh100's fit (perf/efficiency.hpp)
    CHECK(neutral_start().portable_attention_flops == 0);
    auto j = to_json(e);
    j["gpus"][0]["inverse_efficiency"] = 0.5;
    CHECK_THROWS_WITH(efficiency_from_json(j), Catch::Matchers::Contains("inverse_efficiency must be at least 1"));
    j = to_json(e);
    j["memory_inverse_efficiency"] = 0.5;
    CHECK_THROWS_WITH(efficiency_from_json(j), Catch::Matchers::Contains("memory_inverse_efficiency must be at least 1"));
    j = to_json(e);
    j["bogus"] = 1;
    CHECK_THROWS_WITH(efficiency_from_json(j), Catch::Matchers::Contains("bogus is not a known field"));
}

TEST_CASE("Sailor profiles: inconsistent files are found, the consistent ones support the model's conventions") {
    const auto ps = load_sailor_profiles(std::string(FRENZY_DATA_DIR) + "/profiles/sailor");
    REQUIRE(ps.size() == 14);
    std::vector<std::string> bad;
    for (const auto& p : ps)
        if (!p.consistent()) bad.push_back(p.model + "/" + p.gpu_dir);
    // GPT-Neo-2.7/GH-96 holds OPT-350's 26 layers (a copied file); OPT-30/A100-40 was measured without tensor
    // cores (18 TFLOP/s, below the fp32 peak of 19.5) while the other A100-40 files reach 67-78 TFLOP/s
    CHECK(bad == std::vector<std::string>{"GPT-Neo-2.7/GH-96", "OPT-30/A100-40"});
    std::vector<double> ratio;  // backward = 2 x forward: median over consistent tp = 1 points
    for (const auto& p : ps)
        if (p.consistent())
            for (const auto& x : p.points)
                if (x.tp == 1 && x.forward > 0) ratio.push_back(x.backward / x.forward);
    CHECK(median(ratio) == Approx(2.4).margin(0.4));
    // A100-80G and A100-40G are one chip (ga100): sharing its coefficients needs their speeds within 10%
    CHECK(sailor_relative_speed(ps, "A100-80", "A100-40") == Approx(1.0).margin(0.1));
}

TEST_CASE("a user's few runs on one type fit that type's chip and keep the shared terms") {
    // synthetic measurements made by the model itself with c = 1.8 for the rtx-3090's chip (ga102): the fit must
    // recover 1.8 (to 1e-5: the data are exact) and leave the penalties, the default and the other chips as shipped
    efficiency_model truth = default_efficiency();
    truth.gpus.push_back({"ga102", 1.8, 0, "fit", 0});
    const gpu_catalog cat;
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
    CHECK(fit.inverse(cat.at("rtx-3090")) == Approx(1.8).epsilon(1e-5));
    CHECK(fit.inverse(cat.at("a10")) == Approx(1.8).epsilon(1e-5));  // same chip
    CHECK(fit.weight_traffic == shipped.weight_traffic);
    CHECK(fit.width_penalty == shipped.width_penalty);
    CHECK(fit.memory_inverse == shipped.memory_inverse);
    CHECK(fit.default_inverse == shipped.default_inverse);
    CHECK(fit.inverse(cat.at("a100-40g")) == shipped.inverse(cat.at("a100-40g")));
    // a start keyed by type name (an older calibration file) is fitted on that entry, which overrides the chip's
    efficiency_model named = default_efficiency();
    named.gpus.push_back({"rtx-3090", 1.5, 0, "fit", 0});
    const auto refit = fit_efficiency(runs, named);
    CHECK(refit.gpu_inverse("rtx-3090") == Approx(1.8).epsilon(1e-5));
    CHECK_FALSE(refit.has("ga102"));
}
