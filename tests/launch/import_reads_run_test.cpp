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

/// A small job of preset `model` on framework `fw` and layout `p`: sequence 2048, micro-batch 8, global batch 64.
inline job_spec small_job(const char* model, framework fw, const parallel_config& p) {
    job_spec j;
    j.name = "h57";
    j.model = preset(model);
    j.model.name = model;
    j.training.seq_len = 2048;
    j.training.micro_batch = 8;
    j.training.global_batch = 64;
    j.runtime.framework = fw;
    j.parallel = p;
    return j;
}

inline job_spec hf_lora_job() {
    auto j = small_job("llama-3.2-1b", frameworks::hf::handle, {.dp = 8});
    j.training.total_tokens = 64.0 * 2048 * 100;
    j.training.finetune = {.method = finetune_method::lora, .rank = 16};
    return j;
}

/// The import options of a file run by `world` ranks for job `j`'s model.
inline import_options options_for(const job_spec& j, std::int64_t world) {
    import_options o;
    o.model = j.model;
    o.world_size = world;
    return o;
}

}  // namespace import57

using import57::edit;

TEST_CASE("hf import reads TrainingArguments' batch keywords and refuses what disagrees with the settings block (issue 57)") {
    using Catch::Matchers::Contains;
    const auto j = import57::hf_lora_job();
    const auto script = import57::written(j, frameworks::hf::launcher_handle, "frenzy_hf_train.py");
    auto o = import57::options_for(j, 8);
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
    auto o = import57::options_for(j, 8);
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
    auto o = import57::options_for(j, 1);
    CHECK(hf_import_script(script, o).job.training.finetune.method == finetune_method::qlora);
    CHECK_THROWS_WITH(hf_import_script(edit(script, "load_in_4bit=True,", "load_in_4bit=False,"), o),
                      Contains("QLORA = True needs BitsAndBytesConfig(load_in_4bit=True)"));
    CHECK_THROWS_WITH(hf_import_script(edit(script, "bnb_4bit_quant_type=\"nf4\",", "bnb_4bit_quant_type=\"int8\","), o),
                      Contains("bnb_4bit_quant_type=\"int8\") must be \"nf4\" or \"fp4\""));
}

TEST_CASE("The GPU count given is the world size of torchtune.yaml and frenzy_hf_train.py: per-device batches (issue 57)") {
    // the CLI sets import_options::world_size from --gpus for these launchers (examples/frenzy/cli.hpp import_from)
    CHECK(frameworks::hf::launch_traits.per_device_batches);
#ifdef FRENZY_HAS_YAML
    CHECK(frameworks::torchtune::launch_traits.per_device_batches);
    CHECK_FALSE(frameworks::llm_foundry::launch_traits.per_device_batches);  // global_train_batch_size is global
#endif
    // the accelerate back end states its own world size: the GPU count given is noted, not an error
    auto j = import57::hf_lora_job();
    j.parallel.sharding = sharding::full;
    const auto script = import57::written(j, frameworks::hf::launcher_handle, "frenzy_hf_train.py");
    const auto yaml = import57::written(j, frameworks::hf::launcher_handle, "accelerate_config.yaml");
    auto o = import57::options_for(j, 16);
    CHECK_THROWS_WITH(frameworks::hf::hf_import_accelerate(script, frameworks::hf::read_accelerate_config(yaml), o),
                      Catch::Matchers::Contains("num_processes=8 contradicts the world size given beside it (16)"));
    o.world_size_from_gpus = true;
    const auto r = frameworks::hf::hf_import_accelerate(script, frameworks::hf::read_accelerate_config(yaml), o);
    CHECK(r.job.parallel.dp == 8);
    CHECK(r.job.training.global_batch == 64);
    REQUIRE(r.notes.size() == 1);
    CHECK_THAT(r.notes[0], Catch::Matchers::Contains("num_processes=8"));
}

