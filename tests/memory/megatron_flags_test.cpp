// The Megatron flags of its own Llama 3 8B fp8 example (examples/llama/train_llama3_8b_h100_fp8.sh @d98e8a64) that
// change memory, each against a hand derivation: --fp8-param-gather, --grad-reduce-in-bf16, dropout 0; and the
// import of that script, which now maps them to job fields instead of listing them as not modelled.
#include <catch2/catch.hpp>

#include "frenzy/io/job_json.hpp"
#include "frenzy/frameworks/megatron/import.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"
#include "megatron_llama7b.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace {
using megatron_llama7b::acts;
using megatron_llama7b::h;
using megatron_llama7b::layer_linears;
using megatron_llama7b::layers;
using megatron_llama7b::s;
using megatron_llama7b::states;
}  // namespace

TEST_CASE("Megatron --grad-reduce-in-bf16 halves Megatron's main_grad buffers") {
    auto j = megatron_llama7b::job();
    j.training.precision = precision::bf16_mixed;
    const auto fp32 = states(j);
    j.runtime.grad_reduce_bf16 = true;
    const auto bf16 = states(j);
    // main_grad: 4 B -> 2 B per parameter, not sharded by the distributed optimizer (ZeRO-1).
    const double params = stage_layouts(j, profile_of(j)).front().params();
    CHECK(fp32.gradients.value == Approx(4 * params).epsilon(1e-12));
    CHECK(bf16.gradients.value == Approx(2 * params).epsilon(1e-12));
    CHECK(bf16.weights == fp32.weights);
    CHECK(bf16.optimizer == fp32.optimizer);
}

TEST_CASE("Megatron --fp8-param-gather: the fp8 weights and transposes replace the 16-bit GEMM weights") {
    auto j = megatron_llama7b::job();
    j.training.precision = precision::fp8_mixed;
    const auto cached = states(j);
    j.runtime.fp8_param_gather = true;
    const auto fp8_params = states(j);
    // Without it TE keeps a 16-bit weight (2 B) + its fp8 cast and transpose (1 + 1 B) per GEMM weight; with it the
    // 16-bit copy is not there: 2 B less per GEMM weight, 2 x 202,375,168 x 32 = 12,952,010,752 B.
    CHECK(cached.weights.value - fp8_params.weights.value == Approx(2 * layer_linears * layers).epsilon(1e-12));
    // What remains above 2 B per parameter is the delayed-scaling state (4 GEMMs a layer, 5 fp32 tensors of 1026).
    const double params = stage_layouts(j, profile_of(j)).front().params();
    CHECK(fp8_params.weights.value == Approx(2 * params + layers * 4 * 5 * 1026 * 4).epsilon(1e-12));
}

TEST_CASE("dropout 0 saves no masks") {
    auto j = megatron_llama7b::job();
    j.training.precision = precision::bf16_mixed;
    const auto with = acts(j);
    j.runtime.dropout = false;
    const auto without = acts(j);
    // Per layer two 1-byte masks of s b h (after attention and after the MLP, bias_dropout_add), plus the embedding
    // dropout's s b h on the first stage; flash attention keeps no attention-dropout mask. One micro-batch in flight.
    CHECK(with.stored.value - without.stored.value == Approx((2 * layers + 1) * s * h).epsilon(1e-12));
    // The default stays the framework's: Megatron on, torchtitan off.
    CHECK(profile_of(megatron_llama7b::job()).dropout);
    auto fsdp = megatron_llama7b::job();
    fsdp.runtime.framework = frameworks::fsdp::handle;
    fsdp.parallel.sharding = sharding::full;
    CHECK_FALSE(profile_of(fsdp).dropout);
    fsdp.runtime.dropout = true;
    CHECK(profile_of(fsdp).dropout);
}

TEST_CASE("the flags are validated against what Megatron accepts") {
    auto j = megatron_llama7b::job();
    j.runtime.fp8_param_gather = true;  // bf16 job
    j.training.precision = precision::bf16_mixed;
    CHECK_THROWS_WITH(validate(j), Contains("runtime.fp8_param_gather=true needs training.precision=\"fp8-mixed\""));
    j.training.precision = precision::fp8_mixed;
    j.parallel.sharding = sharding::none;
    CHECK_THROWS_WITH(validate(j), Contains("needs the distributed optimizer"));
    j.parallel.sharding = sharding::optimizer;
    CHECK_NOTHROW(validate(j));
    auto g = megatron_llama7b::job();
    g.training.precision = precision::fp16_mixed;
    g.runtime.grad_reduce_bf16 = true;
    CHECK_THROWS_WITH(validate(g), Contains("runtime.grad_reduce_bf16=true needs bf16 parameters"));
    g.training.precision = precision::bf16_mixed;
    g.runtime.framework = frameworks::fsdp::handle;
    g.parallel.sharding = sharding::full;
    CHECK_THROWS_WITH(validate(g), Contains("runtime.grad_reduce_bf16=true needs runtime.framework=\"megatron\""));
}

TEST_CASE("job JSON carries the new runtime fields both ways") {
    auto j = megatron_llama7b::job();
    j.training.precision = precision::fp8_mixed;
    j.runtime.fp8_param_gather = true;
    j.runtime.grad_reduce_bf16 = true;
    j.runtime.dropout = false;
    j.runtime.rope_fp32 = false;
    const auto back = job_from_json(to_json(j)).job;
    CHECK(back.runtime == j.runtime);
    const auto unset = job_from_json(to_json(megatron_llama7b::job())).job;
    CHECK_FALSE(unset.runtime.dropout.has_value());
    CHECK_FALSE(unset.runtime.rope_fp32.has_value());
}

