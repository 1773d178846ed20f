#pragma once
// frenzy_hf_train.py -> job spec, the reverse of frameworks/hf/launcher.hpp: the script's plan block (PLANNED,
// SEQ_LEN, MICRO_BATCH, GRAD_ACCUM, ADAPTERS, QLORA), from_pretrained's dtype and attn_implementation, the
// BitsAndBytesConfig and LoraConfig keywords and the TrainingArguments keywords (per_device_train_batch_size and
// gradient_accumulation_steps checked against the block, max_steps, optim, bf16/fp16, gradient_checkpointing,
// use_liger_kernel), read strictly as the launcher writes them (frameworks/hf/script.hpp: one `keyword=value,` a
// line, each block name assigned once, each call made once): a line that differs from that form is an error naming
// it, a setting missing is an error, a keyword it does not read is listed. Not in the script: the model
// (describes_model is false: import_options.model, checked against PLANNED), the world size (torchrun's,
// import_options.world_size) and the token budget (TRAIN_STEPS of the batch script: import_options.training.total_tokens).
#include <map>
#include <string>
#include <string_view>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/text.hpp"
#include "frenzy/frameworks/hf/script.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/frameworks/registry.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

namespace detail {

/// One setting, which must be there.
inline const std::string& hf_setting(const std::map<std::string, std::string>& s, const std::string& name) {
    const auto it = s.find(name);
    if (it == s.end()) throw config_error("frenzy_hf_train.py: no " + name + " setting (the script is not as frenzy launch writes it)");
    return it->second;
}

inline bool hf_python_bool(const std::string& v, const std::string& name) {
    if (v == "True") return true;
    if (v == "False") return false;
    throw config_error("frenzy_hf_train.py: " + name + "=" + printable(v) + " must be True or False");
}

/// PEFT's target_modules list (the Llama-style names the launcher writes) as the job's lora_target bits.
inline unsigned hf_lora_targets(const std::string& v) {
    static constexpr std::pair<unsigned, std::string_view> names[] = {{lora_q, "q_proj"}, {lora_k, "k_proj"}, {lora_v, "v_proj"},
        {lora_o, "o_proj"}, {lora_gate, "gate_proj"}, {lora_up, "up_proj"}, {lora_down, "down_proj"}};
    if (v.size() < 2 || v.front() != '[' || v.back() != ']')
        throw config_error("frenzy_hf_train.py: target_modules=" + printable(v) + " must be a list of module names");
    unsigned bits = 0;
    std::string rest = v.substr(1, v.size() - 2);
    while (!rest.empty()) {
        const auto comma = rest.find(", ");
        const auto item = rest.substr(0, comma);
        bool known = false;
        for (const auto& [bit, name] : names)
            if (item == "\"" + std::string(name) + "\"") bits |= bit, known = true;
        if (!known) throw config_error("frenzy_hf_train.py: target_modules holds " + printable(item) + ", not a module the hf launcher writes");
        rest = comma == std::string::npos ? "" : rest.substr(comma + 2);
    }
    return bits;
}

/// The planned shape (PLANNED) against the model given beside the script.
inline void hf_check_planned(const std::string& v, const transformer_spec& m) {
    const auto want = "{\"num_hidden_layers\": " + std::to_string(m.layers) + ", \"hidden_size\": " + std::to_string(m.hidden) +
                      ", \"num_attention_heads\": " + std::to_string(m.heads) + "}";
    if (v != want)
        throw config_error("frenzy_hf_train.py: PLANNED=" + printable(v) + " contradicts the model given beside the file (" + want + ")");
}

/// Trainer's flag and the weights' dtype -> the job's precision (hf launcher precision_of, reversed: bf16 weights
/// without a flag are pure bf16, as the launcher writes it under adapters and sharded back ends).
inline precision hf_precision(bool bf16, bool fp16, const std::string& dtype) {
    if (bf16) return dtype == "torch.bfloat16" ? precision::bf16 : precision::bf16_mixed;
    if (fp16) return precision::fp16_mixed;
    return dtype == "torch.bfloat16" ? precision::bf16 : precision::fp32;
}

/// TrainingArguments' optim as the launcher writes it (launcher.hpp optim_of, reversed) into the job.
inline void hf_optim(const std::string& optim, job_spec& j) {
    auto& o = j.training.optimizer;
    if (optim == "\"adamw_torch_fused\"") o = optimizer_kind::adamw;
    else if (optim == "\"adamw_bnb_8bit\"") o = optimizer_kind::adamw_8bit;
    else if (optim == "\"paged_adamw_8bit\"" || optim == "\"paged_adamw_32bit\"") {
        o = optim == "\"paged_adamw_8bit\"" ? optimizer_kind::adamw_8bit : optimizer_kind::adamw;
        j.runtime.paged_optimizer = true;
    } else if (optim == "\"sgd\"") o = optimizer_kind::sgd;
    else if (optim == "\"adafactor\"") o = optimizer_kind::adafactor;
    else throw config_error("frenzy_hf_train.py: optim=" + printable(optim) + " is not one the hf launcher writes");
}

/// ADAPTERS / QLORA and LoraConfig's keywords -> the job's fine-tune; without adapters from_pretrained is a full
/// fine-tune and from_config a run from scratch.
inline void hf_finetune(const std::map<std::string, std::string>& s, const std::string& text, bool adapters, bool qlora,
                        finetune_spec& ft) {
    if (adapters) {
        ft.method = qlora ? finetune_method::qlora : finetune_method::lora;
        ft.rank = parse_int64(hf_setting(s, "r"), "r", bounds::lora_rank);
        ft.alpha = parse_double(hf_setting(s, "lora_alpha"), "lora_alpha", real_bound{0, 1e6});
        ft.dropout = parse_double(hf_setting(s, "lora_dropout"), "lora_dropout", real_bound{0, 1});
        ft.targets = hf_lora_targets(hf_setting(s, "target_modules"));
    } else if (qlora) {
        throw config_error("frenzy_hf_train.py: QLORA = True without ADAPTERS");
    } else {
        ft.method = text.find("model = AutoModelForCausalLM.from_config(\n") != std::string::npos ? finetune_method::none
                                                                                                  : finetune_method::full;
    }
}

/// A TrainingArguments keyword that the launcher sets from a settings-block name (per_device_train_batch_size from
/// MICRO_BATCH, ...): that name, or a number equal to its value; config_error naming both values otherwise, and for
/// a keyword not given (Trainer's default would run, not the block's value).
inline void hf_check_block_keyword(const std::map<std::string, std::string>& s, const std::string& kw, const std::string& name,
                                   std::int64_t block_value) {
    const auto it = s.find(kw);
    if (it == s.end())
        throw config_error("frenzy_hf_train.py: TrainingArguments has no " + kw + "=" + name + " (Trainer's default would run, "
                           "not " + name + " = " + std::to_string(block_value) + ")");
    if (it->second == name) return;
    const auto v = parse_int64(it->second, "frenzy_hf_train.py: TrainingArguments(" + kw + ")", bounds::global_batch);
    if (v != block_value)
        throw config_error("frenzy_hf_train.py: TrainingArguments(" + kw + "=" + std::to_string(v) + ") disagrees with the settings "
                           "block's " + name + " = " + std::to_string(block_value) + " (the run uses " + std::to_string(v) + ")");
}

/// TrainingArguments' precision flags as Trainer takes them: bf16 and fp16 together are refused
/// (huggingface/transformers@fd798335 src/transformers/training_args.py TrainingArguments.__post_init__: "At most one
/// of fp16 and bf16 can be True, but not both").
inline std::pair<bool, bool> hf_precision_flags(const std::map<std::string, std::string>& s) {
    const auto flag = [&](const char* name) { return s.count(name) ? hf_python_bool(s.at(name), name) : false; };
    const bool bf16 = flag("bf16"), fp16 = flag("fp16");
    if (bf16 && fp16)
        throw config_error("frenzy_hf_train.py: TrainingArguments(bf16=True, fp16=True): Trainer refuses both (transformers' "
                           "training_args.py: \"At most one of fp16 and bf16 can be True, but not both\")");
    return {bf16, fp16};
}

/// BitsAndBytesConfig under QLORA: 4-bit base weights (load_in_4bit=True, NF4 or FP4), what the job's QLoRA is.
inline void hf_check_quantization(const std::map<std::string, std::string>& s) {
    const auto it = s.find("load_in_4bit");
    if (it == s.end() || !hf_python_bool(it->second, "load_in_4bit"))
        throw config_error("frenzy_hf_train.py: QLORA = True needs BitsAndBytesConfig(load_in_4bit=True) (4-bit base weights)");
    const auto q = s.find("bnb_4bit_quant_type");
    if (q != s.end() && q->second != "\"nf4\"" && q->second != "\"fp4\"")
        throw config_error("frenzy_hf_train.py: BitsAndBytesConfig(bnb_4bit_quant_type=" + printable(q->second) +
                           ") must be \"nf4\" or \"fp4\" (bitsandbytes' 4-bit types)");
}

/// max_steps: TRAIN_STEPS (the batch script's, import_options.training.total_tokens) or a number of optimizer steps
/// (its tokens); none: Trainer runs num_train_epochs over the data (no budget, noted).
inline double hf_budget(const std::map<std::string, std::string>& s, const job_spec& j, double given, launcher_import& out) {
    const auto it = s.find("max_steps");
    if (it == s.end()) {
        out.notes.push_back("TrainingArguments has no max_steps: Trainer runs num_train_epochs over the data; no token budget read");
        return 0;
    }
    if (it->second == "TRAIN_STEPS") return given;
    const auto steps = parse_int64(it->second, "frenzy_hf_train.py: TrainingArguments(max_steps)", bounds::steps);
    return check_bound("frenzy_hf_train.py: max_steps (tokens)", static_cast<double>(steps) * j.tokens_per_step(), bounds::tokens);
}

}  // namespace detail

