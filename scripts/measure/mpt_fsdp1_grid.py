#!/usr/bin/env python3
"""Peak memory and step time of llm-foundry-style training steps (MPT on Composer's FSDP1), on one GPU.

The mechanism follows mosaicml/llm-foundry@8c8dd48f and mosaicml/composer@6405188 (read from their source, not
imported: the device machine has neither):
- MPT's decoder (llmfoundry/models/mpt/modeling_mpt.py, layers/blocks.py MPTBlock, layers/attention.py
  GroupedQueryAttention with fused Wqkv, layers/ffn.py MPTMLP with GELU, layers/norm.py LPLayerNorm): learned
  position embedding, no biases, no dropout, embedding tied to the head (SharedEmbedding: F.linear with wte.weight);
  flash attention (here PyTorch SDPA's flash kernel, which saves the same q, k, v, output and log-sum-exp).
- The loss: flash-attn's CrossEntropyLoss with inplace_backward=False (llm-foundry's default loss_fn
  "fused_crossentropy"; Dao-AILab/flash-attention@08124c8f flash_attn/ops/triton/cross_entropy.py): it keeps the
  16-bit logits and an fp32 log-sum-exp per row and allocates the 16-bit gradient in backward. Emulated below by an
  autograd function that works row chunk by row chunk (the Triton kernel works row by row in on-chip memory), so it
  allocates what the kernel allocates. "upcast" runs F.cross_entropy(logits.float()) for comparison.
- Composer's FSDP1 (composer/distributed/dist_strategy.py, mosaic_parallelism.py): FULL_SHARD, each MPTBlock its
  own FSDP unit (llm-foundry's _fsdp_wrap), mixed_precision "DEFAULT" (bf16 parameters, fp32 reduce, bf16 buffers)
  under torch.autocast(bf16) (Composer's amp_bf16), use_orig_params, limit_all_gathers, BACKWARD_PRE prefetch;
  activation checkpointing per MPTBlock, non-reentrant. Composer's DecoupledAdamW steps parameter by parameter
  (here torch AdamW with foreach=False, fused=False: the same per-parameter temporaries).
- The allocator: PyTorch's default (the benchmark tables predate llm-foundry's expandable_segments default).

Usage: python3 mpt_fsdp1_grid.py OUT_DIR [--budget-s 400]
"""
import argparse
import functools
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

# scripts/train/yamls/pretrain/mpt-*.yaml @ 8c8dd48f: d_model, n_heads, n_layers; expansion_ratio 4, vocab 50368
common.MODELS.update({
    "mpt-125m": dict(dim=768, layers=12, heads=12, kv=12, ffn=3072, vocab=50368, tied=True),
    "mpt-350m": dict(dim=1024, layers=24, heads=16, kv=16, ffn=4096, vocab=50368, tied=True),
    "mpt-760m": dict(dim=1536, layers=24, heads=12, kv=12, ffn=6144, vocab=50368, tied=True),
    "mpt-1b": dict(dim=2048, layers=24, heads=16, kv=16, ffn=8192, vocab=50368, tied=True),
    "mpt-3b": dict(dim=2560, layers=32, heads=20, kv=20, ffn=10240, vocab=50368, tied=True),
})


def grid():
    """(model, seq, micro_batch, ac, loss): the benchmark tables' micro-batches first, then comparisons."""
    return [
        ("mpt-125m", 2048, 26, "none", "fused"), ("mpt-350m", 2048, 18, "none", "fused"),
        ("mpt-760m", 2048, 12, "none", "fused"), ("mpt-1b", 2048, 10, "none", "fused"),
        ("mpt-3b", 2048, 6, "none", "fused"), ("mpt-760m", 2048, 24, "none", "fused"),
        ("mpt-1b", 2048, 20, "none", "fused"), ("mpt-125m", 8192, 5, "none", "fused"),
        ("mpt-760m", 8192, 3, "none", "fused"), ("mpt-1b", 8192, 4, "full", "fused"),
        ("mpt-3b", 8192, 3, "none", "fused"), ("mpt-3b", 8192, 8, "full", "fused"),
        ("mpt-125m", 2048, 26, "none", "upcast"), ("mpt-350m", 2048, 18, "none", "upcast"),
        ("mpt-1b", 2048, 10, "full", "fused"),
    ]


class FusedCrossEntropy(torch.autograd.Function):
    """flash-attn's cross entropy, row chunk by row chunk: saves the 16-bit logits and the fp32 lse per row."""
    CHUNK = 2048

    @staticmethod
    def forward(ctx, logits, target):
        lse = torch.empty(logits.shape[0], dtype=torch.float32, device=logits.device)
        for i in range(0, logits.shape[0], FusedCrossEntropy.CHUNK):
            lse[i:i + FusedCrossEntropy.CHUNK] = torch.logsumexp(logits[i:i + FusedCrossEntropy.CHUNK].float(), -1)
        picked = logits.gather(1, target[:, None])[:, 0].float()
        ctx.save_for_backward(logits, target, lse)
        return lse - picked

    @staticmethod
    def backward(ctx, grad_losses):
        logits, target, lse = ctx.saved_tensors
        grad = torch.empty_like(logits)
        for i in range(0, logits.shape[0], FusedCrossEntropy.CHUNK):
            rows = slice(i, i + FusedCrossEntropy.CHUNK)
            p = torch.exp(logits[rows].float() - lse[rows, None])
            p[torch.arange(p.shape[0], device=p.device), target[rows]] -= 1.0
            grad[rows] = (p * grad_losses[rows, None]).to(grad.dtype)
        return grad, None


