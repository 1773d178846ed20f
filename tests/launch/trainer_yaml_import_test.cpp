// axolotl's config.yml and LLaMA-Factory's train.yaml (frameworks/axolotl/import.hpp, frameworks/llamafactory/import.hpp
// over frameworks/hf/trainer_yaml.hpp): the fixtures of tests/data/trainer_yaml/ (modelled on the projects' own
// examples, each names the file and commit) import to the jobs their keys state, checked field by field by hand;
// the job equals the one written field by field as the equivalent flags would give it, with the same peak; the two
// frameworks keep hf's profile (same peak as the job under hf); bad values and malformed YAML end in errors that
// name the key.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;
using Catch::Matchers::Contains;

namespace trainer_yaml_test {  // named: the launch tests build as one unity file

const std::string dir = std::string(FRENZY_SOURCE_DIR) + "/tests/data/trainer_yaml/";

bool listed(const std::vector<std::string>& v, const std::string& s) {
    return std::any_of(v.begin(), v.end(), [&](const std::string& x) { return x.find(s) != std::string::npos; });
}

/// The lines of a key list of tests/data/launch/ (extract_framework_keys.py), its first line checked to be the commit.
std::set<std::string> key_list(const std::string& name, const std::string& commit) {
    std::ifstream f(std::string(FRENZY_SOURCE_DIR) + "/tests/data/launch/" + name);
    std::set<std::string> s;
    std::string line;
    std::getline(f, line);
    CHECK(line.find(commit) != std::string::npos);
    while (std::getline(f, line))
        if (!line.empty() && line[0] != '#') s.insert(line);
    REQUIRE(s.size() > 100);  // a truncated file would pass anything
    return s;
}

/// The keys an importer compares by name (`k == "NAME"`, `k2 == "NAME"`), read from its header.
std::set<std::string> keys_read(const std::string& header) {
    std::ifstream f(std::string(FRENZY_SOURCE_DIR) + "/include/frenzy/frameworks/" + header);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::set<std::string> out;
    for (const std::string lead : {"k == \"", "k2 == \""})
        for (auto at = text.find(lead); at != std::string::npos; at = text.find(lead, at + 1)) {
            const auto from = at + lead.size();
            out.insert(text.substr(from, text.find('"', from) - from));
        }
    REQUIRE(out.size() > 20);
    return out;
}

}  // namespace trainer_yaml_test

#ifdef FRENZY_HAS_YAML
using namespace trainer_yaml_test;

TEST_CASE("axolotl lora-1b.yml imports to the job its keys state, and that job is what the flags give") {
    import_options o;
    o.world_size = 4;
    const auto r = import_launcher_file("axolotl", dir + "axolotl_lora_1b.yml", o);
    const auto& j = r.job;
    CHECK(j.runtime.framework.name() == "axolotl");
    CHECK(j.model == preset("llama-3.2-1b"));  // base_model NousResearch/Llama-3.2-1B
    CHECK(j.training.seq_len == 2048);         // sequence_len
    CHECK(j.training.micro_batch == 2);        // micro_batch_size
    CHECK(j.training.global_batch == 16);      // 2 x gradient_accumulation_steps 2 x world 4
    CHECK(j.parallel.dp == 4);
    CHECK(j.training.precision == precision::bf16_mixed);  // bf16 auto; PEFT's fp32 adapters over a bf16 base
    CHECK(j.training.optimizer == optimizer_kind::adamw_8bit);  // adamw_8bit (transformers: bitsandbytes AdamW8bit)
    CHECK_FALSE(j.runtime.paged_optimizer);
    CHECK(j.training.finetune.method == finetune_method::lora);
    CHECK(j.training.finetune.rank == 16);
    CHECK(j.training.finetune.alpha == 32);
    CHECK(j.training.finetune.dropout == Approx(0.05));
    CHECK(j.training.finetune.targets == 127u);  // the seven projections listed
    CHECK(j.parallel.recompute == recompute::full);
    CHECK(j.runtime.attention == attention_impl::flash);  // attn_implementation flash_attention_2
    CHECK(listed(r.ignored, "learning_rate"));
    CHECK(listed(r.ignored, "datasets"));
    CHECK(listed(r.notes, "sample_packing"));
    CHECK(r.unknown.empty());

    // the same job written as `--model llama-3.2-1b --framework axolotl --seq-len 2048 --micro-batch 2
    // --global-batch 16 --dp 4 --precision bf16-mixed --optimizer adamw-8bit --finetune lora --lora-rank 16
    // --lora-targets q,k,v,o,gate,up,down --recompute full --attention flash` gives, with the alpha and dropout
    job_spec f;
    f.name = "llama-3.2-1b";
    f.model = preset("llama-3.2-1b");
    f.training = {.seq_len = 2048, .micro_batch = 2, .global_batch = 16, .precision = precision::bf16_mixed,
                  .optimizer = optimizer_kind::adamw_8bit};
    f.training.finetune = {.method = finetune_method::lora, .rank = 16, .alpha = 32, .targets = 127, .dropout = 0.05};
    f.parallel.dp = 4;
    f.parallel.recompute = recompute::full;
    f.runtime.framework = find_framework("--framework", "axolotl");
    f.runtime.attention = attention_impl::flash;
    CHECK(j == f);
    const memory_estimator est;
    CHECK(est.estimate(j).peak_allocated.value == est.estimate(f).peak_allocated.value);
    // axolotl runs Trainer's code: its profile is hf's, the peak the same under either name
    f.runtime.framework = find_framework("--framework", "hf");
    CHECK(est.estimate(j).peak_allocated.value == est.estimate(f).peak_allocated.value);
}

