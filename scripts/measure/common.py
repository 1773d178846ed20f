"""The measuring loop shared by the grids: run each case, catch what does not fit, write one JSON line per case."""
import gc
import json
import math
import os
import statistics
import time
import traceback

import torch

MODELS = {
    # Hugging Face config.json values (meta-llama/Llama-3.2-1B, -3B, Llama-3.1-8B)
    "llama-3.2-1b": dict(dim=2048, layers=16, heads=32, kv=8, ffn=8192, vocab=128256, tied=True),
    "llama-3.2-3b": dict(dim=3072, layers=28, heads=24, kv=8, ffn=8192, vocab=128256, tied=True),
    "llama-3.1-8b": dict(dim=4096, layers=32, heads=32, kv=8, ffn=14336, vocab=128256, tied=False),
}


def environment(extra):
    props = torch.cuda.get_device_properties(0)
    free, total = torch.cuda.mem_get_info()
    return dict(torch=torch.__version__, cuda=torch.version.cuda, gpu=props.name, sms=props.multi_processor_count,
                total_bytes=total, free_bytes_at_start=free, cudnn=torch.backends.cudnn.version(),
                alloc_conf=os.environ.get("PYTORCH_ALLOC_CONF", os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")), **extra)


def measure(info, step, batch, warm, timed):
    """Steps the job; the peak counts from the second step on (the optimizer states exist from the first)."""
    times, losses, first = [], [], {}
    for i in range(warm + timed):
        if i == 1:
            st = torch.cuda.memory_stats()
            first = dict(step1_peak_allocated=st["allocated_bytes.all.peak"],
                         step1_peak_reserved=st["reserved_bytes.all.peak"])
            torch.cuda.reset_peak_memory_stats()
        tokens = batch()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        losses.append(step(tokens))
        torch.cuda.synchronize()
        if i >= warm:
            times.append(time.perf_counter() - t0)
    st = torch.cuda.memory_stats()
    return dict(info, **first, peak_allocated=st["allocated_bytes.all.peak"], peak_reserved=st["reserved_bytes.all.peak"],
                peak_active=st["active_bytes.all.peak"], num_alloc_retries=st.get("num_alloc_retries", 0),
                step_time_s=statistics.median(times), step_times_s=times, loss_first=float(losses[0]),
                loss_last=float(losses[-1]))


def run_grid_one_rank(port, out, cases, prepare, keys, budget_s, extra):
    """run_grid inside a one-rank NCCL process group (what FSDP needs on one GPU), torn down after."""
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(port))
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
    try:
        run_grid(out, cases, prepare, keys, budget_s, extra)
    finally:
        dist.destroy_process_group()


def run_grid(out, cases, prepare, keys, budget_s, extra):
    os.makedirs(out, exist_ok=True)
    start = time.time()
    env = environment(extra)
    print(json.dumps(env), flush=True)
    with open(os.path.join(out, "env.json"), "w") as f:
        json.dump(env, f)
    tracebacks = 0
    for case in cases:
        if time.time() - start > budget_s:
            print("budget reached; stopping", flush=True)
            break
        row = dict(zip(keys, case), **MODELS[case[0]])
        t0 = time.time()
        try:
            row.update(measure(*prepare(*case)))
            row["oom"] = False
        except torch.OutOfMemoryError as e:
            row.update(oom=True, error=str(e).splitlines()[0][:300])
        except Exception as e:  # recorded, and the grid goes on
            row.update(oom=False, error=f"{type(e).__name__}: {e}"[:500])
            if tracebacks < 3:
                traceback.print_exc()
                tracebacks += 1
        row["wall_s"] = round(time.time() - t0, 2)
        gc.collect()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        with open(os.path.join(out, "runs.jsonl"), "a") as f:
            f.write(json.dumps(row) + "\n")
        print(" ".join(f"{k}={v}" for k, v in zip(keys, case)) +
              f": oom={row.get('oom')} reserved={row.get('peak_reserved', 0) / 2**30:.2f} GiB "
              f"alloc={row.get('peak_allocated', 0) / 2**30:.2f} GiB step={row.get('step_time_s', math.nan):.3f} s "
              f"({row['wall_s']} s) {row.get('error', '')[:160]}", flush=True)
