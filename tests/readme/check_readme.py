#!/usr/bin/env python3
"""Keeps the README's figures in step with the commands that produce them.

Every block of README.md written as

    <!-- output of: frenzy validate --data data/memory/measured_calibration.csv --markdown -->
    ...the command's output, verbatim...
    <!-- end of output -->

is checked: the command is run from the repository root (the leading `frenzy` replaced by the built binary) and
its standard output must equal the block's text exactly. A README whose figures drifted from what the product
prints fails this test; regenerate the block by running the command.
"""
import re
import shlex
import subprocess
import sys


def main() -> int:
    frenzy, readme, root = sys.argv[1], sys.argv[2], sys.argv[3]
    text = open(readme, encoding="utf-8").read()
    blocks = re.findall(r"<!-- output of: (.+?) -->\n(.*?)<!-- end of output -->", text, flags=re.S)
    if not blocks:
        print(f"{readme}: no '<!-- output of: ... -->' blocks found")
        return 1
    failed = 0
    for command, expected in blocks:
        argv = shlex.split(command)
        if argv[0] != "frenzy":
            print(f"README block command must start with 'frenzy': {command}")
            failed += 1
            continue
        run = subprocess.run([frenzy] + argv[1:], cwd=root, capture_output=True, text=True, timeout=300)
        got = run.stdout
        if got.strip() != expected.strip():
            failed += 1
            print(f"README block differs from `{command}` (exit {run.returncode}):")
            exp_lines, got_lines = expected.strip().splitlines(), got.strip().splitlines()
            for i in range(max(len(exp_lines), len(got_lines))):
                e = exp_lines[i] if i < len(exp_lines) else "<missing>"
                g = got_lines[i] if i < len(got_lines) else "<missing>"
                if e != g:
                    print(f"  README : {e}\n  command: {g}")
            print(run.stderr)
        else:
            print(f"ok: `{command}` ({len(expected.strip().splitlines())} lines)")
    print(f"{len(blocks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
