// The litgpt launcher (frameworks/litgpt/launcher.hpp): every key it writes is one LitGPT's CLI reads
// (tests/data/launch/litgpt_keys.txt, extracted from Lightning-AI/litgpt@26857050), its model table agrees with
// litgpt/config.py (tests/data/launch/litgpt_models.txt) and the presets, every supported preset launches, and what
// LitGPT cannot run is refused by name.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <string>

#include "frenzy/frameworks/litgpt/launcher.hpp"
#include "frenzy/launch/launch.hpp"
#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/model/presets.hpp"
#include "shell.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace {

const std::string litgpt_data_dir = std::string(FRENZY_SOURCE_DIR) + "/tests/data/launch";

std::vector<std::string> litgpt_data_lines(const std::string& name) {
    std::ifstream f(litgpt_data_dir + "/" + name);
    std::vector<std::string> out;
    std::string line;
    while (std::getline(f, line))
        if (!line.empty() && line[0] != '#') out.push_back(line);
    REQUIRE(out.size() > 100);  // 223 keys, 141 configs: a truncated file would pass anything
    return out;
}

/// The dotted key paths of litgpt.yaml (launch_shell::yaml_key_paths), prefixed with the command.
std::vector<std::string> litgpt_yaml_paths(const std::string& command, const std::string& text) {
    auto out = launch_shell::yaml_key_paths(text);
    for (auto& p : out) p = command + "." + p;
    return out;
}

job_spec litgpt_job(const std::string& model, std::int64_t dp, bool lora) {
    job_spec j;
    j.name = "litgpt-" + model;
    j.model = preset(model);
    j.runtime.framework = frameworks::litgpt::handle;
    j.training = {.seq_len = 2048, .micro_batch = 1, .global_batch = 64, .precision = precision::bf16,
                  .total_tokens = 64.0 * 2048 * 100};
    if (lora) j.training.finetune = {.method = finetune_method::lora, .rank = 16, .alpha = 32, .targets = lora_q | lora_k | lora_v | lora_o, .dropout = 0.05};
    j.parallel = {.dp = dp};
    if (dp > 1) j.parallel = {.dp = dp, .sharding = sharding::full, .recompute = lora ? recompute::full : recompute::none};
    return j;
}

plan litgpt_plan_of(const job_spec& j) {
    plan p;
    p.gpu = "h100-80g";
    p.gpus = static_cast<int>(j.parallel.gpus());
    p.nodes = (p.gpus + 7) / 8;
    p.framework = j.runtime.framework;
    p.micro_batch = j.training.micro_batch;
    return p;
}

launch_options litgpt_launch_options() {
    launch_options o;
    o.launcher = frameworks::litgpt::launcher_handle;
    return o;
}

}  // namespace

TEST_CASE("every litgpt.yaml key is a parameter of the LitGPT command or a TrainArgs field") {
    const auto list = litgpt_data_lines("litgpt_keys.txt");
    const std::set<std::string> keys(list.begin(), list.end());
    std::vector<job_spec> jobs{litgpt_job("llama-3.1-8b", 8, true), litgpt_job("llama-3.1-8b", 16, false),
                               litgpt_job("qwen2.5-7b", 1, true)};
    auto q = litgpt_job("llama-3.2-1b", 1, true);
    q.training.finetune.method = finetune_method::qlora;
    q.training.finetune.targets = lora_q | lora_v | lora_gate | lora_up | lora_down;
    jobs.push_back(q);
    auto nobudget = litgpt_job("mistral-7b", 8, false);
    nobudget.training.total_tokens = 0;
    jobs.push_back(nobudget);
    for (const auto& j : jobs) {
        const auto text = frameworks::litgpt::config_yaml(j);
        const auto paths = litgpt_yaml_paths(frameworks::litgpt::command_of(j), text);
        CHECK(paths.size() >= 10);
        for (const auto& k : paths) {
            INFO(j.name << ": " << k << "\n" << text);
            CHECK(keys.count(k) == 1);
        }
    }
}

TEST_CASE("litgpt's model table: each entry is a config of litgpt/config.py and has the preset's shape") {
    // litgpt_models.txt: "CONFIG ORG/NAME N_LAYER N_EMBD" per config of litgpt/config.py@26857050.
    std::set<std::string> configs;
    for (const auto& line : litgpt_data_lines("litgpt_models.txt")) configs.insert(line);
    for (const auto& m : frameworks::litgpt::models) {
        INFO(m.preset);
        CHECK(configs.count(std::string(m.config) + " " + std::string(m.repo) + " " + std::to_string(m.layers) + " " +
                            std::to_string(m.hidden)) == 1);
        const auto& p = preset(m.preset);
        CHECK(p.layers == m.layers);
        CHECK(p.hidden == m.hidden);
    }
}

