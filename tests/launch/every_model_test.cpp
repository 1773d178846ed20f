// Every model preset and every bundled Hugging Face config.json through estimate, plan and launch (issue 23,
// item 4: "no fixed capacities, no crash on any model"): each answers, or refuses with a config_error that names
// what it refuses; never another exception, never a signal.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "frenzy/io/hf_config.hpp"
#include "frenzy/launch/launch.hpp"
#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;

namespace {
std::vector<transformer_spec> every_model() {
    std::vector<transformer_spec> out;
    for (const auto& p : model_presets()) out.push_back(p.spec);
    for (const auto& e : std::filesystem::directory_iterator(std::string(FRENZY_SOURCE_DIR) + "/tests/data/hf"))
        if (e.path().extension() == ".json") out.push_back(load_hf_config(e.path().string()));
    return out;
}
}  // namespace

TEST_CASE("every preset and bundled config.json: estimate, plan and launch answer or refuse by name") {
    cluster_spec c;
    c.nodes.push_back({"h100", "h100-80g", 8, 32, 0});  // 256 GPUs: room for the largest presets
    const memory_estimator est;
    std::size_t models = 0, launched = 0;
    for (const auto& m : every_model()) {
        INFO(m.name);
        ++models;
        job_spec j;
        j.name = "every-model";
        j.model = m;
        j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 512, .total_tokens = 1e10};
        j.parallel = {.dp = 8, .sharding = sharding::optimizer, .recompute = recompute::full};
        // estimate: a report whose peak is positive and finite, or the rule that refuses the layout
        try {
            const auto r = est.estimate(j);
            CHECK(r.peak_reserved.value > 0);
            CHECK(std::isfinite(r.peak_reserved.value));
        } catch (const config_error& e) {
            CHECK(std::string(e.what()).find('=') != std::string::npos);  // names a field and its value
        }
        // plan and launch: Megatron-LM where it can build the architecture, else the FSDP launcher (the user's
        // own script, which builds any model)
        for (const auto l : {frameworks::megatron::launcher_handle, frameworks::fsdp::launcher_handle}) {
            launch_options o;
            o.launcher = l;
            if (l->needs_run_command) o.run_command = "train.py";  // the user's script, which builds any model
            try {
                const auto r = launch(j, c, o);
                CHECK(r.files.size() >= 1);
                CHECK(r.plan.gpus >= 1);
                ++launched;
                break;
            } catch (const config_error& e) {
                std::printf("%-40s %-8s refused: %.160s\n", m.name.c_str(), std::string(l.name()).c_str(), e.what());
                CHECK(std::string(e.what()).find('=') != std::string::npos);
            }
        }
    }
    std::printf("%zu models, %zu launched\n", models, launched);
    CHECK(models >= 60);
    // Every model launches with one of them (Megatron-LM refuses the architectures it cannot build: ReLU, ALiBi,
    // BLOOM's embedding norm, parallel attention, GeGLU, sandwich norms, logit soft-capping).
    CHECK(launched == models);
}
