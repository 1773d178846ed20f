// The launch files: every Megatron-LM flag, torchtitan field and DeepSpeed key written is one the framework
// defines (lists read from the frameworks' code, tests/data/launch/*.txt, commits in their first lines); golden
// files for several plans per launcher; the sbatch header; import of Megatron-LM's own Llama 3 8B example.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>
#include <typeinfo>

#include <sys/wait.h>
#include <unistd.h>

#include "frenzy/io/job_json.hpp"
#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/io/launcher_shell.hpp"
#include "frenzy/launch/launch.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"
#include "shell.hpp"

using namespace frenzy;

namespace {

const std::string data_dir = std::string(FRENZY_SOURCE_DIR) + "/tests/data/launch";

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::set<std::string> key_list(const std::string& name) {
    std::set<std::string> s;
    std::istringstream in(slurp(data_dir + "/" + name));
    std::string line;
    while (std::getline(in, line))
        if (!line.empty() && line[0] != '#') s.insert(line);
    REQUIRE(s.size() > 50);  // the lists hold hundreds of entries; a truncated file would pass anything
    return s;
}

const launch_file& file(const std::vector<launch_file>& fs, const std::string& name) {
    for (const auto& f : fs)
        if (f.name == name) return f;
    FAIL("no file " << name);
    return fs.front();
}

job_spec job(const std::string& preset_name, std::int64_t seq, std::int64_t gbs, framework fw, parallel_config p,
             std::int64_t mb = 1) {
    job_spec j;
    j.name = preset_name + "-job";
    j.model = preset(preset_name);
    j.training.seq_len = seq;
    j.training.global_batch = gbs;
    j.training.micro_batch = mb;
    j.training.total_tokens = static_cast<double>(gbs * seq) * 1000;
    j.runtime.framework = fw;
    j.parallel = p;
    return j;
}

/// A hand-made plan (fixed figures, so the golden files do not move with the planner's models).
plan fixed_plan(const job_spec& j, const std::string& gpu, int per_node) {
    plan p;
    p.gpu = gpu;
    p.gpus = static_cast<int>(j.parallel.gpus());
    p.nodes = (p.gpus + per_node - 1) / per_node;
    p.gpus_per_node = per_node;
    p.framework = j.runtime.framework;
    p.precision = j.training.precision;
    p.parallel = j.parallel;
    p.micro_batch = j.training.micro_batch;
    p.step_time = seconds{2.5};
    p.tokens_per_s = j.tokens_per_step() / 2.5;
    p.est_time = seconds{3600};
    p.has_budget = true;
    return p;
}

job_spec finetune(job_spec j, finetune_method m) {
    j.training.finetune.method = m;
    if (m == finetune_method::qlora) j.training.finetune.targets = 127;  // every linear, as QLoRA recipes do
    return j;
}

launch_options opts(launcher l) {
    launch_options o;
    o.launcher = l;
    o.gres_names["h100-80g"] = "h100";
    if (l->needs_run_command) o.run_command = "train.py";  // the user's script: ds_config.json and fsdp_settings.json configure it (needs_run_command)
    return o;
}

struct golden_case {
    std::string name;
    launcher l;
    job_spec j;
};

std::vector<golden_case> golden_cases() {
    using P = parallel_config;
    return {
        {"megatron_dense_tp_sp_pp_vpp", frameworks::megatron::launcher_handle,
         job("llama-3.1-8b", 4096, 256, frameworks::megatron::handle,
             P{.dp = 4, .tp = 2, .pp = 4, .vpp = 2, .sequence_parallel = true, .sharding = sharding::optimizer,
               .recompute = recompute::selective, .schedule = pipeline_schedule::interleaved})},
        {"megatron_moe_ep_cp_fullrecompute", frameworks::megatron::launcher_handle,
         job("mixtral-8x7b", 8192, 64, frameworks::megatron::handle,
             P{.dp = 8, .tp = 2, .cp = 2, .ep = 8, .sequence_parallel = true, .recompute = recompute::full})},
        {"megatron_dense_dp_only", frameworks::megatron::launcher_handle, job("gpt3-1.3b", 2048, 64, frameworks::megatron::handle, P{.dp = 8}, 2)},
        {"torchtitan_fsdp", frameworks::torchtitan::launcher_handle,
         job("llama-3.1-8b", 8192, 64, frameworks::fsdp::handle, P{.dp = 16, .sharding = sharding::full, .recompute = recompute::full}, 2)},
        {"torchtitan_tp_pp", frameworks::torchtitan::launcher_handle,
         job("llama-3.1-70b", 8192, 64, frameworks::fsdp::handle,
             P{.dp = 4, .tp = 4, .pp = 2, .sequence_parallel = true, .sharding = sharding::full})},
        {"deepspeed_zero3", frameworks::deepspeed::launcher_handle,
         job("llama-2-7b", 4096, 128, frameworks::deepspeed::handle, P{.dp = 16, .sharding = sharding::full, .recompute = recompute::full}, 2)},
        {"deepspeed_moe_zero1", frameworks::deepspeed::launcher_handle,
         job("mixtral-8x7b", 4096, 64, frameworks::deepspeed::handle, P{.dp = 8, .pp = 2, .ep = 8, .sharding = sharding::optimizer})},
        {"fsdp_shard_grad_op", frameworks::fsdp::launcher_handle,
         job("qwen2.5-7b", 4096, 64, frameworks::fsdp::handle, P{.dp = 16, .sharding = sharding::gradients, .recompute = recompute::selective})},
        {"ddp", frameworks::fsdp::launcher_handle, job("gpt2", 1024, 64, frameworks::ddp::handle, P{.dp = 8}, 8)},
        {"llm_foundry_mpt", frameworks::llm_foundry::launcher_handle,
         job("mpt-7b", 2048, 512, frameworks::llm_foundry::handle, P{.dp = 8, .sharding = sharding::full, .recompute = recompute::full}, 8)},
        {"llm_foundry_llama_gqa", frameworks::llm_foundry::launcher_handle,
         job("llama-3.1-8b", 8192, 64, frameworks::llm_foundry::handle, P{.dp = 16, .sharding = sharding::full})},
        {"hf_lora", frameworks::hf::launcher_handle, finetune(job("llama-3.1-8b", 4096, 64, frameworks::hf::handle, P{.dp = 8, .recompute = recompute::full}, 2),
                                           finetune_method::lora)},
        {"hf_qlora", frameworks::hf::launcher_handle, finetune(job("qwen2.5-7b", 2048, 32, frameworks::hf::handle, P{.dp = 8}, 4), finetune_method::qlora)},
        // sharded hf jobs: accelerate_config.yaml and `accelerate launch` on every node (FSDP2; DeepSpeed ZeRO-2)
        {"hf_fsdp_lora", frameworks::hf::launcher_handle, finetune(job("llama-3.1-70b", 4096, 64, frameworks::hf::handle,
                                                    P{.dp = 16, .sharding = sharding::full, .recompute = recompute::full}), finetune_method::lora)},
        {"hf_zero2_full", frameworks::hf::launcher_handle, finetune(job("llama-3.1-8b", 4096, 64, frameworks::hf::handle,
                                                     P{.dp = 16, .sharding = sharding::gradients, .recompute = recompute::full}, 2),
                                                 finetune_method::full)},
    };
}

/// The keyword arguments of the call `call(` in a written Python script, one `name=value,` per line up to its `)`.
std::vector<std::string> python_keywords(const std::string& text, const std::string& call) {
    std::vector<std::string> out;
    auto at = text.find(call + "(\n");
    REQUIRE(at != std::string::npos);
    std::istringstream in(text.substr(at + call.size() + 2));
    for (std::string line; std::getline(in, line);) {
        const auto first = line.find_first_not_of(' ');
        if (first == std::string::npos || line[first] == ')') break;  // the call's closing parenthesis
        const auto eq = line.find('=');
        REQUIRE(eq != std::string::npos);
        out.push_back(line.substr(first, eq - first));
    }
    return out;
}

}  // namespace