TEST_CASE("every preset LitGPT has a config for launches with the litgpt launcher: LoRA on one GPU, pretrain on 8") {
    std::size_t launched = 0;
    for (const auto& m : frameworks::litgpt::models) {
        for (const bool lora : {true, false}) {
            const auto j = litgpt_job(std::string(m.preset), lora ? 1 : 8, lora);
            INFO(m.preset << (lora ? " lora" : " pretrain"));
            const auto files = launch_files(j, litgpt_plan_of(j), litgpt_launch_options());
            REQUIRE(files.size() == 2);
            const auto& yaml = files[1].content;
            CHECK(files[1].name == "litgpt.yaml");
            CHECK(yaml.find(lora ? "checkpoint_dir: checkpoints/" + std::string(m.repo) : "model_name: " + std::string(m.config) + "\n") !=
                  std::string::npos);
            const auto& sbatch = files[0].content;
            CHECK(sbatch.find(std::string("-m litgpt ") + (lora ? "finetune_lora" : "pretrain") +
                              " --config \"$LAUNCH_DIR/litgpt.yaml\" --devices \"$DEVICES\" --num_nodes \"$NUM_NODES\"") !=
                  std::string::npos);
            ++launched;
        }
    }
    CHECK(launched == 2 * frameworks::litgpt::models.size());
}

TEST_CASE("litgpt launcher: what LitGPT has no config or setting for is refused by name") {
    auto j = litgpt_job("gpt3-175b", 8, false);
    CHECK_THROWS_WITH(frameworks::litgpt::config_yaml(j), Contains("model.name=\"gpt3-175b\" has no LitGPT model config"));
    j = litgpt_job("llama-3.1-8b", 8, false);
    j.model.layers = 20;
    CHECK_THROWS_WITH(frameworks::litgpt::config_yaml(j), Contains("model.layers=20") && Contains("Llama-3.1-8B has 32 layers"));
    j = litgpt_job("llama-3.1-8b", 1, true);
    j.training.finetune.alpha = 2.5;
    CHECK_THROWS_WITH(frameworks::litgpt::config_yaml(j), Contains("training.finetune.alpha=2.5"));
    j = litgpt_job("llama-3.1-8b", 1, true);
    j.runtime.compile = true;
    CHECK_THROWS_WITH(launch_files(j, litgpt_plan_of(j), litgpt_launch_options()), Contains("runtime.compile"));
    j = litgpt_job("llama-3.1-8b", 1, true);
    j.training.optimizer = optimizer_kind::adafactor;
    CHECK_THROWS_WITH(frameworks::litgpt::config_yaml(j), Contains("training.optimizer=\"adafactor\""));
    j = litgpt_job("llama-3.1-8b", 8, true);
    j.runtime.framework = frameworks::hf::handle;
    j.parallel = {.dp = 8};
    CHECK_THROWS_WITH(launch_files(j, litgpt_plan_of(j), litgpt_launch_options()), Contains("runtime.framework=\"hf\" cannot be launched by the litgpt launcher"));
    // the values written: QLoRA's quantization, precision, the token budget as optimizer steps (100) or tokens
    j = litgpt_job("llama-3.2-1b", 1, true);
    j.training.finetune.method = finetune_method::qlora;
    auto text = frameworks::litgpt::config_yaml(j);
    CHECK(text.find("quantize: bnb.nf4-dq\nlora_r: 16\nlora_alpha: 32\nlora_dropout: 0.05\nlora_query: true\nlora_key: true\n"
                    "lora_value: true\nlora_projection: true\nlora_mlp: false\nlora_head: false\n") != std::string::npos);
    CHECK(text.find("precision: bf16-true\ndevices: 1\nnum_nodes: 1\n") != std::string::npos);
    CHECK(text.find("  max_steps: 100\n") != std::string::npos);  // 64 x 2048 x 100 tokens / (64 x 2048) a step
    text = frameworks::litgpt::config_yaml(litgpt_job("llama-3.2-1b", 8, false));
    CHECK(text.find("  max_tokens: 13107200\n") != std::string::npos);
}
