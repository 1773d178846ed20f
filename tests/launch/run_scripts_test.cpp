// The batch scripts run (issue 53 item 5): each launcher's launch.sbatch executed by bash with Slurm's variables and
// srun/torchrun stubbed (tests/launch/shell.hpp run_launch_files), and what the framework then receives checked
// against the framework's own rules and the published configuration. torchtitan: its recipe module is run by a stub
// torchtitan package whose base recipe holds the fields torchtitan@b5bcd76c's llama3_8b sets (C4 streamed from the
// Hub, hf_assets_path ./assets/hf/Llama-3.1-8B, checkpoint.enable False), so the settings block is seen to replace them.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "frenzy/launch/launch.hpp"
#include "frenzy/model/presets.hpp"
#include "shell.hpp"

using namespace frenzy;

namespace run_scripts_test {  // named: the launch tests build as one unity file

job_spec run_job(const std::string& preset_name, framework fw, parallel_config p) {
    job_spec j;
    j.name = "run-" + preset_name;
    j.model = preset(preset_name);
    j.training = {.seq_len = 8192, .micro_batch = 1, .global_batch = 64, .total_tokens = 64.0 * 8192 * 2000};
    j.runtime.framework = fw;
    j.parallel = p;
    return j;
}

plan run_plan(const job_spec& j, double step_s) {
    plan p;
    p.gpu = "h100-80g";
    p.gpus = static_cast<int>(j.parallel.gpus());
    p.nodes = (p.gpus + 7) / 8;
    p.gpus_per_node = std::min(8, p.gpus);
    p.framework = j.runtime.framework;
    p.precision = j.training.precision;
    p.parallel = j.parallel;
    p.micro_batch = j.training.micro_batch;
    p.step_time = seconds{step_s};
    p.est_time = seconds{step_s * 2000};
    p.has_budget = true;
    return p;
}

/// A stub torchtitan package under `root`: the modules frenzy_torchtitan.py imports, llama3_8b's fields that the
/// settings block must replace, and torchtitan.train, which builds the recipe named by --module/--config and prints
/// the fields the run would use as JSON.
void write_stub_torchtitan(const std::filesystem::path& root) {
    const auto put = [&](const std::string& rel, const std::string& text) {
        std::filesystem::create_directories((root / rel).parent_path());
        std::ofstream(root / rel) << text;
    };
    for (const auto* pkg : {"torchtitan", "torchtitan/components", "torchtitan/components/data", "torchtitan/distributed",
                            "torchtitan/hf_datasets", "torchtitan/models", "torchtitan/models/llama3"})
        put(std::string(pkg) + "/__init__.py", "");
    put("torchtitan/components/data/sources.py",
        "import dataclasses\n\n\nclass HuggingFaceRandomAccessSource:\n    @dataclasses.dataclass(kw_only=True)\n"
        "    class Config:\n        path: str\n        split: str\n        load_dataset_kwargs: dict\n");
    put("torchtitan/distributed/activation_checkpoint.py",
        "class FullAC:\n    Config = staticmethod(lambda: 'full')\n\n\nclass SelectiveAC:\n    Config = staticmethod(lambda: 'selective')\n");
    put("torchtitan/trainer.py", "class Trainer:\n    Config = object\n");
    put("torchtitan/hf_datasets/text_datasets.py",
        "import dataclasses\n\n\n@dataclasses.dataclass(frozen=True, kw_only=True)\nclass SingleDatasetConfig:\n    source: object\n"
        "    processor: str = 'TextProcessor'\n\n\nDATASETS = {'c4': SingleDatasetConfig(source='allenai/c4 en train, streamed')}\n");
    put("torchtitan/models/llama3/config_registry.py",
        "import dataclasses\nfrom types import SimpleNamespace as NS\n\nfrom torchtitan.hf_datasets.text_datasets import DATASETS\n\n\n"
        "@dataclasses.dataclass(frozen=True, kw_only=True)\nclass ConcatThenSplitPackingConfig:\n    dataset: object\n\n\n"
        "def llama3_8b():  # the fields torchtitan@b5bcd76c's llama3_8b sets that the run's settings concern\n"
        "    return NS(hf_assets_path='./assets/hf/Llama-3.1-8B', dump_folder='./outputs', parallelism=NS(), training=NS(),\n"
        "              compile=NS(), activation_checkpoint=None, checkpoint=NS(enable=False, folder='checkpoint', interval=500),\n"
        "              dataloader=NS(dataset=ConcatThenSplitPackingConfig(dataset=DATASETS['c4'])))\n");
    put("torchtitan/train.py",
        "import argparse, dataclasses, importlib, json\n"
        "p = argparse.ArgumentParser()\np.add_argument('--module')\np.add_argument('--config')\na = p.parse_args()\n"
        "c = getattr(importlib.import_module(a.module), a.config)()\n"
        "d = c.dataloader.dataset.dataset\n"
        "print(json.dumps({'hf_assets_path': c.hf_assets_path, 'dump_folder': c.dump_folder, 'enable': c.checkpoint.enable,\n"
        "                  'folder': c.checkpoint.folder, 'interval': c.checkpoint.interval, 'steps': c.training.steps,\n"
        "                  'processor': d.processor,\n"
        "                  'source': d.source if isinstance(d.source, str) else dataclasses.asdict(d.source)}))\n");
}

/// The JSON line the stub torchtitan.train printed.
nlohmann::json printed_config(const std::string& out) {
    const auto at = out.find("{\"hf_assets_path\"");
    REQUIRE(at != std::string::npos);
    return nlohmann::json::parse(out.substr(at, out.find('\n', at) - at));
}

}  // namespace run_scripts_test
using namespace run_scripts_test;

