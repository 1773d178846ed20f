// The job's geometry (train/geometry.hpp): tokens per GPU, the position table, the vocabulary padding and the
// pipeline stages, checked on hand-derived values.
#include <catch2/catch.hpp>

#include <numeric>

#include "frenzy/model/presets.hpp"
#include "frenzy/train/geometry.hpp"

using namespace frenzy;

namespace {
job_spec geometry_job(std::int64_t seq, std::int64_t cp, std::int64_t micro_batch) {
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = seq, .micro_batch = micro_batch, .global_batch = 64};
    j.parallel = {.dp = 1, .cp = cp};
    return j;
}
std::vector<std::int64_t> stage_field(const job_spec& j, std::int64_t stage_layout::*field) {
    std::vector<std::int64_t> out;
    for_each_stage(j, [&](const stage_layout& l) { out.push_back(l.*field); });
    return out;
}
}  // namespace

TEST_CASE("local tokens: the sequence split by cp, times the micro-batch") {
    // seq 8192 over cp 2 = 4096 positions per GPU; x micro-batch 2 = 8192 tokens
    const auto j = geometry_job(8192, 2, 2);
    CHECK(local_sequence(j) == 4096);
    CHECK(local_tokens(j) == 8192.0);
    CHECK(local_tokens(geometry_job(4096, 1, 3)) == 12288.0);  // no cp: the whole sequence, 3 micro-batch rows
    CHECK(local_sequence(geometry_job(131072, 8, 1)) == 16384);
}

TEST_CASE("position table: the model's max_positions, else the training sequence length") {
    auto j = geometry_job(2048, 1, 1);
    j.model.position_embedding = position_embedding::learned;
    j.model.max_positions = 4096;
    CHECK(position_table_length(j) == 4096);  // trained at 2048, the table keeps its 4096 rows
    j.model.max_positions = 0;
    CHECK(position_table_length(j) == 2048);  // no stated table: one row per trained position
    CHECK(position_table_length(j.model, 1024) == 1024);
}

TEST_CASE("vocabulary padded to a multiple of the framework's unit x tp") {
    auto j = geometry_job(4096, 1, 1);
    j.model.vocab = 50257;
    j.parallel.tp = 2;
    CHECK(tp_padded_vocab(j, 128) == 50432);  // multiple of 256: 197 x 256
    CHECK(tp_padded_vocab(j, 1) == 50258);    // multiple of 2
    j.parallel.tp = 1;
    CHECK(tp_padded_vocab(j, 1) == 50257);    // unpadded
}

TEST_CASE("stages: layers, first/last flags and chunk slots per pipeline rank") {
    auto j = geometry_job(4096, 1, 1);
    j.model.layers = 8;
    j.parallel.pp = 2;
    j.parallel.vpp = 2;
    CHECK(stage_field(j, &stage_layout::layers) == std::vector<std::int64_t>{4, 4});
    CHECK(stage_field(j, &stage_layout::chunk_slots) == std::vector<std::int64_t>{2, 2});
    std::vector<int> firsts, lasts;
    for_each_stage(j, [&](const stage_layout& l) {
        firsts.push_back(l.first);
        lasts.push_back(l.last);
        CHECK(l.params() == 0);  // the shape alone: parameters come with for_each_stage_layout
    });
    CHECK(firsts == std::vector<int>{1, 0});
    CHECK(lasts == std::vector<int>{0, 1});

    // Megatron's uneven split: 2 layers first, 2 last, the 6 others on the middle stage
    j.model.layers = 10;
    j.parallel = {.dp = 1, .pp = 3, .first_stage_layers = 2, .last_stage_layers = 2};
    CHECK(stage_field(j, &stage_layout::layers) == std::vector<std::int64_t>{2, 6, 2});
    CHECK(stage_layer_count(j, 1) == 6);

    // embedding and loss each take a layer slot: (6 + 2) / 2 = 4 slots per rank, 3 layers each
    j.model.layers = 6;
    j.parallel = {.dp = 1, .pp = 2, .embedding_stage = true, .loss_stage = true};
    CHECK(stage_field(j, &stage_layout::layers) == std::vector<std::int64_t>{3, 3});
    CHECK(stage_field(j, &stage_layout::chunk_slots) == std::vector<std::int64_t>{4, 4});
}

TEST_CASE("stages: the MoE layers each rank's virtual chunks hold") {
    auto j = geometry_job(4096, 1, 1);
    j.model.layers = 8;
    j.model.moe.experts = 8;
    j.model.moe.top_k = 2;
    j.model.moe.dense_layers = 2;  // layers 0 and 1 dense, 2..7 MoE
    j.parallel.pp = 2;
    j.parallel.vpp = 2;
    // rank 0 holds layers [0,1] and [4,5] (2 MoE), rank 1 holds [2,3] and [6,7] (4 MoE)
    CHECK(stage_field(j, &stage_layout::moe_layers) == std::vector<std::int64_t>{2, 4});
}

TEST_CASE("stage parameters add up to the model's, and the shapes match for_each_stage's") {
    auto j = geometry_job(4096, 1, 1);
    j.model.tied_embeddings = false;
    j.parallel.pp = 4;
    const auto ls = stage_layouts(j, 1);
    REQUIRE(ls.size() == 4);
    const double sum = std::accumulate(ls.begin(), ls.end(), 0.0, [](double a, const stage_layout& l) { return a + l.params(); });
    CHECK(sum == Approx(total_parameters(j.model, j.training.seq_len)).epsilon(1e-12));
    CHECK(stage_field(j, &stage_layout::layers) == std::vector<std::int64_t>{8, 8, 8, 8});
    // padding the vocabulary adds its rows to the first (embedding) and last (output layer) stages only
    const auto padded = stage_layouts(j, 128 * 1000);
    CHECK(padded[1].params() == ls[1].params());
    CHECK(padded[0].params() > ls[0].params());
    CHECK(padded[3].params() > ls[3].params());
}
