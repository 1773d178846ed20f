// Megatron-Core mechanisms of issue 10, each against a hand derivation written next to it: uneven pipeline splits
// and embedding/loss stages (megatron/core/transformer/transformer_block.py get_num_layers_to_build and
// transformer_layer.py get_transformer_layer_offset @d98e8a64), expert tensor parallelism, Megatron-FSDP buffers,
// MoE expert tokens under sequence/expert tensor parallelism, the interleaved schedule's loss counted once, and the
// reading of these options from a measured table's other_flags and from a job JSON.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "frenzy/io/job_json.hpp"
#include "frenzy/io/measurements_csv.hpp"
#include "frenzy/memory/estimator.hpp"

using namespace frenzy;

namespace {
job_spec dense(std::int64_t layers, std::int64_t pp) {
    job_spec j;
    j.model = {.name = "m", .layers = layers, .hidden = 256, .heads = 4, .ffn_hidden = 1024, .vocab = 1024};
    j.training = {.seq_len = 128, .micro_batch = 1, .global_batch = 16};
    j.parallel = {.pp = pp};
    return j;
}
std::vector<std::int64_t> layers_of(const job_spec& j) {
    std::vector<std::int64_t> out;
    for (const auto& l : stage_layouts(j, profile_of(j))) out.push_back(l.layers);
    return out;
}
}  // namespace

TEST_CASE("126 layers over pp 8: uneven last stage, or embedding and loss as stages") {
    auto j = dense(126, 8);
    CHECK_THROWS_WITH(validate(j), Catch::Contains("model.layers=126") && Catch::Contains("parallel.pp=8"));
    // --decoder-last-pipeline-num-layers 14: the other 7 stages share 112 = 7 x 16.
    j.parallel.last_stage_layers = 14;
    REQUIRE_NOTHROW(validate(j));
    CHECK(layers_of(j) == std::vector<std::int64_t>{16, 16, 16, 16, 16, 16, 16, 14});
    // --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split: (126 + 2) / 8 = 16 slots per
    // stage; the first builds 15 layers (embedding in the 16th slot), the last 15 (loss).
    j.parallel.last_stage_layers = 0;
    j.parallel.embedding_stage = j.parallel.loss_stage = true;
    REQUIRE_NOTHROW(validate(j));
    CHECK(layers_of(j) == std::vector<std::int64_t>{15, 16, 16, 16, 16, 16, 16, 15});
    // Megatron rejects both at once, and a split that leaves the middle stages uneven.
    j.parallel.last_stage_layers = 14;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("embedding_stage"));
    j.parallel.embedding_stage = j.parallel.loss_stage = false;
    j.parallel.last_stage_layers = 13;  // 113 over 7 stages
    CHECK_THROWS_WITH(validate(j), Catch::Contains("parallel.last_stage_layers=13"));
}

TEST_CASE("uneven split with virtual stages: chunk placement decides which layers are MoE") {
    // 30 layers, pp 4, vpp 2, first stage 6, last 8 -> middle stages (30 - 14) / 2 = 8; chunks of 3, 4, 4, 4
    // layers, a round of chunks = 15 layers. Rank 0: [0-2] [15-17]; rank 1: [3-6] [18-21]; rank 2: [7-10] [22-25];
    // rank 3: [11-14] [26-29]. With the first 5 layers dense: rank 0 has 3 MoE layers (15-17), rank 1 has
    // 2 (5, 6) + 4 = 6, ranks 2 and 3 have 8.
    auto j = dense(30, 4);
    j.model.moe = {.experts = 4, .top_k = 1, .dense_layers = 5};
    j.parallel.vpp = 2;
    j.parallel.schedule = pipeline_schedule::interleaved;
    j.parallel.first_stage_layers = 6;
    j.parallel.last_stage_layers = 8;
    j.training.global_batch = 8;
    REQUIRE_NOTHROW(validate(j));
    const auto ls = stage_layouts(j, profile_of(j));
    CHECK(layers_of(j) == std::vector<std::int64_t>{6, 8, 8, 8});
    CHECK(ls[0].moe_layers == 3);
    CHECK(ls[1].moe_layers == 6);
    CHECK(ls[2].moe_layers == 8);
    CHECK(ls[3].moe_layers == 8);
    // A first-stage count that does not split over the virtual stages is rejected.
    j.parallel.first_stage_layers = 5;
    j.parallel.last_stage_layers = 9;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("parallel.first_stage_layers=5") && Catch::Contains("parallel.vpp=2"));
}