/// frenzy_hf_train.py -> job (Trainer under torchrun: dp = opt.world_size, nothing sharded).
inline launcher_import hf_import_script(const std::string& text, const import_options& opt) {
    const auto read = detail::hf_read_script(text);
    const auto& s = read.settings;
    if (opt.model.layers <= 0)
        throw config_error("frenzy_hf_train.py does not describe the model: give it beside the file (--model)");
    launcher_import out;
    for (const auto& u : read.unread) out.unknown.push_back(u + " (not read)");
    auto& j = out.job;
    j.runtime.framework = frameworks::hf::handle;
    j.model = opt.model;
    detail::hf_check_planned(detail::hf_setting(s, "PLANNED"), j.model);
    auto& t = j.training;
    auto number = [&](const char* name, int_bound b) { return parse_int64(detail::hf_setting(s, name), name, b); };
    t.seq_len = number("SEQ_LEN", bounds::seq_len);
    t.micro_batch = number("MICRO_BATCH", bounds::micro_batch);
    const auto accum = number("GRAD_ACCUM", bounds::global_batch);
    detail::hf_check_block_keyword(s, "per_device_train_batch_size", "MICRO_BATCH", t.micro_batch);
    detail::hf_check_block_keyword(s, "gradient_accumulation_steps", "GRAD_ACCUM", accum);
    const bool adapters = detail::hf_python_bool(detail::hf_setting(s, "ADAPTERS"), "ADAPTERS");
    const bool qlora = detail::hf_python_bool(detail::hf_setting(s, "QLORA"), "QLORA");
    const auto flag = [&](const char* name) { return s.count(name) ? detail::hf_python_bool(s.at(name), name) : false; };
    const auto [bf16, fp16] = detail::hf_precision_flags(s);
    const auto& dtype = detail::hf_setting(s, "dtype");
    t.precision = detail::hf_precision(bf16, fp16, adapters && bf16 ? std::string("torch.float32") : dtype);
    detail::hf_optim(detail::hf_setting(s, "optim"), j);
    t.finetune.double_quant = detail::hf_python_bool(detail::hf_setting(s, "bnb_4bit_use_double_quant"), "bnb_4bit_use_double_quant");
    if (qlora) detail::hf_check_quantization(s);
    detail::hf_finetune(s, text, adapters, qlora, t.finetune);
    // pure bf16 adapters: the launcher casts them after get_peft_model (PEFT makes them fp32)
    const bool cast = text.find("\nmodel = model.to(torch.bfloat16)") != std::string::npos;
    if (cast != (adapters && t.precision == precision::bf16))
        throw config_error("frenzy_hf_train.py: model.to(torch.bfloat16) after get_peft_model is written for pure bf16 "
                           "adapters only (training.precision " + std::string(to_string(t.precision)) + ")");
    const auto& attn = detail::hf_setting(s, "attn_implementation");
    if (attn == "\"eager\"") j.runtime.attention = attention_impl::unfused;
    else if (attn != "\"sdpa\"") throw config_error("frenzy_hf_train.py: attn_implementation=" + printable(attn) + " must be \"sdpa\" or \"eager\"");
    out.has_parallel = opt.world_size > 0;
    j.parallel.dp = out.has_parallel ? opt.world_size : 1;
    if (flag("gradient_checkpointing")) j.parallel.recompute = recompute::full;
    j.runtime.liger = flag("use_liger_kernel");  // runtime.liger (train/job.hpp)
    t.global_batch = checked_mul(checked_mul(t.micro_batch, accum, "MICRO_BATCH x GRAD_ACCUM"), j.parallel.dp, "x the world size");
    t.total_tokens = detail::hf_budget(s, j, opt.training.total_tokens, out);
    j.name = opt.name.empty() ? j.model.name : opt.name;
    out.world_size = opt.world_size;
    validate(j);
    return out;
}

}  // namespace frenzy
