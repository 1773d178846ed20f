#pragma once
// DeepSpeed's ds_config.json -> job spec. The configuration does not describe the model, which the caller gives
// (import_options::model). Keys as microsoft/DeepSpeed@38327e07 deepspeed/runtime/constants.py + zero/config.py
// define them.
#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/io/json_reader.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

namespace detail {

/// ds_config's "zero_optimization" section: the stage, offload; the bucket and prefetch settings are irrelevant.
inline void deepspeed_zero_section(const nlohmann::json& v, launcher_import& out) {
    static const std::vector<std::string> zero_irrelevant{"overlap_comm", "contiguous_gradients", "reduce_bucket_size",
                                                          "allgather_bucket_size", "reduce_scatter", "allgather_partitions",
                                                          "round_robin_gradients", "stage3_prefetch_bucket_size",
                                                          "stage3_param_persistence_threshold", "stage3_max_live_parameters",
                                                          "stage3_max_reuse_distance", "stage3_gather_16bit_weights_on_model_save",
                                                          "sub_group_size"};
    auto& j = out.job;
    if (!v.is_object()) throw config_error("zero_optimization must be an object");
    for (const auto& [k2, v2] : v.items()) {
        if (k2 == "stage") {
            const auto st = json_int(v2, "zero_optimization.stage");
            if (st < 0 || st > 3) throw config_error("zero_optimization.stage=" + std::to_string(st) + " must be 0..3");
            j.parallel.sharding = st == 0 ? sharding::none : st == 1 ? sharding::optimizer : st == 2 ? sharding::gradients : sharding::full;
        } else if (k2 == "offload_optimizer" || k2 == "offload_param") {
            // {"device": "cpu"|"nvme"|"none", ...}: offloaded unless the device is "none"
            const auto& o2 = json_obj(v2, "zero_optimization." + k2);
            const bool on = !o2.contains("device") || json_str(o2.at("device"), "zero_optimization." + k2 + ".device") != "none";
            (k2 == "offload_optimizer" ? j.runtime.offload.optimizer : j.runtime.offload.parameters) = on;
        } else if (std::find(zero_irrelevant.begin(), zero_irrelevant.end(), k2) != zero_irrelevant.end()) {
            out.ignored.push_back("zero_optimization." + k2);
        } else {
            out.unknown.push_back("zero_optimization." + k2);
        }
    }
}

/// ds_config's "bf16" / "fp16" sections: mixed precision when enabled.
inline void deepspeed_precision_section(const std::string& k, const nlohmann::json& v, launcher_import& out) {
    if (!v.is_object()) throw config_error(k + " must be an object");
    for (const auto& [k2, v2] : v.items()) {
        if (k2 == "enabled") {
            if (!json_bool(v2, k + ".enabled")) continue;
            // DeepSpeed asserts "bf16 and fp16 modes cannot be simultaneously enabled" (runtime/config.py)
            const auto other = k == "bf16" ? precision::fp16_mixed : precision::bf16_mixed;
            if (out.job.training.precision == other)
                throw config_error("bf16.enabled and fp16.enabled are both true (DeepSpeed refuses both: runtime/config.py)");
            out.job.training.precision = k == "bf16" ? precision::bf16_mixed : precision::fp16_mixed;
        } else out.ignored.push_back(k + "." + k2);
    }
}

/// DeepSpeed's batch rule (runtime/config.py _configure_train_batch_size): train_batch_size = micro x accumulation
/// x dp; dp from it, or from the world size when train_batch_size is not given.
/// 0 for a key not given; the keys given are checked against their bounds by deepspeed_import_json.
inline void deepspeed_batches(std::int64_t tbs, std::int64_t mbs, std::int64_t gas, const import_options& opt, job_spec& j) {
    if (mbs <= 0) throw config_error("train_micro_batch_size_per_gpu is missing");
    if (gas <= 0) gas = 1;
    auto& p = j.parallel;
    const auto per_step = checked_mul(mbs, gas, "train_micro_batch_size_per_gpu x gradient_accumulation_steps");
    const auto per_replica = checked_mul(checked_mul(p.tp, p.pp, "tp x pp"), p.cp, "tp x pp x cp");
    if (tbs > 0) {
        if (tbs % per_step != 0)
            throw config_error("train_batch_size=" + std::to_string(tbs) + " is not a multiple of train_micro_batch_size_per_gpu x gradient_accumulation_steps = " +
                               std::to_string(per_step));
        p.dp = tbs / per_step;
        // DeepSpeed asserts train_batch_size == micro x accumulation x world / (model-parallel size) (runtime/config.py
        // _batch_assertion): a world size given beside the file must agree
        if (opt.world_size > 0 && checked_mul(p.dp, per_replica, "dp x tp x pp x cp") != opt.world_size)
            throw config_error("train_batch_size=" + std::to_string(tbs) + " = micro x accumulation x " + std::to_string(p.dp) +
                               " data-parallel ranks contradicts the world size " + std::to_string(opt.world_size) +
                               " (tp x pp x cp = " + std::to_string(per_replica) + ")");
    } else if (opt.world_size > 0) {
        if (opt.world_size % per_replica != 0)
            throw config_error("world size " + std::to_string(opt.world_size) + " is not a multiple of tp x pp x cp = " +
                               std::to_string(per_replica));
        p.dp = opt.world_size / per_replica;
        tbs = checked_mul(per_step, p.dp, "micro x accumulation x dp");
    } else {
        throw config_error("train_batch_size is missing and no world size is given");
    }
    j.training.micro_batch = mbs;
    j.training.global_batch = tbs;
}

}  // namespace detail

