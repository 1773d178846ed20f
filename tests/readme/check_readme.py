#!/usr/bin/env python3
"""Keeps the README's figures in step with the commands that produce them.

Every block of README.md written as

    <!-- output of: frenzy validate --data data/memory/measured_calibration.csv --markdown -->
    ...the command's output, verbatim...
    <!-- end of output -->

is checked: the command is run from the repository root (the leading `frenzy` replaced by the built binary) and
its standard output must equal the block's text exactly (inside a ``` code block when the block is one). A README whose figures drifted from what the product
prints fails this test; regenerate the block by running the command.

The suite's own figures are checked the same way against what they describe:
- the stage table between `<!-- suite stages: scripts/test.sh -->` and `<!-- end of suite stages -->` names exactly
  the stages scripts/test.sh runs (its `stage "NAME"` and `skip "NAME"` calls), in its order;
- "N ctests in the Release build (K without the per-layer unit tests ...) and M under the sanitizers": the ctest count
  of the build the checked binary comes from (`ctest -N` in BUILD_DIR, the fourth argument) equals N, or K when that
  build has FRENZY_BUILD_UNIT_TESTS off (the full suite's Release build), or M when it is the sanitizer one;
- "N libFuzzer targets" equals the number of fuzz/fuzz_*.cpp.
"""
import os
import pathlib
import re
import shlex
import subprocess
import sys


WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}


def number(s: str) -> int:
    return WORDS[s.lower()] if s.lower() in WORDS else int(s.replace(",", ""))


def check_suite_figures(text: str, root: str, build: str) -> int:
    """The README's description of scripts/test.sh against the script, the build and fuzz/: failures counted."""
    failed = 0
    script = open(pathlib.Path(root) / "scripts" / "test.sh", encoding="utf-8").read()
    want = list(dict.fromkeys(re.findall(r'^\s*(?:if .*then )?(?:stage|skip) "([^"]+)"', script, flags=re.M)))
    block = re.search(r"<!-- suite stages: scripts/test.sh -->\n(.*?)<!-- end of suite stages -->", text, flags=re.S)
    if not block:
        print("README has no '<!-- suite stages: scripts/test.sh -->' table")
        failed += 1
    else:
        rows = [r.split("|")[1].strip().strip("`") for r in block.group(1).splitlines() if r.startswith("|")]
        got = [r for r in rows[2:] if r and not r.startswith("total") and not r.startswith("**")]
        if got != want:
            print(f"README stage table names {got}, scripts/test.sh runs {want}")
            failed += 1
        else:
            print(f"ok: the stage table names the {len(want)} stages of scripts/test.sh")
    m = re.search(r"([\d,]+) ctests in the Release build \(([\d,]+) without the per-layer unit tests[^)]*\) and "
                  r"([\d,]+) under the sanitizers", text)
    if not m:
        print("README does not say 'N ctests in the Release build (K without the per-layer unit tests ...) and M under "
              "the sanitizers'")
        failed += 1
    else:
        cache = open(pathlib.Path(build) / "CMakeCache.txt", encoding="utf-8").read()
        sanitize = re.search(r"^FRENZY_SANITIZE:BOOL=(ON|TRUE|1)$", cache, flags=re.M) is not None
        no_units = re.search(r"^FRENZY_BUILD_UNIT_TESTS:BOOL=(OFF|FALSE|0)$", cache, flags=re.M) is not None
        n = subprocess.run(["ctest", "-N"], cwd=build, capture_output=True, text=True, timeout=120).stdout
        total = int(re.search(r"Total Tests: (\d+)", n).group(1))
        said = number(m.group(3) if sanitize else m.group(2) if no_units else m.group(1))
        kind = "sanitizer" if sanitize else "Release (no unit tests)" if no_units else "Release"
        if total != said:
            print(f"README says {said} ctests for the {kind} build; this build registers {total}")
            failed += 1
        else:
            print(f"ok: {total} ctests in the {kind} build")
    m = re.search(r"(\w+) libFuzzer targets", text)
    targets = len(list((pathlib.Path(root) / "fuzz").glob("fuzz_*.cpp")))
    if not m or number(m.group(1)) != targets:
        print(f"README says {m.group(1) if m else 'nothing about'} libFuzzer targets; fuzz/ has {targets}")
        failed += 1
    else:
        print(f"ok: {targets} libFuzzer targets")
    return failed


# README command lines that need a running service (docs/serve.md; tests/slurm/test_serve.py runs them for real)
NEEDS_SERVICE = ("serve", "submit", "status", "cancel")


def check_cli_examples(text: str, frenzy: str, root: str) -> int:
    """Every `$F ...` line of the README's sh blocks runs (bash, F = the built CLI) in a scratch directory that
    sees the repository's examples/, data/ and tests/, and exits 0 (or 4: an estimate that does not fit, as the
    README says); lines that talk to `frenzy serve` are the Slurm test's. Failures counted."""
    import tempfile
    failed = 0
    lines = [ln.strip() for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S) for ln in block.splitlines()
             if ln.strip().startswith("$F ")]
    with tempfile.TemporaryDirectory() as tmp:
        for d in ("examples", "data", "tests"):
            os.symlink(os.path.join(os.path.abspath(root), d), os.path.join(tmp, d))
        for line in lines:
            if shlex.split(line.split("#")[0])[1] in NEEDS_SERVICE:
                continue
            run = subprocess.run(["bash", "-c", f"F={shlex.quote(os.path.abspath(frenzy))}\n{line}"], cwd=tmp,
                                 capture_output=True, text=True, timeout=300)
            if run.returncode not in (0, 4):
                failed += 1
                print(f"README command exits {run.returncode}: {line}\n{run.stderr[-1500:]}")
            else:
                print(f"ok: runs: {line[:100]}")
    return failed


def main() -> int:
    frenzy, readme, root = sys.argv[1], sys.argv[2], sys.argv[3]
    build = sys.argv[4] if len(sys.argv) > 4 else str(pathlib.Path(frenzy).resolve().parents[1])
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
        fenced = re.fullmatch(r"\s*```\n(.*)\n```\s*", expected, flags=re.S)  # an output shown as a code block
        if fenced:
            expected = fenced.group(1)
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
    suite_failed = check_suite_figures(text, root, build) + check_cli_examples(text, frenzy, root)
    print(f"{len(blocks) + 3 - failed - suite_failed} passed, {failed + suite_failed} failed")
    failed += suite_failed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
