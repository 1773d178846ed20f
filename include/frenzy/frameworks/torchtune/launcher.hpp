#pragma once
// The torchtune launcher: torchtune.yaml, a recipe config in the keys the recipes read (pytorch/torchtune@bd2a0fc7
// recipes/{full,lora}_finetune_{distributed,single_device}.py: cfg.get / cfg.<key>) and the components' arguments
// as torchtune's own configs spell them (recipes/configs/**/*.yaml), and `tune run` in the batch script:
// `tune run [torchrun options] RECIPE --config FILE key=value...` (torchtune/_cli/run.py: torchrun's arguments,
// then the recipe; without them one process runs the single-device recipe). Every key written is in
// tests/data/launch/torchtune_keys.txt, read from that code by tests/data/launch/extract_framework_keys.py. The
// run's settings (checkpoint folder and files, tokenizer, data, output folder, learning rate) are environment
// variables of the batch script handed to the recipe as OmegaConf overrides.
#include <string>

#include "frenzy/frameworks/torchtune/models.hpp"
#include "frenzy/frameworks/torchtune/traits.hpp"
#include "frenzy/io/file.hpp"
#ifdef FRENZY_HAS_YAML
#include "frenzy/frameworks/torchtune/import.hpp"
#endif
#include "frenzy/launch/launcher.hpp"
#include "frenzy/memory/framework_profile.hpp"
#include "frenzy/model/presets.hpp"

