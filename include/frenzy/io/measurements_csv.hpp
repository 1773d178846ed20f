#pragma once
// Reader for tables of measured training memory in the format of data/memory/measured_calibration.csv
// (one run a row, with model, batch, parallelism, framework and the measured peak), so that MARP can be checked
// against a user's own runs (`frenzy validate --data FILE.csv`).
#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "frenzy/core/error.hpp"
#include "frenzy/io/csv.hpp"
#include "frenzy/io/file.hpp"
#include "frenzy/core/units.hpp"
#include "frenzy/memory/breakdown.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

/// What a row's peak measures.
enum class memory_metric { allocated, reserved, active };

/// One measured run: the job as the framework ran it and the measured peak.
struct memory_measurement {
    std::string id;
    std::string label;              ///< model column
    job_spec job;
    memory_metric metric = memory_metric::allocated;
    bool last_stage_only = false;   ///< measured on the last pipeline rank (Megatron logs there)
    bytes measured{};
    std::string source;
};

inline const char* to_string(memory_metric m) {
    return m == memory_metric::reserved ? "reserved" : m == memory_metric::active ? "active" : "allocated";
}

/// The figure of a memory report that a measured row is compared with: its metric (reserved: the allocator's
/// peak; allocated and active, which both count live tensors: the stage's allocated peak) on the stage it was
/// measured on (the last pipeline rank where the row says so, else the bottleneck stage). `frenzy validate` and
/// tests/memory/calibration_test.cpp both ask this.
inline double compared_prediction(const memory_report& r, const memory_measurement& m) {
    if (m.metric == memory_metric::reserved) return r.peak_reserved.value;
    const auto& st = m.last_stage_only ? r.stages.back() : r.bottleneck();
    return st.peak_allocated.value;
}

namespace detail {
/// Leading integer of a cell ("8192 (toml default)" -> 8192); empty -> fallback; else config_error.
inline std::int64_t leading_int(const std::string& cell, const std::string& field, std::int64_t fallback) {
    std::size_t i = 0;
    while (i < cell.size() && std::isspace(static_cast<unsigned char>(cell[i]))) ++i;
    if (i == cell.size()) return fallback;
    std::size_t j = i;
    while (j < cell.size() && std::isdigit(static_cast<unsigned char>(cell[j]))) ++j;
    if (j == i) throw field_error(field, cell, "is not an integer");
    return parse_int64(std::string_view(cell).substr(i, j - i), field);  // overflow is an error, not a clamp
}
}  // namespace detail

namespace detail {
/// Runtime options named in a row's other_flags. Tables whose rows are cumulative (notes say "cumulative", as in
/// torchtune's optimisation-flags table) carry the options of the earlier rows of the same source forward.
struct run_flags {
    bool compile = false;
    std::int64_t loss_chunks = 1;
    bool optimizer_in_backward = false;
    std::string unsupported;  ///< a technique MARP does not model, which makes the row incomparable

