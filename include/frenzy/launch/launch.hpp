#pragma once
// Plan -> launch files: a self-contained Slurm batch script (torchrun on every node, c10d rendezvous on the first
// host of $SLURM_JOB_NODELIST) and the framework's configuration. Spellings follow the frameworks' own parsers:
//  - Megatron-LM pretrain_gpt.py flags: NVIDIA/Megatron-LM@d98e8a64 megatron/training/arguments.py (+ the
//    ArgumentGroupFactory dataclass flags, megatron/training/argument_utils.py);
//  - torchtitan: a recipe module returning Trainer.Config (pytorch/torchtitan@b5bcd76c torchtitan/config/README.md,
//    configs.py, trainer.py, distributed/activation_checkpoint.py, components/quantization/float8.py): torchtitan no
//    longer reads TOML job files, runs are `--module M --config F`;
//  - DeepSpeed ds_config.json: microsoft/DeepSpeed@38327e07 deepspeed/runtime/constants.py, zero/config.py,
//    zero/offload_config.py, activation_checkpointing/config.py;
//  - plain FSDP/DDP: torchrun + fsdp_settings.json for the user's training script; sharding_strategy and
//    mixed_precision named as pytorch/pytorch@acd8c9e7 torch/distributed/fsdp/api.py (ShardingStrategy,
//    MixedPrecision), the other keys Frenzy's own (docs/launch.md).
// Lists of every flag/key those files define: tests/data/launch/*.txt (tests check every written one is listed).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/core/error.hpp"
#include "frenzy/hw/cluster.hpp"
// GCC 12 reports a false -Wrestrict in std::string operator+ inlined into planner.hpp's infeasible_reason when
// launch() instantiates the planner at -O2 (GCC bug 105329); silenced for that header only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include "frenzy/plan/planner.hpp"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include "frenzy/train/job.hpp"

namespace frenzy {

enum class launcher { megatron, torchtitan, deepspeed, fsdp };

template <> struct enum_names<launcher> {
    static constexpr std::array<std::pair<launcher, std::string_view>, 4> table{{
        {launcher::megatron, "megatron"}, {launcher::torchtitan, "torchtitan"}, {launcher::deepspeed, "deepspeed"},
        {launcher::fsdp, "fsdp"}}};
};

/// The plan frameworks a launcher can run: torchtitan is an FSDP2 launcher (tp/pp/cp as torchtitan allows);
/// the plain torchrun launcher runs FSDP or DDP.
inline std::vector<framework> launcher_frameworks(launcher l) {
    switch (l) {
        case launcher::megatron: return {framework::megatron};
        case launcher::torchtitan: return {framework::fsdp};
        case launcher::deepspeed: return {framework::deepspeed};
        case launcher::fsdp: return {framework::fsdp, framework::ddp};
    }
    return {};
}

struct launch_options {
    frenzy::launcher launcher = launcher::megatron;
    std::size_t plan_index = 0;                       ///< which plan of the ranking (0 = the best)
    std::map<std::string, std::string> gres_names;    ///< catalog name -> Slurm GRES type (default: the catalog name)
    std::string run_command;                          ///< script (and its arguments) torchrun starts; "" = the framework's
    double time_margin = 0.2;                         ///< --time = predicted run time x (1 + margin), at least 10 minutes
    double default_time_s = 24 * 3600;                ///< --time when the job has no token budget
    int rdzv_port = 29500;
    std::string torchtitan_base;                      ///< recipe to start from, MODULE:FUNCTION; "" = by model name
    plan_options planning{};                          ///< frameworks are set from the launcher
};

struct launch_file {
    std::string name;     ///< file name inside the output directory
    std::string content;
    bool operator==(const launch_file&) const = default;
};

struct launch_result {
    frenzy::plan plan;          ///< the plan the files run
    job_spec job;               ///< the job with the plan's layout (what the files describe)
    std::vector<launch_file> files;
    std::vector<std::string> written;  ///< paths write_launch_files wrote them to (empty until written)
};

namespace detail {

inline bool word_char(char c, std::string_view extra) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || extra.find(c) != std::string_view::npos;
}

/// The job's name as Slurm's --job-name: letters, digits and . _ + - kept, every other character written as _, so
/// that the #SBATCH line is one word whatever the name holds (the comment above it shows the name as given).
inline std::string slurm_job_name(const std::string& name) {
    if (name.empty()) return "frenzy";
    std::string s = name;
    for (auto& c : s)
        if (!word_char(c, "._+-")) c = '_';
    return s;
}

/// A Slurm GRES type as written in --gres=gpu:TYPE:N: letters, digits and . _ - (what gres.conf names hold).
inline const std::string& checked_gres_type(const std::string& type, const std::string& gpu) {
    if (type.empty() || !std::all_of(type.begin(), type.end(), [](char c) { return word_char(c, "._-"); }))
        throw field_error("launch_options::gres_names[" + gpu + "]", type,
                          "must be a Slurm GRES type: letters, digits, '.', '_' and '-' (--gres-map)");
    return type;
}

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
        throw field_error("launch_options::torchtitan_base", base,
                          "must be MODULE:FUNCTION of Python identifiers, e.g. torchtitan.models.llama3.config_registry:llama3_8b "
                          "(--torchtitan-base)");
    return colon;
}

