#!/usr/bin/env python3
"""The framework-name check of check_concerns.py fails where it should: a small tree with two framework folders and
one header outside them that names a framework in each way the check forbids (an assignment, an initialisation, an
argument, a namespace, a string literal, a hyphenated name), beside lines it must let pass (prose in a message, a
comment, a name from data). Run by ctest (one_place_per_concern_fails)."""
import os
import subprocess
import sys
import tempfile

FORBIDDEN = [
    "framework fw = framework::megatron;",
    "runtime_spec r{framework::toy_one};",
    "use(launcher::megatron);",
    "auto& t = frameworks::megatron::traits;",
    "launch(job, \"toy-one\");",
    "if (fw == framework::toy_one) return;",
    "framework fw = frameworks::megatron::handle;",
    "static const framework toy_one;",
    "static const launcher megatron;",
]
ALLOWED = [
    "throw config_error(\"needs Megatron-LM's --pipeline-model-parallel-layout\");",
    "// framework::megatron in a comment",
    "const auto n = std::string(f.name());",
    "framework fw = framework::by_default;",
]


def main() -> int:
    checker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_concerns.py")
    with tempfile.TemporaryDirectory() as root:
        for name in ("megatron", "toy_one"):
            os.makedirs(os.path.join(root, "include", "frenzy", "frameworks", name))
        os.makedirs(os.path.join(root, "include", "frenzy", "plan"))
        with open(os.path.join(root, "include", "frenzy", "plan", "x.hpp"), "w") as f:
            f.write("#pragma once\n" + "\n".join(FORBIDDEN + ALLOWED) + "\n")
        with open(os.path.join(root, "include", "frenzy", "frameworks", "megatron", "traits.hpp"), "w") as f:
            f.write("#pragma once\n" + "\n".join(FORBIDDEN) + "\n")  # inside frameworks/: free
        out = subprocess.run([sys.executable, checker, root], capture_output=True, text=True)
    flagged = [l for l in out.stdout.splitlines() if l.startswith("include/frenzy/plan/x.hpp:")]
    errors = []
    if out.returncode != 1:
        errors.append(f"check_concerns.py exited {out.returncode}, expected 1")
    if len(flagged) != len(FORBIDDEN):
        errors.append(f"{len(flagged)} lines flagged, expected {len(FORBIDDEN)}:\n" + out.stdout)
    if any("frameworks/" in l for l in out.stdout.splitlines() if l.startswith("include/frenzy/frameworks/")):
        errors.append("a line inside frameworks/ was flagged:\n" + out.stdout)
    for e in errors:
        print(e)
    print(f"{0 if errors else 1} passed, {1 if errors else 0} failed")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