/// ds_config.json -> job: dp = train_batch_size / (micro-batch x gradient accumulation); tp/pp/cp/ep from
/// opt.layout (the training script sets them, not ds_config).
inline launcher_import deepspeed_import_json(const nlohmann::json& c, const import_options& opt) {
    if (!c.is_object()) throw config_error("ds_config must be a JSON object");
    launcher_import out;
    auto& j = out.job;
    j.model = opt.model;
    j.training = opt.training;
    j.runtime.framework = frameworks::deepspeed::handle;
    j.parallel = opt.layout;
    j.parallel.dp = 1;
    j.parallel.sharding = sharding::none;
    j.parallel.recompute = recompute::none;
    j.training.precision = precision::fp32;
    std::int64_t tbs = 0, mbs = 0, gas = 0;
    static const std::vector<std::string> irrelevant{"optimizer", "scheduler", "steps_per_print", "wall_clock_breakdown",
                                                     "gradient_clipping", "prescale_gradients", "gradient_predivide_factor",
                                                     "tensorboard", "wandb", "csv_monitor", "comms_logger", "flops_profiler",
                                                     "checkpoint", "dump_state", "seed", "zero_allow_untested_optimizer",
                                                     "data_types", "communication_data_type"};
    for (const auto& [k, v] : c.items()) {
        if (k == "train_batch_size") tbs = check_bound(k, json_int(v, k), bounds::global_batch);
        else if (k == "train_micro_batch_size_per_gpu") mbs = check_bound(k, json_int(v, k), bounds::micro_batch);
        else if (k == "gradient_accumulation_steps") gas = check_bound(k, json_int(v, k), bounds::global_batch);
        else if (k == "bf16" || k == "fp16") detail::deepspeed_precision_section(k, v, out);
        else if (k == "zero_optimization") detail::deepspeed_zero_section(v, out);
        else if (k == "activation_checkpointing") {
            j.parallel.recompute = recompute::full;
            for (const auto& [k2, v2] : json_obj(v, k).items()) out.ignored.push_back("activation_checkpointing." + k2);
        } else if (std::find(irrelevant.begin(), irrelevant.end(), k) != irrelevant.end()) {
            out.ignored.push_back(k);
        } else {
            out.unknown.push_back(k);
        }
    }
    detail::deepspeed_batches(tbs, mbs, gas, opt, j);
    finish_import(out, opt, j.parallel.gpus());
    return out;
}

}  // namespace frenzy