TEST_CASE("axolotl qlora and full fine-tune configs: 4-bit adapters, paged 8-bit AdamW, a ZeRO-2 json beside the file") {
    const auto q = import_launcher_file("axolotl", dir + "axolotl_qlora_1b.yml").job;
    CHECK(q.training.finetune.method == finetune_method::qlora);  // adapter qlora + load_in_4bit
    CHECK(q.training.finetune.double_quant);                      // axolotl's BitsAndBytesConfig
    CHECK(q.training.finetune.rank == 32);
    CHECK(q.training.finetune.alpha == 16);
    CHECK(q.training.finetune.targets == 127u);  // lora_target_linear
    CHECK(q.training.global_batch == 8);         // 2 x 4, world size 1 when not given
    CHECK(q.parallel.dp == 1);

    const auto r = import_launcher_file("axolotl", dir + "axolotl_fft_8b.yaml");
    const auto& f = r.job;
    CHECK(f.model == preset("llama-3.1-8b"));  // NousResearch/Meta-Llama-3.1-8B
    CHECK(f.training.finetune.method == finetune_method::full);
    CHECK(f.training.optimizer == optimizer_kind::adamw_8bit);
    CHECK(f.runtime.paged_optimizer);  // paged_adamw_8bit
    CHECK(f.parallel.sharding == sharding::gradients);  // zero2_no_offload.json: stage 2
    CHECK_FALSE(f.runtime.offload.any());
    CHECK(f.training.precision == precision::bf16_mixed);  // DeepSpeed keeps fp32 master weights
    CHECK(f.training.seq_len == 8192);
    CHECK(listed(r.notes, "use_reentrant=false"));
    CHECK(listed(r.ignored, "deepspeed:train_micro_batch_size_per_gpu"));
}