inline std::string slurm_time(double seconds) {
    const auto total_min = static_cast<long long>(std::ceil(seconds / 60.0));
    const long long d = total_min / (24 * 60), h = (total_min / 60) % 24, m = total_min % 60;
    char buf[64];
    if (d > 0) std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:00", d, h, m);
    else std::snprintf(buf, sizeof buf, "%02lld:%02lld:00", h, m);
    return buf;
}

inline std::int64_t train_steps(const job_spec& j) {
    const double per = j.tokens_per_step();
    return j.training.total_tokens > 0 ? static_cast<std::int64_t>(std::ceil(j.training.total_tokens / per)) : 0;
}

/// Megatron-LM's architecture arguments: layers, widths, attention, activation, norm, positions, embeddings, MoE.
inline std::vector<std::string> megatron_model_arguments(const job_spec& j) {
    const auto& m = j.model;
    const auto& t = j.training;
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    if (m.embedding_norm) throw config_error("model.embedding_norm=true has no Megatron-LM argument");
    if (m.position_embedding == position_embedding::alibi)
        throw config_error("model.position_embedding=\"alibi\" has no Megatron-LM --position-embedding-type");
    if (m.activation == activation::relu) throw config_error("model.activation=\"relu\" has no Megatron-LM argument");
    if (t.optimizer == optimizer_kind::adafactor) throw config_error("training.optimizer=\"adafactor\" is not a Megatron-LM --optimizer");
    std::vector<std::string> a{
        "--num-layers " + n(m.layers), "--hidden-size " + n(m.hidden), "--ffn-hidden-size " + n(m.ffn_hidden),
        "--num-attention-heads " + n(m.heads)};
    if (m.head_dim > 0) a.push_back("--kv-channels " + n(m.head_dim));
    if (m.kv() != m.heads) {
        a.push_back("--group-query-attention");
        a.push_back("--num-query-groups " + n(m.kv()));
    }
    if (m.activation == activation::swiglu) a.push_back("--swiglu");
    if (m.activation == activation::squared_relu) a.push_back("--squared-relu");
    if (m.norm == norm_kind::rmsnorm) a.push_back("--normalization RMSNorm");
    a.push_back(std::string("--position-embedding-type ") + (m.position_embedding == position_embedding::rope ? "rope" : "learned_absolute"));
    a.push_back("--max-position-embeddings " + n(m.max_positions > 0 ? m.max_positions : t.seq_len));
    if (!m.tied_embeddings) a.push_back("--untie-embeddings-and-output-weights");
    if (!m.bias) a.push_back("--disable-bias-linear");
    if (m.qkv_bias && !m.bias) a.push_back("--add-qkv-bias");
    a.push_back("--vocab-size " + n(m.vocab));
    a.push_back("--tokenizer-type NullTokenizer");
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
    }
    return a;
}

/// Megatron-LM's training arguments: sequence, batches, budget, precision, optimizer, attention backend.
inline std::vector<std::string> megatron_training_arguments(const job_spec& j) {
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
        case precision::bf16:  // no fp32 master copy: the precision-aware optimizer with bf16 main params and states
            a.insert(a.end(), {"--bf16", "--use-precision-aware-optimizer", "--main-params-dtype bf16",
                               "--main-grads-dtype bf16", "--exp-avg-dtype bf16", "--exp-avg-sq-dtype bf16"});
            break;
    }
    a.push_back(std::string("--optimizer ") + (t.optimizer == optimizer_kind::sgd ? "sgd" : "adam"));
    if (j.runtime.attention == attention_impl::unfused) a.push_back("--attention-backend unfused");
    return a;
}

