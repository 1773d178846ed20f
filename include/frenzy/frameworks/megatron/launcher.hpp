#pragma once
// Megatron-LM's launcher: pretrain_gpt.py arguments in the batch script (NVIDIA/Megatron-LM@d98e8a64
// megatron/training/arguments.py, + the ArgumentGroupFactory dataclass flags, megatron/training/argument_utils.py;
// every flag written is listed in tests/data/launch/megatron_arguments.txt), and its launch scripts, JSON argument
// lists and YAML argument files read back (frameworks/megatron/import.hpp).
#include <string>
#include <utility>
#include <vector>

#include "frenzy/frameworks/megatron/import.hpp"
#include "frenzy/launch/launcher.hpp"
#include "frenzy/model/presets.hpp"
#include "frenzy/model/transformer.hpp"
#include "frenzy/frameworks/megatron/rope.hpp"
#include "frenzy/frameworks/megatron/routing.hpp"
#include "frenzy/frameworks/megatron/traits.hpp"

namespace frenzy::frameworks::megatron {

/// Megatron-LM's architecture arguments: layers, widths, attention, activation, norm, positions, embeddings, MoE.
inline std::vector<std::string> model_arguments(const job_spec& j) {
    const auto& m = j.model;
    const auto& t = j.training;
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    if (m.embedding_norm) throw config_error("model.embedding_norm=true has no Megatron-LM argument");
    if (m.position_embedding == position_embedding::alibi)
        throw config_error("model.position_embedding=\"alibi\" has no Megatron-LM --position-embedding-type");
    if (m.activation == activation::relu) throw config_error("model.activation=\"relu\" has no Megatron-LM argument");
    // What Megatron-Core's GPT layer spec cannot build from arguments.py: written anyway, it would train another model.
    if (m.activation == activation::geglu)
        throw config_error("model.activation=\"geglu\" has no Megatron-LM argument (--swiglu gates with SiLU)");
    if (m.parallel_attention)
        throw config_error("model.parallel_attention=true (attention and MLP on one norm, added together) has no Megatron-LM argument");
    if (m.layer_norm_count() > 2)
        throw config_error(field_text("model.norms_per_layer", m.layer_norm_count()) + " (norms after attention and MLP too) has no Megatron-LM argument");
    if (m.final_logit_softcap > 0) throw config_error("model.final_logit_softcap has no Megatron-LM argument");
    if (t.optimizer == optimizer_kind::adafactor) throw config_error("training.optimizer=\"adafactor\" is not a Megatron-LM --optimizer");
    std::vector<std::string> a{
        "--num-layers " + n(m.layers), "--hidden-size " + n(m.hidden), "--ffn-hidden-size " + n(m.ffn_hidden),
        "--num-attention-heads " + n(m.heads)};
    if (m.head_dim > 0) a.push_back("--kv-channels " + n(m.head_dim));
    if (m.is_mla()) {  // arguments.py _add_mla_args; TransformerConfig.multi_latent_attention (MLATransformerConfig)
        a.push_back("--multi-latent-attention");
        if (m.mla.q_lora_rank > 0) a.push_back("--q-lora-rank " + n(m.mla.q_lora_rank));  // none: a full-rank q
        a.insert(a.end(), {"--kv-lora-rank " + n(m.mla.kv_lora_rank), "--qk-head-dim " + n(m.mla.qk_nope_head_dim),
                           "--qk-pos-emb-head-dim " + n(m.mla.qk_rope_head_dim), "--v-head-dim " + n(m.mla.v_head_dim)});
    }
    if (m.kv() != m.heads) {
        a.push_back("--group-query-attention");
        a.push_back("--num-query-groups " + n(m.kv()));
    }
    if (m.activation == activation::swiglu && m.swiglu_limit == 0) a.push_back("--swiglu");  // else --quick-geglu (routing.hpp)
    if (m.activation == activation::squared_relu) a.push_back("--squared-relu");
    if (m.norm == norm_kind::rmsnorm) a.push_back("--normalization RMSNorm");
    a.push_back("--position-embedding-type " + position_embedding_type(m));
    for (auto& r : rope_and_norm_args(m)) a.push_back(std::move(r));
    for (auto& r : attention_variant_args(m)) a.push_back(std::move(r));
    a.push_back("--max-position-embeddings " + n(m.max_positions > 0 ? m.max_positions : t.seq_len));
    if (!m.tied_embeddings) a.push_back("--untie-embeddings-and-output-weights");
    if (!m.bias) a.push_back("--disable-bias-linear");
    if (m.qkv_bias && !m.bias) a.push_back("--add-qkv-bias");
    a.push_back("--vocab-size " + n(m.vocab));
    if (m.is_moe()) {
        a.push_back("--num-experts " + n(m.moe.experts));
        a.push_back("--moe-router-topk " + n(m.moe.top_k));
        a.push_back("--moe-ffn-hidden-size " + n(m.expert_ffn()));
        if (m.moe.shared_experts > 0) a.push_back("--moe-shared-expert-intermediate-size " + n(m.moe.shared_experts * m.expert_ffn()));
        if (m.moe.dense_layers > 0)
            a.push_back("--moe-layer-freq ([0]*" + n(m.moe.dense_layers) + "+[1]*" + n(m.layers - m.moe.dense_layers) + ")");
        if (m.moe.capacity_factor > 0) {  // std::to_chars: the shortest decimal that reads back as the same double
            char cf[32];
            const auto end = std::to_chars(cf, cf + sizeof cf, m.moe.capacity_factor).ptr;
            a.push_back("--moe-expert-capacity-factor " + std::string(cf, end));
        }
        if (m.moe.pad_to_capacity) a.push_back("--moe-pad-expert-input-to-capacity");
        for (auto& r : router_args(m)) a.push_back(std::move(r));
    }
    return a;
}

/// Megatron-LM's training arguments: sequence, batches, budget, precision, optimizer, attention backend.
inline std::vector<std::string> training_arguments(const job_spec& j) {
    const auto& t = j.training;
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    std::vector<std::string> a;
    a.push_back("--seq-length " + n(t.seq_len));
    a.push_back("--micro-batch-size " + n(t.micro_batch));
    a.push_back("--global-batch-size " + n(t.global_batch));
    if (t.total_tokens > 0) {
        // whole samples, rounded up so the run covers the budget (an import reads back samples x seq_len)
        const double samples = std::ceil(t.total_tokens / static_cast<double>(t.seq_len));
        a.push_back("--train-samples " + std::to_string(static_cast<long long>(samples)));
    }
    switch (t.precision) {
        case precision::fp32: break;
        case precision::fp16_mixed: a.push_back("--fp16"); break;
        case precision::bf16_mixed: a.push_back("--bf16"); break;
        case precision::fp8_mixed: a.push_back("--bf16"); a.push_back("--fp8-format hybrid"); break;
        case precision::fp4_mixed: a.push_back("--bf16"); a.push_back("--fp4-format e2m1"); break;  // TransformerConfig.fp4 (NVFP4 recipe)
        case precision::bf16:  // no fp32 master copy: Megatron-FSDP's bf16 main weights (traits.hpp rejects_pure_bf16)
            a.insert(a.end(), {"--bf16", "--megatron-fsdp-main-params-dtype bf16", "--megatron-fsdp-main-grads-dtype bf16",
                               "--main-grads-dtype bf16", "--exp-avg-dtype bf16", "--exp-avg-sq-dtype bf16"});
            break;
    }
    // The precision-aware optimizer (TE FusedAdam, or HybridDeviceOptimizer when offloading) holds bf16 states, and
    // --optimizer-cpu-offload requires it (arguments.py validate_args: "must be used in conjunction with
    // --use-precision-aware-optimizer"); it is Adam only (megatron/core/optimizer/optimizer_config.py).
    if (t.precision == precision::bf16 || j.runtime.offload.optimizer) {
        if (t.optimizer == optimizer_kind::sgd)
            throw config_error("runtime.offload.optimizer=true with training.optimizer=\"sgd\": Megatron-LM's "
                               "--optimizer-cpu-offload needs --use-precision-aware-optimizer, which is Adam only");
        a.push_back("--use-precision-aware-optimizer");
    }
    a.push_back(std::string("--optimizer ") + (t.optimizer == optimizer_kind::sgd ? "sgd" : "adam"));
    if (j.runtime.attention == attention_impl::unfused) a.push_back("--attention-backend unfused");
    return a;
}

/// Dropout off as the job states it (runtime.dropout false) or, unstated, as the published model trained: rotary
/// models (Llama, Mistral/Mixtral, Qwen, DeepSeek, Gemma, GPT-NeoX: attention and hidden dropout 0.0 in their
/// config.json, and in Megatron-LM@d98e8a64 examples/llama/train_llama3_8b_h100_fp8.sh and
/// examples/mixtral/train_mixtral_8x7b_distributed.sh) train without; learned-position GPT-2/GPT-3/OPT keep Megatron's
/// 0.1. The plan of an unstated one keeps Megatron's masks in its memory (an over-estimate, never a shortfall).
inline bool trains_without_dropout(const job_spec& j) {
    return j.runtime.dropout ? !*j.runtime.dropout : j.model.position_embedding == position_embedding::rope;
}

/// Megatron-LM's parallelism and runtime arguments: the layout, sharding, recompute, overlaps, offload.
inline std::vector<std::string> parallel_arguments(const job_spec& j) {
    const auto& p = j.parallel;
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    std::vector<std::string> a;
    a.push_back("--tensor-model-parallel-size " + n(p.tp));
    a.push_back("--pipeline-model-parallel-size " + n(p.pp));
    if (p.vpp > 1) a.push_back("--num-virtual-stages-per-pipeline-rank " + n(p.vpp));
    if (p.cp > 1) a.push_back("--context-parallel-size " + n(p.cp));
    if (p.ep > 1) a.push_back("--expert-model-parallel-size " + n(p.ep));
    if (p.etp > 0) a.push_back("--expert-tensor-parallel-size " + n(p.etp));
    if (j.model.is_moe()) {
        if (p.grouped_gemm) a.push_back("--moe-grouped-gemm");
        a.push_back(std::string("--moe-token-dispatcher-type ") + (p.dispatcher == moe_dispatcher::alltoall ? "alltoall" : "allgather"));
    }
    if (!p.stage_layers.empty()) a.push_back("--pipeline-model-parallel-layout " + megatron_pipeline_layout(p.stage_layers));
    if (p.first_stage_layers > 0) a.push_back("--decoder-first-pipeline-num-layers " + n(p.first_stage_layers));
    if (p.last_stage_layers > 0) a.push_back("--decoder-last-pipeline-num-layers " + n(p.last_stage_layers));
    if (p.embedding_stage) a.push_back("--account-for-embedding-in-pipeline-split");
    if (p.loss_stage) a.push_back("--account-for-loss-in-pipeline-split");
    if (p.sequence_parallel) a.push_back("--sequence-parallel");
    if (p.sharding == sharding::optimizer) a.push_back("--use-distributed-optimizer");
    if (uses_megatron_fsdp(p)) {  // Megatron-FSDP (megatron/core/distributed/fsdp)
        a.push_back("--use-megatron-fsdp");
        a.push_back(std::string("--data-parallel-sharding-strategy ") + (p.sharding == sharding::full ? "optim_grads_params" : "optim_grads"));
    }
    if (p.recompute == recompute::selective) a.push_back("--recompute-granularity selective");
    if (p.recompute == recompute::full)
        a.insert(a.end(), {"--recompute-granularity full", "--recompute-method " + std::string(to_string(p.recompute_method)),
                           "--recompute-num-layers " + n(p.recompute_layers)});
    if (j.runtime.overlap_grad_reduce) a.push_back("--overlap-grad-reduce");
    if (j.runtime.tp_comm_overlap) a.push_back("--tp-comm-overlap");
    if (j.runtime.fp8_recipe) a.push_back("--fp8-recipe " + std::string(to_string(*j.runtime.fp8_recipe)));  // unset: delayed
    if (j.runtime.fp8_param_gather) a.push_back("--fp8-param-gather");    // memory/model_states.hpp: fp8 gather copies
    if (j.runtime.grad_reduce_bf16) a.push_back("--grad-reduce-in-bf16");  // bf16 main_grad buffers
    if (trains_without_dropout(j)) a.insert(a.end(), {"--hidden-dropout 0", "--attention-dropout 0"});  // no masks kept
    if (j.runtime.offload.optimizer) a.push_back("--optimizer-cpu-offload");  // needs the distributed optimizer (HybridDeviceOptimizer)
    if (j.runtime.offload.parameters || j.runtime.offload.activations)
        throw config_error("runtime.offload: parameter/activation offload has no Megatron-LM argument (optimizer offload does)");
    if (j.training.optimizer == optimizer_kind::adamw_8bit) throw config_error("training.optimizer=\"adamw-8bit\" is not a Megatron-LM --optimizer");
    if (j.runtime.compile) throw config_error("runtime.compile=true has no Megatron-LM argument");
    if (j.runtime.loss_chunks != 1) throw config_error("runtime.loss_chunks=" + std::to_string(j.runtime.loss_chunks) + " has no Megatron-LM argument");
    return a;
}

/// Megatron-LM pretrain_gpt.py arguments for a job with its layout (one "--flag value" per entry).
inline std::vector<std::string> arguments(const job_spec& j) {
    auto a = model_arguments(j);
    for (auto* part : {&training_arguments, &parallel_arguments})
        for (auto& x : (*part)(j)) a.push_back(std::move(x));
    return a;
}

/// A fine-tune's starting weights: the published model (its Hugging Face repository, or a local snapshot), the
/// Megatron-Bridge checkout that converts it, and where its Megatron checkpoint goes (run_arguments:
/// --pretrained-checkpoint; conversion_step converts it once).
inline std::string pretrained_settings(const transformer_spec& m) {
    const auto repo = published_repository(m.name);
    std::string s = "HF_MODEL=\"${HF_MODEL:" + (repo.empty() ? "?set HF_MODEL to the Hugging Face repository or local snapshot of "
                                                               "the published weights to fine-tune"
                                                             : "-" + std::string(repo)) +
                    "}\"  # the weights to fine-tune: a Hugging Face repository or a local snapshot\n";
    s += "MEGATRON_BRIDGE=\"${MEGATRON_BRIDGE:-$HOME/Megatron-Bridge}\"  # a Megatron-Bridge checkout: converts HF_MODEL once\n";
    s += "PRETRAINED_CHECKPOINT=\"${PRETRAINED_CHECKPOINT:-$CHECKPOINT_DIR/pretrained}\"  # HF_MODEL in Megatron's format\n";
    return s;
}

/// The first step of a fine-tune, skipped once done: HF_MODEL converted to a Megatron checkpoint by Megatron-Bridge's
/// importer (NVIDIA-NeMo/Megatron-Bridge@067f987d scripts/conversion/README.md: convert.sh import, one CPU process,
/// writing iter_0000000), and the tracker file by which Megatron-LM finds a checkpoint (Megatron-LM@d98e8a64
/// megatron/training/checkpointing.py read_metadata: without it the run would start from random weights).
inline std::string conversion_step() {
    return "if [[ ! -f \"$PRETRAINED_CHECKPOINT/latest_checkpointed_iteration.txt\" ]]; then\n"
           "    \"$MEGATRON_BRIDGE/scripts/conversion/convert.sh\" import --executor local --device cpu \\\n"
           "        --hf-model \"$HF_MODEL\" --megatron-path \"$PRETRAINED_CHECKPOINT\" || exit 1\n"
           "    [[ -d \"$PRETRAINED_CHECKPOINT/iter_0000000\" ]] || { echo \"launch.sbatch: the conversion wrote no "
           "$PRETRAINED_CHECKPOINT/iter_0000000\" >&2; exit 1; }\n"
           "    echo 0 > \"$PRETRAINED_CHECKPOINT/latest_checkpointed_iteration.txt\"\n"
           "fi\n";
}

/// The settings block at the top of the batch script: what the arguments read as "$NAME" (the Megatron-LM
/// checkout, data, tokenizer, checkpoints, learning-rate schedule), each with its default, given in the environment
/// of sbatch or edited here. The data choice follows Megatron-LM's own
/// examples/megatron_fsdp/train_llama3_8b_fsdp_h100_fp8.sh (@d98e8a64): MOCK = --mock-data with NullTokenizer.
inline std::string settings(const job_spec& j, const launch_options& o) {
    const double lr = default_learning_rate(total_parameters(j.model, j.training.seq_len));
    std::string s = "# Settings: give them in sbatch's environment (LR=1e-4 sbatch launch.sbatch) or edit them here.\n";
    s += "MEGATRON_LM=\"${MEGATRON_LM:-$HOME/Megatron-LM}\"  # a Megatron-LM checkout: its pretrain_gpt.py runs\n";
    s += "DATA_PATH=\"${DATA_PATH:-MOCK}\"  # a data prefix of Megatron's tools/preprocess_data.py, or MOCK (synthetic tokens)\n";
    const bool ft = j.training.finetune.pretrained();
    if (!ft) s += "TOKENIZER_MODEL=\"${TOKENIZER_MODEL:-}\"  # the Hugging Face tokenizer DATA_PATH was made with (needed with DATA_PATH)\n";
    s += "CHECKPOINT_DIR=\"${CHECKPOINT_DIR:-$LAUNCH_DIR/checkpoints}\"  # saved to and resumed from\n";
    if (ft)  // the model's own tokenizer (HuggingFaceTokenizer of HF_MODEL), with which DATA_PATH must be made
        s += pretrained_settings(j.model) + "TOKENIZER_MODEL=\"${TOKENIZER_MODEL:-$HF_MODEL}\"  # the model's Hugging Face tokenizer: "
             "DATA_PATH must be made with it\n";
    s += "SAVE_INTERVAL=\"${SAVE_INTERVAL:-" + std::to_string(save_interval_steps(j, o)) + "}\"  # optimizer steps between checkpoints" +
         save_interval_note(j, o) + "\n";
    s += "LR=\"${LR:-" + number_text(lr) + "}\" MIN_LR=\"${MIN_LR:-" + number_text(lr / 10) +
         "}\" LR_WARMUP_FRACTION=\"${LR_WARMUP_FRACTION:-0.01}\"  # cosine decay over the run\n";
    if (j.training.total_tokens <= 0)
        s += "TRAIN_ITERS=\"${TRAIN_ITERS:-}\"  # the job has no token budget (training.total_tokens): the steps to run\n";
    return s;
}

/// The arguments that read the settings (settings()), the checkpoint format and the exit signal handler: quoted
/// expansions, written as they are. Megatron-FSDP requires --ckpt-format fsdp_dtensor (arguments.py validate_args).
/// A full fine-tune adds --pretrained-checkpoint: Megatron-LM loads it, as a fine-tune (args.finetune: weights only,
/// iteration 0), while --load holds no checkpoint yet, and resumes from --load after a requeue
/// (megatron/training/checkpointing.py@d98e8a64 load_checkpoint: "attempting to finetune with checkpoint in").
inline std::vector<std::string> run_arguments(const job_spec& j) {
    std::vector<std::string> a{"--lr \"$LR\"", "--min-lr \"$MIN_LR\"", "--lr-decay-style cosine",
                               "--lr-warmup-fraction \"$LR_WARMUP_FRACTION\"", "--save \"$CHECKPOINT_DIR\"",
                               "--load \"$CHECKPOINT_DIR\"", "--save-interval \"$SAVE_INTERVAL\"",
                               // on SIGTERM (Slurm ending or requeueing the job) it saves a checkpoint after the step
                               "--exit-signal-handler"};
    if (j.training.finetune.pretrained()) a.push_back("--pretrained-checkpoint \"$PRETRAINED_CHECKPOINT\"");
    if (uses_megatron_fsdp(j.parallel)) a.push_back("--ckpt-format fsdp_dtensor");
    return a;
}

/// The shell after the MEGATRON_ARGS array: the data source (MOCK or a prefix with its tokenizer) and, for a job with
/// no token budget, the run's length, which must be given (a loud stop, not a guess).
inline std::string data_and_length(const job_spec& j) {
    std::string s =
        "if [[ \"$DATA_PATH\" == \"MOCK\" ]]; then\n"
        "    MEGATRON_ARGS+=(--mock-data --tokenizer-type NullTokenizer)\n"
        "else\n"
        "    MEGATRON_ARGS+=(--data-path \"$DATA_PATH\" --tokenizer-type HuggingFaceTokenizer\n"
        "                    --tokenizer-model \"${TOKENIZER_MODEL:?set TOKENIZER_MODEL to the tokenizer of DATA_PATH}\")\n"
        "fi\n";
    if (j.training.total_tokens <= 0)
        s += "if [[ -z \"$TRAIN_ITERS\" ]]; then\n"
             "    echo \"launch.sbatch: the job has no token budget: set TRAIN_ITERS (optimizer steps)\" >&2\n"
             "    exit 1\n"
             "else\n"
             "    MEGATRON_ARGS+=(--train-iters \"$TRAIN_ITERS\")\n"
             "fi\n";
    return s;
}

/// One "--flag value" entry as a line of the array: a value with shell syntax is single-quoted, a settings
/// expansion ("$NAME") is written as it is.
inline std::string array_line(const std::string& a) {
    const auto sp = a.find(' ');
    if (sp == std::string::npos || a.compare(sp + 1, 2, "\"$") == 0) return "    " + a + "\n";
    const bool quote = a.find_first_of("()[]*$\"' |;&<>", sp + 1) != std::string::npos;
    return "    " + (quote ? a.substr(0, sp) + " '" + a.substr(sp + 1) + "'" : a) + "\n";
}

/// The settings, the MEGATRON_ARGS array and pretrain_gpt.py of the checkout started with it. Megatron-LM needs
/// CUDA_DEVICE_MAX_CONNECTIONS=1 with tensor or context parallelism before Blackwell, and Megatron-FSDP refuses it
/// (arguments.py validate_args): set for the one, unset for the other, as Megatron's examples do.
inline launcher_payload payload(const job_spec& j, const launch_options& o) {
    launcher_payload out;
    std::string s = settings(j, o) + "\nMEGATRON_ARGS=(\n";
    for (const auto& a : arguments(j)) s += array_line(a);
    for (const auto& a : run_arguments(j)) s += array_line(a);
    s += ")\n" + data_and_length(j);
    if (j.training.finetune.pretrained()) s += conversion_step();
    if (uses_megatron_fsdp(j.parallel)) s += "unset CUDA_DEVICE_MAX_CONNECTIONS  # Megatron-FSDP refuses 1\n";
    else out.exports.push_back("CUDA_DEVICE_MAX_CONNECTIONS=1");
    out.preamble = s;
    out.torchrun_target = (o.run_command.empty() ? std::string("\"$MEGATRON_LM/pretrain_gpt.py\"") : o.run_command) +
                          " \"${MEGATRON_ARGS[@]}\"";
    return out;
}

/// A launch script or JSON argument list, or (built with yaml-cpp) a YAML argument file *.yaml / *.yml.
inline launcher_import import_file(const std::string& path, const import_options& o) {
    if (is_yaml_path(path)) {
#ifdef FRENZY_HAS_YAML
        return megatron_import_yaml(read_file_limited(path), o);
#else
        throw config_error("a Megatron YAML argument file needs Frenzy built with yaml-cpp (FRENZY_HAS_YAML)");
#endif
    }
    return megatron_import_text(read_file_limited(path), o);
}

inline constexpr launcher_traits launch_traits{
    .name = "megatron",
    .summary = "Megatron-LM pretrain_gpt.py with its arguments in the batch script",
    .runs = {&traits},
    .recompute_groups = true,
    .payload = payload,
    .describes_model = true,
    .config_example = "train.sh",
    .import_file = import_file,
    .methods = method_bits({finetune_method::none, finetune_method::full}),
};

/// This launcher as launch options name it: a handle to `launch_traits` (frameworks/launchers.hpp lists it).
inline constexpr launcher launcher_handle{launch_traits};

}  // namespace frenzy::frameworks::megatron
