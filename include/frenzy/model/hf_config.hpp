#pragma once
// Hugging Face config.json -> transformer_spec.
#include <string>

#include <nlohmann/json.hpp>

#include "frenzy/core/error.hpp"
#include "frenzy/io/json_reader.hpp"
#include "frenzy/model/transformer.hpp"

namespace frenzy {

/// Builds a spec from the contents of a Hugging Face config.json. PLACEHOLDER: being implemented.
inline transformer_spec from_hf_config(const nlohmann::json& cfg, const std::string& source = "hf_config") {
    (void)cfg;
    throw config_error(source + ": Hugging Face config loading is not implemented yet");
}

inline transformer_spec load_hf_config(const std::string& path) {
    return from_hf_config(detail::read_json_file(path), path);
}

}  // namespace frenzy
