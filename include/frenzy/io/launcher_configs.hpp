#pragma once
// DeepSpeed ds_config.json, torchtitan recipe modules and FSDP settings -> job spec. These configurations do not
// describe the model, which the caller gives (import_options::model). Keys as the frameworks define them:
// microsoft/DeepSpeed@38327e07 deepspeed/runtime/constants.py + zero/config.py; pytorch/torchtitan@b5bcd76c
// torchtitan/config/configs.py (fields assigned as `config.<section>.<field> = value`, as launch/launch.hpp writes).
#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "frenzy/core/text.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/io/launcher_megatron.hpp"
#ifdef FRENZY_HAS_YAML
#include "frenzy/io/launcher_yaml.hpp"
#endif
#include "frenzy/train/job.hpp"

namespace frenzy {

namespace detail {
inline void finish_import(launcher_import& out, const import_options& opt, std::int64_t world) {
    auto& j = out.job;
    j.name = opt.name.empty() ? j.model.name : opt.name;
    out.world_size = world;
    validate(j.model);
    validate(j.training);
    validate(j);
}
inline std::int64_t json_int(const nlohmann::json& v, const std::string& key) {
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > 9223372036854775807ull))
        throw config_error(key + "=" + json_value_text(v) + " must be an integer in the 64-bit range");  // no wrap to -1
    return v.get<std::int64_t>();
}
inline std::string json_str(const nlohmann::json& v, const std::string& key) {
    if (!v.is_string()) throw config_error(key + "=" + json_value_text(v) + " must be a string");
    return v.get<std::string>();
}
inline const nlohmann::json& json_obj(const nlohmann::json& v, const std::string& key) {
    if (!v.is_object()) throw config_error(key + "=" + json_value_text(v) + " must be an object");
    return v;
}
inline bool json_bool(const nlohmann::json& v, const std::string& key) {
    if (!v.is_boolean()) throw config_error(key + "=" + json_value_text(v) + " must be true or false");
    return v.get<bool>();
}
}  // namespace detail

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
    j.runtime.framework = framework::deepspeed;
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
        if (k == "train_batch_size") tbs = check_bound(k, detail::json_int(v, k), bounds::global_batch);
        else if (k == "train_micro_batch_size_per_gpu") mbs = check_bound(k, detail::json_int(v, k), bounds::micro_batch);
        else if (k == "gradient_accumulation_steps") gas = check_bound(k, detail::json_int(v, k), bounds::global_batch);
        else if (k == "bf16" || k == "fp16") detail::deepspeed_precision_section(k, v, out);
        else if (k == "zero_optimization") detail::deepspeed_zero_section(v, out);
        else if (k == "activation_checkpointing") {
            j.parallel.recompute = recompute::full;
            for (const auto& [k2, v2] : detail::json_obj(v, k).items()) out.ignored.push_back("activation_checkpointing." + k2);
        } else if (std::find(irrelevant.begin(), irrelevant.end(), k) != irrelevant.end()) {
            out.ignored.push_back(k);
        } else {
            out.unknown.push_back(k);
        }
    }
    detail::deepspeed_batches(tbs, mbs, gas, opt, j);
    detail::finish_import(out, opt, j.parallel.gpus());
    return out;
}

