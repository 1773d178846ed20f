#!/usr/bin/env python3
"""Peak memory and step time of real Hugging Face training steps (Trainer-style loop) on one GPU.

What Trainer does with bf16=True, written out: transformers' LlamaForCausalLM with SDPA attention, the forward and
its loss (ForCausalLMLoss upcasts the logits to fp32) under torch.autocast(bf16), torch's fused AdamW over the
trainable parameters (Trainer's default optim "adamw_torch_fused"), gradient checkpointing through
model.gradient_checkpointing_enable(use_reentrant=False). Three methods:
  lora       PEFT LoRA r=16, alpha 32, dropout 0.05 on every linear ("all-linear"), base weights bf16, adapters fp32
             (PEFT's autocast_adapter_dtype default)
  full_bf16  every weight bf16 (transformers 5 loads checkpoints in their bf16 dtype), AdamW states bf16
  full_amp   fp32 weights, bf16 autocast (Trainer(bf16=True) on a model loaded in fp32)
Usage: python3 hf_peft_grid.py OUT_DIR [--budget-s 300]; one JSON line per run in OUT_DIR/runs.jsonl.
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import MODELS, run_grid  # noqa: E402


def grid():
    g = []
    for seq, mb, gc in ((1024, 1, False), (2048, 1, False), (4096, 1, False), (2048, 4, False), (2048, 1, True),
                        (4096, 1, True), (2048, 4, True), (4096, 4, True), (8192, 1, True)):
        g.append(("llama-3.1-8b", seq, mb, gc, "lora"))
    for mb, gc in ((1, False), (4, False), (4, True), (8, True)):
        g.append(("llama-3.2-3b", 2048, mb, gc, "lora"))
    g += [("llama-3.2-1b", 2048, 8, False, "lora"), ("llama-3.2-1b", 2048, 8, True, "lora")]
    for method in ("full_bf16", "full_amp"):
        g += [("llama-3.2-1b", 2048, 1, False, method), ("llama-3.2-1b", 2048, 4, False, method),
              ("llama-3.2-1b", 2048, 4, True, method), ("llama-3.2-3b", 2048, 2, False, method),
              ("llama-3.2-3b", 2048, 2, True, method), ("llama-3.1-8b", 2048, 1, True, method)]
    g += [("llama-3.1-8b", 2048, 2, True, "full_bf16"), ("llama-3.1-8b", 2048, 1, False, "full_bf16")]
    return g


def build(name, method, gc):
    from transformers import LlamaConfig, LlamaForCausalLM
    m = MODELS[name]
    cfg = LlamaConfig(hidden_size=m["dim"], intermediate_size=m["ffn"], num_hidden_layers=m["layers"],
                      num_attention_heads=m["heads"], num_key_value_heads=m["kv"], vocab_size=m["vocab"],
                      tie_word_embeddings=m["tied"], max_position_embeddings=8192, attn_implementation="sdpa",
                      use_cache=False)
    dtype = torch.float32 if method == "full_amp" else torch.bfloat16
    prev = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device("cuda"):
            model = LlamaForCausalLM(cfg)
    finally:
        torch.set_default_dtype(prev)
    if gc:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if method == "lora":
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules="all-linear",
                                                 task_type="CAUSAL_LM"))
    model.train()
    return model


def run(name, seq, mb, gc, method, warm=2, timed=3):
    m = MODELS[name]
    torch.manual_seed(0)
    model = build(name, method, gc)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.AdamW(trainable, lr=1e-4, weight_decay=0.0, fused=True)
    info = dict(params=sum(p.numel() for p in model.parameters()), trainable_params=sum(p.numel() for p in trainable),
                trainable_dtype=str(trainable[0].dtype), attn=str(getattr(model.config, "_attn_implementation", "")))

    def step(tokens):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=tokens, labels=tokens).loss
        loss.backward()
        optim.step()
        optim.zero_grad(set_to_none=True)
        return loss.detach()

    return info, step, (lambda: torch.randint(0, m["vocab"], (mb, seq), device="cuda")), warm, timed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--budget-s", type=float, default=300)
    args = ap.parse_args()
    import peft
    import transformers
    extra = dict(transformers=transformers.__version__, peft=peft.__version__)
    run_grid(args.out, grid(), run, ("model", "seq", "micro_batch", "grad_ckpt", "method"), args.budget_s, extra)


if __name__ == "__main__":
    sys.exit(main())
