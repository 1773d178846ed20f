#pragma once
// A small reader of launch shell scripts as the frameworks' examples write them (Megatron-LM examples/*/train_*.sh):
// variables (`N=8`, `${X:-default}`, `$((A*B))`), bash arrays (`ARGS=(...)`, `ARGS+=(...)`, "${ARGS[@]}"), line
// continuations, comments, `if [[ "$X" == "y" ]]; then ... elif/else ... fi` over string tests, and the
// launch command (torchrun / python / deepspeed ... script.py ARGS). It runs nothing: command substitutions
// `$(...)` stay literal and every other command is skipped. Used by the launcher importers (frameworks/<name>/import.hpp).
#include <cctype>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "frenzy/core/checked.hpp"
#include "frenzy/core/error.hpp"
#include "frenzy/core/text.hpp"  // cli_argument, split_arguments
#include "frenzy/frameworks/registry.hpp"  // framework_launch_program

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
    std::size_t line = 0;  ///< the script line being read (1-based, the first of a continued line)

    /// config_error naming the line (the importer adds the file).
    [[noreturn]] void fail(const std::string& what) const { throw config_error("line " + std::to_string(line) + ": " + what); }
    /// Checks an expansion's size against bounds::shell_value_bytes (`B=$B$B` forty times would reach a terabyte).
    void check_size(std::size_t bytes) const {
        if (bytes > bounds::shell_value_bytes)
            fail("a value grows past " + std::to_string(bounds::shell_value_bytes >> 20) +
                 " MiB (variables that double on each line?); Frenzy reads launch scripts, not programs");
    }
    /// Checks an array's element count against bounds::shell_array_elements (`A+=("${A[@]}")` doubles it).
    void check_elements(std::size_t count) const {
        if (count > bounds::shell_array_elements)
            fail("an array grows past " + std::to_string(bounds::shell_array_elements) +
                 " elements (arrays that double on each line?); Frenzy reads launch scripts, not programs");
    }
};