    void apply(const std::string& text) {
        const auto f = lower(text);
        if (contains(f, "no compile")) compile = false;
        else if (contains(f, "compile")) compile = true;
        if (contains(f, "full ce") || contains(f, "full cross")) loss_chunks = 1;
        else if (contains(f, "chunked")) loss_chunks = 8;  // torchtune CEWithChunkedOutputLoss num_output_chunks
        if (contains(f, "optimizer step into backward") || contains(f, "optimizer_in_bwd") || contains(f, "optimizer in backward"))
            optimizer_in_backward = true;
        // The model code's stack, where the row's source states it (framework_profile rmsnorm_fp32_copy, gqa_kv_repeat)
        if (contains(f, "eager rmsnorm")) norm_fp32 = true;
        if (contains(f, "repeat_kv")) kv_repeat = true;
        // The loss, where the row names it (runtime.loss)
        if (contains(f, "flash-attn cross entropy")) loss = loss_style::fused_cross_entropy;
        else if (contains(f, "logits.float()")) loss = loss_style::upcast_log_softmax;
        // Training methods, read as the row states them (memory/methods.hpp models each): LoRA / QLoRA with the
        // rank the row names ("rank 16", "r=16"; PEFT's and torchtune's default r = 8 otherwise), bitsandbytes 8-bit
        // AdamW, CPU offload of activations or of the optimizer states.
        // a word of its own ("lora", "qlora", "lora_rank"): "explorations" names no method
        static const std::regex method_re(R"((^|[^a-z])(q?lora)(?![a-z]))");
        if (std::smatch mm; std::regex_search(f, mm, method_re))
            method = mm[2].length() == 5 ? finetune_method::qlora : finetune_method::lora;
        static const std::regex rank_re(R"((?:lora[_ ]rank|rank|\br)\s*[=:]?\s*(\d{1,5})\b)");
        if (std::smatch mr; std::regex_search(f, mr, rank_re)) rank = std::stoll(mr[1]);
        // The adapted linears and the adapters' dropout, where the row states them (PEFT's "all-linear")
        if (contains(f, "all linear") || contains(f, "all-linear"))
            targets = lora_q | lora_k | lora_v | lora_o | lora_gate | lora_up | lora_down;
        static const std::regex dropout_re(R"(\bdropout\s*[=:]?\s*(0(?:\.\d{1,6})?)(?![\d.]))");
        if (std::smatch md; std::regex_search(f, md, dropout_re)) lora_dropout = std::stod(md[1]);
        if (contains(f, "8-bit") || contains(f, "8bit")) adam8bit = true;
        const bool negated = contains(f, "offload false") || contains(f, "no offload");
        if (!negated && contains(f, "offload")) {  // what this text offloads (earlier rows' options carry on)
            const bool acts = contains(f, "activation");
            const bool opt = contains(f, "optimizer") || contains(f, "cpu offload") || contains(f, "zero-offload");
            offload_activations = offload_activations || acts;
            offload_optimizer = offload_optimizer || opt;
            if (!acts && !opt) unsupported = "offload (of what is not stated)";
        }
    }
    std::optional<finetune_method> method{};
    std::optional<bool> norm_fp32{}, kv_repeat{};
    std::optional<loss_style> loss{};
    std::int64_t rank = 8;
    unsigned targets = 0;       ///< lora_target bits the row names; 0 = the job's default
    double lora_dropout = 0;
    bool adam8bit = false, offload_activations = false, offload_optimizer = false;
};
}  // namespace detail

