#!/usr/bin/env python3
"""One place per concern (issue 22), checked on the source tree:

  1. no switch or comparison on a built-in framework's or launcher's name outside include/frenzy/frameworks/ (the
     layers read a framework's traits; the catalogs in train/frameworks.hpp and launch/launchers.hpp list them);
  2. no header under include/frenzy/ over 600 lines.

A line listed in ALLOWED is reported with its reason and does not fail the check: each is a known exception that
an open issue names, not a pass.
"""
import os
import re
import sys

BUILTIN = r"(?:framework::(?:megatron|deepspeed|fsdp|ddp)|launcher::(?:megatron|torchtitan|deepspeed|fsdp))"
SWITCH = re.compile(r"case\s+" + BUILTIN + r"|[=!]=\s*" + BUILTIN + r"|" + BUILTIN + r"\s*[=!]=")
CATALOGS = ("include/frenzy/frameworks/", "include/frenzy/train/frameworks.hpp", "include/frenzy/launch/launchers.hpp")
MAX_HEADER_LINES = 600

# path -> reason, for lines that compare with a built-in framework on purpose
ALLOWED = {}


def sources(root):
    for top in ("include", "examples", "python/src"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith((".hpp", ".cpp")):
                    path = os.path.join(dirpath, f)
                    yield os.path.relpath(path, root), path


def main() -> int:
    root = sys.argv[1]
    bad, allowed, checked = [], [], 0
    for rel, path in sources(root):
        checked += 1
        lines = open(path, encoding="utf-8").read().split("\n")
        if rel.startswith("include/frenzy/") and rel.endswith(".hpp") and len(lines) - 1 > MAX_HEADER_LINES:
            bad.append(f"{rel}: {len(lines) - 1} lines (at most {MAX_HEADER_LINES})")
        if rel.startswith(CATALOGS):
            continue
        for n, line in enumerate(lines, 1):
            code = line.split("//")[0]
            if SWITCH.search(code):
                (allowed if rel in ALLOWED else bad).append(f"{rel}:{n}: {line.strip()}")
    for a in allowed:
        print(f"allowed ({ALLOWED[a.split(':')[0]]}): {a}")
    for b in bad:
        print(b)
    print(f"{checked} files checked")
    print(f"{0 if bad else 1} passed, {1 if bad else 0} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
