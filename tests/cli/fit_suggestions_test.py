#!/usr/bin/env python3
"""Every "to make it fit" suggestion of `frenzy estimate` is a change a user can make (issue 55): re-running the
estimate with the original flags plus the flags the suggestion prints (each replacing the command's own of the same
name) reports the suggestion's figure to the printed precision, its GPU count (the command's own unless the line says
"on N GPUs") and FITS; `--json` carries the same flags and the same bytes. The planner's layouts that estimate
prints with flags are re-run the same way. Cases: every `estimate` command of the README with a GPU (its sh blocks,
its quoted outputs, its prose), and the questions of issue 55 (Llama 70B, Qwen3-30B-A3B on 8 x A100 with FSDP,
LoRA/QLoRA on a 24 GB card, a stated dp, a job file). The LoRA case also checks the planner hint against `frenzy
plan` for the same job: estimate must not say the planner finds no layout when `plan` finds one, and its fewest-GPU
plan is plan's.

usage: fit_suggestions_test.py FRENZY REPO"""
import json
import os
import re
import shlex
import subprocess
import sys

EXTRA = [
    "--model qwen3-30b-a3b --seq-len 4096 --gpus 8xa100-80g --framework fsdp --sharding full",
    "--model llama-3.1-70b --seq-len 4096 --gpus 16xh100-80g --sharding full",
    "--model llama-3.1-70b --seq-len 8192 --global-batch 64 --tp 8 --pp 2 --gpus 64xh100-80g --sharding optimizer",
    "--model llama-3.1-8b --finetune lora --seq-len 4096 --gpus 1xrtx-4090",
    "--model llama-3.1-8b --finetune qlora --seq-len 8192 --micro-batch 4 --gpus 1xrtx-4090",
    "--model llama-3.1-8b --seq-len 8192 --micro-batch 1 --sharding optimizer --recompute selective --gpu h100-80g --dp 8",
    "--model llama-3.1-8b --seq-len 4096 --micro-batch 8 --global-batch 64 --dp 8 --framework fsdp --sharding full "
    "--recompute selective --gpu a100-80g",
    "--job examples/jobs/llama-3.1-8b-fsdp.json --gpu a100-40g",
    "--job examples/jobs/llama-3.1-8b-fsdp.json --gpus 8xa100-40g",
]
LINE = re.compile(r"^  (?:on (\d+) GPUs: )?(.+): needs ([0-9.]+) GiB: (--.*)$")
FITS = re.compile(r"^[^ ]+: [0-9.]+ GiB usable of [0-9.]+ GiB .*: FITS \(needs ([0-9.]+) GiB with the", re.M)
PLANNER = re.compile(r"^  the planner, (same|fewest) GPUs: (\d+) x \S+: .*\(needs ([0-9.]+) GiB\): (--.*)$", re.M)
GPUS = re.compile(r"^parallel: (\d+) GPUs", re.M)
failed = 0


def fail(msg):
    global failed
    failed += 1
    print("FAIL " + msg)


def run(frenzy, root, args):
    r = subprocess.run([frenzy, "estimate"] + args, cwd=root, capture_output=True, text=True, timeout=300)
    if r.returncode not in (0, 4):
        raise RuntimeError(f"frenzy estimate {' '.join(args)} exits {r.returncode}: {r.stderr}")
    return r.stdout


def with_flags(args, flags):
    """The command's arguments with a suggestion's flags: each replaces an option of the same name (CLI11 takes
    one value per option); --offload is repeatable and --sp takes no value."""
    add = shlex.split(flags)
    names = {a for a in add if a.startswith("--") and a not in ("--offload", "--sp")}
    out, i = [], 0
    while i < len(args):
        if args[i] in names:
            i += 2
            continue
        out.append(args[i])
        i += 1
    return out + add


def readme_cases(root):
    text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    cases = [c for c in re.findall(r"<!-- output of: frenzy estimate (.+?) -->", text)]
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for ln in block.splitlines():
            ln = ln.split("#")[0].strip()
            if ln.startswith("$F estimate ") and ("--gpu " in ln or "--gpus " in ln):
                cases.append(ln[len("$F estimate "):])
    for cmd in re.findall(r"`frenzy estimate ([^`]+)`", text):  # quoted in prose (a line break inside is a space)
        cmd = re.sub(r"\s*--html \S+", "", " ".join(cmd.split()))
        if "--gpu " in cmd or "--gpus " in cmd:
            cases.append(cmd)
    return list(dict.fromkeys(cases))