TEST_CASE("every Megatron-LM flag written is defined by Megatron-LM's arguments.py") {
    const auto flags = key_list("megatron_arguments.txt");
    using P = parallel_config;
    std::vector<job_spec> jobs;
    for (const auto& c : golden_cases())
        if (c.l == frameworks::megatron::launcher_handle) jobs.push_back(c.j);
    // the branches the golden cases leave out: fp8, pure bf16 (Megatron-FSDP), optimizer offload, MLA, fp16,
    // unfused attention, squared ReLU, QKV bias,
    // shared experts and dense leading layers, SGD
    auto a = job("deepseek-moe-16b", 2048, 32, frameworks::megatron::handle, P{.dp = 4, .pp = 2, .ep = 4, .recompute = recompute::full});
    a.training.precision = precision::fp8_mixed;
    a.runtime.attention = attention_impl::unfused;
    a.runtime.overlap_grad_reduce = true;
    a.runtime.tp_comm_overlap = true;
    jobs.push_back(a);
    auto b = job("qwen2.5-7b", 2048, 32, frameworks::megatron::handle, P{.dp = 8, .sharding = sharding::full});
    b.training.precision = precision::bf16;  // Megatron-FSDP's bf16 main parameters
    jobs.push_back(b);
    auto b2 = job("qwen2.5-7b", 2048, 32, frameworks::megatron::handle, P{.dp = 8, .sharding = sharding::optimizer});
    b2.runtime.offload.optimizer = true;
    jobs.push_back(b2);
    jobs.push_back(job("deepseek-v3", 4096, 64, frameworks::megatron::handle, P{.dp = 8, .ep = 8, .sharding = sharding::optimizer}));  // MLA
    auto f4 = job("llama-3.1-8b", 2048, 32, frameworks::megatron::handle, P{.dp = 8});
    f4.training.precision = precision::fp4_mixed;
    jobs.push_back(f4);
    auto c = job("gpt2", 1024, 32, frameworks::megatron::handle, P{.dp = 4});
    c.training.precision = precision::fp16_mixed;
    c.model.activation = activation::squared_relu;
    c.training.optimizer = optimizer_kind::sgd;
    jobs.push_back(c);
    for (const auto& j : jobs) {
        auto args = frameworks::megatron::arguments(j);
        for (auto& x : frameworks::megatron::run_arguments(j)) args.push_back(x);
        REQUIRE(args.size() > 10);
        for (const auto& a2 : args) {
            const auto flag = a2.substr(0, a2.find(' '));
            INFO("job " << j.name << ": " << a2);
            CHECK(flags.count(flag) == 1);
        }
    }
}

TEST_CASE("every DeepSpeed key written is defined by DeepSpeed's config code") {
    const auto keys = key_list("deepspeed_keys.txt");
    for (const auto& c : golden_cases()) {
        if (c.l != frameworks::deepspeed::launcher_handle) continue;
        auto j = c.j;
        for (auto pr : {precision::bf16_mixed, precision::fp16_mixed, precision::fp32}) {
            j.training.precision = pr;
            const auto cfg = frameworks::deepspeed::config(j);
            std::vector<std::pair<std::string, nlohmann::ordered_json>> todo{{"", cfg}};
            int checked = 0;
            while (!todo.empty()) {
                auto [path, v] = todo.back();
                todo.pop_back();
                for (auto it = v.begin(); it != v.end(); ++it) {
                    INFO(c.name << ": " << path << it.key());
                    CHECK(keys.count(it.key()) == 1);
                    ++checked;
                    if (it->is_object()) todo.push_back({path + it.key() + ".", *it});
                }
            }
            CHECK(checked >= 8);  // 4 top-level + zero_optimization.stage + bf16/fp16 enabled (+ checkpointing keys)
        }
    }
}

TEST_CASE("every torchtitan field written is a field of torchtitan's config dataclasses") {
    const auto fields = key_list("torchtitan_fields.txt");
    static const std::regex assign(R"(^\s*config\.([\w.]+)\s*=\s*(.+)$)");
    for (const auto& c : golden_cases()) {
        if (c.l != frameworks::torchtitan::launcher_handle) continue;
        for (auto [pr, rc, recipe] : {std::tuple{precision::bf16_mixed, recompute::none, std::optional<fp8_recipe>{}},
                                      {precision::fp8_mixed, recompute::selective, std::optional<fp8_recipe>{}},
                                      {precision::fp8_mixed, recompute::none, std::optional{fp8_recipe::rowwise}},
                                      {precision::fp8_mixed, recompute::full, std::optional{fp8_recipe::mxfp8}},
                                      {precision::bf16, recompute::full, std::optional<fp8_recipe>{}},
                                      {precision::fp32, recompute::none, std::optional<fp8_recipe>{}}}) {
            auto j = c.j;
            j.training.precision = pr;
            j.parallel.recompute = rc;
            j.runtime.fp8_recipe = recipe;
            const auto text = frameworks::torchtitan::recipe(j, launch_options{}.base_config);
            std::istringstream in(text);
            std::string line;
            int n = 0;
            while (std::getline(in, line)) {
                std::smatch m;
                if (!std::regex_match(line, m, assign)) continue;
                const std::string key = m[1], value = m[2];
                INFO(c.name << ": " << line);
                if (key == "activation_checkpoint") {
                    if (value != "None") CHECK(fields.count("activation_checkpoint=" + value.substr(0, value.find('('))) == 1);
                } else if (key == "model_spec") {  // converters=[<Converter>.Config(<field>=..., ...)]
                    static const std::regex converter(R"(converters=\[(\w+)\.Config\((.*)\)\]\))");
                    std::smatch cm;
                    REQUIRE(std::regex_search(value, cm, converter));
                    CHECK(fields.count("converter=" + cm[1].str() + ".Config") == 1);
                    static const std::regex arg(R"((\w+)=)");
                    const std::string args = cm[2];
                    int named = 0;
                    for (auto it = std::sregex_iterator(args.begin(), args.end(), arg); it != std::sregex_iterator(); ++it, ++named)
                        CHECK(fields.count(cm[1].str() + ".Config." + (*it)[1].str()) == 1);
                    CHECK(named >= 1);
                } else {
                    CHECK(fields.count(key) == 1);
                }
                ++n;
            }
            CHECK(n >= 12);
        }
    }
}

TEST_CASE("FSDP settings use torch.distributed.fsdp's own names for the sharding strategy and mixed precision") {
    std::set<std::string> names;
    {
        std::istringstream in(slurp(data_dir + "/torch_fsdp_names.txt"));
        std::string l;
        while (std::getline(in, l))
            if (!l.empty() && l[0] != '#') names.insert(l);
    }
    REQUIRE(names.size() == 11);
    for (const auto& c : golden_cases()) {
        if (c.l != frameworks::fsdp::launcher_handle) continue;
        for (auto pr : {precision::bf16_mixed, precision::fp16_mixed, precision::bf16, precision::fp32}) {
            auto j = c.j;
            j.training.precision = pr;
            const auto s = frameworks::fsdp::settings(j);
            INFO(c.name << " " << to_string(pr) << ": " << s.dump());
            CHECK(names.count(s.at("sharding_strategy").get<std::string>()) == 1);
            const bool mixed = pr == precision::bf16_mixed || pr == precision::fp16_mixed;
            CHECK(s.contains("mixed_precision") == mixed);  // absent without mixed precision (no nulls)
            if (mixed)
                for (auto it = s.at("mixed_precision").begin(); it != s.at("mixed_precision").end(); ++it) CHECK(names.count(it.key()) == 1);
        }
    }
}

