#pragma once
// torchtitan's launcher (runs FSDP2 plans, with tp, pp and cp as torchtitan allows): a recipe module returning
// Trainer.Config (pytorch/torchtitan@b5bcd76c torchtitan/config/README.md, configs.py, trainer.py,
// distributed/activation_checkpoint.py, components/quantization/float8.py; torchtitan no longer reads TOML job
// files, runs are `--module M --config F`; every field written is listed in tests/data/launch/torchtitan_fields.txt),
// and such a recipe read back (frameworks/torchtitan/import.hpp).
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "frenzy/frameworks/torchtitan/import.hpp"
#include "frenzy/io/file.hpp"
#include "frenzy/launch/launcher.hpp"
#include "frenzy/frameworks/fsdp/traits.hpp"
#include "frenzy/model/presets.hpp"

namespace frenzy::frameworks::torchtitan {

/// A torchtitan base recipe MODULE:FUNCTION, each part Python identifiers (the module dotted), as the recipe's
/// import line needs: anything else would be written into Python code. Returns the colon's position.
inline std::size_t check_recipe_reference(const std::string& base) {
    const auto colon = base.find(':');
    const auto identifiers = [](std::string_view s, bool dotted) {
        std::size_t start = 0;
        while (true) {
            const auto dot = dotted ? s.find('.', start) : std::string_view::npos;
            const auto part = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
            if (part.empty() || (part[0] >= '0' && part[0] <= '9') ||
                !std::all_of(part.begin(), part.end(), [](char c) { return word_char(c, "_"); }))
                return false;
            if (dot == std::string_view::npos) return true;
            start = dot + 1;
        }
    };
    const std::string_view b(base);
    if (colon == std::string::npos || !identifiers(b.substr(0, colon), true) || !identifiers(b.substr(colon + 1), false))
        throw field_error("launch_options::base_config", base,
                          "must be MODULE:FUNCTION of Python identifiers, e.g. torchtitan.models.llama3.config_registry:llama3_8b "
                          "(--torchtitan-base)");
    return colon;
}

/// torchtitan's own recipes for Frenzy's presets whose architecture they build (pytorch/torchtitan@b5bcd76c
/// torchtitan/models/*/config_registry.py; the DeepSeek "16B" flavor is DeepSeek-V2-Lite: 27 layers, width 2048,
/// 64 experts of 1408 + 2 shared, top 6, MLA with kv_lora_rank 512 and a full-rank q, models/deepseek_v3/__init__.py).
inline constexpr std::pair<std::string_view, std::string_view> own_recipes[] = {
    {"llama-3.1-8b", "torchtitan.models.llama3.config_registry:llama3_8b"},
    {"llama-3.1-70b", "torchtitan.models.llama3.config_registry:llama3_70b"},
    {"llama-3.1-405b", "torchtitan.models.llama3.config_registry:llama3_405b"},
    {"qwen3-1.7b", "torchtitan.models.qwen3.config_registry:qwen3_1_7b"},
    {"deepseek-v2-lite", "torchtitan.models.deepseek_v3.config_registry:deepseek_v3_16b"},
    {"deepseek-v3", "torchtitan.models.deepseek_v3.config_registry:deepseek_v3_671b"},
};

/// torchtitan's own recipe for a model preset, or "" when it has none.
inline std::string base_for(const transformer_spec& m) {
    for (const auto& [name, recipe] : own_recipes)
        if (m.name == name) return std::string(recipe);
    return "";
}

/// The recipe a job starts from: the one given (launch_options::base_config), else torchtitan's own for the
/// model; a model torchtitan has no recipe for is refused, never launched as another model.
inline std::string base_recipe_for(const job_spec& j, const std::string& given) {
    if (!given.empty()) return given;
    auto base = base_for(j.model);
    if (base.empty()) {
        std::string known;
        for (const auto& [name, recipe] : own_recipes) known += (known.empty() ? "" : ", ") + std::string(name);
        throw config_error("model.name=\"" + j.model.name + "\": torchtitan (pytorch/torchtitan@b5bcd76c) has no recipe that builds "
                           "this model (it has recipes for " + known + "); give the recipe MODULE:FUNCTION of one that does "
                           "(launch_options::base_config, --torchtitan-base), or launch with another framework");
    }
    if (const auto d = published_difference(j.model, preset(j.model.name)); !d.empty())
        throw config_error(d + ": torchtitan's recipe " + base + " builds the published model; give a recipe of your own "
                           "(--torchtitan-base) for another");
    return base;
}

/// torchtitan's expert parallelism (ParallelismConfig.expert_parallel_degree, configs.py): ep borrows ranks from FSDP
/// and TP, so dp_shard x cp x tp must be a multiple of it, and the experts are not tensor-parallel (etp 1).
inline void check_expert_parallel(const parallel_config& p) {
    const bool shard = p.sharding == sharding::full || p.sharding == sharding::gradients;
    const auto dense = (shard ? p.dp : 1) * p.cp * p.tp;
    if (dense % p.ep != 0)
        throw config_error("parallel.ep=" + std::to_string(p.ep) + " must divide torchtitan's data_parallel_shard_degree x cp x tp = " +
                           std::to_string(dense) + " (expert_parallel_degree borrows FSDP and TP ranks; configs.py)");
    if (p.tp > 1 && p.etp != 1)
        throw config_error("parallel.etp=" + std::to_string(p.etp == 0 ? p.tp : p.etp) + " with parallel.tp=" + std::to_string(p.tp) +
                           ": torchtitan's experts are not tensor-parallel when expert parallelism is on (parallel.etp must be 1)");
}

/// What the recipe cannot express (config_error naming the field).
inline void check_writable(const job_spec& j) {
    const auto& t = j.training;
    const auto& p = j.parallel;
    if (t.precision == precision::fp16_mixed)
        throw config_error("training.precision=\"fp16-mixed\": torchtitan's training.mixed_precision_param is bfloat16 or float32");
    if (t.precision == precision::fp4_mixed) throw config_error("training.precision=\"fp4-mixed\" is not written by frenzy launch for torchtitan");
    if (j.runtime.offload.any()) throw config_error("runtime.offload: torchtitan offloads only whole FSDP states (training.enable_cpu_offload); not written by frenzy launch");
    if (t.optimizer != optimizer_kind::adamw && t.optimizer != optimizer_kind::adam)
        throw config_error("training.optimizer=\"" + std::string(to_string(t.optimizer)) + "\": the torchtitan recipe keeps its base recipe's AdamW");
    if (p.vpp > 1) throw config_error("parallel.vpp=" + std::to_string(p.vpp) + ": frenzy writes torchtitan pipelines without virtual stages");
    // torchtitan/components/quantization: Float8LinearConverter takes recipe_name "rowwise" or "rowwise_with_gw_hp",
    // MXFP8LinearConverter is torchao's MXFP8 (MX block scaling)
    if (j.runtime.fp8_recipe && *j.runtime.fp8_recipe != fp8_recipe::rowwise && *j.runtime.fp8_recipe != fp8_recipe::mxfp8)
        throw config_error("runtime.fp8_recipe=\"" + std::string(to_string(*j.runtime.fp8_recipe)) +
                           "\": torchtitan's converters run \"rowwise\" (Float8LinearConverter) or \"mxfp8\" (MXFP8LinearConverter)");
    if (p.ep > 1) check_expert_parallel(p);
}

/// The recipe's config.parallelism lines.
inline std::string parallelism_lines(const job_spec& j) {
    const auto& p = j.parallel;
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    std::string s;
    const bool shard = p.sharding == sharding::full || p.sharding == sharding::gradients;
    s += "    config.parallelism.data_parallel_replicate_degree = " + n(shard ? 1 : p.dp) + "\n";
    s += "    config.parallelism.data_parallel_shard_degree = " + n(shard ? p.dp : 1) + "\n";
    if (shard) s += std::string("    config.parallelism.fsdp_reshard_after_forward = \"") + (p.sharding == sharding::full ? "always" : "never") + "\"\n";
    s += "    config.parallelism.tensor_parallel_degree = " + n(p.tp) + "\n";
    s += std::string("    config.parallelism.enable_sequence_parallel = ") + (p.sequence_parallel ? "True" : "False") + "\n";
    s += "    config.parallelism.pipeline_parallel_degree = " + n(p.pp) + "\n";
    if (p.pp > 1) {
        s += std::string("    config.parallelism.pipeline_parallel_schedule = \"") + (p.schedule == pipeline_schedule::gpipe ? "GPipe" : "1F1B") + "\"\n";
        s += "    config.parallelism.num_pp_microbatches = " + n(j.micro_batches()) + "\n";
    }
    s += "    config.parallelism.context_parallel_degree = " + n(p.cp) + "\n";
    if (p.ep > 1) s += "    config.parallelism.expert_parallel_degree = " + n(p.ep) + "\n";
    return s;
}

/// The recipe's config.training, activation-checkpoint and compile lines.
inline std::string training_lines(const job_spec& j) {
    const auto& t = j.training;
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    std::string s;
    s += "    config.training.max_context_length = " + n(t.seq_len) + "\n";
    s += "    config.training.num_tokens_per_microbatch_per_dp_rank = " + n(t.micro_batch * t.seq_len) + "\n";
    s += "    config.training.num_tokens_per_train_step = " + n(t.global_batch * t.seq_len) + "\n";
    if (const auto steps = train_steps(j); steps > 0) {
        s += "    config.training.steps = " + n(steps) + "\n";
    }
    if (t.precision == precision::bf16) s += "    config.training.dtype = \"bfloat16\"\n";
    else s += std::string("    config.training.mixed_precision_param = \"") + (t.precision == precision::fp32 ? "float32" : "bfloat16") + "\"\n";
    switch (j.parallel.recompute) {
        case recompute::none: s += "    config.activation_checkpoint = None\n"; break;
        case recompute::selective: s += "    config.activation_checkpoint = SelectiveAC.Config()\n"; break;
        case recompute::full: s += "    config.activation_checkpoint = FullAC.Config()\n"; break;
    }
    s += std::string("    config.compile.enable = ") + (j.runtime.compile ? "True" : "False") + "\n";
    return s;
}

/// A full fine-tune starts from the published weights, a local Hugging Face snapshot (safetensors) named by
/// $HF_MODEL_DIR, loaded once while the checkpoint folder is empty and converted by the model's state-dict adapter
/// (torchtitan@b5bcd76c components/checkpointer/base.py Config: initial_load_path absolute, initial_load_in_hf
/// needs initial_load_model_only; trainer.py: hf_assets_path holds the tokenizer and the adapter's config).
inline std::string pretrained_lines(const transformer_spec& m) {
    const auto repo = published_repository(m.name);
    return "    # fine-tune: the published weights" + (repo.empty() ? std::string() : " (" + std::string(repo) + ")") +
           ", a local snapshot given as $HF_MODEL_DIR (its tokenizer too)\n"
           "    config.checkpoint.initial_load_path = os.environ[\"HF_MODEL_DIR\"]\n"
           "    config.checkpoint.initial_load_in_hf = True\n"
           "    config.checkpoint.initial_load_model_only = True\n";
}

/// The settings line of a fine-tune: the snapshot's absolute path, required (torchtitan loads no Hub id).
inline std::string pretrained_setting(const transformer_spec& m) {
    const auto repo = std::string(published_repository(m.name));
    return "export HF_MODEL_DIR=\"${HF_MODEL_DIR:?set HF_MODEL_DIR to the absolute path of a local snapshot of the published "
           "weights" + (repo.empty() ? std::string() : " (huggingface-cli download " + repo + " --local-dir DIR)") + "}\"\n";
}

/// The settings block of the batch script, which the recipe reads (settings_lines): the data, the tokenizer, the
/// output and checkpoint folders and the save interval, each with its default or a stop naming it. Without them the
/// recipe would keep its base's: C4 streamed from the Hub, a tokenizer folder relative to the submit directory and
/// checkpointing off, so that a requeued run started over (torchtitan@b5bcd76c models/llama3/config_registry.py
/// llama3_8b, components/checkpointer/base.py Config.enable False).
inline std::string settings(const job_spec& j, const launch_options& o) {
    std::string s = "# Settings: give them in sbatch's environment (DATA=/data/shard-*.jsonl sbatch launch.sbatch) or edit them "
                    "here; frenzy_torchtitan.py reads them.\n";
    s += "export DATA=\"${DATA:-c4}\"  # a dataset of torchtitan's DATASETS (c4: allenai/c4 streamed from the Hub), or local "
         "JSON-lines files (a path or glob) with a \"text\" column\n";
    const auto repo = std::string(published_repository(j.model.name));
    if (j.training.finetune.pretrained()) {
        s += pretrained_setting(j.model);
        s += "export TOKENIZER_DIR=\"${TOKENIZER_DIR:-$HF_MODEL_DIR}\"  # the model's Hugging Face tokenizer files\n";
    } else {
        s += "export TOKENIZER_DIR=\"${TOKENIZER_DIR:?set TOKENIZER_DIR to the absolute path of the model's Hugging Face tokenizer "
             "files (torchtitan's scripts/download_hf_assets.py --repo_id " + (repo.empty() ? std::string("REPO") : repo) +
             " --assets tokenizer --local_dir DIR)}\"\n";
    }
    s += "export OUTPUT_DIR=\"${OUTPUT_DIR:-$LAUNCH_DIR/outputs}\"  # torchtitan's dump folder: logs and traces\n";
    s += "export CHECKPOINT_DIR=\"${CHECKPOINT_DIR:-$LAUNCH_DIR/checkpoints}\"  # saved to; a requeued run resumes from its newest step\n";
    s += "export SAVE_INTERVAL=\"${SAVE_INTERVAL:-" + std::to_string(save_interval_steps(j, o)) + "}\"  # optimizer steps between "
         "checkpoints" + save_interval_note(j, o) + "\n";
    return s;
}

/// The recipe's lines that read the settings block (settings): torchtitan resumes from the newest step in
/// checkpoint.folder (an absolute folder is kept as it is: torchtitan/tools/filesystem.py join).
inline std::string settings_lines() {
    return "    # the settings of launch.sbatch\n"
           "    config.hf_assets_path = os.environ[\"TOKENIZER_DIR\"]\n"
           "    config.dump_folder = os.environ[\"OUTPUT_DIR\"]\n"
           "    config.dataloader.dataset = dataclasses.replace(config.dataloader.dataset, dataset=frenzy_dataset(os.environ[\"DATA\"]))\n"
           "    config.checkpoint.enable = True\n"
           "    config.checkpoint.folder = os.environ[\"CHECKPOINT_DIR\"]\n"
           "    config.checkpoint.interval = int(os.environ[\"SAVE_INTERVAL\"])\n";
}

/// The recipe's dataset of $DATA: one of torchtitan's DATASETS by name, else local JSON-lines files read as C4's are
/// (its text processor and filters; hf_datasets/text_datasets.py, components/data/sources.py
/// HuggingFaceRandomAccessSource: load_dataset("json", data_files=...)).
inline std::string dataset_function() {
    return "def frenzy_dataset(data: str):\n"
           "    \"\"\"$DATA: a dataset of torchtitan's DATASETS by name, or local JSON-lines files with a \"text\" column.\"\"\"\n"
           "    if data in DATASETS:\n"
           "        return DATASETS[data]\n"
           "    return dataclasses.replace(DATASETS[\"c4\"], source=HuggingFaceRandomAccessSource.Config(\n"
           "        path=\"json\", split=\"train\", load_dataset_kwargs={\"data_files\": data}))\n\n\n";
}

/// torchtitan recipe module: a function returning Trainer.Config, derived from a base recipe (`base0`, or when it is
/// empty torchtitan's own recipe for the model: base_recipe_for).
inline std::string recipe(const job_spec& j, const std::string& base0) {
    check_writable(j);
    const std::string base = base_recipe_for(j, base0);
    const bool fp8 = j.training.precision == precision::fp8_mixed;
    const auto colon = check_recipe_reference(base);
    std::string s;
    s += "# torchtitan recipe written by `frenzy launch` for job \"" + j.name + "\".\n";
    s += "# Run: torchrun ... -m torchtitan.train --module frenzy_torchtitan --config frenzy_plan\n";
    s += "# Fields as pytorch/torchtitan@b5bcd76c torchtitan/config/configs.py and trainer.py define them.\n";
    s += "import dataclasses\nimport os\n\n";
    s += "from torchtitan.components.data.sources import HuggingFaceRandomAccessSource\n";
    s += "from torchtitan.distributed.activation_checkpoint import FullAC, SelectiveAC\n";
    const bool mx = fp8 && j.runtime.fp8_recipe == fp8_recipe::mxfp8;
    const std::string converter = mx ? "MXFP8LinearConverter" : "Float8LinearConverter";
    if (fp8) s += "from torchtitan.components.quantization import " + converter + "\n";
    s += "from torchtitan.trainer import Trainer\n";
    s += "from torchtitan.hf_datasets.text_datasets import DATASETS\n";
    s += "from " + base.substr(0, colon) + " import " + base.substr(colon + 1) + " as base_recipe\n\n\n";
    s += dataset_function();
    s += "def frenzy_plan() -> Trainer.Config:\n";
    s += "    config = base_recipe()  # the model: " + j.model.name + "\n";
    s += parallelism_lines(j) + training_lines(j);
    if (fp8) {  // float8 is a model converter (llama3_debugmodel_float8 in config_registry.py)
        const std::string mod = base.substr(0, colon);
        const auto dot = mod.rfind(".config_registry");
        s += "    from " + (dot == std::string::npos ? mod : mod.substr(0, dot)) + " import model_registry\n\n";
        const std::string recipe_name = j.runtime.fp8_recipe == fp8_recipe::rowwise ? "recipe_name=\"rowwise\", " : "";
        s += "    config.model_spec = model_registry(config.model_spec.flavor, converters=[" + converter + ".Config(" +
             recipe_name + "model_compile_enabled=" + (j.runtime.compile ? "True" : "False") + ")])\n";
    }
    s += settings_lines();
    if (j.training.finetune.pretrained()) s += pretrained_lines(j.model);
    s += "    return config\n";
    return s;
}

/// frenzy_torchtitan.py, started as torchtitan.train's module.
inline launcher_payload payload(const job_spec& j, const launch_options& o) {
    launcher_payload out;
    out.files.push_back({"frenzy_torchtitan.py", recipe(j, o.base_config)});
    out.preamble = settings(j, o);
    out.torchrun_target = o.run_command.empty() ? std::string("-m torchtitan.train --module frenzy_torchtitan --config frenzy_plan")
                                                : o.run_command;
    return out;
}

inline launcher_import import_file(const std::string& path, const import_options& o) {
    return torchtitan_import_text(read_file_limited(path), o);
}

inline constexpr launcher_traits launch_traits{
    .name = "torchtitan",
    .summary = "torchtitan (FSDP2 + tp/pp/cp): a recipe module for torchtitan.train",
    .runs = {&fsdp::traits},
    .inferred = false,
    .payload = payload,
    .config_example = "recipe.py",
    .import_file = import_file,
    .methods = method_bits({finetune_method::none, finetune_method::full}),
};

/// This launcher as launch options name it: a handle to `launch_traits` (frameworks/launchers.hpp lists it).
inline constexpr launcher launcher_handle{launch_traits};

}  // namespace frenzy::frameworks::torchtitan