def printed(text, data):
    """(what, GPUs or None for the command's own, GiB as printed, flags, its --json object, a single change?) of every
    piece of advice with flags: the single changes, then the planner's layouts."""
    out = []
    changes = [m for m in map(LINE.match, text.splitlines()) if m]
    fits_json = data.get("nearest_fits", [])
    if len(fits_json) != len(changes):
        fail(f"{len(changes)} printed suggestions, {len(fits_json)} in --json")
    for m, s in zip(changes, fits_json):
        out.append((m.group(2), int(m.group(1)) if m.group(1) else None, m.group(3), m.group(4), s, True))
    for m in PLANNER.finditer(text):
        key = "planner_same_gpus" if m.group(1) == "same" else "planner_fewest_gpus"
        out.append((f"the planner, {m.group(1)} GPUs", int(m.group(2)), m.group(3), m.group(4), data.get(key, {}), False))
    return out


def check_case(frenzy, root, case):
    """The suggestions of one command, each re-run: the number checked."""
    args = shlex.split(case)
    text = run(frenzy, root, args)
    own = int(GPUS.search(text).group(1))
    data = json.loads(run(frenzy, root, args + ["--json"]))
    advice = printed(text, data)
    for what, gpus, need, flags, s, change in advice:
        label = f"{case} + {flags} ({what})"
        if change and gpus == own:
            fail(f"{label}: says 'on {own} GPUs', the command's own count")
        gpus = gpus or own
        again = run(frenzy, root, with_flags(args, flags))
        f = FITS.search(again)
        if not f:
            fail(f"{label}: the re-run does not say FITS")
        elif f.group(1) != need:
            fail(f"{label}: printed needs {need} GiB, the re-run says {f.group(1)} GiB")
        if int(GPUS.search(again).group(1)) != gpus:
            fail(f"{label}: printed {gpus} GPUs, the re-run uses {GPUS.search(again).group(1)}")
        if s.get("flags") != flags:
            fail(f"{label}: --json flags {s.get('flags')!r}, the table prints {flags!r}")
        j = json.loads(run(frenzy, root, with_flags(args, flags) + ["--json"]))
        if (j["required_bytes"], j["gpus"], j["verdict"]) != (s.get("required_bytes"), s.get("gpus"), "fits"):
            fail(f"{label}: --json says {s.get('required_bytes')} B on {s.get('gpus')} GPUs, the re-run "
                 f"{j['required_bytes']} B on {j['gpus']} GPUs ({j['verdict']})")
        print(f"ok: {label}: {need} GiB on {gpus} GPUs")
    return len(advice)


def check_lora_hint(frenzy, root):
    """LoRA on one 24 GB card: estimate's planner hint has plan's freedom (the global batch is not pinned)."""
    job = shlex.split("--model llama-3.1-8b --finetune lora --seq-len 4096")
    text = run(frenzy, root, job + ["--gpus", "1xrtx-4090"])
    r = subprocess.run([frenzy, "plan"] + job + ["--gpus", "8xrtx-4090", "--json"], cwd=root, capture_output=True,
                       text=True, timeout=300)
    plans = json.loads(r.stdout)["plans"] if r.returncode == 0 else []
    if not plans:
        fail("frenzy plan finds no plan for the LoRA job on 8 x rtx-4090")
        return
    if "finds no layout" in text or "does not fit on" in text:
        fail("estimate says the planner finds no layout for the LoRA job on rtx-4090; plan finds " f"{len(plans)}")
    m = re.search(r"the planner, fewest GPUs: (\d+) x rtx-4090", text)
    fewest = min(p["gpus"] for p in plans)
    if not m or int(m.group(1)) != fewest:
        fail(f"estimate's fewest-GPU plan {m.group(1) if m else 'missing'}, plan's smallest plan has {fewest} GPUs")
    else:
        print(f"ok: LoRA on rtx-4090: estimate's planner hint and plan both start at {fewest} GPUs")


def main():
    frenzy, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    cases = readme_cases(root)
    if len(cases) < 2:
        fail(f"README: {len(cases)} estimate commands with a GPU found")
    checked = sum(check_case(frenzy, root, c) for c in cases + EXTRA)
    if checked < 10:
        fail(f"only {checked} suggestions checked")
    check_lora_hint(frenzy, root)
    print(f"{checked} suggestions re-run, {failed} failures")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
