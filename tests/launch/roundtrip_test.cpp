// job -> launch files -> import -> the same job and the same memory estimate, for every launcher and several
// plans (dense and MoE, with/without pipeline and sequence parallelism, sharded and not).
#include <catch2/catch.hpp>

#include <filesystem>

#include "frenzy/io/job_json.hpp"
#include "frenzy/frameworks/hf/import.hpp"
#include "frenzy/frameworks/deepspeed/import.hpp"
#include "frenzy/frameworks/fsdp/import.hpp"
#include "frenzy/frameworks/megatron/import.hpp"
#include "frenzy/frameworks/torchtitan/import.hpp"
#ifdef FRENZY_HAS_YAML
#include "frenzy/frameworks/litgpt/import.hpp"
#include "frenzy/frameworks/llm_foundry/import.hpp"
#include "frenzy/frameworks/torchtune/import.hpp"
#endif
#include "frenzy/launch/launch.hpp"
#include "frenzy/memory/estimator.hpp"
#include "frenzy/model/presets.hpp"

using namespace frenzy;

namespace {

const launch_file& file(const std::vector<launch_file>& fs, const std::string& name) {
    for (const auto& f : fs)
        if (f.name == name) return f;
    FAIL("no file " << name);
    return fs.front();
}

/// Imports the files written for `j` with the launcher `l`.
launcher_import reimport(const job_spec& j, launcher l, const std::vector<launch_file>& fs) {
    import_options o;
    o.name = j.name;
    o.model = j.model;
    o.layout = j.parallel;
    o.training.seq_len = j.training.seq_len;  // what a DeepSpeed user states besides ds_config
    o.training.total_tokens = j.training.total_tokens;
    o.training.optimizer = j.training.optimizer;
    if (l == frameworks::megatron::launcher_handle) return megatron_import_text(file(fs, "launch.sbatch").content, o);
    if (l == frameworks::torchtitan::launcher_handle) return torchtitan_import_text(file(fs, "frenzy_torchtitan.py").content, o);
    if (l == frameworks::hf::launcher_handle) {
        o.world_size = j.parallel.gpus();  // torchrun's, and the budget (TRAIN_STEPS) and model: beside the script
        const auto& script = file(fs, "frenzy_hf_train.py").content;
        for (const auto& f : fs)  // a sharded job: accelerate_config.yaml beside the script
            if (f.name == "accelerate_config.yaml")
                return frameworks::hf::hf_import_accelerate(script, frameworks::hf::read_accelerate_config(f.content), o);
        return hf_import_script(script, o);
    }
    if (l == frameworks::deepspeed::launcher_handle) return deepspeed_import_json(nlohmann::json::parse(file(fs, "ds_config.json").content), o);
#ifdef FRENZY_HAS_YAML
    if (l == frameworks::llm_foundry::launcher_handle) {
        o.world_size = j.parallel.gpus();  // train.yaml does not say it: --world-size beside the file
        return llm_foundry_import_yaml(file(fs, "train.yaml").content, o);
    }
    if (l == frameworks::torchtune::launcher_handle) {
        o.world_size = j.parallel.gpus();  // tune run's --nnodes x --nproc-per-node, beside the file
        return torchtune_import_yaml(file(fs, "torchtune.yaml").content, o);
    }
    if (l == frameworks::litgpt::launcher_handle) {
        import_options named;  // litgpt.yaml alone: the model, the world size and the budget are in it
        named.name = j.name;
        return litgpt_import_yaml(file(fs, "litgpt.yaml").content, named);
    }
#endif
    return fsdp_import_json(nlohmann::json::parse(file(fs, "fsdp_settings.json").content), o);
}

job_spec base_job(const std::string& preset_name, std::int64_t seq, std::int64_t gbs) {
    job_spec j;
    j.name = "rt-" + preset_name;
    j.model = preset(preset_name);
    j.model.name = preset_name;
    j.training.seq_len = seq;
    j.training.global_batch = gbs;
    j.training.total_tokens = static_cast<double>(gbs * seq) * 500;  // a whole number of steps and samples
    return j;
}

launch_options opts(launcher l, std::size_t n = 0) {
    launch_options o;
    o.launcher = l;
    o.plan_index = n;
    if (l->needs_run_command) o.run_command = "train.py";  // the user's script: ds_config.json and fsdp_settings.json configure it (needs_run_command)
    return o;
}

plan plan_for(const job_spec& j, const std::string& gpu, int per_node) {
    plan p;
    p.gpu = gpu;
    p.gpus = static_cast<int>(j.parallel.gpus());
    p.nodes = (p.gpus + per_node - 1) / per_node;
    p.framework = j.runtime.framework;
    p.micro_batch = j.training.micro_batch;
    return p;
}

void check_roundtrip(const job_spec& j0, launcher l) {
    INFO("launcher " << to_string(l) << ", job " << j0.name);
    const auto fs = launch_files(j0, plan_for(j0, "h100-80g", 8), opts(l));
    const auto r = reimport(j0, l, fs);
    // Megatron-LM trains a rotary model without dropout, as published, where the job leaves it unstated (issue 53):
    // its files say --hidden-dropout 0 --attention-dropout 0, which reads back as runtime.dropout false
    auto j = j0;
    if (l == frameworks::megatron::launcher_handle && frameworks::megatron::trains_without_dropout(j0)) j.runtime.dropout = false;
    INFO("differences (JSON patch from the job to the import): " << nlohmann::json::diff(to_json(j), to_json(r.job)).dump());
    CHECK(r.unknown.empty());
    CHECK(r.job.model == j.model);
    CHECK(r.job.training == j.training);
    CHECK(r.job.parallel == j.parallel);
    CHECK(r.job.runtime == j.runtime);
    CHECK(r.job == j);
    // the same estimate: the estimator is deterministic, so equal jobs give equal bytes (exact)
    const memory_estimator est;
    CHECK(est.estimate(r.job).peak_allocated.value == est.estimate(j).peak_allocated.value);
}

}  // namespace

TEST_CASE("Megatron round trip: dense with tp+sp+pp+vpp, distributed optimizer, full recompute") {
    auto j = base_job("llama-3.1-8b", 4096, 256);
    j.training.micro_batch = 1;
    j.parallel = {.dp = 4, .tp = 2, .pp = 4, .vpp = 2, .sequence_parallel = true, .sharding = sharding::optimizer,
                  .recompute = recompute::full, .schedule = pipeline_schedule::interleaved};
    check_roundtrip(j, frameworks::megatron::launcher_handle);
}