/// Megatron-LM's parallelism and runtime arguments: the layout, sharding, recompute, overlaps, offload.
inline std::vector<std::string> megatron_parallel_arguments(const job_spec& j) {
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
    if (p.first_stage_layers > 0) a.push_back("--decoder-first-pipeline-num-layers " + n(p.first_stage_layers));
    if (p.last_stage_layers > 0) a.push_back("--decoder-last-pipeline-num-layers " + n(p.last_stage_layers));
    if (p.embedding_stage) a.push_back("--account-for-embedding-in-pipeline-split");
    if (p.loss_stage) a.push_back("--account-for-loss-in-pipeline-split");
    if (p.sequence_parallel) a.push_back("--sequence-parallel");
    if (p.sharding == sharding::optimizer) a.push_back("--use-distributed-optimizer");
    if (p.sharding == sharding::full || p.sharding == sharding::gradients) {  // Megatron-FSDP (megatron/core/distributed/fsdp)
        a.push_back("--use-megatron-fsdp");
        a.push_back(std::string("--data-parallel-sharding-strategy ") + (p.sharding == sharding::full ? "optim_grads_params" : "optim_grads"));
    }
    if (p.recompute == recompute::selective) a.push_back("--recompute-granularity selective");
    if (p.recompute == recompute::full)
        a.insert(a.end(), {"--recompute-granularity full", "--recompute-method " + std::string(to_string(p.recompute_method)),
                           "--recompute-num-layers " + n(p.recompute_layers)});
    if (j.runtime.overlap_grad_reduce) a.push_back("--overlap-grad-reduce");
    if (j.runtime.tp_comm_overlap) a.push_back("--tp-comm-overlap");
    if (j.runtime.fp8_param_gather) a.push_back("--fp8-param-gather");    // memory/model_states.hpp: fp8 gather copies
    if (j.runtime.grad_reduce_bf16) a.push_back("--grad-reduce-in-bf16");  // bf16 main_grad buffers
    if (j.runtime.dropout == false) a.insert(a.end(), {"--hidden-dropout 0", "--attention-dropout 0"});  // no masks kept
    if (j.runtime.offload.optimizer) a.push_back("--optimizer-cpu-offload");  // needs the distributed optimizer (HybridDeviceOptimizer)
    if (j.runtime.offload.parameters || j.runtime.offload.activations)
        throw config_error("runtime.offload: parameter/activation offload has no Megatron-LM argument (optimizer offload does)");
    if (j.training.optimizer == optimizer_kind::adamw_8bit) throw config_error("training.optimizer=\"adamw-8bit\" is not a Megatron-LM --optimizer");
    if (j.runtime.compile) throw config_error("runtime.compile=true has no Megatron-LM argument");
    if (j.runtime.loss_chunks != 1) throw config_error("runtime.loss_chunks=" + std::to_string(j.runtime.loss_chunks) + " has no Megatron-LM argument");
    return a;
}

/// Megatron-LM pretrain_gpt.py arguments for a job with its layout (one "--flag value" per entry).
inline std::vector<std::string> megatron_arguments(const job_spec& j) {
    auto a = megatron_model_arguments(j);
    for (auto* part : {&megatron_training_arguments, &megatron_parallel_arguments})
        for (auto& x : (*part)(j)) a.push_back(std::move(x));
    return a;
}

/// torchtitan's own recipe for a model preset (torchtitan/models/llama3/config_registry.py: llama3_8b, llama3_70b,
/// llama3_405b), or "" when it has none.
inline std::string torchtitan_base_for(const transformer_spec& m) {
    const auto& n = m.name;
    if (n.rfind("llama-3", 0) == 0) {
        for (const char* size : {"405b", "70b", "8b"})
            if (n.size() >= std::string(size).size() && n.ends_with(std::string("-") + size))
                return std::string("torchtitan.models.llama3.config_registry:llama3_") + size;
    }
    return "";
}

