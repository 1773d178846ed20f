#pragma once
// A small reader of launch shell scripts as the frameworks' examples write them (Megatron-LM examples/*/train_*.sh):
// variables (`N=8`, `${X:-default}`, `$((A*B))`), bash arrays (`ARGS=(...)`, `ARGS+=(...)`, "${ARGS[@]}"), line
// continuations, comments, `if [[ "$X" == "y" ]]; then ... elif/else ... fi` over string tests, and the
// launch command (torchrun / python / deepspeed ... script.py ARGS). It runs nothing: command substitutions
// `$(...)` stay literal and every other command is skipped. Used by the launcher importers (io/launcher_*.hpp).
#include <cctype>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/error.hpp"

namespace frenzy {

/// The launch command found in a script: the launcher's own words (torchrun ...), the script or module, and its
/// arguments; plus what the reader could not follow.
struct shell_command {
    std::vector<std::string> launcher;  ///< words before the script (e.g. torchrun --nproc_per_node 8)
    std::string script;                 ///< pretrain_gpt.py, or "-m module"
    std::vector<std::string> args;      ///< words after the script
    std::vector<std::string> notes;     ///< shell constructs not understood (conditions, expansions)
    bool found = false;                 ///< false: no launch command; `args` holds every word of the text
};

namespace detail {

struct shell_state {
    std::map<std::string, std::string> vars;
    std::map<std::string, std::vector<std::string>> arrays;
    std::vector<std::string>* notes = nullptr;
};

inline bool shell_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Integer arithmetic of $((...)): + - * / with parentheses over integers and variable names.
struct shell_arith {
    std::string_view s;
    std::size_t i = 0;
    const shell_state& st;
    bool ok = true;
    void ws() { while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i; }
    long long atom() {
        ws();
        if (i < s.size() && s[i] == '(') {
            ++i;
            auto v = sum();
            ws();
            if (i < s.size() && s[i] == ')') ++i; else ok = false;
            return v;
        }
        if (i < s.size() && s[i] == '$') ++i;
        if (i < s.size() && s[i] == '{') ++i;
        std::size_t b = i;
        while (i < s.size() && shell_name_char(s[i])) ++i;
        if (i < s.size() && s[i] == '}') ++i;
        std::string w(s.substr(b, i - b));
        std::string_view key = w;
        if (!key.empty() && std::isdigit(static_cast<unsigned char>(key[0]))) {
            try { return std::stoll(w); } catch (const std::exception&) { ok = false; return 0; }
        }
        auto it = st.vars.find(w);
        if (it == st.vars.end() || it->second.empty()) { ok = false; return 0; }
        try { return std::stoll(it->second); } catch (...) { ok = false; return 0; }
    }
    long long prod() {
        auto v = atom();
        for (;;) {
            ws();
            if (i < s.size() && (s[i] == '*' || s[i] == '/')) {
                const char op = s[i++];
                const auto r = atom();
                if (op == '*') v *= r; else if (r != 0) v /= r; else ok = false;
            } else return v;
        }
    }
    long long sum() {
        auto v = prod();
        for (;;) {
            ws();
            if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
                const char op = s[i++];
                const auto r = prod();
                v = op == '+' ? v + r : v - r;
            } else return v;
        }
    }
};

/// One word of a line after expansion: its pieces, and whether unquoted expansions may split it.
struct shell_word_out {
    std::vector<std::string> words;
};

inline std::string strip_quotes(std::string v) {
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) return v.substr(1, v.size() - 2);
    return v;
}