namespace detail {
/// One data row of a measurement table, read by column name.
struct measurement_row {
    const csv_columns& columns;
    const std::vector<std::string>& row;
    std::string cell(const char* name) const { return columns.cell(row, name); }
    std::int64_t num(const char* name, std::int64_t fallback) const { return leading_int(cell(name), name, fallback); }
};

/// The options of the cumulative tables read so far, by source: the last row's run_flags and id.
struct cumulative_rows {
    std::map<std::string, run_flags> flags;
    std::map<std::string, std::int64_t> last_id;
};

/// The model columns: shape, activation, vocabulary, tied embeddings.
inline void read_measured_model(const measurement_row& r, transformer_spec& mod) {
    mod.layers = r.num("layers", 0);
    mod.hidden = r.num("hidden", 0);
    mod.heads = r.num("heads", 0);
    mod.kv_heads = r.num("kv_heads", 0);
    mod.ffn_hidden = r.num("ffn_hidden", 0);
    const auto act = lower(r.cell("mlp_act"));
    mod.activation = contains(act, "swiglu") ? activation::swiglu
                     : contains(act, "squared") ? activation::squared_relu
                     : contains(act, "relu")    ? activation::relu
                                                : activation::gelu;
    const bool gated = mod.activation == activation::swiglu;
    mod.vocab = r.num("vocab_padded", 0);
    mod.tied_embeddings = contains(lower(r.cell("tied_emb")), "yes");
    // SwiGLU models in these tables are Llama-family (RMSNorm, RoPE, no biases); GELU ones GPT-style.
    mod.position_embedding = gated ? position_embedding::rope : position_embedding::learned;
    mod.norm = gated ? norm_kind::rmsnorm : norm_kind::layernorm;
    mod.bias = !gated;
}

/// The batch and layout columns, the framework (returned), its sharding, the recompute and the attention.
inline framework read_measured_layout(const measurement_row& r, job_spec& job) {
    auto& t = job.training;
    t.seq_len = r.num("seq_len", 0);
    t.micro_batch = r.num("micro_batch", 1);
    t.global_batch = r.num("global_batch", 0);
    auto& p = job.parallel;
    p.dp = r.num("dp", 1);
    p.tp = r.num("tp", 1);
    p.pp = r.num("pp", 1);
    const std::string fw_cell = lower(r.cell("framework"));
    p.vpp = r.num("vpp", 1);
    p.cp = r.num("cp", 1);
    p.ep = r.num("ep", 1);
    if (t.global_batch == 0) t.global_batch = t.micro_batch * p.dp;
    if (p.vpp > 1) p.schedule = pipeline_schedule::interleaved;
    p.sequence_parallel = contains(lower(r.cell("seq_parallel")), "yes");
    // the framework the column names, else the one whose rows name none (plain PyTorch: single device, DDP, torchtune)
    const framework fw = framework_of_table_text(fw_cell);
    // the framework's own notation first (Megatron-FSDP's strategies), else the common reading of the cell
    const auto own = fw->table_flags.sharding_of ? fw->table_flags.sharding_of(r.cell("sharding"), r.cell("other_flags"))
                                                 : std::nullopt;
    p.sharding = own ? *own : sharding_from_text(r.cell("sharding"));
    p.recompute = recompute_from_text(r.cell("recompute"));
    job.runtime.framework = fw;
    // the Megatron CI toy rows name no kernel ("TE") and say "unfused attention" in their notes
    job.runtime.attention = attention_from_text(r.cell("attention_impl"), r.cell("notes"));
    return fw;
}

/// Runtime options named in other_flags, carried forward in cumulative tables. False when the row is cumulative on
/// rows of its source that the table lacks (listed in `skipped` when given).
inline bool read_run_flags(const measurement_row& r, cumulative_rows& cumulative, run_flags& flags,
                           std::vector<std::string>* skipped) {
    const bool is_cumulative = contains(lower(r.cell("notes")), "cumulative") ||
                               contains(lower(r.cell("other_flags")), "cumulative");
    if (is_cumulative) flags = cumulative.flags[r.cell("source")];
    flags.apply(r.cell("other_flags"));
    if (!is_cumulative) return true;
    cumulative.flags[r.cell("source")] = flags;
    // A cumulative row adds one option to the row before it in its source. When the ids show that
    // rows of the same source are missing in between (38 then 41), the options those rows added are
    // unknown: the row cannot be read as the table states it.
    const auto id = leading_int(r.cell("id"), "id", -1);
    const auto it = cumulative.last_id.find(r.cell("source"));
    const std::int64_t prev = it != cumulative.last_id.end() ? it->second : -1;
    const bool gap = prev >= 0 && id >= 0 && id != prev + 1;
    cumulative.last_id[r.cell("source")] = id;
    if (gap) {
        if (skipped)
            skipped->push_back("row " + r.cell("id") + ": cumulative on rows " + std::to_string(prev + 1) +
                               "-" + std::to_string(id - 1) + " of its source, which the table lacks: the options " +
                               "they add are unknown");
        return false;
    }
    return true;
}

/// The run flags' runtime options and training method, into the job on framework `fw`.
inline void apply_run_flags(const run_flags& flags, framework fw, const measurement_row& r, job_spec& job) {
    job.runtime.compile = flags.compile;
    job.runtime.loss_chunks = flags.loss_chunks;
    job.runtime.norm_fp32 = flags.norm_fp32;
    job.runtime.kv_repeat = flags.kv_repeat;
    job.runtime.loss = flags.loss;
    if (flags.method) {
        job.training.finetune.method = *flags.method;
        job.training.finetune.rank = flags.rank;
        if (flags.targets != 0) job.training.finetune.targets = flags.targets;
        job.training.finetune.dropout = flags.lora_dropout;
    }
    job.runtime.offload.activations = flags.offload_activations;
    job.runtime.offload.optimizer = flags.offload_optimizer;
    // A framework that offloads the optimizer only with the parameters (FSDP's CPUOffload) moves both.
    const auto sh = job.parallel.sharding;
    if (flags.offload_optimizer && !fw->rules.rejects_offload({.optimizer = true}, sh).empty() &&
        fw->rules.rejects_offload({.optimizer = true, .parameters = true}, sh).empty())
        job.runtime.offload.parameters = true;
    // The implementation a framework's rows ran (torchtune's recipe configs: fused AdamW), where the column names it.
    for (const auto f : framework_catalog())
        if (f->table_flags.optimizer != optimizer_impl::framework_default && table_text_names(lower(r.cell("framework")), f))
            job.runtime.optimizer = f->table_flags.optimizer;
    // The implementation the optimizer column names ("AdamW (fused)", "AdamW (foreach)") wins over the default.
    const auto opt = lower(r.cell("optimizer"));
    if (contains(opt, "fused")) job.runtime.optimizer = optimizer_impl::fused;
    else if (contains(opt, "foreach")) job.runtime.optimizer = optimizer_impl::foreach;
    if (flags.optimizer_in_backward) job.runtime.optimizer = optimizer_impl::in_backward;
}

/// The precision and optimizer columns (8-bit AdamW also from the run flags).
inline void read_measured_precision(const measurement_row& r, const run_flags& flags, training_spec& t) {
    const auto pr = lower(r.cell("precision"));
    t.precision = contains(pr, "pure bf16")                          ? precision::bf16
                  : (contains(pr, "float8") || contains(pr, "fp8"))  ? precision::fp8_mixed
                  : contains(pr, "bf16")                             ? precision::bf16_mixed
                  : contains(pr, "fp16")                             ? precision::fp16_mixed
                  : contains(pr, "fp32")                             ? precision::fp32
                                                                     : precision::bf16_mixed;
    const auto opt = lower(r.cell("optimizer"));
    t.optimizer = contains(opt, "sgd") ? optimizer_kind::sgd : contains(opt, "adafactor") ? optimizer_kind::adafactor
                  : contains(opt, "adamw") ? optimizer_kind::adamw : optimizer_kind::adam;
    if (flags.adam8bit || contains(opt, "8bit") || contains(opt, "8-bit")) t.optimizer = optimizer_kind::adamw_8bit;
}

/// What the peak measures, on which rank, and its value in bytes.
inline void read_measured_peak(const measurement_row& r, memory_measurement& m) {
    const auto met = lower(r.cell("metric"));
    m.metric = contains(met, "reserved") ? memory_metric::reserved
               : contains(met, "active") ? memory_metric::active : memory_metric::allocated;
    m.last_stage_only = contains(lower(r.cell("rank_measured")), "last");
    // A measured peak is a positive, finite number of bytes (0, negative, nan, inf are errors).
    if (!trim(r.cell("peak_bytes")).empty())
        m.measured = bytes{parse_double(r.cell("peak_bytes"), "peak_bytes", bounds::memory_bytes)};
    else
        m.measured = bytes{parse_double(r.cell("peak_GiB"), "peak_GiB", {0, bounds::memory_bytes.max / GiB}) * GiB};
    if (!(m.measured.value > 0))
        throw field_error(trim(r.cell("peak_bytes")).empty() ? "peak_GiB" : "peak_bytes",
                          trim(r.cell("peak_bytes")).empty() ? r.cell("peak_GiB") : r.cell("peak_bytes"),
                          "must be positive (a measured peak)");
}

/// One measured row -> its measurement, or nothing when the row cannot be read as stated (the reason goes to
/// `skipped` when given).
inline std::optional<memory_measurement> read_measurement_row(const measurement_row& r, cumulative_rows& cumulative,
                                                              std::vector<std::string>* skipped) {
    memory_measurement m;
    m.id = r.cell("id");
    m.label = r.cell("model");
    m.source = r.cell("source");
    m.job.model.name = m.label;
    read_measured_model(r, m.job.model);
    const framework fw = read_measured_layout(r, m.job);
    run_flags flags;
    if (!read_run_flags(r, cumulative, flags, skipped)) return std::nullopt;
    if (!flags.unsupported.empty()) {
        if (skipped) skipped->push_back("row " + r.cell("id") + ": " + flags.unsupported + " is not modelled");
        return std::nullopt;
    }
    apply_run_flags(flags, fw, r, m.job);
    read_measured_precision(r, flags, m.job.training);
    // A "bf16" cell on a framework whose only 16-bit training is pure bf16 (torchtune's `dtype: bf16`: no autocast,
    // no fp32 master weights) is that pure bf16, as the framework would run it.
    auto& t = m.job.training;
    if (t.precision == precision::bf16_mixed && !fw->rules.rejects_layout(m.job.parallel, t).empty()) {
        auto pure = t;
        pure.precision = precision::bf16;
        if (fw->rules.rejects_layout(m.job.parallel, pure).empty()) t.precision = precision::bf16;
    }
    // A framework whose rows state their options in its own notation (Megatron's arguments) has them read as a
    // launch script's would be.
    if (fw->table_flags.read_options) {
        const auto unknown = fw->table_flags.read_options({.recompute = r.cell("recompute"), .other_flags = r.cell("other_flags"),
                                                           .vpp = trim(r.cell("vpp")).empty(), .cp = trim(r.cell("cp")).empty(),
                                                           .sequence_parallel = trim(r.cell("seq_parallel")).empty()},
                                                          m.job);
        if (!unknown.empty()) {
            if (skipped) skipped->push_back("row " + r.cell("id") + ": " + unknown.front());
            return std::nullopt;
        }
    }
    read_measured_peak(r, m);
    validate(m.job);
    return m;
}
}  // namespace detail

