// `frenzy models`: the built-in model presets with their architectures and parameter counts.
#include <cmath>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "frenzy/io/result_json.hpp"
#include "frenzy/model/presets.hpp"

namespace {

void run_models(bool json) {
    const auto presets = frenzy::model_presets();
    if (json) {
        auto out = nlohmann::ordered_json::array();
        for (const auto& p : presets) out.push_back(p);
        fmt::print("{}\n", out.dump(2));
        return;
    }
    fmt::print("{:<18} {:>6} {:>6} {:>8} {:>6} {:>7} {:>16} {:>9} {:>9} {:>10}\n", "name", "layers", "hidden",
               "heads/kv", "ffn", "vocab", "moe", "params B", "active B", "published");
    for (const auto& p : presets) {
        const auto& m = p.spec;
        const std::string moe =
            m.is_moe() ? fmt::format("{}x{} top{}{}", m.moe.experts, m.expert_ffn(), m.moe.top_k,
                                     m.moe.shared_experts > 0 ? fmt::format("+{}s", m.moe.shared_experts) : "")
                       : "-";
        fmt::print("{:<18} {:>6} {:>6} {:>8} {:>6} {:>7} {:>16} {:>9.3f} {:>9} {:>10.4g}\n", m.name, m.layers, m.hidden,
                   fmt::format("{}/{}", m.heads, m.kv()), m.ffn_hidden, m.vocab, moe,
                   frenzy::total_parameters(m) / 1e9,
                   m.is_moe() ? fmt::format("{:.3f}", frenzy::active_parameters(m) / 1e9) : "-",
                   p.published_parameters / 1e9);
    }
    fmt::print("\n{} presets; params/active counted from the architecture (unpadded vocabulary), published = the "
               "publisher's figure (billions). `--json` adds the sources.\n",
               presets.size());
}

}  // namespace

void frenzy_cli::add_models(CLI::App& app) {
    auto json = std::make_shared<bool>(false);
    auto* c = app.add_subcommand("models", "List the built-in model presets with their parameter counts");
    c->add_flag("--json", *json, "Print a JSON array instead of a table");
    c->callback([json] { run_models(*json); });
}
