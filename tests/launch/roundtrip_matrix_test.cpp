// Issue 53 item 3: import(launch(job)) == job for every launcher x {dense, MoE, MLA, sliding window, soft-cap,
// QK-norm} x {pretrain, full fine-tune, LoRA, QLoRA} where the launcher writes that kind; every other cell is a
// refusal that names a field. The files are read back from disk by the launcher's own importer (launcher_traits::
// import_file), given what the framework's configuration leaves to beside it (the model for the launchers whose
// files do not describe it, the world size, the layout and sequence length for DeepSpeed's script).
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/launch/launch.hpp"
#include "frenzy/model/presets.hpp"
#include "one_node.hpp"

using namespace frenzy;

namespace roundtrip_matrix_test {  // named: the launch tests build as one unity file

struct architecture {
    const char* kind;
    const char* preset;
};
inline constexpr architecture architectures[] = {{"dense", "llama-3.1-8b"},     {"MoE", "qwen3-30b-a3b"},
                                                 {"MLA", "deepseek-v2-lite"},   {"sliding window", "gemma-3-4b"},
                                                 {"soft-cap", "gemma-2-9b"},    {"QK-norm", "qwen3-1.7b"}};
inline constexpr finetune_method methods[] = {finetune_method::none, finetune_method::full, finetune_method::lora,
                                              finetune_method::qlora};

job_spec matrix_job(const char* preset_name, launcher l, finetune_method m) {
    job_spec j;
    j.name = std::string("matrix-") + preset_name;
    j.model = preset(preset_name);
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 64, .total_tokens = 64.0 * 4096 * 500};
    j.training.finetune.method = m;
    if (m == finetune_method::qlora) j.training.finetune.targets = 127;  // every linear, as QLoRA recipes do
    launch_one_node::use_launcher_layout(j, l);
    if (l == frameworks::litgpt::launcher_handle && m != finetune_method::none) j.parallel.recompute = recompute::full;  // its fine-tunes checkpoint
    return j;
}

/// The job read back from the files (written to a folder of their own), given what lies beside them.
job_spec matrix_import(const job_spec& j, launcher l, const std::vector<launch_file>& fs) {
    const auto dir = std::filesystem::temp_directory_path() / ("frenzy_matrix_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    for (const auto& f : fs) std::ofstream(dir / f.name) << f.content;
    import_options o;
    o.name = j.name;
    if (!l->describes_model) o.model = j.model;
    o.world_size = j.parallel.gpus();
    o.layout = j.parallel;
    o.training.seq_len = j.training.seq_len;  // what a DeepSpeed user states besides ds_config
    o.training.total_tokens = j.training.total_tokens;
    o.training.optimizer = j.training.optimizer;
    auto back = l->import_file((dir / launch_one_node::imported_file_of(l)).string(), o).job;
    std::filesystem::remove_all(dir);
    return back;
}

}  // namespace roundtrip_matrix_test
using namespace roundtrip_matrix_test;

TEST_CASE("round-trip matrix: every launcher x architecture x training kind it writes reads back as the job, the rest refused by name") {
    int same = 0, refused = 0, not_written = 0;
    for (const auto l : launcher_catalog()) {
        if (!l->payload) continue;
        for (const auto& a : architectures) {
            for (const auto m : methods) {
                INFO(l.name() << " x " << a.kind << " (" << a.preset << ") x " << to_string(m));
                if (!(l->methods & method_bits({m}))) {  // refused by check_launcher_method, naming the method
                    ++not_written;
                    continue;
                }
                const auto j = matrix_job(a.preset, l, m);
                launch_options o;
                o.launcher = l;
                if (l->needs_run_command) o.run_command = "train.py";
                std::vector<launch_file> fs;
                try {
                    fs = launch_files(j, launch_one_node::one_node_plan(j, 1000.0), o);
                } catch (const config_error& e) {
                    const std::string why = e.what();
                    std::printf("%-12s %-15s %-6s refused: %.140s\n", std::string(l.name()).c_str(), a.kind,
                                std::string(to_string(m)).c_str(), why.c_str());
                    CHECK((why.find("model") != std::string::npos || why.find("training.") != std::string::npos ||
                           why.find("parallel.") != std::string::npos || why.find("runtime.") != std::string::npos));
                    ++refused;
                    continue;
                }
                auto want = j;  // Megatron-LM trains a rotary model without dropout, as published (issue 53)
                if (l == frameworks::megatron::launcher_handle && frameworks::megatron::trains_without_dropout(j)) want.runtime.dropout = false;
                auto back = matrix_import(j, l, fs);
                if (l == frameworks::megatron::launcher_handle) back.model.name = want.model.name;  // pretrain_gpt.py's arguments name no model
                // "auto" attention is written as the kernel the plan's GPU runs (llm-foundry: flash_attention_2 on an H100)
                if (want.runtime.attention == attention_impl::automatic && back.runtime.attention == attention_impl::flash)
                    want.runtime.attention = attention_impl::flash;
                INFO("differences (JSON patch from the job to the import): " << nlohmann::json::diff(to_json(want), to_json(back)).dump());
                CHECK(back == want);
                ++same;
            }
        }
    }
    std::printf("round-trip matrix: %d read back as launched, %d refused by name, %d kinds not written by the launcher\n",
                same, refused, not_written);
    CHECK(same >= 30);
}
