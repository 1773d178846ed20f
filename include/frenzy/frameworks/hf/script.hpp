#pragma once
// frenzy_hf_train.py as Python runs it, as far as the hf importer reads it (frameworks/hf/import.hpp): the settings
// block's names, each assigned once at the top level (a later `MICRO_BATCH = 99`, `+= 97`, an assignment inside an
// `if`, would change what runs), and the keyword arguments of the calls that configure the run (TrainingArguments,
// BitsAndBytesConfig, LoraConfig, AutoModelForCausalLM.from_pretrained / from_config), each call made once and each
// keyword given once in it (Python refuses a repeated keyword: "SyntaxError: keyword argument repeated").
#include <cctype>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/text.hpp"

namespace frenzy::detail {

/// What the reader takes from the script: values by settings-block name or keyword (the keywords it reads are
/// distinct across the calls), and the keywords of those calls it does not read ("Call(keyword=value)").
struct hf_script_text {
    std::map<std::string, std::string> settings;
    std::vector<std::string> unread;
};

/// The settings block's names (frameworks/hf/launcher.hpp plan_block).
inline constexpr std::string_view hf_block_names[] = {"PLANNED", "SEQ_LEN", "MICRO_BATCH", "GRAD_ACCUM", "TRAIN_STEPS", "ADAPTERS", "QLORA"};

/// A call the reader follows: how its opening line names it, and the keywords the launcher writes in it.
struct hf_call_kind {
    std::string_view name, opener;
    std::vector<std::string_view> keywords;
};

inline const std::vector<hf_call_kind>& hf_calls() {
    static const std::vector<hf_call_kind> calls{
        {"BitsAndBytesConfig", "BitsAndBytesConfig(", {"load_in_4bit", "bnb_4bit_quant_type", "bnb_4bit_use_double_quant",
                                                       "bnb_4bit_compute_dtype", "bnb_4bit_quant_storage"}},
        {"from_pretrained", "AutoModelForCausalLM.from_pretrained(", {"dtype", "attn_implementation", "quantization_config"}},
        {"from_config", "AutoModelForCausalLM.from_config(", {"dtype", "attn_implementation"}},
        {"LoraConfig", "LoraConfig(", {"r", "lora_alpha", "lora_dropout", "target_modules", "task_type"}},
        {"TrainingArguments", "TrainingArguments(", {"output_dir", "per_device_train_batch_size", "gradient_accumulation_steps",
            "max_steps", "learning_rate", "lr_scheduler_type", "warmup_steps", "optim", "bf16", "fp16", "gradient_checkpointing",
            "gradient_checkpointing_kwargs", "use_liger_kernel", "logging_steps", "save_steps", "save_total_limit", "report_to",
            "ddp_find_unused_parameters", "seed"}},
    };
    return calls;
}

[[noreturn]] inline void hf_script_fail(std::size_t line, const std::string& what) {
    throw config_error("frenzy_hf_train.py: line " + std::to_string(line) + ": " + what);
}

inline bool hf_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Whether `code` (a line without its indentation) binds `name`: `name = `, `name += `, `name: int = `,
/// `name[...] = ` and `name, other = ` (not `name == `).
inline bool hf_assigns(std::string_view code, std::string_view name) {
    if (!code.starts_with(name) || (code.size() > name.size() && hf_ident_char(code[name.size()]))) return false;
    auto rest = code.substr(name.size());
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.empty()) return false;
    if (rest.front() == '=') return rest.size() < 2 || rest[1] != '=';
    if (rest.front() == ':' || rest.front() == '[' || rest.front() == ',') return rest.find('=') != std::string_view::npos;
    const auto op_end = rest.find_first_not_of("+-*/%&|^@<>");  // augmented: += -= *= /= //= %= **= >>= <<= ...
    return op_end > 0 && op_end != std::string_view::npos && rest[op_end] == '=' && rest.substr(0, op_end) != "<" &&
           rest.substr(0, op_end) != ">";
}

