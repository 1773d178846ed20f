// Parameter counting of transformer_spec against counts derived by hand from the module shapes
// (HF / Megatron-LM: QKV [h, (q + 2 kv)], out [q, h], MLP up [h, f] (x2 gated), down [f, h]).
#include <catch2/catch.hpp>

#include <string>

#include "frenzy/model/presets.hpp"
#include "frenzy/model/transformer.hpp"

using namespace frenzy;

namespace {

/// A small model whose counts are easy to derive: h = 64, 8 heads of 8, GQA with 2 KV heads, f = 256.
transformer_spec small() {
    return {.name = "small", .layers = 2, .hidden = 64, .heads = 8, .kv_heads = 2, .ffn_hidden = 256,
            .activation = activation::gelu, .vocab = 1000, .tied_embeddings = false,
            .position_embedding = position_embedding::rope, .norm = norm_kind::rmsnorm, .bias = false};
}

std::string error_of(const transformer_spec& m) {
    try {
        validate(m);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("attention: GQA, explicit head_dim, biases") {
    auto m = small();
    // q = 8 x 8 = 64, kv = 2 x 8 = 16: QKV 64 x (64 + 32) = 6144, out 64 x 64 = 4096.
    CHECK(count_parameters(m, m.vocab, 0).attention == 10240);
    m.qkv_bias = true;  // + (64 + 32) QKV biases
    CHECK(count_parameters(m, m.vocab, 0).attention == 10336);
    m.bias = true;      // + the output bias (64), QKV biases once (qkv_bias is implied)
    CHECK(count_parameters(m, m.vocab, 0).attention == 10400);

    auto g = small();   // head_dim decoupled from hidden (Gemma-like): 4 heads of 32 -> q = 128, MHA kv = 128
    g.heads = 4;
    g.kv_heads = 0;
    g.head_dim = 32;
    CHECK(g.hdim() == 32);
    CHECK(g.kv() == 4);
    // QKV 64 x (128 + 256) = 24576, out 128 x 64 = 8192
    CHECK(count_parameters(g, g.vocab, 0).attention == 32768);
}

TEST_CASE("MLP: SwiGLU vs GELU, with and without biases") {
    auto m = small();
    // GELU, no bias: up 64 x 256 + down 256 x 64
    CHECK(count_parameters(m, m.vocab, 0).dense_mlp == 32768);
    m.bias = true;  // + 256 + 64
    CHECK(count_parameters(m, m.vocab, 0).dense_mlp == 33088);
    m.activation = activation::swiglu;  // gate + up: 2 x 64 x 256, down 256 x 64, biases 512 + 64
    CHECK(count_parameters(m, m.vocab, 0).dense_mlp == 49728);
    m.bias = false;
    CHECK(count_parameters(m, m.vocab, 0).dense_mlp == 49152);
    m.activation = activation::relu;  // ungated like GELU
    CHECK(count_parameters(m, m.vocab, 0).dense_mlp == 32768);
}

TEST_CASE("norms: LayerNorm has weight and bias, RMSNorm weight only, BLOOM adds an embedding norm") {
    auto m = small();
    CHECK(count_parameters(m, m.vocab, 0).layer_norms == 2 * 64);
    CHECK(count_parameters(m, m.vocab, 0).final_norm == 64);
    m.norm = norm_kind::layernorm;
    CHECK(count_parameters(m, m.vocab, 0).layer_norms == 4 * 64);
    CHECK(count_parameters(m, m.vocab, 0).final_norm == 128);
    m.embedding_norm = true;
    CHECK(count_parameters(m, m.vocab, 0).final_norm == 256);
}

TEST_CASE("embeddings: tied vs untied, learned positions") {
    auto m = small();
    const double untied = total_parameters(m);
    // layer = 10240 + 32768 + 128; 2 layers + embedding 64000 + head 64000 + final norm 64
    CHECK(untied == 2 * (10240 + 32768 + 128) + 64000 + 64000 + 64);
    m.tied_embeddings = true;
    CHECK(untied - total_parameters(m) == 1000 * 64);
    m.position_embedding = position_embedding::learned;
    CHECK(total_parameters(m, 512) - total_parameters(m, 0) == 512 * 64);  // table sized by seq_len ...
    m.max_positions = 2048;
    CHECK(total_parameters(m, 512) == total_parameters(m, 4096));          // ... unless max_positions is set
    CHECK(count_parameters(m, m.vocab, 2048).position_embedding == 2048 * 64);
    m.position_embedding = position_embedding::rope;
    CHECK(count_parameters(m, m.vocab, 2048).position_embedding == 0);
    // padded vocabulary enlarges both embedding and (untied) head
    m.tied_embeddings = false;
    const auto c = count_parameters(m, padded_vocab(m.vocab, 128), 0);
    CHECK(c.word_embedding == 1024 * 64);
    CHECK(c.output_layer == 1024 * 64);
}

TEST_CASE("whole models derived by hand") {
    // GPT-2 small: layer = attention 4h^2 + 4h, MLP 8h^2 + 5h, two LayerNorms 4h (h = 768):
    // 2,362,368 + 4,722,432 + 3,072 = 7,087,872; x12 = 85,054,464; wte 50257 x 768 = 38,597,376;
    // wpe 1024 x 768 = 786,432; ln_f 1,536; tied head. Total 124,439,808 (the HF count of gpt2).
    CHECK(total_parameters(preset("gpt2")) == 124439808.0);
    // Llama-2-7B: layer = 4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096 = 202,383,360; x32 = 6,476,267,520;
    // embedding + untied head 2 x 32000 x 4096 = 262,144,000; final norm 4096. Total 6,738,415,616.
    CHECK(total_parameters(preset("llama-2-7b")) == 6738415616.0);
    // Llama-2-70B (GQA 64/8): attention 8192 x (8192 + 2 x 1024) + 8192^2 = 150,994,944;
    // MLP 3 x 8192 x 28672 = 704,643,072; norms 16,384 -> 855,654,400 x 80 = 68,452,352,000;
    // + 2 x 32000 x 8192 = 524,288,000 + 8192 = 68,976,648,192.
    CHECK(total_parameters(preset("llama-2-70b")) == 68976648192.0);
    // Qwen2.5-7B: attention 3584 x 4608 + 3584^2 + 4608 QKV biases = 29,364,736; MLP 3 x 3584 x 18944 =
    // 203,685,888; norms 7168 -> 233,057,792 x 28 = 6,525,618,176 (the card's 6.53B non-embedding);
    // + 2 x 152064 x 3584 = 1,089,994,752 + 3584 = 7,615,616,512.
    CHECK(total_parameters(preset("qwen2.5-7b")) == 7615616512.0);
    // BLOOM-176B: layer 12h^2 + 13h (h = 14336) = 2,466,437,120 x 70; embedding 250880 x 14336 tied;
    // final + embedding LayerNorm 4h: total 176,247,271,424 (bigscience/bloom model card).
    CHECK(total_parameters(preset("bloom-176b")) == 176247271424.0);
}

TEST_CASE("mixture of experts: Mixtral total and active parameters") {
    const auto& m = preset("mixtral-8x7b");
    const auto c = count_parameters(m, m.vocab, 0);
    CHECK(c.attention == 41943040);  // 4096 x 6144 + 4096^2
    CHECK(c.expert == 176160768);    // 3 x 4096 x 14336
    CHECK(c.router == 32768);        // 4096 x 8
    CHECK(c.shared_expert == 0);
    // layer 41,943,040 + 8 x 176,160,768 + 32,768 + 8,192 = 1,451,270,144; x32 + 262,144,000 + 4096
    CHECK(total_parameters(m) == 46702792704.0);
    // active: 2 experts a token: (41,943,040 + 2 x 176,160,768 + 32,768 + 8,192) x 32 + 262,148,096
    CHECK(active_parameters(m) == 12879925248.0);
    // Mistral AI publishes 12.9B active; the hand count is 0.16% below (rounding of the published figure).
    CHECK(active_parameters(m) == Approx(12.9e9).epsilon(0.005));
    // A dense model's active parameters are all its parameters.
    CHECK(active_parameters(preset("llama-2-7b")) == total_parameters(preset("llama-2-7b")));
}

TEST_CASE("mixture of experts: shared experts, expert width, leading dense layers") {
    transformer_spec m{.name = "tiny-moe", .layers = 3, .hidden = 16, .heads = 2, .ffn_hidden = 64,
                       .activation = activation::swiglu, .vocab = 100, .tied_embeddings = false,
                       .position_embedding = position_embedding::rope, .norm = norm_kind::rmsnorm, .bias = false,
                       .moe = {.experts = 4, .top_k = 2, .expert_ffn_hidden = 8, .shared_experts = 1,
                               .dense_layers = 1}};
    REQUIRE(error_of(m).empty());
    CHECK(m.moe_layers() == 2);
    const auto c = count_parameters(m, m.vocab, 0);
    CHECK(c.attention == 1024);     // 4 x 16^2
    CHECK(c.dense_mlp == 3072);     // 3 x 16 x 64
    CHECK(c.expert == 384);         // 3 x 16 x 8
    CHECK(c.shared_expert == 384);  // one shared expert of the same width
    CHECK(c.router == 64);          // 16 x 4
    // dense layer 1024 + 3072 + 32 = 4128; MoE layer 1024 + 32 + 64 + 384 + 4 x 384 = 3040 (active: 2 x 384 -> 2272)
    // embeddings 2 x 100 x 16 = 3200, final norm 16
    CHECK(total_parameters(m) == 4128 + 2 * 3040 + 3200 + 16);
    CHECK(active_parameters(m) == 4128 + 2 * 2272 + 3200 + 16);
}

TEST_CASE("padded_vocab pads the way Megatron-LM does") {
    CHECK(padded_vocab(50257, 128) == 50304);      // GPT-2 vocabulary, tp = 1
    CHECK(padded_vocab(50257, 128 * 8) == 51200);  // tp = 8
    CHECK(padded_vocab(131073, 512) == 131584);
    CHECK(padded_vocab(128256, 128) == 128256);    // already a multiple
    CHECK(padded_vocab(32000, 1) == 32000);        // no padding
    CHECK(padded_vocab(32001, 0) == 32001);
}

TEST_CASE("validate(transformer_spec) names the field and the rule") {
    using Catch::Matchers::Contains;
    auto m = small();
    REQUIRE(error_of(m).empty());
    SECTION("positive sizes") {
        m.layers = 0;
        CHECK_THAT(error_of(m), Contains("model.layers=0") && Contains("positive"));
    }
    SECTION("vocab") {
        m.vocab = -5;
        CHECK_THAT(error_of(m), Contains("model.vocab=-5"));
    }
    SECTION("kv_heads divides heads") {
        m.kv_heads = 3;
        CHECK_THAT(error_of(m), Contains("model.kv_heads=3") && Contains("model.heads=8"));
    }
    SECTION("heads divides hidden unless head_dim is given") {
        m.hidden = 100;
        CHECK_THAT(error_of(m), Contains("model.heads=8") && Contains("model.hidden=100"));
        m.head_dim = 16;
        CHECK(error_of(m).empty());
    }
    SECTION("negative head_dim") {
        m.head_dim = -1;
        CHECK_THAT(error_of(m), Contains("model.head_dim=-1"));
    }
    SECTION("top_k within experts") {
        m.moe = {.experts = 2, .top_k = 3};
        CHECK_THAT(error_of(m), Contains("model.moe.top_k=3") && Contains("model.moe.experts=2"));
    }
    SECTION("dense layers fewer than layers") {
        m.moe = {.experts = 4, .top_k = 1, .dense_layers = 2};
        CHECK_THAT(error_of(m), Contains("model.moe.dense_layers=2") && Contains("model.layers=2"));
    }
    SECTION("MoE fields without experts") {
        m.moe = {.top_k = 2};
        CHECK_THAT(error_of(m), Contains("model.moe.experts=0"));
    }
}

TEST_CASE("architecture fields of the 2024-2026 families") {
    SECTION("interleaved MoE layers: closed-form count and membership") {
        transformer_spec m = preset("mixtral-8x7b");
        m.moe.layer_step = 2;  // layers 1, 3, 5, ... are MoE (Llama 4 Maverick's rule)
        CHECK(m.moe_layers() == 16);
        CHECK(m.moe_layers_below(5) == 2);  // layers 1 and 3
        CHECK_FALSE(m.is_moe_layer(4));
        CHECK(m.is_moe_layer(5));
        m.moe.dense_layers = 3;  // then layers 4, 6, ... (every second after the dense prefix)
        CHECK(m.moe_layers() == 14);  // (32 - 3) / 2
        CHECK(m.is_moe_layer(4));
        m.moe.layer_step = 40;
        CHECK_THROWS_WITH(validate(m), Catch::Matchers::Contains("model.moe.layer_step=40 leaves no MoE layer"));
    }
    SECTION("parallel attention: one norm a layer unless given") {
        transformer_spec m = preset("gpt2");
        const double two = count_parameters(m, m.vocab, 1024).layer_norms;
        m.parallel_attention = true;
        CHECK(count_parameters(m, m.vocab, 1024).layer_norms == two / 2);  // one LayerNorm (2 x 768)
        m.norms_per_layer = 4;
        CHECK(count_parameters(m, m.vocab, 1024).layer_norms == 2 * two);
    }
    SECTION("GeGLU is gated: three MLP matrices") {
        transformer_spec m = preset("llama-2-7b");
        const double swiglu = count_parameters(m, m.vocab, 0).dense_mlp;
        m.activation = activation::geglu;
        CHECK(is_gated(m.activation));
        CHECK(count_parameters(m, m.vocab, 0).dense_mlp == swiglu);  // 3 x 4096 x 11008
    }
    SECTION("sliding windows shorten the mean attention span") {
        transformer_spec m = preset("gemma-2-9b");
        // 42 layers, every 2nd global: 21 x 8192 + 21 x 4096 keys at s = 8192 -> 6144 on average.
        CHECK(mean_attention_span(m, 8192) == 6144.0);
        CHECK(mean_attention_span(m, 4096) == 4096.0);  // window >= s: no effect
    }
}

TEST_CASE("MLA: GEMM weights and widths") {
    const auto& m = preset("deepseek-v2-lite");
    // q 2048 x 16 x 192 + kv_a 2048 x (512 + 64) + kv_b 512 x 16 x (128 + 128) + o 16 x 128 x 2048 = 13,762,560
    CHECK(attention_weights(m) == 13762560.0);
    CHECK(m.q_width() == 3072);
    CHECK(m.v_width() == 2048);
    const auto& v3 = preset("deepseek-v3");
    // with the q low-rank pair: 7168 x 1536 + 1536 x 128 x 192 + 7168 x 576 + 512 x 128 x 256 + 128 x 128 x 7168
    CHECK(attention_weights(v3) ==
          7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168);
}