TEST_CASE("every llm-foundry key written is one train.py accepts: TrainConfig, MPTConfig, Composer's FSDPConfig") {
    const auto keys = key_list("llm_foundry_keys.txt");
    for (const auto& c : golden_cases()) {
        if (c.l != frameworks::llm_foundry::launcher_handle) continue;
        for (auto [pr, rc] : {std::pair{precision::bf16_mixed, recompute::none}, {precision::fp8_mixed, recompute::full},
                              {precision::bf16, recompute::full}, {precision::fp32, recompute::none}}) {
            auto j = c.j;
            j.training.precision = pr;
            j.parallel.recompute = rc;
            for (const auto attn : {attention_impl::automatic, attention_impl::unfused}) {
                if (pr == precision::fp8_mixed && !frameworks::llm_foundry::hf_repository_of(j.model).empty()) {
                    CHECK_THROWS_WITH(frameworks::llm_foundry::train_yaml(j, attn), Catch::Contains("Transformer Engine"));
                    continue;
                }
                const auto text = frameworks::llm_foundry::train_yaml(j, attn);
                const auto paths = launch_shell::yaml_key_paths(text, "variables");
                CHECK(paths.size() >= 35);
                for (const auto& k : paths) {
                    INFO(c.name << " " << to_string(pr) << ": " << k);
                    CHECK(keys.count(k) == 1);
                }
                if (!frameworks::llm_foundry::hf_repository_of(j.model).empty()) {
                    // a published model: transformers builds its config.json's architecture, fresh weights (issue 53)
                    CHECK(text.find("  name: hf_causal_lm\n  pretrained_model_name_or_path: ${variables.model_name}\n"
                                    "  pretrained: false\n") != std::string::npos);
                    CHECK(text.find("  model_name: " + std::string(published_repository(j.model.name)) + "\n") != std::string::npos);
                    CHECK(text.find("  tokenizer_name: " + std::string(published_repository(j.model.name)) + "\n") != std::string::npos);
                    CHECK(text.find(attn == attention_impl::unfused ? "attn_implementation: eager" : "attn_implementation: flash_attention_2") !=
                          std::string::npos);
                    CHECK((text.find("activation_checkpointing: true") != std::string::npos) == (rc == recompute::full));
                    continue;
                }
                // the model that was planned: its shape, kv heads, MLP and kernel as MPT names them
                CHECK(text.find("  d_model: " + std::to_string(j.model.hidden) + "\n") != std::string::npos);
                CHECK(text.find("  n_layers: " + std::to_string(j.model.layers) + "\n") != std::string::npos);
                CHECK(text.find("    ffn_hidden_size: " + std::to_string(j.model.ffn_hidden) + "\n") != std::string::npos);
                CHECK((text.find("    kv_n_heads: 8\n") != std::string::npos) == (j.model.kv() == 8 && j.model.heads == 32));
                CHECK(text.find(attn == attention_impl::unfused ? "attn_impl: torch" : "attn_impl: flash") != std::string::npos);
                CHECK((text.find("  fc_type: te\n") != std::string::npos) == (pr == precision::fp8_mixed));
                CHECK((text.find("activation_checkpointing: true") != std::string::npos) == (rc == recompute::full));
            }
        }
    }
}

TEST_CASE("llm-foundry launches: what MPT cannot build and what Composer refuses are named") {
    auto j = job("mixtral-8x7b", 4096, 64, frameworks::llm_foundry::handle, parallel_config{.dp = 8, .sharding = sharding::full});
    CHECK_THROWS_WITH(frameworks::llm_foundry::train_yaml(j, attention_impl::flash), Catch::Contains("model.moe"));
    j = job("mpt-7b", 2048, 64, frameworks::llm_foundry::handle, parallel_config{.dp = 8});
    j.model.activation = activation::squared_relu;
    CHECK_THROWS_WITH(frameworks::llm_foundry::train_yaml(j, attention_impl::flash), Catch::Contains("model.activation=\"squared-relu\""));
    j = job("mpt-7b", 2048, 64, frameworks::llm_foundry::handle, parallel_config{.dp = 4, .tp = 2});
    CHECK_THROWS_WITH(validate(j), Catch::Contains("data parallel only"));
    // no token budget: the batch script stops until TRAIN_BATCHES is given, and hands it to train.py
    j = job("mpt-7b", 2048, 64, frameworks::llm_foundry::handle, parallel_config{.dp = 8, .sharding = sharding::full});
    j.training.total_tokens = 0;
    const auto p = frameworks::llm_foundry::payload(j, opts(frameworks::llm_foundry::launcher_handle));
    CHECK(p.preamble.find("TRAIN_BATCHES=\"${TRAIN_BATCHES:?") != std::string::npos);
    CHECK(p.torchrun_target.find("variables.max_duration=\"${TRAIN_BATCHES}ba\"") != std::string::npos);
    CHECK(p.torchrun_target.rfind("\"$LLM_FOUNDRY/scripts/train/train.py\" \"$LAUNCH_DIR/train.yaml\"", 0) == 0);
}

TEST_CASE("runtime.liger is written as TrainingArguments(use_liger_kernel=True), a keyword of transformers") {
    const auto keys = key_list("hf_keys.txt");
    CHECK(keys.count("TrainingArguments.use_liger_kernel") == 1);
    job_spec j;
    j.model = preset("llama-3.1-8b");
    j.training = {.seq_len = 4096, .micro_batch = 1, .global_batch = 8};
    j.parallel = {.dp = 8, .recompute = recompute::full};
    j.runtime.framework = frameworks::hf::handle;
    CHECK(frameworks::hf::train_script(j, attention_impl::flash).find("use_liger_kernel") == std::string::npos);
    j.runtime.liger = true;
    validate(j);
    const auto kw = python_keywords(frameworks::hf::train_script(j, attention_impl::flash), "args = TrainingArguments");
    CHECK(std::count(kw.begin(), kw.end(), "use_liger_kernel") == 1);
}

TEST_CASE("every keyword frenzy_hf_train.py passes is one of TrainingArguments, LoraConfig, BitsAndBytesConfig") {
    const auto keys = key_list("hf_keys.txt");
    for (const auto& c : golden_cases()) {
        if (c.l != frameworks::hf::launcher_handle) continue;
        for (auto pr : {precision::bf16_mixed, precision::fp16_mixed, precision::bf16, precision::fp32}) {
            auto j = c.j;
            j.training.precision = pr;
            const auto text = frameworks::hf::train_script(j, attention_impl::automatic);
            std::vector<std::pair<std::string, std::string>> calls{{"TrainingArguments", "args = TrainingArguments"}};
            if (j.training.finetune.adapters()) calls.push_back({"LoraConfig", "get_peft_model(model, LoraConfig"});
            if (j.training.finetune.method == finetune_method::qlora)
                calls.push_back({"BitsAndBytesConfig", "quantization = BitsAndBytesConfig"});
            for (const auto& [cls, call] : calls) {
                const auto kw = python_keywords(text, call);
                CHECK(kw.size() >= 4);
                for (const auto& k : kw) {
                    INFO(c.name << " " << to_string(pr) << ": " << cls << "." << k);
                    CHECK(keys.count(cls + "." + k) == 1);
                }
            }
            // the plan: its batch, its precision flag, its checkpointing, the shape the script insists on
            const auto& t = j.training;
            CHECK(text.find("MICRO_BATCH = " + std::to_string(t.micro_batch) + "\n") != std::string::npos);
            CHECK(text.find("GRAD_ACCUM = " + std::to_string(t.global_batch / (t.micro_batch * j.parallel.dp)) + "\n") !=
                  std::string::npos);
            CHECK(text.find("\"num_hidden_layers\": " + std::to_string(j.model.layers)) != std::string::npos);
            // pure bf16 has no Trainer flag under adapters (told apart from bf16-mixed) or sharded back ends (where the
            // flag would make accelerate's mixed_precision bf16)
            const bool sharded = j.parallel.sharding != sharding::none;
            CHECK((text.find("    bf16=True,\n") != std::string::npos) ==
                  (pr == precision::bf16_mixed || (pr == precision::bf16 && !j.training.finetune.adapters() && !sharded)));
            CHECK((text.find("    fp16=True,\n") != std::string::npos) == (pr == precision::fp16_mixed));
            // weights in bf16 for pure bf16 and for an adapter's frozen base under bf16 autocast, else fp32 (fp16 base)
            const bool adapters = j.training.finetune.adapters();
            CHECK((text.find("\n    dtype=torch.bfloat16,\n") != std::string::npos) ==
                  (pr == precision::bf16 || (adapters && pr == precision::bf16_mixed)));
            CHECK((text.find("\n    dtype=torch.float16,\n") != std::string::npos) == (adapters && pr == precision::fp16_mixed));
            // under FSDP the checkpointing is accelerate's fsdp_activation_checkpointing (Trainer refuses both)
            CHECK((text.find("    gradient_checkpointing=True,\n") != std::string::npos) ==
                  (j.parallel.recompute == recompute::full && j.parallel.sharding != sharding::full));
        }
    }
}

