// Megatron's full-recompute units (--recompute-method uniform|block, --recompute-num-layers; megatron/core/
// transformer/transformer_block.py _checkpointed_forward @d98e8a64): which layers keep only their input, how many
// inputs are kept, how much one unit rebuilds, and what that does to activations, step time, FLOPs, the Megatron
// importer and the launch arguments. Every expected value is derived by hand from the layer terms, which
// activations_test.cpp checks against Korthikanti et al. 2022; exact arithmetic, so the tolerance is round-off.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "frenzy/io/job_json.hpp"
#include "frenzy/frameworks/megatron/import.hpp"
#include "frenzy/launch/launch.hpp"
#include "frenzy/memory/activations.hpp"
#include "frenzy/perf/step_time.hpp"

using namespace frenzy;

namespace {
// The paper's 22B GPT at tp 8 with 8 layers per pipeline stage (pp 2, 16 layers), one micro-batch per step so that
// every stage holds one micro-batch at its peak.
job_spec gpt(std::int64_t layers = 16, std::int64_t pp = 2) {
    job_spec j;
    j.model = {.name = "gpt", .layers = layers, .hidden = 6144, .heads = 64, .ffn_hidden = 24576, .vocab = 51200};
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 1, .precision = precision::bf16_mixed};
    j.parallel = {.tp = 8, .pp = pp, .sequence_parallel = true, .recompute = recompute::full};
    j.runtime = {.framework = frameworks::megatron::handle, .attention = attention_impl::flash};
    return j;
}
stage_layout stage0(const job_spec& j) { return stage_layouts(j, profile_of(j)).front(); }
double stored(const job_spec& j) { return transformer_activations{}.activations(j, stage0(j), profile_of(j)).stored.value; }
double transient(const job_spec& j) { return transformer_activations{}.activations(j, stage0(j), profile_of(j)).transient.value; }
}  // namespace

TEST_CASE("full_recompute_of: units per chunk, uniform and block") {
    auto j = gpt();  // stage 0: 8 layers, one chunk
    auto c = full_recompute_of(j, stage0(j));
    CHECK(c.checkpointed == 8);  // uniform 1: every layer, 8 inputs, one layer rebuilt at a time
    CHECK(c.inputs == 8);
    CHECK(c.unit_layers == 1);
    j.parallel.recompute_layers = 3;  // uniform 3: groups [0,3) [3,6) [6,8): 3 inputs, up to 3 layers rebuilt at once
    c = full_recompute_of(j, stage0(j));
    CHECK(c.checkpointed == 8);
    CHECK(c.inputs == 3);
    CHECK(c.unit_layers == 3);
    j.parallel.recompute_method = recompute_method::block;  // block 3: layers 0-2 checkpointed, 3-7 keep everything
    c = full_recompute_of(j, stage0(j));
    CHECK(c.checkpointed == 3);
    CHECK(c.inputs == 3);
    CHECK(c.unit_layers == 1);
    j.parallel.recompute_layers = 20;  // more than the chunk has: all 8 (Megatron's range check aside)
    CHECK(full_recompute_of(j, stage0(j)).checkpointed == 8);
    // Interleaved: 16 layers, pp 2, vpp 2 -> 4 layers per chunk, 2 chunks per rank: block 3 checkpoints 3 of each.
    j = gpt();
    j.parallel.vpp = 2;
    j.parallel.schedule = pipeline_schedule::interleaved;
    j.training.global_batch = 2;  // interleaving needs micro-batches that fill the pipeline (m >= pp)
    j.parallel.recompute_method = recompute_method::block;
    j.parallel.recompute_layers = 3;
    CHECK(full_recompute_of(j, stage0(j)).checkpointed == 6);
    // The embedding's slot (--account-for-embedding-in-pipeline-split): 15 layers + embedding over pp 2 -> rank 0
    // holds 7 layers in a chunk of 8 slots; block 8 checkpoints those 7.
    j = gpt(15);
    j.parallel.embedding_stage = true;
    j.parallel.recompute_method = recompute_method::block;
    j.parallel.recompute_layers = 8;
    REQUIRE(stage0(j).layers == 7);
    CHECK(full_recompute_of(j, stage0(j)).checkpointed == 7);
    // Not full recompute: nothing is checkpointed.
    j = gpt();
    j.parallel.recompute = recompute::selective;
    CHECK(full_recompute_of(j, stage0(j)).checkpointed == 0);
}