inline bool shell_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Integer arithmetic of $((...)): + - * / with parentheses over integers and variable names.
struct shell_arith {
    std::string_view s;
    std::size_t i = 0;
    const shell_state& st;
    bool ok = true;
    std::size_t depth = 0;
    void ws() { while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i; }
    long long atom() {
        ws();
        if (i < s.size() && s[i] == '(') {
            if (++depth > bounds::shell_depth)
                st.fail("$(( )) nests parentheses deeper than " + std::to_string(bounds::shell_depth));
            ++i;
            auto v = sum();
            --depth;
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
                if (op == '*') ok = ok && !__builtin_mul_overflow(v, r, &v);
                else if (r == 0 || (r == -1 && v == std::numeric_limits<long long>::min())) ok = false;  // bash: error
                else v /= r;
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
                ok = ok && !(op == '+' ? __builtin_add_overflow(v, r, &v) : __builtin_sub_overflow(v, r, &v));
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

/// Word splitting of one line as bash does it for the constructs launch scripts use: quotes, backslashes,
/// comments, `;`, and $-expansions ($VAR, ${VAR}, ${VAR:-default}, ${VAR:+alt}, "${A[@]}", $((...)); $(command) is
/// kept as text, not run).
struct shell_word_splitter {
    std::string_view line;
    const shell_state& st;
    std::vector<std::string> out;
    std::string cur;
    bool have = false;  ///< a word is in progress (possibly empty, e.g. "")

    void flush() {
        if (have) out.push_back(cur);
        cur.clear();
        have = false;
    }
    /// Appends unquoted expansion text: word-split on whitespace.
    void add_split(const std::string& v) {
        st.check_size(cur.size() + v.size());
        for (char c : v) {
            if (std::isspace(static_cast<unsigned char>(c))) flush();
            else { cur += c; have = true; }
        }
    }
    void emit(const std::string& v, bool quoted) {
        if (!quoted) return add_split(v);
        st.check_size(cur.size() + v.size());
        cur += v;
        have = true;
    }
    /// $((...)) at line[i] ('$'); false when line[i] does not start one.
    bool arithmetic(std::size_t& i, bool quoted) {
        const std::size_t start = i;
        if (!(i + 2 < line.size() && line[i + 1] == '(' && line[i + 2] == '(')) return false;
        const auto end = line.find("))", i + 1);
        if (end == std::string_view::npos) { i = line.size(); return true; }
        shell_arith a{line.substr(i + 3, end - i - 3), 0, st};
        const auto v = a.sum();
        i = end + 2;
        if (a.ok) emit(std::to_string(v), quoted);
        else {
            if (st.notes) st.notes->push_back("arithmetic " + std::string(line.substr(start, i - start)));
            emit(std::string(line.substr(start, i - start)), quoted);
        }
        return true;
    }
    /// $(command) at line[i] ('$'): kept as its text, not run; false when line[i] does not start one.
    bool command(std::size_t& i, bool quoted) {
        const std::size_t start = i;
        if (!(i + 1 < line.size() && line[i + 1] == '(')) return false;
        int depth = 0;
        std::size_t j = i + 1;
        for (; j < line.size(); ++j) {
            if (line[j] == '(') ++depth;
            if (line[j] == ')' && --depth == 0) break;
        }
        i = std::min(j + 1, line.size());
        emit(std::string(line.substr(start, i - start)), quoted);
        return true;
    }
    /// "${A[@]}" (one word per element), ${A[*]} and unquoted ${A[@]} (the elements joined).
    void array(const std::string& name, const std::string& op, bool quoted) {
        auto it = st.arrays.find(name);
        if (it == st.arrays.end()) return;
        if (quoted && op == "[@]") {
            for (std::size_t e = 0; e < it->second.size(); ++e) {
                if (e > 0) { out.push_back(cur); cur.clear(); }
                st.check_elements(out.size());
                cur += it->second[e];
                have = true;
            }
            return;
        }
        std::string joined;
        for (const auto& e : it->second) joined += (joined.empty() ? "" : " ") + e;
        emit(joined, quoted);
    }
    /// A variable's value with the operator after its name (:-, -, :+, +); other operators are noted.
    std::string value(const std::string& name, const std::string& op) const {
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
        return v;
    }
    /// Expands the $-construct at line[i] ('$'): into cur when quoted, word-split otherwise.
    void expand(std::size_t& i, bool quoted) {
        if (arithmetic(i, quoted) || command(i, quoted)) return;
        ++i;
        std::string name, op;
        bool braced = false;
        if (i < line.size() && line[i] == '{') {
            braced = true;
            const auto end = line.find('}', i);
            if (end == std::string_view::npos) { emit("$", quoted); return; }
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
        if (braced && (op == "[@]" || op == "[*]")) return array(name, op, quoted);
        emit(value(name, op), quoted);
    }
    /// A double-quoted string starting at line[i] ('"').
    void double_quoted(std::size_t& i) {
        have = true;
        ++i;
        while (i < line.size() && line[i] != '"') {
            if (line[i] == '\\' && i + 1 < line.size()) { cur += line[i + 1]; i += 2; continue; }
            if (line[i] == '$') { expand(i, true); continue; }
            cur += line[i++];
        }
        if (i >= line.size()) st.fail("unterminated \" quote (Frenzy reads a quoted word on one line)");
        ++i;
    }
    std::vector<std::string> split() {
        for (std::size_t i = 0; i < line.size();) {
            const char c = line[i];
            if (std::isspace(static_cast<unsigned char>(c))) { flush(); ++i; continue; }
            if (c == '#' && !have) break;  // comment
            if (c == '\'') {
                const auto end = line.find('\'', i + 1);
                if (end == std::string_view::npos) st.fail("unterminated ' quote (Frenzy reads a quoted word on one line)");
                const auto e = end;
                cur += std::string(line.substr(i + 1, e - i - 1));
                have = true;
                i = e + 1;
                continue;
            }
            if (c == '"') { double_quoted(i); continue; }
            if (c == '\\' && i + 1 < line.size()) { cur += line[i + 1]; have = true; i += 2; continue; }
            if (c == '$') { expand(i, false); continue; }
            if (c == ';') { flush(); out.push_back(";"); ++i; continue; }
            cur += c;
            have = true;
            ++i;
        }
        flush();
        return std::move(out);
    }
};

/// Splits `line` into words (quotes, comments), expanding variables and arrays. Returns the words.
inline std::vector<std::string> shell_words(std::string_view line, const shell_state& st) {
    return shell_word_splitter{line, st, {}, {}, false}.split();
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
    return base == "torchrun" || base == "python" || base == "python3" || framework_launch_program(base);
}

/// The script's lines with backslash-newline continuations joined; `first_line` gets each one's first line number
/// in the file (1-based), for messages.
inline std::vector<std::string> shell_lines(std::string_view text, std::vector<std::size_t>* first_line = nullptr) {
    std::vector<std::string> lines;
    std::string cur;
    std::size_t physical = 1, start = 1;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') { ++i; ++physical; continue; }
        if (text[i] != '\n') { cur += text[i]; continue; }
        lines.push_back(std::move(cur));
        cur.clear();
        if (first_line) first_line->push_back(start);
        start = ++physical;
    }
    lines.push_back(cur);
    if (first_line) first_line->push_back(start);
    return lines;
}

/// The if/elif/else/fi nesting of a script: whether the statements read now run.
struct shell_branches {
    struct branch { bool active; bool taken; };
    std::vector<branch> ifs;
    bool active() const {
        for (auto& b : ifs) if (!b.active) return false;
        return true;
    }
    /// Takes a statement that opens, switches or closes a branch; returns false for any other. An `else` followed
    /// by more words on the same line drops the `else` and reads what follows as the statement.
    bool take(std::vector<std::string>& s, std::vector<std::string>* notes) {
        const auto& w0 = s[0];  // after an erase, the next word
        if (w0 == "if") {
            const bool v = active() && shell_condition({s.begin() + 1, s.end()}, notes);
            ifs.push_back({v, v});
            return true;
        }
        if (w0 == "elif" && !ifs.empty()) {
            auto b = ifs.back();
            ifs.pop_back();
            const bool v = active() && !b.taken && shell_condition({s.begin() + 1, s.end()}, notes);
            ifs.push_back({v, b.taken || v});
            return true;
        }
        if (w0 == "else" && !ifs.empty()) {
            auto b = ifs.back();
            ifs.pop_back();
            ifs.push_back({active() && !b.taken, true});
            if (s.size() == 1) return true;
            s.erase(s.begin());
        }
        if (w0 == "fi") {
            if (!ifs.empty()) ifs.pop_back();
            return true;
        }
        return w0 == "then" || w0 == "do" || w0 == "done";
    }
};

/// An array assignment NAME=( ... ) / NAME+=( ... ) starting at lines[li], possibly over several lines (li is
/// left on its last line). Returns false when the line is not one.
inline bool shell_array_assignment(const std::vector<std::string>& lines, std::size_t& li, shell_state& st, bool active) {
    const std::string& line = lines[li];
    std::size_t k = 0;
    while (k < line.size() && std::isspace(static_cast<unsigned char>(line[k]))) ++k;
    std::size_t n = k;
    while (n < line.size() && shell_name_char(line[n])) ++n;
    const bool append = line.compare(n, 3, "+=(") == 0;
    if (n == k || !(line.compare(n, 2, "=(") == 0 || append)) return false;
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
        auto words = shell_words(p == std::string::npos ? body : body.substr(0, p), st);
        elems.insert(elems.end(), words.begin(), words.end());
        if (p != std::string::npos || li + 1 >= lines.size()) break;
        body = lines[++li];
    }
    if (active) {
        auto& a = st.arrays[name];
        if (!append) a.clear();
        st.check_elements(a.size() + elems.size());
        std::size_t bytes = 0;
        for (const auto& e : a) bytes += e.size();
        for (const auto& e : elems) bytes += e.size();
        st.check_size(bytes);
        a.insert(a.end(), elems.begin(), elems.end());
    }
    return true;
}

/// Takes the leading NAME=value words of a command (after export/local/readonly) into the variables; what is left
/// is the command itself.
inline void shell_assignments(std::vector<std::string>& cmd, shell_state& st) {
    if (!cmd.empty() && (cmd[0] == "export" || cmd[0] == "local" || cmd[0] == "readonly")) cmd.erase(cmd.begin());
    while (!cmd.empty()) {
        const auto eq = cmd[0].find('=');
        if (eq == std::string::npos || eq == 0) break;
        bool name = true;
        for (std::size_t c = 0; c < eq; ++c) name = name && shell_name_char(cmd[0][c]);
        if (!name || std::isdigit(static_cast<unsigned char>(cmd[0][0]))) break;
        st.check_size(cmd[0].size());
        st.vars[cmd[0].substr(0, eq)] = cmd[0].substr(eq + 1);
        cmd.erase(cmd.begin());
    }
}

/// The launch command's parts: the launcher words, the script (`*.py` or `-m MODULE`), and its arguments.
inline void split_launch_command(const std::vector<std::string>& cmd, shell_command& out) {
    out.found = true;
    std::size_t i = 0;
    for (; i < cmd.size(); ++i) {
        const auto& w = cmd[i];
        if (w.size() > 3 && w.ends_with(".py")) { out.script = w; ++i; break; }
        if (w == "-m" && i + 1 < cmd.size()) { out.script = "-m " + cmd[i + 1]; i += 2; break; }
        out.launcher.push_back(w);
    }
    out.args.assign(cmd.begin() + static_cast<std::ptrdiff_t>(std::min(i, cmd.size())), cmd.end());
}

}  // namespace detail

/// Reads a launch script; `positional` gives $1, $2, ... (unset by default, so `${1:-x}` is x). The last command
/// that starts torchrun/python/deepspeed or a *.py script is the launch; without one, every word is an argument.
inline shell_command read_shell_script(std::string_view text, const std::vector<std::string>& positional = {}) {
    shell_command out;
    detail::shell_state st;
    st.notes = &out.notes;
    for (std::size_t i = 0; i < positional.size(); ++i) st.vars[std::to_string(i + 1)] = positional[i];
    std::vector<std::size_t> line_no;
    const auto lines = detail::shell_lines(text, &line_no);
    detail::shell_branches branches;
    std::vector<std::string> all_words;
    std::vector<std::string> last_cmd;
    for (std::size_t li = 0; li < lines.size(); ++li) {
        st.line = line_no[li];
        if (detail::shell_array_assignment(lines, li, st, branches.active())) continue;
        // split at ';' into simple statements
        std::vector<std::vector<std::string>> stmts(1);
        for (auto& w : detail::shell_words(lines[li], st)) {
            if (w == ";" || w == "&") stmts.emplace_back();  // `cmd &` (a run waited for later) is still the command
            else stmts.back().push_back(w);
        }
        for (auto& s : stmts) {
            if (s.empty() || branches.take(s, &out.notes) || !branches.active()) continue;
            std::vector<std::string> cmd = s;
            detail::shell_assignments(cmd, st);
            if (cmd.empty()) continue;
            bool launch = false;
            for (auto& w : cmd) launch = launch || detail::is_launch_word(w) || (w.size() > 3 && w.ends_with(".py"));
            if (launch) last_cmd = cmd;
            all_words.insert(all_words.end(), s.begin(), s.end());
        }
    }
    if (last_cmd.empty()) {
        out.args = all_words;  // a plain argument list (no launch command): every word
        return out;
    }
    detail::split_launch_command(last_cmd, out);
    return out;
}

}  // namespace frenzy
