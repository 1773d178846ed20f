#!/usr/bin/env python3
"""Turns the raw runs of one measuring session (data/measured/<session>/*.jsonl) into rows of the project's tables:
data/memory/h200_measured.csv (columns of data/memory/measured_calibration.csv: one row per run and metric, runs
that did not fit as value_type "does_not_fit") and data/throughput/h200_measured.csv (columns of
data/throughput/measured_calibration.csv; pretraining runs only).
Usage: python3 to_csv.py DATA_DIR SESSION [--check]; --check writes nothing and exits 1 when the tables differ from
what the raw runs make (the suite's measured_tables_in_step)."""
import csv
import io
import json
import os
import sys

MEM_COLUMNS = ("id,value_type,framework,model,layers,hidden,heads,kv_heads,ffn_hidden,mlp_act,vocab_padded,tied_emb,"
               "seq_len,micro_batch,global_batch,num_gpus,dp,tp,pp,vpp,cp,ep,seq_parallel,sharding,recompute,"
               "attention_impl,precision,optimizer,gpu,peak_GiB,peak_bytes,metric,rank_measured,other_flags,source,"
               "confidence,notes").split(",")
TPUT_COLUMNS = ("row_id,source,source_table,framework,gpu_type,num_gpus,interconnect,model,num_layers,hidden,heads,"
                "kv_heads,ffn_hidden,mlp_type,vocab,seq_len,micro_batch,global_batch_seqs,grad_accum,dp,tp,pp,vpp,cp,"
                "ep,sharding,recompute,sequence_parallel,precision,other_opts,metric_reported,metric_value,"
                "metric_definition,tokens_per_s_per_gpu,tokens_per_s_per_gpu_derived,tflops_per_gpu,mfu_pct,hfu_pct,"
                "step_time_s,step_time_s_derived,peak_mem_gib,attn_flops_convention,confidence,notes").split(",")
GPU = "H200 SXM 141GB (139.8 GiB visible to CUDA)"
RECOMPUTE = {"none": "none", "full": "full (per block)", "selective": "selective (per-op SAC, every second mm recomputed)"}


