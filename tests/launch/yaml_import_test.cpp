// Megatron-LM YAML argument files (pretrain_gpt.py --yaml-cfg; frameworks/megatron/import.hpp) import to the same job as the
// equivalent launch script.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "frenzy/frameworks/launchers.hpp"

using namespace frenzy;

namespace {
const std::string data = std::string(FRENZY_SOURCE_DIR) + "/tests/data/launch/";

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::any_of(v.begin(), v.end(), [&](const std::string& x) { return x.find(s) != std::string::npos; });
}
}  // namespace

#ifdef FRENZY_HAS_YAML

TEST_CASE("Megatron's Llama 3 8B example as a YAML file imports to the job its launch script imports to") {
    // The fixture restates the script's arguments in the YAML form (its header says how); the script starts
    // torchrun with 8 processes, the YAML file leaves the world size to the launcher, so it is given.
    const auto script = import_launcher_file("megatron", data + "megatron_llama3_8b_h100_fp8.sh");
    import_options o;
    o.world_size = 8;
    const auto yaml = import_launcher_file("megatron", data + "megatron_llama3_8b_h100_fp8.yaml", o);
    REQUIRE(script.world_size == 8);
    CHECK(yaml.world_size == 8);
    CHECK(yaml.has_parallel);
    CHECK(yaml.job == script.job);
    // The values themselves, from the script: 32 layers of 4096, 32 heads in 8 query groups, SwiGLU 14336, RMSNorm,
    // RoPE, untied, no bias, 8k tokens, micro-batch 1 of 128, fp8 (hybrid) over bf16, distributed optimizer, dp 8.
    const auto& j = yaml.job;
    CHECK(j.model.layers == 32);
    CHECK(j.model.hidden == 4096);
    CHECK(j.model.heads == 32);
    CHECK(j.model.kv() == 8);
    CHECK(j.model.ffn_hidden == 14336);
    CHECK(j.model.activation == activation::swiglu);
    CHECK(j.model.norm == norm_kind::rmsnorm);
    CHECK(j.model.position_embedding == position_embedding::rope);
    CHECK_FALSE(j.model.tied_embeddings);
    CHECK_FALSE(j.model.bias);
    CHECK(j.model.vocab == 128256);
    CHECK(j.training.seq_len == 8192);
    CHECK(j.training.micro_batch == 1);
    CHECK(j.training.global_batch == 128);
    CHECK(j.training.precision == precision::fp8_mixed);
    CHECK(j.parallel.dp == 8);
    CHECK(j.parallel.tp == 1);
    CHECK(j.parallel.sharding == sharding::optimizer);
    CHECK(j.runtime.overlap_grad_reduce);
    // The same arguments were ignored as irrelevant (learning rates, data, logging) in both forms.
    CHECK(has(yaml.ignored, "--lr"));
    CHECK(has(yaml.ignored, "--tensorboard-dir"));
    CHECK(has(yaml.ignored, "--sequence-parallel"));  // Megatron turns it off at tp 1
}

TEST_CASE("Megatron YAML: TransformerConfig names map to their argparse flags (yaml_arguments.py)") {
    const auto a = megatron_yaml_to_arguments(R"(
language_model:
  num_layers: 24
  hidden_size: 1024
  num_attention_heads: 16
  num_query_groups: 4
  ffn_hidden_size: 4096
  add_bias_linear: False
  activation_func: squaredrelu
  num_moe_experts: 8
  moe_router_topk: 2
  recompute_granularity: selective
  fp8: null
model_parallel:
  tensor_model_parallel_size: 2
  virtual_pipeline_model_parallel_size: 2
  bf16: True
  fp16: False
micro_batch_size: 2
profile_ranks: [0, 1]
)");
    const std::vector<std::string> want{
        "--micro-batch-size", "2", "--profile-ranks", "0", "1",  // top level first, lists as several values
        "--tensor-model-parallel-size", "2", "--num-virtual-stages-per-pipeline-rank", "2", "--bf16",  // fp16: False -> nothing
        "--num-layers", "24", "--hidden-size", "1024", "--num-attention-heads", "16",
        "--group-query-attention", "--num-query-groups", "4", "--ffn-hidden-size", "4096", "--disable-bias-linear",
        "--squared-relu", "--num-experts", "8", "--moe-router-topk", "2", "--recompute-granularity", "selective"};
    CHECK(a.args == want);  // fp8: null is argparse's default: no flag
    CHECK(a.notes.empty());
}

TEST_CASE("Megatron YAML: what is not read is said, what is not YAML is an error naming the file's rule") {
    const auto a = megatron_yaml_to_arguments("language_model:\n  activation_func: relu\ndata_path: ${DATA}/x\nextra:\n  a: 1\n");
    CHECK(has(a.notes, "language_model.activation_func=relu: not one of swiglu | squaredrelu | gelu"));
    CHECK(has(a.notes, "data_path=${DATA}/x: environment variable not expanded"));
    CHECK(has(a.notes, "extra: a nested mapping"));
    CHECK_THROWS_WITH(megatron_yaml_to_arguments("- --num-layers\n- 2\n"), Catch::Contains("must be a mapping"));
    CHECK_THROWS_WITH(megatron_yaml_to_arguments("a: [1, 2\n"), Catch::Contains("megatron YAML arguments: not YAML (line"));
    CHECK_THROWS_WITH(megatron_yaml_to_arguments("model_parallel: 3\n"), Catch::Contains("model_parallel must be a mapping"));
    // Through the file importer the message names the file.
    const auto path = (std::filesystem::temp_directory_path() / "frenzy_yaml_import_test.yaml").string();
    std::ofstream(path) << "model_parallel: 3\n";
    CHECK_THROWS_WITH(import_launcher_file("megatron", path), Catch::Contains(path + ": megatron YAML arguments: model_parallel"));
    std::filesystem::remove(path);
}

#else

TEST_CASE("without yaml-cpp a Megatron YAML file is refused with the reason") {
    CHECK_THROWS_WITH(import_launcher_file("megatron", data + "megatron_llama3_8b_h100_fp8.yaml"),
                      Catch::Contains("needs Frenzy built with yaml-cpp"));
}

#endif