TEST_CASE("expert tensor parallelism splits each expert, and the expert data-parallel group is dp*cp*tp/(ep*etp)") {
    job_spec j;
    j.model = {.name = "moe", .layers = 2, .hidden = 512, .heads = 8, .ffn_hidden = 2048, .vocab = 1024,
               .bias = false, .moe = {.experts = 8, .top_k = 2}};
    j.training = {.seq_len = 256, .micro_batch = 1, .global_batch = 4, .precision = precision::bf16_mixed};
    j.parallel = {.dp = 4, .tp = 2, .ep = 4, .sequence_parallel = true, .sharding = sharding::optimizer, .etp = 1};
    REQUIRE_NOTHROW(validate(j));
    const auto f = profile_of(j);
    const auto l = stage_layouts(j, f).at(0);
    // GELU expert without bias: 2 x 512 x 2048 parameters, whole on each GPU (etp 1); 8 / ep 4 = 2 local experts.
    CHECK(l.expert_params == Approx(2.0 * 2 * (2.0 * 512 * 2048)));
    const auto s = sharded_model_states{}.model_states(j, l, f);
    // Distributed optimizer, 12 bytes: dense over dp x cp = 4, experts over 4 x 2 / (4 x 1) = 2.
    CHECK(s.optimizer.value == Approx(12 * (l.dense_params / 4 + l.expert_params / 2)));
    // ep x etp must divide dp x cp x tp: 4 x 2 does not divide 4 x 1 x 1.
    j.parallel.tp = 1;
    j.parallel.sequence_parallel = false;
    j.parallel.etp = 2;
    CHECK_THROWS_WITH(validate(j), Catch::Contains("parallel.ep=4") && Catch::Contains("etp=2"));
}

TEST_CASE("MoE expert activations count the tokens a GPU receives under sp and etp (hand derivation)") {
    job_spec j;
    j.model = {.name = "moe", .layers = 2, .hidden = 512, .heads = 8, .ffn_hidden = 2048, .vocab = 1024,
               .moe = {.experts = 8, .top_k = 1}};
    j.training = {.seq_len = 1024, .micro_batch = 4, .global_batch = 16};
    j.parallel = {.dp = 4, .tp = 2, .ep = 2, .sequence_parallel = true};
    const auto f = profile_of(frameworks::megatron::handle);
    const double moe = layer_activations(j, f, true).none;
    const double dense = layer_activations(j, f, false).none;
    // s*b = 4096 tokens, tp 2 + SP: 2048 per GPU; gathered over etp = 2 and routed top-1: T = 4096 x 1.4 imbalance.
    // MoE MLP: router input 2 x 2048 x 512, fp32 scores+probs 8 x 2048 x 8, expert input 2 T 512,
    // fc1 output 2 T 2048 / etp, activation output and its product with the probs 2 x 2 T 2048 / etp.
    // Dense MLP (tp 2 + SP): fc1 input 2 x 2048 x 512, fc1 output + GELU output 2 x 2 x 4096 x 2048 / 2.
    const double T = 4096 * f.moe_imbalance;
    const double moe_mlp = 2.0 * 2048 * 512 + 8.0 * 2048 * 8 + 2 * T * 512 + 2 * T * 1024 + 2 * 2 * T * 1024;
    const double dense_mlp = 2.0 * 2048 * 512 + 2 * 2 * 4096.0 * 1024;
    CHECK(moe - dense == Approx(moe_mlp - dense_mlp).epsilon(1e-12));
}

TEST_CASE("Megatron-FSDP shards 16-bit weights and grads and the fp32 optimizer, and gathers one unit at a time") {
    auto j = dense(8, 1);
    j.parallel = {.dp = 8, .sharding = sharding::full};
    j.training.global_batch = 8;
    j.training.precision = precision::bf16_mixed;
    j.training.optimizer = optimizer_kind::adam;
    REQUIRE_NOTHROW(validate(j));  // framework megatron + sharding full is Megatron-FSDP
    const auto f = profile_of(j);
    const auto l = stage_layouts(j, f).at(0);
    const auto s = sharded_model_states{}.model_states(j, l, f);
    // optim_grads_params: bf16 weights 2/8, main grads in the model dtype 2/8, fp32 main params + Adam 12/8 bytes.
    CHECK(s.weights.value == Approx(2 * l.params() / 8));
    CHECK(s.gradients.value == Approx(2 * l.params() / 8));
    CHECK(s.optimizer.value == Approx(12 * l.params() / 8));
    // Temporaries: 2 gathered units (current + prefetch) of 2 bytes and one unit's unsharded bf16 param + grad.
    // The largest unit is the 1024 x 256 embedding (262144) vs a layer (12 x 256^2 + biases/norms ~ 790k).
    const auto o = framework_overheads{}.temporaries(j, l, f, s);
    const double layer = (l.params() - 1024.0 * 256 - 128.0 * 256) / 8;  // untied head on the same stage (pp 1)
    const double unit = std::max(layer, 1024.0 * 256);
    CHECK(o.train.value == Approx(f.workspace_bytes + 2 * 2 * unit + (2 + 2) * unit).epsilon(0.02));
}

