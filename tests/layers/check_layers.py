#!/usr/bin/env python3
"""The include graph points down only (docs/api.md, "Layers"): a header of a layer includes headers of its own layer
or of lower layers, never of a higher one. io (parsing and serialisation) sits above the value layers whose types
it reads and writes, and below everything that parses (launch, sched, sim, backend, service).

families/<family>/ holds a model family's Hugging Face reader (io's floor). frameworks/<name>/ is one framework's
vertical slice: its traits.hpp (memory, step-time and validation facts as data) stands on the train floor, with its
options.hpp (its flag language, which the traits point to for measurement tables: it reads into train/job_spec.hpp)
and the catalog of traits, frameworks/registry.hpp (train/job.hpp reads it); its import.hpp (the reader of its
configurations) and launcher.hpp (launch files written and read back), and the catalog of launchers
frameworks/launchers.hpp, stand on the launch floor, above io, so no io reader includes a framework's.

backend/ holds what Frenzy knows of Slurm: its batch-script format, backend/slurm_script.hpp, stands on the launch
floor (launch files are written in it); the backends that submit and read Slurm's answers stand above launch."""
import os
import re
import sys

RANK = {"core": 0, "model": 1, "hw": 1, "train": 2, "memory": 3, "perf": 3, "plan": 4, "io": 5,
        "launch": 6, "sched": 6, "report": 6, "sim": 7, "backend": 7, "service": 8}


def rank_of(rel: str) -> int | None:
    """The floor of a header given as its path under include/frenzy/."""
    parts = rel.split("/")
    if parts[0] == "frameworks":
        return RANK["train"] if parts[-1] in ("traits.hpp", "options.hpp", "registry.hpp") else RANK["launch"]
    if parts == ["backend", "slurm_script.hpp"]:  # Slurm's script format: the launch files are written in it
        return RANK["launch"]
    if parts[0] == "families":  # a model family's Hugging Face reader: io's floor
        return RANK["io"]
    return RANK.get(parts[0])


def main() -> int:
    root = os.path.join(sys.argv[1], "include", "frenzy")
    bad, checked = [], 0
    for layer in sorted(os.listdir(root)):
        d = os.path.join(root, layer)
        if not os.path.isdir(d):
            continue
        if layer not in RANK and layer not in ("frameworks", "families"):
            bad.append(f"include/frenzy/{layer}/ is not a known layer (add it to tests/layers/check_layers.py)")
            continue
        for dirpath, _, files in os.walk(d):
            for f in files:
                path = os.path.join(dirpath, f)
                for n, line in enumerate(open(path, encoding="utf-8"), 1):
                    m = re.match(r'\s*#\s*include\s+[<"]frenzy/([a-z_/0-9]+\.hpp)', line)
                    if not m or "/" not in m.group(1):
                        continue
                    checked += 1
                    dep = m.group(1)
                    mine = rank_of(os.path.relpath(path, root))
                    theirs = rank_of(dep)
                    if theirs is None or theirs > mine:
                        bad.append(f"{os.path.relpath(path, sys.argv[1])}:{n}: {layer}/ includes {dep} (a higher layer)")
    for b in bad:
        print(b)
    print(f"{checked} includes checked")
    print(f"{0 if bad else 1} passed, {1 if bad else 0} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