/// torchtitan recipe module: a function returning Trainer.Config, derived from a base recipe (when `base0` is
/// empty, torchtitan's recipe for the model, or llama3_8b with a warning comment).
inline std::string torchtitan_recipe(const job_spec& j, const std::string& base0) {
    std::string base = base0.empty() ? torchtitan_base_for(j.model) : base0;
    const bool guessed = base.empty();
    if (guessed) base = "torchtitan.models.llama3.config_registry:llama3_8b";
    const auto& t = j.training;
    const auto& p = j.parallel;
    if (t.precision == precision::fp16_mixed)
        throw config_error("training.precision=\"fp16-mixed\": torchtitan's training.mixed_precision_param is bfloat16 or float32");
    if (t.precision == precision::fp4_mixed) throw config_error("training.precision=\"fp4-mixed\" is not written by frenzy launch for torchtitan");
    if (j.runtime.offload.any()) throw config_error("runtime.offload: torchtitan offloads only whole FSDP states (training.enable_cpu_offload); not written by frenzy launch");
    if (t.optimizer != optimizer_kind::adamw && t.optimizer != optimizer_kind::adam)
        throw config_error("training.optimizer=\"" + std::string(to_string(t.optimizer)) + "\": the torchtitan recipe keeps its base recipe's AdamW");
    if (p.ep > 1 || p.vpp > 1)
        throw config_error("parallel.ep/vpp > 1: frenzy plans torchtitan as FSDP2 without expert or virtual pipeline stages");
    const auto colon = check_recipe_reference(base);
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    std::string s;
    s += "# torchtitan recipe written by `frenzy launch` for job \"" + j.name + "\".\n";
    s += "# Run: torchrun ... -m torchtitan.train --module frenzy_torchtitan --config frenzy_plan\n";
    s += "# Fields as pytorch/torchtitan@b5bcd76c torchtitan/config/configs.py and trainer.py define them.\n";
    if (guessed)
        s += "# WARNING: torchtitan has no recipe known to frenzy for model \"" + j.model.name +
             "\"; the base below is llama3_8b: give the base recipe MODULE:FUNCTION for your model (launch_options::torchtitan_base; "
             "`frenzy launch --torchtitan-base`).\n";
    s += "from torchtitan.distributed.activation_checkpoint import FullAC, SelectiveAC\n";
    if (t.precision == precision::fp8_mixed) s += "from torchtitan.components.quantization import Float8LinearConverter\n";
    s += "from torchtitan.trainer import Trainer\n";
    s += "from " + base.substr(0, colon) + " import " + base.substr(colon + 1) + " as base_recipe\n\n\n";
    s += "def frenzy_plan() -> Trainer.Config:\n";
    s += "    config = base_recipe()  # the model: " + j.model.name + "\n";
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
    s += "    config.training.max_context_length = " + n(t.seq_len) + "\n";
    s += "    config.training.num_tokens_per_microbatch_per_dp_rank = " + n(t.micro_batch * t.seq_len) + "\n";
    s += "    config.training.num_tokens_per_train_step = " + n(t.global_batch * t.seq_len) + "\n";
    if (const auto steps = train_steps(j); steps > 0) {
        s += "    config.training.steps = " + n(steps) + "\n";
    }
    if (t.precision == precision::bf16) s += "    config.training.dtype = \"bfloat16\"\n";
    else s += std::string("    config.training.mixed_precision_param = \"") + (t.precision == precision::fp32 ? "float32" : "bfloat16") + "\"\n";
    switch (p.recompute) {
        case recompute::none: s += "    config.activation_checkpoint = None\n"; break;
        case recompute::selective: s += "    config.activation_checkpoint = SelectiveAC.Config()\n"; break;
        case recompute::full: s += "    config.activation_checkpoint = FullAC.Config()\n"; break;
    }
    s += std::string("    config.compile.enable = ") + (j.runtime.compile ? "True" : "False") + "\n";
    if (t.precision == precision::fp8_mixed) {  // float8 is a model converter (llama3_debugmodel_float8 in config_registry.py)
        const std::string mod = base.substr(0, colon);
        const auto dot = mod.rfind(".config_registry");
        s += "    from " + (dot == std::string::npos ? mod : mod.substr(0, dot)) + " import model_registry\n\n";
        s += std::string("    config.model_spec = model_registry(config.model_spec.flavor, converters=[Float8LinearConverter.Config("
                         "model_compile_enabled=") + (j.runtime.compile ? "True" : "False") + ")])\n";
    }
    s += "    return config\n";
    return s;
}

