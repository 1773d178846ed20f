#pragma once
// The readers of YAML configurations of stacks that run transformers' Trainer (+ PEFT, bitsandbytes, DeepSpeed or
// FSDP): axolotl's config.yml and LLaMA-Factory's train.yaml (frameworks/axolotl/, frameworks/llamafactory/). What
// they share is read here once: scalars with the key named in errors, Trainer's optimizer names, PEFT's target
// module names, the base model by its Hugging Face name, a DeepSpeed ZeRO json beside the file, Trainer's `fsdp`
// words, and the batch (per-device micro-batch x accumulation x world size). Needs yaml-cpp (FRENZY_HAS_YAML).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/text.hpp"
#include "frenzy/frameworks/deepspeed/import.hpp"
#include "frenzy/io/csv.hpp"
#include "frenzy/io/file.hpp"
#include "frenzy/io/hf_cache.hpp"
#include "frenzy/io/json_reader.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/io/launcher_yaml.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy::detail {

/// One configuration being read: its name for messages ("axolotl config.yml") and what the import collects.
struct trainer_yaml {
    std::string file;
    launcher_import& out;

    [[noreturn]] void fail(const std::string& key, const std::string& rule) const {
        throw config_error(file + ": " + key + (rule.rfind('=', 0) == 0 ? "" : " ") + rule);
    }
    std::string text(const YAML::Node& v, const std::string& key) const {
        if (!v.IsScalar()) fail(key, "must be a single value");
        return v.Scalar();
    }
    bool flag(const YAML::Node& v, const std::string& key) const {
        if (const auto b = yaml_bool(v); v.IsScalar() && b) return *b;
        fail(key, "must be true or false (got " + (v.IsScalar() ? printable(v.Scalar()) : std::string("a list or mapping")) + ")");
    }
    std::int64_t number(const YAML::Node& v, const std::string& key, int_bound b) const { return parse_int64(text(v, key), key, b); }
    double real(const YAML::Node& v, const std::string& key, real_bound b) const { return parse_double(text(v, key), key, b); }
    /// A null value (`key:` with nothing after it): the key is not set, as Python's None.
    static bool unset(const YAML::Node& v) { return !v || v.IsNull(); }
};

/// The file parsed as a YAML mapping (no key twice); config_error naming the line for malformed YAML.
inline YAML::Node trainer_yaml_load(const std::string& text, const std::string& file) {
    YAML::Node loaded;
    try {
        loaded = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw config_error(file + ": not YAML (line " + std::to_string(e.mark.line + 1) + ": " + e.msg + ")");
    }
    if (!loaded.IsMap()) throw config_error(file + ": the file must be a mapping of settings");
    check_yaml_keys(loaded, "", 0, file);
    return loaded;
}

/// transformers' optimizer names (src/transformers/training_args.py OptimizerNames at huggingface/transformers@00349ae)
/// that Frenzy models: torch's AdamW (fused, foreach or apex), bitsandbytes' AdamW8bit and its paged variants
/// (runtime.paged_optimizer), Adafactor and SGD. config_error naming the key and value for any other.
inline void trainer_optimizer(const trainer_yaml& y, const std::string& key, const std::string& name, job_spec& j) {
    auto& o = j.training.optimizer;
    if (name == "adamw_torch" || name == "adamw_torch_fused" || name == "adamw_apex_fused" || name == "adamw_hf") o = optimizer_kind::adamw;
    else if (name == "adamw_bnb_8bit" || name == "adamw_8bit") o = optimizer_kind::adamw_8bit;
    // torchao's AdamW8bit (transformers adamw_torch_8bit, axolotl ao_adamw_8bit): both moments in 8 bits with a scale
    // per block, as bitsandbytes keeps them
    else if (name == "adamw_torch_8bit" || name == "ao_adamw_8bit") o = optimizer_kind::adamw_8bit;
    else if (name == "paged_adamw_8bit") o = optimizer_kind::adamw_8bit, j.runtime.paged_optimizer = true;
    else if (name == "paged_adamw_32bit" || name == "paged_adamw") o = optimizer_kind::adamw, j.runtime.paged_optimizer = true;
    else if (name == "adafactor") o = optimizer_kind::adafactor;
    else if (name == "sgd") o = optimizer_kind::sgd;
    else
        y.fail(key, "=" + printable(name) + " is not an optimizer Frenzy models (adamw_torch, adamw_torch_fused, adamw_apex_fused, "
                    "adamw_bnb_8bit, adamw_8bit, adamw_torch_8bit, ao_adamw_8bit, paged_adamw_8bit, paged_adamw_32bit, adafactor, sgd)");
}

