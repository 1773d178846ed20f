#!/usr/bin/env python3
"""Maps the shared wild_2026-12.csv (45 measured runs, sources in wild_2026-12.md) onto the columns of
data/throughput/measured_calibration.csv, as data/throughput/wild_2026-12.csv. Every measured value is copied as
it is; cells the readers parse (gpu_type, precision, sharding, recompute, framework, interconnect) get the
project's wording with the source's words kept beside them, and the source's own cell goes to `notes` where it
differs. Rows the step-time model cannot express yet keep their values and name what is missing in `model_gap`
(io/throughput_csv.hpp skips them, listing their ids).

usage: wild_to_throughput.py SHARED_CSV OUT_CSV"""
import csv
import sys

HEADER = ("row_id,source,source_table,framework,gpu_type,num_gpus,interconnect,model,num_layers,hidden,heads,kv_heads,"
          "ffn_hidden,mlp_type,vocab,seq_len,micro_batch,global_batch_seqs,grad_accum,dp,tp,pp,vpp,cp,ep,sharding,"
          "recompute,sequence_parallel,precision,other_opts,metric_reported,metric_value,metric_definition,"
          "tokens_per_s_per_gpu,tokens_per_s_per_gpu_derived,tflops_per_gpu,mfu_pct,hfu_pct,step_time_s,"
          "step_time_s_derived,peak_mem_gib,attn_flops_convention,confidence,notes,attention_impl,fp8_recipe,"
          "framework_version,moe_experts,moe_top_k,moe_expert_ffn_hidden,moe_shared_experts,model_gap").split(",")

# torchtitan's per-op selective activation checkpointing (the "selective per-op SAC" of these rows) is read as the
# project's `selective`; docs/perf-model.md says what differs.
SAC = "selective (torchtitan per-op SAC)"
PACKED = ("fine-tuning on packed 8192-token sequences: attention runs per packed sample, which a job spec cannot "
          "express (as NeMo's SFT rows 310-312); LoRA on a packed dataset")


def metric_definition(r):
    m = r["metric_reported"]
    if r["id"].startswith("mlperf"):
        return m + "; tokens/s/GPU = global_batch x seq_len / step_time / num_gpus (samples/s x 8192 / num_gpus for the LoRA rows), wild_2026-12.md section 2"
    if r["id"].startswith("llmq"):
        return m + "; LLMQ tps is total tokens/s of all GPUs: divided by num_gpus (wild_2026-12.md section 3)"
    return m + "; torchtitan tps is per device"


