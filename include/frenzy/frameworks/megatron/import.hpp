#pragma once
// Megatron-LM pretrain_gpt.py arguments -> job spec. Flags and defaults as NVIDIA/Megatron-LM@d98e8a64
// megatron/training/arguments.py defines them (the checked-in list: tests/data/launch/megatron_arguments.txt).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "frenzy/core/checked.hpp"
#include "frenzy/frameworks/megatron/rope.hpp"
#include "frenzy/frameworks/megatron/routing.hpp"
#include "frenzy/io/file.hpp"
#include "frenzy/io/json_reader.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/io/launcher_shell.hpp"
#include "frenzy/frameworks/megatron/options.hpp"
#include "frenzy/train/job.hpp"
#ifdef FRENZY_HAS_YAML
#include <yaml-cpp/yaml.h>

#include "frenzy/io/launcher_yaml.hpp"
#endif

namespace frenzy {

namespace detail {

/// io/file.hpp's bounded reader: regular files only (/dev/zero and directories are refused), at most 256 MiB.
inline std::string read_text_file(const std::string& path) { return read_file_limited(path); }

// arg_int, arg_double, arg_str: frameworks/megatron/options.hpp.
inline std::string arg_text(const cli_argument& a) {
    std::string s = a.flag;
    for (const auto& v : a.values) s += " " + v;
    return s;
}

/// Megatron flags that do not change memory or speed as Frenzy models them (optimiser hyper-parameters, data,
/// logging, checkpointing, initialisation, fusions Frenzy's step model assumes on), by exact name or "prefix*".
inline bool megatron_irrelevant(const std::string& f) {
    static const std::vector<std::string> names{
        "--lr", "--min-lr", "--decoupled-lr", "--decoupled-min-lr", "--lr-decay-style", "--lr-decay-samples",
        "--lr-decay-iters", "--lr-warmup-samples", "--lr-warmup-iters", "--lr-warmup-fraction", "--lr-wsd-decay-style",
        "--clip-grad", "--weight-decay", "--start-weight-decay", "--end-weight-decay", "--weight-decay-incr-style",
        "--adam-beta1", "--adam-beta2", "--adam-eps", "--sgd-momentum", "--init-method-std", "--seed",
        "--use-mcore-models", "--apply-layernorm-1p",
        "--mock-data", "--data-path", "--split", "--data-cache-path", "--tokenizer-type", "--tokenizer-model",
        "--tiktoken-pattern", "--vocab-file", "--merge-file", "--num-workers", "--no-mmap-bin-files",
        "--no-create-attention-mask-in-dataloader", "--save", "--load", "--save-interval", "--ckpt-format",
        "--tensorboard-dir", "--log-interval", "--log-throughput", "--eval-iters", "--eval-interval",
        "--profile", "--profile-step-start", "--profile-step-end", "--distributed-timeout-minutes",
        "--exit-duration-in-mins", "--exit-interval", "--manual-gc", "--manual-gc-interval",
        "--calculate-per-token-loss",
        "--init-method-xavier-uniform",
        "--fp8-amax-history-len", "--fp8-amax-compute-algo", "--fp8-margin",
        "--bias-swiglu-fusion", "--no-bias-swiglu-fusion", "--masked-softmax-fusion", "--no-masked-softmax-fusion",
        "--no-gradient-accumulation-fusion", "--use-distributed-optimizer-overlap", "--train-iters-per-epoch",
        "--moe-router-load-balancing-type", "--moe-aux-loss-coeff",
        "--moe-router-dtype", "--moe-z-loss-coeff", "--moe-router-pre-softmax",
        "--moe-token-drop-policy"};
    static const std::vector<std::string> prefixes{"--log-", "--wandb-", "--tensorboard-", "--eval-", "--save-",
                                                    "--load-", "--ckpt-", "--no-load-", "--no-save-", "--data-",
                                                    "--tokenizer-", "--lr-", "--exit-", "--timing-", "--rerun-"};
    if (std::find(names.begin(), names.end(), f) != names.end()) return true;
    for (const auto& p : prefixes)
        if (f.rfind(p, 0) == 0) return true;
    return false;
}

/// Megatron flags that change memory or speed in ways the job spec does not describe (MoE permute fusion): reported as not
/// understood, with the reason, so the user knows the estimate does not account for them.
inline bool megatron_not_modelled(const std::string& f) {
    static const std::vector<std::string> names{
        "--moe-permute-fusion", "--use-precision-aware-optimizer-no-fp8"};
    return std::find(names.begin(), names.end(), f) != names.end();
}

/// The store_true switches the importer reads: argparse takes no value after them, so `--swiglu no` (or
/// {"swiglu": "no"} in a JSON argument object) is an error, not "on" (Megatron stops at "unrecognized arguments").
inline bool megatron_switch(const std::string& f) {
    static const std::vector<std::string> names{
        "--group-query-attention", "--no-position-embedding", "--use-rotary-position-embeddings", "--swiglu", "--squared-relu",
        "--disable-bias-linear", "--add-bias-linear", "--add-qkv-bias", "--untie-embeddings-and-output-weights", "--bf16",
        "--fp16", "--sequence-parallel", "--use-distributed-optimizer", "--recompute-activations", "--use-flash-attn",
        "--use-precision-aware-optimizer", "--moe-grouped-gemm", "--moe-pad-expert-input-to-capacity",
        "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split", "--fp8-param-gather", "--fp4-param-gather",
        "--grad-reduce-in-bf16", "--tp-comm-overlap", "--overlap-grad-reduce", "--optimizer-cpu-offload",
        "--use-megatron-fsdp", "--cross-entropy-loss-fusion", "--overlap-param-gather", "--multi-latent-attention",
        "--mock-data", "--use-rope-scaling", "--qk-layernorm", "--moe-router-enable-expert-bias", "--quick-geglu"};
    return std::find(names.begin(), names.end(), f) != names.end();
}

/// Megatron's choices for the flags whose value the importer reads (megatron/core/transformer/transformer_config.py
/// @d98e8a64, whose dataclass fields become the flags); another value is an error, as argparse makes it.
inline void check_megatron_choice(const cli_argument& a) {
    static const std::vector<std::pair<std::string, std::vector<std::string>>> choices{
        {"--fp8-format", {"e4m3", "hybrid"}},
        {"--fp4-format", {"e2m1"}},  // TransformerConfig fp8: Literal['e4m3', 'hybrid'], fp4: Literal['e2m1']
        {"--fp8-recipe", {"delayed", "tensorwise", "mxfp8", "blockwise", "custom"}},  // megatron/core/enums.py Fp8Recipe
        {"--fp4-recipe", {"nvfp4", "custom"}},  // TransformerConfig fp4_recipe: Literal['nvfp4', 'custom']
        // megatron/training/arguments.py _add_training_args: the precision-aware optimizer's and Megatron-FSDP's dtypes
        {"--main-params-dtype", {"fp32", "fp16"}},
        {"--main-grads-dtype", {"fp32", "bf16"}},
        {"--exp-avg-dtype", {"fp32", "fp16", "bf16", "fp8"}},
        {"--exp-avg-sq-dtype", {"fp32", "fp16", "bf16", "fp8"}},
        {"--megatron-fsdp-main-params-dtype", {"fp32", "bf16", "fp16", "auto"}},
        {"--megatron-fsdp-main-grads-dtype", {"fp32", "bf16", "fp16", "auto"}},
    };
    for (const auto& [flag, ok] : choices) {
        if (a.flag != flag) continue;
        const auto v = arg_str(a);
        if (std::find(ok.begin(), ok.end(), v) == ok.end()) {
            std::string list;
            for (const auto& c : ok) list += (list.empty() ? "" : " | ") + c;
            throw config_error(flag + "=\"" + v + "\" must be one of " + list + " (Megatron-LM arguments.py choices)");
        }
    }
}

/// What megatron_import_arguments reads from the flags and applies only once all are read (their precedence).
struct megatron_pending {
    std::optional<std::int64_t> ffn, gbs, vpp_layers, vpp_stages, query_groups, train_samples, train_iters, max_pos;
    bool gqa = false, main_bf16 = false, fp8 = false, fp4 = false, fp4_param = false, mla = false, yarn = false;
    frameworks::megatron::rope_flags rope;  ///< frameworks/megatron/rope.hpp
    frameworks::megatron::routing_flags routing;  ///< frameworks/megatron/routing.hpp
    std::optional<std::string> fp8_recipe;  ///< --fp8-recipe (TransformerConfig default "delayed")
    std::optional<std::string> fp4_recipe;  ///< --fp4-recipe (TransformerConfig default "nvfp4")
    // multi-latent attention: arguments.py _add_mla_args defaults (read only with --multi-latent-attention)
    std::int64_t kv_lora_rank = 32, qk_head_dim = 128, qk_pos_emb_head_dim = 64, v_head_dim = 128;
};

/// Megatron's defaults where Frenzy's differ (a job with no flags is Megatron's default model and training).
inline void megatron_defaults(job_spec& j) {
    auto& m = j.model;
    auto& t = j.training;
    j.runtime.framework = frameworks::megatron::handle;
    m.name = "megatron";
    m.tied_embeddings = true;                                  // Megatron ties unless --untie-embeddings-and-output-weights
    m.position_embedding = position_embedding::learned;        // --position-embedding-type default learned_absolute
    m.norm = norm_kind::layernorm;                             // --normalization default LayerNorm
    m.bias = true;                                             // --add-bias-linear default
    t.precision = precision::fp32;                             // neither --bf16 nor --fp16
    t.optimizer = optimizer_kind::adamw;                       // --optimizer adam: Adam with decoupled weight decay
}

/// The model's flags (shape, embeddings, normalisation, activation, biases); false when `a` is not one.
inline bool take_megatron_model_flag(const cli_argument& a, transformer_spec& m, megatron_pending& s,
                                     launcher_import& out) {
    const auto& f = a.flag;
    if (f == "--num-layers") m.layers = arg_int(a);
    else if (f == "--hidden-size") m.hidden = arg_int(a);
    else if (f == "--ffn-hidden-size") s.ffn = arg_int(a);
    else if (f == "--num-attention-heads") m.heads = arg_int(a);
    else if (f == "--kv-channels") m.head_dim = arg_int(a);
    else if (f == "--group-query-attention") s.gqa = true;
    else if (f == "--num-query-groups") s.query_groups = check_bound("--num-query-groups", arg_int(a), bounds::heads);
    else if (f == "--vocab-size") m.vocab = arg_int(a);
    else if (f == "--make-vocab-size-divisible-by") out.ignored.push_back(arg_text(a));  // padding is the estimator's rule
    else if (f == "--max-position-embeddings") s.max_pos = arg_int(a);
    else if (f == "--position-embedding-type") {
        const auto v = arg_str(a);
        s.yarn = v == "yarn";
        if (v == "rope" || v == "yarn") m.position_embedding = position_embedding::rope;
        else if (v == "learned_absolute") m.position_embedding = position_embedding::learned;
        else out.unknown.push_back(arg_text(a));
    } else if (f == "--no-position-embedding") m.position_embedding = position_embedding::rope;  // legacy: no learned table
    else if (f == "--use-rotary-position-embeddings") m.position_embedding = position_embedding::rope;
    else if (f == "--normalization") {
        const auto v = arg_str(a);
        if (v == "RMSNorm") m.norm = norm_kind::rmsnorm;
        else if (v == "LayerNorm") m.norm = norm_kind::layernorm;
        else out.unknown.push_back(arg_text(a));
    } else if (f == "--swiglu") m.activation = activation::swiglu;
    else if (f == "--squared-relu") m.activation = activation::squared_relu;
    else if (f == "--disable-bias-linear") m.bias = false;
    else if (f == "--add-bias-linear") m.bias = true;
    else if (f == "--add-qkv-bias") m.qkv_bias = true;
    else if (f == "--untie-embeddings-and-output-weights") m.tied_embeddings = false;
    else if (f == "--multi-latent-attention") s.mla = true;
    else if (f == "--q-lora-rank") m.mla.q_lora_rank = check_bound(f, arg_int(a), bounds::hidden);
    else if (f == "--kv-lora-rank") s.kv_lora_rank = check_bound(f, arg_int(a), bounds::hidden);
    else if (f == "--qk-head-dim") s.qk_head_dim = check_bound(f, arg_int(a), bounds::hidden);
    else if (f == "--qk-pos-emb-head-dim") s.qk_pos_emb_head_dim = check_bound(f, arg_int(a), bounds::hidden);
    else if (f == "--v-head-dim") s.v_head_dim = check_bound(f, arg_int(a), bounds::hidden);
    else if (frameworks::megatron::take_rope_flag(a, m, s.rope)) {}
    else if (frameworks::megatron::take_routing_flag(a, m, s.routing, out)) {}
    else return false;
    return true;
}

/// The training flags (sequence, batch, length of the run, precision, optimiser); false when `a` is not one.
inline bool take_megatron_training_flag(const cli_argument& a, training_spec& t, megatron_pending& s,
                                        launcher_import& out) {
    const auto& f = a.flag;
    if (f == "--seq-length") t.seq_len = arg_int(a);
    else if (f == "--micro-batch-size") t.micro_batch = arg_int(a);
    else if (f == "--global-batch-size") s.gbs = arg_int(a);
    else if (f == "--train-samples") s.train_samples = arg_int(a);
    else if (f == "--train-iters") s.train_iters = arg_int(a);
    else if (f == "--bf16") t.precision = precision::bf16_mixed;
    else if (f == "--fp16") t.precision = precision::fp16_mixed;
    else if (f == "--fp8-format") s.fp8 = true;
    else if (f == "--fp8-recipe") s.fp8_recipe = arg_str(a);
    // a fine-tune's starting weights, or --load read as a fine-tune's (checkpointing.py@d98e8a64 load_checkpoint)
    else if (f == "--pretrained-checkpoint" || f == "--finetune") t.finetune.method = finetune_method::full;
    else if (f == "--fp4-format") s.fp4 = true;
    else if (f == "--fp4-recipe") s.fp4_recipe = arg_str(a);
    else if (f == "--fp4-param-gather") s.fp4_param = true;
    // Understood, and no effect on the peak: the fused cross-entropy saves the same fp32 softmax and casts the
    // gradient to bf16 as autograd does (megatron/core/fusions/fused_cross_entropy.py@d98e8a64); the
    // overlapped parameter all-gather writes into the distributed optimizer's parameter buffer in place
    // (megatron/core/distributed/param_and_grad_buffer.py).
    else if (f == "--cross-entropy-loss-fusion" || f == "--overlap-param-gather")
        out.ignored.push_back(arg_text(a));
    else if (f == "--megatron-fsdp-main-params-dtype") s.main_bf16 = arg_str(a) == "bf16";
    else if (f == "--use-precision-aware-optimizer" || f == "--main-params-dtype" || f == "--main-grads-dtype" ||
             f == "--exp-avg-dtype" || f == "--exp-avg-sq-dtype" || f == "--megatron-fsdp-main-grads-dtype") {}
    else if (f == "--optimizer") {
        const auto v = arg_str(a);
        if (v == "adam") t.optimizer = optimizer_kind::adamw;
        else if (v == "sgd") t.optimizer = optimizer_kind::sgd;
        else out.unknown.push_back(arg_text(a));
    } else return false;
    return true;
}

/// The layout and runtime flags (parallelism, sharding, recomputation, attention); false when `a` is not one.
inline bool take_megatron_parallel_flag(const cli_argument& a, job_spec& j, megatron_pending& s, launcher_import& out) {
    const auto& f = a.flag;
    auto& p = j.parallel;
    if (f == "--tensor-model-parallel-size") p.tp = arg_int(a);
    else if (f == "--pipeline-model-parallel-size") p.pp = arg_int(a);
    else if (f == "--num-virtual-stages-per-pipeline-rank") s.vpp_stages = arg_int(a);
    else if (f == "--num-layers-per-virtual-pipeline-stage") s.vpp_layers = arg_int(a);
    else if (f == "--context-parallel-size") p.cp = arg_int(a);
    else if (f == "--sequence-parallel") p.sequence_parallel = true;
    else if (f == "--use-distributed-optimizer") p.sharding = sharding::optimizer;
    else if (f == "--recompute-activations") p.recompute = recompute::selective;
    else if (f == "--recompute-granularity") {
        const auto v = arg_str(a);
        if (v == "full") p.recompute = recompute::full;
        else if (v == "selective") p.recompute = recompute::selective;
        else out.unknown.push_back(arg_text(a));
    }
    else if (f == "--attention-backend") {
        const auto v = arg_str(a);
        if (v == "unfused" || v == "local") j.runtime.attention = attention_impl::unfused;
        else if (v == "flash" || v == "fused") j.runtime.attention = attention_impl::flash;
        else if (v == "auto") j.runtime.attention = attention_impl::automatic;
        else out.unknown.push_back(arg_text(a));
    } else if (f == "--use-flash-attn") j.runtime.attention = attention_impl::flash;
    // the cache emptied after every forward/backward: the fit rule's flush (memory/allocator.hpp cache_returned_whole)
    else if (f == "--empty-unused-memory-level")
        j.runtime.empty_unused_memory_level = check_bound(f, arg_int(a), bounds::empty_cache_level);
    else return false;
    return true;
}

/// The model's shape flags Megatron requires (it has no default for them).
inline void require_megatron_shape(const transformer_spec& m) {
    for (auto [flag, v] : {std::pair{"--num-layers", m.layers}, {"--hidden-size", m.hidden}, {"--num-attention-heads", m.heads},
                           {"--vocab-size", m.vocab}})
        if (v == 0)
            throw config_error(std::string(flag) + " is missing from the Megatron arguments" +
                               (std::string(flag) == "--vocab-size" ? " (the tokenizer's vocabulary is not read: give --vocab-size)" : ""));
}

/// The model's fields that depend on several flags: query groups, head size, FFN size, position table.
inline void finish_megatron_model(transformer_spec& m, const training_spec& t, const megatron_pending& s,
                                  launcher_import& out) {
    if (s.mla)
        m.mla = {.q_lora_rank = m.mla.q_lora_rank, .kv_lora_rank = s.kv_lora_rank, .qk_nope_head_dim = s.qk_head_dim,
                 .qk_rope_head_dim = s.qk_pos_emb_head_dim, .v_head_dim = s.v_head_dim};
    else if (m.mla != mla_spec{}) {
        out.ignored.push_back("--q-lora-rank (without --multi-latent-attention)");
        m.mla = {};
    }
    if (s.gqa && s.query_groups) m.kv_heads = *s.query_groups;
    if (!s.gqa && s.query_groups) out.ignored.push_back("--num-query-groups (without --group-query-attention)");
    if (m.hidden > 0 && m.heads > 0 && m.head_dim == m.hidden / m.heads && m.hidden % m.heads == 0) m.head_dim = 0;
    if (s.ffn) m.ffn_hidden = *s.ffn;
    else if (m.hidden > 0)  // arguments.py: 4h, or for SwiGLU int((4h x 2/3) / 64) x 64
        m.ffn_hidden = m.activation == activation::swiglu ? static_cast<std::int64_t>((4.0 * static_cast<double>(m.hidden) * 2 / 3) / 64) * 64
                                                          : 4 * m.hidden;
    // a learned table keeps its size; for RoPE the value only bounds the sequence, and seq_len is the default (0)
    if (s.max_pos && !(m.position_embedding == position_embedding::rope && *s.max_pos == t.seq_len)) m.max_positions = *s.max_pos;
    frameworks::megatron::finish_rope(m, s.rope, s.yarn, out);
    frameworks::megatron::finish_routing(m, s.routing, out);
}

/// --fp4-format and its options as megatron/training/arguments.py@d98e8a64 validate_args reads them (fp4_utils.py).
inline void finish_megatron_fp4(job_spec& j, const megatron_pending& s, launcher_import& out) {
    if (s.fp4 && s.fp8) throw config_error("--fp4-format with --fp8-format: Megatron runs one or the other (\"--fp4-format and "
                                           "--fp8-format cannot be used simultaneously\")");
    if (s.fp4_param && !s.fp4) throw config_error("--fp4-param-gather needs --fp4-format (Megatron refuses it alone)");
    if (!s.fp4) {
        if (s.fp4_recipe) out.ignored.push_back("--fp4-recipe " + *s.fp4_recipe + " (without --fp4-format)");
        return;
    }
    j.training.precision = precision::fp4_mixed;
    if (s.fp4_recipe == "custom") out.ignored.push_back("--fp4-recipe custom (a quantizer factory's recipe is not modelled: read as nvfp4)");
    // NVFP4 parameters (no 16-bit copy of the GEMM weights): the estimate keeps the copy, over by 0.875 B a weight
    if (s.fp4_param) out.ignored.push_back("--fp4-param-gather (NVFP4 parameters without the 16-bit copy: not modelled, the estimate keeps it, an over-estimate)");
}

/// The precision, in the flags' precedence: --fp8-format, then the options (frameworks/megatron/options.hpp), then
/// --fp4-format and --main-params-dtype.
inline void finish_megatron_precision(job_spec& j, const megatron_pending& s, megatron_options& options,
                                      launcher_import& out) {
    auto& t = j.training;
    if (s.fp8) t.precision = precision::fp8_mixed;
    options.finish(j, out);  // after --fp8-format, before --fp4-format / --main-params-dtype (their precedence)
    finish_megatron_fp4(j, s, out);
    if (s.fp8_recipe) {  // megatron/core/fp8_utils.py@d98e8a64 get_fp8_recipe reads it only under --fp8-format
        if (t.precision != precision::fp8_mixed) out.ignored.push_back("--fp8-recipe " + *s.fp8_recipe + " (without --fp8-format)");
        else if (*s.fp8_recipe == "custom") out.ignored.push_back("--fp8-recipe custom (a quantizer factory's recipe is not modelled: read as delayed)");
        else j.runtime.fp8_recipe = parse_enum<fp8_recipe>("--fp8-recipe", *s.fp8_recipe);
    }
    if (s.main_bf16 && t.precision == precision::bf16_mixed) t.precision = precision::bf16;
}

/// The pipeline's virtual stages and schedule, and sequence parallelism (which Megatron drops at tp 1).
inline void finish_megatron_pipeline(job_spec& j, const megatron_pending& s, launcher_import& out) {
    auto& p = j.parallel;
    if (s.vpp_stages) p.vpp = *s.vpp_stages;
    else if (s.vpp_layers && *s.vpp_layers > 0 && p.pp > 0) p.vpp = j.model.layers / p.pp / *s.vpp_layers;
    if (p.vpp > 1) p.schedule = pipeline_schedule::interleaved;
    if (p.sequence_parallel && p.tp == 1) {  // arguments.py: "Disabling sequence parallelism because tensor model parallelism is disabled"
        p.sequence_parallel = false;
        out.ignored.push_back("--sequence-parallel (Megatron disables it at tensor-model-parallel-size 1)");
    }
}

/// dp from the world size (world / (tp x pp x cp); no world leaves the layout not fixed), then the global batch
/// and the run's tokens, which depend on dp.
inline void finish_megatron_world(job_spec& j, std::int64_t world, const megatron_pending& s, launcher_import& out) {
    auto& t = j.training;
    auto& p = j.parallel;
    out.world_size = world;
    const std::int64_t per_replica = p.tp * p.pp * p.cp;
    if (world > 0) {
        if (per_replica <= 0 || world % per_replica != 0)
            throw config_error("world size " + std::to_string(world) + " is not a multiple of tp x pp x cp = " +
                               std::to_string(per_replica));
        p.dp = world / per_replica;
    } else {
        out.has_parallel = false;
    }
    t.global_batch = s.gbs ? *s.gbs : t.micro_batch * p.dp;
    if (s.train_samples) t.total_tokens = static_cast<double>(*s.train_samples) * static_cast<double>(t.seq_len);
    else if (s.train_iters) t.total_tokens = static_cast<double>(*s.train_iters) * static_cast<double>(t.global_batch * t.seq_len);
}

}  // namespace detail

/// Megatron-LM arguments (as pretrain_gpt.py receives them) -> job. `world_size` (GPUs) gives dp = world /
/// (tp x pp x cp); 0 leaves dp 1 and marks the layout as not fixed (has_parallel=false) unless the caller sets it.
inline launcher_import megatron_import_arguments(const std::vector<std::string>& args, const import_options& opt = {},
                                                 std::int64_t world_size = 0) {
    launcher_import out;
    std::vector<std::string> stray;
    const auto parsed = split_arguments(args, &stray);
    for (auto& s : stray) out.unknown.push_back(s);
    job_spec j;
    auto& m = j.model;
    detail::megatron_defaults(j);
    detail::megatron_pending pending;
    megatron_options options;  // frameworks/megatron/options.hpp: the options a measurement table's other_flags names too
    for (const auto& a : parsed) {
        const auto& f = a.flag;
        if (detail::megatron_switch(f) && !a.values.empty())
            throw config_error(f + " is a switch and takes no value (given \"" + a.values[0] + "\")");
        detail::check_megatron_choice(a);
        if (options.take(a, j)) continue;
        if (detail::take_megatron_model_flag(a, m, pending, out)) continue;
        if (detail::take_megatron_training_flag(a, j.training, pending, out)) continue;
        if (detail::take_megatron_parallel_flag(a, j, pending, out)) continue;
        if (detail::megatron_not_modelled(f)) out.unknown.push_back(detail::arg_text(a) + " (not modelled)");
        else if (detail::megatron_irrelevant(f)) out.ignored.push_back(detail::arg_text(a));
        else out.unknown.push_back(detail::arg_text(a));
    }
    detail::require_megatron_shape(m);
    detail::finish_megatron_model(m, j.training, pending, out);
    detail::finish_megatron_precision(j, pending, options, out);
    detail::finish_megatron_pipeline(j, pending, out);
    if (world_size > 0 && opt.world_size > 0 && world_size != opt.world_size)
        throw config_error("the script's torchrun starts " + std::to_string(world_size) + " processes; the world size given "
                           "beside it is " + std::to_string(opt.world_size) + " (import_options.world_size, --world-size)");
    detail::finish_megatron_world(j, world_size > 0 ? world_size : opt.world_size, pending, out);
    m.name = !opt.model.name.empty() ? opt.model.name : !opt.name.empty() ? opt.name : "megatron";
    j.name = opt.name.empty() ? m.name : opt.name;
    validate(m);
    validate(j.training);
    if (out.has_parallel) validate(j);
    out.job = j;
    return out;
}

/// World size from torchrun's own arguments (--nproc-per-node / --nproc_per_node x --nnodes); 0 if not given.
inline std::int64_t torchrun_world_size(const std::vector<std::string>& launcher) {
    std::int64_t per = 0, nodes = 1;
    const auto a = split_arguments(launcher);
    for (const auto& x : a) {
        // torchrun also takes gpu | cpu | auto for --nproc-per-node and MIN:MAX for --nnodes: a count Frenzy cannot
        // know (0, with the layout left open); a number must be a positive one.
        auto count = [&](const std::string& v) -> std::int64_t {
            if (v.empty() || v.find_first_not_of("+-0123456789") != std::string::npos) return 0;
            return check_bound("torchrun " + x.flag, parse_int64(v, "torchrun " + x.flag), bounds::gpus);
        };
        if ((x.flag == "--nproc-per-node" || x.flag == "--nproc_per_node") && x.values.size() == 1) per = count(x.values[0]);
        if (x.flag == "--nnodes" && x.values.size() == 1) {
            const auto& v = x.values[0];
            nodes = count(v.substr(v.find(':') == std::string::npos ? 0 : v.find(':') + 1));
        }
    }
    return per > 0 && nodes > 0 ? per * nodes : 0;
}

/// A Megatron launch script (bash, as Megatron's examples are written), a JSON list of arguments
/// (["--num-layers", "32", ...]) or object ({"num-layers": 32, "swiglu": true, ...}) -> job.
inline launcher_import megatron_import_text(const std::string& text, const import_options& opt = {}) {
    std::vector<std::string> args;
    std::int64_t world = 0;
    std::vector<std::string> notes;
    std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && (text[first] == '[' || text[first] == '{')) {
        // strict and bounded (io/json_reader.hpp): no library text, no 10^5-deep nesting for dump() to recurse into
        const nlohmann::json j = frenzy::parse_json_text(text, "megatron arguments");
        if (j.is_array()) {
            for (const auto& v : j) args.push_back(v.is_string() ? v.get<std::string>() : v.dump());
        } else {
            for (const auto& [k, v] : j.items()) {
                const std::string flag = k.rfind("--", 0) == 0 ? k : "--" + k;
                if (v.is_boolean()) { if (v.get<bool>()) args.push_back(flag); continue; }
                args.push_back(flag);
                args.push_back(v.is_string() ? v.get<std::string>() : v.dump());
            }
        }
    } else {
        auto cmd = read_shell_script(text, opt.positional);
        args = cmd.args;
        world = torchrun_world_size(cmd.launcher);
        notes = cmd.notes;
    }
    auto r = megatron_import_arguments(args, opt, world);
    r.notes = notes;
    return r;
}

