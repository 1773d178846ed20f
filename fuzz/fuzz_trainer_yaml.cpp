// libFuzzer target: the readers of Trainer-based YAML configurations behind `--from axolotl:config.yml` and
// `--from llamafactory:train.yaml` (frameworks/axolotl/import.hpp, frameworks/llamafactory/import.hpp over
// frameworks/hf/trainer_yaml.hpp). Every input goes to both, without a model (the name in the file resolves to a
// preset or fails) and with llama-3.2-1b given beside it and a world size of 8, as `--model` and `--gpus` would;
// a `deepspeed` path is looked up beside the seeds (tests/data/trainer_yaml). Each reader may end only with a
// frenzy::error.
#include <string>

#ifdef FRENZY_HAS_YAML
#include "frenzy/frameworks/axolotl/import.hpp"
#include "frenzy/frameworks/llamafactory/import.hpp"
#endif
#include "frenzy/model/presets.hpp"
#include "fuzz_common.hpp"

FRENZY_FUZZ_TARGET({
#ifdef FRENZY_HAS_YAML
    const std::string text(input);
    const std::string dir = "tests/data/trainer_yaml";
    const frenzy::import_options none{}, given = [] {
        frenzy::import_options o;
        o.model = frenzy::preset("llama-3.2-1b");
        o.world_size = 8;
        return o;
    }();
    auto use = [](const frenzy::launcher_import& r) { frenzy::validate(r.job); };  // what estimate does next
    for (const auto* o : {&given, &none}) {
        try { use(frenzy::axolotl_import_yaml(text, *o, dir)); } catch (const frenzy::error&) {}
        try { use(frenzy::llamafactory_import_yaml(text, *o, dir)); } catch (const frenzy::error&) {}
    }
#else
    (void)input;
#endif
})