TEST_CASE("Megatron round trip: a full fine-tune loads --pretrained-checkpoint, a run from scratch does not") {
    auto j = base_job("llama-3.1-8b", 4096, 256);
    j.parallel = {.dp = 8, .tp = 2, .sequence_parallel = true, .sharding = sharding::optimizer};
    j.training.finetune.method = finetune_method::full;
    check_roundtrip(j, frameworks::megatron::launcher_handle);
    const auto script = file(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::megatron::launcher_handle)), "launch.sbatch").content;
    CHECK(script.find("    --pretrained-checkpoint \"$PRETRAINED_CHECKPOINT\"\n") != std::string::npos);
    // converted from the published weights once (megatron_rules_test runs the conversion step with the tool stubbed)
    CHECK(script.find("PRETRAINED_CHECKPOINT=\"${PRETRAINED_CHECKPOINT:-$CHECKPOINT_DIR/pretrained}\"") != std::string::npos);
    CHECK(script.find("HF_MODEL=\"${HF_MODEL:-meta-llama/Llama-3.1-8B}\"") != std::string::npos);
    j.training.finetune.method = finetune_method::none;
    const auto scratch = file(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::megatron::launcher_handle)), "launch.sbatch").content;
    CHECK(scratch.find("PRETRAINED_CHECKPOINT") == std::string::npos);
    check_roundtrip(j, frameworks::megatron::launcher_handle);
}

TEST_CASE("a fine-tune method a launcher does not write is refused naming the field and the launchers that do") {
    using Catch::Matchers::Contains;
    auto j = base_job("llama-3.1-8b", 4096, 256);
    j.parallel = {.dp = 8, .sharding = sharding::full};
    j.runtime.framework = frameworks::deepspeed::handle;
    j.training.finetune.method = finetune_method::full;
    CHECK_THROWS_WITH(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::deepspeed::launcher_handle)),
                      Contains("training.finetune.method=\"full\" is not written by the deepspeed launcher") &&
                          Contains("written by: megatron, torchtitan, llm-foundry, hf, torchtune, litgpt"));
    j.runtime.framework = frameworks::torchtune::handle;  // torchtune's recipes fine-tune a checkpoint
    j.training.precision = precision::bf16;
    j.parallel = {.dp = 8, .sharding = sharding::full};
    j.training.finetune.method = finetune_method::none;
    CHECK_THROWS_WITH(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::torchtune::launcher_handle)),
                      Contains("training.finetune.method=\"none\" is not written by the torchtune launcher") &&
                          Contains("a run from scratch (no pretrained weights) is written by: megatron, torchtitan, deepspeed, "
                                   "fsdp, llm-foundry, hf, litgpt"));
}

TEST_CASE("Megatron round trip: MoE with ep, cp, selective recompute, fp8, no sharding") {
    auto j = base_job("mixtral-8x7b", 8192, 64);
    j.training.precision = precision::fp8_mixed;
    j.runtime.overlap_grad_reduce = true;
    j.runtime.tp_comm_overlap = true;
    j.parallel = {.dp = 8, .tp = 2, .pp = 1, .cp = 2, .ep = 8, .sequence_parallel = true, .recompute = recompute::selective};
    check_roundtrip(j, frameworks::megatron::launcher_handle);
}

TEST_CASE("Megatron round trip: the memory flags of Megatron's fp8 example (fp8 param gather, bf16 grad reduce, no dropout)") {
    // The three job fields the importer reads from --fp8-param-gather, --grad-reduce-in-bf16 and
    // --hidden-dropout 0 --attention-dropout 0 must come back from the files launch writes, or a launched job
    // would run with more memory than was estimated (fp8 gather copies and bf16 grad buffers are smaller).
    auto j = base_job("llama-3.1-8b", 8192, 128);
    j.training.precision = precision::fp8_mixed;
    j.training.micro_batch = 1;
    j.runtime.framework = frameworks::megatron::handle;
    j.runtime.fp8_param_gather = true;
    j.runtime.grad_reduce_bf16 = true;
    j.runtime.dropout = false;
    j.parallel = {.dp = 8, .sharding = sharding::optimizer, .recompute = recompute::selective};
    check_roundtrip(j, frameworks::megatron::launcher_handle);
}

TEST_CASE("Megatron and torchtitan round trips: the fp8 recipe (--fp8-recipe, the torchao converters)") {
    // Unset stays unset (Megatron's delayed, torchtitan's rowwise default, nothing written); a named recipe is
    // written and read back, so the launched run casts as the estimate assumed (perf/traffic.hpp, memory/methods.hpp).
    auto j = base_job("llama-3.1-8b", 8192, 128);
    j.training.precision = precision::fp8_mixed;
    j.parallel = {.dp = 8, .sharding = sharding::optimizer};
    for (auto r : {fp8_recipe::delayed, fp8_recipe::tensorwise, fp8_recipe::blockwise, fp8_recipe::mxfp8}) {
        j.runtime.fp8_recipe = r;
        check_roundtrip(j, frameworks::megatron::launcher_handle);
        const auto script = file(launch_files(j, plan_for(j, "b200", 8), opts(frameworks::megatron::launcher_handle)), "launch.sbatch").content;
        CHECK(script.find("    --fp8-recipe " + std::string(to_string(r)) + "\n") != std::string::npos);
    }
    j.runtime.framework = frameworks::fsdp::handle;
    j.parallel = {.dp = 8, .sharding = sharding::full};
    for (auto r : {std::optional<fp8_recipe>{}, std::optional{fp8_recipe::rowwise}, std::optional{fp8_recipe::mxfp8}}) {
        j.runtime.fp8_recipe = r;
        check_roundtrip(j, frameworks::torchtitan::launcher_handle);
    }
    j.runtime.fp8_recipe = fp8_recipe::tensorwise;  // torchao spells it, torchtitan's converters do not
    CHECK_THROWS_WITH(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::torchtitan::launcher_handle)),
                      Catch::Contains("runtime.fp8_recipe=\"tensorwise\": torchtitan's converters run"));
}

TEST_CASE("Megatron round trip: DeepSeek-style MoE (shared experts, dense leading layers), learned positions, tied, fp16") {
    auto j = base_job("deepseek-moe-16b", 2048, 32);
    j.training.precision = precision::fp16_mixed;
    j.parallel = {.dp = 4, .tp = 1, .pp = 2, .ep = 4};
    check_roundtrip(j, frameworks::megatron::launcher_handle);
    auto g = base_job("gpt3-1.3b", 2048, 64);  // learned positions, tied embeddings, biases
    g.parallel = {.dp = 8};
    check_roundtrip(g, frameworks::megatron::launcher_handle);
}

TEST_CASE("Megatron round trip: MoE kernel, dispatcher, expert tensor parallelism and capacity, uneven pipeline splits") {
    // Fields the estimate uses and a launch must pass on (frameworks/megatron/options.hpp reads them back): grouped GEMM's
    // TE workspaces, the alltoall dispatcher's buffers, etp's expert shards, the capacity's token count, and the
    // per-stage layer counts.
    auto j = base_job("mixtral-8x7b", 4096, 64);
    j.model.moe.capacity_factor = 1.25;
    j.model.moe.pad_to_capacity = true;
    j.parallel = {.dp = 8, .tp = 2, .pp = 1, .ep = 4, .sequence_parallel = true, .etp = 1,
                  .dispatcher = moe_dispatcher::alltoall, .grouped_gemm = true};
    check_roundtrip(j, frameworks::megatron::launcher_handle);
    j.model.moe.capacity_factor = 1.1;  // a factor with no short binary form reads back as the same double
    j.model.moe.pad_to_capacity = false;
    check_roundtrip(j, frameworks::megatron::launcher_handle);
    auto u = base_job("llama-3.1-8b", 4096, 64);
    u.parallel = {.dp = 2, .pp = 4, .first_stage_layers = 5, .last_stage_layers = 9};
    check_roundtrip(u, frameworks::megatron::launcher_handle);
    // The embedding and the loss each count as a layer in the split: 32 + 1 + 1 = 34 over pp 2 (over pp 4 Megatron
    // refuses it, as validate() does: this case asked for that and, its name holding a ';', never ran until now)
    u.parallel = {.dp = 4, .pp = 2, .embedding_stage = true, .loss_stage = true};
    check_roundtrip(u, frameworks::megatron::launcher_handle);
}

