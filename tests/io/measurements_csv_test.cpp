// Reading tables of measured runs: column mapping, cumulative flags, rows MARP cannot represent.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "frenzy/io/measurements_csv.hpp"

using namespace frenzy;

namespace {
std::string write_temp(const std::string& name, const std::string& text) {
    const std::string path = std::string("measurements_") + name + ".csv";
    std::ofstream(path) << text;
    return path;
}
const char* header =
    "id,value_type,framework,model,layers,hidden,heads,kv_heads,ffn_hidden,mlp_act,vocab_padded,tied_emb,seq_len,"
    "micro_batch,global_batch,num_gpus,dp,tp,pp,vpp,cp,ep,seq_parallel,sharding,recompute,attention_impl,precision,"
    "optimizer,gpu,peak_GiB,peak_bytes,metric,rank_measured,other_flags,source,confidence,notes\n";
}  // namespace

TEST_CASE("columns map onto the job, the metric and the stage") {
    const auto path = write_temp("map", std::string(header) +
        "7,measured,Megatron-Core,toy,12,512,8,8,2048,GELU,50304,yes,1024,4,32,8,4,1,2,,1,1,no,"
        "\"distributed optimizer (ZeRO-1)\",full,TE,bf16,Adam,H100,3.0,,\"max_memory_allocated\",last rank,,src,high,"
        "\"peak dominated by unfused attention\"\n"
        "8,computed (formula),paper,x,,,,,,,,,,,,,,,,,,,,,,,,,,1.0,,,,,src,,\n");
    const auto rows = read_memory_measurements(path);
    REQUIRE(rows.size() == 1);  // the formula row is not a measurement
    const auto& m = rows[0];
    CHECK(m.id == "7");
    CHECK(m.job.model.layers == 12);
    CHECK(m.job.model.tied_embeddings);
    CHECK(m.job.parallel.pp == 2);
    CHECK(m.job.parallel.sharding == sharding::optimizer);
    CHECK(m.job.parallel.recompute == recompute::full);
    CHECK(m.job.runtime.framework == frameworks::megatron::handle);
    CHECK(m.job.runtime.attention == attention_impl::unfused);  // "TE" names no kernel; the notes say unfused
    CHECK(m.metric == memory_metric::allocated);
    CHECK(m.last_stage_only);
    CHECK(m.measured.value == Approx(3.0 * GiB));
    std::remove(path.c_str());
}

TEST_CASE("cumulative tables carry earlier rows' options forward, training methods are read as stated") {
    const std::string row_prefix =
        "torchtune,Llama,28,3072,24,8,8192,SwiGLU,128256,yes,4096,2,2,1,1,1,1,,1,1,no,none,";
    auto row = [&](int id, const char* recompute, const char* flags) {
        return std::to_string(id) + ",measured," + row_prefix + recompute + ",SDPA,pure bf16,AdamW,A100,10,,active,single,\"" +
               flags + "\",tt-readme,medium,rows are cumulative\n";  // quoted: row 1's flags hold a comma
    };
    const auto path = write_temp("cumulative", std::string(header) + row(1, "none", "cumulative: packed (no compile, full CE)") +
                                                   row(2, "none", "cumulative: + compile") +
                                                   row(3, "none", "cumulative: + chunked cross entropy") +
                                                   row(4, "full", "cumulative: + activation checkpointing") +
                                                   row(5, "full", "cumulative: + fuse optimizer step into backward") +
                                                   row(6, "full", "cumulative: + LoRA rank 16") +
                                                   row(7, "full", "cumulative: + activation offloading") +
                                                   row(8, "full", "cumulative: + offload"));
    std::vector<std::string> skipped;
    const auto rows = read_memory_measurements(path, &skipped);
    REQUIRE(rows.size() == 7);
    CHECK_FALSE(rows[0].job.runtime.compile);
    CHECK(rows[0].job.runtime.loss_chunks == 1);
    CHECK(rows[1].job.runtime.compile);
    CHECK(rows[1].job.runtime.loss_chunks == 1);
    CHECK(rows[2].job.runtime.compile);
    CHECK(rows[2].job.runtime.loss_chunks == 8);
    CHECK(rows[3].job.runtime.loss_chunks == 8);
    CHECK(rows[3].job.parallel.recompute == recompute::full);
    CHECK(rows[3].job.runtime.optimizer == optimizer_impl::fused);  // torchtune's AdamW(fused=True)
    CHECK(rows[4].job.runtime.optimizer == optimizer_impl::in_backward);
    // LoRA with the stated rank, carried forward with everything before it; then activation offload on top.
    CHECK(rows[5].job.training.finetune.method == finetune_method::lora);
    CHECK(rows[5].job.training.finetune.rank == 16);
    CHECK_FALSE(rows[5].job.runtime.offload.activations);
    CHECK(rows[6].job.training.finetune.method == finetune_method::lora);
    CHECK(rows[6].job.runtime.offload.activations);
    CHECK(rows[6].job.runtime.optimizer == optimizer_impl::in_backward);
    // "offload" that does not say of what cannot be read as stated
    REQUIRE(skipped.size() == 1);
    CHECK_THAT(skipped[0], Catch::Matchers::Contains("row 8") && Catch::Matchers::Contains("offload"));
    CHECK(skipped[0].rfind(path + ": row 8", 0) == 0);  // named by its file: validate reads several tables
    std::remove(path.c_str());
}

