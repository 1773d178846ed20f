"""The README's Python examples run as written: every ```python block (from the repository root, as a reader would
run it after `cmake --install`), and every `python3 examples/...` line of its sh blocks (in a scratch folder that
sees the repository's examples/, data/ and tests/, as tests/readme/check_readme.py runs the `$F` lines)."""
import os
import re
import shlex
import subprocess
import sys


import frenzy


def readme(root):
    return (root / "README.md").read_text(encoding="utf-8")


def test_python_blocks_run(root, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", readme(root), flags=re.S)
    assert blocks, "README.md has no ```python block"
    monkeypatch.chdir(root)
    for code in blocks:
        scope = {"__name__": "__readme__"}
        exec(compile(code, "README.md", "exec"), scope)
        # the block's own promise: to_dict() has the keys of `frenzy estimate --json`, and plans come back
        if "e" in scope:
            assert isinstance(scope["e"], frenzy.Estimate) and "fits" in scope["e"].to_dict()
        if "plans" in scope:
            assert len(scope["plans"]) > 0
    assert capsys.readouterr().out.strip() == "True"  # print(e.to_dict()["fits"]): the README says it fits


def test_python_command_lines_run(root, tmp_path):
    lines = [ln.strip() for block in re.findall(r"```sh\n(.*?)```", readme(root), flags=re.S)
             for ln in block.splitlines() if ln.strip().startswith("python3 examples/")]
    assert lines, "README.md has no `python3 examples/...` line"
    for d in ("examples", "data", "tests"):
        os.symlink(root / d, tmp_path / d)
    for line in lines:
        args = shlex.split(line.split("#")[0])
        r = subprocess.run([sys.executable, *args[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"README line exits {r.returncode}: {line}\n{r.stderr[-1500:]}"
        out = args[args.index("-o") + 1] if "-o" in args else None
        if out:
            assert (tmp_path / out / "launch.sbatch").is_file(), f"{line}: wrote no launch.sbatch"
