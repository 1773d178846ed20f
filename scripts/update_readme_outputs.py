#!/usr/bin/env python3
"""Rewrites every `<!-- output of: frenzy ... -->` block of README.md with what the command prints now (the blocks
tests/readme/check_readme.py compares). Usage: scripts/update_readme_outputs.py BUILD/examples/frenzy [README.md]"""
import re
import shlex
import subprocess
import sys
import pathlib


def main() -> int:
    frenzy = sys.argv[1]
    readme = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else "README.md")
    root = readme.resolve().parent
    text = readme.read_text(encoding="utf-8")

    def rerun(m: re.Match) -> str:
        command, body = m.group(1), m.group(2)
        argv = shlex.split(command)
        out = subprocess.run([frenzy] + argv[1:], cwd=root, capture_output=True, text=True, timeout=300).stdout.strip()
        fenced = body.lstrip().startswith("```")
        return f"<!-- output of: {command} -->\n" + (f"```\n{out}\n```\n" if fenced else f"{out}\n") + "<!-- end of output -->"

    new = re.sub(r"<!-- output of: (.+?) -->\n(.*?)<!-- end of output -->", rerun, text, flags=re.S)
    readme.write_text(new, encoding="utf-8")
    print("unchanged" if new == text else f"rewrote the output blocks of {readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