TEST_CASE("Megatron round trip: a layer count per stage (--pipeline-model-parallel-layout), as a mixed plan runs") {
    auto j = base_job("llama-2-13b", 4096, 256);
    j.training.precision = precision::fp16_mixed;
    j.training.micro_batch = 1;
    j.parallel = {.dp = 2, .tp = 4, .pp = 3, .sequence_parallel = true, .sharding = sharding::optimizer,
                  .recompute = recompute::selective, .stage_layers = {6, 17, 17}};
    check_roundtrip(j, frameworks::megatron::launcher_handle);
    const auto fs = launch_files(j, plan_for(j, "v100-32g", 8), opts(frameworks::megatron::launcher_handle));
    CHECK_THAT(file(fs, "launch.sbatch").content, Catch::Contains("--pipeline-model-parallel-layout 'Et*6|t*17|t*17L'"));
}

TEST_CASE("torchtitan round trip: FSDP full sharding, tp+sp, pp, compile, fp8, recompute levels") {
    auto j = base_job("llama-3.1-8b", 8192, 64);
    j.runtime.framework = frameworks::fsdp::handle;
    j.training.micro_batch = 2;
    j.parallel = {.dp = 16, .sharding = sharding::full, .recompute = recompute::none};
    check_roundtrip(j, frameworks::torchtitan::launcher_handle);
    j.parallel = {.dp = 4, .tp = 2, .pp = 2, .sequence_parallel = true, .sharding = sharding::full, .recompute = recompute::full};
    j.training.micro_batch = 1;
    j.runtime.compile = true;
    j.training.precision = precision::fp8_mixed;
    check_roundtrip(j, frameworks::torchtitan::launcher_handle);
    j.parallel = {.dp = 8, .sharding = sharding::gradients, .recompute = recompute::selective};
    j.training.precision = precision::bf16;
    j.runtime.compile = false;
    check_roundtrip(j, frameworks::torchtitan::launcher_handle);
    j.parallel = {.dp = 8, .sharding = sharding::none};  // replicate only (DDP-style)
    check_roundtrip(j, frameworks::torchtitan::launcher_handle);
}

TEST_CASE("torchtitan fine-tune: the published weights from a local Hugging Face snapshot, loaded once (issue 53)") {
    auto j = base_job("llama-3.1-8b", 8192, 64);
    j.runtime.framework = frameworks::fsdp::handle;
    j.parallel = {.dp = 8, .sharding = sharding::full, .recompute = recompute::selective};
    j.training.finetune.method = finetune_method::full;
    check_roundtrip(j, frameworks::torchtitan::launcher_handle);
    const auto fs = launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::torchtitan::launcher_handle));
    const auto recipe = file(fs, "frenzy_torchtitan.py").content;
    // torchtitan@b5bcd76c checkpointer/base.py: initial_load_in_hf needs initial_load_model_only and a local path
    // (checkpointing is on in every recipe: its settings lines, issue 53 item 4)
    CHECK(recipe.find("    config.checkpoint.enable = True\n") != std::string::npos);
    CHECK(recipe.find("    config.checkpoint.initial_load_path = os.environ[\"HF_MODEL_DIR\"]\n"
                      "    config.checkpoint.initial_load_in_hf = True\n    config.checkpoint.initial_load_model_only = True\n") !=
          std::string::npos);
    // the tokenizer: TOKENIZER_DIR, the snapshot's unless given
    CHECK(recipe.find("    config.hf_assets_path = os.environ[\"TOKENIZER_DIR\"]\n") != std::string::npos);
    CHECK(recipe.find("import os\n") != std::string::npos);
    const auto script = file(fs, "launch.sbatch").content;
    CHECK(script.find("export HF_MODEL_DIR=\"${HF_MODEL_DIR:?set HF_MODEL_DIR to the absolute path of a local snapshot of the "
                      "published weights (huggingface-cli download meta-llama/Llama-3.1-8B --local-dir DIR)}\"") != std::string::npos);
    CHECK(script.find("export TOKENIZER_DIR=\"${TOKENIZER_DIR:-$HF_MODEL_DIR}\"") != std::string::npos);
    // a run from scratch loads nothing
    j.training.finetune.method = finetune_method::none;
    const auto scratch = file(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::torchtitan::launcher_handle)), "frenzy_torchtitan.py").content;
    CHECK(scratch.find("initial_load") == std::string::npos);
}

TEST_CASE("DeepSpeed round trip: ZeRO stages 0-3, full recompute, fp16 and bf16") {
    auto j = base_job("llama-2-7b", 4096, 128);
    j.runtime.framework = frameworks::deepspeed::handle;
    for (auto sh : {sharding::none, sharding::optimizer, sharding::gradients, sharding::full}) {
        j.parallel = {.dp = 16, .sharding = sh, .recompute = sh == sharding::full ? recompute::full : recompute::none};
        j.training.micro_batch = 2;
        check_roundtrip(j, frameworks::deepspeed::launcher_handle);
    }
    j.training.precision = precision::fp16_mixed;
    j.runtime.offload.optimizer = true;  // ZeRO-Offload (zero_optimization.offload_optimizer)
    j.parallel = {.dp = 8, .tp = 2, .pp = 2, .sharding = sharding::optimizer};  // tp/pp from the training script (import_options.layout)
    j.training.micro_batch = 1;
    check_roundtrip(j, frameworks::deepspeed::launcher_handle);
}

TEST_CASE("FSDP/DDP round trip") {
    auto j = base_job("qwen2.5-1.5b", 2048, 64);
    j.runtime.framework = frameworks::fsdp::handle;
    j.parallel = {.dp = 8, .sharding = sharding::full, .recompute = recompute::selective};
    check_roundtrip(j, frameworks::fsdp::launcher_handle);
    j.parallel = {.dp = 8, .sharding = sharding::gradients};
    check_roundtrip(j, frameworks::fsdp::launcher_handle);
    // tensor, pipeline and context parallelism inside the world: a dp 8 x tp 2 plan reads back as dp 8 x tp 2, not dp 16
    j.parallel = {.dp = 8, .tp = 2, .sequence_parallel = true, .sharding = sharding::full};
    check_roundtrip(j, frameworks::fsdp::launcher_handle);
    j.parallel = {.dp = 4, .tp = 2, .pp = 2, .cp = 2, .sharding = sharding::full};
    check_roundtrip(j, frameworks::fsdp::launcher_handle);
    for (auto pr : {precision::bf16, precision::fp32, precision::fp16_mixed}) {  // pure bf16 model, no mixed precision
        j.training.precision = pr;
        check_roundtrip(j, frameworks::fsdp::launcher_handle);
    }
    j.training.precision = precision::bf16_mixed;
    j.runtime.framework = frameworks::ddp::handle;
    j.parallel = {.dp = 16};
    check_roundtrip(j, frameworks::fsdp::launcher_handle);
}

