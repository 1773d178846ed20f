#pragma once
// frenzy_hf_train.py -> job spec, the reverse of frameworks/hf/launcher.hpp: the script's plan block (PLANNED,
// SEQ_LEN, MICRO_BATCH, GRAD_ACCUM, ADAPTERS, QLORA), from_pretrained's dtype and attn_implementation, the
// BitsAndBytesConfig and LoraConfig keywords and the TrainingArguments flags (optim, bf16/fp16,
// gradient_checkpointing, use_liger_kernel), read strictly as the launcher writes them: one `NAME = literal` or `keyword=literal,` a
// line; a line that differs from that form is an error naming it, a setting missing is an error. Not in the
// script: the model (describes_model is false: import_options.model, checked against PLANNED), the world size
// (torchrun's, import_options.world_size) and the token budget (TRAIN_STEPS of the batch script:
// import_options.training.total_tokens).
#include <map>
#include <string>
#include <string_view>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/text.hpp"
#include "frenzy/io/launcher_import.hpp"
#include "frenzy/frameworks/registry.hpp"
#include "frenzy/train/job.hpp"

namespace frenzy {

namespace detail {

/// The script's settings by name: `NAME = value` at the top level and `    keyword=value,` inside the calls, the
/// keywords the reader knows only. config_error for a name given twice.
inline std::map<std::string, std::string> hf_script_settings(const std::string& text) {
    static constexpr std::string_view top[] = {"PLANNED", "SEQ_LEN", "MICRO_BATCH", "GRAD_ACCUM", "ADAPTERS", "QLORA"};
    static constexpr std::string_view kw[] = {"bnb_4bit_use_double_quant", "dtype", "attn_implementation", "r", "lora_alpha",
                                              "lora_dropout", "target_modules", "optim", "bf16", "fp16", "gradient_checkpointing",
                                              "use_liger_kernel"};
    std::map<std::string, std::string> out;
    for (const auto piece : split(text, '\n')) {
        const std::string line(piece);
        auto put = [&](std::string_view name, std::string value) {
            if (!out.emplace(std::string(name), std::move(value)).second)
                throw config_error("frenzy_hf_train.py: " + std::string(name) + " is given twice");
        };
        for (const auto n : top)
            if (line.rfind(std::string(n) + " = ", 0) == 0) put(n, line.substr(n.size() + 3));
        const auto first = line.find_first_not_of(' ');
        if (first == 4 || first == 8)
            for (const auto n : kw)
                if (line.compare(first, n.size() + 1, std::string(n) + "=") == 0) {
                    if (line.back() != ',')
                        throw config_error("frenzy_hf_train.py: the line " + printable(line) + " is not `" + std::string(n) + "=value,`");
                    put(n, line.substr(first + n.size() + 1, line.size() - first - n.size() - 2));
                }
    }
    return out;
}

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

}  // namespace detail

/// frenzy_hf_train.py -> job (Trainer under torchrun: dp = opt.world_size, nothing sharded).
inline launcher_import hf_import_script(const std::string& text, const import_options& opt) {
    const auto s = detail::hf_script_settings(text);
    if (opt.model.layers <= 0)
        throw config_error("frenzy_hf_train.py does not describe the model: give it beside the file (--model)");
    launcher_import out;
    auto& j = out.job;
    j.runtime.framework = frameworks::hf::handle;
    j.model = opt.model;
    detail::hf_check_planned(detail::hf_setting(s, "PLANNED"), j.model);
    auto& t = j.training;
    auto number = [&](const char* name, int_bound b) { return parse_int64(detail::hf_setting(s, name), name, b); };
    t.seq_len = number("SEQ_LEN", bounds::seq_len);
    t.micro_batch = number("MICRO_BATCH", bounds::micro_batch);
    const auto accum = number("GRAD_ACCUM", bounds::global_batch);
    const bool adapters = detail::hf_python_bool(detail::hf_setting(s, "ADAPTERS"), "ADAPTERS");
    const bool qlora = detail::hf_python_bool(detail::hf_setting(s, "QLORA"), "QLORA");
    const auto flag = [&](const char* name) { return s.count(name) ? detail::hf_python_bool(s.at(name), name) : false; };
    const auto& dtype = detail::hf_setting(s, "dtype");
    t.precision = detail::hf_precision(flag("bf16"), flag("fp16"), adapters && flag("bf16") ? std::string("torch.float32") : dtype);
    detail::hf_optim(detail::hf_setting(s, "optim"), j);
    t.finetune.double_quant = detail::hf_python_bool(detail::hf_setting(s, "bnb_4bit_use_double_quant"), "bnb_4bit_use_double_quant");
    if (adapters) {
        t.finetune.method = qlora ? finetune_method::qlora : finetune_method::lora;
        t.finetune.rank = parse_int64(detail::hf_setting(s, "r"), "r", bounds::lora_rank);
        t.finetune.alpha = parse_double(detail::hf_setting(s, "lora_alpha"), "lora_alpha", real_bound{0, 1e6});
        t.finetune.dropout = parse_double(detail::hf_setting(s, "lora_dropout"), "lora_dropout", real_bound{0, 1});
        t.finetune.targets = detail::hf_lora_targets(detail::hf_setting(s, "target_modules"));
    } else if (qlora) {
        throw config_error("frenzy_hf_train.py: QLORA = True without ADAPTERS");
    } else {
        // from_pretrained: a full fine-tune of the model in $MODEL; from_config: its architecture trained from scratch
        t.finetune.method = text.find("model = AutoModelForCausalLM.from_config(\n") != std::string::npos ? finetune_method::none
                                                                                                    : finetune_method::full;
    }
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
    t.total_tokens = opt.training.total_tokens;
    j.name = opt.name.empty() ? j.model.name : opt.name;
    out.world_size = opt.world_size;
    validate(j);
    return out;
}

}  // namespace frenzy