class LPLayerNorm(nn.LayerNorm):
    def forward(self, x):
        dt = torch.get_autocast_dtype("cuda") if torch.is_autocast_enabled() else x.dtype
        with torch.autocast("cuda", enabled=False):
            return F.layer_norm(x.to(dt), self.normalized_shape, self.weight.to(dt), self.bias.to(dt), self.eps)


class MPTBlock(nn.Module):
    def __init__(self, m):
        super().__init__()
        d = m["dim"]
        self.h, self.hd = m["heads"], d // m["heads"]
        self.norm_1, self.norm_2 = LPLayerNorm(d), LPLayerNorm(d)
        self.Wqkv = nn.Linear(d, 3 * d, bias=False)
        self.out_proj = nn.Linear(d, d, bias=False)
        self.up_proj = nn.Linear(d, m["ffn"], bias=False)
        self.down_proj = nn.Linear(m["ffn"], d, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.Wqkv(self.norm_1(x)).view(b, s, 3, self.h, self.hd).unbind(2)
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.out_proj(o.transpose(1, 2).reshape(b, s, d))
        return x + self.down_proj(F.gelu(self.up_proj(self.norm_2(x))))


class MPT(nn.Module):
    def __init__(self, m, seq):
        super().__init__()
        self.wte = nn.Embedding(m["vocab"], m["dim"])
        self.wpe = nn.Embedding(seq, m["dim"])
        self.blocks = nn.ModuleList(MPTBlock(m) for _ in range(m["layers"]))
        self.norm_f = LPLayerNorm(m["dim"])

    def forward(self, tokens):
        x = self.wte(tokens) + self.wpe(torch.arange(tokens.shape[1], device=tokens.device))[None]
        for block in self.blocks:
            x = block(x)
        return F.linear(self.norm_f(x), self.wte.weight)


def wrap(model, ac):
    from torch.distributed.fsdp import BackwardPrefetch, MixedPrecision, ShardingStrategy
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.bfloat16)
    model = FSDP(model, sharding_strategy=ShardingStrategy.FULL_SHARD, auto_wrap_policy=ModuleWrapPolicy({MPTBlock}),
                 mixed_precision=mp, device_id=torch.cuda.current_device(), use_orig_params=True,
                 limit_all_gathers=True, backward_prefetch=BackwardPrefetch.BACKWARD_PRE)
    if ac == "full":
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
            CheckpointImpl, apply_activation_checkpointing, checkpoint_wrapper)
        apply_activation_checkpointing(
            model, checkpoint_wrapper_fn=functools.partial(checkpoint_wrapper, checkpoint_impl=CheckpointImpl.NO_REENTRANT),
            check_fn=lambda mod: isinstance(mod, MPTBlock))
    return model


def run(name, seq, mb, ac, loss_kind, warm=2, timed=3):
    m = common.MODELS[name]
    torch.manual_seed(0)
    model = MPT(m, seq).cuda()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.02)
    params = sum(p.numel() for p in model.parameters())
    model = wrap(model, ac)
    optim = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.0, foreach=False, fused=False)
    info = dict(params=params, after_init_allocated=torch.cuda.memory_allocated())

    def step(tokens):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens[:, :-1]).flatten(0, 1)
        target = tokens[:, 1:].flatten()
        if loss_kind == "fused":
            loss = FusedCrossEntropy.apply(logits, target).mean()
        else:
            loss = F.cross_entropy(logits.float(), target)
        del logits
        loss.backward()
        optim.step()
        optim.zero_grad(set_to_none=True)
        return loss.detach()

    return info, step, (lambda: torch.randint(0, m["vocab"], (mb, seq + 1), device="cuda")), warm, timed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--budget-s", type=float, default=400)
    ap.add_argument("--case", type=int, default=-1, help="run only grid()[CASE]: one process per case, since FSDP1 units left behind by a case keep their memory")
    args = ap.parse_args()
    cases = grid() if args.case < 0 else grid()[args.case:args.case + 1]
    common.run_grid_one_rank(29534, args.out, cases, run, ("model", "seq", "micro_batch", "ac", "loss"), args.budget_s,
                             {"mechanism": "llm-foundry MPT on FSDP1 (emulated, see scripts/measure/mpt_fsdp1_grid.py)"})


if __name__ == "__main__":
    sys.exit(main())