def map_row(r):
    i = r["id"]
    o = {k: "" for k in HEADER}
    for k in ("source", "source_table", "num_gpus", "num_layers", "hidden", "heads", "kv_heads", "vocab", "seq_len",
              "micro_batch", "global_batch_seqs", "dp", "tp", "pp", "vpp", "cp", "ep", "other_opts",
              "metric_reported", "metric_value", "tokens_per_s_per_gpu", "mfu_pct", "peak_mem_gib", "confidence",
              "fp8_recipe", "framework_version"):
        o[k] = r[k]
    o["row_id"] = i
    o["model"] = r["model"]
    o["metric_definition"] = metric_definition(r)
    o["ffn_hidden"] = r["ffn_hidden"]
    o["mlp_type"] = "gelu" if "GPT-3" in r["model"] else "swiglu"
    mb, gb, dp = int(r["micro_batch"]), int(r["global_batch_seqs"]), int(r["dp"])
    o["grad_accum"] = str(gb // (mb * dp))
    o["interconnect"] = r["interconnect"]
    o["gpu_type"] = r["gpu_type"]
    o["framework"] = r["framework"]
    o["sharding"] = r["sharding"]
    o["recompute"] = r["recompute"]
    o["precision"] = r["precision"]
    o["sequence_parallel"] = "no"
    o["attention_impl"] = ""
    notes = [r["notes"]] if r["notes"] else []
    gaps = []
    derived = "DERIVED" in r["notes"]
    o["tokens_per_s_per_gpu_derived"] = "yes (see notes)" if derived else ""
    if i.startswith("ao_"):
        o["framework"] = r["framework"] + " (torchtitan: FSDP2)"
        o["recompute"] = SAC if "SAC" in r["recompute"] else r["recompute"]
        o["attention_impl"] = "sdpa (torchtitan default: scaled_dot_product_attention)"
        prec = r["precision"]
        if prec == "bf16":
            o["precision"] = "bf16-mixed (FSDP2 MixedPrecisionPolicy: bf16 compute, fp32 master)"
        else:
            o["precision"] = "fp8-mixed (source: " + prec + ")"
        o["other_opts"] = r["other_opts"] + "; torch.compile"  # compile noted for the reader (runtime.compile)
        if "fp8 all-gather" in r["fp8_recipe"] or "float8 FSDP all-gather" in r["fp8_recipe"]:
            gaps.append("fp8 FSDP all-gather (torchao enable_fsdp_float8_all_gather): runtime.fp8_param_gather is Megatron's only")
        if "rowwise_with_gw_hp" in r["fp8_recipe"]:
            gaps.append("fp8 recipe rowwise_with_gw_hp (weight-gradient GEMM in bf16) is not a runtime.fp8_recipe")
        if i.startswith("ao_b200"):
            notes.append("B200s power limited, limit not stated: predicted at the datasheet peaks")
        if i.startswith("ao_tut"):
            notes.append("gpu_type read as h100-80g (SXM peaks); the 96 GB SKU is inferred by the data author")
    if i.startswith("ao_moe"):
        o["mlp_type"] = "swiglu"
        o["ffn_hidden"] = "8192"
        o["sharding"] = "FSDP2 full shard (source: " + r["sharding"] + ")"
        o["moe_experts"], o["moe_top_k"], o["moe_expert_ffn_hidden"], o["moe_shared_experts"] = "16", "1", "8192", "1"
        notes.append("ffn_hidden source cell: " + r["ffn_hidden"])
        if "linears only" in r["precision"] or "dense linears only" in r["precision"]:
            gaps.append("per-module precision: MXFP8 on dense linears only, grouped GEMMs in bf16")
        if "grouped GEMMs only" in r["precision"]:
            gaps.append("per-module precision: MXFP8 on the routed experts' grouped GEMMs only, dense linears in bf16")
        if "gb200" in i:
            gaps.append("recompute not determined: the README says none, the PyTorch blog full")
            gaps.append("per-module FSDP degrees (256 on attention/shared experts, 64 on routed experts)")
    if i.startswith("mlperf"):
        o["framework"] = r["framework"]
        o["sequence_parallel"] = "yes" if "sequence parallel" in r["other_opts"] else "no"
        o["attention_impl"] = "fused (Transformer Engine / cuDNN)" if "AMD" not in r["framework"] and "MangoBoost" not in r["framework"] else "fused (CK fused attention v3)"
        o["precision"] = "fp8-mixed (source: " + r["precision"] + ")"
        notes.append("interconnect source cell: " + r["interconnect"])
        if "gb200" in i:
            o["interconnect"] = "GB200 NVL72 NVLink5 domain; one ConnectX-7 IB NDR 400 Gbit NIC per GPU (the catalog default for gb200)"
        else:
            o["interconnect"] = r["interconnect"].replace("Gb", " Gbit")
        if "lora" in i:
            o["model"] = r["model"]  # names the packed sequences: the reader skips it
            gaps.append(PACKED)
        if "gpt3" in i:
            gaps.append("vocab not given (the GPT-3 SPM vocabulary size was not in the files read)")
        if "405b" in i:
            # the source's "asymmetric PP (embedding/loss counted as stages)" as Megatron's flags: 126 layers + 2 on
            # pp 8 x vpp 8 = 64 chunks of 2
            o["other_opts"] = (r["other_opts"] + "; tp-comm-overlap; overlap-grad-reduce; fp8-param-gather; "
                               "account-for-embedding-in-pipeline-split; account-for-loss-in-pipeline-split")
    if i.startswith("llmq"):
        gpus = int(r["num_gpus"])
        o["attention_impl"] = "fused (LLMQ's own cuDNN attention)"
        if gpus == 1:
            o["framework"] = r["framework"] + " [one GPU: modelled as ddp]"
            o["sharding"] = "none (one GPU)"
        else:
            o["framework"] = r["framework"] + " [ZeRO-1: modelled as deepspeed]"
        if r["precision"] == "bf16":
            o["precision"] = "bf16 (pure: bf16 master weights and bf16 Adam m/v)"
        else:
            o["precision"] = "fp8-mixed (e4m3 matmuls; master weights and Adam m/v in bf16, not fp32)"
            if gpus > 1:
                gaps.append("per-tensor (tensorwise) fp8 with ZeRO-1: no catalog framework runs both (DeepSpeed's rules allow the delayed recipe only)")
        rc = r["recompute"].lower()
        if "rmsnorm" in rc or "swiglu" in rc:
            o["recompute"] = "none (source: " + r["recompute"] + ")"
            gaps.append("recompute of RMSNorm" + (" and SwiGLU" if "swiglu" in rc else "") + " only: no recompute level says it")
        if "offload-residual" in r["other_opts"]:
            gaps.append("offload of the residual stream to the host: no runtime.offload field says it")
        if "offload-opt-m" in r["other_opts"]:
            gaps.append("offload of Adam's first moment alone: runtime.offload moves the whole optimizer step")
        if "lmhead-chunks" in r["other_opts"]:
            notes.append("mfu_pct holds LLMQ's SOL% (of the matmul dtype's peak)")
    o["notes"] = "; ".join(n for n in notes if n)
    o["model_gap"] = "; ".join(g for g in gaps if g)
    return o


def main():
    src, out = sys.argv[1:3]
    rows = [map_row(r) for r in csv.DictReader(open(src, newline=""))]
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HEADER, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} rows, {sum(1 for r in rows if not r['model_gap'])} without a model gap -> {out}")


if __name__ == "__main__":
    main()