inline launcher_import megatron_import_file(const std::string& path, const import_options& opt = {}) {
    try {
        return megatron_import_text(detail::read_text_file(path), opt);
    } catch (const config_error& e) {
        throw config_error(path + ": " + e.what());
    }
}

/// Whether a Megatron argument file is YAML (`--yaml-cfg`, megatron_import_yaml below): by its extension.
inline bool is_yaml_path(std::string_view path) { return path.ends_with(".yaml") || path.ends_with(".yml"); }

#ifdef FRENZY_HAS_YAML
// Megatron-LM's YAML argument file (`pretrain_gpt.py --yaml-cfg FILE`) -> the argument list megatron_import_arguments
// reads, so a YAML configuration and the equivalent launch script give the same job. The format is the one
// NVIDIA/Megatron-LM@d98e8a64 megatron/training/yaml_arguments.py reads: load_yaml() turns the mapping into a
// namespace whose top-level keys are the argparse destinations of megatron/training/arguments.py (micro_batch_size,
// seq_length, ...), and validate_yaml() flattens two sections into it: `model_parallel` (ModelParallelConfig fields)
// and `language_model` (TransformerConfig fields, given to TransformerConfig directly by
// core_transformer_config_from_yaml). The layout of such a file: examples/gpt3/gpt_config.yaml at
// Megatron-LM@532ad926 (removed from the tree later). Needs yaml-cpp (FRENZY_HAS_YAML).