TEST_CASE("every key accelerate_config.yaml holds is one accelerate reads, and so is every accelerate launch option") {
    const auto keys = key_list("accelerate_keys.txt");
    int written = 0;
    for (const auto sh : {sharding::optimizer, sharding::gradients, sharding::full})
        for (const auto pr : {precision::bf16_mixed, precision::fp16_mixed, precision::fp32})
            for (const bool lora : {false, true}) {
                auto j = job("llama-3.1-8b", 4096, 64, frameworks::hf::handle, parallel_config{.dp = 16, .sharding = sh, .recompute = recompute::full});
                j.training.precision = pr;
                j = finetune(j, lora ? finetune_method::lora : finetune_method::full);
                const auto fs = launch_files(j, fixed_plan(j, "h100-80g", 8), opts(frameworks::hf::launcher_handle));
                std::string section;
                for (const auto& line : launch_shell::lines_of(file(fs, "accelerate_config.yaml").content)) {
                    if (line.empty() || line[0] == '#') continue;
                    const auto key = line.substr(0, line.find(':'));
                    if (line.back() == ':') section = key + ".";
                    const bool nested = line.rfind("  ", 0) == 0;
                    if (!nested && line.back() != ':') section.clear();
                    const auto full = nested ? section + key.substr(2) : key;
                    INFO(to_string(sh) << " " << to_string(pr) << ": " << full);
                    CHECK(keys.count(full) == 1);
                    ++written;
                }
                // the launch options each node passes are ClusterConfig fields (launch.py takes them by that name)
                const auto& sbatch = file(fs, "launch.sbatch").content;
                REQUIRE(sbatch.find("exec accelerate launch --config_file") != std::string::npos);
                for (const char* opt : {"num_machines", "num_processes", "machine_rank", "main_process_ip", "main_process_port"}) {
                    CHECK(sbatch.find(std::string("--") + opt + " ") != std::string::npos);
                    CHECK(keys.count(opt) == 1);
                }
            }
    CHECK(written > 100);
}

TEST_CASE("accelerate_config.yaml: each of accelerate's, DeepSpeed's and Trainer's constraints refuses its value") {
    namespace hf = frameworks::hf;
    hf::accelerate_config fsdp{.distributed_type = "FSDP", .mixed_precision = "bf16", .num_processes = 16};
    CHECK_NOTHROW(hf::accelerate_yaml(fsdp, false, 1));
    auto c = fsdp;
    c.fsdp_reshard_after_forward = "SHARD_GRAD_OP";  // a strategy name: FSDP1's, FSDP2 takes a bool
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, false, 1), Catch::Contains("fsdp_reshard_after_forward=SHARD_GRAD_OP") && Catch::Contains("FSDP2"));
    c.fsdp_version = 1;  // FSDP1 takes it
    CHECK_NOTHROW(hf::accelerate_yaml(c, false, 1));
    c.fsdp_reshard_after_forward = "true";  // and refuses a bool
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, false, 1), Catch::Contains("FSDP1"));
    c = fsdp;
    c.fsdp_version = 3;
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, false, 1), Catch::Contains("fsdp_config.fsdp_version=3"));
    c = fsdp;
    c.fsdp_activation_checkpointing = true;  // Trainer: not with gradient_checkpointing=True
    CHECK_NOTHROW(hf::accelerate_yaml(c, false, 1));
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, true, 1), Catch::Contains("fsdp_activation_checkpointing") && Catch::Contains("Trainer"));
    c = fsdp;
    c.mixed_precision = "fp8";
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, false, 1), Catch::Contains("mixed_precision=fp8"));
    c = fsdp;
    c.num_processes = 0;
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, false, 1), Catch::Contains("num_processes=0"));
    c.distributed_type = "MULTI_GPU";
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, false, 1), Catch::Contains("distributed_type=MULTI_GPU"));
    hf::accelerate_config ds{.distributed_type = "DEEPSPEED", .mixed_precision = "bf16", .num_processes = 16, .zero_stage = 2,
                             .gradient_accumulation_steps = 4};
    CHECK_NOTHROW(hf::accelerate_yaml(ds, false, 4));
    CHECK_THROWS_WITH(hf::accelerate_yaml(ds, false, 2), Catch::Contains("gradient_accumulation_steps=4") && Catch::Contains("=2"));
    c = ds;
    c.offload_param_device = "cpu";  // ZeRO-3 only
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, false, 4), Catch::Contains("offload_param_device=cpu") && Catch::Contains("zero_stage 3"));
    c.zero_stage = 3;
    CHECK_NOTHROW(hf::accelerate_yaml(c, false, 4));
    c = ds;
    c.zero_stage = 0;
    c.offload_optimizer_device = "cpu";  // needs ZeRO
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, false, 4), Catch::Contains("offload_optimizer_device=cpu"));
    c.offload_optimizer_device = "disk";
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, false, 4), Catch::Contains("offload_optimizer_device=disk is not none, cpu or nvme"));
    c = ds;
    c.zero3_init_flag = true;  // accelerate turns it off below stage 3
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, false, 4), Catch::Contains("zero3_init_flag"));
    c.zero_stage = 4;
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, false, 4), Catch::Contains("zero_stage=4"));
    c = ds;
    c.deepspeed_multinode_launcher = "pdsh";  // accelerate's default: the first node would start the others again
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, false, 4), Catch::Contains("deepspeed_multinode_launcher=pdsh") && Catch::Contains("every node"));
    c.deepspeed_multinode_launcher = "ssh";
    CHECK_THROWS_WITH(hf::accelerate_yaml(c, false, 4), Catch::Contains("is not one of accelerate's launchers"));
    // what is written reads back as the same config
    CHECK(hf::read_accelerate_config(hf::accelerate_yaml(ds, false, 4)) == ds);
    CHECK(hf::read_accelerate_config(hf::accelerate_yaml(fsdp, false, 1)) == fsdp);
}

TEST_CASE("a sharded hf launch: accelerate launch on every node, its machine rank from SLURM_NODEID, DDP unchanged") {
    auto j = finetune(job("llama-3.1-70b", 4096, 64, frameworks::hf::handle, parallel_config{.dp = 16, .sharding = sharding::full}),
                      finetune_method::lora);
    const auto fs = launch_files(j, fixed_plan(j, "h100-80g", 8), opts(frameworks::hf::launcher_handle));
    REQUIRE(fs.size() == 3);  // launch.sbatch, frenzy_hf_train.py, accelerate_config.yaml
    const auto& sbatch = file(fs, "launch.sbatch").content;
    CHECK(sbatch.find("srun --nodes=2 --ntasks-per-node=1 \\\n    bash -c 'exec accelerate launch --config_file \"$1\" "
                      "--num_machines 2 --num_processes 16 --machine_rank \"$SLURM_NODEID\" --main_process_ip \"$2\" "
                      "--main_process_port 29500 \"${@:3}\"' frenzy-node \\\n    \"$LAUNCH_DIR/accelerate_config.yaml\" "
                      "\"$HEAD_NODE\" \"$LAUNCH_DIR/frenzy_hf_train.py\"") != std::string::npos);
    CHECK(sbatch.find("torchrun") == std::string::npos);
    const auto& yaml = file(fs, "accelerate_config.yaml").content;
    CHECK(yaml.find("distributed_type: FSDP\n") != std::string::npos);
    CHECK(yaml.find("  fsdp_version: 2\n") != std::string::npos);
    CHECK(yaml.find("num_processes: 16\n") != std::string::npos);
    // QLoRA under a sharded back end stores the 4-bit weights as bf16 (accelerate fsdp2_prepare_model's requirement)
    j.training.finetune.method = finetune_method::qlora;
    CHECK(file(launch_files(j, fixed_plan(j, "h100-80g", 8), opts(frameworks::hf::launcher_handle)), "frenzy_hf_train.py").content.find(
              "bnb_4bit_quant_storage=torch.bfloat16,") != std::string::npos);
    // DDP: torchrun as before, no accelerate config
    j.parallel.sharding = sharding::none;
    const auto ddp = launch_files(j, fixed_plan(j, "h100-80g", 8), opts(frameworks::hf::launcher_handle));
    CHECK(ddp.size() == 2);
    CHECK(file(ddp, "launch.sbatch").content.find("    torchrun --nnodes 2") != std::string::npos);
    CHECK(file(ddp, "frenzy_hf_train.py").content.find("bnb_4bit_quant_storage") == std::string::npos);
}