TEST_CASE("LLaMA-Factory's lora, qlora and full train.yaml import to the jobs their keys state") {
    const auto r = import_launcher_file("llamafactory", dir + "llamafactory_lora_sft.yaml");
    const auto& j = r.job;
    CHECK(j.runtime.framework.name() == "llamafactory");
    CHECK(j.model == preset("qwen3-4b"));  // Qwen/Qwen3-4B-Instruct-2507
    CHECK(j.training.finetune.method == finetune_method::lora);
    CHECK(j.training.finetune.rank == 8);
    CHECK(j.training.finetune.alpha == 16);      // lora_alpha unset: 2 x lora_rank
    CHECK(j.training.finetune.targets == 127u);  // lora_target all
    CHECK(j.training.seq_len == 2048);
    CHECK(j.training.micro_batch == 1);
    CHECK(j.training.global_batch == 8);
    CHECK(j.parallel.recompute == recompute::full);  // disable_gradient_checkpointing false by default
    CHECK(j.training.precision == precision::bf16_mixed);
    CHECK(j.training.optimizer == optimizer_kind::adamw);
    CHECK(listed(r.ignored, "template"));

    const auto q = import_launcher_file("llamafactory", dir + "llamafactory_qlora_sft.yaml").job;
    CHECK(q.training.finetune.method == finetune_method::qlora);  // quantization_bit 4
    CHECK(q.training.finetune.double_quant);                      // double_quantization defaults true
    CHECK(q.training.finetune.targets == (lora_q | lora_v));      // lora_target q_proj,v_proj
    CHECK(q.runtime.liger);                                       // enable_liger_kernel
    CHECK(q.runtime.paged_optimizer);                             // paged_adamw_32bit
    CHECK(q.training.optimizer == optimizer_kind::adamw);
    CHECK(q.training.seq_len == 4096);

    const auto f = import_launcher_file("llamafactory", dir + "llamafactory_full_sft.yaml").job;
    CHECK(f.training.finetune.method == finetune_method::full);
    CHECK(f.parallel.sharding == sharding::full);  // ds_z3_config.json: stage 3
    CHECK(f.training.precision == precision::bf16_mixed);
}

TEST_CASE("Trainer YAML importers refuse what they cannot model, naming the key, and never crash on malformed YAML") {
    auto ax = [](const std::string& text) { return axolotl_import_yaml(text, {}, dir); };
    auto lf = [](const std::string& text) { return llamafactory_import_yaml(text, {}, dir); };
    const std::string base = "base_model: NousResearch/Llama-3.2-1B\n";
    // int8 bases are read now (issue 51); a full fine-tune of int8 weights is still refused, naming the key
    CHECK(ax(base + "load_in_8bit: true\nadapter: lora\n").job.training.finetune.load_in_8bit);
    CHECK_THROWS_WITH(ax(base + "load_in_8bit: true\n"), Contains("load_in_8bit") && Contains("8-bit"));
    CHECK_THROWS_WITH(ax(base + "optimizer: lion_8bit\n"), Contains("optimizer=lion_8bit is not an optimizer Frenzy models"));
    // torchao's 8-bit AdamW keeps its moments as bitsandbytes' does
    CHECK(ax(base + "optimizer: adamw_torch_8bit\n").job.training.optimizer == optimizer_kind::adamw_8bit);
    CHECK_THROWS_WITH(ax(base + "adapter: lora\nlora_target_modules: [q_proj, lm_head]\n"), Contains("lm_head"));
    CHECK_THROWS_WITH(ax(base + "deepspeed: missing_zero3.json\n"), Contains("deepspeed") && Contains("not found"));
    CHECK_THROWS_WITH(ax(base + "micro_batch_size: many\n"), Contains("micro_batch_size"));
    CHECK_THROWS_WITH(ax(base + "unsloth_lora_mlp: true\n"), Contains("unsloth_lora_mlp"));
    CHECK_THROWS_WITH(ax("base_model: someone/unknown-model-7b\n"), Contains("base_model") && Contains("--model"));
    CHECK_THROWS_WITH(ax("base_model: [a\n"), Contains("not YAML"));
    CHECK_THROWS_WITH(ax("- a\n- b\n"), Contains("mapping"));
    CHECK_THROWS_WITH(ax(base + "sequence_len: 1\nsequence_len: 2\n"), Contains("sequence_len"));
    const std::string model = "model_name_or_path: Qwen/Qwen3-4B\n";
    CHECK(lf(model + "quantization_bit: 8\n").job.training.finetune.load_in_8bit);
    CHECK_THROWS_WITH(lf(model + "quantization_bit: 8\nfinetuning_type: full\n"), Contains("quantization_bit") && Contains("lora"));
    CHECK_THROWS_WITH(lf(model + "optim: adamw_torch_4bit\n"), Contains("optim") && Contains("adamw_torch_4bit"));
    CHECK_THROWS_WITH(lf(model + "use_galore: true\n"), Contains("use_galore"));
    CHECK_THROWS_WITH(lf(model + "flash_attn: fa9\n"), Contains("flash_attn"));
    CHECK_THROWS_WITH(lf(model + "finetuning_type: oft\n"), Contains("finetuning_type"));
    // Unsloth's flags move memory and have no mechanism here: listed as not modelled, never dropped
    const auto u = lf(model + "use_unsloth: true\nuse_unsloth_gc: true\n");
    CHECK(listed(u.unknown, "use_unsloth (not modelled"));
    CHECK(listed(u.unknown, "use_unsloth_gc (not modelled"));
    // freeze: the last freeze_trainable_layers (default 2) layers train
    const auto fr = lf(model + "finetuning_type: freeze\n").job;
    CHECK(fr.training.finetune.method == finetune_method::freeze);
    CHECK(fr.training.finetune.frozen_layers == preset("qwen3-4b").layers - 2);
    // the model given beside the file wins over the name in it
    import_options o;
    o.model = preset("llama-3.2-3b");
    CHECK(axolotl_import_yaml("base_model: someone/private-model\n", o, dir).job.model == preset("llama-3.2-3b"));
}

