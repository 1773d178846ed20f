#pragma once
// The LitGPT launcher: litgpt.yaml, the jsonargparse config of one LitGPT command (Lightning-AI/litgpt@26857050
// litgpt/__main__.py PARSER_DATA: `finetune_lora` for LoRA/QLoRA, `finetune_full` for a full fine-tune, `pretrain`
// for training from scratch),
// started as `python -m litgpt COMMAND --config litgpt.yaml` under the batch script's torchrun (Fabric runs in the
// torchelastic environment torchrun sets up, one process per GPU). Every key written is a parameter of the command's
// setup() (finetune/lora.py, pretrain.py) or a field of litgpt/args.py TrainArgs, listed in
// tests/data/launch/litgpt_keys.txt by tests/data/launch/extract_framework_keys.py. The values are numbers, booleans
// and names from closed sets (frameworks/litgpt/traits.hpp): nothing the user typed enters the file.
// devices x num_nodes in the file is the world size (dp); the batch script passes the allocation's split
// (--devices DP/NODES --num_nodes NODES) on the command line, which jsonargparse applies over the file.
#include <cmath>
#include <string>

#include "frenzy/frameworks/litgpt/traits.hpp"
#include "frenzy/io/file.hpp"
#ifdef FRENZY_HAS_YAML
#include "frenzy/frameworks/litgpt/import.hpp"
#endif
#include "frenzy/launch/launcher.hpp"
#include "frenzy/model/presets.hpp"