TEST_CASE("hf launches: fine-tunes are written, what Trainer cannot run is named, the other launchers refuse fine-tunes") {
    auto j = finetune(job("llama-3.1-8b", 4096, 64, frameworks::hf::handle, parallel_config{.dp = 8}), finetune_method::lora);
    const auto p = frameworks::hf::payload(j, opts(frameworks::hf::launcher_handle));
    CHECK(p.torchrun_target == "\"$LAUNCH_DIR/frenzy_hf_train.py\"");
    CHECK(p.preamble.find("export TRAIN_STEPS=\"${TRAIN_STEPS:-1000}\"") != std::string::npos);  // 64 x 4096 x 1000 tokens
    CHECK(p.files.at(0).content.find("    r=16,\n    lora_alpha=32.0,\n") != std::string::npos);
    CHECK(p.files.at(0).content.find("target_modules=[\"q_proj\", \"k_proj\", \"v_proj\", \"o_proj\"]") != std::string::npos);
    j.training.total_tokens = 0;
    CHECK(frameworks::hf::payload(j, opts(frameworks::hf::launcher_handle)).preamble.find("TRAIN_STEPS:?") != std::string::npos);
    j.training.precision = precision::fp8_mixed;
    CHECK_THROWS_WITH(frameworks::hf::payload(j, opts(frameworks::hf::launcher_handle)), Catch::Contains("training.precision=\"fp8-mixed\""));
    j = job("llama-3.1-8b", 4096, 64, frameworks::hf::handle, parallel_config{.dp = 8});
    j.training.finetune.frozen_layers = 4;
    CHECK_THROWS_WITH(frameworks::hf::payload(j, opts(frameworks::hf::launcher_handle)), Catch::Contains("training.finetune.frozen_layers"));
    // a fine-tune planned for Megatron-LM is refused with the launcher that writes one
    auto m = finetune(job("llama-3.1-8b", 4096, 64, frameworks::megatron::handle, parallel_config{.dp = 8}), finetune_method::lora);
    CHECK_THROWS_WITH(launch_files(m, fixed_plan(m, "h100-80g", 8), opts(frameworks::megatron::launcher_handle)),
                      Catch::Contains("training.finetune") && Catch::Contains("hf"));
}

TEST_CASE("golden launch files") {
    const bool update = std::getenv("FRENZY_UPDATE_GOLDEN") != nullptr;
    for (const auto& c : golden_cases()) {
        const auto fs = launch_files(c.j, fixed_plan(c.j, "h100-80g", 8), opts(c.l));
        const auto dir = data_dir + "/golden/" + c.name;
        if (update) {
            std::filesystem::create_directories(dir);
            write_launch_files(fs, dir);
        }
        for (const auto& f : fs) {
            INFO("golden " << c.name << "/" << f.name << " (regenerate with FRENZY_UPDATE_GOLDEN=1 and review the diff)");
            REQUIRE(std::filesystem::exists(dir + "/" + f.name));
            CHECK(f.content == slurp(dir + "/" + f.name));
        }
    }
}

TEST_CASE("sbatch header: nodes, one task per node, typed GRES, time from the prediction plus margin") {
    const auto j = job("llama-3.1-8b", 4096, 256, frameworks::megatron::handle, parallel_config{.dp = 8, .tp = 2, .sequence_parallel = true});
    const auto fs = launch_files(j, fixed_plan(j, "h100-80g", 8), opts(frameworks::megatron::launcher_handle));
    const auto& s = file(fs, "launch.sbatch").content;
    CHECK(s.find("#SBATCH --nodes=2\n") != std::string::npos);             // 16 GPUs / 8 per node
    CHECK(s.find("#SBATCH --ntasks-per-node=1\n") != std::string::npos);
    CHECK(s.find("#SBATCH --gres=gpu:h100:8\n") != std::string::npos);     // h100-80g mapped to GRES type h100
    CHECK(s.find("#SBATCH --time=01:12:00\n") != std::string::npos);      // 3600 s x 1.2 = 72 min
    CHECK(s.find("--rdzv-backend c10d --rdzv-endpoint \"$HEAD_NODE:29500\"") != std::string::npos);
    CHECK(s.find("scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1") != std::string::npos);
    CHECK(s.find("torchrun --nnodes 2 --nproc-per-node 8") != std::string::npos);
    // 30 h x 1.2 = 36 h = 1 day 12 h
    auto p = fixed_plan(j, "h100-80g", 8);
    p.est_time = seconds{30 * 3600};
    CHECK(file(launch_files(j, p, opts(frameworks::megatron::launcher_handle)), "launch.sbatch").content.find("#SBATCH --time=1-12:00:00\n") != std::string::npos);
}

TEST_CASE("launchers refuse what their configuration cannot say, naming the field") {
    auto j = job("llama-3.1-8b", 4096, 64, frameworks::fsdp::handle, parallel_config{.dp = 8, .sharding = sharding::full});
    j.training.precision = precision::fp16_mixed;
    CHECK_THROWS_WITH(launch_files(j, fixed_plan(j, "h100-80g", 8), opts(frameworks::torchtitan::launcher_handle)), Catch::Contains("training.precision"));
    auto d = job("llama-3.1-8b", 4096, 64, frameworks::deepspeed::handle, parallel_config{.dp = 8});
    d.training.precision = precision::fp8_mixed;
    CHECK_THROWS_WITH(launch_files(d, fixed_plan(d, "h100-80g", 8), opts(frameworks::deepspeed::launcher_handle)), Catch::Contains("fp8-mixed"));
    // a plan for one framework cannot be written for another launcher
    CHECK_THROWS_WITH(launch_files(j, fixed_plan(j, "h100-80g", 8), opts(frameworks::megatron::launcher_handle)), Catch::Contains("runtime.framework"));
    auto b = job("bloom-560m", 2048, 64, frameworks::megatron::handle, parallel_config{.dp = 8});
    CHECK_THROWS_WITH(launch_files(b, fixed_plan(b, "h100-80g", 8), opts(frameworks::megatron::launcher_handle)), Catch::Contains("model."));
}

