#!/usr/bin/env python3
"""The JSON Schemas of docs/schema/ against real documents. Every schema is itself a valid draft 2020-12 schema
whose $refs to the others resolve (tests/schema/schema_registry.py). Inputs: every bundled job and cluster file,
fsdp_settings.json (the golden files of tests/data/launch and those `launch` writes), calibration files (written by
`frenzy calibrate -o` on each table of data/throughput and on all of them, and read back by `estimate
--calibration`), GPU types files (`--gpu-types`: the catalog as an array, a cluster spec with a new type, both read
back by `frenzy gpus`). Outputs (`--json`): estimate (every example job, with and without a GPU type), plan (every
example job on the bundled clusters, with and without prices, and a job without a token budget), simulate (one
policy, all of them, with --runs), gpus, models, launch (every launcher, a LoRA fine-tune, a MoE, a job file on a
cluster file), import (every importer kind on the inputs of tests/data/launch, arguments it does not understand, and
the files `launch` just wrote, read back) and validate (each table of data/memory and all of them together).
The schemas refuse what the readers refuse: an unknown field of a job, cluster, calibration file, GPU type or
fsdp_settings.json, a value of the wrong type or out of the reader's range (the calibration, GPU types and FSDP
settings cases also go through the CLI, which must refuse them with exit 2). frenzy serve's HTTP documents
(serve-*.schema.json) need a Slurm cluster for real answers (tests/slurm/test_serve.py validates them there); here
documents assembled from a real plan check that those schemas accept their documented shape and refuse a state,
key or value the service never sends.

usage: check_schemas.py FRENZY_CLI REPO"""
import glob
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

from schema_registry import Schemas

LAUNCHERS = ["megatron", "torchtitan", "deepspeed", "fsdp", "llm-foundry", "hf", "litgpt"]


