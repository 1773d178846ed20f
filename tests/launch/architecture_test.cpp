// Issue 53 item 1: the architecture whole, from config.json to the framework's arguments and back. The published
// values come from the bundled config.json files (tests/data/hf/SOURCES.md); the flags and defaults from
// Megatron-LM@d98e8a64 arguments.py / transformer_config.py (frameworks/megatron/rope.hpp cites each).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "frenzy/frameworks/llm_foundry/launcher.hpp"
#include "frenzy/frameworks/megatron/launcher.hpp"
#include "frenzy/frameworks/torchtitan/launcher.hpp"
#include "frenzy/frameworks/torchtune/launcher.hpp"
#include "frenzy/io/hf_config.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/frameworks/megatron/import.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace {

nlohmann::json arch_raw(const std::string& name) {
    return read_json_file(std::string(FRENZY_SOURCE_DIR) + "/tests/data/hf/" + name + ".json");
}

job_spec arch_job(const transformer_spec& m) {
    job_spec j;
    j.name = m.name;
    j.model = m;
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 64};
    j.parallel = {.dp = 8, .sharding = sharding::optimizer};
    return j;
}

std::vector<std::string> arch_args(const transformer_spec& m) { return frameworks::megatron::model_arguments(arch_job(m)); }

bool arch_has(const std::vector<std::string>& a, const std::string& flag) { return std::find(a.begin(), a.end(), flag) != a.end(); }

std::vector<std::string> arch_words(const std::vector<std::string>& a) {
    std::vector<std::string> w;
    for (const auto& x : a) {
        std::size_t i = 0;
        while (i < x.size()) {
            const auto j = x.find(' ', i);
            w.push_back(x.substr(i, j == std::string::npos ? std::string::npos : j - i));
            if (j == std::string::npos) break;
            i = j + 1;
        }
    }
    return w;
}

/// The model Megatron builds from the written flags (the importer reads Megatron's defaults for absent ones).
transformer_spec megatron_builds(const transformer_spec& m) {
    auto a = arch_words(arch_args(m));
    for (const auto* x : {"--seq-length", "4096", "--micro-batch-size", "1", "--global-batch-size", "64"}) a.push_back(x);
    auto r = megatron_import_arguments(a).job.model;
    r.name = m.name;
    return r;
}

/// The model spec read from the bundled config.json of `name` (tests/data/hf).
transformer_spec arch_hf(const std::string& name) { return from_hf_config(arch_raw(name)); }

/// llm-foundry's MPT model YAML for the test job of `m` (flash attention).
std::string mpt_yaml(const transformer_spec& m) {
    return frameworks::llm_foundry::model_yaml(arch_job(m), attention_impl::flash);
}

