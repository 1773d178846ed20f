#!/bin/bash
# Plan outputs of a CLI on a fixed set of 405 cases, to compare two builds byte for byte (a search shortcut must not
# change a plan): the 9 bundled jobs x the 5 bundled clusters (examples/clusters, c16k.json left out: a scheduler
# trace's cluster) x 9 option sets. Writes N.json (stdout of `plan --json`) and N.err (stderr, then the exit status).
# usage: scripts/plan_identity.sh CLI OUTDIR      compare: diff -r OUTDIR_BEFORE OUTDIR_AFTER
set -u
cli=$(realpath "$1"); out=$2; mkdir -p "$out"; out=$(realpath "$out")
cd "$(dirname "$0")/.."
n=0
for j in examples/jobs/*.json; do for c in examples/clusters/*.json; do
  [ "$(basename "$c")" = c16k.json ] && continue
  for v in "" "--framework megatron" "--framework deepspeed" "--framework fsdp" "--objective gpu-hours" \
           "--max-gpus 64" "--mixed" "--mixed --max-gpus 256" "--whole-nodes --objective gpu-hours"; do
    n=$((n+1))
    # shellcheck disable=SC2086
    timeout 120 "$cli" plan --job "$j" --cluster "$c" $v --json > "$out/$n.json" 2> "$out/$n.err"
    echo $? >> "$out/$n.err"
  done
done; done
echo "$n cases in $out"
