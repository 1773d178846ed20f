// libFuzzer target: the launcher importers (frameworks/<name>/import.hpp, io/launcher_shell.hpp)
// behind `frenzy import` and `--from`. Every input is given to each importer in turn, as `--from KIND:FILE` would
// (megatron script, JSON argument list or YAML argument file, torchtitan recipe, llm-foundry train.yaml, litgpt.yaml,
// frenzy_hf_train.py, DeepSpeed
// ds_config.json, FSDP settings), so the
// seed corpus (tests/data/launch) needs no kind prefix. The last three describe no model: gpt3-125m stands in, as
// `--model` would. Each importer may end only with a frenzy::error.
#include <string>

#include "frenzy/io/json_reader.hpp"
#include "frenzy/frameworks/hf/import.hpp"
#include "frenzy/frameworks/deepspeed/import.hpp"
#include "frenzy/frameworks/fsdp/import.hpp"
#include "frenzy/frameworks/megatron/import.hpp"
#include "frenzy/frameworks/torchtitan/import.hpp"
#include "frenzy/frameworks/megatron/import.hpp"
#ifdef FRENZY_HAS_YAML
#include "frenzy/frameworks/litgpt/import.hpp"
#include "frenzy/frameworks/llm_foundry/import.hpp"
#include "frenzy/io/launcher_yaml.hpp"
#endif
#include "frenzy/model/presets.hpp"
#include "fuzz_common.hpp"

FRENZY_FUZZ_TARGET({
    const std::string text(input);
    frenzy::import_options opt;
    opt.model = frenzy::preset("gpt3-125m");
    auto use = [](const frenzy::launcher_import& r) { frenzy::validate(r.job); };  // what import does next
    try { use(frenzy::megatron_import_text(text, {})); } catch (const frenzy::error&) {}
    try { use(frenzy::torchtitan_import_text(text, opt)); } catch (const frenzy::error&) {}
#ifdef FRENZY_HAS_YAML
    try { use(frenzy::megatron_import_yaml(text, {})); } catch (const frenzy::error&) {}
    try { use(frenzy::llm_foundry_import_yaml(text, {})); } catch (const frenzy::error&) {}
    frenzy::import_options sized = opt;  // with the model given and a world size: the consistency checks
    sized.world_size = 8;
    try { use(frenzy::llm_foundry_import_yaml(text, sized)); } catch (const frenzy::error&) {}
    try { use(frenzy::litgpt_import_yaml(text, {})); } catch (const frenzy::error&) {}
#endif
    try { use(frenzy::hf_import_script(text, opt)); } catch (const frenzy::error&) {}
    const auto j = frenzy::parse_json_text(text, "config.json");
    try { use(frenzy::deepspeed_import_json(j, opt)); } catch (const frenzy::error&) {}
    use(frenzy::fsdp_import_json(j, opt));
})