TEST_CASE("Hugging Face round trip: full, LoRA and QLoRA fine-tunes from frenzy_hf_train.py's settings") {
    auto j = base_job("llama-3.1-8b", 4096, 64);
    j.runtime.framework = frameworks::hf::handle;
    j.training.finetune = {.method = finetune_method::full};  // fp32 weights under autocast (bf16-mixed), all trained
    j.parallel = {.dp = 8, .recompute = recompute::full};
    check_roundtrip(j, frameworks::hf::launcher_handle);
    {  // from scratch: from_config (MODEL's architecture, fresh weights) instead of from_pretrained, GPT-3's rate
        auto scratch = j;
        scratch.training.finetune.method = finetune_method::none;
        check_roundtrip(scratch, frameworks::hf::launcher_handle);
        const auto fs = launch_files(scratch, plan_for(scratch, "h100-80g", 8), opts(frameworks::hf::launcher_handle));
        const auto& py = file(fs, "frenzy_hf_train.py").content;
        CHECK(py.find("model = AutoModelForCausalLM.from_config(\n    config,\n    dtype=torch.float32,\n") != std::string::npos);
        CHECK(py.find("from_pretrained(\n    MODEL") == std::string::npos);
        CHECK(file(fs, "launch.sbatch").content.find("export LR=\"${LR:-0.00012}\"") != std::string::npos);  // 8B: 1.2e-4
    }
    j.training.precision = precision::bf16;  // weights loaded in bf16, Trainer(bf16=True)
    j.parallel = {.dp = 4};
    check_roundtrip(j, frameworks::hf::launcher_handle);
    j.training.precision = precision::bf16_mixed;
    j.training.finetune = {.method = finetune_method::lora, .rank = 32, .alpha = 64, .targets = lora_q | lora_k | lora_v | lora_o | lora_gate,
                           .dropout = 0.05};
    j.parallel = {.dp = 8, .recompute = recompute::full};
    check_roundtrip(j, frameworks::hf::launcher_handle);
    j.runtime.attention = attention_impl::unfused;  // attn_implementation="eager"
    j.training.optimizer = optimizer_kind::adamw_8bit;
    check_roundtrip(j, frameworks::hf::launcher_handle);
    j.runtime.paged_optimizer = true;  // optim="paged_adamw_8bit", then "paged_adamw_32bit"
    check_roundtrip(j, frameworks::hf::launcher_handle);
    j.training.optimizer = optimizer_kind::adamw;
    check_roundtrip(j, frameworks::hf::launcher_handle);
    CHECK(file(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::hf::launcher_handle)), "frenzy_hf_train.py").content.find(
              "optim=\"paged_adamw_32bit\"") != std::string::npos);
    j.runtime.paged_optimizer = false;
    j.runtime.attention = attention_impl::automatic;
    j.runtime.liger = true;  // TrainingArguments(use_liger_kernel=True)
    check_roundtrip(j, frameworks::hf::launcher_handle);
    j.runtime.liger = false;
    for (const bool dq : {true, false}) {
        j.training.finetune.method = finetune_method::qlora;
        j.training.finetune.double_quant = dq;
        j.parallel = {.dp = 1};
        check_roundtrip(j, frameworks::hf::launcher_handle);
    }
}

TEST_CASE("Hugging Face round trip: pure bf16 and bf16-mixed LoRA are told apart (no Trainer flag, adapters cast to bf16)") {
    // Until 2026-12 both were written as dtype bfloat16 + bf16=True and read back as bf16-mixed.
    auto j = base_job("llama-3.1-8b", 4096, 64);
    j.runtime.framework = frameworks::hf::handle;
    j.training.finetune = {.method = finetune_method::lora, .rank = 16, .targets = lora_q | lora_v};
    j.parallel = {.dp = 8};
    for (const auto pr : {precision::bf16, precision::bf16_mixed, precision::fp32}) {
        j.training.precision = pr;
        check_roundtrip(j, frameworks::hf::launcher_handle);
        const auto script = file(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::hf::launcher_handle)), "frenzy_hf_train.py").content;
        CHECK((script.find("    bf16=True,\n") != std::string::npos) == (pr == precision::bf16_mixed));
        CHECK((script.find("model = model.to(torch.bfloat16)") != std::string::npos) == (pr == precision::bf16));
    }
}

TEST_CASE("Hugging Face round trip: sharded jobs through accelerate_config.yaml (DeepSpeed ZeRO-1/2, FSDP2)") {
    auto j = base_job("llama-3.1-8b", 4096, 64);
    j.runtime.framework = frameworks::hf::handle;
    for (const auto sh : {sharding::optimizer, sharding::gradients, sharding::full}) {
        INFO("sharding " << to_string(sh));
        j.training.finetune = {.method = finetune_method::full};  // bf16-mixed, 16 GPUs on 2 nodes, whole-layer checkpointing
        j.training.precision = precision::bf16_mixed;
        j.parallel = {.dp = 16, .sharding = sh, .recompute = recompute::full};
        check_roundtrip(j, frameworks::hf::launcher_handle);
        j.training.finetune = {.method = finetune_method::lora, .rank = 32, .alpha = 64, .targets = lora_q | lora_k | lora_v | lora_o,
                               .dropout = 0.05};
        j.parallel = {.dp = 8, .sharding = sh};
        check_roundtrip(j, frameworks::hf::launcher_handle);
        j.training.finetune.method = finetune_method::qlora;
        j.training.precision = precision::fp32;
        check_roundtrip(j, frameworks::hf::launcher_handle);
        j.training.precision = precision::fp16_mixed;
        check_roundtrip(j, frameworks::hf::launcher_handle);
    }
    j.training.finetune = {.method = finetune_method::lora, .rank = 16};
    j.training.precision = precision::bf16;  // pure bf16: FSDP2 with mixed_precision 'no'
    j.parallel = {.dp = 8, .sharding = sharding::full, .recompute = recompute::full};
    check_roundtrip(j, frameworks::hf::launcher_handle);
    j.training.finetune = {.method = finetune_method::full};
    check_roundtrip(j, frameworks::hf::launcher_handle);
}

TEST_CASE("Hugging Face import --from hf:DIR and hf:frenzy_hf_train.py read accelerate_config.yaml beside the script") {
    auto j = base_job("llama-3.1-8b", 4096, 64);
    j.runtime.framework = frameworks::hf::handle;
    j.training.finetune = {.method = finetune_method::qlora, .rank = 16};
    j.parallel = {.dp = 16, .sharding = sharding::full, .recompute = recompute::full};
    const auto dir = std::filesystem::temp_directory_path() / "frenzy_hf_import_dir";
    std::filesystem::remove_all(dir);
    write_launch_files(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::hf::launcher_handle)), dir.string());
    import_options o;
    o.name = j.name;
    o.model = j.model;
    o.training.total_tokens = j.training.total_tokens;
    for (const auto& path : {dir, dir / "frenzy_hf_train.py"}) {
        INFO(path);
        const auto r = import_launcher_file("hf", path.string(), o);  // no --world-size: num_processes gives it
        CHECK(r.job == j);
    }
    std::filesystem::remove(dir / "accelerate_config.yaml");  // without it: a DDP job of the world size given
    o.world_size = 16;
    CHECK(import_launcher_file("hf", dir.string(), o).job.parallel.sharding == sharding::none);
    std::filesystem::remove_all(dir);
}