/// DeepSpeed ds_config.json.
inline nlohmann::ordered_json deepspeed_config(const job_spec& j) {
    const auto& t = j.training;
    const auto& p = j.parallel;
    if (t.precision == precision::bf16)
        throw config_error("training.precision=\"bf16\" (no fp32 master weights) has no ds_config key; use bf16-mixed");
    if (t.precision == precision::fp8_mixed || t.precision == precision::fp4_mixed)
        throw config_error("training.precision=\"" + std::string(to_string(t.precision)) + "\" has no ds_config key");
    if (j.runtime.offload.activations) throw config_error("runtime.offload.activations: written by frenzy launch only as DeepSpeed's optimizer/parameter offload");
    if (j.runtime.offload.parameters && p.sharding != sharding::full)
        throw config_error("runtime.offload.parameters needs ZeRO stage 3 (parallel.sharding=\"full\") in DeepSpeed");
    const int stage = p.sharding == sharding::none ? 0 : p.sharding == sharding::optimizer ? 1 : p.sharding == sharding::gradients ? 2 : 3;
    nlohmann::ordered_json c;
    c["train_batch_size"] = t.global_batch;
    c["train_micro_batch_size_per_gpu"] = t.micro_batch;
    c["gradient_accumulation_steps"] = j.micro_batches();
    c["zero_optimization"] = {{"stage", stage}};
    if (j.runtime.offload.optimizer) c["zero_optimization"]["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
    if (j.runtime.offload.parameters) c["zero_optimization"]["offload_param"] = {{"device", "cpu"}, {"pin_memory", true}};
    c["bf16"] = {{"enabled", t.precision == precision::bf16_mixed}};
    c["fp16"] = {{"enabled", t.precision == precision::fp16_mixed}};
    if (p.recompute == recompute::full)  // DeepSpeed's checkpointing API (deepspeed.checkpointing) recomputes whole layers
        c["activation_checkpointing"] = {{"partition_activations", p.tp > 1}, {"contiguous_memory_optimization", false},
                                         {"cpu_checkpointing", false}};
    return c;
}

/// Settings a plain FSDP/DDP training script needs, named after torch.distributed.fsdp's API.
inline nlohmann::ordered_json fsdp_settings(const job_spec& j) {
    const auto& t = j.training;
    const auto& p = j.parallel;
    const bool ddp = j.runtime.framework == framework::ddp;
    const char* strategy = ddp ? "NO_SHARD"
                           : p.sharding == sharding::full ? "FULL_SHARD"
                           : p.sharding == sharding::gradients ? "SHARD_GRAD_OP" : "NO_SHARD";
    const char* dt = t.precision == precision::fp32 ? "float32" : t.precision == precision::fp16_mixed ? "float16" : "bfloat16";
    if (t.precision == precision::fp8_mixed || t.precision == precision::fp4_mixed)
        throw config_error("training.precision=\"" + std::string(to_string(t.precision)) + "\" needs torchao/TE (launch it with the torchtitan or megatron launcher)");
    if (j.runtime.offload.any()) throw config_error("runtime.offload is not written by frenzy launch for plain FSDP/DDP");
    nlohmann::ordered_json c;
    c["wrapper"] = ddp ? "DistributedDataParallel" : "FullyShardedDataParallel";
    c["sharding_strategy"] = strategy;
    // the dtype the model is built in (FSDP keeps its sharded parameters in it); MixedPrecision casts for compute
    const bool mixed = t.precision == precision::bf16_mixed || t.precision == precision::fp16_mixed;
    c["model_dtype"] = t.precision == precision::bf16 ? "bfloat16" : "float32";
    if (mixed) c["mixed_precision"] = {{"param_dtype", dt}, {"reduce_dtype", "float32"}};  // absent: none (fp32)
    c["activation_checkpointing"] = std::string(to_string(p.recompute));
    c["world_size"] = p.gpus();
    c["micro_batch_size"] = t.micro_batch;
    c["gradient_accumulation_steps"] = j.micro_batches();
    c["seq_len"] = t.seq_len;
    c["steps"] = train_steps(j);
    c["optimizer"] = std::string(to_string(t.optimizer));
    c["compile"] = j.runtime.compile;
    return c;
}

}  // namespace detail