TEST_CASE("torchtitan: the batch script's settings reach the recipe: data, tokenizer, checkpoints every ~30 min, resumable (issue 53)") {
    REQUIRE(launch_shell::run("command -v python3 >/dev/null").first == 0);
    const auto j = run_job("llama-3.1-8b", frameworks::fsdp::handle, parallel_config{.dp = 16, .sharding = sharding::full});
    launch_options o;
    o.launcher = frameworks::torchtitan::launcher_handle;
    const auto fs = launch_files(j, run_plan(j, 3.0), o);
    const auto dir = std::filesystem::temp_directory_path() / ("frenzy_run_titan_" + std::to_string(::getpid()));
    write_stub_torchtitan(dir / "stub");
    const std::string run_python = "torchrun() { while [[ $1 == --* ]]; do shift 2; done; python3 \"$@\"; }; ";
    const std::string env = "LAUNCH_DIR=" + dir.string() + " PYTHONPATH=" + (dir / "stub").string();
    // without a tokenizer the script stops and names the setting (the base recipe's is relative to the submit directory)
    auto [rc, out] = launch_shell::run_launch_files(fs, env, dir, run_python);
    CHECK(rc != 0);
    CHECK(out.find("set TOKENIZER_DIR") != std::string::npos);
    std::tie(rc, out) = launch_shell::run_launch_files(fs, env + " TOKENIZER_DIR=/tok/llama3", dir, run_python);
    INFO(out);
    REQUIRE(rc == 0);
    auto c = printed_config(out);
    CHECK(c["hf_assets_path"] == "/tok/llama3");
    CHECK(c["dump_folder"] == (dir / "outputs").string());
    CHECK(c["enable"] == true);  // off in llama3_8b: a requeued run would have started over
    CHECK(c["folder"] == (dir / "checkpoints").string());
    CHECK(c["interval"] == 600);  // 1800 s over the predicted 3 s step
    CHECK(c["steps"] == 2000);
    CHECK(c["source"] == "allenai/c4 en train, streamed");  // DATA's default, named in the settings block
    // local JSON-lines files: read as C4's text (its processor kept), from the files given
    std::tie(rc, out) = launch_shell::run_launch_files(fs, env + " TOKENIZER_DIR=/tok DATA='/data/shard-*.jsonl' CHECKPOINT_DIR=/ck", dir,
                                                       run_python);
    REQUIRE(rc == 0);
    c = printed_config(out);
    CHECK(c["source"] == nlohmann::json{{"path", "json"}, {"split", "train"}, {"load_dataset_kwargs", {{"data_files", "/data/shard-*.jsonl"}}}});
    CHECK(c["processor"] == "TextProcessor");
    CHECK(c["folder"] == "/ck");
    std::filesystem::remove_all(dir);
}