/// The job's LoRA target bit of a PEFT module name (Llama-style names, which Llama, Mistral, Qwen and Gemma share;
/// q_proj or a dotted path ending in it), 0 for a module Frenzy does not adapt.
inline unsigned trainer_lora_module(std::string_view name) {
    static constexpr std::pair<unsigned, std::string_view> names[] = {{lora_q, "q_proj"}, {lora_k, "k_proj"}, {lora_v, "v_proj"},
        {lora_o, "o_proj"}, {lora_gate, "gate_proj"}, {lora_up, "up_proj"}, {lora_down, "down_proj"}};
    if (const auto dot = name.rfind('.'); dot != std::string_view::npos) name = name.substr(dot + 1);
    for (const auto& [bit, n] : names)
        if (name == n) return bit;
    return 0;
}
inline constexpr unsigned lora_all_linear = lora_q | lora_k | lora_v | lora_o | lora_gate | lora_up | lora_down;

/// The names a key lists: a YAML list, or one name / a comma-separated string.
inline std::vector<std::string> trainer_names(const trainer_yaml& y, const std::string& key, const YAML::Node& v) {
    std::vector<std::string> names;
    const std::string listed = v.IsSequence() ? std::string() : y.text(v, key);  // named: split's views point into it
    if (v.IsSequence())
        for (const auto& n : v) names.push_back(y.text(n, key));
    else
        for (const auto piece : split(listed, ',')) names.emplace_back(trim(piece));
    return names;
}

/// The module names of a key (a YAML list, or one name / a comma-separated list) as target bits; config_error
/// naming the key for a module Frenzy does not adapt.
inline unsigned trainer_lora_targets(const trainer_yaml& y, const std::string& key, const YAML::Node& v) {
    const auto names = trainer_names(y, key, v);
    unsigned bits = 0;
    for (const auto& n : names) {
        const auto bit = trainer_lora_module(n);
        if (bit == 0)
            y.fail(key, "names " + printable(n) + ", a module Frenzy does not adapt (q_proj, k_proj, v_proj, o_proj, gate_proj, "
                        "up_proj, down_proj)");
        bits |= bit;
    }
    if (bits == 0) y.fail(key, "names no module");
    return bits;
}

/// A modules_to_save list (axolotl lora_modules_to_save, LLaMA-Factory additional_target: a list or a comma-separated
/// string) as module_to_save bits; fails on a module Frenzy does not count (embed_tokens and lm_head are).
inline unsigned trainer_modules_to_save(const trainer_yaml& y, const std::string& key, const YAML::Node& v) {
    const auto names = trainer_names(y, key, v);
    unsigned bits = 0;
    for (const auto& n : names) {
        unsigned bit = 0;
        for (const auto& [b, name] : module_to_save_names)
            if (name == n) bit = b;
        if (bit == 0) y.fail(key, "names " + printable(n) + ", a module Frenzy does not count as trained whole (embed_tokens, lm_head)");
        bits |= bit;
    }
    return bits;
}

/// The preset a Hugging Face model name stands for: a preset's published repository, or the repository's name as
/// presets spell it, less trailing "-instruct", "-hf", "-2507"... words and a leading "meta-" (fine-tunes of a
/// base model share its architecture); nullopt when none matches.
inline std::optional<std::string> trainer_preset_for(std::string_view name) {
    const auto base = name.substr(name.rfind('/') == std::string_view::npos ? 0 : name.rfind('/') + 1);
    for (const auto& p : model_presets()) {
        const auto repo = published_repository(p.spec.name);
        if (!repo.empty() && lower(std::string(repo.substr(repo.rfind('/') + 1))) == lower(std::string(base))) return p.spec.name;
    }
    for (auto spelled : {preset_spellings(name).first, preset_spellings(name).second}) {
        if (spelled.rfind("meta-", 0) == 0) spelled = spelled.substr(5);
        while (!spelled.empty()) {
            for (const auto& p : model_presets())
                if (p.spec.name == spelled) return spelled;
            const auto dash = spelled.rfind('-');
            if (dash == std::string::npos) break;
            spelled.resize(dash);
        }
    }
    return std::nullopt;
}