namespace frenzy::frameworks::torchtune {

/// The builder of the job's model: a preset torchtune builds, of the preset's shape; config_error naming the model
/// otherwise (never another model in its place).
inline builder_entry builder_of(const job_spec& j) {
    const auto& m = j.model;
    const auto b = find_builder(m.name);
    if (!b)
        throw config_error("model \"" + printable(m.name, 80) + "\" has no torchtune model builder (torchtune.models.*: "
                           "Llama 2/3.1/3.2, Mistral 7B, Gemma 2B, Gemma 2 9B, Qwen2.5, Qwen3 1.7B presets)");
    const auto& p = preset(m.name);
    if (m.layers != p.layers || m.hidden != p.hidden || m.heads != p.heads || m.kv() != p.kv() ||
        m.ffn_hidden != p.ffn_hidden || m.vocab != p.vocab)
        throw config_error("model \"" + printable(m.name, 80) + "\" is not the shape of the preset torchtune's " +
                           std::string(b->builder) + " builds (layers, hidden, heads, kv heads, ffn or vocabulary differ)");
    if (const auto d = published_difference(m, p); !d.empty())
        throw config_error(d + ": torchtune's " + std::string(b->builder) + " builds the published model only");
    if (j.training.finetune.method == finetune_method::qlora && !b->qlora)
        throw config_error("training.finetune.method=\"qlora\": torchtune.models." + std::string(b->family) +
                           " has no qlora_" + std::string(b->builder) + " builder (LoRA: method \"lora\")");
    return *b;
}

/// The model block: the builder and, for adapters, its LoRA arguments (lora_attn_modules of q_proj, k_proj, v_proj,
/// output_proj; apply_lora_to_mlp adapts w1, w2 and w3 together: modules/peft/lora.py builders in _component_builders).
inline std::string model_yaml(const job_spec& j, const builder_entry& b) {
    const auto& ft = j.training.finetune;
    if (ft.method == finetune_method::freeze || ft.frozen_layers > 0)
        throw config_error("training.finetune.frozen_layers: torchtune's recipes train every layer or LoRA adapters");
    const char* prefix = ft.method == finetune_method::qlora ? "qlora_" : ft.adapters() ? "lora_" : "";
    std::string s = "model:\n  _component_: torchtune.models." + std::string(b.family) + "." + prefix + std::string(b.builder) + "\n";
    if (!ft.adapters()) return s;
    const unsigned mlp = lora_gate | lora_up | lora_down;
    if ((ft.targets & mlp) != 0 && (ft.targets & mlp) != mlp)
        throw config_error("training.finetune.targets: torchtune adapts the MLP's gate, up and down projections together "
                           "(apply_lora_to_mlp); name all three or none");
    std::string attn;
    for (const auto& [bit, name] : {std::pair{lora_q, "q_proj"}, {lora_k, "k_proj"}, {lora_v, "v_proj"}, {lora_o, "output_proj"}})
        if (ft.targets & bit) attn += std::string(attn.empty() ? "" : ", ") + "'" + name + "'";
    if (attn.empty()) throw config_error("training.finetune.targets: torchtune's lora_attn_modules needs at least one attention projection");
    s += "  lora_attn_modules: [" + attn + "]\n  apply_lora_to_mlp: " + ((ft.targets & mlp) ? "True" : "False") +
         "\n  apply_lora_to_output: False\n  lora_rank: " + std::to_string(ft.rank) + "\n  lora_alpha: " +
         number_text(ft.alpha) + "\n  lora_dropout: " + number_text(ft.dropout) + "\n";
    return s;
}

/// The recipe the job runs: distributed (FSDP2) or single device, full or LoRA (QLoRA is the LoRA recipe).
inline std::string recipe_of(const job_spec& j) {
    return std::string(j.training.finetune.adapters() ? "lora_finetune_" : "full_finetune_") +
           (j.parallel.gpus() > 1 ? "distributed" : "single_device");
}

/// The optimizer block: torch.optim.AdamW as torchtune's configs build it (fused=True), or bitsandbytes' AdamW8bit.
inline std::string optimizer_yaml(const job_spec& j) {
    const auto o = j.training.optimizer;
    if (o == optimizer_kind::adamw_8bit) return "optimizer:\n  _component_: bitsandbytes.optim.AdamW8bit\n  lr: 2e-5\n";
    if (o != optimizer_kind::adamw && o != optimizer_kind::adam)
        throw config_error("training.optimizer=\"" + std::string(to_string(o)) + "\" is not written by the torchtune launcher "
                           "(AdamW, fused as torchtune's configs build it, or adamw-8bit)");
    const bool fused = j.runtime.optimizer != optimizer_impl::foreach;
    return "optimizer:\n  _component_: torch.optim.AdamW\n  fused: " + std::string(fused ? "True" : "False") +
           "\n  weight_decay: 0.01\n  lr: 2e-5\n";
}

/// What the recipe's own keys say about memory: precision, sharding, checkpointing, offload, compile, the loss.
inline std::string memory_keys(const job_spec& j) {
    const auto& p = j.parallel;
    const auto& rt = j.runtime;
    std::string s = "dtype: " + std::string(j.training.precision == precision::fp32 ? "fp32" : "bf16") + "\n";
    s += "enable_activation_checkpointing: " + std::string(p.recompute == recompute::full ? "True" : "False") + "\n";
    if (rt.offload.activations && p.recompute != recompute::full)
        throw config_error("runtime.offload.activations: torchtune's enable_activation_offloading needs "
                           "enable_activation_checkpointing (parallel.recompute=\"full\"); the recipes raise otherwise");
    s += "enable_activation_offloading: " + std::string(rt.offload.activations ? "True" : "False") + "\n";
    s += "compile: " + std::string(rt.compile ? "True" : "False") + "\n";
    if (p.gpus() > 1)
        s += "fsdp_reshard_after_forward: " + std::string(p.sharding == sharding::gradients ? "False" : "True") +
             "\nfsdp_cpu_offload: " + (rt.offload.parameters ? "True" : "False") + "\n";
    if (rt.optimizer == optimizer_impl::in_backward) {
        if (j.training.finetune.adapters())
            throw config_error("runtime.optimizer_impl=\"in-backward\": torchtune's LoRA recipes have no optimizer_in_bwd");
        if (j.training.global_batch != j.training.micro_batch * p.dp)
            throw config_error("runtime.optimizer_impl=\"in-backward\": torchtune's optimizer_in_bwd needs "
                               "gradient_accumulation_steps 1 (training.global_batch = micro_batch x dp)");
        s += "optimizer_in_bwd: True\n";
    }
    if (rt.loss && *rt.loss != loss_style::upcast_log_softmax)
        throw config_error("runtime.loss=\"" + std::string(to_string(*rt.loss)) + "\": torchtune's losses upcast the logits "
                           "(F.cross_entropy(logits.float())): runtime.loss \"upcast\"");
    // LinearCrossEntropyLoss computes each chunk's logits in the loss; CEWithChunkedOutputLoss takes the model's
    // chunked 16-bit logits (all of them alive at once), which is what loss_style::upcast_log_softmax counts.
    s += "loss:\n  _component_: torchtune.modules.loss." +
         std::string(rt.loss_chunks > 1 ? "CEWithChunkedOutputLoss" : "LinearCrossEntropyLoss") +
         "\n  num_output_chunks: " + std::to_string(rt.loss_chunks) + "\n";
    return s;
}

/// torchtune.yaml: the recipe config of the job (paths come from the batch script's overrides).
inline std::string config_yaml(const job_spec& j, const launch_options& o) {
    const auto b = builder_of(j);
    const auto& t = j.training;
    const auto ga = t.global_batch / (t.micro_batch * j.parallel.dp);
    const auto steps = train_steps(j);
    std::string s = "# Written by frenzy launch for torchtune's " + recipe_of(j) + " recipe (pytorch/torchtune@bd2a0fc7).\n"
                    "# launch.sbatch passes the paths (checkpointer, tokenizer, dataset, output_dir) as overrides.\n";
    s += "output_dir: ./output\n";
    s += model_yaml(j, b);
    s += "tokenizer:\n  _component_: torchtune.models." + std::string(b.tokenizer) + "\n  path: ./tokenizer\n";
    if (b.merges) s += "  merges_file: ./merges.txt\n";
    s += "  max_seq_len: " + std::to_string(t.seq_len) + "\n";
    s += "checkpointer:\n  _component_: torchtune.training.FullModelHFCheckpointer\n  checkpoint_dir: ./model\n"
         "  checkpoint_files: [model.safetensors]\n  recipe_checkpoint: null\n  output_dir: ${output_dir}\n  model_type: " +
         std::string(b.model_type) + "\n";
    // the first run starts from MODEL_DIR; a requeued one resumes (launch.sbatch passes resume_from_checkpoint=True once
    // OUTPUT_DIR holds a step_N with recipe_state.pt, which the recipes write every save_every_n_steps)
    s += "resume_from_checkpoint: False\nsave_every_n_steps: " + std::to_string(save_interval_steps(j, o)) + "\n";
    s += "dataset:\n  _component_: torchtune.datasets.text_completion_dataset\n  source: text\n  column: text\n"
         "  split: train\n  packed: True\n";
    s += "seed: 17\nshuffle: True\n";
    s += optimizer_yaml(j);
    s += "lr_scheduler:\n  _component_: torchtune.training.lr_schedulers.get_cosine_schedule_with_warmup\n  num_warmup_steps: " +
         std::to_string(std::max<std::int64_t>(1, steps / 100)) + "\n";
    s += memory_keys(j);
    s += "batch_size: " + std::to_string(t.micro_batch) + "\ngradient_accumulation_steps: " + std::to_string(ga) + "\n";
    s += "epochs: 1\nmax_steps_per_epoch: " + (steps > 0 ? std::to_string(steps) : std::string("null")) + "\n";
    s += "clip_grad_norm: null\ndevice: cuda\n";
    s += "metric_logger:\n  _component_: torchtune.training.metric_logging.DiskLogger\n  log_dir: ${output_dir}/logs\n";
    s += "log_every_n_steps: 10\nlog_peak_memory_stats: True\nlog_level: INFO\n";  // cfg.log_level is read unguarded
    return s;
}

/// The settings block of the batch script: the overrides' values.
inline std::string settings(const job_spec& j) {
    const auto b = builder_of(j);
    std::string s = "# Settings: give them in sbatch's environment (LR=2e-5 sbatch launch.sbatch) or edit them here.\n";
    s += "MODEL_DIR=\"${MODEL_DIR:?set MODEL_DIR to the Hugging Face checkpoint folder of the planned model}\"\n";
    s += "CHECKPOINT_FILES=\"${CHECKPOINT_FILES:?set CHECKPOINT_FILES to its weight files as a list: [model-00001-of-00004.safetensors,...]}\"\n";
    s += "TOKENIZER=\"${TOKENIZER:?set TOKENIZER to the tokenizer file of the model (tokenizer.model or vocab.json)}\"\n";
    if (b.merges) s += "TOKENIZER_MERGES=\"${TOKENIZER_MERGES:?set TOKENIZER_MERGES to the tokenizer's merges.txt}\"\n";
    s += "DATA=\"${DATA:?set DATA to a Hugging Face dataset (load_dataset source) with a text column}\"\n";
    s += "OUTPUT_DIR=\"${OUTPUT_DIR:-$LAUNCH_DIR/output}\"\n";
    // torchtune@bd2a0fc7 training/checkpointing/_checkpointer.py: should_load_recipe_state loads the newest step_N or
    // epoch_N of output_dir (get_most_recent_checkpoint) and fails where there is none: True only once one is saved
    s += "RESUME=False  # a requeued run resumes from the newest checkpoint the recipe saved in OUTPUT_DIR\n"
         "if compgen -G \"$OUTPUT_DIR/*_*/recipe_state.pt\" > /dev/null; then RESUME=True; fi\n";
    s += "LR=\"${LR:-" + std::string(j.training.finetune.adapters() ? "3e-4" : "2e-5") + "}\"\n";
    if (train_steps(j) <= 0)
        s += "TRAIN_STEPS=\"${TRAIN_STEPS:?the job has no token budget: set TRAIN_STEPS (optimizer steps)}\"\n";
    return s;
}

inline launcher_payload payload(const job_spec& j, const launch_options& o) {
    if (auto why = rejects_layout(j.parallel, j.training); !why.empty()) throw config_error(why);
    if (auto why = rejects_offload(j.runtime.offload, j.parallel.sharding); !why.empty()) throw config_error(why);
    if (j.parallel.gpus() == 1 && j.parallel.sharding != sharding::none)  // (the planner never shards one GPU)
        throw config_error("parallel.sharding=\"" + std::string(to_string(j.parallel.sharding)) + "\" on one GPU: torchtune "
                           "runs one GPU with its single-device recipes, which shard nothing (parallel.sharding \"none\")");
    const auto b = builder_of(j);
    launcher_payload out;
    out.files.push_back({"torchtune.yaml", config_yaml(j, o)});
    out.preamble = settings(j);
    std::string target = (o.run_command.empty() ? recipe_of(j) : o.run_command) + " --config \"$LAUNCH_DIR/torchtune.yaml\"" +
                         " output_dir=\"$OUTPUT_DIR\" checkpointer.checkpoint_dir=\"$MODEL_DIR\""
                         " checkpointer.checkpoint_files=\"$CHECKPOINT_FILES\" tokenizer.path=\"$TOKENIZER\""
                         " dataset.source=\"$DATA\" optimizer.lr=\"$LR\" resume_from_checkpoint=\"$RESUME\"";
    if (b.merges) target += " tokenizer.merges_file=\"$TOKENIZER_MERGES\"";
    if (train_steps(j) <= 0) target += " max_steps_per_epoch=\"$TRAIN_STEPS\"";
    if (j.parallel.gpus() > 1) {
        out.runner = "tune run";  // torchrun's options, then the recipe (torchtune/_cli/run.py)
        out.torchrun_target = target;
    } else {
        out.command = "tune run " + target;  // no torchrun options: one process, the single-device recipe
    }
    return out;
}

/// torchtune.yaml -> job (frameworks/torchtune/import.hpp); the world size comes from beside the file (--world-size).
inline launcher_import import_file(const std::string& path, const import_options& o) {
#ifdef FRENZY_HAS_YAML
    return torchtune_import_yaml(read_file_limited(path), o);
#else
    (void)path;
    (void)o;
    throw config_error("reading torchtune.yaml needs Frenzy built with yaml-cpp (FRENZY_HAS_YAML)");
#endif
}

inline constexpr launcher_traits launch_traits{
    .name = "torchtune",
    .summary = "tune run of a torchtune fine-tuning recipe with torchtune.yaml (full, LoRA, QLoRA; FSDP2 or one GPU)",
    .runs = {&traits},
    .payload = payload,
    .describes_model = true,
    .config_example = "torchtune.yaml",
    .import_file = import_file,
    .methods = method_bits({finetune_method::full, finetune_method::lora, finetune_method::qlora}),
    .per_device_batches = true,  // batch_size per rank; tune run's --nproc_per_node x --nnodes gives the ranks
};

/// This launcher as launch options name it: a handle to `launch_traits` (frameworks/launchers.hpp lists it).
inline constexpr launcher launcher_handle{launch_traits};

}  // namespace frenzy::frameworks::torchtune