namespace detail {

/// `config.<key> = <value>` of one recipe line (comment and surrounding blanks dropped), or nothing for any other
/// line. Read by hand, not with std::regex, whose backtracking recurses once per character (a long line crashed it).
inline std::optional<std::pair<std::string, std::string>> recipe_assignment(std::string line) {
    if (const auto h = line.find('#'); h != std::string::npos) line.resize(h);
    auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    std::size_t i = 0;
    while (i < line.size() && blank(line[i])) ++i;
    if (line.compare(i, 7, "config.") != 0) return std::nullopt;
    i += 7;
    const std::size_t k = i;
    while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' || line[i] == '.')) ++i;
    if (i == k || std::isdigit(static_cast<unsigned char>(line[k]))) return std::nullopt;
    const std::string key = line.substr(k, i - k);
    while (i < line.size() && blank(line[i])) ++i;
    if (i >= line.size() || line[i] != '=' || (i + 1 < line.size() && line[i + 1] == '=')) return std::nullopt;
    ++i;
    std::size_t end = line.size();
    while (end > i && blank(line[end - 1])) --end;
    while (i < end && blank(line[i])) ++i;
    if (i == end) return std::nullopt;
    return std::pair{key, line.substr(i, end - i)};
}

/// What a torchtitan recipe sets, with Trainer.Config's defaults (pytorch/torchtitan@b5bcd76c torchtitan/config/
/// configs.py) for what it does not.
struct torchtitan_recipe_values {
    std::int64_t replicate = 1, shard = -1, tokens_mb = 16384, tokens_step = -1, ctx = 2048, steps = 0, pp_mbs = 1;
    std::string reshard = "default", dtype = "float32", mp_param = "bfloat16";
};

/// One assignment `config.<key> = <v>` of a recipe into the job being built (`out.job`) and `r`.
inline void torchtitan_assign(const std::string& key, const std::string& v, torchtitan_recipe_values& r, launcher_import& out) {
    auto& j = out.job;
    auto& p = j.parallel;
    auto unq = [](std::string x) { return x.size() >= 2 && (x.front() == '"' || x.front() == '\'') ? x.substr(1, x.size() - 2) : x; };
    auto as_int = [&] {
        try {
            std::size_t used = 0;
            const auto x = std::stoll(v, &used);
            if (used != v.size()) throw std::invalid_argument(v);
            return x;
        } catch (const std::exception&) {
            throw config_error("config." + key + " = " + printable(v, 60) + " is not an integer");
        }
    };
    auto as_bool = [&] {
        if (v == "True") return true;
        if (v == "False") return false;
        throw config_error("config." + key + " = " + printable(v, 60) + " is not True or False");
    };
    auto degree = [&] { return check_bound("config." + key, as_int(), bounds::degree); };
    auto tokens = [&] { return check_bound("config." + key, as_int(), bounds::recipe_tokens); };
    if (key == "parallelism.data_parallel_replicate_degree") r.replicate = degree();
    else if (key == "parallelism.data_parallel_shard_degree") {
        r.shard = as_int();
        if (r.shard != -1) check_bound("config." + key, r.shard, bounds::degree);  // -1: the GPUs left over
    }
    else if (key == "parallelism.fsdp_reshard_after_forward") r.reshard = unq(v);
    else if (key == "parallelism.tensor_parallel_degree") p.tp = degree();
    else if (key == "parallelism.enable_sequence_parallel") p.sequence_parallel = as_bool();
    else if (key == "parallelism.pipeline_parallel_degree") p.pp = degree();
    else if (key == "parallelism.pipeline_parallel_schedule") {
        const auto sch = unq(v);
        if (sch == "1F1B") p.schedule = pipeline_schedule::one_f_one_b;
        else if (sch == "GPipe") p.schedule = pipeline_schedule::gpipe;
        else out.unknown.push_back("config." + key + " = " + v);
    } else if (key == "parallelism.num_pp_microbatches") r.pp_mbs = check_bound("config." + key, as_int(), bounds::micro_batch);
    else if (key == "parallelism.context_parallel_degree") p.cp = degree();
    else if (key == "parallelism.expert_parallel_degree") p.ep = degree();
    else if (key == "training.max_context_length") r.ctx = check_bound("config." + key, as_int(), bounds::seq_len);
    else if (key == "training.num_tokens_per_microbatch_per_dp_rank") r.tokens_mb = tokens();
    else if (key == "training.num_tokens_per_train_step") {
        r.tokens_step = as_int();
        if (r.tokens_step != -1) tokens();  // -1: micro-batch tokens x microbatches x dp
    } else if (key == "training.steps") r.steps = check_bound("config." + key, as_int(), bounds::steps);
    else if (key == "training.dtype") r.dtype = unq(v);
    else if (key == "training.mixed_precision_param") r.mp_param = unq(v);
    else if (key == "activation_checkpoint") {
        if (v == "None") p.recompute = recompute::none;
        else if (v.rfind("SelectiveAC.Config(", 0) == 0) p.recompute = recompute::selective;
        else if (v.rfind("FullAC.Config(", 0) == 0) p.recompute = recompute::full;
        else out.unknown.push_back("config." + key + " = " + v);
    } else if (key == "compile.enable") j.runtime.compile = as_bool();
    // a fine-tune's starting weights: loaded while the checkpoint folder is empty (torchtitan@b5bcd76c
    // components/checkpointer/base.py Config.initial_load_path), any value read as a full fine-tune
    else if (key == "checkpoint.initial_load_path") j.training.finetune.method = v == "None" ? finetune_method::none : finetune_method::full;
    else if (key == "hf_assets_path") out.ignored.push_back("config." + key + " = " + v);  // the tokenizer's folder
    else if (key.rfind("training.", 0) == 0 || key.rfind("comm.", 0) == 0 || key.rfind("debug.", 0) == 0 ||
             key.rfind("metrics.", 0) == 0 || key.rfind("checkpoint.", 0) == 0 || key.rfind("profiler.", 0) == 0 ||
             key.rfind("validator.", 0) == 0 || key.rfind("optimizer.", 0) == 0 || key.rfind("lr_scheduler.", 0) == 0 ||
             key.rfind("dataloader.", 0) == 0)
        out.ignored.push_back("config." + key + " = " + v);
    else out.unknown.push_back("config." + key + " = " + v);
}

/// The layout and batches from what the recipe set: dp = replicate x shard (shard -1: the GPUs left over), the
/// sharding from the shard degree and reshard_after_forward, batches from token counts over max_context_length.
inline void torchtitan_finish(const torchtitan_recipe_values& r0, const import_options& opt, launcher_import& out) {
    auto r = r0;
    auto& j = out.job;
    auto& p = j.parallel;
    if (r.shard == -1) {  // -1: the GPUs left over (ParallelismConfig.data_parallel_shard_degree)
        const auto rest = p.tp * p.pp * p.cp * r.replicate;
        if (opt.world_size <= 0 || opt.world_size % rest != 0)
            throw config_error("parallelism.data_parallel_shard_degree=-1 needs a world size that is a multiple of " + std::to_string(rest));
        r.shard = opt.world_size / rest;
    } else if (opt.world_size > 0 && opt.world_size != checked_mul(p.tp * p.pp * p.cp, r.replicate * r.shard, "the recipe's degrees")) {
        throw config_error("the recipe's degrees (tp x pp x cp x replicate x shard = " +
                           std::to_string(p.tp * p.pp * p.cp * r.replicate * r.shard) + ") contradict the world size " +
                           std::to_string(opt.world_size) + " (import_options.world_size, --world-size)");
    }
    if (r.replicate > 1 && r.shard > 1) out.unknown.push_back("HSDP (data_parallel_replicate_degree x data_parallel_shard_degree): taken as full sharding over both");
    p.dp = checked_mul(r.replicate, r.shard, "data_parallel_replicate_degree x data_parallel_shard_degree");
    p.sharding = r.shard > 1 ? (r.reshard == "never" ? sharding::gradients : sharding::full) : sharding::none;
    if (p.tp == 1) p.sequence_parallel = false;  // only meaningful with tensor parallelism
    if (p.ep > 1 && p.tp > 1) p.etp = 1;          // expert parallelism borrows the tp ranks: experts are not split
    if (r.tokens_mb % r.ctx != 0) throw config_error("training.num_tokens_per_microbatch_per_dp_rank=" + std::to_string(r.tokens_mb) +
                                                     " is not a multiple of training.max_context_length=" + std::to_string(r.ctx));
    auto& t = j.training;
    t.seq_len = r.ctx;
    t.micro_batch = r.tokens_mb / r.ctx;
    if (r.tokens_step == -1)
        r.tokens_step = checked_mul(checked_mul(r.tokens_mb, r.pp_mbs, "num_tokens_per_microbatch_per_dp_rank x num_pp_microbatches"),
                                    p.dp, "tokens per microbatch x microbatches x dp");
    if (r.tokens_step % r.ctx != 0) throw config_error("training.num_tokens_per_train_step is not a multiple of max_context_length");
    t.global_batch = r.tokens_step / r.ctx;
    if (r.steps > 0) t.total_tokens = static_cast<double>(r.steps) * static_cast<double>(r.tokens_step);
    if (t.precision != precision::fp8_mixed) {
        if (r.dtype == "bfloat16") t.precision = precision::bf16;
        else t.precision = r.mp_param == "float32" ? precision::fp32 : precision::bf16_mixed;
    }
}

}  // namespace detail