/// Reads every `measured` row of a memory-measurement CSV (formula rows and rows without a peak are skipped).
/// LoRA/QLoRA, 8-bit AdamW and CPU offload named in other_flags are read into the job (run_flags); rows whose
/// technique cannot be read as stated are left out and, when `skipped` is given, listed there with the reason.
inline std::vector<memory_measurement> read_memory_measurements(std::istream& in, const std::string& path,
                                                                std::vector<std::string>* skipped = nullptr) {
    using namespace detail;
    std::vector<std::string> header, row;
    std::size_t line = 0;  // lines read so far
    if (!read_csv_record(in, header, line)) throw io_error(printable(path, 200) + ": empty file");
    const auto columns = csv_columns_from_header(header, path);
    columns.require({"id", "framework", "layers", "hidden", "heads", "ffn_hidden", "mlp_act", "vocab_padded",
                     "seq_len", "micro_batch", "global_batch", "dp", "tp", "pp", "sharding", "recompute",
                     "precision", "peak_GiB", "metric"});
    std::vector<memory_measurement> out;
    cumulative_rows cumulative;
    const std::size_t first_skipped = skipped ? skipped->size() : 0;
    while (true) {
        const std::size_t at = line + 1;
        if (!read_csv_record(in, row, line)) break;
        if (row.size() == 1 && trim(row[0]).empty()) continue;
        columns.check_width(row, at);
        const measurement_row r{columns, row};
        const std::string where = columns.source + ":" + std::to_string(at) + ": ";
        if (columns.has("value_type") && !contains(lower(r.cell("value_type")), "measured")) continue;
        if (r.cell("peak_GiB").empty() || r.cell("layers").empty()) continue;
        try {
            if (auto m = read_measurement_row(r, cumulative, skipped)) out.push_back(std::move(*m));
        } catch (const config_error& e) {
            throw config_error(where + e.what());
        }
    }
    if (skipped)  // "FILE: row 41: ...": validate reads several tables
        for (auto i = first_skipped; i < skipped->size(); ++i) (*skipped)[i] = columns.source + ": " + (*skipped)[i];
    return out;
}

/// Reads a measurement table from a file (a regular file of at most 256 MiB; errors name the file and line).
inline std::vector<memory_measurement> read_memory_measurements(const std::string& path,
                                                                std::vector<std::string>* skipped = nullptr) {
    std::istringstream in(frenzy::read_file_limited(path));
    return read_memory_measurements(in, path, skipped);
}

}  // namespace frenzy
