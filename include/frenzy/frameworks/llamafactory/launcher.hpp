#pragma once
// LLaMA-Factory's launcher entry: Frenzy reads LLaMA-Factory's train.yaml (`--from llamafactory:train.yaml`,
// frameworks/llamafactory/import.hpp) and writes none (`frenzy launch` refuses it: no payload, no methods). A `deepspeed`
// json the file names is looked for beside it, then from the working directory.
#include <filesystem>
#include <string>

#include "frenzy/frameworks/llamafactory/traits.hpp"
#include "frenzy/io/file.hpp"
#ifdef FRENZY_HAS_YAML
#include "frenzy/frameworks/llamafactory/import.hpp"
#endif
#include "frenzy/launch/launcher.hpp"

namespace frenzy::frameworks::llamafactory {

/// train.yaml -> job; the world size comes from beside the file (estimate --gpus, import --world-size).
inline launcher_import import_file(const std::string& path, const import_options& o) {
#ifdef FRENZY_HAS_YAML
    const auto dir = std::filesystem::path(path).parent_path().string();
    return llamafactory_import_yaml(read_file_limited(path), o, dir.empty() ? "." : dir);
#else
    (void)path;
    (void)o;
    throw config_error("reading LLaMA-Factory's train.yaml needs Frenzy built with yaml-cpp (FRENZY_HAS_YAML)");
#endif
}

inline constexpr launcher_traits launch_traits{
    .name = "llamafactory",
    .summary = "reads LLaMA-Factory's train.yaml (--from llamafactory:train.yaml); Frenzy writes no LLaMA-Factory configuration",
    .runs = {&traits},
    .inferred = false,
    .describes_model = true,
    .config_example = "train.yaml",
    .import_file = import_file,
    .methods = 0,
    .per_device_batches = true,
};

/// This launcher as launch options name it: a handle to `launch_traits` (frameworks/launchers.hpp lists it).
inline constexpr launcher launcher_handle{launch_traits};

}  // namespace frenzy::frameworks::llamafactory