/// Flags from a Megatron YAML argument file, and what could not be turned into flags.
struct megatron_yaml_arguments {
    std::vector<std::string> args;   ///< "--flag", "value", ... in the order of the file (sections last)
    std::vector<std::string> notes;  ///< keys not turned into flags, with why
};

namespace detail {

/// The value of one key as argparse would receive it; false for a key that produces no flag. TransformerConfig
/// fields whose argparse flag has another name are renamed as yaml_arguments.py maps them (num_moe_experts ->
/// args.num_experts; activation_func swiglu/squaredrelu; add_bias_linear; fp8 -> --fp8-format; num_query_groups,
/// which TransformerConfig uses without a --group-query-attention switch).
inline void yaml_key_flags(const std::string& section, const std::string& key, const YAML::Node& v,
                           megatron_yaml_arguments& out) {
    const std::string where = section.empty() ? key : section + "." + key;
    auto flag = [](std::string k) {
        for (auto& c : k)
            if (c == '_') c = '-';
        return "--" + k;
    };
    auto push = [&](std::string f, std::vector<std::string> values = {}) {
        out.args.push_back(std::move(f));
        for (auto& x : values) out.args.push_back(std::move(x));
    };
    if (!key.empty() && key.front() == '_') return;  // private namespace fields (_cpu_offloading_context)
    if (v.IsNull()) return;                          // null: argparse's default
    if (v.IsMap()) {
        out.notes.push_back(where + ": a nested mapping Megatron's YAML reader does not flatten (not read)");
        return;
    }
    if (v.IsSequence()) {
        std::vector<std::string> values;
        for (const auto& e : v) {
            if (!e.IsScalar()) {
                out.notes.push_back(where + ": a list of non-scalars (not read)");
                return;
            }
            values.push_back(e.Scalar());
        }
        push(flag(key), values);
        return;
    }
    const std::string s = v.Scalar();
    if (s.find("${") != std::string::npos)  // Megatron's !pathex resolver expands ${VAR}; the importer does not
        out.notes.push_back(where + "=" + s + ": environment variable not expanded");
    const auto b = yaml_bool(v);
    if (section == "language_model") {
        if (key == "num_moe_experts") return push("--num-experts", {s});
        if (key == "activation_func") {
            if (s == "swiglu") return push("--swiglu");
            if (s == "squaredrelu") return push("--squared-relu");
            if (s == "gelu") return;  // Megatron's default activation
            out.notes.push_back(where + "=" + s + ": not one of swiglu | squaredrelu | gelu (yaml_arguments.py)");
            return;
        }
        if (key == "add_bias_linear" && b) return push(*b ? "--add-bias-linear" : "--disable-bias-linear");
        if (key == "fp8") return push("--fp8-format", {s});
        if (key == "num_query_groups") return push("--group-query-attention"), push("--num-query-groups", {s});
        if (key == "gated_linear_unit" && b) return;  // the gate comes with activation_func (swiglu sets it)
    }
    if (section == "model_parallel" && key == "virtual_pipeline_model_parallel_size")
        return push("--num-virtual-stages-per-pipeline-rank", {s});
    if (b) {
        if (*b) push(flag(key));  // store_true switches; false is argparse's default
        return;
    }
    push(flag(key), {s});
}

}  // namespace detail

