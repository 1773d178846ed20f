#!/usr/bin/env python3
"""Plan a training job from a Hugging Face config.json on a list of GPUs and write its launch files.

    launch_from_hf.py CONFIG_JSON GPUS [--framework megatron|torchtitan|deepspeed|fsdp] [-o DIR]
                      [--seq-len N] [--global-batch N] [--tokens N] [--precision P]

GPUS is a list such as 16xa100-80g,8xv100-32g. Frenzy picks the best plan (GPU type, count, parallel layout)
for the framework, writes DIR/launch.sbatch and the framework's configuration, and this prints the command that
submits it. Needs the Python module frenzy (docs/python.md); the work is frenzy.launch (include/frenzy/launch).
"""
import argparse
import os
import pathlib
import shlex
import sys

import frenzy


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config", type=pathlib.Path, help="Hugging Face config.json of the model")
    ap.add_argument("gpus", help="GPUs available, e.g. 16xa100-80g,8xv100-32g")
    ap.add_argument("--framework", default="megatron", help="megatron | torchtitan | deepspeed | fsdp")
    ap.add_argument("-o", "--out", type=pathlib.Path, default=pathlib.Path("launch"), help="output directory")
    ap.add_argument("--seq-len", type=int, default=4096)
    ap.add_argument("--global-batch", type=int, default=512, help="sequences per optimizer step")
    ap.add_argument("--tokens", type=float, default=1e11, help="training tokens (sets the time limit)")
    ap.add_argument("--precision", default="bf16-mixed")
    a = ap.parse_args(argv)

    job = frenzy.Job.from_dict({
        "name": a.config.stem,
        "model": {"hf_config": str(a.config.resolve())},
        "training": {"seq_len": a.seq_len, "global_batch": a.global_batch, "total_tokens": a.tokens,
                     "precision": a.precision},
    })
    try:
        result = frenzy.launch(job, a.gpus, framework=a.framework)
    except frenzy.ConfigError as e:  # bad input, or no plan fits these GPUs
        print(f"error: {e}", file=sys.stderr)
        return 2
    written = result.write(a.out)

    p = result.plan
    q = p.parallel
    print(f"{job.name}: {job.parameters / 1e9:.2f}B parameters, {a.framework}")
    print(f"best plan: {p.gpus} x {p.gpu} on {p.nodes} node(s), dp {q['dp']} tp {q['tp']} pp {q['pp']} "
          f"cp {q['cp']}, micro-batch {p.micro_batch}, sharding {q['sharding']}, recompute {q['recompute']}")
    print(f"predicted {p.tokens_per_s:,.0f} tokens/s, {p.est_time_s / 3600:.1f} h, "
          f"peak {p.peak_allocated_bytes / 2**30:.1f} of {p.capacity_bytes / 2**30:.1f} GiB per GPU")
    for f in written:
        print(f"wrote {f}")
    # launch.sbatch finds its files in the directory it is submitted from ($SLURM_SUBMIT_DIR).
    print("submit with:")
    print(f"  cd {shlex.quote(os.fspath(a.out))} && sbatch launch.sbatch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