/// Splits `line` into words (quotes, comments), expanding variables and arrays. Returns the words.
inline std::vector<std::string> shell_words(std::string_view line, const shell_state& st) {
    std::vector<std::string> out;
    std::string cur;
    bool have = false;  // a word is in progress (possibly empty, e.g. "")
    auto flush = [&] {
        if (have) out.push_back(cur);
        cur.clear();
        have = false;
    };
    // appends unquoted expansion text: word-split on whitespace
    auto add_split = [&](const std::string& v) {
        for (char c : v) {
            if (std::isspace(static_cast<unsigned char>(c))) flush();
            else { cur += c; have = true; }
        }
    };
    // expands a $-construct starting at line[i] ('$'); appends to cur (quoted) or splits (unquoted)
    auto expand = [&](std::size_t& i, bool quoted) {
        const std::size_t start = i;
        ++i;
        auto emit = [&](const std::string& v) {
            if (quoted) { cur += v; have = true; } else add_split(v);
        };
        if (i < line.size() && line[i] == '(' && i + 1 < line.size() && line[i + 1] == '(') {  // $((...))
            const auto end = line.find("))", i);
            if (end == std::string_view::npos) { i = line.size(); return; }
            shell_arith a{line.substr(i + 2, end - i - 2), 0, st};
            const auto v = a.sum();
            i = end + 2;
            if (a.ok) emit(std::to_string(v));
            else {
                if (st.notes) st.notes->push_back("arithmetic " + std::string(line.substr(start, i - start)));
                emit(std::string(line.substr(start, i - start)));
            }
            return;
        }
        if (i < line.size() && line[i] == '(') {  // $(command): not run
            int depth = 0;
            std::size_t j = i;
            for (; j < line.size(); ++j) {
                if (line[j] == '(') ++depth;
                if (line[j] == ')' && --depth == 0) break;
            }
            i = std::min(j + 1, line.size());
            emit(std::string(line.substr(start, i - start)));
            return;
        }
        std::string name, op, arg;
        bool braced = false;
        if (i < line.size() && line[i] == '{') {
            braced = true;
            const auto end = line.find('}', i);
            if (end == std::string_view::npos) { emit("$"); return; }
            std::string body(line.substr(i + 1, end - i - 1));
            i = end + 1;
            std::size_t k = 0;
            while (k < body.size() && shell_name_char(body[k])) ++k;
            name = body.substr(0, k);
            op = body.substr(k);
        } else {
            while (i < line.size() && shell_name_char(line[i])) name += line[i++];
            if (name.empty()) { cur += '$'; have = true; return; }
        }
        if (braced && (op == "[@]" || op == "[*]")) {
            auto it = st.arrays.find(name);
            if (it == st.arrays.end()) return;
            if (quoted && op == "[@]") {  // "${A[@]}": one word per element
                for (std::size_t e = 0; e < it->second.size(); ++e) {
                    if (e > 0) { out.push_back(cur); cur.clear(); }
                    cur += it->second[e];
                    have = true;
                }
            } else {
                std::string joined;
                for (const auto& e : it->second) joined += (joined.empty() ? "" : " ") + e;
                emit(joined);
            }
            return;
        }
        auto it = st.vars.find(name);
        const bool set = it != st.vars.end();
        std::string v = set ? it->second : "";
        if (!op.empty()) {
            if (op.rfind(":-", 0) == 0 || op.rfind("-", 0) == 0) {
                const auto def = strip_quotes(op.substr(op[0] == ':' ? 2 : 1));
                if (!set || (op[0] == ':' && v.empty())) v = def;
            } else if (op.rfind(":+", 0) == 0 || op.rfind("+", 0) == 0) {  // alternate value (not expanded further)
                const bool use = set && (op[0] != ':' || !v.empty());
                v = use ? strip_quotes(op.substr(op[0] == ':' ? 2 : 1)) : "";
            } else if (st.notes) {
                st.notes->push_back("expansion ${" + name + op + "}");
            }
        } else if (!set) {
            if (auto a = st.arrays.find(name); a != st.arrays.end() && !a->second.empty()) v = a->second.front();
        }
        emit(v);
    };
    for (std::size_t i = 0; i < line.size();) {
        const char c = line[i];
        if (std::isspace(static_cast<unsigned char>(c))) { flush(); ++i; continue; }
        if (c == '#' && !have) break;  // comment
        if (c == '\'') {
            const auto end = line.find('\'', i + 1);
            const auto e = end == std::string_view::npos ? line.size() : end;
            cur += std::string(line.substr(i + 1, e - i - 1));
            have = true;
            i = e + 1;
            continue;
        }
        if (c == '"') {
            have = true;
            ++i;
            while (i < line.size() && line[i] != '"') {
                if (line[i] == '\\' && i + 1 < line.size()) { cur += line[i + 1]; i += 2; continue; }
                if (line[i] == '$') { expand(i, true); continue; }
                cur += line[i++];
            }
            ++i;
            continue;
        }
        if (c == '\\' && i + 1 < line.size()) { cur += line[i + 1]; have = true; i += 2; continue; }
        if (c == '$') { expand(i, false); continue; }
        if (c == ';' ) { flush(); out.push_back(";"); ++i; continue; }
        cur += c;
        have = true;
        ++i;
    }
    flush();
    return out;
}