TEST_CASE("import of Megatron-LM's examples/llama/train_llama3_8b_h100_fp8.sh") {
    const auto r = megatron_import_file(data_dir + "/megatron_llama3_8b_h100_fp8.sh");
    const auto& j = r.job;
    // values as the script writes them (MODEL_ARGS, TRAINING_ARGS, DTYPE_ARGS with DTYPE=fp8, MOCK data branch)
    CHECK(j.model.layers == 32);
    CHECK(j.model.hidden == 4096);
    CHECK(j.model.ffn_hidden == 14336);
    CHECK(j.model.heads == 32);
    CHECK(j.model.kv() == 8);
    CHECK(j.model.hdim() == 128);
    CHECK(j.model.vocab == 128256);
    CHECK(j.model.activation == activation::swiglu);
    CHECK(j.model.norm == norm_kind::rmsnorm);
    CHECK(j.model.position_embedding == position_embedding::rope);
    CHECK_FALSE(j.model.tied_embeddings);
    CHECK_FALSE(j.model.bias);
    CHECK(j.training.seq_len == 8192);
    CHECK(j.training.micro_batch == 1);
    CHECK(j.training.global_batch == 128);
    CHECK(j.training.precision == precision::fp8_mixed);                     // --bf16 + --fp8-format hybrid
    CHECK(j.training.total_tokens == 1953125000.0 * 8192);                  // --train-samples x --seq-length
    CHECK(r.world_size == 8);                                               // GPUS_PER_NODE=8 x NUM_NODES=1
    CHECK(j.parallel == parallel_config{.dp = 8, .sharding = sharding::optimizer});  // tp=cp=pp=1, distributed optimizer
    // the memory flags map to job fields (runtime.fp8_param_gather, grad_reduce_bf16, dropout, and the cache emptied
    // after every forward/backward: empty_unused_memory_level, read by the fit rule); the fused cross-entropy and
    // overlapped parameter all-gather are understood and do not move the peak
    CHECK(r.unknown.empty());
    CHECK(j.runtime.fp8_param_gather);
    CHECK(j.runtime.grad_reduce_bf16);
    CHECK(j.runtime.dropout == std::optional<bool>(false));
    for (const char* f : {"--cross-entropy-loss-fusion", "--overlap-param-gather"})
        CHECK(std::find(r.ignored.begin(), r.ignored.end(), std::string(f)) != r.ignored.end());
    CHECK(j.runtime.empty_unused_memory_level == 1);  // --empty-unused-memory-level 1 (issue 55)
    CHECK(j.runtime.overlap_grad_reduce);  // --overlap-grad-reduce (runtime.overlap_grad_reduce)
    // the parameter count is Llama 3.1 8B's: 8,030,261,248 (meta-llama/Llama-3.1-8B; the preset's published count)
    CHECK(total_parameters(j.model) == total_parameters(preset("llama-3.1-8b")));
    const std::set<std::string> ignored(r.ignored.begin(), r.ignored.end());
    for (const auto* s : {"--lr 0.00015", "--adam-beta2 0.95", "--mock-data", "--save-interval 1000", "--use-mcore-models",
                          "--fp8-amax-history-len 1024", "--sequence-parallel (Megatron disables it at tensor-model-parallel-size 1)"})
        CHECK(ignored.count(s) == 1);
    // the real-data branch is not taken: its flags are absent
    CHECK(ignored.count("--tokenizer-type HuggingFaceTokenizer") == 0);
    CHECK(ignored.count("--tokenizer-type NullTokenizer") == 1);
}

TEST_CASE("the script reader: defaults, arithmetic, arrays, conditions, JSON argument lists") {
    const std::string s = "N=${N:-4}\nM=$((N*2+1))\nA=(--x 1 \"--y two words\")\nif [[ \"$M\" == \"9\" ]]; then\n  A+=(--z)\nelse\n  A+=(--w)\nfi\n"
                          "python3 run.py ${A[@]} \\\n  --m $M  # comment\n";
    const auto c = read_shell_script(s);
    REQUIRE(c.found);
    CHECK(c.script == "run.py");
    CHECK(c.args == std::vector<std::string>{"--x", "1", "--y", "two", "words", "--z", "--m", "9"});
    const auto q = read_shell_script("A=(\"--y two\")\ntorchrun --nproc_per_node 4 x.py \"${A[@]}\"\n");
    CHECK(q.args == std::vector<std::string>{"--y two"});  // quoted expansion keeps elements whole
    CHECK(torchrun_world_size(q.launcher) == 4);
    const auto alt = read_shell_script("P=a\nE=\nx.py ${P:+-p} ${E:+-e} ${U+-u}\n");
    CHECK(alt.args == std::vector<std::string>{"-p"});  // :+ alternate value only for set, non-empty variables
    CHECK(alt.notes.empty());
    const auto j = megatron_import_text(R"({"num-layers": 2, "hidden-size": 64, "num-attention-heads": 4, "vocab-size": 100,
                                           "swiglu": true, "seq-length": 128, "bf16": true, "lr": 0.1})");
    CHECK(j.job.model.ffn_hidden == 128);  // arguments.py: int((4 x 64 x 2/3) / 64) x 64 = int(2.67) x 64
    CHECK(j.job.training.precision == precision::bf16_mixed);
    CHECK(j.ignored == std::vector<std::string>{"--lr 0.1"});
    CHECK_FALSE(j.has_parallel);  // no world size: the layout is left to the planner
}

TEST_CASE("bad launcher input names the argument") {
    CHECK_THROWS_WITH(megatron_import_text("torchrun pretrain_gpt.py --num-layers x --hidden-size 64\n"),
                      Catch::Contains("--num-layers") && Catch::Contains("not an integer"));
    import_options o;
    o.model = preset("gpt2");
    CHECK_THROWS_WITH(deepspeed_import_json(nlohmann::json::parse(R"({"train_micro_batch_size_per_gpu": 1, "train_batch_size": 8,
                                                                      "zero_optimization": {"stage": 5}})"), o),
                      Catch::Contains("zero_optimization.stage=5"));
    CHECK_THROWS_WITH(deepspeed_import_json(nlohmann::json::parse(R"({"train_micro_batch_size_per_gpu": 2, "train_batch_size": 7})"), o),
                      Catch::Contains("train_batch_size=7"));
    // The library names the field (import_options.model), not a CLI flag (the CLI says --model: tests/cli)
    CHECK_THROWS_WITH(import_launcher_file("deepspeed", data_dir + "/golden/deepspeed_zero3/ds_config.json", {}),
                      Catch::Contains("does not describe the model") && Catch::Contains("import_options.model"));
    const auto r = deepspeed_import_json(nlohmann::json::parse(R"({"train_micro_batch_size_per_gpu": 1, "train_batch_size": 8,
        "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}, "overlap_comm": true}, "optimizer": {"type": "AdamW"}})"), o);
    CHECK(r.job.parallel.dp == 8);
    CHECK(r.job.parallel.sharding == sharding::gradients);
    CHECK(r.unknown.empty());
    CHECK(r.job.runtime.offload == offload_spec{.optimizer = true});  // offload_optimizer.device = cpu
    CHECK(r.ignored == std::vector<std::string>{"optimizer", "zero_optimization.overlap_comm"});
}

TEST_CASE("torchtitan base recipe: torchtitan's own for the presets it builds, a refusal otherwise") {
    // pytorch/torchtitan@b5bcd76c torchtitan/models/{llama3,qwen3,deepseek_v3}/config_registry.py
    CHECK(frameworks::torchtitan::base_for(preset("llama-3.1-70b")) == "torchtitan.models.llama3.config_registry:llama3_70b");
    CHECK(frameworks::torchtitan::base_for(preset("llama-3.1-405b")) == "torchtitan.models.llama3.config_registry:llama3_405b");
    CHECK(frameworks::torchtitan::base_for(preset("llama-3.1-8b")) == "torchtitan.models.llama3.config_registry:llama3_8b");
    CHECK(frameworks::torchtitan::base_for(preset("qwen3-1.7b")) == "torchtitan.models.qwen3.config_registry:qwen3_1_7b");
    CHECK(frameworks::torchtitan::base_for(preset("deepseek-v2-lite")) == "torchtitan.models.deepseek_v3.config_registry:deepseek_v3_16b");
    CHECK(frameworks::torchtitan::base_for(preset("deepseek-v3")) == "torchtitan.models.deepseek_v3.config_registry:deepseek_v3_671b");
    CHECK(frameworks::torchtitan::base_for(preset("qwen2.5-7b")).empty());
    // a model torchtitan cannot build is refused, naming the field and the way out (never llama3_8b in its place)
    auto j = job("qwen2.5-7b", 4096, 64, frameworks::fsdp::handle, parallel_config{.dp = 8, .sharding = sharding::full});
    CHECK_THROWS_WITH(frameworks::torchtitan::recipe(j, ""), Catch::Contains("model.name=\"qwen2.5-7b\"") && Catch::Contains("--torchtitan-base"));
    CHECK(frameworks::torchtitan::recipe(j, "my.recipes:qwen7b").find("from my.recipes import qwen7b as base_recipe") != std::string::npos);
    CHECK_THROWS_WITH(frameworks::torchtitan::recipe(j, "no_colon"), Catch::Contains("MODULE:FUNCTION"));
}