/// The flags a Megatron YAML argument file stands for. config_error (naming the file's structure) when the text
/// is not YAML or not a mapping.
inline megatron_yaml_arguments megatron_yaml_to_arguments(const std::string& text) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw config_error("megatron YAML arguments: not YAML (line " + std::to_string(e.mark.line + 1) + ": " + e.msg + ")");
    }
    if (!root.IsMap()) throw config_error("megatron YAML arguments: the file must be a mapping of argument names to values");
    megatron_yaml_arguments out;
    check_yaml_keys(root, "", 0, "megatron YAML arguments");
    // Top-level keys first, then the two sections (whose TransformerConfig fields decide the model).
    for (const auto& kv : root) {
        const auto key = kv.first.as<std::string>();
        if (key == "model_parallel" || key == "language_model") {
            if (!kv.second.IsMap() && !kv.second.IsNull())
                throw config_error("megatron YAML arguments: " + key + " must be a mapping of field names to values");
            continue;
        }
        detail::yaml_key_flags("", key, kv.second, out);
    }
    for (const char* section : {"model_parallel", "language_model"})
        if (const auto s = root[section]; s && s.IsMap())
            for (const auto& kv : s) detail::yaml_key_flags(section, kv.first.as<std::string>(), kv.second, out);
    // A switch or value given twice (swiglu at the top and activation_func: swiglu) is one argument.
    std::vector<std::string> args;
    std::set<std::string> seen;
    const auto parts = split_arguments(out.args);
    for (const auto& a : parts) {
        const auto text = detail::arg_text(a);
        if (!seen.insert(text).second) continue;
        args.push_back(a.flag);
        args.insert(args.end(), a.values.begin(), a.values.end());
    }
    out.args = std::move(args);
    return out;
}

/// A Megatron YAML argument file -> job, as megatron_import_arguments reads the same flags from a script.
/// The world size is not in the file (Megatron takes it from the launcher): opt.world_size gives it.
inline launcher_import megatron_import_yaml(const std::string& text, const import_options& opt = {}) {
    const auto y = megatron_yaml_to_arguments(text);
    auto r = megatron_import_arguments(y.args, opt, opt.world_size);
    r.notes.insert(r.notes.end(), y.notes.begin(), y.notes.end());
    return r;
}
#endif  // FRENZY_HAS_YAML

}  // namespace frenzy
