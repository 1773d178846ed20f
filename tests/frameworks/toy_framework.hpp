#pragma once
// A framework that exists only in the tests, defined the way a new one is added to Frenzy: this one header stands
// for its folder (include/frenzy/frameworks/<name>/: traits.hpp, import.hpp and launcher.hpp), and register_toy() is
// the one line a host adds (a built-in framework has one line in each catalog, frameworks/registry.hpp and
// frameworks/launchers.hpp, instead). Nothing else in the library, the CLI or the Python module names it.
//
// "toy" is an FSDP-like framework that shards everything or nothing (no ZeRO-1, no pipeline), keeps dropout masks,
// and is started by a launcher that writes toy.json (the layout) and reads it back.
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "frenzy/frameworks/fsdp/traits.hpp"
#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/io/launcher_import.hpp"

namespace frenzy_test::toy {

using namespace frenzy;

inline std::string rejects_layout(const parallel_config& p, const training_spec&) {
    if (p.sharding == sharding::optimizer || p.sharding == sharding::gradients)
        return "parallel.sharding=\"" + std::string(to_string(p.sharding)) + "\" is not supported by runtime.framework=\"toy\" (none or full)";
    if (p.pp > 1 || p.cp > 1 || p.ep > 1) return "runtime.framework=\"toy\" runs dp and tp only";
    return {};
}

inline std::string rejects_offload(const offload_spec& o, sharding) {
    return o.optimizer || o.parameters ? "runtime.framework=\"toy\" does not offload" : "";
}

inline framework_profile memory() {
    auto m = frameworks::fsdp::traits.memory;
    m.dropout = true;  // a difference the estimate can see
    return m;
}

inline const framework_traits traits{
    .name = "toy",
    .summary = "a test-only framework (tests/frameworks/toy_framework.hpp)",
    .table_words = {"toy"},
    .memory = memory(),
    .perf = {},
    .rules = {.rejects_layout = rejects_layout, .rejects_offload = rejects_offload},
    .launch_programs = {"toyrun"},  // its own launch program, which launch-script readers then recognise
};

/// toy.json: the layout and the batch, for a training script of the user's.
inline launcher_payload payload(const job_spec& j, const launch_options& o) {
    nlohmann::ordered_json c{{"dp", j.parallel.dp}, {"tp", j.parallel.tp}, {"sharding", to_string(j.parallel.sharding)},
                             {"micro_batch", j.training.micro_batch}, {"global_batch", j.training.global_batch},
                             {"seq_len", j.training.seq_len}};
    return {.files = {{"toy.json", c.dump(2) + "\n"}},
            .preamble = {},
            .torchrun_target = (o.run_command.empty() ? std::string("toy_train.py") : o.run_command) +
                               " --config \"$LAUNCH_DIR/toy.json\"",
            .exports = {}};
}

/// import.hpp: toy.json read back into a job (the launcher's import_file, which `--from toy:FILE` reaches through
/// the catalog).
inline launcher_import import_file(const std::string& path, const import_options& o) {
    std::ifstream in(path);
    if (!in) throw io_error(path + ": cannot read");
    std::stringstream text;
    text << in.rdbuf();
    const auto c = nlohmann::json::parse(text.str());
    launcher_import r;
    auto& j = r.job;
    j.name = o.name.empty() ? o.model.name : o.name;
    j.model = o.model;
    j.training.seq_len = c.at("seq_len").get<std::int64_t>();
    j.training.micro_batch = c.at("micro_batch").get<std::int64_t>();
    j.training.global_batch = c.at("global_batch").get<std::int64_t>();
    j.parallel.dp = c.at("dp").get<std::int64_t>();
    j.parallel.tp = c.at("tp").get<std::int64_t>();
    j.parallel.sharding = parse_enum<sharding>("sharding", c.at("sharding").get<std::string>());
    j.runtime.framework = framework{traits};
    r.world_size = j.parallel.dp * j.parallel.tp;
    validate(j);
    return r;
}

inline const launcher_traits launch_traits{
    .name = "toy",
    .summary = "toy_train.py with toy.json (test only)",
    .runs = {&traits},
    .payload = payload,
    .config_example = "toy.json",
    .import_file = import_file,
};

/// The one registry line: after it, job specs, --framework, the planner, launch and --from know "toy".
inline void register_toy() {
    static const bool once = (add_framework(traits, launch_traits), true);
    (void)once;
}

}  // namespace frenzy_test::toy
