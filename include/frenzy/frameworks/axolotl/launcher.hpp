#pragma once
// axolotl's launcher entry: Frenzy reads axolotl's config.yml (`--from axolotl:config.yml`,
// frameworks/axolotl/import.hpp) and writes none (`frenzy launch` refuses it: no payload, no methods). A `deepspeed`
// json the file names is looked for beside it, then from the working directory.
#include <filesystem>
#include <string>

#include "frenzy/frameworks/axolotl/traits.hpp"
#include "frenzy/io/file.hpp"
#ifdef FRENZY_HAS_YAML
#include "frenzy/frameworks/axolotl/import.hpp"
#endif
#include "frenzy/launch/launcher.hpp"

namespace frenzy::frameworks::axolotl {

/// config.yml -> job; the world size comes from beside the file (estimate --gpus, import --world-size).
inline launcher_import import_file(const std::string& path, const import_options& o) {
#ifdef FRENZY_HAS_YAML
    const auto dir = std::filesystem::path(path).parent_path().string();
    return axolotl_import_yaml(read_file_limited(path), o, dir.empty() ? "." : dir);
#else
    (void)path;
    (void)o;
    throw config_error("reading axolotl's config.yml needs Frenzy built with yaml-cpp (FRENZY_HAS_YAML)");
#endif
}

inline constexpr launcher_traits launch_traits{
    .name = "axolotl",
    .summary = "reads axolotl's config.yml (--from axolotl:config.yml); Frenzy writes no axolotl configuration",
    .runs = {&traits},
    .inferred = false,
    .describes_model = true,
    .config_example = "config.yml",
    .import_file = import_file,
    .methods = 0,
    .per_device_batches = true,
};

/// This launcher as launch options name it: a handle to `launch_traits` (frameworks/launchers.hpp lists it).
inline constexpr launcher launcher_handle{launch_traits};

}  // namespace frenzy::frameworks::axolotl