/// The model of `key` (a Hugging Face name or folder): the model given beside the file when there is one, else a
/// config.json / local Hugging Face cache entry of that name, else the preset it names (a note says which).
inline transformer_spec trainer_base_model(const trainer_yaml& y, const std::string& key, const std::string& name,
                                           const transformer_spec& given) {
    if (given.layers > 0) return given;
    if (find_hf_config(name)) return load_hf_model(name);
    if (const auto p = trainer_preset_for(name)) {
        y.out.notes.push_back(key + "=" + printable(name) + " read as the preset " + *p + " (give --model to choose another)");
        return preset(*p);
    }
    y.fail(key, "=" + printable(name) + " is neither a Frenzy preset (`frenzy models`) nor a config.json or model in the local "
                "Hugging Face cache: give the model beside the file (--model PRESET or --model path/to/config.json)");
}

/// A DeepSpeed json named by `key` (a path as written: beside the configuration, or from the working directory):
/// its ZeRO stage and offload (frameworks/deepspeed/import.hpp's reader); the rest of it is Trainer's ("auto") and
/// listed as ignored. config_error when the file is not found.
inline void trainer_deepspeed(const trainer_yaml& y, const std::string& key, const std::string& path, const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::vector<fs::path> tried{fs::path(dir) / path, fs::path(path), fs::path(dir) / fs::path(path).filename()};
    for (const auto& p : tried) {
        if (!fs::is_regular_file(p, ec)) continue;
        const auto c = parse_json_text(read_file_limited(p.string()), p.string());
        if (!c.is_object()) y.fail(key, "=" + printable(path) + ": the DeepSpeed configuration must be a JSON object");
        for (const auto& [k, v] : c.items()) {
            if (k == "zero_optimization") deepspeed_zero_section(v, y.out);
            else y.out.ignored.push_back(key + ":" + k);
        }
        if (y.out.job.parallel.sharding == sharding::full)  // Trainer's profile under full sharding is FSDP2's
            y.out.notes.push_back(key + ": ZeRO-3 is estimated with Trainer's full-sharding profile (hf: FSDP2's figures)");
        return;
    }
    y.fail(key, "=" + printable(path) + ": the DeepSpeed configuration is not found (looked beside the file and in the working "
                "directory); its ZeRO stage and offload decide the memory, so put it beside the file");
}

/// Trainer's `fsdp` words ("full_shard auto_wrap", "shard_grad_op", "offload"; training_args.py FSDPOption): the
/// sharding and parameter offload.
inline void trainer_fsdp_words(const trainer_yaml& y, const std::string& key, const YAML::Node& v, job_spec& j) {
    std::vector<std::string> words;
    const std::string listed = v.IsSequence() ? std::string() : y.text(v, key);  // named: split's views point into it
    if (v.IsSequence())
        for (const auto& n : v) words.push_back(y.text(n, key));
    else
        for (const auto piece : split(listed, ' '))
            if (!piece.empty()) words.emplace_back(piece);
    for (const auto& w : words) {
        if (w == "full_shard" || w == "hybrid_shard") j.parallel.sharding = sharding::full;
        else if (w == "shard_grad_op" || w == "hybrid_shard_zero2") j.parallel.sharding = sharding::gradients;
        else if (w == "no_shard") j.parallel.sharding = sharding::none;
        else if (w == "offload") j.runtime.offload.parameters = j.runtime.offload.optimizer = true;
        else if (w != "auto_wrap") y.fail(key, "holds " + printable(w) + ", not one of Trainer's FSDP options");
    }
}

/// The batch: micro-batch per device x accumulation x the world size (opt.world_size; 1 when not given, and then
/// the layout is not fixed), then the checks every job passes.
inline void trainer_finish(launcher_import& out, const import_options& opt, std::int64_t accumulation) {
    auto& j = out.job;
    out.has_parallel = opt.world_size > 0;
    j.parallel.dp = out.has_parallel ? opt.world_size : 1;
    j.training.global_batch = checked_mul(checked_mul(j.training.micro_batch, accumulation, "micro-batch x gradient accumulation"),
                                          j.parallel.dp, "x the world size");
    j.training.total_tokens = opt.training.total_tokens;
    finish_import(out, opt, opt.world_size);
}

}  // namespace frenzy::detail
