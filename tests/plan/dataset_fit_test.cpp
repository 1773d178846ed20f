// Data-aware fine-tuning (plan/dataset_fit.hpp, io/seq_lengths.hpp): the lengths file's forms and errors, and the
// peak over a dataset as batched, against the estimator at the same lengths and hand-derived step shares.
#include <catch2/catch.hpp>

#include <cmath>

#include "frenzy/hw/gpu.hpp"
#include "frenzy/io/seq_lengths.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/plan/dataset_fit.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace dataset_fit_test {

// Llama 3.1 8B LoRA on one 24 GB card, Hugging Face Trainer, cutoff 8192 tokens, micro-batch 2, 16 a step.
job_spec lora8b() {
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 8192, .micro_batch = 2, .global_batch = 16};
    j.training.finetune = {.method = finetune_method::lora, .rank = 16};
    j.runtime.framework = frameworks::hf::handle;
    j.parallel.recompute = recompute::full;
    return j;
}

// 90 samples of 512 tokens, 10 of 6000, 2 of 20000 (longer than the cutoff).
length_histogram lengths() { return parse_seq_lengths("tokens,count\n512,90\n6000,10\n20000,2\n", "h.csv"); }

}  // namespace dataset_fit_test

TEST_CASE("seq-lengths file: CSV columns, histograms and JSON Lines give the same lengths") {
    const auto column = parse_seq_lengths("300\n100\n300\n", "a.csv");
    REQUIRE(column.bins.size() == 2);
    CHECK(column.bins[0] == std::pair<std::int64_t, std::int64_t>{100, 1});
    CHECK(column.bins[1] == std::pair<std::int64_t, std::int64_t>{300, 2});
    CHECK(parse_seq_lengths("length,count\n300,2\n100,1\n", "b.csv").bins == column.bins);
    CHECK(parse_seq_lengths("300,2\n100,1\n", "c.csv").bins == column.bins);
    CHECK(parse_seq_lengths("{\"tokens\": 300, \"count\": 2}\n\n100\n", "d.jsonl").bins == column.bins);
    CHECK(parse_seq_lengths("{\"input_ids\": [1, 2, 3]}\n", "e.jsonl").bins.front().first == 3);
    CHECK(column.quantile(0.5) == 300);
    CHECK(column.at_most(200) == 1);
}

TEST_CASE("seq-lengths file: errors name the file, the line and the field") {
    CHECK_THROWS_WITH(parse_seq_lengths("tokens\n12\nx\n", "s.csv"), Contains("s.csv:3") && Contains("token count"));
    CHECK_THROWS_WITH(parse_seq_lengths("tokens\n0\n", "s.csv"), Contains("s.csv:2"));
    CHECK_THROWS_WITH(parse_seq_lengths("name,x\n1,2\n", "s.csv"), Contains("no token-count column"));
    CHECK_THROWS_WITH(parse_seq_lengths("{\"tokens\": 1.5}\n", "s.jsonl"), Contains("s.jsonl:1") && Contains("tokens"));
    CHECK_THROWS_WITH(parse_seq_lengths("{\"text\": \"hi\"}\n", "s.jsonl"), Contains("no token count"));
    CHECK_THROWS_WITH(parse_seq_lengths("{\"tokens\": 3\n", "s.jsonl"), Contains("not a JSON value"));
    CHECK_THROWS_WITH(parse_seq_lengths("  \n", "s.csv"), Contains("empty"));
    CHECK_THROWS_WITH(parse_seq_lengths("tokens,count\n5,0\n", "s.csv"), Contains("no sample"));
}

TEST_CASE("dataset fit: padded micro-batches, the longest batch and the steps at risk") {
    using namespace dataset_fit_test;
    const gpu_catalog catalog;
    const auto& g = catalog.at("rtx-4090");
    const auto j = lora8b();
    const auto h = lengths();
    const auto d = fit_dataset(j, h, batching::pad, g);
    CHECK(d.samples == 102);
    CHECK(d.truncated == 2);        // the two 20000-token samples are cut to the 8192 cutoff
    CHECK(d.longest == 8192);
    CHECK(d.p50 == 512);
    CHECK(d.longest_batch_length == 8192);
    // The longest batch is the job at its padded length (the estimator's own answer).
    CHECK(d.longest_batch.memory.peak_reserved == memory_estimator{}.estimate(detail::at_length(j, 8192)).peak_reserved);
    // fit_length is the boundary: the job fits there and not one token further.
    REQUIRE(d.fit_length > 512);
    REQUIRE(d.fit_length < 6000);
    CHECK(check_fit(memory_estimator{}.estimate(detail::at_length(j, d.fit_length)), g).fits);
    CHECK_FALSE(check_fit(memory_estimator{}.estimate(detail::at_length(j, d.fit_length + 1)), g).fits);
    // Random order: a step draws 16 samples and is safe when all are of 512 tokens: 1 - (90/102)^16.
    CHECK(d.steps_at_risk == Approx(1 - std::pow(90.0 / 102.0, 16)).epsilon(1e-12));

    SECTION("sorted: the 12 long samples fill 6 micro-batches of 2, at most one step each of the 6 steps") {
        const auto s = fit_dataset(j, h, batching::sorted, g);
        CHECK(s.steps_at_risk == Approx(1.0).epsilon(1e-12));  // 6 / floor(102 / 16) = 6 / 6
        const auto few = parse_seq_lengths("tokens,count\n512,300\n6000,3\n", "few.csv");
        // 3 long samples: ceil(3 / 2) = 2 micro-batches of floor(303 / 16) = 18 steps
        CHECK(fit_dataset(j, few, batching::sorted, g).steps_at_risk == Approx(2.0 / 18.0).epsilon(1e-12));
    }
    SECTION("packed: every micro-batch is micro_batch x seq_len") {
        const auto p = fit_dataset(j, h, batching::pack, g);
        CHECK(p.longest_batch_length == 8192);
        CHECK(p.steps_at_risk == 1);
        auto short_job = j;
        short_job.training.seq_len = 512;
        CHECK(fit_dataset(short_job, h, batching::pack, g).steps_at_risk == 0);
    }
}