namespace detail {
/// `config.model_spec = model_registry(..., converters=[...])`: torchtitan's fp8 converters
/// (torchtitan/components/quantization @b5bcd76c): Float8LinearConverter (recipe_name "rowwise", its default, or
/// "rowwise_with_gw_hp", not modelled: read as rowwise and reported), MXFP8LinearConverter (mxfp8).
inline void torchtitan_converter(const std::string& v, job_spec& j, launcher_import& out) {
    if (v.find("MXFP8LinearConverter") != std::string::npos) {
        j.training.precision = precision::fp8_mixed;
        j.runtime.fp8_recipe = fp8_recipe::mxfp8;
    } else if (v.find("Float8LinearConverter") != std::string::npos) {
        j.training.precision = precision::fp8_mixed;
        if (v.find("rowwise_with_gw_hp") != std::string::npos)
            out.ignored.push_back("recipe_name=\"rowwise_with_gw_hp\" (its high-precision weight gradients are not modelled: read as rowwise)");
        if (v.find("recipe_name") != std::string::npos) j.runtime.fp8_recipe = fp8_recipe::rowwise;
    } else {
        out.unknown.push_back("config.model_spec = " + v);
    }
}
}  // namespace detail

/// A torchtitan recipe module (the assignments `config.<section>.<field> = value` of its function) -> job.
inline launcher_import torchtitan_import_text(const std::string& text, const import_options& opt) {
    launcher_import out;
    auto& j = out.job;
    j.model = opt.model;
    j.runtime.framework = framework::fsdp;
    auto& p = j.parallel;
    p = parallel_config{};
    p.recompute = recompute::selective;      // Trainer.Config default: SelectiveAC.Config
    p.sequence_parallel = true;              // ParallelismConfig.enable_sequence_parallel default
    j.training.precision = precision::bf16_mixed;  // mixed_precision_param default bfloat16
    detail::torchtitan_recipe_values r;
    std::map<std::string, std::size_t> assigned;  // key -> the line that set it
    std::size_t line_no = 0;
    for (const auto line : split(text, '\n')) {
        ++line_no;
        const auto a = detail::recipe_assignment(std::string(line));
        if (!a) continue;
        const auto where = "line " + std::to_string(line_no) + ": ";
        if (const auto [it, fresh] = assigned.emplace(a->first, line_no); !fresh)
            throw config_error(where + "config." + a->first + " is assigned again (first on line " + std::to_string(it->second) +
                               "); which value the run uses is not Frenzy's to guess");
        if (a->first == "model_spec") {
            detail::torchtitan_converter(a->second, j, out);
            continue;
        }
        try {
            detail::torchtitan_assign(a->first, a->second, r, out);
        } catch (const config_error& err) {
            throw config_error(where + err.what());
        }
    }
    detail::torchtitan_finish(r, opt, out);
    detail::finish_import(out, opt, p.gpus());
    return out;
}

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
        if (k == "wrapper") wrapper = detail::json_str(v, k);
        else if (k == "sharding_strategy") strategy = detail::json_str(v, k);
        else if (k == "model_dtype") model_dtype = detail::json_str(v, k);
        else if (k == "mixed_precision") {
            if (v.is_null()) { param.clear(); continue; }
            for (const auto& [k2, v2] : detail::json_obj(v, k).items()) {
                if (k2 == "param_dtype") param = detail::json_str(v2, "mixed_precision.param_dtype");
                else if (k2 == "reduce_dtype" || k2 == "buffer_dtype" || k2 == "cast_forward_inputs" || k2 == "cast_root_forward_inputs") {}
                else out.unknown.push_back("mixed_precision." + k2);
            }
        } else if (k == "activation_checkpointing") j.parallel.recompute = parse_enum<recompute>("activation_checkpointing", detail::json_str(v, k));
        else if (k == "world_size") world = check_bound(k, detail::json_int(v, k), bounds::gpus);
        else if (detail::take_fsdp_layout_key(k, v, j.parallel, dp)) {}
        else if (k == "micro_batch_size") j.training.micro_batch = check_bound(k, detail::json_int(v, k), bounds::micro_batch);
        else if (k == "gradient_accumulation_steps") gas = check_bound(k, detail::json_int(v, k), bounds::global_batch);
        else if (k == "seq_len") j.training.seq_len = check_bound(k, detail::json_int(v, k), bounds::seq_len);
        else if (k == "steps") steps = check_bound(k, detail::json_int(v, k), bounds::steps);
        else if (k == "optimizer") j.training.optimizer = parse_enum<optimizer_kind>("optimizer", detail::json_str(v, k));
        else if (k == "compile") j.runtime.compile = detail::json_bool(v, k);
        else out.unknown.push_back(k);
    }
    if (world <= 0) throw config_error("world_size is missing");
    if (opt.world_size > 0 && world != opt.world_size)
        throw config_error("world_size=" + std::to_string(world) + " contradicts the world size given beside the file, " +
                           std::to_string(opt.world_size) + " (import_options.world_size, --world-size)");
    j.runtime.framework = wrapper == "DistributedDataParallel" ? framework::ddp : framework::fsdp;
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
    detail::finish_import(out, opt, world);
    return out;
}

}  // namespace frenzy

namespace frenzy {

/// Whether a Megatron argument file is YAML (`--yaml-cfg`, io/launcher_yaml.hpp): by its extension.
inline bool is_yaml_path(std::string_view path) { return path.ends_with(".yaml") || path.ends_with(".yml"); }

}  // namespace frenzy