TEST_CASE("Hugging Face accelerate_config.yaml: an edited value, a missing key or a contradiction is an error naming it") {
    using Catch::Matchers::Contains;
    namespace hf = frameworks::hf;
    auto j = base_job("llama-3.1-8b", 4096, 64);
    j.runtime.framework = frameworks::hf::handle;
    j.training.finetune = {.method = finetune_method::lora, .rank = 16};
    j.parallel = {.dp = 8, .sharding = sharding::gradients};
    const auto fs = launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::hf::launcher_handle));
    const auto& script = file(fs, "frenzy_hf_train.py").content;
    const auto& yaml = file(fs, "accelerate_config.yaml").content;
    import_options o;
    o.model = j.model;
    CHECK(hf::hf_import_accelerate(script, hf::read_accelerate_config(yaml), o).job.parallel.dp == 8);  // num_processes
    o.world_size = 16;
    CHECK_THROWS_WITH(hf::hf_import_accelerate(script, hf::read_accelerate_config(yaml), o), Contains("num_processes=8 contradicts"));
    o.world_size = 0;
    auto edited = yaml;
    edited.replace(edited.find("zero_stage: 2"), 13, "zero_stage: 3");
    CHECK_THROWS_WITH(hf::hf_import_accelerate(script, hf::read_accelerate_config(edited), o), Contains("zero_stage 3"));
    edited = yaml;
    edited.replace(edited.find("mixed_precision: bf16"), 21, "mixed_precision: fp16");
    CHECK_THROWS_WITH(hf::hf_import_accelerate(script, hf::read_accelerate_config(edited), o), Contains("mixed_precision=fp16 contradicts"));
    edited = yaml;
    edited.replace(edited.find("gradient_accumulation_steps: 8"), 30, "gradient_accumulation_steps: 4");
    CHECK_THROWS_WITH(hf::hf_import_accelerate(script, hf::read_accelerate_config(edited), o),
                      Contains("deepspeed_config.gradient_accumulation_steps=4") && Contains("Trainer refuses"));
    CHECK_THROWS_WITH(hf::read_accelerate_config(yaml + "gpu_ids: all\n"), Contains("gpu_ids is not a key the hf launcher writes"));
    CHECK_THROWS_WITH(hf::read_accelerate_config(yaml + "num_processes: 8\n"), Contains("num_processes is given twice"));
    edited = yaml;
    edited.erase(edited.find("  zero_stage: 2\n"), 15);
    CHECK_THROWS_WITH(hf::read_accelerate_config(edited), Contains("no deepspeed_config.zero_stage"));
    CHECK_THROWS_WITH(hf::read_accelerate_config(yaml + "   x: 1\n"), Contains("is not `key: value`"));
    edited = yaml;
    edited.replace(edited.find("mixed_precision: bf16"), 21, "mixed_precision: no");
    CHECK_THROWS_WITH(hf::read_accelerate_config(edited), Contains("must be quoted"));
}

TEST_CASE("Hugging Face frenzy_hf_train.py: another model, an edited setting or a missing one is an error naming it") {
    using Catch::Matchers::Contains;
    auto j = base_job("llama-3.1-8b", 4096, 64);
    j.runtime.framework = frameworks::hf::handle;
    j.training.finetune = {.method = finetune_method::lora, .rank = 16};
    j.parallel = {.dp = 8};
    const auto script = file(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::hf::launcher_handle)), "frenzy_hf_train.py").content;
    import_options o;
    o.model = preset("qwen2.5-7b");
    CHECK_THROWS_WITH(hf_import_script(script, o), Contains("PLANNED=") && Contains("contradicts the model given beside the file"));
    CHECK_THROWS_WITH(hf_import_script(script, {}), Contains("does not describe the model"));
    o.model = j.model;
    auto edited = script;
    edited.replace(edited.find("\"adamw_torch_fused\""), 19, "\"adamw_apex_fused\"");
    CHECK_THROWS_WITH(hf_import_script(edited, o), Contains("optim=\"adamw_apex_fused\" is not one the hf launcher writes"));
    edited = script;
    edited.replace(edited.find("    optim=\"adamw_torch_fused\","), 30, "    optim=\"adamw_torch_fused\"  #");
    CHECK_THROWS_WITH(hf_import_script(edited, o), Contains("is not `optim=value,`"));
    edited = script;
    edited.replace(edited.find("SEQ_LEN = "), 10, "SEQ_LEN_X = ");
    CHECK_THROWS_WITH(hf_import_script(edited, o), Contains("no SEQ_LEN setting"));
    CHECK_THROWS_WITH(hf_import_script(script + "MICRO_BATCH = 2\n", o), Contains("MICRO_BATCH is given twice"));
    edited = script;
    edited.replace(edited.find("\"q_proj\""), 8, "\"qkv\"");
    CHECK_THROWS_WITH(hf_import_script(edited, o), Contains("target_modules holds"));
}

#ifdef FRENZY_HAS_YAML
TEST_CASE("LitGPT round trip: LoRA, QLoRA, full fine-tune and pretrain, one device and FSDP, precisions, budgets") {
    // litgpt.yaml alone gives the job back: the model by LitGPT's name, dp = devices x num_nodes, the layout LitGPT
    // builds for it, precision, adapters, batch sizes and the budget (500 whole steps: exact in max_steps).
    auto j = base_job("llama-3.1-8b", 2048, 64);
    j.runtime.framework = frameworks::litgpt::handle;
    j.training.precision = precision::bf16;
    j.training.finetune = {.method = finetune_method::lora, .rank = 16, .alpha = 32, .targets = lora_q | lora_k | lora_v | lora_o,
                           .dropout = 0.1};
    j.parallel = {.dp = 16, .sharding = sharding::full, .recompute = recompute::full};
    check_roundtrip(j, frameworks::litgpt::launcher_handle);
    j.training.precision = precision::bf16_mixed;
    j.training.finetune.targets = lora_q | lora_v | lora_gate | lora_up | lora_down;
    check_roundtrip(j, frameworks::litgpt::launcher_handle);
    // QLoRA: one device, bf16-true, nf4 with and without double quantization
    j.training.precision = precision::bf16;
    j.parallel = {.dp = 1};
    for (const bool dq : {true, false}) {
        j.training.finetune.method = finetune_method::qlora;
        j.training.finetune.double_quant = dq;
        check_roundtrip(j, frameworks::litgpt::launcher_handle);
    }
    // no token budget: the batch script asks for TRAIN_STEPS, the file holds none
    j.training.total_tokens = 0;
    check_roundtrip(j, frameworks::litgpt::launcher_handle);
    // a full fine-tune: finetune_full (checkpoint_dir, resume auto), every Block checkpointed on several devices
    j.training.finetune = {.method = finetune_method::full};
    j.training.total_tokens = static_cast<double>(64 * 2048) * 500;
    j.parallel = {.dp = 8, .sharding = sharding::full, .recompute = recompute::full};
    check_roundtrip(j, frameworks::litgpt::launcher_handle);
    {
        const auto yaml = file(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::litgpt::launcher_handle)), "litgpt.yaml").content;
        CHECK(yaml.find("`litgpt finetune_full --config litgpt.yaml`") != std::string::npos);
        CHECK(yaml.find("\nresume: auto\n") != std::string::npos);
        CHECK(yaml.find("lora_") == std::string::npos);
    }
    // pretraining: model_name, FSDP without checkpointing, max_tokens exactly
    auto p = base_job("qwen2.5-7b", 4096, 256);
    p.runtime.framework = frameworks::litgpt::handle;
    p.parallel = {.dp = 32, .sharding = sharding::full};
    check_roundtrip(p, frameworks::litgpt::launcher_handle);
    p.training.precision = precision::fp32;
    p.parallel = {.dp = 1};
    p.training.total_tokens = 123456789;  // not a whole number of steps: max_tokens holds it as it is
    check_roundtrip(p, frameworks::litgpt::launcher_handle);
}

