// Job and cluster JSON: DESIGN.md's format, defaults, and errors that name the field.
#include <catch2/catch.hpp>

#include "frenzy/io/cluster_json.hpp"
#include "frenzy/io/job_json.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace {
std::string error_of(const char* text) {
    try {
        job_from_json(nlohmann::json::parse(text));
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
std::string cluster_error_of(const char* text) {
    try {
        cluster_from_json(nlohmann::json::parse(text));
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("DESIGN.md's job example parses with every field") {
    const auto j = job_from_json(nlohmann::json::parse(R"({
      "model": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
                "activation": "swiglu", "vocab": 128256, "tied_embeddings": false,
                "position_embedding": "rope", "norm": "rmsnorm", "bias": false},
      "training": {"seq_len": 8192, "micro_batch": 2, "global_batch": 16,
                   "precision": "bf16-mixed", "optimizer": "adamw", "total_tokens": 2.0e10},
      "parallel": {"dp": 8, "tp": 1, "pp": 1, "vpp": 1, "cp": 1, "ep": 1, "sequence_parallel": false,
                   "sharding": "full", "recompute": "selective", "pipeline_schedule": "1f1b"},
      "runtime": {"framework": "fsdp", "attention": "flash"}
    })"));
    CHECK(j.has_parallel);
    CHECK(j.job.model.kv_heads == 8);
    CHECK(j.job.model.activation == activation::swiglu);
    CHECK(j.job.training.total_tokens == 2.0e10);
    CHECK(j.job.parallel.sharding == sharding::full);
    CHECK(j.job.runtime.framework == frameworks::fsdp::handle);
    // The explicit model equals the preset's architecture but for the rotary spec, which the example leaves at
    // the default base 10000 (the published Llama 3.1 has 500000 with llama3 scaling: model.rope).
    auto m = j.job.model;
    m.name = "llama-3.1-8b";
    CHECK(m.rope == rope_spec{});
    m.rope = preset("llama-3.1-8b").rope;
    CHECK(m == preset("llama-3.1-8b"));
}

TEST_CASE("defaults, presets and overrides") {
    const auto j = job_from_json(nlohmann::json::parse(R"({"model": {"preset": "llama-3.1-8b", "vocab": 128000}})"));
    CHECK_FALSE(j.has_parallel);
    CHECK(j.job.model.vocab == 128000);
    CHECK(j.job.model.layers == 32);
    CHECK(j.job.training.precision == precision::bf16_mixed);
    CHECK(j.job.training.optimizer == optimizer_kind::adamw);
    CHECK(j.job.parallel == parallel_config{});
    CHECK(j.job.runtime.framework == frameworks::megatron::handle);
    CHECK(j.job.runtime.attention == attention_impl::automatic);  // the kernel the framework runs on the GPU type
}

TEST_CASE("a LoRA or QLoRA job that names no framework is the Hugging Face stack's, unless its layout needs Megatron") {
    const auto parse = [](const char* text) { return job_from_json(nlohmann::json::parse(text)); };
    auto j = parse(R"({"model": {"preset": "llama-3.1-8b"}, "training": {"finetune": {"method": "lora"}}})");
    CHECK_FALSE(j.framework_stated);
    CHECK(j.job.runtime.framework == frameworks::hf::handle);
    j = parse(R"({"model": {"preset": "llama-3.1-8b"}, "training": {"finetune": {"method": "qlora"}}, "parallel": {"dp": 4}})");
    CHECK(j.job.runtime.framework == frameworks::hf::handle);
    // tensor parallelism: Trainer runs data parallel only, so the default stays Megatron-LM
    j = parse(R"({"model": {"preset": "llama-3.1-8b"}, "training": {"finetune": {"method": "lora"}}, "parallel": {"tp": 2}})");
    CHECK(j.job.runtime.framework == frameworks::megatron::handle);
    // full fine-tunes and a stated framework are left alone
    CHECK(parse(R"({"model": {"preset": "gpt2"}, "training": {"finetune": {"method": "full"}}})").job.runtime.framework ==
          frameworks::megatron::handle);
    j = parse(R"({"model": {"preset": "gpt2"}, "training": {"finetune": {"method": "lora"}}, "runtime": {"framework": "fsdp"}})");
    CHECK(j.framework_stated);
    CHECK(j.job.runtime.framework == frameworks::fsdp::handle);
}

TEST_CASE("round trip through to_json") {
    const auto j = job_from_json(nlohmann::json::parse(
        R"({"model": {"preset": "gpt3-125m"}, "training": {"seq_len": 2048, "global_batch": 8},
            "parallel": {"dp": 8, "recompute": "full"}})"));
    const auto again = job_from_json(to_json(j.job));
    CHECK(again.job == j.job);
    // MoE capacity (model.moe.capacity_factor, pad_to_capacity) both ways; a dropless job writes neither key.
    auto moe = job_from_json(nlohmann::json::parse(
        R"({"model": {"preset": "mixtral-8x7b", "moe": {"experts": 8, "top_k": 2, "capacity_factor": 1.25,
            "pad_to_capacity": true}}, "training": {"seq_len": 4096, "global_batch": 8}, "parallel": {"dp": 8}})"));
    CHECK(moe.job.model.moe.capacity_factor == 1.25);
    CHECK(moe.job.model.moe.pad_to_capacity);
    const auto back = job_from_json(to_json(moe.job)).job;
    CHECK(back.model.moe.capacity_factor == 1.25);
    CHECK(back.model.moe.pad_to_capacity);
    CHECK(to_json(back) == to_json(moe.job));  // (expert_ffn_hidden is written as its effective value)
    moe.job.model.moe.capacity_factor = 0;
    moe.job.model.moe.pad_to_capacity = false;
    CHECK_FALSE(to_json(moe.job)["model"]["moe"].contains("capacity_factor"));
    // runtime.liger both ways; false is written as no key (absent = false)
    auto liger = job_from_json(nlohmann::json::parse(
        R"({"model": {"preset": "llama-3.1-8b"}, "training": {"seq_len": 4096, "global_batch": 8},
            "parallel": {"dp": 8}, "runtime": {"framework": "hf", "liger": true}})"));
    CHECK(liger.job.runtime.liger);
    CHECK(job_from_json(to_json(liger.job)).job == liger.job);
    liger.job.runtime.liger = false;
    CHECK_FALSE(to_json(liger.job)["runtime"].contains("liger"));
}

TEST_CASE("every part of a job has one ADL codec pair: nlohmann::json j = x and j.get<T>() give x back") {
    // A job with non-default values in every part: MoE model, recompute, offload, a LoRA fine-tune.
    const auto j = job_from_json(nlohmann::json::parse(
        R"({"model": {"preset": "mixtral-8x7b"}, "training": {"seq_len": 4096, "global_batch": 16,
            "finetune": {"method": "lora", "rank": 16}},
            "parallel": {"dp": 8, "sharding": "optimizer", "recompute": "selective"},
            "runtime": {"framework": "deepspeed", "offload": {"optimizer": true}, "dropout": true}})")).job;
    const nlohmann::json whole = j;
    CHECK(whole == to_json(j));
    // The model codec writes derived values as their effective values (expert_ffn_hidden 0 -> the FFN width), so a
    // job and its model come back to the same JSON, and the other parts to the same value.
    CHECK(nlohmann::json(whole.get<job_spec>()) == whole);
    const nlohmann::json m = j.model, t = j.training, p = j.parallel, r = j.runtime, f = j.training.finetune;
    CHECK(nlohmann::json(m.get<transformer_spec>()) == m);
    CHECK(t.get<training_spec>() == j.training);
    CHECK(p.get<parallel_config>() == j.parallel);
    CHECK(r.get<runtime_spec>() == j.runtime);
    CHECK(f.get<finetune_spec>() == j.training.finetune);
    CHECK(r.at("dropout") == true);                      // a value that could be lost: the explicit dropout
    CHECK(p.at("recompute") == "selective");
    // A wrong field comes back through the same reader, naming the field.
    CHECK_THROWS_WITH(nlohmann::json::parse(R"({"dp": "two"})").get<parallel_config>(), Contains("parallel.dp"));
}

