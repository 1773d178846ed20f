#!/usr/bin/env python3
"""Achieved throughput of the kernels a transformer training step is made of, at training shapes, on one GPU.

GEMMs of Llama 3 8B and 70B layers (forward M x K x N, dgrad M x N x K, wgrad K x M x N with M = tokens) in bf16
(cuBLAS through torch.mm) and fp8 (torch._scaled_mm, e4m3 x e4m3 tensor-wise scaled, bf16 out; the backward of TE's
hybrid recipe multiplies e5m2 gradients by e4m3 weights); causal attention forward and forward+backward through
SDPA with the flash and cuDNN backends (head dim 128, GQA 32/8 and 64/8). Each figure: median of CUDA-event timings
of 20 calls after 5 warm-ups. Usage: python3 kernels.py OUT_DIR; writes OUT_DIR/kernels.jsonl.
"""
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F


def timed(fn, reps=20, warm=5):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / 1e3)
    return statistics.median(ts)


def gemm_rows():
    layers = {"llama-3.1-8b": [(4096, 6144), (4096, 4096), (4096, 28672), (14336, 4096)],
              "llama-3.1-70b": [(8192, 10240), (8192, 8192), (8192, 57344), (28672, 8192)]}
    for model, shapes in layers.items():
        for tokens in (4096, 8192, 16384):
            for k, n in shapes:
                for role, (mm, kk, nn) in (("fwd", (tokens, k, n)), ("dgrad", (tokens, n, k)), ("wgrad", (k, tokens, n))):
                    yield model, tokens, role, mm, kk, nn


def bf16_gemm(m, k, n):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    return timed(lambda: torch.mm(a, b))


def fp8_gemm(m, k, n, a_dtype):
    a = torch.randn(m, k, device="cuda").to(a_dtype)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm requires
    one = torch.ones((), device="cuda")
    return timed(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))


def attention(seq, heads, kv, backend, backward):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    be = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[backend]
    b = max(1, 16384 // seq)
    q = torch.randn(b, heads, seq, 128, device="cuda", dtype=torch.bfloat16, requires_grad=backward)
    k = torch.randn(b, kv, seq, 128, device="cuda", dtype=torch.bfloat16, requires_grad=backward)
    v = torch.randn(b, kv, seq, 128, device="cuda", dtype=torch.bfloat16, requires_grad=backward)

    def fn():
        with sdpa_kernel([be]):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=kv != heads)
        if backward:
            o.backward(torch.ones_like(o))
    t = timed(fn, reps=10, warm=3)
    flops = 4 * b * heads * seq * seq * 128 / 2 * (3.5 if backward else 1.0)  # causal half; bwd = 2.5 x fwd
    return b, t, flops


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rows = []

    def emit(row):
        rows.append(row)
        print(json.dumps(row), flush=True)
        with open(os.path.join(out, "kernels.jsonl"), "a") as f:
            f.write(json.dumps(row) + "\n")
    for model, tokens, role, m, k, n in gemm_rows():
        flops = 2.0 * m * k * n
        t = bf16_gemm(m, k, n)
        emit(dict(kind="gemm", dtype="bf16", model=model, tokens=tokens, role=role, m=m, k=k, n=n, s=t,
                  tflops=flops / t / 1e12))
        a_dtype = torch.float8_e5m2 if role == "dgrad" else torch.float8_e4m3fn
        try:
            t = fp8_gemm(m, k, n, a_dtype)
            emit(dict(kind="gemm", dtype="fp8", a=str(a_dtype), model=model, tokens=tokens, role=role, m=m, k=k, n=n,
                      s=t, tflops=flops / t / 1e12))
        except Exception as e:
            emit(dict(kind="gemm", dtype="fp8", model=model, role=role, error=str(e)[:200]))
        torch.cuda.empty_cache()
    for heads, kv in ((32, 8), (64, 8)):
        for seq in (2048, 4096, 8192, 16384):
            for backend in ("flash", "cudnn"):
                for backward in (False, True):
                    try:
                        b, t, flops = attention(seq, heads, kv, backend, backward)
                        emit(dict(kind="attention", backend=backend, heads=heads, kv=kv, head_dim=128, seq=seq, batch=b,
                                  backward=backward, s=t, tflops=flops / t / 1e12))
                    except Exception as e:
                        emit(dict(kind="attention", backend=backend, seq=seq, backward=backward, error=str(e)[:200]))
                    torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
