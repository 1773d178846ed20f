#!/usr/bin/env bash
# Sets everything up, builds, and runs the main job on the bundled example: plan jobs, then simulate.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFRENZY_BUILD_TESTS=OFF -DFRENZY_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target frenzy_cli
F=build/examples/frenzy
echo; echo "== frenzy estimate: Llama 3.1 8B, seq 8192, micro-batch 2, FSDP over 8 GPUs, on an H100 =="
$F estimate --spec examples/jobs/llama-3.1-8b-fsdp.json --gpu h100-80g
for job in plan-gpt3-125m plan-llama-2-7b-fp16 plan-llama-3.1-70b; do
  echo; echo "== frenzy plan --job examples/jobs/$job.json --cluster examples/clusters/three-type.json =="
  $F plan --job "examples/jobs/$job.json" --cluster examples/clusters/three-type.json --top 5
done
echo; echo "== frenzy simulate: the bundled cluster, a short Philly-derived trace, HAS against every baseline =="
$F simulate --cluster examples/clusters/three-type.json --trace examples/traces/small.csv --policy all
