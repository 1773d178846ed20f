// `frenzy models`: the built-in model presets with their architectures and parameter counts.
#include <cmath>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "frenzy/model/presets.hpp"

namespace {

nlohmann::ordered_json preset_json(const frenzy::model_preset& p) {
    const auto& m = p.spec;
    // Counts are whole numbers of parameters.
    nlohmann::ordered_json j{{"name", m.name},
                     {"parameters", std::llround(frenzy::total_parameters(m))},
                     {"active_parameters", std::llround(frenzy::active_parameters(m))},
                     {"published_parameters", std::llround(p.published_parameters)},
                     {"layers", m.layers},
                     {"hidden", m.hidden},
                     {"heads", m.heads},
                     {"kv_heads", m.kv()},
                     {"head_dim", m.hdim()},
                     {"ffn_hidden", m.ffn_hidden},
                     {"activation", frenzy::to_string(m.activation)},
                     {"vocab", m.vocab},
                     {"tied_embeddings", m.tied_embeddings},
                     {"position_embedding", frenzy::to_string(m.position_embedding)},
                     {"max_positions", m.max_positions},
                     {"norm", frenzy::to_string(m.norm)},
                     {"bias", m.bias},
                     {"qkv_bias", m.qkv_bias},
                     {"embedding_norm", m.embedding_norm},
                     {"moe", nullptr},
                     {"source", p.source}};
    if (m.is_moe())
        j["moe"] = {{"experts", m.moe.experts}, {"top_k", m.moe.top_k}, {"expert_ffn_hidden", m.expert_ffn()},
                    {"shared_experts", m.moe.shared_experts}, {"dense_layers", m.moe.dense_layers}};
    return j;
}

void run_models(bool json) {
    const auto presets = frenzy::model_presets();
    if (json) {
        auto out = nlohmann::ordered_json::array();
        for (const auto& p : presets) out.push_back(preset_json(p));
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

const frenzy_cli::registrar reg_models{10, [](CLI::App& app) {
    auto json = std::make_shared<bool>(false);
    auto* c = app.add_subcommand("models", "List the built-in model presets with their parameter counts");
    c->add_flag("--json", *json, "Print a JSON array instead of a table");
    c->callback([json] { run_models(*json); });
}};

}  // namespace
