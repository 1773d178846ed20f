// libFuzzer target: a Hugging Face config.json (io/hf_config.hpp) turned into a transformer spec.
#include "frenzy/io/hf_config.hpp"
#include "fuzz_common.hpp"

FRENZY_FUZZ_TARGET({
    const auto m = frenzy::from_hf_config(frenzy::parse_json_text(input, "config.json"), "config.json");
    (void)m.is_moe();
})