TEST_CASE("llm-foundry: a published model is built by transformers from its repository, with its own tokenizer, MPT keeps MPT's (issue 53)") {
    // what train.py receives (torchrun stubbed), and the model block it reads from train.yaml with the overrides
    // applied as OmegaConf does (variables.* substituted): hf_causal_lm of meta-llama/Llama-3.1-8B, not an MPT of
    // its shape with GPT-NeoX's tokenizer (llm-foundry@8c8dd48f models/hf/hf_base.py BaseHuggingFaceModel)
    for (const auto& [name, repo, tokenizer] : {std::tuple{"llama-3.1-8b", "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"},
                                                {"mpt-7b", "", "EleutherAI/gpt-neox-20b"}}) {
        INFO(name);
        const auto j = run_job(name, frameworks::llm_foundry::handle, parallel_config{.dp = 8, .sharding = sharding::full});
        launch_options o;
        o.launcher = frameworks::llm_foundry::launcher_handle;
        const auto fs = launch_files(j, run_plan(j, 3.0), o);
        const auto dir = std::filesystem::temp_directory_path() / ("frenzy_run_foundry_" + std::to_string(::getpid()));
        const auto [rc, out] = launch_shell::run_launch_files(fs, "LAUNCH_DIR=" + dir.string() + " DATA_LOCAL=/d", dir);
        INFO(out);
        REQUIRE(rc == 0);
        CHECK(out.rfind("/home/u/llm-foundry/scripts/train/train.py\n" + (dir / "train.yaml").string() + "\n", 0) == 0);
        CHECK(launch_shell::printed_value(out, "variables.tokenizer_name=") == tokenizer);
        CHECK(launch_shell::printed_value(out, "variables.model_name=") == repo);
        CHECK(launch_shell::printed_value(out, "variables.save_interval=") == "600ba");  // 1800 s / 3 s
        // train.yaml's model block as train.py builds it: PyYAML, ${variables.x} substituted from the overrides
        if (launch_shell::run("python3 -c 'import yaml' 2>/dev/null").first != 0) {
            std::filesystem::remove_all(dir);
            continue;
        }
        std::ofstream(dir / "model.py") << "import sys, yaml\n"
                                           "c = yaml.safe_load(open(sys.argv[1]))\n"
                                           "v = dict(a.split('=', 1) for a in sys.argv[2:])\n"
                                           "m = c['model']\n"
                                           "print(m['name'], v.get('variables.model_name', '-') if m.get('pretrained_model_name_or_path') == "
                                           "'${variables.model_name}' else '-', m.get('pretrained'), c['tokenizer']['name'])\n";
        const auto [prc, pout] = launch_shell::run("cd '" + dir.string() + "' && python3 model.py train.yaml variables.model_name=" +
                                                   launch_shell::printed_value(out, "variables.model_name=") + " 2>&1");
        std::filesystem::remove_all(dir);
        CHECK(prc == 0);
        CHECK(pout == (std::string(repo).empty() ? "mpt_causal_lm - None ${variables.tokenizer_name}\n"
                                                 : "hf_causal_lm " + std::string(repo) + " False ${variables.tokenizer_name}\n"));
    }
}