TEST_CASE("Megatron's Llama 3 8B fp8 example: flags imported, estimate within an H100's 80 GB") {
    const auto r = megatron_import_file(std::string(FRENZY_SOURCE_DIR) + "/tests/data/launch/megatron_llama3_8b_h100_fp8.sh");
    CHECK(r.unknown.empty());
    CHECK(r.job.runtime.fp8_param_gather);
    CHECK(r.job.runtime.grad_reduce_bf16);
    REQUIRE(r.job.runtime.dropout.has_value());
    CHECK_FALSE(*r.job.runtime.dropout);
    const auto est = memory_estimator{}.estimate(r.job);
    // Hand count of the model states (8,030,261,248 parameters, 6,979,321,856 of them in GEMM weights, dp 8,
    // distributed optimizer): 2 B weights (bf16 or fp8 + transpose) + 2 B bf16 main_grad + 12 B / 8 optimizer
    // = 5.5 B per parameter = 44.17 GB, + 0.65 MB of delayed-scaling state. Before the flags were read:
    // 2 + 2 (fp8 cache) on GEMM weights, 4 B fp32 grads: 8.5 B + 2 B x 6.98e9, i.e. 82.2 GB of states alone.
    const auto& st = est.stages.front();
    CHECK(st.breakdown.model_states().value == Approx(5.5 * 8030261248.0).epsilon(1e-3));
    // The allocated peak (states + activations of one 8192-token micro-batch) is below an H100's 81,559 MiB
    // (data/gpus.csv h100-80g); the estimate was 104.7 GiB allocated, 110 GiB reserved before.
    CHECK(est.peak_allocated.value < 81559.0 * MiB);
}

TEST_CASE("MoE options are read by one reader from a launch script and from a table's other_flags") {
    // frameworks/megatron/options.hpp: the import of a script and the other_flags cell of a measurement table understand
    // the same Megatron flags (the importer had listed --moe-grouped-gemm and --moe-token-dispatcher-type as not
    // modelled while the estimator modelled both).
    const std::vector<std::string> args{
        "--num-layers", "12", "--hidden-size", "512", "--num-attention-heads", "8", "--vocab-size", "50304",
        "--seq-length", "1024", "--micro-batch-size", "4", "--global-batch-size", "32", "--bf16",
        "--tensor-model-parallel-size", "2", "--sequence-parallel", "--num-experts", "8", "--moe-router-topk", "2",
        "--expert-model-parallel-size", "4", "--expert-tensor-parallel-size", "1", "--moe-grouped-gemm",
        "--moe-token-dispatcher-type", "alltoall", "--moe-expert-capacity-factor", "1.5",
        "--moe-pad-expert-input-to-capacity", "--moe-token-drop-policy", "probs", "--transformer-impl", "local"};
    const auto r = megatron_import_arguments(args, {}, 8);
    INFO("unknown: " << (r.unknown.empty() ? "" : r.unknown.front()));
    CHECK(r.unknown.empty());
    const auto& j = r.job;
    CHECK(j.model.moe.experts == 8);
    CHECK(j.model.moe.top_k == 2);
    CHECK(j.model.moe.capacity_factor == 1.5);
    CHECK(j.model.moe.pad_to_capacity);
    CHECK(j.parallel.ep == 4);
    CHECK(j.parallel.etp == 1);
    CHECK(j.parallel.grouped_gemm);
    CHECK(j.parallel.dispatcher == moe_dispatcher::alltoall);
    CHECK(j.runtime.attention == attention_impl::unfused);  // the local implementation's core attention
    // The DeepEP dispatcher is not modelled: said, not dropped.
    auto flex = args;
    flex[std::find(flex.begin(), flex.end(), "alltoall") - flex.begin()] = "flex";
    const auto rf = megatron_import_arguments(flex, {}, 8);
    REQUIRE(rf.unknown.size() == 1);
    CHECK_THAT(rf.unknown.front(), Contains("--moe-token-dispatcher-type flex (not modelled)"));
    // A bad value names the flag.
    auto bad = args;
    bad[std::find(bad.begin(), bad.end(), "1.5") - bad.begin()] = "lots";
    CHECK_THROWS_WITH(megatron_import_arguments(bad, {}, 8), Contains("--moe-expert-capacity-factor"));
}

TEST_CASE("flags in free text: values without the prose's punctuation, switches, --flag=value") {
    const auto a = megatron_flags_in_text(
        "MoE: --num-experts 8 --moe-router-topk 1 (sinkhorn load balancing) --expert-model-parallel-size 2, "
        "expert tensor parallel = tp = 2, (--moe-grouped-gemm), --hidden-dropout=0; --recompute-method block.");
    REQUIRE(a.size() == 6);
    CHECK((a[0].flag == "--num-experts" && a[0].values == std::vector<std::string>{"8"}));
    CHECK((a[1].flag == "--moe-router-topk" && a[1].values == std::vector<std::string>{"1"}));
    CHECK((a[2].flag == "--expert-model-parallel-size" && a[2].values == std::vector<std::string>{"2"}));
    CHECK((a[3].flag == "--moe-grouped-gemm" && a[3].values.empty()));  // a switch takes no word
    CHECK((a[4].flag == "--hidden-dropout" && a[4].values == std::vector<std::string>{"0"}));
    CHECK((a[5].flag == "--recompute-method" && a[5].values == std::vector<std::string>{"block"}));
}
