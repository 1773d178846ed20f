// Issue 53 item 1: the MoE router, sliding windows, attention sinks and gpt-oss's clamped SwiGLU from the model to
// Megatron-LM's arguments and back (frameworks/megatron/routing.hpp; NVIDIA/Megatron-LM@d98e8a64
// transformer_config.py, Megatron-Bridge@067f987d gpt_oss_bridge.py), and their refusal where a framework cannot
// build them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "frenzy/frameworks/llm_foundry/launcher.hpp"
#include "frenzy/frameworks/megatron/import.hpp"
#include "frenzy/frameworks/megatron/launcher.hpp"
#include "frenzy/frameworks/torchtune/launcher.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace routing_test {

job_spec rt_job(const transformer_spec& m) {
    job_spec j;
    j.name = m.name;
    j.model = m;
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 64};
    j.parallel = {.dp = 8, .sharding = sharding::optimizer};
    return j;
}

std::vector<std::string> rt_args(const transformer_spec& m) { return frameworks::megatron::model_arguments(rt_job(m)); }

bool rt_has(const std::vector<std::string>& a, const std::string& flag) { return std::find(a.begin(), a.end(), flag) != a.end(); }

/// The model Megatron builds from the written flags, read back by the importer.
transformer_spec rt_built(const transformer_spec& m) {
    std::vector<std::string> w;
    for (const auto& x : rt_args(m)) {
        std::size_t i = 0;
        for (auto j = x.find(' '); ; j = x.find(' ', i)) {
            w.push_back(x.substr(i, j == std::string::npos ? std::string::npos : j - i));
            if (j == std::string::npos) break;
            i = j + 1;
        }
    }
    for (const auto* x : {"--seq-length", "4096", "--micro-batch-size", "1", "--global-batch-size", "64"}) w.push_back(x);
    auto r = megatron_import_arguments(w).job.model;
    r.name = m.name;
    return r;
}