TEST_CASE("LitGPT litgpt.yaml: what is not read or contradicts itself is an error naming the key") {
    using Catch::Matchers::Contains;
    CHECK_THROWS_WITH(litgpt_import_yaml("model_name: Llama-3.1-8B\ncheckpoint_dir: checkpoints/x\n"), Contains("both given"));
    CHECK_THROWS_WITH(litgpt_import_yaml("precision: bf16-true\n"), Contains("neither model_name"));
    CHECK_THROWS_WITH(litgpt_import_yaml("model_name: gpt-5\n"), Contains("model_name=gpt-5 is not a LitGPT model"));
    CHECK_THROWS_WITH(litgpt_import_yaml("model_name: Llama-3.1-8B\nprecision: bf17\n"), Contains("precision=bf17"));
    CHECK_THROWS_WITH(litgpt_import_yaml("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nquantize: bnb.int8-training\n"),
                      Contains("quantize=bnb.int8-training"));
    CHECK_THROWS_WITH(litgpt_import_yaml("model_name: Llama-3.1-8B\ntrain:\n  micro_batch_size: 0\n"), Contains("train.micro_batch_size=0"));
    CHECK_THROWS_WITH(litgpt_import_yaml("model_name: Llama-3.1-8B\ndevices: 2\ndevices: 4\n"), Contains("devices is given twice"));
    // the defaults of finetune_lora's setup: r 8, alpha 16, dropout 0.05 on query and value; bf16-mixed
    const auto r = litgpt_import_yaml("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\n");
    CHECK(r.job.training.finetune == finetune_spec{.method = finetune_method::lora, .rank = 8, .alpha = 16,
                                                   .targets = lora_q | lora_v, .dropout = 0.05});
    CHECK(r.job.training.precision == precision::bf16_mixed);
    CHECK(r.job.model == preset("llama-3.2-1b"));
}

TEST_CASE("llm-foundry round trip: FSDP1 sharding strategies, activation checkpointing, Composer precisions, MPT shapes") {
    // a Llama-shaped MPT (RoPE, RMSNorm, SwiGLU, GQA, untied, no biases) and a GPT-shaped one (learned positions,
    // LayerNorm, GELU, tied, biases): the attention kernel stated, as train.yaml states it (attn_impl)
    // (Llama 3.1's rope_theta and llama3 rope_hf_config, Qwen2.5's base and eps, Qwen3's qk_gn: issue 53)
    // Published models are written as hf_causal_lm (issue 53); renamed, the same shapes are MPTs again.
    for (const std::string name : {"llama-3.1-8b", "gpt3-1.3b", "qwen2.5-1.5b", "qwen3-1.7b", "llama-3.1-8b/mpt", "qwen3-1.7b/mpt"}) {
        auto j = base_job(name.substr(0, name.find('/')), 2048, 64);
        j.model.name = name;
        j.runtime.framework = frameworks::llm_foundry::handle;
        j.runtime.attention = attention_impl::flash;
        j.training.micro_batch = 2;
        j.parallel = {.dp = 16, .sharding = sharding::full, .recompute = recompute::full};
        check_roundtrip(j, frameworks::llm_foundry::launcher_handle);
        j.parallel = {.dp = 8, .sharding = sharding::gradients};
        check_roundtrip(j, frameworks::llm_foundry::launcher_handle);
        j.parallel = {.dp = 4, .sharding = sharding::none};
        for (auto pr : {precision::bf16, precision::fp16_mixed, precision::fp32, precision::fp8_mixed}) {
            j.training.precision = pr;
            // Composer's amp_fp8 needs Transformer Engine layers, which only the MPT has
            if (pr == precision::fp8_mixed && !frameworks::llm_foundry::hf_repository_of(j.model).empty()) continue;
            check_roundtrip(j, frameworks::llm_foundry::launcher_handle);
        }
        j.runtime.attention = attention_impl::unfused;  // attn_impl: torch
        j.training.precision = precision::bf16_mixed;
        check_roundtrip(j, frameworks::llm_foundry::launcher_handle);
    }
}

