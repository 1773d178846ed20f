// Issue 53's acceptance: for dense Llama 3.1, Mixtral, Qwen3 MoE, DeepSeek-V2-Lite (MLA), Gemma 2/3 (soft-cap,
// sliding window) and Llama 4 jobs, every launcher that writes files builds the published model, field by field
// (read back from its files with the framework's defaults where a field is absent), or refuses by name; and a job
// that differs from the published model in a field beside the shape (rotary base, norm epsilon) is written with that
// field or refused naming it, never launched as the published model. DeepSpeed and FSDP configure the user's own
// training script, which builds the model: their files hold no model, so there is nothing to compare.
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

namespace published_test {  // named: the launch tests build as one unity file

inline constexpr const char* acceptance_models[] = {"llama-3.1-8b", "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v2-lite",
                                                    "gemma-2-9b", "gemma-3-4b", "llama-4-scout-17b-16e"};

/// A job of model `m` for launcher `l`: 8 GPUs of one node, the first method it writes (a run from scratch, else a
/// full fine-tune), the layout its frameworks shard with.
job_spec published_job(const transformer_spec& m, launcher l) {
    job_spec j;
    j.name = "published-" + m.name;
    j.model = m;
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 64, .total_tokens = 64.0 * 4096 * 100};
    if (!(l->methods & method_bits({finetune_method::none}))) j.training.finetune.method = finetune_method::full;
    launch_one_node::use_launcher_layout(j, l);
    return j;
}

/// The launch files of `j` with `l`, or the refusal's message (files empty).
std::pair<std::vector<launch_file>, std::string> try_launch(const job_spec& j, launcher l) {
    launch_options o;
    o.launcher = l;
    if (l->needs_run_command) o.run_command = "train.py";
    try {
        return {launch_files(j, launch_one_node::one_node_plan(j, 200.0), o), ""};
    } catch (const config_error& e) {
        return {{}, e.what()};
    }
}

/// The model the launcher's files describe, read back by its importer from the files alone (launchers whose
/// configuration describes the model: launcher_traits::describes_model).
transformer_spec model_read_back(const std::vector<launch_file>& fs, launcher l, const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / ("frenzy_published_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    for (const auto& f : fs) std::ofstream(dir / f.name) << f.content;
    import_options o;
    o.name = name;
    o.world_size = 8;
    auto m = l->import_file((dir / launch_one_node::imported_file_of(l)).string(), o).job.model;
    std::filesystem::remove_all(dir);
    return m;
}

/// A refusal names what it refuses: a field of the job with its value, or the framework's missing feature.
bool names_a_field(const std::string& why) {
    return why.find("model.") != std::string::npos || why.find("model \"") != std::string::npos || why.find("training.") != std::string::npos ||
           why.find("parallel.") != std::string::npos || why.find("runtime.") != std::string::npos;
}

}  // namespace published_test
using namespace published_test;

TEST_CASE("acceptance: every launcher builds the published model field by field, or refuses by name (issue 53)") {
    int built = 0, refused = 0;
    for (const char* name : acceptance_models) {
        const auto& published = preset(name);
        for (const auto l : launcher_catalog()) {
            if (!l->payload) continue;  // import only (axolotl, LLaMA-Factory)
            INFO(name << " on " << l.name());
            const auto j = published_job(published, l);
            const auto [fs, why] = try_launch(j, l);
            if (fs.empty()) {
                std::printf("%-24s %-12s refused: %.150s\n", name, std::string(l.name()).c_str(), why.c_str());
                CHECK(names_a_field(why));
                ++refused;
                continue;
            }
            ++built;
            if (!l->describes_model) continue;  // the model comes from beside the files (hf: $MODEL, torchtitan: the recipe)
            auto m = model_read_back(fs, l, j.name);
            m.name = published.name;
            INFO("differences (JSON patch from the published model to the one read back): "
                 << nlohmann::json::diff(to_json(published), to_json(m)).dump());
            CHECK(m == published);
        }
    }
    std::printf("%d launches built the published model, %d refused by name\n", built, refused);
    CHECK(built >= 7);  // at least one launcher for every model
}

TEST_CASE("acceptance: a job that is not the published model in rotary base or norm epsilon is written so, or refused naming it") {
    for (const char* name : acceptance_models) {
        for (const auto l : launcher_catalog()) {
            if (!l->payload || l->needs_run_command) continue;  // DeepSpeed/FSDP: the user's script builds the model
            for (const char* field : {"model.rope.theta", "model.norm_eps"}) {
                INFO(name << " on " << l.name() << ", " << field);
                auto m = preset(name);
                if (std::string(field) == "model.rope.theta") m.rope.theta *= 2;
                else m.norm_eps *= 10;
                const auto j = published_job(m, l);
                const auto [fs, why] = try_launch(j, l);
                if (fs.empty()) {  // this field, or another that the framework cannot build beside it
                    CHECK(names_a_field(why));
                    continue;
                }
                // written: the files must say so (their importer reads the changed value back)
                REQUIRE(l->describes_model);
                auto back = model_read_back(fs, l, j.name);
                back.name = m.name;
                INFO("differences: " << nlohmann::json::diff(to_json(m), to_json(back)).dump());
                CHECK(back == m);
            }
        }
    }
}

TEST_CASE("llm-foundry's MPT: sliding window and final soft-capping written and read back, sandwich norms refused (issue 53)") {
    // what the acceptance test found: an MPT of Gemma 2's shape dropped its soft-capping, sliding window and norms
    auto m = preset("llama-3.2-1b");
    m.name = "llama-3.2-1b/mpt";  // not the published model: an MPT of its shape
    m.sliding_window = 1024;
    m.final_logit_softcap = 30;
    const auto j = published_job(m, frameworks::llm_foundry::launcher_handle);
    const auto [fs, why] = try_launch(j, frameworks::llm_foundry::launcher_handle);
    INFO(why);
    REQUIRE(!fs.empty());
    CHECK(fs[1].content.find("    sliding_window_size: 1023\n") != std::string::npos);  // keys [i - 1023, i]
    CHECK(fs[1].content.find("  final_logit_softcapping: 30\n") != std::string::npos);
    auto back = model_read_back(fs, frameworks::llm_foundry::launcher_handle, j.name);
    back.name = m.name;
    CHECK(back == m);
    auto g = preset("gemma-2-9b");
    g.name = "gemma-2-9b/mpt";
    CHECK_THAT(try_launch(published_job(g, frameworks::llm_foundry::launcher_handle), frameworks::llm_foundry::launcher_handle).second,
               Catch::Matchers::Contains("model.norms_per_layer=4"));
    g.norms_per_layer = 0;  // Gemma 2's alternating windows: MPT's window is every layer's
    CHECK_THAT(try_launch(published_job(g, frameworks::llm_foundry::launcher_handle), frameworks::llm_foundry::launcher_handle).second,
               Catch::Matchers::Contains("model.global_layer_every=2"));
}