/// One line outside the calls: a settings-block name assigned (the first top-level `NAME = value` is the setting;
/// any other assignment of it is refused), a configuring call opened (its kind returned), `args.X = ` refused.
inline const hf_call_kind* hf_outside_line(const std::string& line, std::size_t no, hf_script_text& s,
                                           std::map<std::string, std::size_t>& first) {
    const auto indent = line.find_first_not_of(' ');
    if (indent == std::string::npos || line[indent] == '#') return nullptr;
    const std::string_view code = std::string_view(line).substr(indent);
    for (const auto n : hf_block_names) {
        if (!hf_assigns(code, n)) continue;
        const std::string name(n);
        if (indent == 0 && code.starts_with(name + " = ") && !first.count(name)) {
            first[name] = no;
            s.settings[name] = std::string(code.substr(n.size() + 3));
        } else {
            hf_script_fail(no, name + " is given twice (" + printable(code) + (first.count(name) ? " after line " +
                           std::to_string(first[name]) : std::string(", not the settings block's `" + name + " = value`")) + "): Frenzy reads the "
                           "settings block's one top-level assignment, and the run would use another value");
        }
    }
    const bool builds_args = code.starts_with("args = TrainingArguments(");
    if ((hf_assigns(code, "args") && !builds_args) || (code.starts_with("args.") && code.find(" = ") != std::string_view::npos) ||
        code.find("setattr(args") != std::string_view::npos)
        hf_script_fail(no, printable(code) + " changes TrainingArguments after they are read");
    for (const auto& c : hf_calls())
        if (code.find(c.opener) != std::string_view::npos) {
            if (code.back() != '(') hf_script_fail(no, std::string(c.name) + " is called with its arguments on the same line; "
                                                   "Frenzy reads one `keyword=value,` a line, as frenzy launch writes it");
            return &c;
        }
    return nullptr;
}

/// One line inside a call `c`: a `keyword=value,` (each keyword once), or the model's positional argument.
inline void hf_call_line(const std::string& line, std::size_t no, const hf_call_kind& c, hf_script_text& s,
                         std::map<std::string, std::size_t>& seen) {
    const auto indent = line.find_first_not_of(' ');
    const std::string_view code = std::string_view(line).substr(indent);
    std::size_t k = 0;
    while (k < code.size() && hf_ident_char(code[k])) ++k;
    if (k == 0 || k >= code.size() || code[k] != '=' || (k + 1 < code.size() && code[k + 1] == '=')) {
        if ((code == "MODEL," && c.name == "from_pretrained") || (code == "config," && c.name == "from_config")) return;
        hf_script_fail(no, printable(code) + " inside " + std::string(c.name) + "(...) is not `keyword=value,`");
    }
    const std::string kw(code.substr(0, k));
    if (code.back() != ',') throw config_error("frenzy_hf_train.py: the line " + printable(line) + " is not `" + kw + "=value,`");
    if (const auto [it, fresh] = seen.emplace(kw, no); !fresh)
        hf_script_fail(no, std::string(c.name) + "(...) is given " + kw + " twice (first on line " + std::to_string(it->second) +
                           "): Python refuses the script (SyntaxError: keyword argument repeated)");
    const auto value = std::string(code.substr(k + 1, code.size() - k - 2));
    bool known = false;
    for (const auto n : c.keywords) known = known || n == kw;
    if (known) s.settings[kw] = value;
    else s.unread.push_back(std::string(c.name) + "(" + kw + "=" + printable(value) + ")");
}

/// Reads the settings block and the configuring calls of `text`; config_error naming the line for what Frenzy
/// cannot follow.
inline hf_script_text hf_read_script(const std::string& text) {
    hf_script_text s;
    std::map<std::string, std::size_t> first, called;
    const hf_call_kind* call = nullptr;
    std::map<std::string, std::size_t> seen;
    std::size_t no = 0;
    for (const auto piece : split(text, '\n')) {
        const std::string line(piece);
        ++no;
        if (call) {
            const auto indent = line.find_first_not_of(' ');
            if (indent != std::string::npos && line[indent] == ')') call = nullptr;
            else if (indent != std::string::npos && line[indent] != '#') hf_call_line(line, no, *call, s, seen);
            continue;
        }
        call = hf_outside_line(line, no, s, first);
        if (!call) continue;
        if (const auto [it, fresh] = called.emplace(std::string(call->name), no); !fresh)
            hf_script_fail(no, std::string(call->name) + " is called again (first on line " + std::to_string(it->second) +
                               "); Frenzy reads one call of it");
        seen.clear();
    }
    if (call) throw config_error("frenzy_hf_train.py: " + std::string(call->name) + "( is not closed");
    return s;
}

}  // namespace frenzy::detail