/// `[[ A == B ]] || [[ -z C ]]`-style conditions over expanded words; unknown tests are false (noted).
inline bool shell_condition(const std::vector<std::string>& w, std::vector<std::string>* notes) {
    bool result = false, have = false;
    std::string pending = "||";
    for (std::size_t i = 0; i < w.size();) {
        if (w[i] == "||" || w[i] == "&&") { pending = w[i++]; continue; }
        if (w[i] != "[[" && w[i] != "[") { ++i; continue; }
        const std::string close = w[i] == "[[" ? "]]" : "]";
        std::vector<std::string> t;
        ++i;
        while (i < w.size() && w[i] != close) t.push_back(w[i++]);
        ++i;
        bool neg = !t.empty() && t[0] == "!";
        if (neg) t.erase(t.begin());
        bool v = false;
        if (t.size() == 3 && (t[1] == "==" || t[1] == "=")) v = t[0] == t[2];
        else if (t.size() == 3 && t[1] == "!=") v = t[0] != t[2];
        else if (t.size() == 2 && t[0] == "-z") v = t[1].empty();
        else if (t.size() == 1 && t[0] == "-z") v = true;  // -z of an empty expansion
        else if (t.size() == 2 && t[0] == "-n") v = !t[1].empty();
        else if (t.size() == 2 && (t[0] == "-f" || t[0] == "-d" || t[0] == "-e")) v = false;  // files: not looked at
        else if (notes) {
            std::string s;
            for (auto& x : t) s += (s.empty() ? "" : " ") + x;
            notes->push_back("condition [[ " + s + " ]] (taken as false)");
        }
        if (neg) v = !v;
        result = !have ? v : (pending == "&&" ? (result && v) : (result || v));
        have = true;
    }
    return result;
}

inline bool is_launch_word(const std::string& w) {
    auto base = w.substr(w.find_last_of('/') == std::string::npos ? 0 : w.find_last_of('/') + 1);
    return base == "torchrun" || base == "python" || base == "python3" || base == "deepspeed";
}

}  // namespace detail

