#!/usr/bin/env python3
"""Peak memory and step time of real training steps, torchtitan style, on one GPU.

The mechanism follows pytorch/torchtitan@b5bcd76c (read from its source, not imported: the device machine has
no torchtitan): a Llama 3 decoder (torchtitan/models/llama3/model.py, models/common/decoder.py) with complex fp32
RoPE, SDPA attention with the cuDNN > flash > math priority and enable_gqa (models/common/attention.py), nn.RMSNorm,
SwiGLU; FSDP2 as torchtitan/distributed/fsdp.py applies it (embeddings and each block resharded after forward,
[norm, lm_head] not; tied embedding and head in one unit; bf16 parameters, fp32 reduce); activation checkpointing
per block, "full" or torchtitan's selective per-op policy (save mm/linear/attention except every second mm,
torchtitan/distributed/activation_checkpoint.py); the loss is cross_entropy on pred.float()
(torchtitan/components/loss.py); AdamW fused (torchtitan's default implementation) or foreach.

Usage: python3 fsdp2_grid.py OUT_DIR [--budget-s 400] [--only NAME]
Each run appends one JSON line to OUT_DIR/runs.jsonl as soon as it ends (so a run cut short keeps what it
measured). A run that does not fit is recorded with "oom": true. The runs of 2026-12-04 (data/measured/) were made
by this file before its loop moved to common.py (the same steps, warm-ups and statistics).
"""
import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import MODELS, run_grid_one_rank  # noqa: E402

def grid():
    """Runs in priority order: (model, seq, micro_batch, ac, optimizer)."""
    g = []
    for mb in (1, 2, 4, 8):
        g.append(("llama-3.2-1b", 2048, mb, "none", "fused"))
    for seq in (4096, 8192):
        for ac in ("none", "selective", "full"):
            g.append(("llama-3.2-1b", seq, 2, ac, "fused"))
    g.append(("llama-3.2-1b", 4096, 2, "none", "foreach"))
    for mb in (1, 2, 4):
        for ac in ("none", "selective", "full"):
            g.append(("llama-3.2-3b", 4096, mb, ac, "fused"))
    g.append(("llama-3.2-3b", 8192, 2, "full", "fused"))
    g.append(("llama-3.2-3b", 4096, 2, "none", "foreach"))
    for seq, mb, ac in ((2048, 1, "full"), (4096, 1, "full"), (8192, 1, "full"), (8192, 2, "full"),
                        (4096, 1, "selective"), (8192, 1, "selective"), (2048, 1, "none"), (4096, 1, "none"),
                        (4096, 4, "full"), (8192, 4, "full")):
        g.append(("llama-3.1-8b", seq, mb, ac, "fused"))
    g.append(("llama-3.1-8b", 4096, 1, "full", "foreach"))
    return g


