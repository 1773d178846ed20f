// Issue 57 items 1-2: the importers read what the framework will run, or refuse naming the field. Each case edits
// a file frenzy launch wrote the way the black-box campaign did, and checks the value read or the refusal.
#include <catch2/catch.hpp>

#include <string>

#include "frenzy/frameworks/hf/import.hpp"
#ifdef FRENZY_HAS_YAML
#include "frenzy/frameworks/llm_foundry/import.hpp"
#include "frenzy/frameworks/torchtune/import.hpp"
#endif
#include "frenzy/launch/launch.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;

namespace import57 {

/// The file `name` frenzy launch writes for `j` on `gpus` H100s with launcher `l`.
inline std::string written(const job_spec& j, launcher l, const std::string& name) {
    plan p;
    p.gpu = "h100-80g";
    p.gpus = static_cast<int>(j.parallel.gpus());
    p.nodes = (p.gpus + 7) / 8;
    p.framework = j.runtime.framework;
    p.micro_batch = j.training.micro_batch;
    launch_options o;
    o.launcher = l;
    for (const auto& f : launch_files(j, p, o))
        if (f.name == name) return f.content;
    FAIL("no file " << name);
    return {};
}

/// `text` with the first `from` replaced by `to` (the edit must apply).
inline std::string edit(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

inline job_spec hf_lora_job() {
    job_spec j;
    j.name = "h57";
    j.model = preset("llama-3.2-1b");
    j.model.name = "llama-3.2-1b";
    j.training.seq_len = 2048;
    j.training.micro_batch = 8;
    j.training.global_batch = 64;
    j.training.total_tokens = 64.0 * 2048 * 100;
    j.training.finetune = {.method = finetune_method::lora, .rank = 16};
    j.runtime.framework = frameworks::hf::handle;
    j.parallel = {.dp = 8};
    return j;
}

}  // namespace import57

using import57::edit;

TEST_CASE("hf import reads TrainingArguments' batch keywords and refuses what disagrees with the settings block (issue 57)") {
    using Catch::Matchers::Contains;
    const auto j = import57::hf_lora_job();
    const auto script = import57::written(j, frameworks::hf::launcher_handle, "frenzy_hf_train.py");
    import_options o;
    o.model = j.model;
    o.world_size = 8;
    o.training.total_tokens = j.training.total_tokens;
    const auto base = hf_import_script(script, o);
    CHECK(base.job.training.micro_batch == 8);
    CHECK(base.job.training.global_batch == 64);
    CHECK(base.unknown.empty());
    // a number equal to the block's value reads the same; another is refused naming both
    const auto same = hf_import_script(edit(script, "per_device_train_batch_size=MICRO_BATCH,", "per_device_train_batch_size=8,"), o);
    CHECK(same.job.training.micro_batch == 8);
    CHECK_THROWS_WITH(hf_import_script(edit(script, "per_device_train_batch_size=MICRO_BATCH,", "per_device_train_batch_size=64,"), o),
                      Contains("TrainingArguments(per_device_train_batch_size=64) disagrees with the settings block's MICRO_BATCH = 8"));
    CHECK_THROWS_WITH(hf_import_script(edit(script, "gradient_accumulation_steps=GRAD_ACCUM,", "gradient_accumulation_steps=8,"), o),
                      Contains("gradient_accumulation_steps=8) disagrees with the settings block's GRAD_ACCUM = 1"));
    CHECK_THROWS_WITH(hf_import_script(edit(script, "    gradient_accumulation_steps=GRAD_ACCUM,\n", ""), o),
                      Contains("TrainingArguments has no gradient_accumulation_steps=GRAD_ACCUM"));
    // a literal max_steps is the run's budget: 100 steps of 64 x 2048 tokens
    const auto steps = hf_import_script(edit(script, "max_steps=TRAIN_STEPS,", "max_steps=100,"), o);
    CHECK(steps.job.training.total_tokens == 64.0 * 2048 * 100);
    const auto epochs = hf_import_script(edit(script, "    max_steps=TRAIN_STEPS,\n", ""), o);
    CHECK(epochs.job.training.total_tokens == 0);
    REQUIRE(epochs.notes.size() == 1);
    CHECK_THAT(epochs.notes[0], Contains("no max_steps"));
}

TEST_CASE("hf import refuses later assignments of settings-block names, repeated keywords and calls, bf16 with fp16 (issue 57)") {
    using Catch::Matchers::Contains;
    const auto j = import57::hf_lora_job();
    const auto script = import57::written(j, frameworks::hf::launcher_handle, "frenzy_hf_train.py");
    import_options o;
    o.model = j.model;
    o.world_size = 8;
    CHECK_THROWS_WITH(hf_import_script(edit(script, "QLORA = False\n", "QLORA = False\nMICRO_BATCH = 99\n"), o),
                      Contains("MICRO_BATCH is given twice (MICRO_BATCH = 99 after line"));
    CHECK_THROWS_WITH(hf_import_script(edit(script, "QLORA = False\n", "QLORA = False\nMICRO_BATCH += 97\n"), o),
                      Contains("MICRO_BATCH is given twice (MICRO_BATCH += 97"));
    CHECK_THROWS_WITH(hf_import_script(edit(script, "QLORA = False\n", "QLORA = False\nif DATA:\n    GRAD_ACCUM = 4\n"), o),
                      Contains("GRAD_ACCUM is given twice (GRAD_ACCUM = 4"));
    CHECK_THROWS_WITH(hf_import_script(edit(script, "QLORA = False\n", "QLORA = False\nSEQ_LEN, X = 4096, 1\n"), o),
                      Contains("SEQ_LEN is given twice"));
    CHECK_THROWS_WITH(hf_import_script(edit(script, "    seed=17,\n", "    seed=17,\n    per_device_train_batch_size=4,\n"), o),
                      Contains("TrainingArguments(...) is given per_device_train_batch_size twice") && Contains("SyntaxError"));
    CHECK_THROWS_WITH(hf_import_script(edit(script, "    seed=17,\n", "    seed=17,\n    seed=18,\n"), o),
                      Contains("is given seed twice"));
    CHECK_THROWS_WITH(hf_import_script(edit(script, "trainer = Trainer(", "args.per_device_train_batch_size = 2\ntrainer = Trainer("), o),
                      Contains("args.per_device_train_batch_size = 2 changes TrainingArguments"));
    CHECK_THROWS_WITH(hf_import_script(edit(script, "trainer = Trainer(", "args = TrainingArguments(\n    bf16=True,\n)\ntrainer = Trainer("), o),
                      Contains("TrainingArguments is called again"));
    CHECK_THROWS_WITH(hf_import_script(edit(script, "    bf16=True,\n", "    bf16=True,\n    fp16=True,\n"), o),
                      Contains("TrainingArguments(bf16=True, fp16=True): Trainer refuses both"));
    // a keyword the reader does not read is listed, not dropped
    const auto r = hf_import_script(edit(script, "    seed=17,\n", "    seed=17,\n    torch_compile=True,\n"), o);
    REQUIRE(r.unknown.size() == 1);
    CHECK(r.unknown[0] == "TrainingArguments(torch_compile=True) (not read)");
}

TEST_CASE("hf import: QLoRA reads BitsAndBytesConfig's 4-bit load (issue 57)") {
    using Catch::Matchers::Contains;
    auto j = import57::hf_lora_job();
    j.training.finetune.method = finetune_method::qlora;
    j.parallel = {.dp = 1};
    j.training.global_batch = 8;
    const auto script = import57::written(j, frameworks::hf::launcher_handle, "frenzy_hf_train.py");
    import_options o;
    o.model = j.model;
    o.world_size = 1;
    CHECK(hf_import_script(script, o).job.training.finetune.method == finetune_method::qlora);
    CHECK_THROWS_WITH(hf_import_script(edit(script, "load_in_4bit=True,", "load_in_4bit=False,"), o),
                      Contains("QLORA = True needs BitsAndBytesConfig(load_in_4bit=True)"));
    CHECK_THROWS_WITH(hf_import_script(edit(script, "bnb_4bit_quant_type=\"nf4\",", "bnb_4bit_quant_type=\"int8\","), o),
                      Contains("bnb_4bit_quant_type=\"int8\") must be \"nf4\" or \"fp4\""));
}
