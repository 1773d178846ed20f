#pragma once
// The frameworks this program knows, found by name: the built-in ones (one folder each under
// include/frenzy/frameworks/, one line each below) and any a host adds with add_framework (frameworks/launchers.hpp
// adds a framework together with its launcher). Job specs, plans, --framework and the Python module read names
// through find_framework; nothing else lists frameworks.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/core/named.hpp"
#include "frenzy/frameworks/ddp/traits.hpp"
#include "frenzy/frameworks/axolotl/traits.hpp"
#include "frenzy/frameworks/deepspeed/traits.hpp"
#include "frenzy/frameworks/fsdp/traits.hpp"
#include "frenzy/frameworks/hf/traits.hpp"
#include "frenzy/frameworks/litgpt/traits.hpp"
#include "frenzy/frameworks/llamafactory/traits.hpp"
#include "frenzy/frameworks/llm_foundry/traits.hpp"
#include "frenzy/frameworks/megatron/traits.hpp"
#include "frenzy/frameworks/torchtune/traits.hpp"
#include "frenzy/frameworks/unsloth/traits.hpp"
#include "frenzy/train/framework.hpp"

namespace frenzy {

inline constexpr framework framework::by_default{frameworks::megatron::handle};  // a job that names none
constexpr framework::framework() noexcept : t_(&by_default.traits()) {}

/// Every framework known to this program, in the order --help lists them: the built-ins, then those added.
inline std::vector<framework>& framework_catalog() {
    static std::vector<framework> all{frameworks::megatron::handle,    frameworks::deepspeed::handle,
                                      frameworks::fsdp::handle,        frameworks::ddp::handle,
                                      frameworks::hf::handle,          frameworks::llm_foundry::handle,
                                      frameworks::torchtune::handle,   frameworks::litgpt::handle,
                                      frameworks::axolotl::handle,     frameworks::llamafactory::handle,
                                      frameworks::unsloth::handle};
    return all;
}

/// Adds a framework to the catalog (its traits must outlive every use: a static). config_error when its name is
/// empty or already taken.
inline framework add_framework(const framework_traits& t) {
    check_new_name(framework_catalog(), t.name, "add_framework", "framework");
    if (!t.rules.rejects_layout || !t.rules.rejects_offload)
        throw config_error("add_framework: framework \"" + std::string(t.name) + "\" needs rules.rejects_layout and rules.rejects_offload");
    framework_catalog().push_back(framework{t});
    return framework{t};
}

/// The framework's position in the catalog (a small number for packed keys), or SIZE_MAX when it was never added.
inline std::size_t catalog_index(framework f) {
    const auto& all = framework_catalog();
    for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i] == f) return i;
    return static_cast<std::size_t>(-1);
}

/// The framework of the catalog whose table word `lowercase_text` contains, the longest such word when several do
/// ("llm-foundry / composer (pytorch fsdp1)" names llm-foundry, not fsdp), if any.
inline std::optional<framework> framework_mentioned_in(std::string_view lowercase_text) {
    std::optional<framework> best;
    std::size_t best_length = 0;
    for (const auto f : framework_catalog())
        for (const auto w : f->table_words)
            if (w.size() > best_length && lowercase_text.find(w) != std::string_view::npos) {
                best = f;
                best_length = w.size();
            }
    return best;
}

/// Whether `lowercase_text` contains one of framework `f`'s table words.
inline bool table_text_names(std::string_view lowercase_text, framework f) {
    for (const auto w : f->table_words)
        if (!w.empty() && lowercase_text.find(w) != std::string_view::npos) return true;
    return false;
}

/// The framework of a measurement table's free-text framework column: the one it mentions (framework_mentioned_in),
/// else the one whose rows name none (table_flags.unnamed_rows: plain PyTorch), else the catalog's default.
inline framework framework_of_table_text(std::string_view lowercase_text) {
    if (const auto f = framework_mentioned_in(lowercase_text)) return *f;
    for (const auto f : framework_catalog())
        if (f->table_flags.unnamed_rows) return f;
    return framework::by_default;
}

/// Whether `program` (a command word's base name) starts some framework's training (its traits' launch_programs).
inline bool framework_launch_program(std::string_view program) {
    for (const auto f : framework_catalog())
        for (const auto p : f->launch_programs)
            if (!p.empty() && p == program) return true;
    return false;
}

/// The names of the catalog's frameworks, joined by `sep`.
inline std::string framework_names(std::string_view sep = " | ") { return join_names(entry_names(framework_catalog()), sep); }

/// The frameworks whose defaults differ by version, each with its versions (runtime.framework_version, --help):
/// `fsdp: "main" (default), "0.1.0", ...`; the others take none.
inline std::string framework_versions_help() {
    std::string out;
    for (const auto f : framework_catalog()) {
        if (f->default_version.empty()) continue;
        out += (out.empty() ? "" : "; ") + std::string(f.name()) + ": " + framework_versions_text(f.traits());
    }
    return out;
}

/// The names of the frameworks whose rules pass `accepts`, joined as `a" or "b` (for "needs runtime.framework=..."
/// messages).
template <class Accepts>
std::string frameworks_where(Accepts accepts) {
    std::string out;
    for (const auto f : framework_catalog())
        if (accepts(f->rules)) out += (out.empty() ? "" : "\" or \"") + std::string(f.name());
    return out;
}
/// The names of the frameworks whose rules have `option` on.
inline std::string frameworks_with(bool framework_rules::*option) {
    return frameworks_where([option](const framework_rules& r) { return r.*option; });
}
/// The names of the frameworks that run fp8 recipe `r`.
inline std::string frameworks_with(fp8_recipe r) {
    return frameworks_where([r](const framework_rules& x) { return (x.fp8_recipes & fp8_recipe_bit(r)) != 0; });
}

/// The framework called `name`; config_error naming `field`, the value and the known names.
inline framework find_framework(std::string_view field, std::string_view name) {
    if (const auto* f = find_named(framework_catalog(), name)) return *f;
    throw not_one_of(field, name, entry_names(framework_catalog()));
}

/// parse_enum's spelling for frameworks (job specs and flags read frameworks like enums).
template <>
inline framework parse_enum<framework>(std::string_view field, std::string_view text) {
    return find_framework(field, text);
}

}  // namespace frenzy
