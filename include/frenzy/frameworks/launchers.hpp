#pragma once
// The launchers this program knows, found by name: the built-in ones (frameworks/<name>/launcher.hpp, one line each
// below) and those a host adds with add_framework (a framework with its launcher: one call). `launch --framework`,
// `--from KIND:FILE`, frenzy.launch and frenzy.import_launcher read names through find_launcher.
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/core/named.hpp"
#include "frenzy/frameworks/axolotl/launcher.hpp"
#include "frenzy/frameworks/deepspeed/launcher.hpp"
#include "frenzy/frameworks/fsdp/launcher.hpp"
#include "frenzy/frameworks/hf/launcher.hpp"
#include "frenzy/frameworks/litgpt/launcher.hpp"
#include "frenzy/frameworks/llamafactory/launcher.hpp"
#include "frenzy/frameworks/llm_foundry/launcher.hpp"
#include "frenzy/frameworks/megatron/launcher.hpp"
#include "frenzy/frameworks/torchtitan/launcher.hpp"
#include "frenzy/frameworks/torchtune/launcher.hpp"
#include "frenzy/launch/launcher.hpp"
#include "frenzy/frameworks/registry.hpp"

namespace frenzy {

inline constexpr launcher launcher::by_default{frameworks::megatron::launcher_handle};  // options that name none
constexpr launcher::launcher() noexcept : t_(&by_default.traits()) {}

/// Every launcher known to this program, in the order --help lists them: the built-ins, then those added.
inline std::vector<launcher>& launcher_catalog() {
    static std::vector<launcher> all{frameworks::megatron::launcher_handle,    frameworks::torchtitan::launcher_handle,
                                     frameworks::deepspeed::launcher_handle,   frameworks::fsdp::launcher_handle,
                                     frameworks::llm_foundry::launcher_handle, frameworks::hf::launcher_handle,
                                     frameworks::torchtune::launcher_handle,   frameworks::litgpt::launcher_handle,
                                     frameworks::axolotl::launcher_handle,     frameworks::llamafactory::launcher_handle};
    return all;
}

/// Adds a framework and the launcher that runs it (both must outlive every use: statics): after this one call
/// job specs, --framework, the planner, `launch` and `--from` know them. config_error when a name is taken or the
/// launcher lacks its payload.
inline launcher add_framework(const framework_traits& fw, const launcher_traits& l) {
    check_new_name(launcher_catalog(), l.name, "add_framework", "launcher");
    if (!l.payload) throw config_error("add_framework: launcher \"" + std::string(l.name) + "\" needs a payload");
    add_framework(fw);
    launcher_catalog().push_back(launcher{l});
    return launcher{l};
}

/// The names of the catalog's launchers, joined by `sep`.
inline std::string launcher_names(std::string_view sep = " | ") { return join_names(entry_names(launcher_catalog()), sep); }

/// "megatron, torchtitan, deepspeed or fsdp": the launchers that read their files back, for messages.
inline std::string importer_names() {
    std::vector<std::string> n;
    for (const auto l : launcher_catalog())
        if (l->import_file) n.emplace_back(l.name());
    std::string out;
    for (std::size_t i = 0; i < n.size(); ++i) out += (i == 0 ? "" : i + 1 == n.size() ? " or " : ", ") + n[i];
    return out;
}

/// "megatron:train.sh, torchtitan:recipe.py, ...": KIND:FILE examples of every launcher that reads its files back.
inline std::string import_examples() {
    std::string out;
    for (const auto l : launcher_catalog())
        if (l->import_file) out += (out.empty() ? "" : ", ") + std::string(l.name()) + ":" + std::string(l->config_example);
    return out;
}

/// The launcher called `name`; config_error naming `field`, the value and the known names.
inline launcher find_launcher(std::string_view field, std::string_view name) {
    if (const auto* l = find_named(launcher_catalog(), name)) return *l;
    throw not_one_of(field, name, entry_names(launcher_catalog()));
}

/// parse_enum's spelling for launchers.
template <>
inline launcher parse_enum<launcher>(std::string_view field, std::string_view text) {
    return find_launcher(field, text);
}

/// The plan frameworks a launcher can run.
inline std::vector<framework> launcher_frameworks(launcher l) {
    std::vector<framework> out;
    for (const auto* t : l->runs)
        if (t) out.emplace_back(*t);
    return out;
}

/// The launcher that runs a plan's framework when none is chosen: the first of the catalog that runs it and is
/// inferred (torchtitan is a choice, never inferred). config_error when none runs it.
inline launcher launcher_for(framework f) {
    for (const auto l : launcher_catalog()) {
        if (!l->inferred) continue;
        for (const auto* t : l->runs)
            if (t == &f.traits()) return l;
    }
    throw config_error("runtime.framework=\"" + std::string(f.name()) + "\" has no launcher");
}

/// Whether `kind` is a launcher whose configuration does not describe the model (torchtitan recipes,
/// ds_config.json and FSDP settings; Megatron-LM's arguments do), so import_options.model must name it.
inline bool launcher_needs_model(std::string_view kind) {
    const auto* l = find_named(launcher_catalog(), kind);
    return l && !(*l)->describes_model;
}

/// `--from KIND:FILE` for every launcher (frameworks/<name>/launcher.hpp import_file): the error names the file.
inline launcher_import import_launcher_file(std::string_view kind, const std::string& path, const import_options& opt = {}) {
    const auto* found = find_named(launcher_catalog(), kind);
    const launcher_traits* l = found ? &found->traits() : nullptr;
    if (!l || !l->import_file)
        throw config_error("launcher kind \"" + std::string(kind) + "\" must be " + importer_names());
    try {
        if (!l->describes_model && opt.model.layers == 0)
            throw config_error("launcher \"" + std::string(kind) + "\": the configuration does not describe the model; name the model "
                               "beside it (import_options.model: a preset or a Hugging Face config)");
        return l->import_file(path, opt);
    } catch (const config_error& e) {
        throw config_error(path + ": " + e.what());
    } catch (const io_error& e) {  // the strict JSON reader's syntax errors name line and column, not the file
        const std::string w = e.what();
        throw io_error(w.rfind(path, 0) == 0 ? w : path + ": " + w);
    }
}

}  // namespace frenzy
