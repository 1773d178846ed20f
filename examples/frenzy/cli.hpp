#pragma once
// Shared pieces of the frenzy CLI: the subcommands' add_* functions, the options every subcommand spells the same way (the job,
// the cluster, --margin, durations, output files), and output helpers. One meaning per option name, everywhere.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/suggest.hpp"
#include "frenzy/core/text.hpp"
#include "frenzy/io/cluster_json.hpp"
#include "frenzy/io/duration.hpp"
#include "frenzy/io/job_json.hpp"
#include "frenzy/frameworks/launchers.hpp"
#include "frenzy/memory/fit.hpp"
#include "frenzy/io/prices.hpp"
#include "frenzy/plan/options.hpp"
#include "frenzy/plan/plan.hpp"
#include "frenzy/train/fp8_recipe.hpp"

namespace frenzy_cli {

/// Where the formats are documented (printed in --help).
inline constexpr const char* formats_doc = "docs/formats.md";

// Each cmd_*.cpp defines the add_* of its subcommands; main() calls them in the order `frenzy --help` lists them.
void add_models(CLI::App& app);     ///< models (cmd_models.cpp)
void add_gpus(CLI::App& app);       ///< gpus (cmd_gpus.cpp)
void add_estimate(CLI::App& app);   ///< estimate (cmd_estimate.cpp)
void add_validate(CLI::App& app);   ///< validate (cmd_estimate.cpp)
void add_plan(CLI::App& app);       ///< plan (cmd_plan.cpp)
void add_launch(CLI::App& app);     ///< launch and import (cmd_launch.cpp)
void add_calibrate(CLI::App& app);  ///< calibrate (cmd_calibrate.cpp)
void add_simulate(CLI::App& app);   ///< simulate (cmd_simulate.cpp)
void add_trace(CLI::App& app);      ///< trace synth (cmd_trace.cpp)
void add_serve(CLI::App& app);      ///< serve, submit, status, cancel (cmd_serve.cpp; only with frenzy::service)
void add_report(CLI::App& app);     ///< report (cmd_report.cpp)
void add_completion(CLI::App& app); ///< completion bash|zsh|fish (cmd_completion.cpp); added last: it lists the others

/// Writes the HTML report of a `--json` document (estimate, plan, simulate --runs) to `path` (cmd_report.cpp).
void write_html_report(const std::string& json_text, const std::string& source, const std::string& path,
                       const std::string& field = "--html");
/// `--html FILE` of estimate, plan and simulate.
inline CLI::Option* add_html_option(CLI::App* c, std::string& path) {
    return c->add_option("--html", path, "Also write a self-contained HTML report (charts and tables; opens offline) to "
                                         "this file (`frenzy report --help`)");
}

/// Exit code a subcommand wants (0 unless it sets it, e.g. validate with rows out of tolerance).
inline int& exit_code() {
    static int c = 0;
    return c;
}
/// `frenzy estimate` with a GPU type when the verdict is "does not fit" (fits and tight exit 0), so a script can
/// branch on it.
inline constexpr int exit_does_not_fit = 4;

/// A progress line on stderr ("frenzy calibrate: cross-validating (5 folds)..."), rewritten in place, only when
/// stderr is a terminal and --quiet was not given; done() clears it.
class progress_line {
public:
    explicit progress_line(bool quiet) : on_(!quiet && ::isatty(2)) {}
    progress_line(const progress_line&) = delete;
    progress_line& operator=(const progress_line&) = delete;
    ~progress_line() { done(); }
    void show(std::string_view what) {
        if (!on_) return;
        fmt::print(stderr, "\r\033[K{}...", what);
        std::fflush(stderr);
        shown_ = true;
    }
    void done() {
        if (shown_) fmt::print(stderr, "\r\033[K");
        shown_ = false;
    }

private:
    bool on_;
    bool shown_ = false;
};

/// "46.7B parameters, 12.9B active" (a mixture of experts) or "8.03B parameters": what the job's header line says.
inline std::string parameters_text(double total, double active) {
    auto t = fmt::format("{:.3g}B parameters", total / 1e9);
    if (active > 0 && active != total) t += fmt::format(", {:.3g}B active", active / 1e9);
    return t;
}

/// The job's precision as the header lines say it, fp8 with the recipe it runs: "fp8-mixed (delayed scaling)".
inline std::string precision_text(const frenzy::job_spec& j) {
    std::string t(frenzy::to_string(j.training.precision));
    if (j.training.precision == frenzy::precision::fp8_mixed) t += fmt::format(" ({} scaling)", frenzy::to_string(frenzy::fp8_recipe_of(j)));
    return t;
}

/// What the job trains, as the header lines say it (issue 55: LoRA/QLoRA went unnamed): "" for pretraining,
/// ", LoRA r16 on q,k,v,o", ", QLoRA r64 on q,k,v,o,gate,up,down", ", full fine-tune", ", 8 layers frozen".
inline std::string finetune_text(const frenzy::job_spec& j) {
    const auto& f = j.training.finetune;
    using m = frenzy::finetune_method;
    if (f.adapters()) {
        std::string t;
        for (const auto& [bit, name] : frenzy::lora_target_names)
            if (f.targets & bit) t += (t.empty() ? "" : ",") + std::string(name);
        return fmt::format(", {} r{} on {}", f.method == m::qlora ? "QLoRA" : "LoRA", f.rank, t);
    }
    if (f.frozen_layers > 0) return fmt::format(", fine-tune with {} layers frozen", f.frozen_layers);
    return f.method == m::full ? ", full fine-tune" : "";
}

/// Human-readable bytes in GiB with two decimals.
inline std::string gib(double b) { return fmt::format("{:.2f}", b / (1024.0 * 1024.0 * 1024.0)); }
/// Under a stage table whose "grads" shows "-" (issue 55: "grads 0.00" at the peak read like a bug).
inline constexpr const char* no_gradients_note =
    "grads -: no gradient on the GPU at that stage's peak: it comes before backward allocates them (or they are "
    "offloaded, or the stage trains none); the optimizer step, which holds them, peaks lower";

/// Validator of a whole-number flag: digits only (an optional leading '-'), no overflow past int64 (CLI11's own
/// conversion saturates silently), within [lo, hi]. The message CLI11 prints names the option.
inline CLI::Validator whole_number(std::int64_t lo, std::int64_t hi) {
    return CLI::Validator(
        [lo, hi](std::string& text) -> std::string {
            std::int64_t v = 0;
            const char* end = text.data() + text.size();
            const auto [ptr, ec] = std::from_chars(text.data(), end, v);
            if (ec == std::errc::result_out_of_range) return "\"" + text.substr(0, 40) + "\" is out of range (at most " + std::to_string(hi) + ")";
            if (ec != std::errc() || ptr != end) return "\"" + text.substr(0, 40) + "\" is not a whole number";
            if (v < lo || v > hi) return text + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
            return {};
        },
        "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}
/// whole_number over a bound of core/checked.hpp (every flag's range is one of `frenzy::bounds`).
inline CLI::Validator whole_number(frenzy::int_bound b) { return whole_number(b.min, b.max); }

/// Validator of a text flag given a value: "" is refused rather than read as the flag left out (CLI11 passes it).
inline CLI::Validator non_empty() {
    return CLI::Validator([](std::string& text) -> std::string { return text.empty() ? "is empty: leave the flag out for its default" : ""; },
                          "TEXT");
}

/// Validator of a finite number in [lo, hi] (NaN and inf rejected; short bounds in the message).
inline CLI::Validator finite_number(double lo, double hi) {
    return CLI::Validator(
        [lo, hi](std::string& text) -> std::string {
            double v = 0;
            std::size_t used = 0;
            try {
                v = std::stod(text, &used);
            } catch (const std::exception&) {
                return "\"" + text.substr(0, 40) + "\" is not a number";
            }
            if (used != text.size()) return "\"" + text.substr(0, 40) + "\" is not a number";
            if (!std::isfinite(v) || v < lo || v > hi) return text.substr(0, 40) + fmt::format(" must be a finite number in [{:g}, {:g}]", lo, hi);
            return {};
        },
        fmt::format("NUMBER in [{:g}, {:g}]", lo, hi));
}
/// finite_number over a bound of core/checked.hpp.
inline CLI::Validator finite_number(frenzy::real_bound b) { return finite_number(b.min, b.max); }

/// Transformer of a count written with a decimal suffix, k, M, B (or G), T: 1e3, 1e6, 1e9, 1e12 ("1T" tokens,
/// "300B"), into the plain number the option's own checks read; text without a suffix passes unchanged.
inline CLI::Validator count_suffix() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            if (text.size() < 2) return {};
            double scale = 0;
            switch (text.back()) {
                case 'k': case 'K': scale = 1e3; break;
                case 'M': scale = 1e6; break;
                case 'B': case 'G': scale = 1e9; break;
                case 'T': scale = 1e12; break;
                default: return {};
            }
            const std::string digits = text.substr(0, text.size() - 1);
            double v = 0;
            std::size_t used = 0;
            try {
                v = std::stod(digits, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != digits.size() || !std::isfinite(v))
                return "\"" + text.substr(0, 40) + "\" is not a count (e.g. 1e12, 1T, 300B, 50M)";
            text = fmt::format("{:.17g}", v * scale);
            return {};
        },
        "", "count suffix");
}

/// The checks every option gets from its type, whatever its own checks: a number is finite (CLI11 reads "nan",
/// "inf" and "1e400" as doubles), an unsigned one has no sign (CLI11 turns "-1" into 2^64-1), a text is not empty
/// ("" would read as "not given"). main() applies it to the whole command tree after the subcommands are added, so
/// a new option cannot miss them.
inline void check_every_option(CLI::App& app) {
    const CLI::Validator finite(
        [](std::string& text) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (end != text.c_str() && *end == '\0' && !std::isfinite(v)) return "\"" + text.substr(0, 40) + "\" is not a finite number";
            return {};
        },
        "");
    const CLI::Validator in_64_bits(  // CLI11's own integer conversion saturates silently
        [](std::string& text) -> std::string {
            std::int64_t v = 0;
            const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
            if (r.ec == std::errc::result_out_of_range) return "\"" + text.substr(0, 40) + "\" is out of the 64-bit range";
            return {};
        },
        "");
    const CLI::Validator unsigned_whole(
        [](std::string& text) -> std::string {
            if (text.find('-') != std::string::npos) return "\"" + text.substr(0, 40) + "\" must not be negative";
            return {};
        },
        "");
    const CLI::Validator not_empty(
        [](std::string& text) -> std::string { return text.empty() ? "an empty value is not allowed (leave the option out for its default)" : ""; },
        "");
    for (CLI::Option* o : app.get_options([](const CLI::Option* x) { return x->get_type_size() != 0; })) {
        const std::string type = o->get_type_name().substr(0, o->get_type_name().find(':'));
        if (type.rfind("FLOAT", 0) == 0) o->check(finite);
        else if (type.rfind("UINT", 0) == 0) o->check(unsigned_whole)->check(in_64_bits);
        else if (type.rfind("INT", 0) == 0) o->check(in_64_bits);
        else if (type.rfind("TEXT", 0) == 0) o->check(not_empty);
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_every_option(*sub);
}

/// A duration option (`--startup 30s`): the value lands in `seconds` after parsing.
inline CLI::Option* add_duration(CLI::App* c, const std::string& name, double& seconds, const std::string& help) {
    auto text = std::make_shared<std::string>();
    auto* o = c->add_option(name, *text, help + " (a duration: 30s, 10m, 2h, 1d; a bare number is seconds)");
    // `text` must outlive the option (CLI11 writes each value into it): the callback holds it. Dropping it here was a
    // use-after-free (`simulate --startup 0` crashed with SIGSEGV; found by tests/regress/cli_sweep.sh).
    o->each([&seconds, name, text](const std::string& v) { seconds = frenzy::parse_duration(v, name.substr(name.rfind(',') + 1)); });
    return o;
}

/// --price: prices per GPU-hour for --objective cost, the same in plan and launch.
inline CLI::Option* add_price_option(CLI::App* c, std::vector<std::string>& prices) {
    return c->add_option("--price", prices, "Price per GPU-hour, TYPE=USD (repeatable), or `example` for the built-in "
                                            "example prices (docs/formats.md); needed for --objective cost");
}

/// The prices --price gives, checked against the cluster's types as the planner would (plan/options.hpp
/// check_prices), in the flags' words.
inline void apply_prices(frenzy::plan_options& opt, const std::vector<std::string>& prices, const frenzy::cluster_spec& cluster) {
    opt.price_per_gpu_hour = frenzy::prices_from_text(prices, cluster.catalog, "--price");
    const frenzy::price_wording flags{"--objective cost", [](const std::string& type) {
                                          return "--price " + type + "=USD_PER_HOUR, or --price example";
                                      }};
    frenzy::check_prices(opt, frenzy::gpu_pools(cluster), flags);
}

/// --margin: the fraction of GPU memory kept free, the same in every subcommand.
inline CLI::Option* add_margin(CLI::App* c, double& margin) {
    return c->add_option("--margin", margin,
                         fmt::format("Fraction of GPU memory kept free (default {}): a job fits when its peak reserved "
                                     "memory x (1 + MARP's uncertainty) <= (1 - margin) x the GPU's memory",
                                     frenzy::default_margin))
        ->each([](const std::string& v) {
            double m = 0;
            try {
                std::size_t used = 0;
                m = std::stod(v, &used);
                if (used != v.size()) throw std::invalid_argument(v);
            } catch (const std::exception&) {
                throw frenzy::config_error("--margin=\"" + v + "\" is not a number");
            }
            frenzy::validate_margin(m, "--margin");
        });
}

/// The job of a subcommand: a file (--job, alias --spec), a preset (--model) or a Hugging Face config
/// (--hf-config), with flags that override it. For `plan`, the layout flags given become constraints.
struct job_args {
    std::string file, from, model, hf_config, precision, optimizer, sharding, recompute, recompute_method, schedule, attention, loss;
    std::vector<std::string> frameworks;  ///< --framework, repeatable in plan (every one is considered)
    std::int64_t seq_len = 0, micro_batch = 0, global_batch = 0, dp = 0, tp = 0, pp = 0, vpp = 0, cp = 0, ep = 0;
    std::int64_t recompute_layers = 0;
    double total_tokens = -1;
    bool sp = false;
    // Fine-tuning, offload and Megatron memory options (training.finetune, runtime.offload, runtime.*).
    std::string finetune, lora_targets, fp8_recipe, ft_objective, modules_to_save;
    std::vector<std::string> offload;  ///< --offload, repeatable or comma-separated: optimizer | params | activations
    std::int64_t lora_rank = 0, freeze_layers = -1;
    bool fp8_param_gather = false, grad_reduce_bf16 = false, no_dropout = false, liger = false, paged = false;
    bool expandable_segments = false;
    std::optional<std::int64_t> empty_cache_level;
    bool precompute_ref = false, load_in_8bit = false;
    std::string framework_version;  ///< runtime.framework_version
    /// GPUs of `estimate --gpus`: the world size of an imported configuration that states per-device batches
    /// (launcher_traits::per_device_batches); 0 = not given.
    std::int64_t import_world_size = 0;
};

/// The job's source (file, launcher config, preset, Hugging Face config), batches, budget, precision, optimizer.
inline void add_job_source_options(CLI::App* c, job_args& a) {
    c->add_option("--job,--spec", a.file, fmt::format("Job spec JSON ({}); flags below override it", formats_doc))
        ->check(CLI::ExistingFile);
    c->add_option("--from", a.from, "The job from a launcher configuration, KIND:FILE: " + frenzy::import_examples() +
                                   " (megatron: a script or a JSON argument list; the others with --model); ignored and "
                                   "not-understood arguments are listed on stderr");
    c->add_option("--model", a.model, "Model preset name (`frenzy models` lists them), or ORG/NAME of a model in the "
                                     "local Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub or ~/.cache/huggingface/hub; "
                                     "nothing is downloaded)");
    c->add_option("--hf-config", a.hf_config, "Hugging Face config.json, or a snapshot folder holding one")->check(CLI::ExistingPath);
    c->add_option("--seq-len", a.seq_len, "Sequence length (default 2048)")->check(whole_number(frenzy::bounds::seq_len));
    c->add_option("--micro-batch", a.micro_batch, "Micro-batch size (default 1)")->check(whole_number(frenzy::bounds::micro_batch));
    c->add_option("--global-batch", a.global_batch, "Global batch in sequences (default micro-batch x dp)")->check(whole_number(frenzy::bounds::global_batch));
    c->add_option("--total-tokens", a.total_tokens, "Training budget in tokens (for time, GPU-hours and cost): 1e12, 1T, 300B, 50M")
        ->transform(count_suffix())
        ->check(finite_number(frenzy::bounds::tokens));
    c->add_option("--precision", a.precision, "fp32 | fp16-mixed | bf16-mixed | bf16 | fp8-mixed | fp4-mixed (NVFP4 GEMMs: "
                                              "Megatron with Transformer Engine, on GPUs with fp4 tensor cores)");
    c->add_option("--optimizer", a.optimizer, "adam | adamw | adamw-8bit (bitsandbytes AdamW8bit; adamw8bit also accepted) | "
                                             "sgd | adafactor");
}

/// The parallel layout: degrees, sharding, recompute, schedule.
inline void add_layout_options(CLI::App* c, job_args& a) {
    c->add_option("--dp", a.dp, "Data-parallel degree")->check(whole_number(frenzy::bounds::degree));
    c->add_option("--tp", a.tp, "Tensor-parallel degree")->check(whole_number(frenzy::bounds::degree));
    c->add_option("--pp", a.pp, "Pipeline-parallel degree")->check(whole_number(frenzy::bounds::degree));
    c->add_option("--vpp", a.vpp, "Virtual pipeline stages per GPU (interleaved schedule)")->check(whole_number(frenzy::bounds::degree));
    c->add_option("--cp", a.cp, "Context-parallel degree")->check(whole_number(frenzy::bounds::degree));
    c->add_option("--ep", a.ep, "Expert-parallel degree")->check(whole_number(frenzy::bounds::degree));
    c->add_flag("--sp,--sequence-parallel", a.sp, "Sequence parallelism (needs tp > 1)");
    c->add_option("--sharding", a.sharding, "none | optimizer | gradients | full");
    c->add_option("--recompute", a.recompute, "none | selective | full");
    c->add_option("--recompute-method", a.recompute_method,
                  "With --recompute full: uniform (groups of --recompute-layers layers) | block (the first "
                  "--recompute-layers layers of each chunk); Megatron --recompute-method (parallel.recompute_method, "
                  "default uniform)");
    c->add_option("--recompute-layers", a.recompute_layers,
                  "With --recompute full: layers per recompute group (uniform) or checkpointed per chunk (block); "
                  "Megatron --recompute-num-layers (parallel.recompute_layers, default 1)")
        ->check(whole_number(frenzy::bounds::layers));
    c->add_option("--schedule", a.schedule, "1f1b | interleaved | gpipe");
}

/// The framework and its runtime options: kernels, loss, fine-tuning method, offload, Megatron memory flags.
inline void add_runtime_options(CLI::App* c, job_args& a) {
    c->add_option("--framework", a.frameworks, frenzy::framework_names() + " (plan: repeatable, each is considered)");
    c->add_option("--attention", a.attention,
                  "auto (default: what the framework runs on the GPU type; sm80+: flash) | flash | memory-efficient | unfused");
    c->add_option("--loss", a.loss,
                  "upcast | fused | vocab-parallel: the cross-entropy implementation (runtime.loss; default the "
                  "framework's: Megatron vocab-parallel, llm-foundry fused (flash-attn), the other PyTorch stacks upcast)");
    c->add_option("--finetune", a.finetune, "none | full | freeze | lora | qlora (training.finetune.method; default none: "
                                           "training from scratch; the others fine-tune pretrained weights, which launch loads)");
    c->add_option("--lora-rank", a.lora_rank, "LoRA rank r (training.finetune.rank, default 16); implies --finetune lora "
                                             "when no adapter method is given")
        ->check(whole_number(frenzy::bounds::lora_rank));
    c->add_option("--lora-targets", a.lora_targets, "Adapted linears, comma-separated: q,k,v,o,gate,up,down "
                                                   "(training.finetune.target_modules, default q,k,v,o)");
    c->add_option("--freeze-layers", a.freeze_layers, "Freeze the first N layers and the embedding (training.finetune."
                                                     "frozen_layers; N < model layers; implies --finetune freeze when no method is given)")
        ->check(whole_number(frenzy::bounds::frozen_layers));
    c->add_flag("--load-in-8bit", a.load_in_8bit, "LoRA over bitsandbytes LLM.int8 base linears (BitsAndBytesConfig(load_in_8bit"
                                                  "=True); training.finetune.load_in_8bit; with --finetune lora)");
    c->add_option("--modules-to-save", a.modules_to_save, "Modules trained whole beside the adapters, comma-separated: "
                                                          "embed_tokens,lm_head (PEFT modules_to_save; training.finetune."
                                                          "modules_to_save; with --finetune lora or qlora)");
    c->add_option("--finetune-objective", a.ft_objective, "sft | dpo (training.finetune.objective; default sft): dpo is TRL's DPOTrainer, "
                                             "chosen and rejected in one forward and a reference model");
    c->add_flag("--precompute-ref-log-probs", a.precompute_ref, "DPO: reference log-probs computed before training, no "
                                                                "reference model held (training.finetune.precompute_ref_log_probs)");
    c->add_option("--offload", a.offload, "CPU offload: optimizer | params | activations (runtime.offload; repeatable or "
                                         "comma-separated; params needs optimizer)")
        ->delimiter(',');
    c->add_flag("--fp8-param-gather", a.fp8_param_gather, "Megatron --fp8-param-gather: fp8 GEMM weights, no 16-bit copy "
                                                         "(runtime.fp8_param_gather; needs --precision fp8-mixed)");
    c->add_option("--fp8-recipe", a.fp8_recipe, "How fp8-mixed scales its casts (runtime.fp8_recipe): delayed | tensorwise | "
                                               "blockwise | mxfp8 (Transformer Engine, Megatron --fp8-recipe) | rowwise "
                                               "(torchao, torchtitan's default); default: the framework's");
    c->add_flag("--grad-reduce-bf16", a.grad_reduce_bf16, "Megatron --grad-reduce-in-bf16: bf16 main_grad buffers "
                                                         "(runtime.grad_reduce_bf16)");
    c->add_flag("--liger", a.liger, "Liger kernels, as transformers' use_liger_kernel applies them: RMSNorm, SwiGLU, "
                                   "RoPE and the fused linear cross-entropy (runtime.liger; --framework hf)");
    c->add_flag("--paged-optimizer", a.paged, "bitsandbytes' paged optimizer (transformers optim=paged_adamw_8bit or "
                                              "paged_adamw_32bit): states in CUDA unified memory, outside PyTorch's "
                                              "allocator (runtime.paged_optimizer; with --optimizer adamw or adamw-8bit)");
    c->add_flag("--expandable-segments", a.expandable_segments,
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: the allocator can hand back all of its cache when "
                "the GPU is full, so the allocated peak is what must fit (runtime.expandable_segments)");
    c->add_option("--empty-unused-memory-level", a.empty_cache_level,
                  "Megatron --empty-unused-memory-level: 1 empties the allocator's cache after every forward/backward, "
                  "2 also after the optimizer step; the allocated peak is then what must fit "
                  "(runtime.empty_unused_memory_level)")
        ->check(whole_number(frenzy::bounds::empty_cache_level));
    c->add_option("--framework-version", a.framework_version,
                  "The framework's release whose defaults the job runs (runtime.framework_version): " + frenzy::framework_versions_help() +
                      "; the other frameworks take none");
    c->add_flag("--no-dropout", a.no_dropout, "No dropout masks (runtime.dropout false; Megatron's default is 0.1)");
}

/// The job's flags in three --help groups (issue 55: 64-76 lines without groups); what the subcommand adds after
/// them is under "Options".
inline void add_job_options(CLI::App* c, job_args& a) {
    c->option_defaults()->group("Job (model, data, batches, precision)");
    add_job_source_options(c, a);
    c->option_defaults()->group("Parallel layout (what the planner searches when not given)");
    add_layout_options(c, a);
    c->option_defaults()->group("Framework, fine-tuning and memory options");
    add_runtime_options(c, a);
    c->option_defaults()->group("Options");
}

/// Applies the fine-tuning / offload / Megatron memory flags to `j` (each value checked; validate(j) checks the
/// combinations, naming the job fields).
inline void apply_method_options(const job_args& a, frenzy::job_spec& j) {
    using namespace frenzy;
    auto& ft = j.training.finetune;
    if (!a.finetune.empty()) ft.method = parse_enum<finetune_method>("--finetune", a.finetune);
    if (a.lora_rank > 0) {
        if (a.finetune.empty() && !ft.adapters()) ft.method = finetune_method::lora;
        else if (!ft.adapters())
            throw config_error("--lora-rank=" + std::to_string(a.lora_rank) + " needs --finetune lora or qlora (got \"" +
                               std::string(to_string(ft.method)) + "\")");
        ft.rank = a.lora_rank;
    }
    if (!a.lora_targets.empty()) {
        unsigned bits = 0;
        std::size_t start = 0;
        while (start <= a.lora_targets.size()) {
            const auto end = std::min(a.lora_targets.find(',', start), a.lora_targets.size());
            const auto name = a.lora_targets.substr(start, end - start);
            unsigned bit = 0;
            for (const auto& [b, n] : lora_target_names)
                if (n == name) bit = b;
            if (bit == 0)
                throw config_error("--lora-targets: \"" + name + "\" is not one of: q | k | v | o | gate | up | down");
            bits |= bit;
            start = end + 1;
        }
        ft.targets = bits;
    }
    if (!a.ft_objective.empty()) ft.objective = parse_enum<finetune_objective>("--finetune-objective", a.ft_objective);
    if (a.precompute_ref) ft.precompute_ref_log_probs = true;
    if (a.load_in_8bit) ft.load_in_8bit = true;
    for (const auto piece : a.modules_to_save.empty() ? std::vector<std::string_view>{} : split(a.modules_to_save, ',')) {
        unsigned bit = 0;
        for (const auto& [b, n] : module_to_save_names)
            if (n == piece) bit = b;
        if (bit == 0)
            throw config_error("--modules-to-save: \"" + std::string(piece) + "\" is not one of: embed_tokens | lm_head");
        ft.modules_to_save |= bit;
    }
    if (a.freeze_layers >= 0) ft.frozen_layers = a.freeze_layers;
    if (a.freeze_layers > 0 && ft.method == finetune_method::none) ft.method = finetune_method::freeze;  // a fine-tune
    for (const auto& o : a.offload) {
        if (o == "optimizer") j.runtime.offload.optimizer = true;
        else if (o == "params" || o == "parameters") j.runtime.offload.parameters = true;
        else if (o == "activations") j.runtime.offload.activations = true;
        else throw config_error("--offload=\"" + o + "\" is not one of: optimizer | params | activations");
    }
    if (a.fp8_param_gather) j.runtime.fp8_param_gather = true;
    if (!a.fp8_recipe.empty()) j.runtime.fp8_recipe = parse_enum<fp8_recipe>("--fp8-recipe", a.fp8_recipe);
    if (a.grad_reduce_bf16) j.runtime.grad_reduce_bf16 = true;
    if (a.liger) j.runtime.liger = true;
    if (a.paged) j.runtime.paged_optimizer = true;
    if (a.expandable_segments) j.runtime.expandable_segments = true;
    if (a.empty_cache_level) j.runtime.empty_unused_memory_level = *a.empty_cache_level;
    if (a.no_dropout) j.runtime.dropout = false;
    if (!a.framework_version.empty()) j.runtime.framework_version = a.framework_version;
}

/// --recompute, --recompute-method and --recompute-layers into `j` and the stated constraints `c`. A recompute unit
/// is a full-recompute setting: the planner keeps recompute full for it (as for a job file).
inline void apply_recompute_options(const job_args& a, frenzy::job_spec& j, frenzy::plan_constraints& c) {
    using namespace frenzy;
    if (!a.recompute.empty()) c.recompute = j.parallel.recompute = parse_enum<recompute>("--recompute", a.recompute);
    if (!a.recompute_method.empty())
        j.parallel.recompute_method = parse_enum<recompute_method>("--recompute-method", a.recompute_method);
    if (a.recompute_layers > 0) j.parallel.recompute_layers = a.recompute_layers;
    if ((!a.recompute_method.empty() || a.recompute_layers > 0) && j.parallel.recompute != recompute::full)
        throw config_error("--recompute-method/--recompute-layers need --recompute full (got \"" +
                           std::string(to_string(j.parallel.recompute)) + "\")");
    if (!a.recompute_method.empty() || a.recompute_layers > 0) c.recompute = recompute::full;
}

/// The job a launcher configuration describes (`--from KIND:FILE`, frameworks/launchers.hpp); what was ignored or
/// not understood goes to stderr, so --json output stays clean. The flags given override it afterwards.
inline frenzy::job_spec import_from(const job_args& a) {
    using namespace frenzy;
    const auto colon = a.from.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == a.from.size())
        throw config_error("--from=\"" + a.from + "\" must be KIND:FILE (" + import_examples() + ")");
    const std::string kind = a.from.substr(0, colon), path = a.from.substr(colon + 1);
    std::vector<std::string> kinds;  // frameworks/launchers.hpp: every launcher that reads its files back
    for (const auto l : launcher_catalog())
        if (l->import_file) kinds.emplace_back(l.name());
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
        throw config_error("--from=\"" + a.from + "\": KIND \"" + kind + "\" must be " + importer_names() +
                           did_you_mean(kind, kinds));
    if (launcher_needs_model(kind) && a.model.empty())
        throw config_error("--from " + kind + ":FILE: the configuration does not describe the model; give --model");
    import_options o;
    if (!a.model.empty()) o.model = preset_or_cached(a.model);
    if (a.seq_len > 0) o.training.seq_len = a.seq_len;
    for (auto [v, out] : {std::pair{a.tp, &o.layout.tp}, {a.pp, &o.layout.pp}, {a.cp, &o.layout.cp}, {a.ep, &o.layout.ep}})
        if (v > 0) *out = v;
    if (find_launcher("--from", kind)->per_device_batches) {
        o.world_size = a.dp > 0 ? a.dp : a.import_world_size;
        o.world_size_from_gpus = a.dp == 0 && a.import_world_size > 0;
    }
    const auto r = import_launcher_file(kind, path, o);
    fmt::print(stderr, "imported {} from {}: {} argument(s) ignored as irrelevant to memory and speed, {} not understood or "
               "not modelled{}\n", r.job.name, a.from, r.ignored.size(), r.unknown.size(), r.unknown.empty() ? "" : ":");
    for (const auto& u : r.unknown) fmt::print(stderr, "  {}\n", u);
    for (const auto& n : r.notes) fmt::print(stderr, "note: {}\n", n);
    // A YAML or JSON argument list does not start the processes: say what the data-parallel degree then is.
    if (!r.has_parallel && a.dp == 0)
        fmt::print(stderr, "note: {} does not say how many GPUs it starts: dp {} is assumed unless --dp (or estimate's "
                   "--gpus COUNTxTYPE) says otherwise\n", path, r.job.parallel.dp);
    return r.job;
}

