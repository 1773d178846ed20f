// The torchtune launcher (frameworks/torchtune/launcher.hpp): every key written is one torchtune's recipes or
// configs read (tests/data/launch/torchtune_keys.txt, pytorch/torchtune@bd2a0fc7), every preset with a torchtune
// builder launches full, LoRA and QLoRA (where the qlora_ builder exists), the others are refused by name, the
// batch script runs `tune run`, and hostile names stay text.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <unistd.h>

#include "frenzy/frameworks/torchtune/launcher.hpp"
#include "frenzy/launch/launch.hpp"
#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/model/presets.hpp"
#include "shell.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;
using namespace launch_shell;

namespace torchtune_launch_test {  // named: the launch tests build as one unity file

std::set<std::string> torchtune_keys() {
    std::ifstream f(std::string(FRENZY_SOURCE_DIR) + "/tests/data/launch/torchtune_keys.txt");
    std::set<std::string> s;
    std::string line;
    std::getline(f, line);
    CHECK(line.find("# pytorch/torchtune@bd2a0fc7c31430972728494fa01aaeeb0ebf1ba1") == 0);  // the commit read
    while (std::getline(f, line))
        if (!line.empty() && line[0] != '#') s.insert(line);
    REQUIRE(s.size() > 300);  // 470 on extraction; a truncated file would pass anything
    return s;
}

/// A component value of `key` ("model:\n  _component_: X"), as written.
std::string component(const std::string& text, const std::string& section) {
    const auto at = text.find(section + ":\n  _component_: ");
    REQUIRE(at != std::string::npos);
    const auto from = at + section.size() + 17;
    return text.substr(from, text.find('\n', from) - from);
}

job_spec tune_job(const std::string& name, finetune_method m, parallel_config p) {
    job_spec j;
    j.name = name + "-tune";
    j.model = preset(name);
    j.model.name = name;
    j.training = {.seq_len = 2048, .micro_batch = 2, .global_batch = 2 * p.dp * 4, .precision = precision::bf16};
    j.training.total_tokens = static_cast<double>(j.training.global_batch * 2048) * 300;  // 300 steps
    j.training.finetune.method = m;
    if (m != finetune_method::full) j.training.finetune.targets = 127;  // every linear: apply_lora_to_mlp
    j.runtime.framework = frameworks::torchtune::handle;
    j.parallel = p;
    return j;
}

plan tune_plan(const job_spec& j, int per_node) {
    plan p;
    p.gpu = "h100-80g";
    p.gpus = static_cast<int>(j.parallel.gpus());
    p.nodes = (p.gpus + per_node - 1) / per_node;
    p.gpus_per_node = std::min(per_node, p.gpus);
    p.framework = j.runtime.framework;
    p.precision = j.training.precision;
    p.parallel = j.parallel;
    p.micro_batch = j.training.micro_batch;
    p.step_time = seconds{2.5};
    p.est_time = seconds{3600};
    p.has_budget = true;
    return p;
}

launch_options tune_opts() {
    launch_options o;
    o.launcher = frameworks::torchtune::launcher_handle;
    return o;
}

const launch_file& named(const std::vector<launch_file>& fs, const std::string& name) {
    for (const auto& f : fs)
        if (f.name == name) return f;
    FAIL("no file " << name);
    return fs.front();
}

const parallel_config fsdp16{.dp = 16, .sharding = sharding::full, .recompute = recompute::full};

}  // namespace torchtune_launch_test
using namespace torchtune_launch_test;