std::string arch_refusal(const transformer_spec& m) {
    try {
        (void)arch_args(m);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("config.json: rotary base and scaling, norm epsilon and QK-norm as published") {
    SECTION("Llama 3.1 8B: rope_theta 500000, llama3 scaling factor 8 (1, 4, 8192), rms_norm_eps 1e-5") {
        const auto s = arch_hf("llama-3.1-8b");
        CHECK(s.rope.theta == 500000);
        CHECK(s.rope.scaling == rope_scaling_kind::llama3);
        CHECK(s.rope.factor == 8);
        CHECK(s.rope.low_freq_factor == 1);
        CHECK(s.rope.high_freq_factor == 4);
        CHECK(s.rope.original_max_positions == 8192);
        CHECK(s.norm_eps == 1e-5);
        CHECK_FALSE(s.qk_norm);
    }
    SECTION("Qwen3 1.7B: rope_theta 1e6, rms_norm_eps 1e-6, q_norm/k_norm") {
        const auto s = arch_hf("qwen3-1.7b");
        CHECK(s.rope.theta == 1e6);
        CHECK(s.rope.scaling == rope_scaling_kind::none);
        CHECK(s.norm_eps == 1e-6);
        CHECK(s.qk_norm);
    }
    SECTION("DeepSeek-V2-Lite: YaRN factor 40 over 4096 positions, mscale 0.707 (the older \"type\" key)") {
        const auto s = arch_hf("deepseek-v2-lite");
        CHECK(s.rope.scaling == rope_scaling_kind::yarn);
        CHECK(s.rope.factor == 40);
        CHECK(s.rope.original_max_positions == 4096);
        CHECK(s.rope.beta_fast == 32);
        CHECK(s.rope.beta_slow == 1);
        CHECK(s.rope.mscale == 0.707);
        CHECK(s.rope.mscale_all_dim == 0.707);
    }
    SECTION("GPT-NeoX 20B: rotary_pct 0.25 of each head, rotary_emb_base 10000") {
        const auto s = arch_hf("gpt-neox-20b");
        CHECK(s.rope.fraction == 0.25);
        CHECK(s.rope.theta == 10000);
    }
    SECTION("Gemma 2: attention soft-capping 50; Gemma 3: QK-norm, a local base 10000 beside the global 1e6") {
        CHECK(arch_hf("gemma-2-9b").attn_logit_softcap == 50);
        const auto g3 = arch_hf("gemma-3-1b-it");
        CHECK(g3.qk_norm);
        CHECK(g3.rope.theta == 1e6);
        CHECK(g3.rope.local_theta == 10000);
    }
    SECTION("Phi-3.5 mini: LongRoPE ('longrope' type) from its 4096-token original context") {
        const auto s = arch_hf("phi-3.5-mini-instruct");
        CHECK(s.rope.scaling == rope_scaling_kind::longrope);
        CHECK(s.rope.original_max_positions == 4096);
    }
    SECTION("transformers' defaults where a config omits the key: LlamaConfig 1e4 and 1e-6, MixtralConfig 1e6 and 1e-5") {
        auto c = arch_raw("llama-3.1-8b");
        c.erase("rope_theta");
        c.erase("rms_norm_eps");
        c.erase("rope_scaling");
        const auto s = from_hf_config(c);
        CHECK(s.rope.theta == 10000);
        CHECK(s.norm_eps == 1e-6);
        auto x = arch_raw("mixtral-8x7b");
        x.erase("rope_theta");
        x.erase("rms_norm_eps");
        CHECK(from_hf_config(x).rope.theta == 1e6);
        CHECK(from_hf_config(x).norm_eps == 1e-5);
    }
    SECTION("transformers v5's rope_parameters form reads as the older keys") {
        auto c = arch_raw("llama-3.1-8b");
        auto params = c["rope_scaling"];
        params["rope_theta"] = c["rope_theta"];
        c.erase("rope_theta");
        c.erase("rope_scaling");
        c["rope_parameters"] = params;
        CHECK(from_hf_config(c).rope == arch_hf("llama-3.1-8b").rope);
    }
    SECTION("Gemma 3's text_config without vocab_size takes Gemma3TextConfig's 262208") {
        nlohmann::json c{{"model_type", "gemma3"}, {"text_config", arch_raw("gemma-3-1b-it")}};
        c["text_config"].erase("model_type");
        c["text_config"].erase("vocab_size");
        CHECK(from_hf_config(c).vocab == 262208);
    }
    SECTION("a rope type transformers does not know, or a bad value, is refused naming the key") {
        auto c = arch_raw("llama-3.1-8b");
        c["rope_scaling"]["rope_type"] = "stretchy";
        CHECK_THROWS_WITH(from_hf_config(c), Contains("rope_type=\"stretchy\"") && Contains("model.rope.scaling"));
        auto d = arch_raw("llama-3.1-8b");
        d["rms_norm_eps"] = -1;
        CHECK_THROWS_WITH(from_hf_config(d), Contains("rms_norm_eps=-1"));
        auto e = arch_raw("llama-3.1-8b");
        e["rope_theta"] = "big";
        CHECK_THROWS_WITH(from_hf_config(e), Contains("rope_theta=\"big\""));
    }
}

TEST_CASE("model.rope, norm_eps, qk_norm in job files: read, written back, checked") {
    const auto& m = preset("llama-3.1-8b");
    const auto j = to_json(m);
    CHECK(j.at("rope").at("theta") == 500000.0);
    CHECK(j.at("rope").at("scaling") == "llama3");
    CHECK(j.at("norm_eps") == 1e-5);
    CHECK(model_from_json(j) == m);
    CHECK_THROWS_WITH(model_from_json(nlohmann::json{{"preset", "llama-2-7b"}, {"rope", {{"theta", 0}}}}),
                      Contains("model.rope.theta=0"));
    CHECK_THROWS_WITH(model_from_json(nlohmann::json{{"preset", "llama-2-7b"}, {"rope", {{"scaling", "llama3"}, {"factor", 8}}}}),
                      Contains("low_freq_factor"));
    CHECK_THROWS_WITH(model_from_json(nlohmann::json{{"preset", "llama-2-7b"}, {"rope", {{"factor", 8}}}}),
                      Contains("model.rope.scaling=\"none\""));
    CHECK_THROWS_WITH(model_from_json(nlohmann::json{{"preset", "llama-2-7b"}, {"norm_eps", 2}}), Contains("model.norm_eps=2"));
    CHECK_THROWS_WITH(model_from_json(nlohmann::json{{"preset", "llama-2-7b"}, {"rope", {{"thetta", 1}}}}), Contains("thetta"));
}

TEST_CASE("Megatron-LM builds the published rotary base, scaling, norm epsilon and QK-norm, or the launch refuses") {
    SECTION("Llama 3.1 8B: --rotary-base 500000 --use-rope-scaling --rope-scaling-factor 8; eps 1e-5 is the default") {
        const auto a = arch_args(preset("llama-3.1-8b"));
        CHECK(arch_has(a, "--rotary-base 500000"));
        CHECK(arch_has(a, "--use-rope-scaling"));
        CHECK(arch_has(a, "--rope-scaling-factor 8"));
        CHECK_FALSE(arch_has(a, "--norm-epsilon 1e-05"));
        CHECK(megatron_builds(preset("llama-3.1-8b")) == preset("llama-3.1-8b"));
    }
    SECTION("Llama 2 7B: Megatron's defaults are the published values, so nothing more is written") {
        const auto a = arch_args(preset("llama-2-7b"));
        CHECK(std::none_of(a.begin(), a.end(), [](const std::string& x) { return x.find("rotary") != std::string::npos; }));
        CHECK(megatron_builds(preset("llama-2-7b")) == preset("llama-2-7b"));
    }
    SECTION("Qwen3 and Qwen2.5: base 1e6, eps 1e-6; Qwen3's --qk-layernorm") {
        const auto a = arch_args(preset("qwen3-1.7b"));
        CHECK(arch_has(a, "--rotary-base 1000000"));
        CHECK(arch_has(a, "--norm-epsilon 1e-06"));
        CHECK(arch_has(a, "--qk-layernorm"));
        CHECK_FALSE(arch_has(arch_args(preset("qwen2.5-7b")), "--qk-layernorm"));
        for (const char* n : {"qwen3-1.7b", "qwen2.5-7b", "mixtral-8x7b", "olmo-2-7b", "llama-3.2-1b", "gpt-neox-20b"}) {
            INFO(n);
            CHECK(megatron_builds(preset(n)) == preset(n));
        }
    }
    SECTION("DeepSeek-V2-Lite (MLA): --rope-type yarn --rotary-scaling-factor 40 --mscale 0.707 --mscale-all-dim 0.707") {
        const auto a = arch_args(preset("deepseek-v2-lite"));
        CHECK(arch_has(a, "--rope-type yarn"));
        CHECK(arch_has(a, "--rotary-scaling-factor 40"));
        CHECK(arch_has(a, "--mscale 0.707"));
        CHECK(arch_has(a, "--mscale-all-dim 0.707"));
        CHECK(arch_has(a, "--norm-epsilon 1e-06"));
        CHECK(megatron_builds(preset("deepseek-v2-lite")) == preset("deepseek-v2-lite"));
    }
    SECTION("YaRN without MLA: --position-embedding-type yarn and its --yarn-* flags") {
        auto m = preset("qwen3-1.7b");
        m.rope.scaling = rope_scaling_kind::yarn;
        m.rope.factor = 4;
        m.rope.original_max_positions = 32768;
        const auto a = arch_args(m);
        CHECK(arch_has(a, "--position-embedding-type yarn"));
        CHECK(arch_has(a, "--yarn-original-max-position-embeddings 32768"));
        CHECK(megatron_builds(m) == m);
    }
    SECTION("what Megatron-LM cannot build is refused naming the field") {
        CHECK_THAT(arch_refusal(preset("phi-3.5-mini")), Contains("model.rope.scaling=\"longrope\"") && Contains("Megatron-LM"));
        auto m = preset("llama-3.1-8b");
        m.rope.high_freq_factor = 2;
        CHECK_THAT(arch_refusal(m), Contains("high_freq_factor 2"));
        m = preset("llama-2-7b");
        m.rope.theta = 12345.5;
        CHECK_THAT(arch_refusal(m), Contains("model.rope.theta=12345.5"));
        m = preset("llama-2-7b");
        m.attn_logit_softcap = 50;
        CHECK_THAT(arch_refusal(m), Contains("model.attn_logit_softcap=50"));
    }
}

TEST_CASE("llm-foundry's MPT: rope_theta, rope_hf_config (llama3), norm_eps and qk_gn as published, or a refusal") {
    const auto yaml = mpt_yaml(preset("llama-3.1-8b"));
    CHECK_THAT(yaml, Contains("    rope: true\n    rope_theta: 500000\n    rope_impl: hf\n    rope_hf_config:\n      type: llama3\n"
                              "      factor: 8\n      low_freq_factor: 1\n      high_freq_factor: 4\n"
                              "      original_max_position_embeddings: 8192\n"));
    const auto qwen3 = mpt_yaml(preset("qwen3-1.7b"));
    CHECK_THAT(qwen3, Contains("  norm_eps: 1e-06\n"));
    CHECK_THAT(qwen3, Contains("    qk_gn: true\n"));
    CHECK_THAT(qwen3, Contains("    rope_theta: 1000000\n"));
    // Llama 2: MPT's defaults are the published values
    const auto llama2 = mpt_yaml(preset("llama-2-7b"));
    CHECK(llama2.find("rope_theta") == std::string::npos);
    CHECK(llama2.find("norm_eps") == std::string::npos);
    CHECK_THROWS_WITH(mpt_yaml(preset("gpt-neox-20b")),
                      Contains("model.rope.fraction=0.25") && Contains("llm-foundry"));
    CHECK_THROWS_WITH(mpt_yaml(preset("phi-3.5-mini")),
                      Contains("model.rope.scaling=\"longrope\""));
}

TEST_CASE("launchers that build a model by name refuse a job whose rotary spec or epsilon is not the published one") {
    auto j = arch_job(preset("llama-3.1-8b"));
    j.model.rope.theta = 10000;
    CHECK_THROWS_WITH(frameworks::torchtune::builder_of(j), Contains("model.rope.theta=10000 (the published model's: 500000)"));
    CHECK_THROWS_WITH(frameworks::torchtitan::base_recipe_for(j, ""), Contains("model.rope.theta=10000"));
    CHECK(frameworks::torchtitan::base_recipe_for(j, "my.recipes:llama_10k") == "my.recipes:llama_10k");  // the user's own
    j.model = preset("llama-3.1-8b");
    j.model.norm_eps = 1e-6;
    CHECK_THROWS_WITH(frameworks::torchtune::builder_of(j), Contains("model.norm_eps=1e-06 (the published model's: 1e-05)"));
    CHECK(published_difference(preset("qwen3-1.7b"), preset("qwen3-1.7b")).empty());
}
