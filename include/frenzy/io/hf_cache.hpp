#pragma once
// A Hugging Face model's config.json found on this machine, never downloaded: a snapshot directory (one holding
// config.json), or ORG/NAME in the local hub cache as huggingface_hub lays it out
// (huggingface/huggingface_hub src/huggingface_hub/constants.py: HF_HUB_CACHE, else $HF_HOME/hub, HF_HOME
// defaulting to $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface; file_download.py: a repo's folder is
// models--ORG--NAME, refs/main holds the revision of the main branch, snapshots/<revision>/ its files).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/io/hf_config.hpp"
#include "frenzy/model/presets.hpp"

namespace frenzy {

/// The hub cache folders searched, in order: $HF_HUB_CACHE (or the older $HUGGINGFACE_HUB_CACHE), else
/// $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else $HOME/.cache/huggingface/hub.
inline std::vector<std::string> hf_cache_dirs() {
    const auto env = [](const char* name) {
        const char* v = std::getenv(name);
        return v && *v ? std::optional<std::string>(v) : std::nullopt;
    };
    if (auto v = env("HF_HUB_CACHE")) return {*v};
    if (auto v = env("HUGGINGFACE_HUB_CACHE")) return {*v};
    if (auto v = env("HF_HOME")) return {*v + "/hub"};
    if (auto v = env("XDG_CACHE_HOME")) return {*v + "/huggingface/hub"};
    if (auto v = env("HOME")) return {*v + "/.cache/huggingface/hub"};
    return {};
}

namespace detail {
/// ORG/NAME as a hub repository id: two non-empty parts of letters, digits and - _ . (no "..").
inline bool hf_repo_id(const std::string& s) {
    const auto slash = s.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == s.size() || s.find('/', slash + 1) != std::string::npos)
        return false;
    if (s.find("..") != std::string::npos) return false;
    for (const char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              c == '.' || c == '/'))
            return false;
    return true;
}

/// The config.json of the cached snapshot of `repo` under `cache`: the revision refs/main names, else the only
/// snapshot there is; "" when none (several snapshots and no refs/main is an error naming them).
inline std::string cached_snapshot_config(const std::filesystem::path& cache, const std::string& repo) {
    namespace fs = std::filesystem;
    std::string folder = "models--" + repo;
    folder.replace(folder.find('/'), 1, "--");
    const fs::path root = cache / folder;
    std::error_code ec;
    if (!fs::is_directory(root / "snapshots", ec)) return {};
    std::string revision;
    if (std::ifstream ref(root / "refs" / "main"); ref) std::getline(ref, revision);
    if (!revision.empty() && fs::is_regular_file(root / "snapshots" / revision / "config.json", ec))
        return (root / "snapshots" / revision / "config.json").string();
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(root / "snapshots", ec))
        if (fs::is_regular_file(e.path() / "config.json", ec)) found.push_back(e.path() / "config.json");
    if (found.size() == 1) return found.front().string();
    if (found.size() > 1)
        throw config_error("model \"" + repo + "\": " + std::to_string(found.size()) + " cached snapshots under " +
                           root.string() + " and no refs/main to choose one; give --hf-config with the snapshot folder");
    return {};
}
/// Whether a config.json names its model (`_name_or_path`, at the top or in a multimodal config's text_config).
inline bool names_itself(const std::string& config_path) {
    const auto j = read_json_file(config_path);
    const auto named = [](const nlohmann::json& o) {
        return o.is_object() && o.contains("_name_or_path") && o["_name_or_path"].is_string() &&
               !o["_name_or_path"].get<std::string>().empty();
    };
    return named(j) || (j.is_object() && j.contains("text_config") && named(j["text_config"]));
}
/// The name a config.json without `_name_or_path` gets: its folder's (a snapshot or model folder holding
/// config.json), else its file's without the extension (llama-3.1-8b.json), rather than the family's model_type.
inline std::string name_from_path(const std::string& config_path) {
    const std::filesystem::path p(config_path);
    if (p.filename() == "config.json") {
        const auto folder = std::filesystem::absolute(p).parent_path().filename().string();
        if (!folder.empty()) return folder;
    }
    return p.stem().string();
}
}  // namespace detail

/// The config.json path of `name`: a file as it is, a folder's config.json, or ORG/NAME's cached snapshot;
/// nullopt when `name` is none of these (a preset name, say).
inline std::optional<std::string> find_hf_config(const std::string& name) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(name, ec)) {
        if (fs::is_regular_file(fs::path(name) / "config.json", ec)) return (fs::path(name) / "config.json").string();
        throw config_error("hf_config=\"" + name + "\" is a folder without a config.json");
    }
    if (fs::is_regular_file(name, ec)) return name;
    if (!detail::hf_repo_id(name)) return std::nullopt;
    for (const auto& dir : hf_cache_dirs())
        if (auto p = detail::cached_snapshot_config(dir, name); !p.empty()) return p;
    return std::nullopt;
}

/// The model of a config.json, a snapshot folder or a cached ORG/NAME (find_hf_config); config_error naming the
/// cache folders searched when it is none of them.
inline transformer_spec load_hf_model(const std::string& name) {
    if (auto p = find_hf_config(name)) {
        auto s = load_hf_config(*p);
        std::error_code ec;
        if (!std::filesystem::exists(name, ec)) s.name = name;  // found by repository id: named by it
        else if (!detail::names_itself(*p)) s.name = detail::name_from_path(*p);
        return s;
    }
    std::string where;
    for (const auto& d : hf_cache_dirs()) where += (where.empty() ? "" : ", ") + d;
    throw config_error("model \"" + name + "\" is neither a config.json, a snapshot folder nor a model in the local Hugging "
                       "Face cache (searched " + (where.empty() ? std::string("no cache folder: HOME is not set") : where) +
                       "; nothing is downloaded)");
}

/// The preset called `name`, else the cached Hugging Face model ORG/NAME (or config.json / snapshot folder) of that
/// name; the error is the preset's (known names, nearest one) with the cache folders searched.
inline transformer_spec preset_or_cached(const std::string& name) {
    for (const auto& p : model_presets())
        if (p.spec.name == name) return p.spec;
    if (auto path = find_hf_config(name)) return load_hf_model(name);
    try {
        (void)preset(name);
    } catch (const config_error& e) {
        std::string where;
        for (const auto& d : hf_cache_dirs()) where += (where.empty() ? "" : ", ") + d;
        throw config_error(std::string(e.what()) + (detail::hf_repo_id(name)
                               ? "; not in the local Hugging Face cache either (searched " + where + "; nothing is downloaded)"
                               : std::string()));
    }
    return preset(name);
}

}  // namespace frenzy
