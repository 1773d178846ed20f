#!/bin/bash
A=$((9223372036854775807*2))
B=$((-9223372036854775807-1))
C=$(($B/-1))
torchrun pretrain_gpt.py --num-layers $A
