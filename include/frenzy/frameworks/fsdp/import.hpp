#pragma once
// FSDP settings (fsdp_settings.json, as frameworks/fsdp/launcher.hpp writes it) -> job spec. The settings do not
// describe the model, which the caller gives (import_options::model).
#include <string>

#include <nlohmann/json.hpp>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/io/json_reader.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

namespace detail {

/// The layout keys of fsdp_settings.json (data_parallel_size into `dp`, the rest into `p`); false for another key.
inline bool take_fsdp_layout_key(const std::string& k, const nlohmann::json& v, parallel_config& p, std::int64_t& dp) {
    const auto degree = [&] { return check_bound(k, json_int(v, k), bounds::degree); };
    if (k == "data_parallel_size") dp = degree();
    else if (k == "tensor_parallel_size") p.tp = degree();
    else if (k == "sequence_parallel") p.sequence_parallel = json_bool(v, k);
    else if (k == "pipeline_parallel_size") p.pp = degree();
    else if (k == "context_parallel_size") p.cp = degree();
    else if (k == "expert_parallel_size") p.ep = degree();
    else return false;
    return true;
}

/// dp of a world of `world` GPUs split tp x pp x cp, and equal to data_parallel_size when the file gives it (`dp` > 0).
inline std::int64_t fsdp_data_parallel(const parallel_config& p, std::int64_t world, std::int64_t dp) {
    const auto model_parallel = checked_mul(checked_mul(p.tp, p.pp, "tensor_parallel_size x pipeline_parallel_size"), p.cp,
                                            "tensor x pipeline x context_parallel_size");
    if (world % model_parallel != 0 || (dp > 0 && dp * model_parallel != world))
        throw config_error("world_size=" + std::to_string(world) + " is not data_parallel_size x tensor_parallel_size x "
                           "pipeline_parallel_size x context_parallel_size (" + std::to_string(dp) + " x " +
                           std::to_string(model_parallel) + ")");
    return world / model_parallel;
}

}  // namespace detail

/// fsdp_settings.json (as launch/launch.hpp writes it) -> job.
inline launcher_import fsdp_import_json(const nlohmann::json& c, const import_options& opt) {
    if (!c.is_object()) throw config_error("fsdp settings must be a JSON object");
    launcher_import out;
    auto& j = out.job;
    j.model = opt.model;
    j.parallel = parallel_config{};
    std::int64_t world = opt.world_size, gas = 1, dp = 0;
    std::string wrapper = "FullyShardedDataParallel", strategy = "FULL_SHARD", param, model_dtype = "float32";
    std::int64_t steps = 0;
    for (const auto& [k, v] : c.items()) {
        if (k == "wrapper") wrapper = json_str(v, k);
        else if (k == "sharding_strategy") strategy = json_str(v, k);
        else if (k == "model_dtype") model_dtype = json_str(v, k);
        else if (k == "mixed_precision") {
            if (v.is_null()) { param.clear(); continue; }
            for (const auto& [k2, v2] : json_obj(v, k).items()) {
                if (k2 == "param_dtype") param = json_str(v2, "mixed_precision.param_dtype");
                else if (k2 == "reduce_dtype" || k2 == "buffer_dtype" || k2 == "cast_forward_inputs" || k2 == "cast_root_forward_inputs") {}
                else out.unknown.push_back("mixed_precision." + k2);
            }
        } else if (k == "activation_checkpointing") j.parallel.recompute = parse_enum<recompute>("activation_checkpointing", json_str(v, k));
        else if (k == "world_size") world = check_bound(k, json_int(v, k), bounds::gpus);
        else if (detail::take_fsdp_layout_key(k, v, j.parallel, dp)) {}
        else if (k == "micro_batch_size") j.training.micro_batch = check_bound(k, json_int(v, k), bounds::micro_batch);
        else if (k == "gradient_accumulation_steps") gas = check_bound(k, json_int(v, k), bounds::global_batch);
        else if (k == "seq_len") j.training.seq_len = check_bound(k, json_int(v, k), bounds::seq_len);
        else if (k == "steps") steps = check_bound(k, json_int(v, k), bounds::steps);
        else if (k == "optimizer") j.training.optimizer = parse_enum<optimizer_kind>("optimizer", json_str(v, k));
        else if (k == "compile") j.runtime.compile = json_bool(v, k);
        else out.unknown.push_back(k);
    }
    if (world <= 0) throw config_error("world_size is missing");
    if (opt.world_size > 0 && world != opt.world_size)
        throw config_error("world_size=" + std::to_string(world) + " contradicts the world size given beside the file, " +
                           std::to_string(opt.world_size) + " (import_options.world_size, --world-size)");
    j.runtime.framework = wrapper == "DistributedDataParallel" ? frameworks::ddp::handle : frameworks::fsdp::handle;
    if (wrapper != "DistributedDataParallel" && wrapper != "FullyShardedDataParallel")
        throw config_error("wrapper=\"" + wrapper + "\" must be FullyShardedDataParallel or DistributedDataParallel");
    if (strategy == "FULL_SHARD") j.parallel.sharding = sharding::full;
    else if (strategy == "SHARD_GRAD_OP") j.parallel.sharding = sharding::gradients;
    else if (strategy == "NO_SHARD") j.parallel.sharding = sharding::none;
    else throw config_error("sharding_strategy=\"" + strategy + "\" must be FULL_SHARD, SHARD_GRAD_OP or NO_SHARD");
    j.parallel.dp = detail::fsdp_data_parallel(j.parallel, world, dp);
    auto& t = j.training;
    if (model_dtype != "float32" && model_dtype != "bfloat16")
        throw config_error("model_dtype=\"" + model_dtype + "\" must be float32 or bfloat16");
    if (!param.empty() && param != "bfloat16" && param != "float16" && param != "float32")
        throw config_error("mixed_precision.param_dtype=\"" + param + "\" must be bfloat16, float16 or float32");
    // model dtype bfloat16: pure bf16 (no fp32 copy); float32 with MixedPrecision(bfloat16|float16): mixed
    t.precision = model_dtype == "bfloat16" ? precision::bf16
                  : param == "bfloat16" ? precision::bf16_mixed : param == "float16" ? precision::fp16_mixed : precision::fp32;
    t.global_batch = checked_mul(checked_mul(t.micro_batch, gas, "micro_batch_size x gradient_accumulation_steps"), j.parallel.dp,
                                 "micro_batch_size x gradient_accumulation_steps x data_parallel_size");
    if (steps > 0) t.total_tokens = static_cast<double>(steps) * static_cast<double>(t.global_batch * t.seq_len);
    finish_import(out, opt, world);
    return out;
}

}  // namespace frenzy