#ifdef FRENZY_HAS_YAML
TEST_CASE("torchtune import refuses what the recipes refuse: empty lora_attn_modules, LoRA keys on a full builder, an unknown loss, offload without checkpointing (issue 57)") {
    using Catch::Matchers::Contains;
    job_spec j = import57::hf_lora_job();
    j.runtime.framework = frameworks::torchtune::handle;
    j.training.precision = precision::bf16;
    j.parallel = {.dp = 8, .sharding = sharding::full};
    const auto yaml = import57::written(j, frameworks::torchtune::launcher_handle, "torchtune.yaml");
    import_options o;
    o.world_size = 16;
    const auto base = torchtune_import_yaml(yaml, o);
    CHECK(base.job.training.global_batch == 16 * 8);  // batch_size 8 per rank x 16 ranks
    CHECK(base.job.training.finetune.targets == (lora_q | lora_k | lora_v | lora_o));
    CHECK_THROWS_WITH(torchtune_import_yaml(edit(yaml, "lora_attn_modules: ['q_proj', 'k_proj', 'v_proj', 'output_proj']",
                                                 "lora_attn_modules: []"), o),
                      Contains("model.lora_attn_modules=[]") && Contains("as lora_modules"));
    CHECK_THROWS_WITH(torchtune_import_yaml(edit(yaml, "lora_llama3_2_1b", "llama3_2_1b"), o),
                      Contains("model.lora_attn_modules beside model._component_=torchtune.models.llama3_2.llama3_2_1b, a full-model builder"));
    CHECK_THROWS_WITH(torchtune_import_yaml(edit(yaml, "torchtune.modules.loss.LinearCrossEntropyLoss", "bogus.Loss"), o),
                      Contains("loss._component_=bogus.Loss is not a loss Frenzy reads"));
    CHECK_THROWS_WITH(torchtune_import_yaml(edit(yaml, "enable_activation_offloading: False", "enable_activation_offloading: True"), o),
                      Contains("enable_activation_offloading=True without enable_activation_checkpointing"));
    const auto both = torchtune_import_yaml(edit(edit(yaml, "enable_activation_offloading: False", "enable_activation_offloading: True"),
                                                 "enable_activation_checkpointing: False", "enable_activation_checkpointing: True"), o);
    CHECK(both.job.runtime.offload.activations);
    CHECK(both.job.parallel.recompute == recompute::full);
}

TEST_CASE("llm-foundry import reads loss_fn back and refuses unknown mixed_precision, attn_impl, model.name, max_seq_len (issue 57)") {
    using Catch::Matchers::Contains;
    const auto j = import57::small_job("gpt3-125m", frameworks::llm_foundry::handle, {.dp = 8, .sharding = sharding::full});
    const auto yaml = import57::written(j, frameworks::llm_foundry::launcher_handle, "train.yaml");
    import_options o;
    o.world_size = 8;
    const auto base = llm_foundry_import_yaml(yaml, o);
    CHECK_FALSE(base.job.runtime.loss.has_value());  // fused_crossentropy: the framework's own loss
    CHECK(base.job.training.precision == precision::bf16_mixed);
    const auto torch_loss = llm_foundry_import_yaml(edit(yaml, "loss_fn: fused_crossentropy", "loss_fn: torch_crossentropy"), o);
    REQUIRE(torch_loss.job.runtime.loss.has_value());
    CHECK(*torch_loss.job.runtime.loss == loss_style::upcast_log_softmax);
    CHECK(llm_foundry_import_yaml(edit(yaml, "mixed_precision: DEFAULT", "mixed_precision: pure"), o).job.training.precision == precision::bf16);
    CHECK_THROWS_WITH(llm_foundry_import_yaml(edit(yaml, "mixed_precision: DEFAULT", "mixed_precision: BOGUS"), o),
                      Contains("fsdp_config.mixed_precision=BOGUS must be FULL, DEFAULT or PURE"));
    CHECK_THROWS_WITH(llm_foundry_import_yaml(edit(yaml, "loss_fn: fused_crossentropy", "loss_fn: bogus"), o),
                      Contains("model.loss_fn=bogus must be fused_crossentropy or torch_crossentropy"));
    CHECK_THROWS_WITH(llm_foundry_import_yaml(edit(yaml, "attn_impl: flash", "attn_impl: triton"), o),
                      Contains("attn_impl=triton must be torch or flash"));
    CHECK_THROWS_WITH(llm_foundry_import_yaml(edit(yaml, "name: mpt_causal_lm", "name: bogus_lm"), o),
                      Contains("model.name=bogus_lm must be mpt_causal_lm"));
    CHECK_THROWS_WITH(llm_foundry_import_yaml(edit(yaml, "  max_seq_len: 2048\n  vocab_size", "  max_seq_len: -1\n  vocab_size"), o),
                      Contains("model.max_seq_len=-1 must be in 1.."));
    CHECK_THROWS_WITH(llm_foundry_import_yaml(edit(yaml, "  max_seq_len: 2048\n  vocab_size", "  max_seq_len: 1024\n  vocab_size"), o),
                      Contains("model.max_seq_len=1024 is shorter than max_seq_len=2048"));
}
#endif