TEST_CASE("interleaved: the last stage stores 9 one-layer chunk forwards and the loss of one micro-batch") {
    // measured_more.csv row 45's layout: 12 layers, pp 4, vpp 3, m = 4.
    auto j = dense(12, 4);
    j.parallel.vpp = 3;
    j.parallel.schedule = pipeline_schedule::interleaved;
    j.training.global_batch = 4;
    j.model.tied_embeddings = true;
    const auto f = profile_of(j);
    const auto ls = stage_layouts(j, f);
    const auto a = transformer_activations{}.activations(j, ls.back(), f);
    const double layer = layer_activations(j, f, false).none;
    // Last stage extras per micro-batch: final norm in/out 2 x 2 sbh + fp32 softmax 4 s b V (sb = 128, h 256,
    // V = 1024 padded to 128: 1024).
    const double extra = 2 * 2.0 * 128 * 256 + 4.0 * 128 * 1024;
    CHECK(a.stored.value == Approx(9 * layer + 1 * extra));
    CHECK(a.in_flight == Approx(3.0));
}

TEST_CASE("interleaved with a loss stage: the lighter or heavier loss chunk is counted as the schedule holds it") {
    // 15 layers + loss stage over pp 4 x vpp 2: 16 slots, 2 per chunk; the last rank's chunk 1 builds 1 layer and
    // the loss. m = 8: last rank W = 0 + 1 x 4 = 4 -> 5 live chunk forwards: 4 of chunk 0 (2 layers each) and the
    // loss chunk's 1 (1 layer + loss) at the peak step when the loss is heavier than a layer.
    auto j = dense(15, 4);
    j.model.vocab = 8192;
    j.parallel.vpp = 2;
    j.parallel.schedule = pipeline_schedule::interleaved;
    j.parallel.loss_stage = true;
    j.training.global_batch = 8;
    REQUIRE_NOTHROW(validate(j));
    const auto f = profile_of(j);
    const auto ls = stage_layouts(j, f);
    REQUIRE(ls.back().layers == 3);
    REQUIRE(ls.back().chunk_slots == 2);
    const double layer = layer_activations(j, f, false).none;
    const double loss = 2 * 2.0 * 128 * 256 + 4.0 * 128 * 8192;  // final norm in/out + fp32 softmax
    REQUIRE(loss > layer);
    const auto a = transformer_activations{}.activations(j, ls.back(), f);
    CHECK(a.stored.value == Approx(4 * 2 * layer + 1 * (layer + loss)));
    // With a small vocabulary the loss chunk is lighter than a 2-layer chunk: the peak step is one without it
    // (m = 8 > pp: the 1F1B phase passes steps with no loss forward alive), 5 chunks of 2 layers.
    j.model.vocab = 128;
    const double small_loss = 2 * 2.0 * 128 * 256 + 4.0 * 128 * 128;
    REQUIRE(small_loss < layer);
    const auto b = transformer_activations{}.activations(j, stage_layouts(j, f).back(), f);
    CHECK(b.stored.value == Approx(5 * 2 * layer));
}

TEST_CASE("Megatron options are read from a measured table's other_flags") {
    const auto path = std::filesystem::temp_directory_path() / "frenzy_megatron_flags_test.csv";
    {
        std::ofstream out(path);
        out << "id,value_type,framework,model,layers,hidden,heads,kv_heads,ffn_hidden,mlp_act,vocab_padded,tied_emb,"
               "seq_len,micro_batch,global_batch,dp,tp,pp,vpp,cp,ep,seq_parallel,sharding,recompute,precision,peak_GiB,"
               "metric,other_flags\n";
        out << "1,measured,Megatron-Core,moe,16,512,8,8,2048,GELU,50432,yes,1024,4,32,4,2,1,,1,,yes,distributed optimizer,"
               "none,bf16,2.0,max_memory_allocated,\"--num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 2 "
               "--expert-tensor-parallel-size 1 --moe-grouped-gemm, alltoall\"\n";
        out << "2,measured,Megatron-Core,dense,126,512,8,8,2048,GELU,50432,yes,1024,1,64,1,1,8,,1,1,no,"
               "Megatron-FSDP optim_grads_params,none,bf16,3.0,max_memory_allocated,"
               "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split\n";
    }
    const auto rows = read_memory_measurements(path.string());
    std::filesystem::remove(path);
    REQUIRE(rows.size() == 2);
    const auto& moe = rows[0].job;
    CHECK(moe.model.moe.experts == 8);
    CHECK(moe.model.moe.top_k == 2);
    CHECK(moe.parallel.ep == 2);
    CHECK(moe.parallel.etp == 1);
    CHECK(moe.parallel.grouped_gemm);
    CHECK(moe.parallel.dispatcher == moe_dispatcher::alltoall);
    const auto& fsdp = rows[1].job;
    CHECK(fsdp.parallel.sharding == sharding::full);
    CHECK(fsdp.parallel.embedding_stage);
    CHECK(fsdp.parallel.loss_stage);
}

