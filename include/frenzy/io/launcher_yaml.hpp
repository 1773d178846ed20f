#pragma once
// Megatron-LM's YAML argument file (`pretrain_gpt.py --yaml-cfg FILE`) -> the argument list the Megatron importer
// reads (io/launcher_megatron.hpp), so a YAML configuration and the equivalent launch script give the same job.
// The format is the one NVIDIA/Megatron-LM@d98e8a64 megatron/training/yaml_arguments.py reads: load_yaml() turns
// the mapping into a namespace whose top-level keys are the argparse destinations of
// megatron/training/arguments.py (micro_batch_size, seq_length, ...), and validate_yaml() flattens two sections
// into it: `model_parallel` (ModelParallelConfig fields) and `language_model` (TransformerConfig fields, given to
// TransformerConfig directly by core_transformer_config_from_yaml). The layout of such a file:
// examples/gpt3/gpt_config.yaml at Megatron-LM@532ad926 (removed from the tree later).
// Needs yaml-cpp (the frenzy::yaml CMake target, which defines FRENZY_HAS_YAML).
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/io/launcher_megatron.hpp"

namespace frenzy {

/// Flags from a Megatron YAML argument file, and what could not be turned into flags.
struct megatron_yaml_arguments {
    std::vector<std::string> args;   ///< "--flag", "value", ... in the order of the file (sections last)
    std::vector<std::string> notes;  ///< keys not turned into flags, with why
};

namespace detail {

/// Whether a YAML scalar is a boolean (YAML 1.1 words: true/false/yes/no/on/off, any case), and which.
inline std::optional<bool> yaml_bool(const YAML::Node& n) {
    bool b = false;
    if (YAML::convert<bool>::decode(n, b)) return b;
    return std::nullopt;
}

/// The value of one key as argparse would receive it; false for a key that produces no flag. TransformerConfig
/// fields whose argparse flag has another name are renamed as yaml_arguments.py maps them (num_moe_experts ->
/// args.num_experts; activation_func swiglu/squaredrelu; add_bias_linear; fp8 -> --fp8-format; num_query_groups,
/// which TransformerConfig uses without a --group-query-attention switch).
inline void yaml_key_flags(const std::string& section, const std::string& key, const YAML::Node& v,
                           megatron_yaml_arguments& out) {
    const std::string where = section.empty() ? key : section + "." + key;
    auto flag = [](std::string k) {
        for (auto& c : k)
            if (c == '_') c = '-';
        return "--" + k;
    };
    auto push = [&](std::string f, std::vector<std::string> values = {}) {
        out.args.push_back(std::move(f));
        for (auto& x : values) out.args.push_back(std::move(x));
    };
    if (!key.empty() && key.front() == '_') return;  // private namespace fields (_cpu_offloading_context)
    if (v.IsNull()) return;                          // null: argparse's default
    if (v.IsMap()) {
        out.notes.push_back(where + ": a nested mapping Megatron's YAML reader does not flatten (not read)");
        return;
    }
    if (v.IsSequence()) {
        std::vector<std::string> values;
        for (const auto& e : v) {
            if (!e.IsScalar()) {
                out.notes.push_back(where + ": a list of non-scalars (not read)");
                return;
            }
            values.push_back(e.Scalar());
        }
        push(flag(key), values);
        return;
    }
    const std::string s = v.Scalar();
    if (s.find("${") != std::string::npos)  // Megatron's !pathex resolver expands ${VAR}; the importer does not
        out.notes.push_back(where + "=" + s + ": environment variable not expanded");
    const auto b = yaml_bool(v);
    if (section == "language_model") {
        if (key == "num_moe_experts") return push("--num-experts", {s});
        if (key == "activation_func") {
            if (s == "swiglu") return push("--swiglu");
            if (s == "squaredrelu") return push("--squared-relu");
            if (s == "gelu") return;  // Megatron's default activation
            out.notes.push_back(where + "=" + s + ": not one of swiglu | squaredrelu | gelu (yaml_arguments.py)");
            return;
        }
        if (key == "add_bias_linear" && b) return push(*b ? "--add-bias-linear" : "--disable-bias-linear");
        if (key == "fp8") return push("--fp8-format", {s});
        if (key == "num_query_groups") return push("--group-query-attention"), push("--num-query-groups", {s});
        if (key == "gated_linear_unit" && b) return;  // the gate comes with activation_func (swiglu sets it)
    }
    if (section == "model_parallel" && key == "virtual_pipeline_model_parallel_size")
        return push("--num-virtual-stages-per-pipeline-rank", {s});
    if (b) {
        if (*b) push(flag(key));  // store_true switches; false is argparse's default
        return;
    }
    push(flag(key), {s});
}

}  // namespace detail

/// A key given twice in one mapping is an error (yaml-cpp keeps both; Megatron's PyYAML loader keeps the last), in
/// the sections too: which value was meant is not Frenzy's to guess.
inline void check_yaml_keys(const YAML::Node& map, const std::string& section, std::size_t depth = 0,
                            std::string_view what = "megatron YAML arguments") {
    const std::string file(what);
    if (depth > bounds::json_depth)
        throw config_error(file + ": mappings nest deeper than " + std::to_string(bounds::json_depth));
    std::set<std::string> seen;
    for (const auto& kv : map) {
        if (!kv.first.IsScalar())
            throw config_error(file + ": a key that is not a name (line " + std::to_string(kv.first.Mark().line + 1) + ")");
        const auto key = kv.first.Scalar();
        const auto where = section.empty() ? key : section + "." + key;
        if (!seen.insert(key).second)
            throw config_error(file + ": " + where + " is given twice (line " +
                               std::to_string(kv.first.Mark().line + 1) + ")");
        if (kv.second.IsMap()) check_yaml_keys(kv.second, where, depth + 1, what);
    }
}

/// The flags a Megatron YAML argument file stands for. config_error (naming the file's structure) when the text
/// is not YAML or not a mapping.
inline megatron_yaml_arguments megatron_yaml_to_arguments(const std::string& text) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw config_error("megatron YAML arguments: not YAML (line " + std::to_string(e.mark.line + 1) + ": " + e.msg + ")");
    }
    if (!root.IsMap()) throw config_error("megatron YAML arguments: the file must be a mapping of argument names to values");
    megatron_yaml_arguments out;
    check_yaml_keys(root, "");
    // Top-level keys first, then the two sections (whose TransformerConfig fields decide the model).
    for (const auto& kv : root) {
        const auto key = kv.first.as<std::string>();
        if (key == "model_parallel" || key == "language_model") {
            if (!kv.second.IsMap() && !kv.second.IsNull())
                throw config_error("megatron YAML arguments: " + key + " must be a mapping of field names to values");
            continue;
        }
        detail::yaml_key_flags("", key, kv.second, out);
    }
    for (const char* section : {"model_parallel", "language_model"})
        if (const auto s = root[section]; s && s.IsMap())
            for (const auto& kv : s) detail::yaml_key_flags(section, kv.first.as<std::string>(), kv.second, out);
    // A switch or value given twice (swiglu at the top and activation_func: swiglu) is one argument.
    std::vector<std::string> args;
    std::set<std::string> seen;
    const auto parts = split_arguments(out.args);
    for (const auto& a : parts) {
        const auto text = detail::arg_text(a);
        if (!seen.insert(text).second) continue;
        args.push_back(a.flag);
        args.insert(args.end(), a.values.begin(), a.values.end());
    }
    out.args = std::move(args);
    return out;
}

/// A Megatron YAML argument file -> job, as megatron_import_arguments reads the same flags from a script.
/// The world size is not in the file (Megatron takes it from the launcher): opt.world_size gives it.
inline launcher_import megatron_import_yaml(const std::string& text, const import_options& opt = {}) {
    const auto y = megatron_yaml_to_arguments(text);
    auto r = megatron_import_arguments(y.args, opt, opt.world_size);
    r.notes.insert(r.notes.end(), y.notes.begin(), y.notes.end());
    return r;
}

}  // namespace frenzy