#ifdef FRENZY_HAS_YAML
TEST_CASE("LitGPT import: the optimizer's class_path form, train.max_seq_length null, and the model and world size beside the file (issue 57)") {
    using Catch::Matchers::Contains;
    const std::string base = "checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nlora_r: 16\nprecision: bf16-true\ndevices: 8\n"
                             "num_nodes: 1\noptimizer: AdamW\ntrain:\n  global_batch_size: 64\n  micro_batch_size: 8\n  max_seq_length: 2048\n";
    const auto plain = litgpt_import_yaml(base);
    CHECK(plain.job.training.optimizer == optimizer_kind::adamw);
    CHECK(plain.job.parallel.dp == 8);
    const auto path = litgpt_import_yaml(edit(base, "optimizer: AdamW", "optimizer:\n  class_path: torch.optim.SGD\n  init_args:\n    lr: 0.01"));
    CHECK(path.job.training.optimizer == optimizer_kind::sgd);
    CHECK(path.unknown.empty());
    CHECK(litgpt_import_yaml(edit(base, "optimizer: AdamW", "optimizer: torch.optim.Adam")).job.training.optimizer == optimizer_kind::adam);
    CHECK_THROWS_WITH(litgpt_import_yaml(edit(base, "optimizer: AdamW", "optimizer:\n  init_args:\n    lr: 0.01")), Contains("optimizer has no class_path"));
    import_options o;
    o.training.seq_len = 4096;
    const auto null_len = litgpt_import_yaml(edit(base, "max_seq_length: 2048", "max_seq_length: null"), o);
    CHECK(null_len.job.training.seq_len == 4096);
    REQUIRE(null_len.notes.size() == 1);
    CHECK_THAT(null_len.notes[0], Contains("train.max_seq_length=null"));
    o = {};
    o.world_size = 16;
    CHECK_THROWS_WITH(litgpt_import_yaml(base, o), Contains("devices x num_nodes = 8 contradicts the world size given beside it (16)"));
    o.world_size = 8;
    CHECK(litgpt_import_yaml(base, o).job.parallel.dp == 8);
    o.model = preset("llama-3.1-8b");
    o.model.name = "llama-3.1-8b";
    CHECK_THROWS_WITH(litgpt_import_yaml(base, o), Contains("the model given beside the file (llama-3.1-8b) is not the file's"));
}
#endif

#ifdef FRENZY_HAS_YAML
TEST_CASE("torchtune import: no tokenizer.max_seq_len takes the length given beside the file, with a note (issue 57)") {
    job_spec j = import57::hf_lora_job();
    j.runtime.framework = frameworks::torchtune::handle;
    j.training.precision = precision::bf16;
    j.parallel = {.dp = 8, .sharding = sharding::full};
    const auto yaml = import57::written(j, frameworks::torchtune::launcher_handle, "torchtune.yaml");
    import_options o;
    o.world_size = 8;
    o.training.seq_len = 4096;
    const auto written_len = torchtune_import_yaml(yaml, o);
    CHECK(written_len.job.training.seq_len == 2048);  // the file's max_seq_len wins
    const auto r = torchtune_import_yaml(edit(yaml, "  max_seq_len: 2048\n", "  max_seq_len: null\n"), o);
    CHECK(r.job.training.seq_len == 4096);
    bool noted = false;
    for (const auto& n : r.notes) noted = noted || n.find("tokenizer.max_seq_len not set") != std::string::npos;
    CHECK(noted);
}
#endif
