#!/usr/bin/env python3
"""The JSON Schemas of docs/schema/ against real documents: every bundled job and cluster file (inputs), and the
`--json` output of estimate (every example job, with and without a GPU type), plan (every example job on the
bundled clusters, with and without prices, and a job without a token budget), simulate (one policy, all of them,
with --runs), gpus and models. The schemas refuse what the readers refuse: an unknown field of a job or cluster.

usage: check_schemas.py FRENZY_CLI REPO"""
import glob
import json
import os
import subprocess
import sys

import jsonschema


def main():
    cli, repo = sys.argv[1:3]
    schemas = {os.path.basename(p).removesuffix(".schema.json"): json.load(open(p))
               for p in glob.glob(os.path.join(repo, "docs", "schema", "*.schema.json"))}
    passed = failed = 0

    def check(kind, doc, what, valid=True):
        nonlocal passed, failed
        errors = list(jsonschema.Draft202012Validator(schemas[kind]).iter_errors(doc))
        if bool(errors) != (not valid):
            failed += 1
            why = "; ".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in errors[:3]) or "accepted"
            print(f"FAIL {kind}: {what}: {why}")
        else:
            passed += 1

    def run(*args):
        r = subprocess.run([cli, *args], capture_output=True, text=True, timeout=600, cwd=repo)
        if r.returncode not in (0, 1, 4) or not r.stdout.strip():
            raise RuntimeError(f"frenzy {' '.join(args)}: exit {r.returncode}: {r.stderr}")
        return json.loads(r.stdout)

    jobs = sorted(glob.glob(os.path.join(repo, "examples", "jobs", "*.json")))
    clusters = sorted(glob.glob(os.path.join(repo, "examples", "clusters", "*.json")))
    for j in jobs:
        check("job", json.load(open(j)), os.path.basename(j))
        check("estimate", run("estimate", "--job", j, "--json"), f"estimate {os.path.basename(j)}")
        check("estimate", run("estimate", "--job", j, "--gpu", "h100-80g", "--max-micro-batch", "--json"),
              f"estimate {os.path.basename(j)} on h100-80g")
        check("plan", run("plan", "--job", j, "--cluster", clusters[0], "--json"), f"plan {os.path.basename(j)}")
        check("plan", run("plan", "--job", j, "--cluster", os.path.join(repo, "examples", "clusters", "three-type.json"),
                          "--price", "example", "--objective", "cost", "--json"), f"plan {os.path.basename(j)} with prices")
    for c in clusters:
        check("cluster", json.load(open(c)), os.path.basename(c))
    check("estimate", run("estimate", "--model", "mixtral-8x7b", "--gpus", "8xa100-80g", "--json"), "estimate of a MoE")
    check("plan", run("plan", "--model", "gpt2", "--gpus", "8xa100-80g", "--json"), "plan without a token budget")
    check("plan", run("plan", "--model", "llama-3.1-405b", "--gpus", "8xt4", "--json"), "plan where nothing fits")
    trace = os.path.join(repo, "examples", "traces", "small.csv")
    small = os.path.join(repo, "examples", "clusters", "three-type-small.json")
    check("simulate", run("simulate", "--cluster", small, "--trace", trace, "--policy", "fcfs", "--json"), "simulate fcfs")
    check("simulate", run("simulate", "--cluster", small, "--trace", trace, "--policy", "all", "--json", "--runs",
                          "--mtbf", "2h"), "simulate all --runs with failures")
    check("gpus", run("gpus", "--json"), "gpus")
    check("models", run("models", "--json"), "models")
    # what the readers refuse, the schemas refuse
    check("job", {"model": {"preset": "gpt2"}, "trainig": {}}, "a misspelt section", valid=False)
    check("job", {"model": {"preset": "gpt2"}, "training": {"seq_len": "long"}}, "a string seq_len", valid=False)
    check("cluster", {"nodes": [{"gpu": "a100-80g", "gpus": 8}]}, "an unknown node field", valid=False)
    check("cluster", {"nodes": []}, "no nodes", valid=False)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
