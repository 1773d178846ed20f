// Issue 53 item 1 and issue 57 item 2: gpt-oss read from its config.json (families/gpt_oss), the MoE router settings
// of DeepSeek, layer_types checked for Gemma 3, Qwen 3 and gpt-oss, and configs without their shape keys refused.
#include <catch2/catch.hpp>

#include <string>

#include "frenzy/io/hf_config.hpp"
#include "frenzy/io/json_reader.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace hf_gpt_oss_test {

nlohmann::json fixture(const std::string& name) {
    return frenzy::read_json_file(std::string(FRENZY_SOURCE_DIR) + "/tests/data/hf/" + name + ".json");
}

std::string refusal(const nlohmann::json& cfg) {
    try {
        (void)from_hf_config(cfg, "c.json");
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace hf_gpt_oss_test

using hf_gpt_oss_test::fixture;
using hf_gpt_oss_test::refusal;

TEST_CASE("gpt-oss: the published shapes load to the presets, within 1% of the model card") {
    // model card (arXiv:2508.10925) Table 1: 20.91B and 116.83B total (three and more significant digits: 1%)
    for (const auto& [file, total] : {std::pair{"gpt-oss-20b", 20.91e9}, std::pair{"gpt-oss-120b", 116.83e9}}) {
        INFO(file);
        auto s = from_hf_config(fixture(file));
        CHECK(s.name == std::string("openai/") + file);
        s.name = file;
        CHECK(s == preset(file));
        CHECK(total_parameters(s) == Approx(total).epsilon(0.01));
    }
    const auto s = from_hf_config(fixture("gpt-oss-20b"));
    CHECK(s.attention_sinks);
    CHECK(s.swiglu_limit == 7);  // modeling_gpt_oss.py default (the published files say 7.0 too)
    CHECK(s.bias);
    CHECK(s.kv() == 8);
    CHECK(s.hdim() == 64);
    CHECK(s.sliding_window == 128);
    CHECK(s.global_layer_every == 2);
    CHECK(s.rope.theta == 150000);
    CHECK(s.rope.scaling == rope_scaling_kind::yarn);
    CHECK(s.rope.factor == 32);
    CHECK(s.rope.original_max_positions == 4096);
    CHECK(s.moe.top_k == 4);
    CHECK(s.moe.score == router_score::softmax);  // GptOssTopKRouter: softmax over the chosen logits
    CHECK(s.moe_layers() == 24);
    // 24 layers x 64 sinks and 24 x 32 router biases over a model without them
    auto plain = s;
    plain.attention_sinks = false;
    plain.bias = false;
    const double biases = 24.0 * (32 + (4096 + 1024 + 2880) + 32 * (2 * 2880 + 2880));  // router, q/k/v/o, experts
    CHECK(total_parameters(s) - total_parameters(plain) == biases + 24.0 * 64);
}

TEST_CASE("gpt-oss: keys the published files carry beside GptOssConfig's, and the class defaults") {
    auto c = fixture("gpt-oss-20b");
    c.erase("num_experts_per_tok");
    c["experts_per_token"] = 2;
    CHECK(from_hf_config(c).moe.top_k == 2);
    c["num_experts_per_tok"] = 4;
    CHECK_THAT(refusal(c), Contains("num_experts_per_tok=4 and experts_per_token=2 (model.moe.top_k) disagree"));
    c = fixture("gpt-oss-20b");
    c["swiglu_limit"] = 5.5;
    CHECK(from_hf_config(c).swiglu_limit == 5.5);
    // without rope_scaling, sliding_window and layer_types: GptOssConfig's yarn, 128 and alternating layers
    c = fixture("gpt-oss-20b");
    for (const char* k : {"rope_scaling", "sliding_window", "layer_types", "rope_theta", "head_dim", "num_key_value_heads"})
        c.erase(k);
    CHECK(from_hf_config(c) == from_hf_config(fixture("gpt-oss-20b")));
    // every layer full attention: no window
    c = fixture("gpt-oss-20b");
    c["layer_types"] = nlohmann::json::array();
    for (int i = 0; i < 24; ++i) c["layer_types"].push_back("full_attention");
    CHECK(from_hf_config(c).sliding_window == 0);
    // a shape key missing is refused by name (the class default, 36 layers, is gpt-oss-120b's)
    c = fixture("gpt-oss-20b");
    c.erase("num_hidden_layers");
    CHECK_THAT(refusal(c), Contains("missing required key \"num_hidden_layers\" (model.layers)"));
    c = fixture("gpt-oss-20b");
    c.erase("num_local_experts");
    CHECK_THAT(refusal(c), Contains("missing required key \"num_local_experts\" (model.moe.experts)"));
}

TEST_CASE("layer_types is read and checked: length, values, pattern (Gemma 3, Qwen 3, gpt-oss, Cohere 2)") {
    auto g = fixture("gemma-3-1b-it");
    auto types = [](int n, int every) {
        auto a = nlohmann::json::array();
        for (int i = 0; i < n; ++i) a.push_back((i + 1) % every == 0 ? "full_attention" : "sliding_attention");
        return a;
    };
    g["layer_types"] = types(26, 3);
    CHECK(from_hf_config(g).global_layer_every == 3);  // layer_types wins over sliding_window_pattern
    g["layer_types"] = types(25, 6);
    CHECK_THAT(refusal(g), Contains("layer_types=") && Contains("must be a list of num_hidden_layers=26 entries"));
    g["layer_types"] = types(26, 6);
    g["layer_types"][4] = "chunked_attention";
    CHECK_THAT(refusal(g), Contains("layer_types[4]=\"chunked_attention\" is not one of \"sliding_attention\" | \"full_attention\""));
    g["layer_types"] = types(26, 6);
    g["layer_types"][0] = "full_attention";  // full at 0 and every 6th: not one period
    CHECK_THAT(refusal(g), Contains("is not every k-th layer full_attention"));
    g["layer_types"] = "sliding_attention";
    CHECK_THAT(refusal(g), Contains("must be a list of num_hidden_layers=26 entries"));

    auto q = fixture("qwen3-1.7b");
    q["layer_types"] = types(28, 1);  // all full: Qwen3Config's default
    CHECK(from_hf_config(q).sliding_window == 0);
    q["layer_types"] = types(27, 1);
    CHECK_THAT(refusal(q), Contains("must be a list of num_hidden_layers=28 entries"));
    q["layer_types"] = types(28, 1);
    q["layer_types"][3] = 7;
    CHECK_THAT(refusal(q), Contains("layer_types[3]=7 is not one of"));
    // sliding layers take the window only with use_sliding_window (configuration_qwen3.py)
    q["layer_types"] = types(28, 4);
    CHECK(from_hf_config(q).sliding_window == 0);
    q["use_sliding_window"] = true;
    q["sliding_window"] = 4096;
    CHECK(from_hf_config(q).sliding_window == 4096);
    CHECK(from_hf_config(q).global_layer_every == 4);

    auto o = fixture("gpt-oss-20b");
    o["layer_types"].erase(0);
    CHECK_THAT(refusal(o), Contains("must be a list of num_hidden_layers=24 entries"));

    auto c = fixture("command-r-v01");
    c["model_type"] = "cohere2";
    c["layer_types"] = types(39, 4);
    CHECK_THAT(refusal(c), Contains("must be a list of num_hidden_layers=40 entries"));
}

TEST_CASE("a config without its shape keys is refused naming the key, not filled from one model's defaults") {
    CHECK_THAT(refusal({{"model_type", "llama4"}}), Contains("text_config: missing required key \"num_hidden_layers\" (model.layers)"));
    CHECK_THAT(refusal({{"model_type", "llama4_text"}}), Contains("missing required key \"num_hidden_layers\""));
    CHECK_THAT(refusal({{"model_type", "cohere"}}), Contains("missing required key \"num_hidden_layers\""));
    CHECK_THAT(refusal({{"model_type", "falcon"}}), Contains("missing required key \"num_hidden_layers\" or \"n_layer\""));
    CHECK_THAT(refusal({{"model_type", "deepseek_v3"}}), Contains("missing required key \"num_hidden_layers\""));
    CHECK_THAT(refusal({{"model_type", "gpt_oss"}}), Contains("missing required key \"num_hidden_layers\""));
    auto v3 = fixture("deepseek-v3-defaults");
    v3.erase("n_routed_experts");
    CHECK_THAT(refusal(v3), Contains("missing required key \"n_routed_experts\" (model.moe.experts)"));
    auto l4 = fixture("llama-4-scout-defaults");
    l4["text_config"].erase("vocab_size");
    CHECK_THAT(refusal(l4), Contains("missing required key \"vocab_size\" (model.vocab)"));
    // a key whose class default the published files rely on still takes it: Gemma 3's text_config has no vocab_size,
    // Gemma3TextConfig's default 262208 (configuration_gemma3.py)
    nlohmann::json g{{"model_type", "gemma3"}, {"text_config", fixture("gemma-3-1b-it")}};
    g["text_config"].erase("vocab_size");
    g["text_config"].erase("model_type");
    CHECK(from_hf_config(g).vocab == 262208);
}

TEST_CASE("DeepSeek router as published: V3 sigmoid, expert bias, 8 groups of which 4, scale 2.5, V2 by its keys") {
    const auto v3 = from_hf_config(fixture("deepseek-v3-defaults"));
    CHECK(v3.moe.score == router_score::sigmoid);
    CHECK(v3.moe.expert_bias);
    CHECK(v3.moe.groups == 8);
    CHECK(v3.moe.group_top_k == 4);
    CHECK(v3.moe.topk_scaling == 2.5);
    const auto lite = from_hf_config(fixture("deepseek-v2-lite"));  // topk_method greedy, n_group 1, factor 1
    CHECK_FALSE(lite.moe.custom_router());
    auto v2 = fixture("deepseek-v2-lite");  // DeepSeek-V2's own routing keys on the Lite shape
    v2.update({{"topk_method", "group_limited_greedy"}, {"n_group", 8}, {"topk_group", 3}, {"routed_scaling_factor", 16.0}});
    v2["n_routed_experts"] = 64;
    const auto s = from_hf_config(v2);
    CHECK(s.moe.score == router_score::softmax);
    CHECK_FALSE(s.moe.expert_bias);
    CHECK(s.moe.groups == 8);
    CHECK(s.moe.group_top_k == 3);
    CHECK(s.moe.topk_scaling == 16);
    v2["scoring_func"] = "relu";
    CHECK_THAT(refusal(v2), Contains("scoring_func=\"relu\" (model.moe.score) is not softmax or sigmoid"));
    v2["scoring_func"] = "softmax";
    v2["topk_group"] = 9;
    CHECK_THAT(refusal(v2), Contains("model.moe.group_top_k=9 must be in 1..model.moe.groups=8"));
    v2["n_group"] = 7;
    v2["topk_group"] = 3;
    CHECK_THAT(refusal(v2), Contains("model.moe.groups=7 does not divide model.moe.experts=64"));
    CHECK(from_hf_config(fixture("llama-4-scout-defaults")).moe.score == router_score::sigmoid);
}