/// The job with the flags applied, and the layout fields it states (file `parallel` keys, training.micro_batch,
/// and every layout flag given).
inline frenzy::parsed_job build_job(const job_args& a) {
    using namespace frenzy;
    parsed_job out;
    const int sources = !a.file.empty() + !a.hf_config.empty() + (!a.model.empty() && a.from.empty());
    if (sources > 1 || (!a.from.empty() && (!a.file.empty() || !a.hf_config.empty())))
        throw config_error("give one of --job FILE, --from KIND:FILE, --model PRESET, --hf-config FILE, not several");
    auto& j = out.job;
    if (!a.from.empty()) {
        j = import_from(a);
    } else if (!a.file.empty()) {
        out = load_job(a.file);
    } else if (!a.model.empty()) {
        j.model = preset_or_cached(a.model);
        j.name = j.model.name;
    } else if (!a.hf_config.empty()) {
        j.model = load_hf_model(a.hf_config);
        j.name = j.model.name;
    } else {
        throw config_error("give a job with --job FILE, --from KIND:FILE, --model PRESET or --hf-config FILE");
    }
    auto& c = out.stated;
    auto set = [](std::int64_t v, std::int64_t& field, std::optional<std::int64_t>* pin) {
        if (v == 0) return;
        field = v;
        if (pin) *pin = v;
    };
    set(a.seq_len, j.training.seq_len, nullptr);
    set(a.micro_batch, j.training.micro_batch, &c.micro_batch);
    set(a.global_batch, j.training.global_batch, nullptr);
    if (a.global_batch != 0 || !a.from.empty()) out.global_batch_stated = true;  // a flag, or the imported launcher's
    set(a.dp, j.parallel.dp, &c.dp);
    set(a.tp, j.parallel.tp, &c.tp);
    set(a.pp, j.parallel.pp, &c.pp);
    set(a.vpp, j.parallel.vpp, &c.vpp);
    set(a.cp, j.parallel.cp, &c.cp);
    set(a.ep, j.parallel.ep, &c.ep);
    if (a.total_tokens >= 0) j.training.total_tokens = a.total_tokens;
    if (a.sp) c.sequence_parallel = j.parallel.sequence_parallel = true;
    if (!a.precision.empty()) j.training.precision = parse_enum<precision>("--precision", a.precision);
    if (!a.optimizer.empty())
        j.training.optimizer = a.optimizer == "adamw8bit" ? optimizer_kind::adamw_8bit
                                                          : parse_enum<optimizer_kind>("--optimizer", a.optimizer);
    apply_method_options(a, j);
    if (!a.sharding.empty()) c.sharding = j.parallel.sharding = parse_enum<sharding>("--sharding", a.sharding);
    apply_recompute_options(a, j, c);
    if (!a.schedule.empty()) c.schedule = j.parallel.schedule = parse_enum<pipeline_schedule>("--schedule", a.schedule);
    // virtual stages without a schedule: the interleaved one, the only schedule that has them (as plan and launch do)
    else if (a.vpp > 1) j.parallel.schedule = pipeline_schedule::interleaved;
    if (!a.frameworks.empty()) j.runtime.framework = parse_enum<framework>("--framework", a.frameworks.front());
    else if (a.from.empty() && !out.framework_stated) j.runtime.framework = default_framework(j.training, j.parallel);
    if (!a.attention.empty()) j.runtime.attention = parse_enum<attention_impl>("--attention", a.attention);
    if (!a.loss.empty()) j.runtime.loss = parse_enum<loss_style>("--loss", a.loss);
    // A global batch neither in a file nor given follows dp x micro-batch (one micro-batch per step), after the
    // flags that change them.
    if (a.from.empty() && !out.global_batch_stated && a.global_batch == 0)
        j.training.global_batch = j.training.micro_batch * j.parallel.dp;
    validate(j.training);
    return out;
}

