#pragma once
// torchtitan recipe modules -> job spec. A recipe does not describe the model, which the caller gives
// (import_options::model). Keys as pytorch/torchtitan@b5bcd76c torchtitan/config/configs.py defines them (fields
// assigned as `config.<section>.<field> = value`, as frameworks/torchtitan/launcher.hpp writes).
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/text.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

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

/// A fine-tune's starting weights: loaded while the checkpoint folder is empty (torchtitan@b5bcd76c
/// components/checkpointer/base.py Config.initial_load_path; any value is read as a full fine-tune), and
/// hf_assets_path, the tokenizer's folder; false for another key.
inline bool torchtitan_pretrained_key(const std::string& key, const std::string& v, job_spec& j, launcher_import& out) {
    if (key == "checkpoint.initial_load_path") j.training.finetune.method = v == "None" ? finetune_method::none : finetune_method::full;
    else if (key == "hf_assets_path") out.ignored.push_back("config." + key + " = " + v);
    else return false;
    return true;
}

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
    else if (torchtitan_pretrained_key(key, v, j, out)) {}
    else if (key.rfind("training.", 0) == 0 || key.rfind("comm.", 0) == 0 || key.rfind("debug.", 0) == 0 ||
             key.rfind("metrics.", 0) == 0 || key.rfind("checkpoint.", 0) == 0 || key.rfind("profiler.", 0) == 0 ||
             key.rfind("validator.", 0) == 0 || key.rfind("optimizer.", 0) == 0 || key.rfind("lr_scheduler.", 0) == 0 ||
             key.rfind("dataloader.", 0) == 0 || key == "dump_folder")
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
    j.runtime.framework = frameworks::fsdp::handle;
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
    finish_import(out, opt, p.gpus());
    return out;
}

}  // namespace frenzy