TEST_CASE("llm-foundry fine-tune: train.py loads the weights named by MODEL_NAME, a Hub id or a local snapshot, with its tokenizer (issue 53)") {
    auto j = run_job("llama-3.1-8b", frameworks::llm_foundry::handle, parallel_config{.dp = 8, .sharding = sharding::full});
    j.training.finetune.method = finetune_method::lora;
    launch_options o;
    o.launcher = frameworks::llm_foundry::launcher_handle;
    const auto fs = launch_files(j, run_plan(j, 3.0), o);
    const auto dir = std::filesystem::temp_directory_path() / ("frenzy_run_foundry_ft_" + std::to_string(::getpid()));
    auto [rc, out] = launch_shell::run_launch_files(fs, "LAUNCH_DIR=" + dir.string() + " DATA_LOCAL=/d", dir);
    INFO(out);
    REQUIRE(rc == 0);
    CHECK(launch_shell::printed_value(out, "variables.model_name=") == "meta-llama/Llama-3.1-8B");
    CHECK(launch_shell::printed_value(out, "variables.tokenizer_name=") == "meta-llama/Llama-3.1-8B");
    CHECK(launch_shell::printed_value(out, "variables.lr=") == "2e-4");
    std::tie(rc, out) = launch_shell::run_launch_files(fs, "LAUNCH_DIR=" + dir.string() + " DATA_LOCAL=/d MODEL_NAME=/models/llama", dir);
    std::filesystem::remove_all(dir);
    REQUIRE(rc == 0);
    CHECK(launch_shell::printed_value(out, "variables.model_name=") == "/models/llama");
    CHECK(launch_shell::printed_value(out, "variables.tokenizer_name=") == "/models/llama");
}

TEST_CASE("hf and LitGPT: the batch scripts start what they wrote, with the settings they name, and save about every 30 min (issue 53)") {
    const auto dir = std::filesystem::temp_directory_path() / ("frenzy_run_hf_" + std::to_string(::getpid()));
    // accelerate launch is exec'd by bash -c on every node: a stub program on PATH that prints its arguments
    std::filesystem::create_directories(dir / "bin");
    std::ofstream(dir / "bin/accelerate") << "#!/bin/sh\nprintf '%s\\n' accelerate \"$@\"\n";
    std::filesystem::permissions(dir / "bin/accelerate", std::filesystem::perms::owner_all);
    const std::string env = "LAUNCH_DIR=" + dir.string() + " MODEL=/m DATA=/d.jsonl PATH=" + (dir / "bin").string() + ":/usr/bin:/bin";
    launch_options o;
    o.launcher = frameworks::hf::launcher_handle;
    auto j = run_job("llama-3.1-8b", frameworks::hf::handle, parallel_config{.dp = 8});
    j.training.finetune.method = finetune_method::full;
    auto [rc, out] = launch_shell::run_launch_files(launch_files(j, run_plan(j, 3.0), o), env, dir);
    INFO(out);
    REQUIRE(rc == 0);
    CHECK(out == (dir / "frenzy_hf_train.py").string() + "\n");  // DDP: torchrun starts the script it wrote
    j.parallel.sharding = sharding::full;                         // FSDP2 through accelerate, on every node
    std::tie(rc, out) = launch_shell::run_launch_files(launch_files(j, run_plan(j, 3.0), o), env, dir);
    REQUIRE(rc == 0);
    CHECK(out.rfind("accelerate\nlaunch\n--config_file\n" + (dir / "accelerate_config.yaml").string() + "\n", 0) == 0);
    CHECK(out.find("\n" + (dir / "frenzy_hf_train.py").string() + "\n") != std::string::npos);
    // LitGPT: -m litgpt COMMAND --config litgpt.yaml, the devices per node; train.save_interval 600 (1800 s / 3 s)
    launch_options l;
    l.launcher = frameworks::litgpt::launcher_handle;
    auto lj = run_job("llama-3.1-8b", frameworks::litgpt::handle, parallel_config{.dp = 8, .sharding = sharding::full, .recompute = recompute::full});
    lj.training.finetune.method = finetune_method::full;
    const auto fs = launch_files(lj, run_plan(lj, 3.0), l);
    std::tie(rc, out) = launch_shell::run_launch_files(fs, env + " SLURM_JOB_NUM_NODES=1", dir);
    REQUIRE(rc == 0);
    CHECK(out.rfind("-m\nlitgpt\nfinetune_full\n--config\n" + (dir / "litgpt.yaml").string() + "\n--devices\n8\n--num_nodes\n1\n", 0) == 0);
    CHECK(fs.back().content.find("\n  save_interval: 600\n") != std::string::npos);
    std::filesystem::remove_all(dir);
}