/// Reads a launch script; `positional` gives $1, $2, ... (unset by default, so `${1:-x}` is x).
inline shell_command read_shell_script(std::string_view text, const std::vector<std::string>& positional = {}) {
    shell_command out;
    detail::shell_state st;
    st.notes = &out.notes;
    for (std::size_t i = 0; i < positional.size(); ++i) st.vars[std::to_string(i + 1)] = positional[i];
    // join continuations
    std::string joined;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') { ++i; continue; }
        joined += text[i];
    }
    std::vector<std::string> lines;
    {
        std::string cur;
        for (char c : joined) {
            if (c == '\n') { lines.push_back(cur); cur.clear(); } else cur += c;
        }
        lines.push_back(cur);
    }
    struct branch { bool active; bool taken; };
    std::vector<branch> ifs;
    auto active = [&] {
        for (auto& b : ifs) if (!b.active) return false;
        return true;
    };
    std::vector<std::string> all_words;
    std::vector<std::string> last_cmd;
    for (std::size_t li = 0; li < lines.size(); ++li) {
        std::string line = lines[li];
        // array assignment, possibly over several lines: NAME=( ... ) / NAME+=( ... )
        std::size_t k = 0;
        while (k < line.size() && std::isspace(static_cast<unsigned char>(line[k]))) ++k;
        std::size_t n = k;
        while (n < line.size() && detail::shell_name_char(line[n])) ++n;
        const bool append = line.compare(n, 3, "+=(") == 0;
        if (n > k && (line.compare(n, 2, "=(") == 0 || append)) {
            const std::string name = line.substr(k, n - k);
            std::string body = line.substr(n + (append ? 3 : 2));
            auto closed = [](const std::string& s) {  // a ')' outside quotes and comments
                char q = 0;
                for (std::size_t i = 0; i < s.size(); ++i) {
                    const char c = s[i];
                    if (q) { if (c == q) q = 0; continue; }
                    if (c == '\'' || c == '"') q = c;
                    else if (c == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(s[i - 1])))) return std::string::npos;
                    else if (c == ')') return i;
                }
                return std::string::npos;
            };
            std::vector<std::string> elems;
            for (;;) {
                const auto p = closed(body);
                auto words = detail::shell_words(p == std::string::npos ? body : body.substr(0, p), st);
                elems.insert(elems.end(), words.begin(), words.end());
                if (p != std::string::npos || li + 1 >= lines.size()) break;
                body = lines[++li];
            }
            if (active()) {
                auto& a = st.arrays[name];
                if (!append) a.clear();
                a.insert(a.end(), elems.begin(), elems.end());
            }
            continue;
        }
        auto words = detail::shell_words(line, st);
        // split at ';' into simple statements
        std::vector<std::vector<std::string>> stmts(1);
        for (auto& w : words) {
            if (w == ";") stmts.emplace_back();
            else stmts.back().push_back(w);
        }
        for (auto& s : stmts) {
            if (s.empty()) continue;
            const auto& w0 = s[0];
            if (w0 == "if") {
                const bool parent = active();
                const bool v = parent && detail::shell_condition({s.begin() + 1, s.end()}, &out.notes);
                ifs.push_back({v, v});
                continue;
            }
            if (w0 == "elif" && !ifs.empty()) {
                auto& b = ifs.back();
                ifs.pop_back();
                const bool parent = active();
                const bool v = parent && !b.taken && detail::shell_condition({s.begin() + 1, s.end()}, &out.notes);
                ifs.push_back({v, b.taken || v});
                continue;
            }
            if (w0 == "else" && !ifs.empty()) {
                auto b = ifs.back();
                ifs.pop_back();
                const bool parent = active();
                ifs.push_back({parent && !b.taken, true});
                if (s.size() > 1) s.erase(s.begin()); else continue;
            }
            if (w0 == "fi") { if (!ifs.empty()) ifs.pop_back(); continue; }
            if (w0 == "then" || w0 == "do" || w0 == "done") continue;
            if (!active()) continue;
            std::vector<std::string> cmd = s;
            if (cmd[0] == "export" || cmd[0] == "local" || cmd[0] == "readonly") cmd.erase(cmd.begin());
            if (cmd.empty()) continue;
            // variable assignments (NAME=value ...)
            bool assigned = false;
            while (!cmd.empty()) {
                const auto eq = cmd[0].find('=');
                if (eq == std::string::npos || eq == 0) break;
                bool name = true;
                for (std::size_t c = 0; c < eq; ++c) name = name && detail::shell_name_char(cmd[0][c]);
                if (!name || std::isdigit(static_cast<unsigned char>(cmd[0][0]))) break;
                st.vars[cmd[0].substr(0, eq)] = cmd[0].substr(eq + 1);
                cmd.erase(cmd.begin());
                assigned = true;
            }
            if (cmd.empty()) continue;
            (void)assigned;
            bool launch = false;
            for (auto& w : cmd) launch = launch || detail::is_launch_word(w) || (w.size() > 3 && w.ends_with(".py"));
            if (launch) last_cmd = cmd;
            all_words.insert(all_words.end(), s.begin(), s.end());
        }
    }
    if (last_cmd.empty()) {
        // a plain argument list (no launch command): every word, with array contents
        for (auto& [name, a] : st.arrays) (void)name, (void)a;
        out.args = all_words;
        return out;
    }
    out.found = true;
    std::size_t i = 0;
    for (; i < last_cmd.size(); ++i) {
        const auto& w = last_cmd[i];
        if (w.size() > 3 && w.ends_with(".py")) { out.script = w; ++i; break; }
        if (w == "-m" && i + 1 < last_cmd.size()) { out.script = "-m " + last_cmd[i + 1]; i += 2; break; }
        out.launcher.push_back(w);
    }
    out.args.assign(last_cmd.begin() + static_cast<std::ptrdiff_t>(std::min(i, last_cmd.size())), last_cmd.end());
    return out;
}

/// `--flag value...` / `--flag=value` pairs of an argument list, in order. A flag's values are the words up to the
/// next word starting with "--" (none for a switch).
struct cli_argument {
    std::string flag;
    std::vector<std::string> values;
};

inline std::vector<cli_argument> split_arguments(const std::vector<std::string>& args, std::vector<std::string>* stray = nullptr) {
    std::vector<cli_argument> out;
    for (const auto& a : args) {
        if (a.rfind("--", 0) == 0 && a.size() > 2) {
            const auto eq = a.find('=');
            if (eq != std::string::npos) out.push_back({a.substr(0, eq), {a.substr(eq + 1)}});
            else out.push_back({a, {}});
        } else if (!out.empty()) {
            out.back().values.push_back(a);
        } else if (stray) {
            stray->push_back(a);
        }
    }
    return out;
}

}  // namespace frenzy
