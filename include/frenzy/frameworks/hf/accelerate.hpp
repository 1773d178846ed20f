#pragma once
// accelerate_config.yaml: the config `accelerate launch --config_file` reads for a sharded hf job (traits.hpp
// backend_of: DeepSpeed ZeRO-1/2 or FSDP2), as huggingface/accelerate@16cb6eb8 reads it: the top-level keys are
// ClusterConfig's fields (src/accelerate/commands/config/config_args.py; from_yaml_file refuses any other), the keys
// of fsdp_config and deepspeed_config are launch.py's FSDP and DeepSpeed arguments (src/accelerate/commands/
// launch.py launch_command copies them onto its arguments). Every key written is in
// tests/data/launch/accelerate_keys.txt. The per-node values (num_machines, machine_rank, main_process_ip and
// main_process_port) are the batch script's: it passes them on each node's `accelerate launch` command line, which
// wins over the file. Values come from closed sets only, checked against accelerate's, DeepSpeed's and Trainer's
// own constraints (check_accelerate_config). read_accelerate_config reads the file back, strictly as written.
#include <cstdint>
#include <string>
#include <string_view>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/text.hpp"

namespace frenzy::frameworks::hf {

/// What accelerate_config.yaml states, for both back ends (the other back end's fields at their defaults).
struct accelerate_config {
    std::string distributed_type;     ///< "FSDP" | "DEEPSPEED" (accelerate's DistributedType values)
    std::string mixed_precision;      ///< "no" | "fp16" | "bf16" (PrecisionType)
    std::int64_t num_processes = 0;   ///< every node's processes together: the world size
    // fsdp_config
    int fsdp_version = 2;
    /// FSDP2: "true" (FULL_SHARD) or "false" (SHARD_GRAD_OP's equivalent); FSDP1: a ShardingStrategy name.
    std::string fsdp_reshard_after_forward = "true";
    bool fsdp_offload_params = false;
    bool fsdp_activation_checkpointing = false;
    // deepspeed_config
    int zero_stage = 0;
    std::string offload_optimizer_device = "none";  ///< "none" | "cpu" | "nvme"
    std::string offload_param_device = "none";      ///< "none" | "cpu" | "nvme"
    std::int64_t gradient_accumulation_steps = 1;
    bool zero3_init_flag = false;
    /// How a multi-node DeepSpeed run starts its nodes: "standard" = torch's launcher on each node, as srun starts
    /// accelerate on every node (launch.py launch_command: any other value has the first node start the others).
    std::string deepspeed_multinode_launcher = "standard";
    bool operator==(const accelerate_config&) const = default;
};

namespace detail {
inline bool one_of(std::string_view v, std::initializer_list<std::string_view> set) {
    for (const auto s : set)
        if (v == s) return true;
    return false;
}
inline void accel_refuse(std::string_view key, std::string_view value, std::string_view why) {
    throw config_error("accelerate_config.yaml: " + std::string(key) + "=" + printable(value) + " " + std::string(why));
}
}  // namespace detail

/// accelerate's, DeepSpeed's and Trainer's constraints on the values, with their sources; config_error naming the key.
/// `trainer_checkpointing` and `trainer_accum` are what frenzy_hf_train.py passes to TrainingArguments
/// (gradient_checkpointing, gradient_accumulation_steps).
inline void check_accelerate_config(const accelerate_config& c, bool trainer_checkpointing, std::int64_t trainer_accum) {
    using detail::accel_refuse;
    // commands/config/config_args.py BaseConfig.__post_init__: DistributedType(value); the hf launcher writes two.
    if (!detail::one_of(c.distributed_type, {"FSDP", "DEEPSPEED"}))
        accel_refuse("distributed_type", c.distributed_type, "is not FSDP or DEEPSPEED (the hf launcher's sharded back ends)");
    // utils/dataclasses.py PrecisionType: no, fp8, fp16, bf16 (fp8 is not written).
    if (!detail::one_of(c.mixed_precision, {"no", "fp16", "bf16"})) accel_refuse("mixed_precision", c.mixed_precision, "is not no, fp16 or bf16");
    // commands/launch.py launch_command: "You need to manually pass in `--num_processes`" for -1.
    if (c.num_processes < 1) accel_refuse("num_processes", std::to_string(c.num_processes), "must be at least 1");
    if (c.distributed_type == "FSDP") {
        if (c.fsdp_version != 1 && c.fsdp_version != 2) accel_refuse("fsdp_config.fsdp_version", std::to_string(c.fsdp_version), "is not 1 or 2");
        // dataclasses.py FullyShardedDataParallelPlugin.__post_init__: FSDP2 takes a bool, FSDP1 a ShardingStrategy
        // (utils/constants.py FSDP_SHARDING_STRATEGY); "This is not supported with FSDP2, please set to a `bool`".
        if (c.fsdp_version == 2 && !detail::one_of(c.fsdp_reshard_after_forward, {"true", "false"}))
            accel_refuse("fsdp_config.fsdp_reshard_after_forward", c.fsdp_reshard_after_forward,
                         "is not a bool, which FSDP2 (fsdp_version 2) needs");
        if (c.fsdp_version == 1 && !detail::one_of(c.fsdp_reshard_after_forward,
                                                   {"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2"}))
            accel_refuse("fsdp_config.fsdp_reshard_after_forward", c.fsdp_reshard_after_forward,
                         "is not a sharding strategy, which FSDP1 (fsdp_version 1) needs");
        // transformers trainer.py create_accelerator_and_postprocess: "The activation_checkpointing in FSDP config
        // and the gradient_checkpointing in training arg can't be set to True simultaneously".
        if (c.fsdp_activation_checkpointing && trainer_checkpointing)
            accel_refuse("fsdp_config.fsdp_activation_checkpointing", "true",
                         "with TrainingArguments(gradient_checkpointing=True): Trainer refuses both together under FSDP");
        return;
    }
    if (c.zero_stage < 0 || c.zero_stage > 3) accel_refuse("deepspeed_config.zero_stage", std::to_string(c.zero_stage), "is not 0, 1, 2 or 3");
    for (const auto& [key, v] : {std::pair<const char*, const std::string&>{"deepspeed_config.offload_optimizer_device", c.offload_optimizer_device},
                                 {"deepspeed_config.offload_param_device", c.offload_param_device}})
        if (!detail::one_of(v, {"none", "cpu", "nvme"})) accel_refuse(key, v, "is not none, cpu or nvme");
    // DeepSpeed deepspeed/runtime/zero/config.py: offload_param is valid with stage 3 only, offload_optimizer with
    // ZeRO (stage 1 or more).
    if (c.offload_param_device != "none" && c.zero_stage != 3)
        accel_refuse("deepspeed_config.offload_param_device", c.offload_param_device, "needs zero_stage 3 (DeepSpeed offloads parameters in ZeRO-3 only)");
    if (c.offload_optimizer_device != "none" && c.zero_stage < 1)
        accel_refuse("deepspeed_config.offload_optimizer_device", c.offload_optimizer_device, "needs zero_stage 1, 2 or 3");
    // dataclasses.py DeepSpeedPlugin: "DeepSpeed Zero3 Init flag is only applicable for ZeRO Stage 3. Setting it to False".
    if (c.zero3_init_flag && c.zero_stage != 3)
        accel_refuse("deepspeed_config.zero3_init_flag", "true", "is only applicable to zero_stage 3 (accelerate turns it off)");
    // utils/constants.py DEEPSPEED_MULTINODE_LAUNCHERS; launch.py deepspeed_launcher: with num_machines > 1 every value
    // but "standard" runs DeepSpeed's own multi-node runner from the first node, which would start each node's
    // processes a second time next to the ones srun started.
    if (!detail::one_of(c.deepspeed_multinode_launcher, {"pdsh", "standard", "openmpi", "mvapich", "mpich", "nossh", "slurm"}))
        accel_refuse("deepspeed_config.deepspeed_multinode_launcher", c.deepspeed_multinode_launcher, "is not one of accelerate's launchers");
    if (c.deepspeed_multinode_launcher != "standard")
        accel_refuse("deepspeed_config.deepspeed_multinode_launcher", c.deepspeed_multinode_launcher,
                     "would start the nodes again from the first one: launch.sbatch runs accelerate on every node (standard)");
    // transformers integrations/deepspeed.py HfTrainerDeepSpeedConfig.trainer_config_process: fill_match of
    // gradient_accumulation_steps against TrainingArguments raises on a mismatch.
    if (c.gradient_accumulation_steps != trainer_accum)
        accel_refuse("deepspeed_config.gradient_accumulation_steps", std::to_string(c.gradient_accumulation_steps),
                     "differs from TrainingArguments' gradient_accumulation_steps=" + std::to_string(trainer_accum) +
                     " (Trainer refuses the mismatch)");
}

/// The file's text (after check_accelerate_config).
inline std::string accelerate_yaml(const accelerate_config& c, bool trainer_checkpointing, std::int64_t trainer_accum) {
    check_accelerate_config(c, trainer_checkpointing, trainer_accum);
    const auto b = [](bool v) { return std::string(v ? "true" : "false"); };
    std::string s = "# Written by frenzy launch for `accelerate launch --config_file` (huggingface/accelerate@16cb6eb8).\n"
                    "# launch.sbatch gives each node num_machines, machine_rank, main_process_ip and main_process_port.\n";
    s += "compute_environment: LOCAL_MACHINE\ndebug: false\n";
    if (c.distributed_type == "DEEPSPEED")
        s += "deepspeed_config:\n  deepspeed_multinode_launcher: " + c.deepspeed_multinode_launcher +
             "\n  gradient_accumulation_steps: " + std::to_string(c.gradient_accumulation_steps) +
             "\n  offload_optimizer_device: " + c.offload_optimizer_device + "\n  offload_param_device: " + c.offload_param_device +
             "\n  zero3_init_flag: " + b(c.zero3_init_flag) + "\n  zero_stage: " + std::to_string(c.zero_stage) + "\n";
    s += "distributed_type: " + c.distributed_type + "\n";
    if (c.distributed_type == "FSDP")
        s += "fsdp_config:\n  fsdp_activation_checkpointing: " + b(c.fsdp_activation_checkpointing) +
             "\n  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n  fsdp_offload_params: " + b(c.fsdp_offload_params) +
             "\n  fsdp_reshard_after_forward: " + c.fsdp_reshard_after_forward + "\n  fsdp_version: " + std::to_string(c.fsdp_version) + "\n";
    // 'no' quoted: YAML 1.1 reads a bare no as false (accelerate writes it quoted too).
    s += "mixed_precision: " + (c.mixed_precision == "no" ? std::string("'no'") : c.mixed_precision) + "\n";
    s += "num_processes: " + std::to_string(c.num_processes) + "\nrdzv_backend: static\nsame_network: false\nuse_cpu: false\n";
    return s;
}

namespace detail {

inline bool accel_bool(const std::string& v, const std::string& key) {
    if (v == "true") return true;
    if (v == "false") return false;
    throw config_error("accelerate_config.yaml: " + key + "=" + printable(v) + " must be true or false");
}

/// One `key: value` line (top level, or two spaces in under a section) into `c`; config_error for a key the
/// launcher does not write.
inline void accel_put(accelerate_config& c, const std::string& key, const std::string& v) {
    const auto integer = [&](std::int64_t hi) { return parse_int64(v, "accelerate_config.yaml " + key, int_bound{0, hi}); };
    if (key == "compute_environment" || key == "debug" || key == "rdzv_backend" || key == "same_network" || key == "use_cpu") {
        const bool ok = key == "compute_environment" ? v == "LOCAL_MACHINE" : key == "rdzv_backend" ? v == "static" : v == "false";
        if (!ok) throw config_error("accelerate_config.yaml: " + key + "=" + printable(v) + " is not what the hf launcher writes");
    } else if (key == "distributed_type") c.distributed_type = v;
    else if (key == "mixed_precision") {
        if (v == "no") throw config_error("accelerate_config.yaml: mixed_precision=no must be quoted, 'no' (YAML reads a bare no as false)");
        c.mixed_precision = v == "'no'" ? "no" : v;
    }
    else if (key == "num_processes") c.num_processes = integer(bounds::gpus.max);
    else if (key == "fsdp_config.fsdp_version") c.fsdp_version = static_cast<int>(integer(9));
    else if (key == "fsdp_config.fsdp_reshard_after_forward") c.fsdp_reshard_after_forward = v;
    else if (key == "fsdp_config.fsdp_offload_params") c.fsdp_offload_params = accel_bool(v, key);
    else if (key == "fsdp_config.fsdp_activation_checkpointing") c.fsdp_activation_checkpointing = accel_bool(v, key);
    else if (key == "fsdp_config.fsdp_auto_wrap_policy") {
        if (v != "TRANSFORMER_BASED_WRAP") throw config_error("accelerate_config.yaml: " + key + "=" + printable(v) + " is not TRANSFORMER_BASED_WRAP");
    } else if (key == "deepspeed_config.zero_stage") c.zero_stage = static_cast<int>(integer(9));
    else if (key == "deepspeed_config.offload_optimizer_device") c.offload_optimizer_device = v;
    else if (key == "deepspeed_config.offload_param_device") c.offload_param_device = v;
    else if (key == "deepspeed_config.gradient_accumulation_steps") c.gradient_accumulation_steps = integer(bounds::global_batch.max);
    else if (key == "deepspeed_config.zero3_init_flag") c.zero3_init_flag = accel_bool(v, key);
    else if (key == "deepspeed_config.deepspeed_multinode_launcher") c.deepspeed_multinode_launcher = v;
    else throw config_error("accelerate_config.yaml: " + printable(key) + " is not a key the hf launcher writes");
}

}  // namespace detail

/// accelerate_config.yaml -> accelerate_config, strictly as accelerate_yaml writes it: comments, `key: value` lines
/// and the `fsdp_config:` / `deepspeed_config:` sections of two-space `key: value` lines. config_error naming the line
/// or key otherwise (a key twice, a missing distributed_type, mixed_precision or num_processes).
inline accelerate_config read_accelerate_config(const std::string& text) {
    accelerate_config c;
    std::string section, seen = "\n";
    for (const auto piece : split(text, '\n')) {
        const std::string line(piece);
        if (line.empty() || line[0] == '#') continue;
        const bool nested = line.rfind("  ", 0) == 0;
        const auto colon = line.find(": ");
        if (!nested && (line == "fsdp_config:" || line == "deepspeed_config:")) {
            section = line.substr(0, line.size() - 1);
            continue;
        }
        if (colon == std::string::npos || (nested && section.empty()) || line.find_first_not_of(' ') != (nested ? 2u : 0u))
            throw config_error("accelerate_config.yaml: the line " + printable(line) + " is not `key: value` as the hf launcher writes it");
        if (!nested) section.clear();
        const std::string key = (nested ? section + "." : "") + line.substr(nested ? 2 : 0, colon - (nested ? 2 : 0));
        if (seen.find("\n" + key + "\n") != std::string::npos) throw config_error("accelerate_config.yaml: " + printable(key) + " is given twice");
        seen += key + "\n";
        detail::accel_put(c, key, line.substr(colon + 2));
    }
    const auto need = [&](std::initializer_list<const char*> keys) {
        for (const char* k : keys)
            if (seen.find(std::string("\n") + k + "\n") == std::string::npos)
                throw config_error(std::string("accelerate_config.yaml: no ") + k + " (the file is not as frenzy launch writes it)");
    };
    need({"distributed_type", "mixed_precision", "num_processes"});
    if (c.distributed_type == "FSDP")
        need({"fsdp_config.fsdp_version", "fsdp_config.fsdp_reshard_after_forward", "fsdp_config.fsdp_offload_params",
              "fsdp_config.fsdp_activation_checkpointing"});
    if (c.distributed_type == "DEEPSPEED")
        need({"deepspeed_config.zero_stage", "deepspeed_config.gradient_accumulation_steps", "deepspeed_config.deepspeed_multinode_launcher",
              "deepspeed_config.offload_optimizer_device", "deepspeed_config.offload_param_device"});
    return c;
}

}  // namespace frenzy::frameworks::hf
