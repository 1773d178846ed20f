#!/bin/bash
torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 8 --bf16 --fp8-format bogus
