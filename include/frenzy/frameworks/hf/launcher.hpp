#pragma once
// The Hugging Face launcher: frenzy_hf_train.py runs transformers' Trainer on a pretrained causal LM of the planned
// shape (or, for a run from scratch, on its architecture with fresh weights: from_config), with PEFT's LoRA for `lora`
// and bitsandbytes' 4-bit NF4 base weights for `qlora`; torchrun
// starts one process per GPU (Trainer runs DistributedDataParallel under torchrun). The keywords written are
// TrainingArguments fields (huggingface/transformers@00349ae src/transformers/training_args.py), LoraConfig fields
// (huggingface/peft@5d602fd src/peft/tuners/lora/config.py, with PeftConfig's) and BitsAndBytesConfig arguments
// (transformers src/transformers/utils/quantization_config.py); each is in tests/data/launch/hf_keys.txt, read from
// that code by tests/data/launch/extract_framework_keys.py. The run's settings (model, data, checkpoints, learning
// rate) are environment variables of the batch script; the script refuses a model whose shape is not the planned one.
// A sharded layout runs accelerate's DeepSpeed (ZeRO-1/2) or FSDP2 back end (traits.hpp backend_of): the launcher then
// writes accelerate_config.yaml (accelerate.hpp) beside the script and the batch script starts `accelerate launch
// --config_file accelerate_config.yaml frenzy_hf_train.py` on every node; Trainer picks the back end up from
// accelerate's environment. Under FSDP decoder-layer checkpointing is accelerate's fsdp_activation_checkpointing, not
// Trainer's gradient_checkpointing (Trainer refuses both together).
// import_file reads the script's settings back (frameworks/hf/import.hpp), and accelerate_config.yaml beside it; the model,
// world size (for DDP) and budget given beside them.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "frenzy/frameworks/hf/accelerate.hpp"
#include "frenzy/frameworks/hf/traits.hpp"
#include "frenzy/io/file.hpp"
#include "frenzy/frameworks/hf/import.hpp"
#include "frenzy/launch/launcher.hpp"
#include "frenzy/model/presets.hpp"