TEST_CASE("job JSON reads and writes the new parallel fields") {
    const auto j = job_from_json(nlohmann::json::parse(R"({
        "model": {"name": "m", "layers": 126, "hidden": 256, "heads": 4, "ffn_hidden": 1024, "vocab": 1024},
        "training": {"seq_len": 128, "micro_batch": 1, "global_batch": 16},
        "parallel": {"pp": 8, "last_stage_layers": 14}})"));
    CHECK(j.job.parallel.last_stage_layers == 14);
    const auto back = job_from_json(to_json(j.job));
    CHECK(back.job.parallel == j.job.parallel);
    CHECK_THROWS_WITH(job_from_json(nlohmann::json::parse(R"({
        "model": {"name": "m", "layers": 126, "hidden": 256, "heads": 4, "ffn_hidden": 1024, "vocab": 1024},
        "training": {"seq_len": 128, "micro_batch": 1, "global_batch": 16},
        "parallel": {"pp": 8, "first_stage_layers": -1}})")),
                      Catch::Contains("parallel.first_stage_layers=-1"));
}

TEST_CASE("the uncertainty band grows with the mechanisms a job uses") {
    auto j = dense(16, 4);
    const memory_estimator est;
    const double base = est.estimate(j).uncertainty;
    CHECK(base == Approx(uncertainty_band{}.base));
    j.parallel.vpp = 2;
    j.parallel.schedule = pipeline_schedule::interleaved;
    CHECK(est.estimate(j).uncertainty == Approx(base + uncertainty_band{}.interleaved));
    j.model.moe = {.experts = 4, .top_k = 2};
    CHECK(est.estimate(j).uncertainty == Approx(base + uncertainty_band{}.interleaved + uncertainty_band{}.moe));
}

TEST_CASE("grouped-GEMM experts add Transformer Engine's 4 per-stream cuBLAS workspaces") {
    job_spec j;
    j.model = {.name = "moe", .layers = 2, .hidden = 512, .heads = 8, .ffn_hidden = 2048, .vocab = 1024,
               .moe = {.experts = 8, .top_k = 2}};
    j.training = {.seq_len = 256, .micro_batch = 1, .global_batch = 2};
    j.parallel = {.dp = 2, .ep = 2};
    const auto f = profile_of(j);
    const auto l = stage_layouts(j, f).at(0);
    const auto s = sharded_model_states{}.model_states(j, l, f);
    const double sequential = framework_overheads{}.temporaries(j, l, f, s).train.value;
    j.parallel.grouped_gemm = true;
    const double grouped = framework_overheads{}.temporaries(j, l, f, s).train.value;
    // 4 compute streams x (32 MiB + 1 KiB), TransformerEngine cpp_extensions/gemm.py.
    CHECK(grouped - sequential == Approx(4 * (32.0 * 1024 * 1024 + 1024)));
}

TEST_CASE("the allgather dispatcher keeps one global buffer of the tokens gathered over etp x ep") {
    job_spec j;
    j.model = {.name = "moe", .layers = 2, .hidden = 512, .heads = 8, .ffn_hidden = 2048, .vocab = 1024,
               .moe = {.experts = 8, .top_k = 1}};
    j.training = {.seq_len = 1024, .micro_batch = 4, .global_batch = 16};
    j.parallel = {.dp = 4, .tp = 2, .ep = 2, .sequence_parallel = true, .dispatcher = moe_dispatcher::alltoall};
    const auto f = profile_of(j);
    const auto l = stage_layouts(j, f).at(0);
    const auto s = sharded_model_states{}.model_states(j, l, f);
    const double alltoall = framework_overheads{}.temporaries(j, l, f, s).train.value;
    j.parallel.dispatcher = moe_dispatcher::allgather;
    const double allgather = framework_overheads{}.temporaries(j, l, f, s).train.value;
    // One global buffer "mpu" (megatron/core/utils.py GlobalMemoryBuffer), sized by its largest request. alltoall:
    // only the LM head's gathered input under SP, 4096 tokens x 512 x 2 bytes. allgather: the dispatcher's
    // 4096 tokens / tp 2 x (etp 2 x ep 2) = 8192 tokens x 512 x 2 bytes (measured_more.csv row 46's layout), the
    // larger of the two, so the buffer is that size.
    CHECK(alltoall - f.workspace_bytes == Approx(4096.0 * 512 * 2));
    CHECK(allgather - f.workspace_bytes == Approx(8192.0 * 512 * 2));
}