TEST_CASE("training methods in other_flags: QLoRA with lora_rank, 8-bit AdamW, words inside words") {
    auto row = [](int id, const char* fw, const char* optimizer, const char* flags) {
        return std::to_string(id) + ",measured," + fw + ",Llama,28,3072,24,8,8192,SwiGLU,128256,yes,4096,2,2,1,1,1,1,,1,1,no,"
               "none,none,SDPA,bf16,\"" + optimizer + "\",A100,10,,max_memory_allocated,single,\"" + flags + "\",src" +
               std::to_string(id) + ",medium,\n";
    };
    const auto path = write_temp("methods", std::string(header) + row(1, "torchtune", "AdamW", "qlora, lora_rank 32") +
                                                row(2, "torchtune", "AdamW8bit (bitsandbytes)", "") +
                                                row(3, "torchtune", "AdamW", "explorations of packing"));
    std::vector<std::string> skipped;
    const auto rows = read_memory_measurements(path, &skipped);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].job.training.finetune.method == finetune_method::qlora);
    CHECK(rows[0].job.training.finetune.rank == 32);
    // the framework cell names torchtune, whose only 16-bit training is pure bf16 (`dtype: bf16`): the "bf16" cell is it
    CHECK(rows[0].job.runtime.framework == frameworks::torchtune::handle);
    CHECK(rows[0].job.training.precision == precision::bf16);
    CHECK(rows[1].job.training.optimizer == optimizer_kind::adamw_8bit);
    // no method named: none (the memory of a run from scratch, which is a full fine-tune's)
    CHECK(rows[1].job.training.finetune.method == finetune_method::none);
    CHECK(rows[2].job.training.finetune.method == finetune_method::none);  // "explorations" is not "lora"
    CHECK(skipped.empty());
    std::remove(path.c_str());
}

TEST_CASE("Megatron flags in other_flags are read as a launch script's are, the columns keep the shape") {
    // frameworks/megatron/options.hpp through megatron_flags_in_text: MoE kernel, dispatcher, capacity, etp, dropout and the
    // local implementation from the prose of the cell; --vocab-size there does not replace the vocab_padded column.
    const auto path = write_temp("megatron_flags", std::string(header) +
        "5,measured,Megatron-Core (TE),toy MoE,12,512,8,8,2048,GELU,50432,yes,1024,4,32,8,4,2,1,,1,2,yes,"
        "\"distributed optimizer (ZeRO-1)\",none,TE,bf16,Adam,H100,2.0,,max_memory_allocated,last rank,"
        "\"MoE: --num-experts 8 --moe-router-topk 1 (sinkhorn) --expert-tensor-parallel-size 1, --moe-grouped-gemm; "
        "--moe-token-dispatcher-type alltoall --moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity "
        "--hidden-dropout 0.0 --attention-dropout 0 --transformer-impl local --vocab-size 50257\",src,high,\n"
        "6,measured,Megatron-Core (TE),toy MoE,12,512,8,8,2048,GELU,50432,yes,1024,4,32,8,4,2,1,,1,2,yes,"
        "\"distributed optimizer (ZeRO-1)\",none,TE,bf16,Adam,H100,2.0,,max_memory_allocated,last rank,"
        "\"--num-experts 8 --moe-expert-capacity-factor much\",src,high,\n");
    std::vector<std::string> skipped;
    try {
        read_memory_measurements(path, &skipped);
        FAIL("no error for row 6");
    } catch (const config_error& e) {  // the row's line and the flag
        CHECK_THAT(e.what(), Catch::Matchers::Contains(path + ":3") && Catch::Matchers::Contains("--moe-expert-capacity-factor"));
    }
    // Row 5 alone.
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    text = text.substr(0, text.rfind("6,measured"));
    const auto five = write_temp("megatron_flags5", text);
    const auto rows = read_memory_measurements(five, &skipped);
    REQUIRE(rows.size() == 1);
    const auto& j = rows[0].job;
    CHECK(j.model.vocab == 50432);  // the column, not --vocab-size in the prose
    CHECK(j.model.moe.experts == 8);
    CHECK(j.model.moe.top_k == 1);
    CHECK(j.model.moe.capacity_factor == 1.0);
    CHECK(j.model.moe.pad_to_capacity);
    CHECK(j.parallel.etp == 1);
    CHECK(j.parallel.ep == 2);
    CHECK(j.parallel.grouped_gemm);
    CHECK(j.parallel.dispatcher == moe_dispatcher::alltoall);
    REQUIRE(j.runtime.dropout.has_value());
    CHECK_FALSE(*j.runtime.dropout);
    CHECK(j.runtime.attention == attention_impl::unfused);
    CHECK(skipped.empty());
    // A flag the import would call not modelled (DeepEP's flex dispatcher) leaves the row out, with the reason.
    const auto flex = write_temp("megatron_flex", std::string(header) +
        "7,measured,Megatron-Core (TE),toy MoE,12,512,8,8,2048,GELU,50432,yes,1024,4,32,8,4,2,1,,1,2,yes,"
        "\"distributed optimizer (ZeRO-1)\",none,TE,bf16,Adam,H100,2.0,,max_memory_allocated,last rank,"
        "\"--num-experts 8 --moe-token-dispatcher-type flex\",src,high,\n");
    CHECK(read_memory_measurements(flex, &skipped).empty());
    REQUIRE(skipped.size() == 1);
    CHECK_THAT(skipped.front(), Catch::Matchers::Contains("row 7") && Catch::Matchers::Contains("flex (not modelled)"));
    std::remove(flex.c_str());
    std::remove(path.c_str());
    std::remove(five.c_str());
}