TEST_CASE("every key the Trainer YAML importers read is one the projects define (key lists extracted from their code)") {
    const auto ax = key_list("axolotl_keys.txt", "axolotl-ai-cloud/axolotl@067b021c");
    for (const auto& k : keys_read("axolotl/import.hpp")) {
        // fsdp_config.sharding_strategy passes through to accelerate's FSDP plugin (fsdp_sharding_strategy)
        if (k == "sharding_strategy") continue;
        INFO(k);
        CHECK(ax.count(k) == 1);
    }
    const auto lf = key_list("llamafactory_keys.txt", "hiyouga/LLaMA-Factory@ff6d4d12");
    const auto hf = key_list("hf_keys.txt", "huggingface/transformers");  // Trainer's TrainingArguments fields
    for (const auto& k : keys_read("llamafactory/import.hpp")) {
        INFO(k);
        CHECK(lf.count(k) + hf.count("TrainingArguments." + k) >= 1);
    }
}

TEST_CASE("Trainer YAML importers read int8 bases and modules trained beside the adapters (issue 51)") {
    auto ax = [](const std::string& text) { return axolotl_import_yaml(text, {}, dir); };
    auto lf = [](const std::string& text) { return llamafactory_import_yaml(text, {}, dir); };
    const std::string base = "base_model: NousResearch/Llama-3.2-1B\nadapter: lora\n";
    // axolotl: load_in_8bit with adapter lora -> LoRA over LLM.int8 linears; lora_modules_to_save as a list
    const auto a = ax(base + "load_in_8bit: true\nlora_modules_to_save: [embed_tokens, lm_head]\n").job;
    CHECK(a.training.finetune.method == finetune_method::lora);
    CHECK(a.training.finetune.load_in_8bit);
    CHECK(a.training.finetune.modules_to_save == (save_embed_tokens | save_lm_head));
    CHECK_THROWS_WITH(ax(base + "load_in_8bit: true\nload_in_4bit: true\n"), Contains("load_in_8bit") && Contains("4-bit"));
    CHECK_THROWS_WITH(ax(base + "lora_modules_to_save: [wte]\n"), Contains("lora_modules_to_save") && Contains("wte"));
    // LLaMA-Factory: quantization_bit 8 and additional_target as a comma-separated string
    const auto l = lf("model_name_or_path: Qwen/Qwen3-4B\nquantization_bit: 8\nadditional_target: lm_head\n").job;
    CHECK(l.training.finetune.load_in_8bit);
    CHECK(l.training.finetune.modules_to_save == save_lm_head);
    CHECK_THROWS_WITH(lf("model_name_or_path: Qwen/Qwen3-4B\nfinetuning_type: full\nadditional_target: lm_head\n"),
                      Contains("additional_target"));
}