def rope_cache(head_dim, seq, theta=500000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    t = torch.arange(seq, device=freqs.device, dtype=torch.float32)
    return torch.polar(torch.ones(seq, head_dim // 2), torch.outer(t, freqs))


def apply_rope(x, freqs):
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    out = torch.view_as_real(xc * freqs.view(1, x.shape[1], 1, -1)).flatten(3)
    return out.type_as(x)


class Attention(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.h, self.kv, self.hd = m["heads"], m["kv"], m["dim"] // m["heads"]
        self.wq = nn.Linear(m["dim"], self.h * self.hd, bias=False)
        self.wk = nn.Linear(m["dim"], self.kv * self.hd, bias=False)
        self.wv = nn.Linear(m["dim"], self.kv * self.hd, bias=False)
        self.wo = nn.Linear(self.h * self.hd, m["dim"], bias=False)

    def forward(self, x, freqs):
        b, s, _ = x.shape
        q = apply_rope(self.wq(x).view(b, s, self.h, self.hd), freqs)
        k = apply_rope(self.wk(x).view(b, s, self.kv, self.hd), freqs)
        v = self.wv(x).view(b, s, self.kv, self.hd)
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.MATH], set_priority=True):
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                               is_causal=True, enable_gqa=self.kv != self.h)
        return self.wo(o.transpose(1, 2).reshape(b, s, -1))


class FeedForward(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.w1 = nn.Linear(m["dim"], m["ffn"], bias=False)
        self.w2 = nn.Linear(m["ffn"], m["dim"], bias=False)
        self.w3 = nn.Linear(m["dim"], m["ffn"], bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.attention = Attention(m)
        self.feed_forward = FeedForward(m)
        self.attention_norm = nn.RMSNorm(m["dim"], eps=1e-5)
        self.ffn_norm = nn.RMSNorm(m["dim"], eps=1e-5)

    def forward(self, x, freqs):
        h = x + self.attention(self.attention_norm(x), freqs)
        return h + self.feed_forward(self.ffn_norm(h))


class Decoder(nn.Module):
    def __init__(self, m, seq):
        super().__init__()
        self.tok_embeddings = nn.Embedding(m["vocab"], m["dim"])
        self.layers = nn.ModuleList(Block(m) for _ in range(m["layers"]))
        self.norm = nn.RMSNorm(m["dim"], eps=1e-5)
        self.lm_head = nn.Linear(m["dim"], m["vocab"], bias=False)
        if m["tied"]:
            self.lm_head.weight = self.tok_embeddings.weight
        self.head_dim, self.seq = m["dim"] // m["heads"], seq
        self.register_buffer("freqs", torch.empty(seq, self.head_dim // 2, dtype=torch.complex64), persistent=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, self.freqs)
        return self.lm_head(self.norm(h))


def selective_policy():
    from torch.utils.checkpoint import CheckpointPolicy
    ops = torch.ops.aten
    mm_ops = {ops.mm.default, ops.linear.default}
    save = set(mm_ops) | {ops.max.default}
    for name in ("_scaled_dot_product_cudnn_attention", "_scaled_dot_product_flash_attention",
                 "_scaled_dot_product_efficient_attention"):
        if hasattr(ops, name):
            save.add(getattr(ops, name).default)
    meta = {"forward": 0, "recompute": 0}

    def policy(ctx, func, *args, **kwargs):
        mode = "recompute" if ctx.is_recompute else "forward"
        if func in mm_ops:
            meta[mode] += 1
        if func in save:
            if func in mm_ops and meta[mode] % 2 == 0:
                return CheckpointPolicy.PREFER_RECOMPUTE
            return CheckpointPolicy.MUST_SAVE
        return CheckpointPolicy.PREFER_RECOMPUTE
    return policy


def apply_ac(model, ac):
    if ac == "none":
        return
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
    from torch.utils.checkpoint import create_selective_checkpoint_contexts
    for i, block in enumerate(model.layers):
        if ac == "full":
            model.layers[i] = checkpoint_wrapper(block, preserve_rng_state=False)
        else:
            model.layers[i] = checkpoint_wrapper(
                block, preserve_rng_state=False,
                context_fn=lambda: create_selective_checkpoint_contexts(selective_policy()))


def apply_fsdp(model, tied):
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    if tied:
        fully_shard([model.tok_embeddings, model.norm, model.lm_head], mp_policy=mp, reshard_after_forward=False)
    else:
        fully_shard(model.tok_embeddings, mp_policy=mp, reshard_after_forward=True)
        fully_shard([model.norm, model.lm_head], mp_policy=mp, reshard_after_forward=False)
    for block in model.layers:
        fully_shard(block, mp_policy=mp, reshard_after_forward=True)
    fully_shard(model, mp_policy=mp)


def init_weights(model, seq):
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.02)
            else:
                p.fill_(1.0)
        model.freqs.copy_(rope_cache(model.head_dim, seq).to(model.freqs.device))


def run(name, seq, mb, ac, opt, warm=2, timed=3):
    """One case, prepared for common.measure: the model built, sharded and initialised, its step and its batches."""
    m = MODELS[name]
    torch.manual_seed(0)
    with torch.device("meta"):
        model = Decoder(m, seq)
    apply_ac(model, ac)
    apply_fsdp(model, m["tied"])
    model.to_empty(device="cuda")
    init_weights(model, seq)
    optim = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1,
                              fused=opt == "fused", foreach=opt == "foreach")
    info = dict(params=sum(p.numel() for p in model.parameters()), after_init_allocated=torch.cuda.memory_allocated())

    def step(tokens):
        pred = model(tokens[:, :-1])
        loss = F.cross_entropy(pred.flatten(0, 1).float(), tokens[:, 1:].flatten(0, 1))
        del pred
        loss.backward()
        optim.step()
        optim.zero_grad(set_to_none=True)
        return loss.detach()

    return info, step, (lambda: torch.randint(0, m["vocab"], (mb, seq + 1), device="cuda")), warm, timed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--budget-s", type=float, default=400)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    cases = [c for c in grid() if not args.only or c[0] == args.only]
    run_grid_one_rank(29533, args.out, cases, run, ("model", "seq", "micro_batch", "ac", "optimizer"), args.budget_s, {})


if __name__ == "__main__":
    sys.exit(main())