/// A Slurm batch script as Frenzy writes it. `frenzy launch` (launch.sbatch, with its #SBATCH directives) and
/// `frenzy serve` (the body it pipes to sbatch, whose placement travels as sbatch options) both write theirs with
/// batch_script_text(): the one place a job script is written.
struct batch_script_spec {
    std::vector<std::string> comments;    ///< header lines after the shebang, each written as "# " + line
    std::vector<std::string> directives;  ///< each written as "#SBATCH " + line (none: given as sbatch options)
    std::vector<std::string> exports;     ///< each written as "export " + line (values already shell-quoted)
    /// Where the script finds (or, with inline_files, writes) its configuration files, a shell word.
    std::string launch_dir = "${LAUNCH_DIR:-$SLURM_SUBMIT_DIR}";
    std::string launch_dir_note = "submit from the directory of these files: cd DIR && sbatch launch.sbatch";
    std::vector<launch_file> inline_files;  ///< written into $LAUNCH_DIR by the script itself (here-documents)
    std::string preamble;                   ///< shell before the command, verbatim (the MEGATRON_ARGS array)
    int nodes = 1, gpus_per_node = 1, rdzv_port = 29500;
    std::string torchrun_target;            ///< what torchrun starts on every node (script and arguments)
    std::string command;                    ///< replaces srun + torchrun when set (a test's or dry run's command)
};

/// Single-quotes a value for the shell (public: the Slurm backend's batch script quotes with it too).
inline std::string sh_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) {
        if (c == '\'') q += "'\\''";
        else q += c;
    }
    return q + "'";
}

namespace detail {

/// A comment line's text: control characters (a newline or carriage return would end the comment and start a
/// command) and invalid UTF-8 written as \xNN, whatever the text came from (names, error messages).
inline std::string comment_text(std::string_view s) { return printable(s, std::numeric_limits<std::size_t>::max()); }

/// A file the script writes itself: a quoted here-document, so nothing in it is expanded.
inline std::string heredoc_file(const launch_file& f) {
    std::string tag = "FRENZY_EOF";
    while (f.content.find(tag) != std::string::npos) tag += "_";
    std::string s = "cat > \"$LAUNCH_DIR/" + f.name + "\" <<'" + tag + "'\n" + f.content;
    if (!f.content.empty() && f.content.back() != '\n') s += "\n";
    return s + tag + "\n";
}

}  // namespace detail

inline std::string batch_script_text(const batch_script_spec& b) {
    std::string s = "#!/bin/bash\n";
    for (const auto& c : b.comments) s += "# " + detail::comment_text(c) + "\n";
    for (const auto& d : b.directives) s += "#SBATCH " + d + "\n";
    s += "\n";
    s += "set -euo pipefail\n";
    for (const auto& e : b.exports) s += "export " + e + "\n";
    s += "LAUNCH_DIR=\"" + b.launch_dir + "\"" + (b.launch_dir_note.empty() ? "" : "  # " + b.launch_dir_note) + "\n";
    s += "export PYTHONPATH=\"$LAUNCH_DIR${PYTHONPATH:+:$PYTHONPATH}\"\n";
    s += "export CUDA_DEVICE_MAX_CONNECTIONS=1\n";
    s += "HEAD_NODE=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n\n";
    if (!b.inline_files.empty()) {
        s += "mkdir -p \"$LAUNCH_DIR\"\n";
        for (const auto& f : b.inline_files) s += detail::heredoc_file(f);
        s += "\n";
    }
    s += b.preamble;
    if (!b.preamble.empty()) s += "\n";
    if (!b.command.empty()) return s + b.command + "\n";  // the user's command, run by this script's shell
    s += "srun --nodes=" + std::to_string(b.nodes) + " --ntasks-per-node=1 \\\n";
    s += "    torchrun --nnodes " + std::to_string(b.nodes) + " --nproc-per-node " + std::to_string(b.gpus_per_node) +
         " --rdzv-id \"$SLURM_JOB_ID\" --rdzv-backend c10d --rdzv-endpoint \"$HEAD_NODE:" + std::to_string(b.rdzv_port) + "\" \\\n";
    s += "    " + b.torchrun_target + "\n";
    return s;
}

/// The launcher that runs a plan's framework when none is chosen (torchtitan is a choice, never inferred).
inline launcher launcher_for(framework f) {
    switch (f) {
        case framework::megatron: return launcher::megatron;
        case framework::deepspeed: return launcher::deepspeed;
        case framework::fsdp:
        case framework::ddp: return launcher::fsdp;
    }
    return launcher::fsdp;
}