TEST_CASE("torchtitan expert parallelism: expert_parallel_degree within dp_shard x cp x tp, experts not tensor-parallel") {
    auto j = job("deepseek-v2-lite", 4096, 64, frameworks::fsdp::handle, parallel_config{.dp = 8, .ep = 8, .sharding = sharding::full});
    const auto text = frameworks::torchtitan::recipe(j, "");
    CHECK(text.find("    config.parallelism.expert_parallel_degree = 8\n") != std::string::npos);
    CHECK(text.find("deepseek_v3_16b as base_recipe") != std::string::npos);
    import_options o;
    o.model = j.model;
    o.name = j.name;
    CHECK(torchtitan_import_text(text, o).job.parallel == j.parallel);
    // ep borrows tp ranks: the experts are whole on each rank, so a plan with tensor-parallel experts is refused
    j.parallel = {.dp = 4, .tp = 2, .ep = 8, .sequence_parallel = true, .sharding = sharding::full};
    CHECK_THROWS_WITH(frameworks::torchtitan::recipe(j, ""), Catch::Contains("parallel.etp"));
    j.parallel.etp = 1;
    CHECK(frameworks::torchtitan::recipe(j, "").find("expert_parallel_degree = 8") != std::string::npos);
    // without sharding the dense ranks are replicas: ep must divide cp x tp
    j.parallel = {.dp = 8, .ep = 8};
    CHECK_THROWS_WITH(frameworks::torchtitan::recipe(j, ""), Catch::Contains("parallel.ep=8"));
}

using launch_shell::lines_of;
using launch_shell::run;

TEST_CASE("the generated sbatch scripts are valid bash, and bash expands MEGATRON_ARGS as the importer reads it") {
    REQUIRE(run("command -v bash >/dev/null").first == 0);
    for (const auto& c : golden_cases()) {
        const auto path = data_dir + "/golden/" + c.name + "/launch.sbatch";
        INFO(path);
        CHECK(run("bash -n '" + path + "' 2>&1").first == 0);
        if (c.l != frameworks::megatron::launcher_handle) continue;
        // real bash on the settings, the array and the data block (the lines from "# Settings" to the data block's
        // "fi"), printing the array; the reader keeps a variable it does not know as its text, so bash is given
        // HOME and LAUNCH_DIR as their own names
        const auto [rc, out] = run("env -i HOME='$HOME' LAUNCH_DIR='$LAUNCH_DIR' bash -c \"$(sed -n '/^# Settings/,/^fi$/p' '" + path +
                                   "'); printf '%s\\n' \\\"\\${MEGATRON_ARGS[@]}\\\"\"");
        REQUIRE(rc == 0);
        const auto cmd = read_shell_script(slurp(path));
        REQUIRE(cmd.found);
        CHECK(cmd.script == "$HOME/Megatron-LM/pretrain_gpt.py");  // "$MEGATRON_LM/pretrain_gpt.py"
        CHECK(cmd.args == lines_of(out));
    }
}

TEST_CASE("the script reader expands Megatron-LM's Llama 3 example exactly as bash does") {
    // bash runs the example with torchrun and mkdir stubbed (printing torchrun's arguments) in a scratch directory
    // holding an empty pretrain_gpt.py, so the script's own existence check passes
    const auto dir = std::filesystem::temp_directory_path() / ("frenzy_launch_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "pretrain_gpt.py") << "";
    const auto script = data_dir + "/megatron_llama3_8b_h100_fp8.sh";
    const auto [rc, out] = run("cd '" + dir.string() + "' && bash -c 'torchrun() { printf \"%s\\n\" \"$@\"; }; mkdir() { :; }; "
                               "export -f torchrun mkdir; source \"$0\"' '" + script + "'");
    std::filesystem::remove_all(dir);
    REQUIRE(rc == 0);
    auto want = lines_of(out);
    const auto cmd = read_shell_script(slurp(script));
    REQUIRE(cmd.found);
    std::vector<std::string> got(cmd.launcher.begin() + 1, cmd.launcher.end());  // without the word "torchrun"
    got.push_back(cmd.script);
    got.insert(got.end(), cmd.args.begin(), cmd.args.end());
    // the one difference: the reader does not know the environment, so ${PWD} expands to ""
    for (auto& w : want)
        if (const auto p = w.find(dir.string()); p != std::string::npos) w.erase(p, dir.string().size());
    CHECK(got == want);
    CHECK(want.size() > 100);
}

TEST_CASE("mangled launcher files give config_error, never another exception") {
    // 400 deterministic mutations (truncation, deletion, insertion of shell/JSON syntax) of each input kind; every
    // outcome must be a job or a config_error (the CLI's exit 2), not a crash or an internal error
    const std::string mega = slurp(data_dir + "/megatron_llama3_8b_h100_fp8.sh");
    const std::string ds = slurp(data_dir + "/golden/deepspeed_zero3/ds_config.json");
    const std::string tt = slurp(data_dir + "/golden/torchtitan_tp_pp/frenzy_torchtitan.py");
    const std::string fs = slurp(data_dir + "/golden/fsdp_shard_grad_op/fsdp_settings.json");
    const std::string specials = "$(){}[]\"'\\#;=+*-_0123456789 \n:";
    std::uint64_t state = 12345;
    auto rnd = [&](std::size_t n) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<std::size_t>((state >> 33) % n);
    };
    import_options o;
    o.model = preset("llama-3.1-70b");
    o.world_size = 32;
    int errors = 0, jobs = 0;
    for (int i = 0; i < 400; ++i) {
        for (int kind = 0; kind < 4; ++kind) {
            std::string t = kind == 0 ? mega : kind == 1 ? ds : kind == 2 ? tt : fs;
            const int edits = 1 + static_cast<int>(rnd(4));
            for (int e = 0; e < edits && !t.empty(); ++e) {
                const auto at = rnd(t.size());
                switch (rnd(3)) {
                    case 0: t.resize(at); break;
                    case 1: t.erase(at, 1 + rnd(8)); break;
                    default: t.insert(at, 1, specials[rnd(specials.size())]); break;
                }
            }
            try {
                if (kind == 0) megatron_import_text(t, o);
                else if (kind == 2) torchtitan_import_text(t, o);
                else {
                    nlohmann::json j;
                    try {
                        j = nlohmann::json::parse(t);
                    } catch (const nlohmann::json::exception&) {
                        ++errors;  // import_launcher_file turns this into a config_error
                        continue;
                    }
                    if (kind == 1) deepspeed_import_json(j, o); else fsdp_import_json(j, o);
                }
                ++jobs;
            } catch (const config_error&) {
                ++errors;
            } catch (const std::exception& e) {
                FAIL("input kind " << kind << " mutation " << i << ": " << typeid(e).name() << ": " << e.what() << "\n" << t);
            }
        }
    }
    CHECK(errors + jobs == 1600);
    CHECK(errors > 0);  // the mutations do break files
    CHECK(jobs > 0);    // and many still parse (comments, ignored lines)
}