TEST_CASE("a layout the columns leave empty comes from the Megatron flags, a stated column wins") {
    // vpp, cp and seq_parallel cells empty: --num-layers-per-virtual-pipeline-stage 1 gives 12 / pp 4 / 1 = 3
    // virtual stages (arguments.py), --context-parallel-size 2, --sequence-parallel (tp 2). Row 4 (pp 2) states vpp 2,
    // cp 1 and "no" sequence parallelism in its columns, which win over the same flags (the flag would give vpp 6).
    const auto path = write_temp("layout_flags", std::string(header) +
        "3,measured,Megatron-Core (TE),toy,12,512,8,8,2048,GELU,50304,yes,1024,4,32,16,1,2,4,,,1,,"
        "\"distributed optimizer\",none,TE,bf16,Adam,H100,2.0,,max_memory_allocated,last rank,"
        "\"--num-layers-per-virtual-pipeline-stage 1 (3 chunks), --context-parallel-size 2; --sequence-parallel\",src,high,\n"
        "4,measured,Megatron-Core (TE),toy,12,512,8,8,2048,GELU,50304,yes,1024,4,32,4,1,2,2,2,1,1,no,"
        "\"distributed optimizer\",none,TE,bf16,Adam,H100,2.0,,max_memory_allocated,last rank,"
        "\"--num-layers-per-virtual-pipeline-stage 1 --context-parallel-size 2 --sequence-parallel\",src,high,\n");
    const auto rows = read_memory_measurements(path);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].job.parallel.vpp == 3);
    CHECK(rows[0].job.parallel.schedule == pipeline_schedule::interleaved);
    CHECK(rows[0].job.parallel.cp == 2);
    CHECK(rows[0].job.parallel.sequence_parallel);
    CHECK(rows[1].job.parallel.vpp == 2);
    CHECK(rows[1].job.parallel.cp == 1);
    CHECK_FALSE(rows[1].job.parallel.sequence_parallel);
    std::remove(path.c_str());
}

TEST_CASE("a bad cell names the file, the line and the field") {
    const auto path = write_temp("bad", std::string(header) +
        "9,measured,Megatron-Core,toy,12,512,eight,8,2048,GELU,50304,yes,1024,4,32,8,4,1,2,,1,1,no,none,none,TE,bf16,"
        "Adam,H100,3.0,,max_memory_allocated,last rank,,src,high,\n");
    try {
        read_memory_measurements(path);
        FAIL("no error");
    } catch (const config_error& e) {
        CHECK_THAT(e.what(), Catch::Matchers::Contains(path + ":2") && Catch::Matchers::Contains("heads"));
    }
    std::remove(path.c_str());
}