/// The cluster of a subcommand: a file (--cluster) or a GPU list (--gpus 8xh100-80g,16xa100-40g), with extra or
/// overriding GPU types (--gpu-types).
struct cluster_args {
    std::string file, gpus, gpu_types;
};

inline void add_cluster_options(CLI::App* c, cluster_args& a) {
    c->add_option("--cluster", a.file, fmt::format("Cluster spec JSON ({})", formats_doc))->check(CLI::ExistingFile);
    c->add_option("--gpus", a.gpus, "The cluster as a GPU list instead: COUNTxTYPE[,...] (8xh100-80g,16xa100-40g) or "
                                    "NODESxPER_NODExTYPE (2x4xt4); `frenzy gpus` lists the types");
    c->add_option("--gpu-types", a.gpu_types, "JSON file with extra or overriding GPU types")->check(CLI::ExistingFile);
}

inline bool has_cluster(const cluster_args& a) { return !a.file.empty() || !a.gpus.empty(); }

inline frenzy::cluster_spec build_cluster(const cluster_args& a) {
    using namespace frenzy;
    if (!a.file.empty() && !a.gpus.empty()) throw config_error("give --cluster FILE or --gpus LIST, not both");
    if (a.file.empty() && a.gpus.empty()) throw config_error("give the cluster with --cluster FILE or --gpus LIST (e.g. 8xh100-80g)");
    if (!a.gpus.empty()) return cluster_from_gpu_list(a.gpus, load_gpu_types(a.gpu_types), "--gpus");
    auto c = load_cluster(a.file);
    if (!a.gpu_types.empty()) c.catalog = load_gpu_types(a.gpu_types, c.catalog);
    return c;
}

/// `--from KIND:FILE` with `--gpus LIST` (plan, launch): a configuration that states per-device batches runs on the
/// GPUs the list gives, so its global batch and token budget are those of that world size (issue 57: they were a
/// single GPU's). A cluster file names no one world size: the import's own note then says dp 1 is assumed.
inline job_args with_import_world_size(job_args job, const cluster_args& cluster) {
    if (!job.from.empty() && !cluster.gpus.empty() && job.import_world_size == 0)
        job.import_world_size = build_cluster(cluster).total_gpus();
    return job;
}

}  // namespace frenzy_cli