std::string rt_refusal(const transformer_spec& m) {
    try {
        (void)rt_args(m);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace routing_test

using namespace routing_test;


TEST_CASE("Megatron-LM: DeepSeek-V3's router (sigmoid, expert bias, 8 groups of which 4, scale 2.5), and back") {
    const auto a = rt_args(preset("deepseek-v3"));
    CHECK(rt_has(a, "--moe-router-score-function sigmoid"));
    CHECK(rt_has(a, "--moe-router-enable-expert-bias"));
    CHECK(rt_has(a, "--moe-router-num-groups 8"));
    CHECK(rt_has(a, "--moe-router-group-topk 4"));
    CHECK(rt_has(a, "--moe-router-topk-scaling-factor 2.5"));
    CHECK(rt_built(preset("deepseek-v3")) == preset("deepseek-v3"));
    // a default router writes nothing more (Mixtral, Qwen3-MoE: Megatron's softmax after top-k)
    const auto mx = rt_args(preset("mixtral-8x7b"));
    CHECK(std::none_of(mx.begin(), mx.end(), [](const std::string& x) {
        return x.find("--moe-router-score") == 0 || x.find("--moe-router-num-groups") == 0 || x.find("--moe-router-enable") == 0;
    }));
    CHECK(rt_built(preset("qwen3-30b-a3b")) == preset("qwen3-30b-a3b"));
    // Megatron refuses expert bias with softmax scores (transformer_config.py __post_init__): so does the launch
    auto m = preset("deepseek-v3");
    m.moe.score = router_score::softmax;
    CHECK_THAT(rt_refusal(m), Contains("model.moe.expert_bias=true with model.moe.score=\"softmax\"") && Contains("Megatron"));
}

TEST_CASE("Megatron-LM: gpt-oss as Megatron-Bridge builds it, and back") {
    const auto& g = preset("gpt-oss-20b");
    const auto a = rt_args(g);
    CHECK(rt_has(a, "--softmax-type learnable"));
    CHECK(rt_has(a, "--window-size 127,0"));  // (sliding_window - 1, 0): gpt_oss_bridge.py
    CHECK(rt_has(a, "--window-attn-skip-freq 2"));
    CHECK(rt_has(a, "--quick-geglu"));
    CHECK(rt_has(a, "--glu-linear-offset 1"));
    CHECK(rt_has(a, "--activation-func-clamp-value 7"));
    CHECK_FALSE(rt_has(a, "--swiglu"));  // arguments.py asserts --quick-geglu without --swiglu
    CHECK_FALSE(rt_has(a, "--disable-bias-linear"));  // biases on every linear, the router's included
    CHECK(rt_has(a, "--position-embedding-type yarn"));
    CHECK(rt_has(a, "--rotary-base 150000"));
    CHECK(rt_has(a, "--rotary-scaling-factor 32"));
    CHECK(rt_has(a, "--kv-channels 64"));
    CHECK(rt_built(g) == g);
    CHECK(rt_built(preset("gpt-oss-120b")) == preset("gpt-oss-120b"));
    // a sliding window alone (Mistral-style, every layer) and Llama 4's sigmoid router
    auto m = preset("mistral-7b");
    m.sliding_window = 4096;
    CHECK(rt_has(rt_args(m), "--window-size 4095,0"));
    CHECK(rt_built(m) == m);
    // gpt-oss's clamp on a dense MLP: Megatron clamps MoE experts only
    m = preset("llama-2-7b");
    m.activation = activation::swiglu;
    m.swiglu_limit = 7;
    CHECK_THAT(rt_refusal(m), Contains("model.swiglu_limit=7 on a dense MLP"));
}

TEST_CASE("Megatron import: flags it cannot represent are listed, not read as something else") {
    const std::vector<std::string> base{"--num-layers", "2", "--hidden-size", "64", "--num-attention-heads", "4",
                                        "--vocab-size", "128", "--seq-length", "128", "--micro-batch-size", "1",
                                        "--global-batch-size", "8"};
    auto with = [&](std::vector<std::string> extra) {
        auto w = base;
        w.insert(w.end(), extra.begin(), extra.end());
        return megatron_import_arguments(w);
    };
    auto r = with({"--softmax-type", "off-by-one"});
    CHECK_FALSE(r.job.model.attention_sinks);
    CHECK(std::find(r.unknown.begin(), r.unknown.end(), "--softmax-type off-by-one (not modelled)") != r.unknown.end());
    r = with({"--window-size", "127,64"});
    CHECK(r.job.model.sliding_window == 0);
    CHECK(r.unknown.size() == 1);
    r = with({"--window-attn-skip-freq", "[1,1,0]*2"});
    CHECK(r.unknown.size() == 1);
    r = with({"--quick-geglu"});
    CHECK(r.job.model.swiglu_limit == 0);
    CHECK_THAT(r.unknown.at(0), Contains("--quick-geglu"));
    r = with({"--window-size", "511,0", "--window-attn-skip-freq", "6"});
    CHECK(r.job.model.sliding_window == 512);
    CHECK(r.job.model.global_layer_every == 6);
}

TEST_CASE("launchers that cannot build the new fields refuse them by name") {
    auto j = routing_test::rt_job(preset("llama-3.1-8b"));
    j.model.attention_sinks = true;
    CHECK_THROWS_WITH(frameworks::llm_foundry::model_yaml(j, attention_impl::flash), Contains("model.attention_sinks"));
    CHECK_THROWS_WITH(frameworks::torchtune::builder_of(j), Contains("model.attention_sinks=1 (the published model's: 0)"));
    j.model = preset("qwen3-30b-a3b");
    j.model.moe.score = router_score::sigmoid;
    CHECK_THAT(published_difference(j.model, preset("qwen3-30b-a3b")), Contains("model.moe.score=\"sigmoid\" (the published model's: \"softmax\")"));
    j.model = preset("deepseek-v3");
    j.model.moe.groups = 0;
    j.model.moe.group_top_k = 0;
    CHECK_THAT(published_difference(j.model, preset("deepseek-v3")), Contains("model.moe.groups=0 (the published model's: 8)"));
}

TEST_CASE("job JSON: the new fields are read, written only when set, and checked") {
    const auto g = preset("gpt-oss-20b");
    const auto j = to_json(g);
    CHECK(j.at("attention_sinks") == true);
    CHECK(j.at("swiglu_limit") == 7.0);
    CHECK_FALSE(j.at("moe").contains("score"));  // gpt-oss routes with softmax: the default
    CHECK(to_json(model_from_json(j)) == j);  // (to_json writes the expert width out: 2880 for 0 = ffn_hidden)
    const auto v3 = to_json(preset("deepseek-v3"));
    CHECK(v3.at("moe").at("score") == "sigmoid");
    CHECK(v3.at("moe").at("groups") == 8);
    CHECK(to_json(model_from_json(v3)) == v3);
    CHECK(model_from_json(v3).moe.topk_scaling == 2.5);
    const auto l = to_json(preset("llama-3.1-8b"));
    CHECK_FALSE(l.contains("attention_sinks"));
    CHECK_FALSE(l.contains("swiglu_limit"));
    CHECK_THROWS_WITH(model_from_json({{"preset", "mixtral-8x7b"}, {"moe", {{"groups", 3}, {"group_top_k", 1}}}}),
                      Contains("model.moe.groups=3 does not divide model.moe.experts=8"));
    CHECK_THROWS_WITH(model_from_json({{"preset", "llama-2-7b"}, {"moe", {{"score", "sigmoid"}}}}),
                      Contains("model.moe.experts=0 but"));
    CHECK_THROWS_WITH(model_from_json({{"preset", "gpt2"}, {"swiglu_limit", 7}}), Contains("needs model.activation=\"swiglu\""));
    CHECK_THROWS_WITH(model_from_json({{"preset", "mixtral-8x7b"}, {"moe", {{"score", "relu"}}}}), Contains("relu"));
}