namespace frenzy::frameworks::hf {

/// Trainer's mixed-precision flag and the dtype the weights are loaded in (traits.hpp: bf16-mixed is autocast over
/// fp32 weights, pure bf16 loads them in bf16; under adapters the frozen base is loaded in the 16-bit type, as the
/// memory model counts it and the measured LoRA rows ran, and PEFT keeps the adapters in fp32 under bf16-mixed; pure
/// bf16 has no flag, and train_script casts the adapters to bf16 after get_peft_model, so the two are told apart).
struct precision_names {
    const char* flag;   ///< TrainingArguments keyword set to True ("" = none)
    const char* dtype;  ///< torch dtype of the loaded weights
};
inline precision_names precision_of(precision p, bool adapters = false, bool sharded = false) {
    switch (p) {
        case precision::bf16_mixed: return {"bf16", adapters ? "torch.bfloat16" : "torch.float32"};
        case precision::fp16_mixed: return {"fp16", adapters ? "torch.float16" : "torch.float32"};
        // sharded: Trainer's bf16 flag would make accelerate's mixed_precision bf16 (FSDP2 then upcasts to fp32)
        case precision::bf16: return {adapters || sharded ? "" : "bf16", "torch.bfloat16"};
        case precision::fp32: return {"", "torch.float32"};
        default: break;
    }
    throw config_error("training.precision=\"" + std::string(to_string(p)) + "\" is not written by the hf launcher "
                       "(Trainer's precisions: bf16-mixed, fp16-mixed, bf16, fp32)");
}

/// TrainingArguments' optimizer name (training_args.py OptimizerNames; the paged ones are bitsandbytes'
/// PagedAdamW/PagedAdamW8bit, runtime.paged_optimizer).
inline const char* optim_of(optimizer_kind o, bool paged = false) {
    if (paged) return o == optimizer_kind::adamw_8bit ? "paged_adamw_8bit" : "paged_adamw_32bit";
    switch (o) {
        case optimizer_kind::adam:
        case optimizer_kind::adamw: return "adamw_torch_fused";
        case optimizer_kind::adamw_8bit: return "adamw_bnb_8bit";
        case optimizer_kind::sgd: return "sgd";
        case optimizer_kind::adafactor: return "adafactor";
    }
    return "adamw_torch_fused";
}

/// PEFT target module names of the job's LoRA targets (Llama-style module names, which Llama, Mistral, Qwen, Gemma
/// and Cohere share; PEFT stops with "Target modules ... not found" on a model that names them otherwise).
inline std::string lora_targets(unsigned targets) {
    static constexpr std::array<std::pair<unsigned, const char*>, 7> names{{{lora_q, "q_proj"}, {lora_k, "k_proj"},
        {lora_v, "v_proj"}, {lora_o, "o_proj"}, {lora_gate, "gate_proj"}, {lora_up, "up_proj"}, {lora_down, "down_proj"}}};
    std::string s;
    for (const auto& [bit, name] : names)
        if (targets & bit) s += (s.empty() ? "\"" : ", \"") + std::string(name) + "\"";
    return "[" + s + "]";
}

inline std::string number(double v) {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (s.back() == '.') s += '0';
    return s;
}

/// The planned values the script starts from (integers, booleans and names from closed sets only).
inline std::string plan_block(const job_spec& j) {
    const auto& m = j.model;
    const auto& t = j.training;
    const auto ga = t.global_batch / (t.micro_batch * j.parallel.dp);
    std::string s = "# The plan (frenzy launch): the model's shape, the batch and the adapters.\n";
    s += "PLANNED = {\"num_hidden_layers\": " + std::to_string(m.layers) + ", \"hidden_size\": " + std::to_string(m.hidden) +
         ", \"num_attention_heads\": " + std::to_string(m.heads) + "}\n";
    s += "SEQ_LEN = " + std::to_string(t.seq_len) + "\nMICRO_BATCH = " + std::to_string(t.micro_batch) +
         "\nGRAD_ACCUM = " + std::to_string(ga) + "\n";
    s += "TRAIN_STEPS = int(os.environ[\"TRAIN_STEPS\"])\n";
    s += "ADAPTERS = " + std::string(t.finetune.adapters() ? "True" : "False") + "\nQLORA = " +
         std::string(t.finetune.method == finetune_method::qlora ? "True" : "False") + "\n";
    return s;
}

/// from_pretrained's arguments: the weights' dtype, SDPA or eager attention, QLoRA's NF4 quantization; from_config's
/// for a run from scratch (transformers' _BaseAutoModelClass.from_config: the architecture of MODEL's config, its
/// weights initialised, not loaded).
inline std::string load_block(const job_spec& j, attention_impl attn) {
    const auto& ft = j.training.finetune;
    const auto prec = precision_of(j.training.precision, ft.adapters());
    std::string s = "quantization = None\nif QLORA:\n    quantization = BitsAndBytesConfig(\n        load_in_4bit=True,\n"
                    "        bnb_4bit_quant_type=\"nf4\",\n        bnb_4bit_use_double_quant=" +
                    std::string(ft.double_quant ? "True" : "False") + ",\n        bnb_4bit_compute_dtype=torch.bfloat16,\n" +
                    // FSDP and DeepSpeed shard the 4-bit weights as a floating-point storage (accelerate
                    // utils/fsdp_utils.py fsdp2_prepare_model: "bnb_4bit_quant_storage to a floating dtype")
                    (backend_of(j.parallel.sharding) != backend::ddp ? "        bnb_4bit_quant_storage=torch.bfloat16,\n" : "") +
                    "    )\n";
    const std::string kernel = attn == attention_impl::unfused ? "eager" : "sdpa";
    if (ft.pretrained())
        s += "model = AutoModelForCausalLM.from_pretrained(\n    MODEL,\n    dtype=" + std::string(prec.dtype) +
             ",\n    attn_implementation=\"" + kernel + "\",\n    quantization_config=quantization,\n)\n";
    else  // training from scratch (training.finetune.method "none"): MODEL's architecture with fresh weights
        s += "model = AutoModelForCausalLM.from_config(\n    config,\n    dtype=" + std::string(prec.dtype) +
             ",\n    attn_implementation=\"" + kernel + "\",\n)\n";
    if (ft.adapters())
        s += "model = get_peft_model(model, LoraConfig(\n    r=" + std::to_string(ft.rank) + ",\n    lora_alpha=" +
             number(ft.alpha) + ",\n    lora_dropout=" + number(ft.dropout) + ",\n    target_modules=" +
             lora_targets(ft.targets) + ",\n    task_type=\"CAUSAL_LM\",\n))\n";
    if (ft.adapters() && j.training.precision == precision::bf16)  // pure bf16: PEFT made the adapters fp32
        s += "model = model.to(torch.bfloat16)  # pure bf16: the adapters too\n";
    return s;
}

/// TrainingArguments of the plan, one keyword per line.
inline std::string arguments_block(const job_spec& j) {
    const auto prec = precision_of(j.training.precision, j.training.finetune.adapters(),
                                   backend_of(j.parallel.sharding) != backend::ddp);
    std::string s = "args = TrainingArguments(\n    output_dir=os.environ[\"CHECKPOINT_DIR\"],\n"
                    "    per_device_train_batch_size=MICRO_BATCH,\n    gradient_accumulation_steps=GRAD_ACCUM,\n"
                    "    max_steps=TRAIN_STEPS,\n    learning_rate=float(os.environ[\"LR\"]),\n"
                    "    lr_scheduler_type=\"cosine\",\n    warmup_steps=max(1, TRAIN_STEPS // 100),\n";
    s += "    optim=\"" + std::string(optim_of(j.training.optimizer, j.runtime.paged_optimizer)) + "\",\n";
    if (*prec.flag) s += "    " + std::string(prec.flag) + "=True,\n";
    if (j.parallel.recompute == recompute::full && backend_of(j.parallel.sharding) != backend::fsdp)  // FSDP: accelerate's
        s += "    gradient_checkpointing=True,\n    gradient_checkpointing_kwargs={\"use_reentrant\": False},\n";
    if (j.runtime.liger) s += "    use_liger_kernel=True,\n";  // runtime.liger: the kernels the estimate counted
    s += "    logging_steps=10,\n    save_steps=int(os.environ[\"SAVE_STEPS\"]),\n    save_total_limit=2,\n    report_to=\"none\",\n"
         "    ddp_find_unused_parameters=False,\n    seed=17,\n)\n";
    return s;
}

/// frenzy_hf_train.py: load, check the shape, tokenize and pack the data, train (resuming from the last checkpoint).
inline std::string train_script(const job_spec& j, attention_impl attn) {
    std::string s = j.training.finetune.pretrained()
                        ? "# Written by frenzy launch: fine-tunes the pretrained causal LM in $MODEL with transformers' Trainer\n"
                          "# (PEFT LoRA adapters; QLoRA on 4-bit NF4 base weights). launch.sbatch sets the environment.\n"
                        : "# Written by frenzy launch: trains the causal LM of $MODEL's config from scratch (fresh weights) with\n"
                          "# transformers' Trainer. launch.sbatch sets the environment.\n";
    s += "import os\nimport sys\n\nimport torch\nfrom datasets import load_dataset\n"
                    "from transformers import (AutoConfig, AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig,\n"
                    "                          Trainer, TrainingArguments)\n"
                    "from transformers.trainer_utils import get_last_checkpoint\n";
    if (j.training.finetune.adapters()) s += "from peft import LoraConfig, get_peft_model\n";
    s += "\nMODEL = os.environ[\"MODEL\"]\nDATA = os.environ[\"DATA\"]\n";
    s += plan_block(j);
    s += "\n# The model must be the one planned: memory and step time were predicted for this shape.\n"
         "config = AutoConfig.from_pretrained(MODEL)\nconfig = getattr(config, \"text_config\", None) or config\n"
         "for key, planned in PLANNED.items():\n    got = getattr(config, key, None)\n    if got != planned:\n"
         "        sys.exit(f\"frenzy: {MODEL} has {key}={got}; the plan is for {planned}: plan again for this model\")\n";
    s += "\ntokenizer = AutoTokenizer.from_pretrained(MODEL)\n";
    s += load_block(j, attn);
    s += "\n# DATA: a .json/.jsonl/.parquet/.txt file or folder with a \"text\" column, or a dataset on the Hub.\n"
         "kind = {\".json\": \"json\", \".jsonl\": \"json\", \".parquet\": \"parquet\", \".txt\": \"text\"}.get(os.path.splitext(DATA)[1])\n"
         "raw = load_dataset(kind, data_files=DATA, split=\"train\") if kind else load_dataset(DATA, split=\"train\")\n\n\n"
         "def pack(batch):  # concatenate the texts and cut them into SEQ_LEN-token sequences\n"
         "    ids = [t for doc in tokenizer(batch[\"text\"])[\"input_ids\"] for t in doc + [tokenizer.eos_token_id]]\n"
         "    n = len(ids) // SEQ_LEN * SEQ_LEN\n"
         "    return {\"input_ids\": [ids[i:i + SEQ_LEN] for i in range(0, n, SEQ_LEN)]}\n\n\n"
         "train = raw.map(pack, batched=True, remove_columns=raw.column_names)\n"
         // packed sequences need no padding; DataCollatorForLanguageModeling would mask every label equal to the pad
         // token, which a tokenizer without one gets as EOS: documents would never learn to end
         "\n\ndef collate(examples):  # every sequence is SEQ_LEN tokens: no padding, every token (EOS too) a label\n"
         "    ids = torch.tensor([e[\"input_ids\"] for e in examples])\n"
         "    return {\"input_ids\": ids, \"labels\": ids.clone()}\n\n\n";
    s += arguments_block(j);
    s += "trainer = Trainer(model=model, args=args, train_dataset=train, data_collator=collate)\n"
         "last = get_last_checkpoint(args.output_dir) if os.path.isdir(args.output_dir) else None\n"
         "trainer.train(resume_from_checkpoint=last)\ntrainer.save_model(os.path.join(args.output_dir, \"final\"))\n";
    return s;
}

/// The settings block of the batch script: the environment frenzy_hf_train.py reads.
inline std::string settings(const job_spec& j, const launch_options& o) {
    std::string s = "# Settings: give them in sbatch's environment (LR=2e-4 sbatch launch.sbatch) or edit them here.\n";
    s += j.training.finetune.pretrained()
             ? "export MODEL=\"${MODEL:?set MODEL to the pretrained model (a Hugging Face repository or folder) of the planned shape}\"\n"
             : "export MODEL=\"${MODEL:?set MODEL to a Hugging Face repository or folder whose config and tokenizer are the planned "
               "model (its weights are not loaded)}\"\n";
    s += "export DATA=\"${DATA:?set DATA to the training text (.json/.jsonl/.parquet/.txt with a text column, or a Hub dataset)}\"\n";
    s += "export CHECKPOINT_DIR=\"${CHECKPOINT_DIR:-$LAUNCH_DIR/checkpoints}\"  # saved to and resumed from\n";
    s += "export SAVE_STEPS=\"${SAVE_STEPS:-" + std::to_string(save_interval_steps(j, o)) + "}\"  # optimizer steps between checkpoints" +
         save_interval_note(j, o) + "\n";
    const auto& ft = j.training.finetune;  // from scratch: GPT-3's rate for the model's size (launch/launcher.hpp)
    const std::string lr = !ft.pretrained() ? number_text(default_learning_rate(total_parameters(j.model, j.training.seq_len)))
                                            : ft.adapters() ? "2e-4" : "2e-5";
    s += "export LR=\"${LR:-" + lr + "}\"\n";
    const auto steps = train_steps(j);
    s += steps > 0 ? "export TRAIN_STEPS=\"${TRAIN_STEPS:-" + std::to_string(steps) + "}\"  # optimizer steps of the token budget\n"
                   : "export TRAIN_STEPS=\"${TRAIN_STEPS:?the job has no token budget: set TRAIN_STEPS (optimizer steps)}\"\n";
    return s;
}

/// srun + `accelerate launch` on every node of a single-type allocation (launcher_payload::node_lines): one
/// task per node; bash -c reads each task's SLURM_NODEID as its --machine_rank (the batch script's own is the first
/// node's); the first host is the main process (static rendezvous, accelerate's default rdzv_backend). The options
/// are accelerate's launch arguments (huggingface/accelerate@16cb6eb8 src/accelerate/commands/launch.py) and win over
/// the config file's values. The script run by bash -c is Frenzy's own text (numbers only); the config path, the head
/// node and the training command reach it as arguments.
inline std::string accelerate_lines(const node_start& b) {
    return "srun --nodes=" + std::to_string(b.nodes) + " --ntasks-per-node=1 \\\n" +
           "    bash -c 'exec accelerate launch --config_file \"$1\" --num_machines " + std::to_string(b.nodes) +
           " --num_processes " + std::to_string(b.nodes * b.gpus_per_node) + " --machine_rank \"$SLURM_NODEID\" "
           "--main_process_ip \"$2\" --main_process_port " + std::to_string(b.rdzv_port) + " \"${@:3}\"' frenzy-node \\\n" +
           "    \"$LAUNCH_DIR/" + b.config + "\" \"$HEAD_NODE\" " + b.target;
}

/// accelerate's config of a sharded job: DeepSpeed ZeRO-1/2 or FSDP2 FULL_SHARD (traits.hpp backend_of), the mixed
/// precision Trainer's flag states (bf16-mixed -> bf16, fp16-mixed -> fp16; pure bf16 and fp32 -> no).
inline accelerate_config accelerate_config_of(const job_spec& j) {
    const auto& t = j.training;
    accelerate_config c;
    const auto pr = t.precision;
    c.mixed_precision = pr == precision::bf16_mixed ? "bf16" : pr == precision::fp16_mixed ? "fp16" : "no";
    c.num_processes = j.parallel.gpus();
    if (backend_of(j.parallel.sharding) == backend::fsdp) {
        c.distributed_type = "FSDP";
        c.fsdp_activation_checkpointing = j.parallel.recompute == recompute::full;
    } else {
        c.distributed_type = "DEEPSPEED";
        c.zero_stage = j.parallel.sharding == sharding::optimizer ? 1 : 2;
        c.gradient_accumulation_steps = t.global_batch / (t.micro_batch * j.parallel.dp);
    }
    return c;
}

/// The script builds $MODEL's config.json (from_pretrained or from_config) and checks only its shape (PLANNED): a job
/// named after a preset whose other fields (rotary spec, norm epsilon, QK-norm, soft-capping, router) are not the
/// published model's would train the published one, so it is refused naming the field (issue 53's acceptance).
inline void check_published(const transformer_spec& m) {
    for (const auto& p : model_presets())
        if (p.spec.name == m.name)
            if (const auto d = published_difference(m, p.spec); !d.empty())
                throw config_error(d + ": the hf launcher builds $MODEL's config.json, the published " + m.name +
                                   "'s; plan the published model, or a config.json of this one (--hf-config)");
}

inline launcher_payload payload(const job_spec& j, const launch_options& o) {
    check_published(j.model);
    if (j.training.finetune.method == finetune_method::freeze || j.training.finetune.frozen_layers > 0)
        throw config_error("training.finetune.frozen_layers: the hf launcher trains every layer or LoRA adapters "
                           "(freezing leading layers is not written)");
    if (j.runtime.offload.any())
        throw config_error("runtime.offload: the hf launcher writes no offload (Trainer has no activation offload; "
                           "DeepSpeed's ZeRO-Offload refuses Trainer's torch optimizer)");
    launcher_payload out;
    out.files.push_back({"frenzy_hf_train.py", train_script(j, j.runtime.attention)});
    if (backend_of(j.parallel.sharding) != backend::ddp) {
        const auto& t = j.training;
        out.files.push_back({"accelerate_config.yaml", accelerate_yaml(accelerate_config_of(j), false,
                                                                       t.global_batch / (t.micro_batch * j.parallel.dp))});
        out.node_lines = accelerate_lines;
        out.node_config = "accelerate_config.yaml";
    }
    out.preamble = settings(j, o);
    out.torchrun_target = o.run_command.empty() ? std::string("\"$LAUNCH_DIR/frenzy_hf_train.py\"") : o.run_command;
    return out;
}

/// frenzy_hf_train.py read with accelerate_config.yaml (`c`) -> job: the script's settings, the world size, sharding
/// and (FSDP) checkpointing from the config, each value checked as the launcher writes it and against the script.
inline launcher_import hf_import_accelerate(const std::string& text, const accelerate_config& c, const import_options& o) {
    if (o.world_size > 0 && o.world_size != c.num_processes && !o.world_size_from_gpus)
        throw config_error("accelerate_config.yaml: num_processes=" + std::to_string(c.num_processes) +
                           " contradicts the world size given beside it (" + std::to_string(o.world_size) + ")");
    auto opt = o;
    opt.world_size = c.num_processes;
    auto out = hf_import_script(text, opt);
    if (o.world_size_from_gpus && o.world_size != c.num_processes)
        out.notes.push_back("accelerate_config.yaml runs num_processes=" + std::to_string(c.num_processes) + ": its batch is that "
                            "world size's, not the " + std::to_string(o.world_size) + " GPUs given");
    auto& j = out.job;
    const auto& t = j.training;
    check_accelerate_config(c, j.parallel.recompute == recompute::full, t.global_batch / (t.micro_batch * j.parallel.dp));
    if (c.distributed_type == "FSDP") {
        if (c.fsdp_version != 2 || c.fsdp_reshard_after_forward != "true" || c.fsdp_offload_params)
            throw config_error("accelerate_config.yaml: fsdp_config is not FSDP2 FULL_SHARD without offload (fsdp_version 2, "
                               "fsdp_reshard_after_forward true, fsdp_offload_params false), what the hf launcher writes");
        j.parallel.sharding = sharding::full;
        if (c.fsdp_activation_checkpointing) j.parallel.recompute = recompute::full;
    } else {
        if ((c.zero_stage != 1 && c.zero_stage != 2) || c.offload_optimizer_device != "none" || c.offload_param_device != "none")
            throw config_error("accelerate_config.yaml: deepspeed_config is not ZeRO stage 1 or 2 without offload "
                               "(zero_stage " + std::to_string(c.zero_stage) + "), what the hf launcher writes");
        j.parallel.sharding = c.zero_stage == 1 ? sharding::optimizer : sharding::gradients;
    }
    const auto pr = t.precision;
    const std::string mp = pr == precision::bf16_mixed ? "bf16" : pr == precision::fp16_mixed ? "fp16" : "no";
    if (c.mixed_precision != mp)
        throw config_error("accelerate_config.yaml: mixed_precision=" + printable(c.mixed_precision) + " contradicts "
                           "frenzy_hf_train.py's precision (" + std::string(to_string(pr)) + ": " + mp + ")");
    validate(j);
    return out;
}

/// frenzy_hf_train.py (a file, or the folder holding it) -> job (frameworks/hf/import.hpp), with accelerate_config.yaml
/// beside it when there is one (a sharded job: its layout and world size); the model, the world size of a DDP job and
/// the token budget come from beside the files.
inline launcher_import import_file(const std::string& path, const import_options& o) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path script = fs::is_directory(path, ec) ? fs::path(path) / "frenzy_hf_train.py" : fs::path(path);
    const auto text = read_file_limited(script.string());
    const auto yaml = script.parent_path() / "accelerate_config.yaml";
    if (!fs::exists(yaml, ec)) return hf_import_script(text, o);
    const auto c = read_accelerate_config(read_file_limited(yaml.string()));
    return hf_import_accelerate(text, c, o);
}

inline constexpr launcher_traits launch_traits{
    .name = "hf",
    .summary = "torchrun (DDP) or accelerate launch (DeepSpeed ZeRO-1/2, FSDP2) of frenzy_hf_train.py: transformers' Trainer "
               "fine-tuning a pretrained model (PEFT LoRA, QLoRA)",
    .runs = {&traits},
    .payload = payload,
    .describes_model = false,
    .config_example = "frenzy_hf_train.py",
    .import_file = import_file,
    .methods = method_bits({finetune_method::none, finetune_method::full, finetune_method::lora, finetune_method::qlora}),
    .per_device_batches = true,  // MICRO_BATCH x GRAD_ACCUM per rank; torchrun gives the ranks (accelerate_config.yaml states them)
};

/// This launcher as launch options name it: a handle to `launch_traits` (frameworks/launchers.hpp lists it).
inline constexpr launcher launcher_handle{launch_traits};

}  // namespace frenzy::frameworks::hf