TEST_CASE("activations: block keeps the rest of the chunk, uniform groups keep one input per group") {
    auto j = gpt();
    const auto f = profile_of(j);
    const auto layer = layer_activations(j, f, false);
    const double N = layer.none, F = layer.full;
    const double base = stored(j);  // uniform 1: 8 inputs + the stage's extras
    // block 3: layers 3-7 keep everything instead of their input: +5 (N - F).
    j.parallel.recompute_method = recompute_method::block;
    j.parallel.recompute_layers = 3;
    CHECK(stored(j) == Approx(base + 5 * (N - F)).epsilon(1e-12));
    // uniform 3: 3 inputs instead of 8 (-5 F); the backward rebuilds 3 layers at once: 3 N - F + largest.
    j.parallel.recompute_method = recompute_method::uniform;
    CHECK(stored(j) == Approx(base - 5 * F).epsilon(1e-12));
    CHECK(transient(j) == Approx(std::max(3 * N - F + layer.largest, 0.0)).epsilon(1e-12));
    // uniform 1 rebuilds one layer: N - F + largest (the stage is not the last: no loss transient).
    j.parallel.recompute_layers = 1;
    CHECK(transient(j) == Approx(N - F + layer.largest).epsilon(1e-12));
}

TEST_CASE("step time and FLOPs: block recomputes only its checkpointed layers") {
    auto j = gpt();
    j.parallel.pp = 1;  // 16 layers on one stage: block 4 recomputes 4 of 16
    j.model.layers = 16;
    const gpu_catalog cat;
    const auto& g = cat.at("h100-80g");
    const topology topo{8, 50};
    auto dense_flops = [&](const job_spec& x) { return step_time_model{}.predict(x, g, topo).parts.dense_flops_mb; };
    const double full = dense_flops(j);
    auto none = j;
    none.parallel.recompute = recompute::none;
    const double plain = dense_flops(none);
    auto block = j;
    block.parallel.recompute_method = recompute_method::block;
    block.parallel.recompute_layers = 4;
    // The recomputed forward is one more forward of the recomputed layers (not of the logits): a quarter of it.
    CHECK(dense_flops(block) == Approx(plain + 0.25 * (full - plain)).epsilon(1e-12));
    // Whole-job FLOPs: the recompute term scales the same way.
    CHECK(step_flops(block).recompute.value == Approx(0.25 * step_flops(j).recompute.value).epsilon(1e-12));
    CHECK(step_flops(block).model().value == Approx(step_flops(j).model().value).epsilon(1e-12));
}

TEST_CASE("job JSON, validation, Megatron import and launch arguments carry the unit") {
    const auto parsed = job_from_json(nlohmann::json::parse(R"({"model": {"preset": "llama-3.1-8b"},
        "parallel": {"recompute": "full", "recompute_method": "block", "recompute_layers": 2}})"));
    CHECK(parsed.job.parallel.recompute_method == recompute_method::block);
    CHECK(parsed.job.parallel.recompute_layers == 2);
    CHECK(to_json(parsed.job.parallel)["recompute_method"] == "block");
    CHECK(to_json(parsed.job.parallel)["recompute_layers"] == 2);
    // Stating the unit without recompute full is a contradiction Megatron also rejects for selective.
    CHECK_THROWS_WITH(job_from_json(nlohmann::json::parse(R"({"model": {"preset": "llama-3.1-8b"},
        "parallel": {"recompute": "selective", "recompute_layers": 2}})")),
                      Catch::Contains("parallel.recompute_layers=2") && Catch::Contains("needs parallel.recompute=\"full\""));
    // A unit stated with the layout left to the planner keeps the planner at recompute full.
    const auto planned = job_from_json(nlohmann::json::parse(R"({"model": {"preset": "llama-3.1-8b"},
        "parallel": {"recompute": "full", "recompute_layers": 4}})"));
    REQUIRE(planned.stated.recompute.has_value());
    CHECK(*planned.stated.recompute == recompute::full);

    const std::vector<std::string> args{"--num-layers", "32", "--hidden-size", "4096", "--num-attention-heads", "32",
                                        "--seq-length", "4096", "--max-position-embeddings", "4096", "--micro-batch-size",
                                        "1", "--bf16", "--recompute-granularity", "full", "--recompute-method", "block",
                                        "--recompute-num-layers", "4", "--vocab-size", "32000"};
    const auto imported = megatron_import_arguments(args, {}, 8);
    CHECK(imported.job.parallel.recompute == recompute::full);
    CHECK(imported.job.parallel.recompute_method == recompute_method::block);
    CHECK(imported.job.parallel.recompute_layers == 4);
    // Without full granularity Megatron does not use them: listed as ignored, the job keeps the defaults.
    auto selective = args;
    selective[14] = "selective";
    const auto ignored = megatron_import_arguments(selective, {}, 8);
    CHECK(ignored.job.parallel.recompute_method == recompute_method::uniform);
    CHECK(std::count_if(ignored.ignored.begin(), ignored.ignored.end(),
                        [](const std::string& s) { return s.find("--recompute-num-layers 4 (without") == 0; }) == 1);
    // The launch writes them back.
    const auto a = frameworks::megatron::arguments(imported.job);
    CHECK(std::find(a.begin(), a.end(), "--recompute-method block") != a.end());
    CHECK(std::find(a.begin(), a.end(), "--recompute-num-layers 4") != a.end());
}
