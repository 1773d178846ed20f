#!/bin/bash
torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 'abc