/// The job a plan runs: its layout, framework, micro-batch, precision (a marked alternative where the GPU type
/// lacks the job's) and the overlap flags it was predicted with, in place of the job's own.
inline job_spec job_for_plan(job_spec j, const frenzy::plan& p) {
    j.parallel = p.parallel;
    j.runtime.framework = p.framework;
    j.runtime.overlap_grad_reduce = p.overlap_grad_reduce;
    j.runtime.tp_comm_overlap = p.tp_comm_overlap;
    j.training.micro_batch = p.micro_batch;
    j.training.precision = p.precision;
    return j;
}

/// What a launcher adds to the batch script: its configuration files, shell before the command, and what torchrun
/// starts. Checks that the launcher can run the job (config_error naming the field when not).
struct launcher_payload {
    std::vector<launch_file> files;  ///< besides launch.sbatch
    std::string preamble;
    std::string torchrun_target;
};

inline launcher_payload launcher_payload_for(const job_spec& j, const launch_options& o) {
    validate(j);
    if (!(j.training.finetune == finetune_spec{}))
        throw config_error("training.finetune: frenzy launch writes pretraining launches (pretrain_gpt.py, torchtitan.train); "
                           "fine-tuning methods are not written");
    const auto& fws = launcher_frameworks(o.launcher);
    if (std::find(fws.begin(), fws.end(), j.runtime.framework) == fws.end())
        throw config_error("runtime.framework=\"" + std::string(to_string(j.runtime.framework)) + "\" cannot be launched by the " +
                           std::string(to_string(o.launcher)) + " launcher (launch_options::launcher)");
    // Only Megatron-LM checkpoints groups of layers or the first layers of a chunk; the others checkpoint every layer.
    const auto& q = j.parallel;
    if (o.launcher != launcher::megatron && (q.recompute_method != recompute_method::uniform || q.recompute_layers != 1))
        throw config_error("parallel.recompute_method=\"" + std::string(to_string(q.recompute_method)) + "\" with " +
                           "parallel.recompute_layers=" + std::to_string(q.recompute_layers) + " has no " +
                           std::string(to_string(o.launcher)) + " setting (it checkpoints every layer: uniform 1); "
                           "Megatron-LM's --recompute-method/--recompute-num-layers has it");
    launcher_payload out;
    const auto script = [&](const char* fallback) { return o.run_command.empty() ? std::string(fallback) : o.run_command; };
    switch (o.launcher) {
        case launcher::megatron: {
            std::string args = "MEGATRON_ARGS=(\n";
            for (const auto& a : detail::megatron_arguments(j)) {
                const auto sp = a.find(' ');  // "--flag value": a value with shell syntax is single-quoted
                const bool quote = sp != std::string::npos && a.find_first_of("()[]*$\"' ", sp + 1) != std::string::npos;
                args += "    " + (quote ? a.substr(0, sp) + " '" + a.substr(sp + 1) + "'" : a) + "\n";
            }
            out.preamble = args + ")\n";
            out.torchrun_target = script("pretrain_gpt.py") + " \"${MEGATRON_ARGS[@]}\"";
            break;
        }
        case launcher::torchtitan:
            out.files.push_back({"frenzy_torchtitan.py", detail::torchtitan_recipe(j, o.torchtitan_base)});
            out.torchrun_target = script("-m torchtitan.train --module frenzy_torchtitan --config frenzy_plan");
            break;
        case launcher::deepspeed:
            out.files.push_back({"ds_config.json", detail::deepspeed_config(j).dump(2) + "\n"});
            out.torchrun_target = script("train.py") + " --deepspeed --deepspeed_config \"$LAUNCH_DIR/ds_config.json\"";
            break;
        case launcher::fsdp:
            out.files.push_back({"fsdp_settings.json", detail::fsdp_settings(j).dump(2) + "\n"});
            out.torchrun_target = script("train.py") + " --settings \"$LAUNCH_DIR/fsdp_settings.json\"";
            break;
    }
    return out;
}

