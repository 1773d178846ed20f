#pragma once
// Hugging Face config.json -> transformer_spec: the model_type (else architectures[0]) picks the family
// (families/registry.hpp), whose reader follows transformers' configuration_<model>.py / modeling_<model>.py.
#include <string>

#include <nlohmann/json.hpp>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/families/registry.hpp"
#include "frenzy/io/hf_reader.hpp"
#include "frenzy/io/json_reader.hpp"
#include "frenzy/model/transformer.hpp"

namespace frenzy {

/// Builds a spec from the contents of a Hugging Face config.json. Dispatches on `model_type` (else on
/// `architectures[0]`); the name is `_name_or_path` when present, else the model type. Errors name `source`.
inline transformer_spec from_hf_config(const nlohmann::json& cfg, const std::string& source = "hf_config") {
    if (!cfg.is_object()) throw config_error(source + ": a config.json must be a JSON object");
    const hf_reader r(cfg, source);
    std::string type = r.string("model_type", "");
    if (type.empty()) {
        const auto* arch = r.find({"architectures"});
        if (!arch || !arch->is_array() || arch->empty() || !(*arch)[0].is_string())
            r.fail("missing \"model_type\" (and no \"architectures\" to infer it from); supported model_type: " +
                   supported_model_types());
        const auto a = (*arch)[0].get<std::string>();
        type = std::string(model_type_of_architecture(a));
        if (type.empty())
            r.fail("no \"model_type\" and architectures[0]=\"" + printable(a) +
                   "\" is not supported; supported model_type: " + supported_model_types());
    }
    const auto match = find_model_type(type);
    if (!match.family)
        r.fail("model_type=\"" + printable(type) + "\" is not supported (supported: " + supported_model_types() + ")");
    // Multimodal wrappers keep the language model in text_config (Llama4Config, Gemma3Config).
    if (!match.type->text_model_type.empty()) {
        const auto* text = r.find({"text_config"});
        if (text && !text->is_object()) r.fail("text_config=" + json_value_text(*text) + " must be an object");
        nlohmann::json inner = text ? *text : nlohmann::json::object();
        if (!inner.contains("model_type")) inner["model_type"] = std::string(match.type->text_model_type);
        auto s = from_hf_config(inner, source + ": text_config");
        if (s.name == match.type->text_model_type || s.name.empty()) s.name = r.string("_name_or_path", type);
        return s;
    }
    transformer_spec s = match.family->read_hf(r, type);
    s.name = r.string("_name_or_path", "");
    if (s.name.empty()) s.name = type;
    hf_normalise(s);
    try {
        validate(s);
    } catch (const config_error& e) {
        const std::string what = e.what();
        r.fail(what + detail::hf_fields_note(cfg, what));
    }
    return s;
}

inline transformer_spec load_hf_config(const std::string& path) {
    return from_hf_config(frenzy::read_json_file(path), path);
}

}  // namespace frenzy
