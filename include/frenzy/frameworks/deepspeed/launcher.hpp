#pragma once
// DeepSpeed's launcher: ds_config.json for the user's training script (microsoft/DeepSpeed@38327e07
// deepspeed/runtime/constants.py, zero/config.py, zero/offload_config.py, activation_checkpointing/config.py; every
// key written is listed in tests/data/launch/deepspeed_keys.txt), and a ds_config.json read back.
#include <string>

#include <nlohmann/json.hpp>

#include "frenzy/frameworks/deepspeed/import.hpp"
#include "frenzy/launch/launcher.hpp"
#include "frenzy/frameworks/deepspeed/traits.hpp"

namespace frenzy::frameworks::deepspeed {

/// DeepSpeed ds_config.json.
inline nlohmann::ordered_json config(const job_spec& j) {
    const auto& t = j.training;
    const auto& p = j.parallel;
    if (t.precision == precision::bf16)
        throw config_error("training.precision=\"bf16\" (no fp32 master weights) has no ds_config key; use bf16-mixed");
    if (t.precision == precision::fp8_mixed || t.precision == precision::fp4_mixed)
        throw config_error("training.precision=\"" + std::string(to_string(t.precision)) + "\" has no ds_config key");
    if (j.runtime.offload.activations) throw config_error("runtime.offload.activations: written by frenzy launch only as DeepSpeed's optimizer/parameter offload");
    if (j.runtime.offload.parameters && p.sharding != sharding::full)
        throw config_error("runtime.offload.parameters needs ZeRO stage 3 (parallel.sharding=\"full\") in DeepSpeed");
    const int stage = p.sharding == sharding::none ? 0 : p.sharding == sharding::optimizer ? 1 : p.sharding == sharding::gradients ? 2 : 3;
    nlohmann::ordered_json c;
    c["train_batch_size"] = t.global_batch;
    c["train_micro_batch_size_per_gpu"] = t.micro_batch;
    c["gradient_accumulation_steps"] = j.micro_batches();
    c["zero_optimization"] = {{"stage", stage}};
    if (j.runtime.offload.optimizer) c["zero_optimization"]["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
    if (j.runtime.offload.parameters) c["zero_optimization"]["offload_param"] = {{"device", "cpu"}, {"pin_memory", true}};
    c["bf16"] = {{"enabled", t.precision == precision::bf16_mixed}};
    c["fp16"] = {{"enabled", t.precision == precision::fp16_mixed}};
    if (p.recompute == recompute::full)  // DeepSpeed's checkpointing API (deepspeed.checkpointing) recomputes whole layers
        c["activation_checkpointing"] = {{"partition_activations", p.tp > 1}, {"contiguous_memory_optimization", false},
                                         {"cpu_checkpointing", false}};
    return c;
}

/// ds_config.json and the user's training script (launch_options::run_command) started with it.
inline launcher_payload payload(const job_spec& j, const launch_options& o) {
    launcher_payload out;
    out.files.push_back({"ds_config.json", config(j).dump(2) + "\n"});
    out.torchrun_target = o.run_command +  // the user's script, required (launcher_traits::needs_run_command)
                          " --deepspeed --deepspeed_config \"$LAUNCH_DIR/ds_config.json\"";
    return out;
}

inline launcher_import import_file(const std::string& path, const import_options& o) {
    return deepspeed_import_json(parse_json_text(read_file_limited(path), ""), o);  // strict, bounded
}

inline constexpr launcher_traits launch_traits{
    .name = "deepspeed",
    .summary = "DeepSpeed: ds_config.json for your training script",
    .runs = {&traits},
    .payload = payload,
    .config_example = "ds_config.json",
    .import_file = import_file,
    .needs_run_command = true,
};

/// This launcher as launch options name it: a handle to `launch_traits` (frameworks/launchers.hpp lists it).
inline constexpr launcher launcher_handle{launch_traits};

}  // namespace frenzy::frameworks::deepspeed
