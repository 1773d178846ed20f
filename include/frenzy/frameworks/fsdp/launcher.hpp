#pragma once
// The plain torchrun launcher of PyTorch FSDP and DDP: fsdp_settings.json for the user's training script,
// sharding_strategy and mixed_precision named as pytorch/pytorch@acd8c9e7 torch/distributed/fsdp/api.py
// (ShardingStrategy, MixedPrecision), the other keys Frenzy's own (docs/launch.md; every name written is listed in
// tests/data/launch/torch_fsdp_names.txt); and those settings read back.
#include <string>

#include <nlohmann/json.hpp>

#include "frenzy/frameworks/fsdp/import.hpp"
#include "frenzy/launch/launcher.hpp"
#include "frenzy/frameworks/ddp/traits.hpp"
#include "frenzy/frameworks/fsdp/traits.hpp"

namespace frenzy::frameworks::fsdp {

/// Settings a plain FSDP/DDP training script needs, named after torch.distributed.fsdp's API.
inline nlohmann::ordered_json settings(const job_spec& j) {
    const auto& t = j.training;
    const auto& p = j.parallel;
    const bool ddp = j.runtime.framework == frameworks::ddp::handle;
    const char* strategy = ddp ? "NO_SHARD"
                           : p.sharding == sharding::full ? "FULL_SHARD"
                           : p.sharding == sharding::gradients ? "SHARD_GRAD_OP" : "NO_SHARD";
    const char* dt = t.precision == precision::fp32 ? "float32" : t.precision == precision::fp16_mixed ? "float16" : "bfloat16";
    if (t.precision == precision::fp8_mixed || t.precision == precision::fp4_mixed)
        throw config_error("training.precision=\"" + std::string(to_string(t.precision)) + "\" needs torchao/TE (launch it with the torchtitan or megatron launcher)");
    if (j.runtime.offload.any()) throw config_error("runtime.offload is not written by frenzy launch for plain FSDP/DDP");
    nlohmann::ordered_json c;
    c["wrapper"] = ddp ? "DistributedDataParallel" : "FullyShardedDataParallel";
    c["sharding_strategy"] = strategy;
    // the dtype the model is built in (FSDP keeps its sharded parameters in it); MixedPrecision casts for compute
    const bool mixed = t.precision == precision::bf16_mixed || t.precision == precision::fp16_mixed;
    c["model_dtype"] = t.precision == precision::bf16 ? "bfloat16" : "float32";
    if (mixed) c["mixed_precision"] = {{"param_dtype", dt}, {"reduce_dtype", "float32"}};  // absent: none (fp32)
    c["activation_checkpointing"] = std::string(to_string(p.recompute));
    c["world_size"] = p.gpus();
    // the layout inside the world (the script builds its DeviceMesh from them): world = dp x tp x pp x cp
    c["data_parallel_size"] = p.dp;
    c["tensor_parallel_size"] = p.tp;
    c["sequence_parallel"] = p.sequence_parallel;
    c["pipeline_parallel_size"] = p.pp;
    c["context_parallel_size"] = p.cp;
    if (p.ep > 1) c["expert_parallel_size"] = p.ep;
    c["micro_batch_size"] = t.micro_batch;
    c["gradient_accumulation_steps"] = j.micro_batches();
    c["seq_len"] = t.seq_len;
    c["steps"] = train_steps(j);
    c["optimizer"] = std::string(to_string(t.optimizer));
    c["compile"] = j.runtime.compile;
    return c;
}

/// fsdp_settings.json and the user's training script (launch_options::run_command) started with it.
inline launcher_payload payload(const job_spec& j, const launch_options& o) {
    launcher_payload out;
    out.files.push_back({"fsdp_settings.json", settings(j).dump(2) + "\n"});
    out.torchrun_target = o.run_command +  // the user's script, required (launcher_traits::needs_run_command)
                          " --settings \"$LAUNCH_DIR/fsdp_settings.json\"";
    return out;
}

inline launcher_import import_file(const std::string& path, const import_options& o) {
    return fsdp_import_json(parse_json_text(read_file_limited(path), ""), o);  // strict, bounded
}

inline constexpr launcher_traits launch_traits{
    .name = "fsdp",
    .summary = "torchrun with fsdp_settings.json for your FSDP or DDP training script",
    .runs = {&traits, &ddp::traits},
    .payload = payload,
    .config_example = "settings.json",
    .import_file = import_file,
    .needs_run_command = true,
};

/// This launcher as launch options name it: a handle to `launch_traits` (frameworks/launchers.hpp lists it).
inline constexpr launcher launcher_handle{launch_traits};

}  // namespace frenzy::frameworks::fsdp