TEST_CASE("unknown fields, bad values and rule violations name the field") {
    CHECK_THAT(error_of(R"({"model": {"preset": "llama-3.1-8b"}, "training": {"seqlen": 4}})"), Contains("training.seqlen"));
    // a typo is answered with the field it is closest to (issue 55: `globl_batch` had no hint)
    CHECK_THAT(error_of(R"({"model": {"preset": "llama-3.1-8b"}, "training": {"globl_batch": 4}})"),
               Contains("training.globl_batch is not a known field (did you mean \"global_batch\"?)"));
    CHECK_THAT(error_of(R"({"model": {"preset": "llama-3.1-8b"}, "training": {"seqlen": 4}})"),
               Contains("(did you mean \"seq_len\"?)"));
    CHECK_THAT(error_of(R"({"model": {"preset": "llama-3.1-8b"}, "parallel": {"sharding": "zero3"}})"),
               Contains("parallel.sharding=\"zero3\"") && Contains("full"));
    CHECK_THAT(error_of(R"({"model": {"preset": "no-such-model"}})"), Contains("model.preset=\"no-such-model\""));
    CHECK_THAT(error_of(R"({"model": {"preset": "llama-3.1-8b"}, "training": {"seq_len": "long"}})"),
               Contains("training.seq_len"));
    CHECK_THAT(error_of(R"({"model": {"preset": "llama-3.1-8b"}, "training": {"seq_len": 2.5}})"),
               Contains("training.seq_len") && Contains("integer"));
    CHECK_THAT(error_of(R"({"model": {"preset": "llama-3.1-8b"}, "parallel": {"tp": 3}})"),
               Contains("parallel.tp=3") && Contains("model.heads=32"));
    CHECK_THAT(error_of(R"({"training": {}})"), Contains("model is missing"));
    CHECK_THAT(error_of(R"({"model": {"layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256, "vocab": 100,
                          "moe": {"experts": 4, "top_k": 8}}})"),
               Contains("model.moe.top_k=8"));
    CHECK_THAT(error_of(R"({"model": {"preset": "llama-3.1-8b"}, "extra": 1})"), Contains("extra"));
    CHECK_THAT(error_of(R"([1, 2])"), Contains("JSON object"));
}