/// The header comments after the first line: the layout and the prediction (with the time limit's margin when the
/// script has one). Public: the Slurm backend's batch script writes the same lines.
inline std::vector<std::string> plan_comments(const job_spec& j, const frenzy::plan& p, std::optional<double> time_margin) {
    const auto& q = j.parallel;
    char pred[160];
    std::snprintf(pred, sizeof pred, "predicted: step %.3f s, %.0f tokens/s, run %.0f s", p.step_time.value, p.tokens_per_s,
                  p.est_time.value);
    std::string limit;
    if (time_margin) {
        char buf[48];
        std::snprintf(buf, sizeof buf, " (time limit +%.0f%%)", 100 * *time_margin);
        limit = buf;
    }
    return {"layout dp=" + std::to_string(q.dp) + " tp=" + std::to_string(q.tp) + " pp=" + std::to_string(q.pp) +
                " vpp=" + std::to_string(q.vpp) + " cp=" + std::to_string(q.cp) + " ep=" + std::to_string(q.ep) +
                " sp=" + (q.sequence_parallel ? "on" : "off") + " sharding=" + std::string(to_string(q.sharding)) +
                " recompute=" + std::string(to_string(q.recompute)) + " micro_batch=" + std::to_string(j.training.micro_batch),
            pred + limit};
}

/// The launch files for a job whose `parallel` is the plan's layout, on `p.nodes` nodes of `p.gpu`.
inline std::vector<launch_file> launch_files(const job_spec& j, const frenzy::plan& p, const launch_options& o) {
    auto payload = launcher_payload_for(j, o);
    if (p.nodes < 1 || p.gpus < 1 || p.gpus % p.nodes != 0)
        throw config_error("plan: " + std::to_string(p.gpus) + " GPUs do not split evenly over " + std::to_string(p.nodes) + " nodes");
    const int per_node = p.gpus / p.nodes;
    auto gres = o.gres_names.find(p.gpu);
    const std::string gres_name = detail::checked_gres_type(gres == o.gres_names.end() ? p.gpu : gres->second, p.gpu);
    const double est = p.est_time.value > 0 ? p.est_time.value * (1 + o.time_margin) : o.default_time_s;
    batch_script_spec b;
    b.comments = {"Written by `frenzy launch`: job \"" + j.name + "\" on " + std::to_string(p.gpus) + " x " + p.gpu + " (" +
                  std::string(to_string(o.launcher)) + ")"};
    for (auto& c : plan_comments(j, p, o.time_margin)) b.comments.push_back(std::move(c));
    b.directives = {"--job-name=" + detail::slurm_job_name(j.name), "--nodes=" + std::to_string(p.nodes),
                    "--ntasks-per-node=1", "--gres=gpu:" + gres_name + ":" + std::to_string(per_node),
                    "--time=" + detail::slurm_time(std::max(est, 600.0)), "--exclusive"};
    b.preamble = payload.preamble;
    b.nodes = p.nodes;
    b.gpus_per_node = per_node;
    b.rdzv_port = o.rdzv_port;
    b.torchrun_target = payload.torchrun_target;
    auto files = std::move(payload.files);
    files.insert(files.begin(), launch_file{"launch.sbatch", batch_script_text(b)});
    return files;
}

/// Plans `job` on `cluster` for the launcher's frameworks, takes plan `plan_index` of the ranking and writes its
/// files. Throws config_error when there is no such plan (the planner's infeasibility reasons in the message).
inline launch_result launch(const job_spec& job, const cluster_spec& cluster, const launch_options& o = {}) {
    auto opt = o.planning;
    opt.frameworks = launcher_frameworks(o.launcher);
    const auto r = planner{}.plan(job, cluster, opt);
    if (o.plan_index >= r.plans.size()) {
        std::string why = "no plan " + std::to_string(o.plan_index + 1) + " (the planner found " + std::to_string(r.plans.size()) + ")";
        for (const auto& f : r.infeasible) why += "; " + f.gpu + ": " + f.reason;
        throw config_error(why);
    }
    launch_result out;
    out.plan = r.plans[o.plan_index];
    out.job = job_for_plan(job, out.plan);
    out.files = launch_files(out.job, out.plan, o);
    return out;
}

/// Writes the files into `dir` (created with its parents when missing) and returns the paths written, in the
/// order of `files`. io_error naming the directory when it cannot be created or a file cannot be written.
inline std::vector<std::string> write_launch_files(const std::vector<launch_file>& files, const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw io_error("launch output directory " + dir + ": " + ec.message());
    std::vector<std::string> paths;
    for (const auto& f : files) {
        const std::string path = (std::filesystem::path(dir) / f.name).string();
        std::ofstream out(path, std::ios::binary);
        if (!out) throw io_error("launch output directory " + dir + ": cannot write " + path);
        out << f.content;
        paths.push_back(path);
    }
    return paths;
}

}  // namespace frenzy