TEST_CASE("llm-foundry fine-tunes: the published weights (pretrained true, init_device mixed) and LoRA through PEFT, read back (issue 53)") {
    using Catch::Matchers::Contains;
    auto j = base_job("llama-3.1-8b", 4096, 64);
    j.runtime.framework = frameworks::llm_foundry::handle;
    j.runtime.attention = attention_impl::flash;
    j.parallel = {.dp = 8, .sharding = sharding::full, .recompute = recompute::full};
    j.training.finetune.method = finetune_method::full;
    check_roundtrip(j, frameworks::llm_foundry::launcher_handle);
    auto fs = launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::llm_foundry::launcher_handle));
    auto yaml = file(fs, "train.yaml").content;
    // llm-foundry@8c8dd48f hf_base.py: pretrained true loads the weights, not on the meta device; config_utils.py
    // process_init_device: mixed = rank 0 loads, FSDP sends them to the others (sync_module_states)
    CHECK_THAT(yaml, Contains("  name: hf_causal_lm\n  pretrained_model_name_or_path: ${variables.model_name}\n  pretrained: true\n"
                              "  init_device: mixed\n"));
    CHECK_THAT(yaml, Contains("  sync_module_states: true\n"));
    CHECK(yaml.find("peft_config") == std::string::npos);
    auto script = file(fs, "launch.sbatch").content;
    CHECK_THAT(script, Contains("MODEL_NAME=\"${MODEL_NAME:-meta-llama/Llama-3.1-8B}\"  # the weights to fine-tune"));
    CHECK_THAT(script, Contains("TOKENIZER=\"${TOKENIZER:-$MODEL_NAME}\""));  // the model's own, a local snapshot's too
    CHECK_THAT(script, Contains("LR=\"${LR:-2e-5}\""));
    CHECK_THAT(script, Contains(" variables.model_name=\"$MODEL_NAME\""));
    // LoRA: PEFT's LoraConfig under model.peft_config (hf_base.py get_peft_config: LORA, CAUSAL_LM)
    j.training.finetune = {.method = finetune_method::lora, .rank = 32, .alpha = 64, .targets = lora_q | lora_k | lora_v | lora_o | lora_down,
                           .dropout = 0.05};
    check_roundtrip(j, frameworks::llm_foundry::launcher_handle);
    fs = launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::llm_foundry::launcher_handle));
    yaml = file(fs, "train.yaml").content;
    CHECK_THAT(yaml, Contains("  peft_config:\n    peft_type: LORA\n    task_type: CAUSAL_LM\n    r: 32\n    lora_alpha: 64\n"
                              "    lora_dropout: 0.05\n    target_modules:\n    - q_proj\n    - k_proj\n    - v_proj\n    - o_proj\n"
                              "    - down_proj\n"));
    CHECK_THAT(file(fs, "launch.sbatch").content, Contains("LR=\"${LR:-2e-4}\""));
    // a file without target_modules: PEFT's default for Llama-style models (q_proj, v_proj), with a note
    import_options o;
    o.world_size = 8;
    auto edited = yaml;
    edited.erase(edited.find("    target_modules:\n"), std::string("    target_modules:\n    - q_proj\n    - k_proj\n    - v_proj\n"
                                                                    "    - o_proj\n    - down_proj\n").size());
    const auto r = llm_foundry_import_yaml(edited, o);
    CHECK(r.job.training.finetune.targets == (lora_q | lora_v));
    CHECK(r.job.training.finetune.rank == 32);
    CHECK_FALSE(r.notes.empty());
    // QLoRA: llm-foundry has no 4-bit base (hf_base.py load_in_8bit only): refused by name, with the launchers that write it
    j.training.finetune.method = finetune_method::qlora;
    CHECK_THROWS_WITH(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::llm_foundry::launcher_handle)),
                      Contains("training.finetune.method=\"qlora\" is not written by the llm-foundry launcher") && Contains("hf"));
    // leading frozen layers: written by no launcher (it would train every layer)
    j.training.finetune = {.method = finetune_method::full, .frozen_layers = 4};
    CHECK_THROWS_WITH(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::llm_foundry::launcher_handle)), Contains("training.finetune.frozen_layers"));
    CHECK_THROWS_WITH(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::torchtitan::launcher_handle)), Contains("training.finetune.frozen_layers"));
    // a model without published weights, or not as published, has nothing to load
    j.training.finetune = {.method = finetune_method::full};
    j.model.name = "llama-3.1-8b/mpt";
    CHECK_THROWS_WITH(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::llm_foundry::launcher_handle)),
                      Contains("model.name=\"llama-3.1-8b/mpt\" has no published weights"));
    j.model = preset("llama-3.1-8b");
    j.model.rope.theta = 10000;
    CHECK_THROWS_WITH(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::llm_foundry::launcher_handle)),
                      Contains("model.rope.theta=10000 (the published model's: 500000)") && Contains("meta-llama/Llama-3.1-8B"));
    // a file of llm-foundry's own without `pretrained` loads the weights (BaseHuggingFaceModel's default: True)
    j.model = preset("llama-3.1-8b");
    j.training.finetune = {};
    yaml = file(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::llm_foundry::launcher_handle)), "train.yaml").content;
    CHECK(llm_foundry_import_yaml(yaml, o).job.training.finetune.method == finetune_method::none);
    yaml.erase(yaml.find("  pretrained: false\n"), 20);
    CHECK(llm_foundry_import_yaml(yaml, o).job.training.finetune.method == finetune_method::full);
}

TEST_CASE("torchtune round trip: full, LoRA and QLoRA, FSDP2 sharding or one GPU, checkpointing, offload, precisions") {
    // torchtune.yaml states the model by its builder (torchtune.models.llama3_1.lora_llama3_1_8b), the method by the
    // builder's prefix, the adapters by lora_*, the batch by batch_size x gradient_accumulation_steps x world size
    // and the budget by max_steps_per_epoch (500 steps of base_job).
    for (const char* name : {"llama-3.1-8b", "qwen2.5-7b"}) {
        for (const auto m : {finetune_method::full, finetune_method::lora, finetune_method::qlora}) {
            if (m == finetune_method::qlora && std::string(name) == "qwen2.5-7b") continue;  // no qlora_ builder
            auto j = base_job(name, 4096, 64);
            j.runtime.framework = frameworks::torchtune::handle;
            j.training.precision = precision::bf16;
            j.training.micro_batch = 2;
            j.training.finetune.method = m;
            if (m != finetune_method::full)
                j.training.finetune = {.method = m, .rank = 16, .alpha = 32, .targets = 127, .dropout = 0.05};
            j.parallel = {.dp = 16, .sharding = sharding::full, .recompute = recompute::full};
            check_roundtrip(j, frameworks::torchtune::launcher_handle);
            j.parallel = {.dp = 8, .sharding = sharding::gradients};
            j.runtime.compile = true;
            j.runtime.loss_chunks = 8;
            check_roundtrip(j, frameworks::torchtune::launcher_handle);
            j.parallel = {.dp = 1, .recompute = recompute::full};
            j.runtime.offload.activations = true;
            j.training.precision = precision::fp32;
            check_roundtrip(j, frameworks::torchtune::launcher_handle);
        }
    }
    // LoRA on attention only (lora_attn_modules q_proj, v_proj; apply_lora_to_mlp False), FSDP CPU offload
    auto j = base_job("llama-3.2-3b", 2048, 32);
    j.runtime.framework = frameworks::torchtune::handle;
    j.training.precision = precision::bf16;
    j.training.finetune = {.method = finetune_method::lora, .rank = 8, .alpha = 16, .targets = lora_q | lora_v};
    j.parallel = {.dp = 4, .sharding = sharding::full, .recompute = recompute::full};
    j.runtime.offload = {.optimizer = true, .parameters = true};
    check_roundtrip(j, frameworks::torchtune::launcher_handle);
    // full fine-tune with the optimizer in backward (one micro-batch per step)
    j = base_job("llama-3.2-1b", 2048, 8);
    j.runtime.framework = frameworks::torchtune::handle;
    j.training.precision = precision::bf16;
    j.training.finetune.method = finetune_method::full;
    j.parallel = {.dp = 8, .sharding = sharding::full};
    j.runtime.optimizer = optimizer_impl::in_backward;
    check_roundtrip(j, frameworks::torchtune::launcher_handle);
}