namespace frenzy::frameworks::litgpt {

/// Fabric's precision name (finetune/lora.py setup: "bf16-true", "bf16-mixed", "32-true"; Fabric's "16-mixed").
inline const char* precision_name(precision p) {
    switch (p) {
        case precision::bf16: return "bf16-true";
        case precision::bf16_mixed: return "bf16-mixed";
        case precision::fp16_mixed: return "16-mixed";
        case precision::fp32: return "32-true";
        default: break;
    }
    throw config_error("training.precision=\"" + std::string(to_string(p)) + "\" has no Fabric precision the litgpt launcher "
                       "writes (bf16-true, bf16-mixed, 16-mixed, 32-true)");
}

/// The optimizer as instantiate_torch_optimizer takes it (litgpt/utils.py: a torch.optim class name or a dotted path).
inline const char* optimizer_name(optimizer_kind o) {
    switch (o) {
        case optimizer_kind::adamw: return "AdamW";
        case optimizer_kind::adam: return "Adam";
        case optimizer_kind::sgd: return "SGD";
        case optimizer_kind::adamw_8bit: return "bitsandbytes.optim.AdamW8bit";
        case optimizer_kind::adafactor: break;
    }
    throw config_error("training.optimizer=\"adafactor\": torch.optim has no Adafactor class the litgpt launcher names");
}

/// The LitGPT command of the job: finetune_lora for adapters, finetune_full for a full fine-tune, pretrain for
/// training from scratch.
inline const char* command_of(const job_spec& j) {
    return pretraining(j.training) ? "pretrain" : j.training.finetune.adapters() ? "finetune_lora" : "finetune_full";
}

/// The job's model as LitGPT names it; config_error naming the model when LitGPT has no config of its shape.
inline const litgpt_model& model_of(const job_spec& j) {
    const auto* m = model_of_preset(j.model.name);
    if (!m)
        throw config_error("model.name=\"" + printable(j.model.name, 60) + "\" has no LitGPT model config the litgpt launcher "
                           "knows (litgpt/config.py@26857050; frameworks/litgpt/traits.hpp lists the presets)");
    if (m->layers != j.model.layers || m->hidden != j.model.hidden)
        throw config_error("model.layers=" + std::to_string(j.model.layers) + ", model.hidden=" + std::to_string(j.model.hidden) +
                           ": LitGPT's " + std::string(m->config) + " has " + std::to_string(m->layers) + " layers of " +
                           std::to_string(m->hidden) + " (the config is chosen by name: its shape is fixed)");
    if (const auto d = published_difference(j.model, preset(j.model.name)); !d.empty())
        throw config_error(d + ": LitGPT's " + std::string(m->config) + " is the published model (chosen by name)");
    return *m;
}

/// finetune_lora's keys: the base checkpoint, quantization and the adapters (LoRA switches of litgpt/lora.py Config).
inline std::string lora_yaml(const job_spec& j, const litgpt_model& m) {
    const auto& ft = j.training.finetune;
    std::string s = "checkpoint_dir: checkpoints/" + std::string(m.repo) + "  # litgpt download " + std::string(m.repo) + "\n";
    if (ft.method == finetune_method::qlora) s += std::string("quantize: ") + (ft.double_quant ? "bnb.nf4-dq" : "bnb.nf4") + "\n";
    const bool mlp = (ft.targets & (lora_gate | lora_up | lora_down)) != 0;
    auto flag = [&](const char* key, bool on) { return std::string(key) + ": " + (on ? "true" : "false") + "\n"; };
    s += "lora_r: " + std::to_string(ft.rank) + "\nlora_alpha: " + std::to_string(std::llround(ft.alpha)) + "\n";
    s += "lora_dropout: " + number_text(ft.dropout) + "\n";
    s += flag("lora_query", ft.targets & lora_q) + flag("lora_key", ft.targets & lora_k) + flag("lora_value", ft.targets & lora_v) +
         flag("lora_projection", ft.targets & lora_o) + flag("lora_mlp", mlp) + flag("lora_head", false);
    return s;
}

/// litgpt.yaml: the command's arguments for the job (see the header).
inline std::string config_yaml(const job_spec& j, const launch_options& o = {}) {
    const auto& t = j.training;
    const auto& m = model_of(j);
    if (t.finetune.adapters() && std::llround(t.finetune.alpha) != t.finetune.alpha)
        throw config_error("training.finetune.alpha=" + number_text(t.finetune.alpha) + ": LitGPT's lora_alpha is an int");
    const std::string cmd = command_of(j);
    std::string s = "# Written by frenzy launch for `litgpt " + cmd + " --config litgpt.yaml` (Lightning-AI/litgpt@26857050).\n";
    if (pretraining(t)) s += "model_name: " + std::string(m.config) + "\n";
    else if (t.finetune.adapters()) s += lora_yaml(j, m);
    else s += "checkpoint_dir: checkpoints/" + std::string(m.repo) + "  # litgpt download " + std::string(m.repo) + "\n";
    // pretrain.py and finetune/full.py resume from out_dir's last checkpoint with resume "auto" (a requeued job goes
    // on); finetune_lora has no resume argument and starts again.
    if (!t.finetune.adapters()) s += "resume: auto\n";
    s += "out_dir: out/frenzy\nprecision: " + std::string(precision_name(t.precision)) + "\n";
    s += "devices: " + std::to_string(j.parallel.dp) + "\nnum_nodes: 1\n";
    s += "optimizer: " + std::string(optimizer_name(t.optimizer)) + "\n";
    s += "train:\n  global_batch_size: " + std::to_string(t.global_batch) + "\n  micro_batch_size: " +
         std::to_string(t.micro_batch) + "\n  max_seq_length: " + std::to_string(t.seq_len) + "\n";
    // optimizer steps between checkpoints (TrainArgs.save_interval, default 1000): about 30 min (save_interval_steps)
    s += "  save_interval: " + std::to_string(save_interval_steps(j, o)) + "\n";
    const auto steps = train_steps(j);
    if (pretraining(t) && t.total_tokens > 0) {
        if (std::nearbyint(t.total_tokens) != t.total_tokens)
            throw config_error("training.total_tokens=" + number_text(t.total_tokens) + ": train.max_tokens is a whole number");
        s += "  max_tokens: " + std::to_string(static_cast<std::int64_t>(t.total_tokens)) + "\n";
    }
    // finetune_lora and finetune_full require train.epochs (validate_args) and stop at max_steps when it comes first.
    if (!pretraining(t)) s += "  epochs: " + std::string(steps > 0 ? "1000000" : "5") + "\n";
    if (!pretraining(t) && steps > 0) s += "  max_steps: " + std::to_string(steps) + "\n";
    return s;
}

/// The batch script's settings and the command line: the allocation's devices per node and node count.
inline std::string settings(const job_spec& j) {
    std::string s = "# Settings: the LitGPT command runs in the submission directory (checkpoints/ and out/ are relative to it).\n";
    s += "NUM_NODES=\"$SLURM_JOB_NUM_NODES\"\nDEVICES=$(( " + std::to_string(j.parallel.dp) + " / NUM_NODES ))\n";
    if (pretraining(j.training) && j.training.total_tokens <= 0)
        s += "TRAIN_TOKENS=\"${TRAIN_TOKENS:?the job has no token budget: set TRAIN_TOKENS (train.max_tokens)}\"\n";
    if (!pretraining(j.training) && train_steps(j) <= 0)
        s += "TRAIN_STEPS=\"${TRAIN_STEPS:?the job has no token budget: set TRAIN_STEPS (train.max_steps)}\"\n";
    return s;
}

inline launcher_payload payload(const job_spec& j, const launch_options& o) {
    if (j.runtime.compile && !pretraining(j.training))
        throw config_error("runtime.compile: LitGPT's " + std::string(command_of(j)) + " does not compile the model "
                           "(finetune/lora.py, finetune/full.py@26857050)");
    launcher_payload out;
    out.files.push_back({"litgpt.yaml", config_yaml(j, o)});
    out.preamble = settings(j);
    std::string args = std::string(" ") + command_of(j) + " --config \"$LAUNCH_DIR/litgpt.yaml\" --devices \"$DEVICES\" --num_nodes \"$NUM_NODES\"";
    if (pretraining(j.training) && j.training.total_tokens <= 0) args += " --train.max_tokens \"$TRAIN_TOKENS\"";
    if (!pretraining(j.training) && train_steps(j) <= 0) args += " --train.max_steps \"$TRAIN_STEPS\"";
    out.torchrun_target = (o.run_command.empty() ? std::string("-m litgpt") : o.run_command) + args;
    return out;
}

/// litgpt.yaml -> job (frameworks/litgpt/import.hpp).
inline launcher_import import_file(const std::string& path, const import_options& o) {
#ifdef FRENZY_HAS_YAML
    return litgpt_import_yaml(read_file_limited(path), o);
#else
    (void)path;
    (void)o;
    throw config_error("reading LitGPT's litgpt.yaml needs Frenzy built with yaml-cpp (FRENZY_HAS_YAML)");
#endif
}

inline constexpr launcher_traits launch_traits{
    .name = "litgpt",
    .summary = "torchrun of `python -m litgpt finetune_lora|pretrain --config litgpt.yaml` (LitGPT on Fabric)",
    .runs = {&traits},
    .payload = payload,
    .describes_model = true,
    .config_example = "litgpt.yaml",
    .import_file = import_file,
    .methods = method_bits({finetune_method::none, finetune_method::full, finetune_method::lora, finetune_method::qlora}),
};

/// This launcher as launch options name it: a handle to `launch_traits` (frameworks/launchers.hpp lists it).
inline constexpr launcher launcher_handle{launch_traits};

}  // namespace frenzy::frameworks::litgpt