TEST_CASE("cluster spec: node groups, catalog overrides, errors") {
    const auto c = cluster_from_json(nlohmann::json::parse(R"({
      "nodes": [{"name": "a100", "gpu": "a100-80g", "gpus_per_node": 8, "count": 4},
                {"gpu": "my-card", "count": 2}],
      "gpu_types": [{"name": "my-card", "memory_mib": 49152, "bf16_tflops": 200, "fp16_tflops": 200,
                     "fp32_tflops": 50, "mem_bw_GBps": 1000, "link": "pcie4", "link_GBps": 64, "gpus_per_node": 4},
                    {"name": "v100-32g", "memory_mib": 32000}]
    })"));
    CHECK(c.total_gpus() == 4 * 8 + 2 * 4);
    CHECK(c.nodes[1].gpus_per_node == 4);  // from the new type's node size
    CHECK(c.catalog.at("v100-32g").memory_mib == 32000);
    CHECK(c.catalog.at("v100-32g").fp16_tflops == 125);  // other fields kept from the built-in catalog
    CHECK_THAT(cluster_error_of(R"({"nodes": [{"gpu": "a100-81g", "count": 1}]})"),
               Contains("cluster.nodes[0].gpu=\"a100-81g\"") && Contains("a100-80g"));
    CHECK_THAT(cluster_error_of(R"({"nodes": [{"gpu": "a100-80g", "count": 0}]})"), Contains("cluster.nodes[0].count=0"));
    CHECK_THAT(cluster_error_of(R"({"nodes": []})"), Contains("cluster.nodes"));
    CHECK_THAT(cluster_error_of(R"({"nodes": [{"gpu": "t4", "count": 1, "gpus": 4}]})"), Contains("cluster.nodes[0].gpus"));
    CHECK_THAT(cluster_error_of(R"({"nodes": [{"gpu": "t4"}], "gpu_types": [{"name": "x", "memory_mib": -1}]})"),
               Contains("memory_mib"));
    // The bandwidth fields hold GB/s and say so; their old *_gbps names (read as gigabits) are refused by name.
    CHECK(cluster_from_json(nlohmann::json::parse(R"({"nodes": [{"gpu": "t4", "network_GBps": 50}]})")).nodes[0].network_GBps == 50);
    CHECK_THAT(cluster_error_of(R"({"nodes": [{"gpu": "t4", "network_gbps": 400}]})"),
               Contains("cluster.nodes[0].network_gbps was renamed network_GBps") && Contains("gigabytes per second"));
    CHECK_THAT(cluster_error_of(R"({"nodes": [{"gpu": "x"}], "gpu_types": [{"name": "x", "memory_mib": 1, "link_gbps": 64}]})"),
               Contains("cluster.gpu_types[0].link_gbps was renamed link_GBps"));
    CHECK_THAT(cluster_error_of(R"({"nodes": [{"gpu": "x"}], "gpu_types": [{"name": "x", "memory_mib": 1, "mem_bw_gbps": 9}]})"),
               Contains("cluster.gpu_types[0].mem_bw_gbps was renamed mem_bw_GBps"));
    // `frenzy gpus --json` writes memory_bytes beside memory_mib: read back (--gpu-types), the two must agree
    CHECK(cluster_from_json(nlohmann::json::parse(R"({"nodes": [{"gpu": "t4"}],
        "gpu_types": [{"name": "t4", "memory_mib": 15360, "memory_bytes": 16106127360}]})")).catalog.at("t4").memory_mib == 15360);
    CHECK(cluster_from_json(nlohmann::json::parse(R"({"nodes": [{"gpu": "t4"}],
        "gpu_types": [{"name": "t4", "memory_bytes": 1073741824}]})")).catalog.at("t4").memory_mib == 1024);
    CHECK_THAT(cluster_error_of(R"({"nodes": [{"gpu": "t4"}], "gpu_types": [{"name": "t4", "memory_mib": 15360, "memory_bytes": 1e9}]})"),
               Contains("cluster.gpu_types[0].memory_bytes=1000000000") && Contains("disagrees with memory_mib=15360"));
}