TEST_CASE("torchtune.yaml read back: a builder Frenzy does not know, a model beside it that contradicts, bad values") {
    CHECK_THROWS_WITH(torchtune_import_yaml("model:\n  _component_: torchtune.models.llama4.llama4_scout_17b_16e\n"),
                      Catch::Contains("model._component_=torchtune.models.llama4.llama4_scout_17b_16e"));
    import_options o;
    o.model = preset("llama-3.1-70b");
    CHECK_THROWS_WITH(torchtune_import_yaml("model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n", o),
                      Catch::Contains("contradicts the model given beside the file"));
    CHECK_THROWS_WITH(torchtune_import_yaml("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\ndtype: fp16\n"),
                      Catch::Contains("dtype=fp16"));
    CHECK_THROWS_WITH(torchtune_import_yaml("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\nbatch_size: 2\nbatch_size: 4\n"),
                      Catch::Contains("batch_size is given twice"));
    // without a world size: one GPU, no sharding; the loss's default num_output_chunks is 8
    const auto r = torchtune_import_yaml("model:\n  _component_: torchtune.models.llama3_2.llama3_2_3b\nloss:\n"
                                         "  _component_: torchtune.modules.loss.LinearCrossEntropyLoss\n");
    CHECK(r.job.model.name == "llama-3.2-3b");
    CHECK(r.job.parallel.dp == 1);
    CHECK(r.job.parallel.sharding == sharding::none);
    CHECK(r.job.runtime.loss_chunks == 8);
    CHECK(r.job.training.precision == precision::bf16);
}

TEST_CASE("llm-foundry train.yaml without a model beside it: the MPT it describes, and contradictions are errors") {
    auto j = base_job("llama-3.1-8b", 4096, 128);
    j.runtime.framework = frameworks::llm_foundry::handle;
    j.parallel = {.dp = 8, .sharding = sharding::full};
    const auto yaml = file(launch_files(j, plan_for(j, "h100-80g", 8), opts(frameworks::llm_foundry::launcher_handle)), "train.yaml").content;
    import_options o;
    o.world_size = 8;
    const auto r = llm_foundry_import_yaml(yaml, o);
    const auto& m = r.job.model;
    CHECK(m.layers == 32);
    CHECK(m.hidden == 4096);
    CHECK(m.heads == 32);
    CHECK(m.kv() == 8);
    CHECK(m.ffn_hidden == 14336);
    CHECK(m.vocab == 128256);
    CHECK(m.activation == activation::swiglu);
    CHECK(m.norm == norm_kind::rmsnorm);
    CHECK(m.position_embedding == position_embedding::rope);
    CHECK_FALSE(m.tied_embeddings);
    CHECK_FALSE(m.bias);
    // the same parameters as the preset: the MPT written is the model planned
    CHECK(total_parameters(m, 4096) == total_parameters(j.model, 4096));
    CHECK(r.job.training.total_tokens == j.training.total_tokens);
    CHECK(r.job.training.global_batch == 128);
    o.model = preset("llama-3.1-70b");
    CHECK_THROWS_WITH(llm_foundry_import_yaml(yaml, o), Catch::Matchers::Contains("model.n_layers=32 contradicts the model given beside the file (80)"));
    o.model = {};
    o.world_size = 3;  // 128 sequences do not split over 3 GPUs
    CHECK_THROWS_WITH(llm_foundry_import_yaml(yaml, o), Catch::Matchers::Contains("global_train_batch_size=128 is not a multiple"));
    CHECK_THROWS_WITH(llm_foundry_import_yaml("model: {d_model: 64}\n", {}), Catch::Matchers::Contains("model needs d_model, n_heads, n_layers and vocab_size"));
    CHECK_THROWS_WITH(llm_foundry_import_yaml("precision: amp_bf17\nmodel: {d_model: 64, n_heads: 4, n_layers: 2, vocab_size: 100}\n", {}),
                      Catch::Matchers::Contains("precision=amp_bf17 must be amp_bf16"));
    CHECK_THROWS_WITH(llm_foundry_import_yaml("a: 1\na: 2\n", {}), Catch::Matchers::Contains("llm-foundry train.yaml: a is given twice"));
    CHECK_THROWS_WITH(llm_foundry_import_yaml("max_duration: ${variables.steps}\nmodel: {d_model: 64, n_heads: 4, n_layers: 2, vocab_size: 100}\n", {}),
                      Catch::Matchers::Contains("names variables.steps, which the file does not set"));
}
#endif

TEST_CASE("launch() plans with the launcher's frameworks and its files import back to the planned job") {
    auto j = base_job("llama-3.1-8b", 4096, 256);
    cluster_spec c;
    c.nodes.push_back({"h100", "h100-80g", 8, 4, 0});
    for (auto l : {frameworks::megatron::launcher_handle, frameworks::torchtitan::launcher_handle, frameworks::deepspeed::launcher_handle, frameworks::fsdp::launcher_handle})
        for (std::size_t n : {0u, 1u}) {
            INFO("launcher " << to_string(l) << " plan " << n);
            const auto r = launch(j, c, opts(l, n));
            const auto fw = launcher_frameworks(l);
            CHECK(std::find(fw.begin(), fw.end(), r.plan.framework) != fw.end());
            CHECK(r.job.parallel == r.plan.parallel);
            check_roundtrip(r.job, l);
        }
}

TEST_CASE("launch() plans a torchtune LoRA job within its rules (FSDP2 data parallel, pure bf16) and it imports back") {
    auto j = base_job("llama-3.1-8b", 4096, 64);
    j.training.precision = precision::bf16;
    j.training.finetune = {.method = finetune_method::lora, .rank = 16, .targets = 127};
    cluster_spec c;
    c.nodes.push_back({"h100", "h100-80g", 8, 4, 0});
    for (std::size_t n : {0u, 1u}) {
        INFO("plan " << n);
        const auto r = launch(j, c, opts(frameworks::torchtune::launcher_handle, n));
        CHECK(r.plan.framework == frameworks::torchtune::handle);
        if (n == 0) CHECK(r.plan.gpus > 1);  // objective time: FSDP2 over several GPUs beats one
        CHECK(r.job.parallel.tp == 1);
        CHECK(r.job.parallel.pp == 1);
        CHECK((r.job.parallel.sharding != sharding::none) == (r.job.parallel.gpus() > 1));
#ifdef FRENZY_HAS_YAML
        check_roundtrip(r.job, frameworks::torchtune::launcher_handle);
#endif
    }
}

TEST_CASE("launch() plans a 70B LoRA on 8 H100s with the hf launcher: a sharded plan that imports back") {
    // LoRA's frozen bf16 base alone is 141 GB (70.6 B parameters x 2 B): no unsharded layout fits 80 GB, so before
    // the sharded back ends the hf framework had no plan here.
    auto j = base_job("llama-3.1-70b", 4096, 16);
    j.runtime.framework = frameworks::hf::handle;
    j.training.finetune = {.method = finetune_method::lora, .rank = 16};
    cluster_spec c;
    c.nodes.push_back({"h100", "h100-80g", 8, 1, 0});
    const auto r = launch(j, c, opts(frameworks::hf::launcher_handle));
    CHECK(r.plan.framework == frameworks::hf::handle);
    CHECK(r.plan.gpus == 8);
    CHECK(r.job.parallel.sharding == sharding::full);  // FSDP2: the only back end that shards the frozen weights
    CHECK(file(r.files, "accelerate_config.yaml").content.find("distributed_type: FSDP\n") != std::string::npos);
    check_roundtrip(r.job, frameworks::hf::launcher_handle);
}
