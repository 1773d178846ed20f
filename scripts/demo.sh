#!/usr/bin/env bash
# Sets everything up, builds, and runs the main job on the bundled examples: estimate, plan, launch files, simulate.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFRENZY_BUILD_TESTS=OFF -DFRENZY_BUILD_BENCHMARKS=OFF \
  -DFRENZY_BUILD_PYTHON=OFF >/dev/null
cmake --build build -j"$(nproc)" --target frenzy_cli
F=build/examples/frenzy
echo; echo "== Will Llama 3.1 8B (seq 8192, micro-batch 2, FSDP) fit on 8 H100s, and how fast? =="
$F estimate --job examples/jobs/llama-3.1-8b-fsdp.json --gpus 8xh100-80g
for job in plan-gpt3-125m plan-llama-2-7b-fp16 plan-llama-3.1-70b; do
  echo; echo "== frenzy plan --job examples/jobs/$job.json --cluster examples/clusters/three-type.json =="
  $F plan --job "examples/jobs/$job.json" --cluster examples/clusters/three-type.json --top 5
done
echo; echo "== frenzy plan --html: the Llama 2 7B plans on the bundled cluster as a report (time against cost) =="
$F plan --job examples/jobs/plan-llama-2-7b.json --cluster examples/clusters/three-type.json --price example \
  --objective cost --top 3 --html build/plan-report.html
echo "open build/plan-report.html in a browser: every plan's time against cost, the frontier, the table"
out="$(mktemp -d)"
echo; echo "== frenzy launch: the best Megatron-LM plan of Llama 3.1 8B on 16 A100-80G, as a Slurm batch script =="
$F launch --job examples/jobs/plan-llama-3.1-8b.json --gpus 16xa100-80g --framework megatron -o "$out"
echo; echo "== frenzy simulate: the bundled cluster, a short Philly-derived trace, HAS against every baseline =="
$F simulate --cluster examples/clusters/three-type.json --trace examples/traces/small.csv --policy all