TEST_CASE("every torchtune key written is one its recipes read or its configs spell, builders included") {
    const auto keys = torchtune_keys();
    for (const auto& b : frameworks::torchtune::builders) {
        INFO(b.preset);
        for (const auto m : {finetune_method::full, finetune_method::lora, finetune_method::qlora}) {
            if (m == finetune_method::qlora && !b.qlora) continue;
            for (const auto& p : {fsdp16, parallel_config{.dp = 1}}) {
                auto j = tune_job(std::string(b.preset), m, p);
                const auto text = frameworks::torchtune::config_yaml(j, {});
                for (const auto& k : launch_shell::yaml_key_paths(text)) {
                    INFO(k);
                    CHECK(keys.count(k) == 1);
                }
                // the model and tokenizer builders exist under torchtune.models.<family> (their __all__)
                CHECK(keys.count("builder." + component(text, "model")) == 1);
                CHECK(keys.count("builder." + component(text, "tokenizer")) == 1);
            }
        }
    }
    // the branches the loop leaves out: fp32, gradients sharding, offload, compile, chunked loss, optimizer in
    // backward, 8-bit AdamW
    auto j = tune_job("llama-3.1-8b", finetune_method::full, {.dp = 8, .sharding = sharding::gradients, .recompute = recompute::full});
    j.training.precision = precision::fp32;
    j.runtime.offload = {.optimizer = true, .parameters = true, .activations = true};
    j.runtime.compile = true;
    j.runtime.loss_chunks = 8;
    j.training.global_batch = 16;  // optimizer_in_bwd needs gradient_accumulation_steps 1
    j.training.total_tokens = 16.0 * 2048 * 300;
    j.runtime.optimizer = optimizer_impl::in_backward;
    auto text = frameworks::torchtune::config_yaml(j, {});
    for (const auto& k : launch_shell::yaml_key_paths(text)) CHECK(keys.count(k) == 1);
    for (const char* line : {"dtype: fp32\n", "fsdp_reshard_after_forward: False\n", "fsdp_cpu_offload: True\n",
                             "enable_activation_offloading: True\n", "compile: True\n", "optimizer_in_bwd: True\n",
                             "  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss\n  num_output_chunks: 8\n",
                             "gradient_accumulation_steps: 1\n", "max_steps_per_epoch: 300\n"})
        CHECK(text.find(line) != std::string::npos);
    j = tune_job("mistral-7b", finetune_method::lora, fsdp16);
    j.training.optimizer = optimizer_kind::adamw_8bit;
    text = frameworks::torchtune::config_yaml(j, {});
    for (const auto& k : launch_shell::yaml_key_paths(text)) CHECK(keys.count(k) == 1);
    CHECK(text.find("lora_attn_modules: ['q_proj', 'k_proj', 'v_proj', 'output_proj']\n  apply_lora_to_mlp: True\n") != std::string::npos);
}

TEST_CASE("torchtune: every preset it has a builder for launches full, LoRA and QLoRA, through tune run") {
    std::size_t launched = 0;
    for (const auto& b : frameworks::torchtune::builders) {
        for (const auto m : {finetune_method::full, finetune_method::lora, finetune_method::qlora}) {
            INFO(b.preset << " " << to_string(m));
            const auto j = tune_job(std::string(b.preset), m, fsdp16);
            if (m == finetune_method::qlora && !b.qlora) {
                CHECK_THROWS_WITH(launch_files(j, tune_plan(j, 8), tune_opts()), Contains("has no qlora_" + std::string(b.builder)));
                continue;
            }
            const auto fs = launch_files(j, tune_plan(j, 8), tune_opts());
            const auto& yaml = named(fs, "torchtune.yaml").content;
            const std::string prefix = m == finetune_method::qlora ? "qlora_" : m == finetune_method::lora ? "lora_" : "";
            CHECK(component(yaml, "model") == "torchtune.models." + std::string(b.family) + "." + prefix + std::string(b.builder));
            const auto& sh = named(fs, "launch.sbatch").content;
            const std::string recipe = m == finetune_method::full ? "full_finetune_distributed" : "lora_finetune_distributed";
            // 16 GPUs on 2 nodes: tune run takes torchrun's options, then the recipe and its config
            CHECK(sh.find("    tune run --nnodes 2 --nproc-per-node 8 --rdzv-id") != std::string::npos);
            CHECK(sh.find(recipe + " --config \"$LAUNCH_DIR/torchtune.yaml\"") != std::string::npos);
            CHECK(yaml.find("batch_size: 2\ngradient_accumulation_steps: 4\n") != std::string::npos);  // 128 = 2 x 4 x 16
            ++launched;
        }
    }
    CHECK(launched == 19 * 2 + 11);  // 19 presets full and LoRA, 11 with a qlora_ builder
    // one GPU: the single-device recipe, one process, no torchrun options
    const auto j = tune_job("llama-3.2-1b", finetune_method::qlora, {.dp = 1});
    const auto sh = named(launch_files(j, tune_plan(j, 8), tune_opts()), "launch.sbatch").content;
    CHECK(sh.find("tune run lora_finetune_single_device --config \"$LAUNCH_DIR/torchtune.yaml\"") != std::string::npos);
    CHECK(sh.find("--nproc-per-node") == std::string::npos);
}

