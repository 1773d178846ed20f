#!/usr/bin/env python3
"""List the functions of C++ headers whose bodies are longer than a limit (issue 22: no function over 60 lines
outside data tables).

Usage: scripts/long_functions.py [--max N] [PATH ...]   (default: --max 60 include/)

A function is a brace block whose header (the text since the previous `;`, `{`, `}` or preprocessor line) looks
like a definition: it has a parameter list `( ... )`, followed only by qualifiers (const, noexcept, override,
final, mutable, `-> type`, a requires-clause, a constructor's member-initialiser list), and it does not start
with a control keyword (if, for, while, switch, catch, else, do), a lambda, an initialisation (`x = ...`) or
struct/class/union/enum/namespace. Comments, string and character literals (raw strings too) are blanked before
the braces are matched. The length of a function is the number of lines from the line of its opening brace to
the line of its closing brace, both included. Lambdas are part of the function that holds them; the member
functions of a local struct are reported on their own too.

A function that is a data table (a list of presets, a lookup table) is exempt when the comment line right above
its header, or its header line, contains `frenzy: data table`; exempt functions are listed separately.

Prints one line per long function: `path:line: name (N lines)`, longest first per file order, then a summary.
Exit status: 1 when a non-exempt function is over the limit, else 0 (usable as a test).
"""

import argparse
import os
import re
import sys

CONTROL = {"if", "for", "while", "switch", "catch", "else", "do", "return", "case", "default"}
TYPE_KEYS = {"struct", "class", "union", "enum", "namespace"}
MARKER = "frenzy: data table"


def blank(text):
    """Replace comments and string/char literals with spaces, keeping newlines (line numbers stay valid)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            # a digit separator (1'000'000) is not a character literal
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum() and \
                    re.match(r"[0-9a-fA-F]", text[i - 1]):
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + (c if j - i >= 2 else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_balanced(s, open_c, close_c):
    """Remove the balanced (open_c ... close_c) groups of s, innermost first."""
    pat = re.compile(re.escape(open_c) + r"[^" + re.escape(open_c + close_c) + r"]*" + re.escape(close_c))
    prev = None
    while prev != s:
        prev, s = s, pat.sub(" ", s)
    return s


def function_name(header):
    """The name of the function a header defines, or None when the header is not a function definition."""
    h = " ".join(header.split())
    if not h or h.startswith("#"):
        return None
    # template parameter lists and attributes first
    h = re.sub(r"^(template\s*<.*?>\s*)+", "", h) if h.startswith("template") else h
    h = re.sub(r"\[\[.*?\]\]", " ", h).strip()
    first = re.match(r"[A-Za-z_]\w*", h)
    if first and (first.group(0) in CONTROL or first.group(0) in TYPE_KEYS):
        return None
    if h.startswith("[") or h.startswith("("):
        return None
    # a constructor's member-initialiser list: `name(args) : a_(x), b_(y)` -> keep what is before the ` : `
    m = re.match(r"^(.*?\))\s*:(?!:)(.*)$", h)
    if m and "?" not in m.group(1):
        h = m.group(1)
    # the parameter list is the first top-level ( ... ) after the name
    m = re.search(r"([~A-Za-z_][\w:~<>,\s*&]*?|operator\s*\S+?)\s*\(", h)
    if not m:
        return None
    before = h[: m.start()]
    if "=" in strip_balanced(strip_balanced(before, "<", ">"), "(", ")") and "operator" not in h[: m.end()]:
        return None
    rest = h[m.end() - 1:]
    depth, k = 0, 0
    for k, ch in enumerate(rest):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            break
    if depth != 0:
        return None
    tail = rest[k + 1:].strip()
    tail = re.sub(r"\b(const|noexcept|override|final|mutable|volatile|constexpr)\b(\s*\([^)]*\))?", " ", tail)
    tail = re.sub(r"&&?", " ", tail)
    tail = re.sub(r"->\s*[\w:<>,\s*&]+", " ", tail)
    tail = re.sub(r"\brequires\b.*", " ", tail)
    if tail.strip():
        return None
    name = m.group(1).strip().split()[-1] if m.group(1).strip() else ""
    if name in CONTROL or not name:
        return None
    return name


def functions(path):
    """(name, header line, opening line, closing line, exempt) of each function in the file."""
    raw = open(path, encoding="utf-8", errors="replace").read()
    text = blank(raw)
    raw_lines = raw.split("\n")
    line_of = []  # line number of each character
    ln = 1
    for ch in text:
        line_of.append(ln)
        ln += ch == "\n"
    out = []
    stack = []  # (index of '{', header)
    start = 0  # where the current statement's header begins
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "#" and (i == 0 or text[i - 1] == "\n" or text[max(0, text.rfind("\n", 0, i) + 1):i].strip() == ""):
            j = i
            while True:  # preprocessor line, with continuations
                e = text.find("\n", j)
                e = len(text) if e < 0 else e
                if e > 0 and text[e - 1] == "\\":
                    j = e + 1
                    continue
                break
            i = e
            start = i
            continue
        if ch == "{":
            header = text[start:i]
            # a brace inside an unclosed parenthesis (a default argument `= {}`, a braced argument) is part of the
            # statement, not a block: the header goes on
            nested = header.count("(") > header.count(")")
            stack.append((i, header, start, nested))
            if not nested:
                start = i + 1
        elif ch == "}":
            if stack:
                open_i, header, hstart, nested = stack.pop()
                if nested:
                    i += 1
                    continue
                name = function_name(header)
                if name:
                    hline = line_of[hstart + len(header) - len(header.lstrip())] if header.strip() else line_of[open_i]
                    above = raw_lines[hline - 2] if hline >= 2 else ""
                    exempt = MARKER in above or MARKER in raw_lines[hline - 1]
                    out.append((name, hline, line_of[open_i], line_of[i], exempt))
            start = i + 1
        elif ch == ";":
            start = i + 1
        i += 1
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max", type=int, default=60, help="longest allowed function, in lines (default 60)")
    ap.add_argument("paths", nargs="*", default=["include"])
    a = ap.parse_args(argv)
    files = []
    for p in a.paths:
        if os.path.isdir(p):
            for d, _, fs in os.walk(p):
                files += [os.path.join(d, f) for f in fs if f.endswith((".hpp", ".h", ".cpp"))]
        else:
            files.append(p)
    long_ones, exempt = [], []
    for f in sorted(files):
        for name, hline, lo, hi, ex in functions(f):
            n = hi - lo + 1
            if n > a.max:
                (exempt if ex else long_ones).append((f, hline, name, n))
    for f, hline, name, n in long_ones:
        print(f"{f}:{hline}: {name} ({n} lines)")
    for f, hline, name, n in exempt:
        print(f"{f}:{hline}: {name} ({n} lines, data table: exempt)")
    print(f"{len(long_ones)} function(s) over {a.max} lines in {len(files)} file(s)" +
          (f", {len(exempt)} data table(s) exempt" if exempt else ""))
    return 1 if long_ones else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