def runs(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def env_text(env):
    return f"torch {env['torch']}, CUDA {env['cuda']}, cuDNN {env['cudnn']}" + (
        f", transformers {env['transformers']}, PEFT {env['peft']}" if "transformers" in env else "")


def fsdp2_common(r, env, script):
    return dict(framework="FSDP2 (torchtitan's mechanism; own Llama 3 decoder)", model=r["model"], layers=r["layers"],
                hidden=r["dim"], heads=r["heads"], kv_heads=r["kv"], ffn_hidden=r["ffn"], mlp_act="SwiGLU",
                vocab_padded=r["vocab"], tied_emb="yes" if r["tied"] else "no", seq_len=r["seq"],
                micro_batch=r["micro_batch"], global_batch=r["micro_batch"], num_gpus=1, dp=1, tp=1, pp=1, vpp="",
                cp=1, ep=1, seq_parallel="no", sharding="FSDP2 full shard (one rank)", recompute=RECOMPUTE[r["ac"]],
                attention_impl="SDPA (cuDNN, flash, math priority; enable_gqa)",
                precision="bf16 param / fp32 reduce, fp32 sharded master", optimizer=f"AdamW ({r['optimizer']})",
                gpu=GPU, rank_measured="single GPU",
                other_flags=("PYTORCH_ALLOC_CONF=" + (env["alloc_conf"] or "(default)")) + "; no compile",
                source=f"measured on one H200 by {script} ({env_text(env)}), 2026-12-04", confidence="high")


def hf_common(r, env, script):
    method = r["method"]
    precision = {"lora": "bf16 base weights, bf16 autocast, fp32 LoRA adapters",
                 "full_bf16": "pure bf16 (weights, grads, AdamW states bf16; autocast)",
                 "full_amp": "fp32 weights, grads and AdamW states, bf16 autocast"}[method]
    flags = "LoRA r=16 alpha 32 dropout 0.05 on all linears; " if method == "lora" else ""
    return dict(framework="Hugging Face transformers (Trainer-style loop)", model=r["model"], layers=r["layers"],
                hidden=r["dim"], heads=r["heads"], kv_heads=r["kv"], ffn_hidden=r["ffn"], mlp_act="SwiGLU",
                vocab_padded=r["vocab"], tied_emb="yes" if r["tied"] else "no", seq_len=r["seq"],
                micro_batch=r["micro_batch"], global_batch=r["micro_batch"], num_gpus=1, dp=1, tp=1, pp=1, vpp="",
                cp=1, ep=1, seq_parallel="no", sharding="none (single GPU)",
                recompute="full (gradient_checkpointing, use_reentrant=False)" if r["grad_ckpt"] else "none",
                attention_impl="SDPA", precision=precision, optimizer="AdamW (fused)", gpu=GPU,
                rank_measured="single GPU", other_flags=flags + "PYTORCH_ALLOC_CONF=(default); no compile",
                source=f"measured on one H200 by {script} ({env_text(env)}), 2026-12-04", confidence="high")


def mpt_common(r, env, script):
    return dict(framework="llm-foundry (Composer FSDP1 mechanism; own MPT decoder)", model=r["model"],
                layers=r["layers"], hidden=r["dim"], heads=r["heads"], kv_heads=r["kv"], ffn_hidden=r["ffn"],
                mlp_act="GELU", vocab_padded=r["vocab"], tied_emb="yes", seq_len=r["seq"],
                micro_batch=r["micro_batch"], global_batch=r["micro_batch"], num_gpus=1, dp=1, tp=1, pp=1, vpp="",
                cp=1, ep=1, seq_parallel="no", sharding="NO_SHARD (what FSDP1 runs at world size 1)",
                recompute=RECOMPUTE[r["ac"]], attention_impl="SDPA flash",
                precision="bf16 param / fp32 reduce (FSDP1 mixed_precision DEFAULT), bf16 autocast",
                optimizer="AdamW (per-parameter loop, as Composer's DecoupledAdamW)", gpu=GPU,
                rank_measured="single GPU",
                other_flags=("loss: flash-attn cross entropy (emulated)" if r["loss"] == "fused"
                             else "loss: cross_entropy(logits.float())") +
                "; LPLayerNorm; learned position embedding; PYTORCH_ALLOC_CONF=(default); no compile",
                source=f"measured on one H200 by {script} ({env_text(env)}), 2026-12-04", confidence="high")


def memory_rows(prefix, rs, env, common, script):
    out = []
    for i, r in enumerate(rs, 1):
        base = common(r, env, script)
        if r.get("oom"):
            out.append(dict(base, id=f"{prefix}{i:02d}", value_type="does_not_fit", peak_GiB="", peak_bytes="",
                            metric="torch.OutOfMemoryError in the first steps",
                            notes=r.get("error", "")[:200].replace("\n", " ")))
            continue
        if r.get("error"):
            continue
        note = (f"step {r['step_time_s']:.4f} s (median of 3 after 2 warm-up); first-step peak allocated "
                f"{r['step1_peak_allocated'] / 2**30:.2f} GiB; {r['params']} parameters")
        for metric, key in (("allocated", "peak_allocated"), ("reserved", "peak_reserved")):
            out.append(dict(base, id=f"{prefix}{i:02d}{metric[0]}", value_type="measured",
                            peak_GiB=f"{r[key] / 2**30:.2f}", peak_bytes=r[key],
                            metric=f"max_memory_{metric} ({metric}_bytes.all.peak), steps 2-5", notes=note))
    return out


def throughput_rows(prefix, rs, env, script):
    out = []
    for i, r in enumerate(rs, 1):
        if r.get("oom") or r.get("error"):
            continue
        tokens = r["seq"] * r["micro_batch"]
        out.append(dict(row_id=f"{prefix}{i:02d}", source=f"measured on one H200 by {script} ({env_text(env)})",
                        source_table="2026-12-04", framework="FSDP2 (torchtitan's mechanism)", gpu_type=GPU,
                        num_gpus=1, interconnect="none (one GPU)", model=r["model"], num_layers=r["layers"],
                        hidden=r["dim"], heads=r["heads"], kv_heads=r["kv"], ffn_hidden=r["ffn"], mlp_type="swiglu",
                        vocab=r["vocab"], seq_len=r["seq"], micro_batch=r["micro_batch"],
                        global_batch_seqs=r["micro_batch"], grad_accum=1, dp=1, tp=1, pp=1, vpp=1, cp=1, ep=1,
                        sharding="FSDP2 full shard (one rank)", recompute=RECOMPUTE[r["ac"]], sequence_parallel="no",
                        precision="bf16", other_opts=f"AdamW {r['optimizer']}; eager (no compile)",
                        metric_reported="step time", metric_value=f"{r['step_time_s']:.4f}",
                        metric_definition="median wall time of steps 3-5 (forward, loss, backward, optimizer step)",
                        tokens_per_s_per_gpu=f"{tokens / r['step_time_s']:.0f}", step_time_s=f"{r['step_time_s']:.4f}",
                        peak_mem_gib=f"{r['peak_reserved'] / 2**30:.2f}", confidence="high",
                        notes="steps of random tokens on a randomly initialised model"))
    return out


def write(path, columns, rows, check):
    """Writes the table, or with `check` compares it with the file; returns whether the file is as made."""
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({c: row.get(c, "") for c in columns})
    if check:
        with open(path, newline="") as f:
            same = f.read() == out.getvalue()
        if not same:
            print(f"{path}: differs from what to_csv.py makes of the raw runs", file=sys.stderr)
        return same
    with open(path, "w", newline="") as f:
        f.write(out.getvalue())
    return True


def main():
    data, session = sys.argv[1], sys.argv[2]
    check = "--check" in sys.argv[3:]
    raw = os.path.join(data, "measured", session)

    def load(name):
        with open(os.path.join(raw, name + "_env.json")) as f:
            return runs(os.path.join(raw, name + "_runs.jsonl")), json.load(f)
    fsdp2, fsdp2_env = load("fsdp2")
    fsdp2_def, fsdp2_def_env = load("fsdp2_default_allocator")
    hf, hf_env = load("hf")
    mpt, mpt_env = load("mpt_fsdp1")
    mem = (memory_rows("h200-fsdp2-", fsdp2, fsdp2_env, fsdp2_common, "scripts/measure/fsdp2_grid.py") +
           memory_rows("h200-fsdp2-default-alloc-", fsdp2_def, fsdp2_def_env, fsdp2_common,
                       "scripts/measure/fsdp2_grid.py --only llama-3.2-3b") +
           memory_rows("h200-hf-", hf, hf_env, hf_common, "scripts/measure/hf_peft_grid.py") +
           memory_rows("h200-mpt-", mpt, mpt_env, mpt_common, "scripts/measure/mpt_fsdp1_grid.py --case N"))
    ok = write(os.path.join(data, "memory", "h200_measured.csv"), MEM_COLUMNS, mem, check)
    ok &= write(os.path.join(data, "throughput", "h200_measured.csv"), TPUT_COLUMNS,
                throughput_rows("h200-fsdp2-", fsdp2, fsdp2_env, "scripts/measure/fsdp2_grid.py"), check)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
