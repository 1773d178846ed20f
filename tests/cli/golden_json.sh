#!/usr/bin/env bash
# The CLI's --json outputs on the bundled examples, compared byte for byte with tests/data/golden_cli/ (issue 22:
# the one-place-per-concern redesign must not change one byte of what a program reads). Scheduler-latency keys
# (sched_mean_us, sched_p99_us) are wall-clock measurements and are masked; everything else is compared as is.
#   golden_json.sh FRENZY SOURCE_DIR            compare (exit 1 and a diff on the first difference)
#   golden_json.sh FRENZY SOURCE_DIR --update   rewrite the golden files (review the diff before committing)
set -u
F=$1; S=$2; MODE=${3:-compare}
G=$S/tests/data/golden_cli
E=$S/examples
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
failed=0; n=0
mask() { sed -E 's/("sched_(mean|p99)_us": )[-0-9.e+]+/\1"(time)"/'; }
run() {  # run NAME ARGS...: the command's stdout (masked) is the golden file NAME.json
    local name=$1; shift
    n=$((n + 1))
    local rc=0
    (cd "$T" && "$F" "$@") > "$T/out" 2> "$T/err" || rc=$?
    if [ $rc -eq 4 ] && [ "$1" = estimate ]; then rc=0; fi  # estimate's "does not fit" (its --json is still the output)
    if [ $rc -ne 0 ]; then
        echo "FAIL $name: exit $rc running: frenzy $*"; sed 's/^/  /' "$T/err"; failed=$((failed + 1)); return
    fi
    mask < "$T/out" > "$T/$name.json"
    if [ "$MODE" = --update ]; then mkdir -p "$G"; cp "$T/$name.json" "$G/$name.json"; return; fi
    if ! diff -u "$G/$name.json" "$T/$name.json" > "$T/diff"; then
        echo "FAIL $name: frenzy $* differs from tests/data/golden_cli/$name.json"; head -40 "$T/diff"; failed=$((failed + 1))
    fi
}
# catalogs
run models models --json
run gpus gpus --json
# estimate: every framework, a MoE, a pipeline, an import
run estimate_fsdp_h100 estimate --job "$E/jobs/llama-3.1-8b-fsdp.json" --gpu h100-80g --json
run estimate_megatron_tp_sp estimate --model llama-3.1-8b --seq-len 4096 --tp 2 --dp 4 --sp --sharding optimizer --recompute selective --gpu a100-80g --json
run estimate_megatron_pp_vpp estimate --model llama-3.1-70b --seq-len 8192 --global-batch 64 --tp 4 --pp 4 --vpp 5 --schedule interleaved --dp 2 --sp --framework megatron --gpu h100-80g --json
run estimate_mixtral_ep estimate --model mixtral-8x7b --seq-len 4096 --tp 2 --ep 4 --dp 4 --sp --framework megatron --gpu h100-80g --json
run estimate_deepspeed_zero3 estimate --model llama-2-13b --seq-len 4096 --dp 8 --sharding full --framework deepspeed --gpu a100-80g --json
run estimate_ddp estimate --model gpt3-1.3b --seq-len 2048 --dp 4 --framework ddp --gpu v100-32g --precision fp16-mixed --json
run estimate_deepseek_v3_fp8 estimate --model deepseek-v3 --precision fp8-mixed --gpus 8xh200 --json
run estimate_lora estimate --model llama-3.1-8b --finetune lora --gpu a100-80g --json
run estimate_from_megatron estimate --from "megatron:$S/tests/data/launch/megatron_llama3_8b_h100_fp8.sh" --gpu h100-80g --json
# plan: every bundled job on the bundled cluster, prices and cost
for j in "$E"/jobs/plan-*.json; do
    b=$(basename "$j" .json)
    run "plan_${b#plan-}" plan --job "$j" --cluster "$E/clusters/three-type.json" --price example --json
done
run plan_fsdp_gpus plan --job "$E/jobs/llama-3.1-8b-fsdp.json" --gpus 8xa100-80g,16xh100-80g --margin 0.02 --json
run plan_cost plan --model gpt3-125m --global-batch 64 --total-tokens 1e9 --gpus 16xa100-80g --price example --objective cost --whole-nodes --json
# launch: every launcher, its --json and every file it writes (run in $T, so the paths are relative)
for fw in megatron torchtitan deepspeed fsdp; do
    script=(); case $fw in deepspeed|fsdp) script=(--run-command train.py);; esac  # they configure the user's script
    run "launch_$fw" launch --model llama-3.1-8b --seq-len 4096 --global-batch 64 --total-tokens 1e9 --gpus 16xh100-80g --framework "$fw" "${script[@]}" -o "launch_$fw" --json
    for f in "$T/launch_$fw"/*; do
        [ -f "$f" ] || continue
        n=$((n + 1)); g="launch_${fw}_file_$(basename "$f" | tr . _)"
        if [ "$MODE" = --update ]; then cp "$f" "$G/$g"; elif ! diff -u "$G/$g" "$f" > "$T/diff"; then
            echo "FAIL $g: the file launch --framework $fw wrote differs from tests/data/golden_cli/$g"; head -40 "$T/diff"; failed=$((failed + 1))
        fi
    done
done
# import: every launcher format
run import_megatron_sh import --from "megatron:$S/tests/data/launch/megatron_llama3_8b_h100_fp8.sh" --world-size 8 --json
run import_megatron_yaml import --from "megatron:$S/tests/data/launch/megatron_llama3_8b_h100_fp8.yaml" --world-size 8 --json
# (the world size each file was written for: one that contradicts the file is an error)
run import_deepspeed import --from "deepspeed:$S/tests/data/launch/golden/deepspeed_zero3/ds_config.json" --model llama-2-7b --world-size 16 --json
for dw in torchtitan_fsdp:16 torchtitan_tp_pp:32 fsdp_shard_grad_op:16 ddp:8; do
    d="${dw%:*}"
    for f in "$S"/tests/data/launch/golden/$d/*; do
        case $f in *.py) kind=torchtitan ;; *.json) kind=fsdp ;; *) continue ;; esac
        run "import_${d}_$(basename "$f" | tr . _)" import --from "$kind:$f" --model llama-3.1-8b --world-size "${dw#*:}" --json
    done
done
# simulate: every policy on the bundled trace
for p in has fcfs tiresias gavel sia gavel-las rubick; do
    run "simulate_$p" simulate --cluster "$E/clusters/three-type.json" --trace "$E/traces/small.csv" --policy "$p" --json
done
run simulate_has_moves_free simulate --cluster "$E/clusters/three-type.json" --trace "$E/traces/small.csv" --policy has --has-moves --sizes free --json
run simulate_all_free simulate --cluster "$E/clusters/three-type.json" --trace "$E/traces/small.csv" --policy all --sizes free --json
if [ "$MODE" = --update ]; then echo "wrote $n golden files to $G"; exit 0; fi
echo "$((n - failed)) of $n --json outputs identical to tests/data/golden_cli/"
[ $failed -eq 0 ]