TEST_CASE("hostile names never become code: control characters are refused, other text stays a comment or one word") {
    REQUIRE(run("command -v bash python3 >/dev/null").first == 0);
    const std::string printable_hostile = "a\"b'c $(touch PWNED) `touch PWNED`; touch PWNED # \\ \xc3\xbcn\xc3\xaf";
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("frenzy-hostile-" + std::to_string(getpid()));
    struct one { launcher l; framework fw; };
    for (const auto& [l, fw] : {one{frameworks::megatron::launcher_handle, frameworks::megatron::handle}, one{frameworks::torchtitan::launcher_handle, frameworks::fsdp::handle},
                                one{frameworks::deepspeed::launcher_handle, frameworks::deepspeed::handle}, one{frameworks::fsdp::launcher_handle, frameworks::fsdp::handle}}) {
        INFO(to_string(l));
        const auto j = job("llama-3.1-8b", 4096, 64, fw, parallel_config{.dp = 8});
        const auto p = fixed_plan(j, "h100-80g", 8);
        // a newline, a carriage return (a line end to Python), an escape sequence, invalid UTF-8: refused by name
        for (const std::string bad : {"x\nrm -rf $HOME #", "x\rimport os", "a\x1b[2Jb", "\xff\xfe"}) {
            auto h = j;
            h.name = bad;
            CHECK_THROWS_WITH(launch_files(h, p, opts(l)), Catch::StartsWith("name="));
            h = j;
            h.model.name = bad;
            CHECK_THROWS_WITH(launch_files(h, p, opts(l)), Catch::StartsWith("model.name="));
        }
        // printable shell and Python syntax is written as text: in comments, and as one word in --job-name
        auto h = j;
        h.name = h.model.name = printable_hostile;
        auto o = opts(l);  // torchtitan builds no model of that name: its base recipe is given
        if (l == frameworks::torchtitan::launcher_handle) o.base_config = "torchtitan.models.llama3.config_registry:llama3_8b";
        const auto files = launch_files(h, p, o);
        std::filesystem::remove_all(dir);
        const auto paths = write_launch_files(files, dir.string());
        for (std::size_t i = 0; i < files.size(); ++i) {
            const auto& f = files[i];
            INFO(f.name << ":\n" << f.content);
            // every line that holds the text holds it after a comment's '#' (bash and Python parse it, below)
            for (const auto& line : lines_of(f.content))
                if (line.find("PWNED") != std::string::npos) CHECK(line.find('#') < line.find("PWNED"));
            if (f.name.ends_with(".sbatch")) CHECK(run("bash -n '" + paths[i] + "' 2>&1").first == 0);
            if (f.name.ends_with(".py"))
                CHECK(run("python3 -c 'import ast, sys; ast.parse(open(sys.argv[1], encoding=\"utf-8\").read())' '" + paths[i] + "' 2>&1").first == 0);
            if (f.name.ends_with(".json")) CHECK(nlohmann::json::parse(f.content).is_object());
        }
        CHECK(file(files, "launch.sbatch").content.find("#SBATCH --job-name=a_b_c___touch_PWNED___touch_PWNED___touch_PWNED_______n__\n") !=
              std::string::npos);
    }
    std::filesystem::remove_all(dir);
    // the other texts written into code: the GRES type and the torchtitan base recipe
    const auto j = job("llama-3.1-8b", 4096, 64, frameworks::fsdp::handle, parallel_config{.dp = 8});
    auto o = opts(frameworks::fsdp::launcher_handle);
    o.gres_names["h100-80g"] = "h100:8\n#SBATCH --wrap=id";
    CHECK_THROWS_WITH(launch_files(j, fixed_plan(j, "h100-80g", 8), o), Catch::StartsWith("launch_options::gres_names[h100-80g]="));
    auto t = opts(frameworks::torchtitan::launcher_handle);
    for (const std::string bad : {"a.b:c\nimport os", "a.b:c; import os", "1a:b", "a..b:c", "a.b:", ":c", "a.b"}) {
        t.base_config = bad;
        INFO(bad);
        CHECK_THROWS_WITH(launch_files(j, fixed_plan(j, "h100-80g", 8), t), Catch::StartsWith("launch_options::base_config="));
    }
    t.base_config = "my_recipes.llama:tiny_recipe";
    CHECK(file(launch_files(j, fixed_plan(j, "h100-80g", 8), t), "frenzy_torchtitan.py").content.find(
              "from my_recipes.llama import tiny_recipe as base_recipe\n") != std::string::npos);
}

TEST_CASE("DeepSpeed and FSDP launches need the user's training script: refused without --run-command, run with it (issue 53)") {
    // Their files configure a script Frenzy does not write: a launch that started a "train.py" that is not there would
    // fail on the cluster, after the queue. Refused by name; with the script named, bash runs it with the settings.
    for (const auto& [l, fw, config] : {std::tuple{frameworks::deepspeed::launcher_handle, frameworks::deepspeed::handle, "ds_config.json"},
                                        std::tuple{frameworks::fsdp::launcher_handle, frameworks::fsdp::handle, "fsdp_settings.json"}}) {
        INFO(to_string(l));
        const auto j = job("llama-3.1-8b", 4096, 64, fw, parallel_config{.dp = 8, .sharding = sharding::full});
        launch_options o;
        o.launcher = l;
        CHECK_THROWS_WITH(launch_files(j, fixed_plan(j, "h100-80g", 8), o),
                          Catch::StartsWith("launch_options::run_command=\"\"") && Catch::Contains("--run-command") &&
                              Catch::Contains("--framework hf"));
        o.run_command = "my_train.py --data /d";
        const auto fs = launch_files(j, fixed_plan(j, "h100-80g", 8), o);
        const auto dir = std::filesystem::temp_directory_path() / ("frenzy_user_script_" + std::to_string(getpid()));
        const auto [rc, out] = launch_shell::run_launch_files(fs, "", dir);
        std::filesystem::remove_all(dir);
        INFO(out);
        REQUIRE(rc == 0);
        const std::string settings = std::string(l == frameworks::deepspeed::launcher_handle ? "--deepspeed_config" : "--settings");
        CHECK(out.rfind("my_train.py\n--data\n/d\n", 0) == 0);  // torchrun starts the user's script with its arguments
        CHECK(launch_shell::printed_value(out, settings) == "/sub/" + std::string(config));
    }
}

TEST_CASE("hf: frenzy_hf_train.py trains on every token, EOS included: no pad token borrowed from EOS (issue 53)") {
    // DataCollatorForLanguageModeling masks the labels equal to the pad token; with pad = EOS every document end was
    // masked and the model never learned to stop. Packed sequences need no padding: labels are the inputs, whole.
    REQUIRE(run("command -v python3 >/dev/null").first == 0);
    auto j = job("llama-3.1-8b", 4096, 64, frameworks::hf::handle, parallel_config{.dp = 8});
    j.training.finetune.method = finetune_method::full;
    const auto fs = launch_files(j, fixed_plan(j, "h100-80g", 8), opts(frameworks::hf::launcher_handle));
    const auto& script = file(fs, "frenzy_hf_train.py").content;
    CHECK(script.find("pad_token = tokenizer.eos_token") == std::string::npos);
    CHECK(script.find("DataCollatorForLanguageModeling") == std::string::npos);
    const auto dir = std::filesystem::temp_directory_path() / ("frenzy_hf_collate_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "frenzy_hf_train.py") << script;
    // the script's own collate(), run by python3 with torch.tensor stubbed: token 2 stands for EOS
    const std::string py =
        "import ast, types\n"
        "tree = ast.parse(open('frenzy_hf_train.py').read())\n"
        "fn = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == 'collate']\n"
        "class T(list):\n    def clone(self): return T(self)\n"
        "ns = {'torch': types.SimpleNamespace(tensor=T)}\n"
        "exec(compile(ast.Module(fn, []), 'collate', 'exec'), ns)\n"
        "b = ns['collate']([{'input_ids': [5, 2, 7]}, {'input_ids': [2, 9, 2]}])\n"
        "print(b['input_ids'], b['labels'])\n";
    std::ofstream(dir / "check.py") << py;
    const auto [rc, out] = run("cd '" + dir.string() + "' && python3 check.py 2>&1");
    std::filesystem::remove_all(dir);
    INFO(out);
    CHECK(rc == 0);
    CHECK(out == "[[5, 2, 7], [2, 9, 2]] [[5, 2, 7], [2, 9, 2]]\n");  // every EOS (2) is a label, none is -100
    // checkpoints by time: 1800 s at the predicted 2.5 s a step
    const auto& sh = file(fs, "launch.sbatch").content;
    CHECK(sh.find("export SAVE_STEPS=\"${SAVE_STEPS:-720}\"  # optimizer steps between checkpoints: about every 30 min") !=
          std::string::npos);
    CHECK(script.find("    save_steps=int(os.environ[\"SAVE_STEPS\"]),\n") != std::string::npos);
}