def main():
    cli, repo = sys.argv[1:3]
    schemas = Schemas(os.path.join(repo, "docs", "schema"))
    passed = failed = 0
    tmp = tempfile.TemporaryDirectory(prefix="frenzy-schemas-")

    def record(ok, kind, what, why):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {kind}: {what}: {why}")

    def check(kind, doc, what, valid=True):
        errors = schemas.errors(kind, doc)
        why = "; ".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in errors[:3]) or "accepted"
        record(bool(errors) != valid, kind, what, why)

    def run(*args):
        r = subprocess.run([cli, *args], capture_output=True, text=True, timeout=600, cwd=repo)
        if r.returncode not in (0, 1, 4) or not r.stdout.strip():
            raise RuntimeError(f"frenzy {' '.join(args)}: exit {r.returncode}: {r.stderr}")
        return json.loads(r.stdout)

    def write(name, doc):
        path = os.path.join(tmp.name, name)
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
        return path

    def refused(kind, doc, what, *args):
        """The schema refuses `doc`, and so does the CLI reading it as the file in `args` ("{}": its path)."""
        check(kind, doc, what, valid=False)
        path = write(f"refused-{passed + failed}.json", doc)
        r = subprocess.run([cli, *[a.replace("{}", path) for a in args]], capture_output=True, text=True, timeout=60,
                           cwd=repo)
        record(r.returncode == 2, kind, f"{what} (frenzy {args[0]})", f"exit {r.returncode}, expected 2: {r.stderr[:200]}")

    for name, s in schemas.by_name.items():
        try:
            jsonschema.Draft202012Validator.check_schema(s)
            record(s.get("$id") == f"https://frenzy.invalid/schema/{name}.schema.json", name, "its $id", s.get("$id"))
        except jsonschema.SchemaError as e:
            record(False, name, "a draft 2020-12 schema", e.message)

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
    three = os.path.join(repo, "examples", "clusters", "three-type.json")
    mixed = run("plan", "--model", "llama-2-13b", "--cluster", three, "--total-tokens", "1e10", "--price", "example",
                "--mixed", "--json")
    check("plan", mixed, "plan --mixed")
    record(bool(mixed.get("mixed_plans")), "plan", "plan --mixed has mixed plans", "none to check the schema against")
    check("plan", run("plan", "--model", "gpt2", "--gpus", "8xa100-80g", "--mixed", "--json"), "plan --mixed on one type")
    check("plan", dict(mixed, mixed_plans=[dict(mixed["mixed_plans"][0], groups=mixed["mixed_plans"][0]["groups"][:1])]),
          "a mixed plan of one group", valid=False)
    trace = os.path.join(repo, "examples", "traces", "small.csv")
    small = os.path.join(repo, "examples", "clusters", "three-type-small.json")
    check("simulate", run("simulate", "--cluster", small, "--trace", trace, "--policy", "fcfs", "--json"), "simulate fcfs")
    check("simulate", run("simulate", "--cluster", small, "--trace", trace, "--policy", "all", "--json", "--runs",
                          "--mtbf", "2h"), "simulate all --runs with failures")
    gpus = run("gpus", "--json")
    check("gpus", gpus, "gpus")
    check("models", run("models", "--json"), "models")

    # launch: every launcher, then its files read back by import (round trip)
    launched = {}
    for fw in LAUNCHERS:
        model = ["--model", "llama-3.2-1b"] if fw in ("hf", "litgpt") else ["--model", "llama-3.1-8b", "--global-batch", "256"]
        if fw in ("hf", "torchtune"):  # they fine-tune a pretrained model (docs/launch.md): a full fine-tune
            model += ["--finetune", "full"]
        if fw in ("deepspeed", "fsdp"):  # they configure the user's own script, which --run-command names (issue 53)
            model += ["--run-command", "train.py"]
        out = os.path.join(tmp.name, "launch-" + fw)
        launched[fw] = out
        check("launch", run("launch", *model, "--gpus", "8xh100-80g", "--total-tokens", "1T", "--framework", fw,
                            "--out", out, "--json"), f"launch --framework {fw}")
    check("launch", run("launch", "--model", "llama-3.1-8b", "--gpus", "8xh100-80g", "--total-tokens", "1B",
                        "--global-batch", "64", "--framework", "hf", "--finetune", "lora", "--out",
                        os.path.join(tmp.name, "launch-lora"), "--json"), "launch --framework hf --finetune lora")
    check("launch", run("launch", "--model", "mixtral-8x7b", "--gpus", "32xh100-80g", "--total-tokens", "1T",
                        "--global-batch", "512", "--framework", "megatron", "--out", os.path.join(tmp.name, "launch-moe"),
                        "--json"), "launch of a MoE on megatron")
    check("launch", run("launch", "--job", os.path.join(repo, "examples", "jobs", "plan-llama-3.1-8b.json"), "--cluster",
                        os.path.join(repo, "examples", "clusters", "three-type.json"), "--framework", "deepspeed",
                        "--run-command", "train.py", "--plan", "2", "--out", os.path.join(tmp.name, "launch-job"), "--json"),
          "launch plan-llama-3.1-8b.json on three-type.json, plan 2")
    back = {"megatron": ("launch.sbatch", []), "torchtitan": ("frenzy_torchtitan.py", ["--model", "llama-3.1-8b"]),
            "deepspeed": ("ds_config.json", ["--model", "llama-3.1-8b", "--seq-len", "2048"]),
            "fsdp": ("fsdp_settings.json", ["--model", "llama-3.1-8b"])}
    for kind, (name, extra) in back.items():
        check("import", run("import", "--from", f"{kind}:{os.path.join(launched[kind], name)}", *extra, "--json"),
              f"import of launch --framework {kind}'s {name}")
    check("fsdp-settings", json.load(open(os.path.join(launched["fsdp"], "fsdp_settings.json"))),
          "launch --framework fsdp's fsdp_settings.json")

    # import: the bundled launcher configurations of every importer kind
    data = os.path.join(repo, "tests", "data", "launch")
    check("import", run("import", "--from", "megatron:" + os.path.join(data, "megatron_llama3_8b_h100_fp8.sh"), "--json"),
          "import megatron_llama3_8b_h100_fp8.sh")
    yaml = os.path.join(data, "megatron_llama3_8b_h100_fp8.yaml")
    check("import", run("import", "--from", "megatron:" + yaml, "--json"), "import the YAML without a world size")
    check("import", run("import", "--from", "megatron:" + yaml, "--world-size", "16", "--json"), "import the YAML")
    for d in sorted(glob.glob(os.path.join(data, "golden", "*"))):
        g = os.path.basename(d)
        if g.startswith("megatron"):
            args = ["megatron:" + os.path.join(d, "launch.sbatch")]
        elif os.path.exists(os.path.join(d, "ds_config.json")):
            args = ["deepspeed:" + os.path.join(d, "ds_config.json"), "--model", "llama-3.1-8b", "--seq-len", "4096"]
        elif os.path.exists(os.path.join(d, "frenzy_torchtitan.py")):
            args = ["torchtitan:" + os.path.join(d, "frenzy_torchtitan.py"), "--model", "llama-3.1-8b"]
        elif os.path.exists(os.path.join(d, "fsdp_settings.json")):
            args = ["fsdp:" + os.path.join(d, "fsdp_settings.json"), "--model", "llama-3.1-8b"]
            check("fsdp-settings", json.load(open(os.path.join(d, "fsdp_settings.json"))), f"golden/{g}/fsdp_settings.json")
        else:
            continue  # llm-foundry and hf write files nothing reads back
        check("import", run("import", "--from", *args, "--json"), f"import golden/{g}")
    script = os.path.join(tmp.name, "unknown_args.sh")
    with open(script, "w") as f:
        f.write("torchrun --nproc-per-node=8 pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
                "--seq-length 128 --max-position-embeddings 128 --micro-batch-size 1 --global-batch-size 8 "
                "--vocab-size 1000 --bf16 --frobnicate 3 --use-cpu-initialization --lr $LR\n")
    imported = run("import", "--from", "megatron:" + script, "--json")
    check("import", imported, "import of arguments it does not understand")
    record(imported["not_understood"] != [], "import", "the not-understood arguments are listed", imported)

    # validate: each measurement table, and all of them at once
    tables = sorted(glob.glob(os.path.join(repo, "data", "memory", "*.csv")))
    for t in tables:
        check("validate", run("validate", "--data", t, "--json"), f"validate {os.path.basename(t)}")
    check("validate", run("validate", *[a for t in tables for a in ("--data", t)], "--json"), "validate every table")

    # calibration files: written by calibrate, read back by estimate
    throughput = sorted(glob.glob(os.path.join(repo, "data", "throughput", "*.csv")))
    calibrations = []
    for name, files in [(os.path.basename(t), [t]) for t in throughput] + [("every table", throughput)]:
        out = os.path.join(tmp.name, f"calibration-{len(calibrations)}.json")
        calibrations.append(out)
        r = subprocess.run([cli, "calibrate", *[a for t in files for a in ("--data", t)], "--folds", "0", "--quiet",
                            "-o", out], capture_output=True, text=True, timeout=600, cwd=repo)
        if r.returncode != 0:
            raise RuntimeError(f"frenzy calibrate on {name}: exit {r.returncode}: {r.stderr}")
        check("calibration", json.load(open(out)), f"calibrate -o on {name}")
        check("estimate", run("estimate", "--model", "llama-3.1-8b", "--gpus", "8xh100-80g", "--calibration", out,
                              "--json"), f"estimate --calibration (calibrated on {name})")

    # GPU types files: the catalog as an array, and a cluster spec with a new type; both read back by `frenzy gpus`
    types = gpus  # `frenzy gpus --json` as written, memory_bytes included, is a GPU types file
    check("gpu-types", types, "the catalog as a GPU types array")
    check("gpus", run("gpus", "--gpu-types", write("types.json", types), "--json"), "gpus --gpu-types (the catalog)")
    card = {k: v for k, v in dict(types[0], name="my-card", product="My card").items() if k != "memory_bytes"}
    with_card = {"nodes": [{"gpu": "my-card", "count": 2}], "gpu_types": [card]}
    check("gpu-types", with_card, "a cluster spec with a new type")
    check("cluster", with_card, "a cluster spec with a new type")
    listed = run("gpus", "--gpu-types", write("cluster-with-card.json", with_card), "--json")
    check("gpus", listed, "gpus --gpu-types (a cluster spec with a new type)")
    record(any(t["name"] == "my-card" for t in listed), "gpu-types", "the new type is listed", [t["name"] for t in listed])

    # what the readers refuse, the schemas refuse
    check("job", {"model": {"preset": "gpt2"}, "trainig": {}}, "a misspelt section", valid=False)
    check("job", {"model": {"preset": "gpt2"}, "training": {"seq_len": "long"}}, "a string seq_len", valid=False)
    check("cluster", {"nodes": [{"gpu": "a100-80g", "gpus": 8}]}, "an unknown node field", valid=False)
    check("cluster", {"nodes": []}, "no nodes", valid=False)
    calibration = json.load(open(calibrations[-1]))
    estimate_with = ["estimate", "--model", "gpt2", "--gpu", "h100-80g", "--calibration", "{}"]
    refused("calibration", dict(calibration, format="frenzy-calibration-1"), "the earlier format", *estimate_with)
    refused("calibration", {"format": "frenzy-calibration-2", "token_penalty": 1.0}, "an unknown field", *estimate_with)
    refused("calibration", {"format": "frenzy-calibration-2", "gpus": [{"gpu": "gh100", "inverse_efficiency": 0.5}]},
            "an inverse efficiency below 1", *estimate_with)
    refused("calibration", {"format": "frenzy-calibration-2", "weight_traffic": "high"}, "a string coefficient",
            *estimate_with)
    check("calibration", {"source": "no format"}, "no format", valid=False)
    refused("gpu-types", [dict(card, memory_gib=48)], "an unknown GPU type field", "gpus", "--gpu-types", "{}", "--json")
    refused("gpu-types", [dict(card, gpus_per_node="8")], "a string gpus_per_node", "gpus", "--gpu-types", "{}", "--json")
    check("gpu-types", {"types": types}, "an object without gpu_types", valid=False)
    settings = json.load(open(os.path.join(launched["fsdp"], "fsdp_settings.json")))
    import_fsdp = ["import", "--from", "fsdp:{}", "--model", "llama-3.1-8b", "--json"]
    refused("fsdp-settings", dict(settings, sharding_strategy="HYBRID_SHARD"), "an unknown sharding strategy", *import_fsdp)
    refused("fsdp-settings", dict(settings, world_size="8"), "a string world_size", *import_fsdp)
    refused("fsdp-settings", dict(settings, mixed_precision={"param_dtype": "float8"}), "an unknown param_dtype",
            *import_fsdp)
    check("fsdp-settings", dict(settings, zero_stage=3), "a key launch does not write", valid=False)
    launch = run("launch", "--model", "gpt2", "--gpus", "8xa100-80g", "--framework", "fsdp", "--run-command", "train.py", "--out",
                 os.path.join(tmp.name, "launch-gpt2"), "--json")
    check("launch", launch, "launch gpt2 without a token budget")
    check("launch", dict(launch, files=[{"name": "launch.sbatch"}]), "files as objects", valid=False)
    check("launch", dict(launch, plan=dict(launch["plan"], gpus="8")), "a string plan.gpus", valid=False)
    check("launch", {k: v for k, v in launch.items() if k != "job"}, "no job", valid=False)
    check("import", dict(imported, job=dict(imported["job"], trainig={})), "a job with a misspelt section", valid=False)
    check("import", {k: v for k, v in imported.items() if k != "notes"}, "no notes", valid=False)
    check("import", dict(imported, ignored="--lr"), "ignored as text", valid=False)
    memory = run("validate", "--data", tables[0], "--json")
    row = memory["rows"][0]
    check("validate", dict(memory, rows=[dict(row, metric="peak")]), "an unknown metric", valid=False)
    check("validate", dict(memory, rows=[dict(row, measured_gib=1.0)]), "an unknown row field", valid=False)
    check("validate", dict(memory, skipped=[{"row": 41}]), "a skipped row as an object", valid=False)

    # frenzy serve's documents, assembled around a real plan (test_serve.py checks the real answers)
    plan = run("plan", "--model", "gpt2", "--gpus", "16xa100-80g", "--total-tokens", "2e6", "--json")["plans"][0]
    job = {"id": 3, "state": "running", "submit_time": 1.7e9, "attempt": 2, "name": "mid-a100",
           "limits": {"gpu_types": ["a100-80g"], "max_gpus": 16, "deadline": "2h", "priority": 1},
           "slurm_job_id": 12, "plan": plan, "allocation": [["a100-1", 8], ["a100-2", 8]], "reason": "requeued",
           "events": [{"t": 1.7e9, "kind": "accepted", "detail": ""},
                      {"t": 1.7e9 + 1, "kind": "submitting", "detail": "frenzy:3:1 [[\"a100-1\",8]]"}]}
    row = {k: v for k, v in job.items() if k != "events"}
    queued = {"id": 4, "state": "queued", "submit_time": 1.7e9, "attempt": 0, "name": "gpt2"}
    check("serve-job", job, "a running job")
    check("serve-jobs", {"jobs": [row, queued, dict(row, id=5, state="submitted", cancel_requested=True)]}, "three jobs")
    check("serve-submit", {"id": 3}, "201")
    check("serve-cancel", {"id": 3, "state": "cancelling"}, "202")
    check("serve-error", {"error": "no GPU type of the cluster can run this job",
                          "infeasible": [{"gpu": "t4", "reason": "needs 64 x 15 GiB"}]}, "422")
    check("serve-error", {"error": "job 3 is already completed"}, "409")
    node = {"name": "a100-1", "gpu": "a100-80g", "gres_type": "a100", "gpus": 8, "free": 0, "up": False,
            "slurm_state": "idle", "slurm_flags": ["DRAIN"], "slurm_gpus_used": 0, "reason": "frenzy-test"}
    cluster = {"nodes": [node], "types": [{"gpu": "a100-80g", "gpus": 8, "up": 0, "free": 0}], "skipped": [],
               "slurm_reachable": True}
    check("serve-cluster", cluster, "a drained node")
    start = {"decision": "start", "job": 3, "name": "mid-a100", "plan": plan, "allocation": job["allocation"],
             "slurm_job": 12, "alternatives": [{k: plan[k] for k in ("gpu", "gpus", "nodes", "est_time_s", "tokens_per_s")}],
             "why": "HAS: ...", "t": 1.7e9}
    decisions = [start, {"decision": "refuse", "name": "huge", "why": "no GPU type of the cluster can run it",
                         "reasons": [{"gpu": "t4", "reason": "..."}], "t": 1.7e9},
                 {"decision": "node-down", "node": "a100-1", "state": "idle+DRAIN", "t": 1.7e9},
                 {"decision": "slurm-reachable", "t": 1.7e9}]
    check("serve-decisions", {"decisions": decisions}, "start, refuse, node-down, slurm-reachable")
    check("serve-job", dict(job, state="submitting"), "the internal state submitting", valid=False)
    check("serve-job", dict(job, limits=None), "null limits", valid=False)
    check("serve-job", {k: v for k, v in job.items() if k != "events"}, "no events", valid=False)
    check("serve-job", dict(job, allocation=[["a100-1", 8, 1]]), "an allocation triple", valid=False)
    check("serve-jobs", {"jobs": [job]}, "a listed job with events", valid=False)
    check("serve-jobs", {"jobs": [dict(row, plan=dict(plan, gpus="8"))]}, "a string plan.gpus", valid=False)
    check("serve-submit", {"id": "3"}, "a string id", valid=False)
    check("serve-cancel", {"id": 3, "state": "gone"}, "an unknown state", valid=False)
    check("serve-error", {"error": "x", "infeasible": [{"gpu": "t4"}]}, "a reason missing", valid=False)
    check("serve-cluster", dict(cluster, nodes=[{k: v for k, v in node.items() if k != "slurm_flags"}]),
          "a node without slurm_flags", valid=False)
    check("serve-decisions", {"decisions": [{k: v for k, v in start.items() if k != "plan"}]}, "a start without its plan",
          valid=False)
    check("serve-decisions", {"decisions": [dict(start, decision="begin")]}, "an unknown decision", valid=False)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