TEST_CASE("Trainer YAML importers read DPO: axolotl rl and LLaMA-Factory stage, their examples and refusals by name (issue 51)") {
    auto ax = [](const std::string& text) { return axolotl_import_yaml(text, {}, dir); };
    auto lf = [](const std::string& text) { return llamafactory_import_yaml(text, {}, dir); };
    import_options o;
    o.world_size = 1;
    // axolotl examples/qwen2/dpo.yaml: a full-weight DPO (no adapter): the reference is a second copy of the weights
    const auto full = import_launcher_file("axolotl", dir + "axolotl_dpo_full.yaml", o).job;
    CHECK(full.model == preset("qwen2.5-0.5b"));
    CHECK(full.training.finetune.method == finetune_method::full);
    CHECK(full.training.finetune.dpo());
    CHECK(full.training.finetune.reference_copy());
    CHECK(full.training.micro_batch == 2);  // pairs; the estimator doubles them (dpo_pair_job)
    // axolotl examples/llama-3/instruct-dpo-lora-8b.yml: LoRA over an int8 base, the reference is the base
    import_options o8 = o;
    o8.model = preset("llama-3.1-8b");  // Meta-Llama-3-8B-Instruct has Llama 3.1 8B's shape; no preset of its own
    const auto lora = import_launcher_file("axolotl", dir + "axolotl_dpo_lora_8b.yml", o8).job;
    CHECK(lora.training.finetune.dpo());
    CHECK(lora.training.finetune.load_in_8bit);
    CHECK_FALSE(lora.training.finetune.reference_copy());
    // ipo is DPOTrainer with another loss: the same job; precompute and the Liger loss read
    const std::string base = "base_model: NousResearch/Llama-3.2-1B\nadapter: lora\n";
    CHECK(ax(base + "rl: ipo\n").job == ax(base + "rl: dpo\nrl_beta: 0.5\ndpo_loss_type: [sigmoid]\n").job);
    CHECK(ax(base + "rl: dpo\nprecompute_ref_log_probs: true\n").job.training.finetune.precompute_ref_log_probs);
    CHECK(ax(base + "rl: dpo\ndpo_use_liger_kernel: true\n").job.runtime.liger);
    CHECK_THROWS_WITH(ax(base + "rl: dpo\ndpo_use_liger_kernel: true\nprecompute_ref_log_probs: true\n"), Contains("dpo_use_liger_kernel"));
    for (const std::string rl : {"orpo", "kto", "simpo", "grpo", "gdpo", "ebft"}) {
        INFO(rl);
        CHECK_THROWS_WITH(ax(base + "rl: " + rl + "\n"), Contains("rl=" + rl) && Contains("not modelled"));
    }
    CHECK_THROWS_WITH(ax(base + "precompute_ref_log_probs: true\n"), Contains("precompute_ref_log_probs") && Contains("rl"));
    CHECK_THROWS_WITH(ax(base + "rl: dpo\nrpo_alpha: 0.5\n"), Contains("rpo_alpha"));
    // LLaMA-Factory examples/train_lora/qwen3_lora_dpo.yaml: stage dpo, pref_loss sigmoid, LoRA on all linears
    const auto l = import_launcher_file("llamafactory", dir + "llamafactory_lora_dpo.yaml", o);
    CHECK(l.job.training.finetune.dpo());
    CHECK(l.job.training.finetune.method == finetune_method::lora);
    CHECK_FALSE(l.job.training.finetune.precompute_ref_log_probs);
    CHECK(listed(l.ignored, "pref_beta"));
    const std::string model = "model_name_or_path: Qwen/Qwen3-4B\nstage: dpo\n";
    // orpo and simpo hold no reference (finetuning_args.py use_ref_model): DPO without a reference forward
    CHECK(lf(model + "pref_loss: orpo\n").job.training.finetune.precompute_ref_log_probs);
    CHECK(lf(model + "pref_loss: simpo\n").job.training.finetune.precompute_ref_log_probs);
    CHECK(lf(model + "pref_loss: hinge\npref_ftx: 1.0\n").job == lf(model).job);
    CHECK(lf(model + "finetuning_type: full\n").job.training.finetune.reference_copy());
    CHECK(listed(lf(model + "ref_model: some/other\n").unknown, "ref_model (not modelled"));
    const auto lg = lf(model + "enable_liger_kernel: true\n");
    CHECK_FALSE(lg.job.runtime.liger);  // model/loader.py require_logits: no fused linear loss for stage dpo
    CHECK(listed(lg.unknown, "enable_liger_kernel"));
    for (const std::string st : {"rm", "ppo", "kto"}) {
        INFO(st);
        CHECK_THROWS_WITH(lf("model_name_or_path: Qwen/Qwen3-4B\nstage: " + st + "\n"), Contains("stage=" + st));
    }
    CHECK_THROWS_WITH(lf(model + "pref_loss: bco\n"), Contains("pref_loss"));
}

#endif
