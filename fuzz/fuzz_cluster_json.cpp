// libFuzzer target: a cluster spec file (io/cluster_json.hpp): node groups and GPU type overrides.
#include "frenzy/io/cluster_json.hpp"
#include "fuzz_common.hpp"

FRENZY_FUZZ_TARGET({
    const auto c = frenzy::cluster_from_json(frenzy::parse_json_text(input, "cluster.json"));
    (void)c.total_gpus();
    for (const auto& t : c.catalog.types()) (void)frenzy::to_json(t).dump();
})
