#!/usr/bin/env python3
"""One place per concern (issue 22), checked on the source tree:

  1. no framework named outside include/frenzy/frameworks/ (the layers read a framework's traits; the catalogs
     frameworks/registry.hpp and frameworks/launchers.hpp list them, and state the default, framework::by_default):
     no handle `framework::NAME` or `launcher::NAME`, no `const framework NAME` declared and no `frameworks::NAME::` anywhere (a comparison, a case, an
     assignment, an initialisation or an argument), and no string literal that is a framework's name (a value such
     as a default argument; messages that mention one in prose are free). NAME is every folder under
     include/frenzy/frameworks/ (as the C++ name and as written with a hyphen). Checked in the library and the front
     ends (the CLI in examples/frenzy/, the Python module in python/src/); the embedding examples in examples/ are
     hosts, which choose a framework as any host does;
  2. no header under include/frenzy/ over 600 lines;
  3. no `detail::` name used across a layer boundary: a `detail::NAME` in include/frenzy/<layer>/ must be declared
     in a `namespace detail` of the same layer (families/<f>/ and frameworks/<f>/ count as the layers families and
     frameworks), and the front ends (the CLI in examples/, the Python module in python/src/) use none;
  4. no bound written as a literal outside include/frenzy/core/: every range a value is checked against is one of
     core/checked.hpp's `bounds`, so CLI flags use frenzy_cli::whole_number/finite_number over a bound (no
     `CLI::Range`, no literal range), and no message states a literal range ("in [0, 1e6]").

A line listed in ALLOWED is reported with its reason and does not fail the check: each is a known exception that
an open issue names, not a pass.
"""
import os
import re
import sys

CATALOGS = ("include/frenzy/frameworks/",)  # the folders and the two catalogs frameworks/registry.hpp, launchers.hpp
HOSTS = re.compile(r"^examples/[^/]+\.(?:cpp|hpp)$")  # the embedding examples: hosts, not front ends
MAX_HEADER_LINES = 600

# path -> reason, for lines that name a framework on purpose
ALLOWED: dict[str, str] = {}


def framework_names(root):
    """The frameworks and launchers that have a folder under include/frenzy/frameworks/."""
    d = os.path.join(root, "include", "frenzy", "frameworks")
    return sorted(n for n in os.listdir(d) if os.path.isdir(os.path.join(d, n)))


def naming_pattern(names):
    """A framework or launcher named in code: its handle, its folder's namespace, or a string literal of its name."""
    alt = "|".join(re.escape(n) for n in names)
    spelled = "|".join(sorted({re.escape(n) for n in names} | {re.escape(n.replace("_", "-")) for n in names}))
    return re.compile(r"\b(?:framework|launcher)::(?:" + alt + r")\b|\bframeworks::(?:" + alt + r")::|"
                      r"\b(?:const|constexpr)\s+(?:framework|launcher)\s+(?:" + alt + r")\b|"
                      r"\"(?:" + spelled + r")\"")


DETAIL_USE = re.compile(r"(?:(?<=\bfrenzy::)|(?<![\w:]))detail::(\w+)")
DETAIL_BLOCK = re.compile(r"namespace (?:frenzy::)?detail\s*\{")
LITERAL_RANGE = re.compile(r"CLI::Range\(|(?:whole_number|finite_number)\(\s*-?[0-9]|"
                           r"\bin \[-?[0-9][0-9.e+]*, -?[0-9][0-9.e+]*\]")


def layer_of(rel):
    """include/frenzy/<layer>/...: the layer; the CLI and the Python module: None (a front end)."""
    parts = rel.split("/")
    return parts[2] if rel.startswith("include/frenzy/") and len(parts) > 3 else None


def blank_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def detail_names(text):
    """Names declared at the top level of the file's `namespace detail` blocks."""
    names = set()
    for m in DETAIL_BLOCK.finditer(text):
        depth, i, top = 1, m.end(), []
        while depth and i < len(text):
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            elif depth == 1:
                top.append(c)
            i += 1
        top = "".join(top)
        names |= set(re.findall(r"\b(?:struct|class|enum class|enum|concept|using)\s+(\w+)", top))
        names |= set(re.findall(r"(\w+)\s*\(", top))
        names |= set(re.findall(r"(\w+)\s*(?:=|\{)", top))
        names |= set(re.findall(r"(\w+)\s*;", top))
    return names


def detail_across_layers(files):
    declared = {}
    for rel, text in files:
        for name in detail_names(text):
            declared.setdefault(name, set()).add(layer_of(rel))
    bad = []
    for rel, text in files:
        own = layer_of(rel)
        for n, line in enumerate(text.split("\n"), 1):
            for name in DETAIL_USE.findall(line):
                if own is None or own not in declared.get(name, set()):
                    where = ", ".join(sorted(l or "?" for l in declared.get(name, {"?"})))
                    bad.append(f"{rel}:{n}: detail::{name} (declared in {where}) used from {own or 'a front end'}")
    return bad


def sources(root):
    for top in ("include", "examples", "python/src"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith((".hpp", ".cpp")):
                    path = os.path.join(dirpath, f)
                    yield os.path.relpath(path, root), path


def main() -> int:
    root = sys.argv[1]
    naming = naming_pattern(framework_names(root))
    bad, allowed, checked, files = [], [], 0, []
    for rel, path in sources(root):
        checked += 1
        text = open(path, encoding="utf-8").read()
        files.append((rel, blank_comments(text)))
        lines = text.split("\n")
        if not rel.startswith("include/frenzy/core/"):
            for n, line in enumerate(lines, 1):
                if LITERAL_RANGE.search(line.split("//")[0]):
                    bad.append(f"{rel}:{n}: a range written as a literal (use a bound of core/checked.hpp): {line.strip()}")
        if rel.startswith("include/frenzy/") and rel.endswith(".hpp") and len(lines) - 1 > MAX_HEADER_LINES:
            bad.append(f"{rel}: {len(lines) - 1} lines (at most {MAX_HEADER_LINES})")
        if rel.startswith(CATALOGS) or HOSTS.match(rel):
            continue
        for n, line in enumerate(lines, 1):
            code = line.split("//")[0]
            if naming.search(code):
                (allowed if rel in ALLOWED else bad).append(f"{rel}:{n}: {line.strip()}")
    bad += detail_across_layers(files)
    for a in allowed:
        print(f"allowed ({ALLOWED[a.split(':')[0]]}): {a}")
    for b in bad:
        print(b)
    print(f"{checked} files checked")
    print(f"{0 if bad else 1} passed, {1 if bad else 0} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