TEST_CASE("torchtune refuses by name: models without a builder, shapes that differ, what its recipes cannot do") {
    auto launch_error = [](const job_spec& j) {
        try {
            launch_files(j, tune_plan(j, 8), tune_opts());
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    for (const char* name : {"mixtral-8x7b", "gpt3-1.3b", "phi-4-mini", "olmo-2-7b", "falcon-7b"}) {
        INFO(name);
        auto j = tune_job(name, finetune_method::lora, fsdp16);
        if (j.model.is_moe()) j.training.finetune.targets = lora_q | lora_k | lora_v | lora_o;
        CHECK_THAT(launch_error(j), Contains("model \"" + std::string(name) + "\" has no torchtune model builder"));
    }
    auto j = tune_job("llama-3.1-8b", finetune_method::lora, fsdp16);
    j.model.layers = 16;  // named like the preset, not its shape: never launched as the preset
    CHECK_THAT(launch_error(j), Contains("is not the shape of the preset"));
    j = tune_job("llama-3.1-8b", finetune_method::lora, fsdp16);
    j.training.finetune.targets = lora_q | lora_v | lora_gate;
    CHECK_THAT(launch_error(j), Contains("training.finetune.targets") && Contains("apply_lora_to_mlp"));
    j = tune_job("llama-3.1-8b", finetune_method::lora, fsdp16);
    j.training.global_batch = 32;  // one micro-batch per step: the LoRA recipes still have no optimizer_in_bwd
    j.runtime.optimizer = optimizer_impl::in_backward;
    CHECK_THAT(launch_error(j), Contains("optimizer_in_bwd"));
    j = tune_job("llama-3.1-8b", finetune_method::full, {.dp = 16, .sharding = sharding::full});
    j.runtime.offload.activations = true;  // enable_activation_offloading needs checkpointing
    CHECK_THAT(launch_error(j), Contains("enable_activation_checkpointing"));
    j = tune_job("llama-3.1-8b", finetune_method::full, fsdp16);
    j.training.precision = precision::bf16_mixed;
    CHECK_THAT(launch_error(j), Contains("training.precision=\"bf16-mixed\""));
    j.training.precision = precision::bf16;
    j.runtime.loss = loss_style::fused_cross_entropy;
    CHECK_THAT(launch_error(j), Contains("runtime.loss=\"fused\""));
    j = tune_job("llama-3.2-1b", finetune_method::full, {.dp = 1, .sharding = sharding::full});
    CHECK_THAT(launch_error(j), Contains("parallel.sharding=\"full\" on one GPU") && Contains("single-device"));
}

TEST_CASE("torchtune: hostile job and model names never become code") {
    const std::string hostile = "a\"b'c $(touch PWNED) `touch PWNED`; touch PWNED # \\ \xc3\xbcn\xc3\xaf";
    auto j = tune_job("llama-3.1-8b", finetune_method::lora, fsdp16);
    for (const std::string bad : {"x\nrm -rf $HOME #", "x\rimport os", "a\x1b[2Jb", "\xff\xfe"}) {
        auto h = j;
        h.name = bad;
        CHECK_THROWS_WITH(launch_files(h, tune_plan(h, 8), tune_opts()), Catch::StartsWith("name="));
        h = j;
        h.model.name = bad;
        CHECK_THROWS_WITH(launch_files(h, tune_plan(h, 8), tune_opts()), Catch::StartsWith("model.name="));
    }
    // a printable hostile model name is refused (no builder), the message holds it as text
    auto h = j;
    h.model.name = hostile;
    CHECK_THROWS_WITH(launch_files(h, tune_plan(h, 8), tune_opts()), Contains("has no torchtune model builder"));
    // a printable hostile job name: comments only, bash parses the script, the YAML reads back
    h = j;
    h.name = hostile;
    const auto files = launch_files(h, tune_plan(h, 8), tune_opts());
    const auto dir = std::filesystem::temp_directory_path() / ("frenzy-tune-hostile-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    const auto paths = write_launch_files(files, dir.string());
    for (std::size_t i = 0; i < files.size(); ++i) {
        INFO(files[i].name << ":\n" << files[i].content);
        for (const auto& line : lines_of(files[i].content))
            if (line.find("PWNED") != std::string::npos) CHECK(line.find('#') < line.find("PWNED"));
        if (files[i].name.ends_with(".sbatch")) CHECK(run("bash -n '" + paths[i] + "' 2>&1").first == 0);
    }
    CHECK(named(files, "torchtune.yaml").content.find("PWNED") == std::string::npos);
    std::filesystem::remove_all(dir);
    // the user's recipe (run_command) is checked as every launcher's is
    auto o = tune_opts();
    o.run_command = "my_recipe.py\nrm -rf x";
    CHECK_THROWS_WITH(launch_files(j, tune_plan(j, 8), o), Contains("control character"));
}

TEST_CASE("torchtune: a requeued run resumes from the newest checkpoint, saved about every 30 min (issue 53)") {
    // launch.sbatch run by bash with tune stubbed: what the recipe receives. torchtune@bd2a0fc7's checkpointer loads
    // the newest step_N of output_dir when resume_from_checkpoint is True and fails when there is none.
    const auto j = tune_job("llama-3.1-8b", finetune_method::full, fsdp16);
    const auto fs = launch_files(j, tune_plan(j, 8), tune_opts());
    // 1800 s over the predicted 2.5 s step; a checkpoint of 8B x 16 bytes from 2 nodes at 1 GB/s each (64 s) is far less
    CHECK(named(fs, "torchtune.yaml").content.find("\nsave_every_n_steps: 720\n") != std::string::npos);
    const auto dir = std::filesystem::temp_directory_path() / ("frenzy_tune_" + std::to_string(::getpid()));
    const std::string env = "MODEL_DIR=/m CHECKPOINT_FILES=[a.safetensors] TOKENIZER=/t/tokenizer.model DATA=text "
                            "OUTPUT_DIR=" + (dir / "out").string();
    auto [rc, out] = run_launch_files(fs, env, dir);
    INFO(out);
    REQUIRE(rc == 0);
    CHECK(out.rfind("full_finetune_distributed\n--config\n", 0) == 0);
    CHECK(printed_value(out, "resume_from_checkpoint=") == "False");  // the first run: nothing saved yet
    CHECK(printed_value(out, "checkpointer.checkpoint_dir=") == "/m");
    // every override the recipe receives is a key torchtune's recipes read or its configs spell (torchtune_keys.txt)
    const auto keys = torchtune_keys();
    int overrides = 0;
    for (const auto& line : lines_of(out))
        if (const auto eq = line.find('='); eq != std::string::npos && line.rfind("--", 0) != 0) {
            INFO(line);
            CHECK(keys.count(line.substr(0, eq)) == 1);
            ++overrides;
        }
    CHECK(overrides == 7);  // output_dir, checkpointer x2, tokenizer.path, dataset.source, optimizer.lr, resume
    std::filesystem::create_directories(dir / "out/step_720");
    std::ofstream(dir / "out/step_720/recipe_state.pt") << "x";
    std::tie(rc, out) = run_launch_files(fs, env, dir);
    CHECK(rc == 0);
    CHECK(printed_value(out, "resume_from_checkpoint=") == "True");  // requeued: the recipe resumes from step_720
    std::filesystem::remove_all(dir);
}
