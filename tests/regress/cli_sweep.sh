#!/usr/bin/env bash
# Black-box sweep of the frenzy CLI as a hostile user (issue 13): every subcommand, every option that takes a
# value (read from the subcommand's own --help, so new options are swept too) x hostile values (huge integers, 2^63,
# -0, nan, inf, 1e308, empty, invalid UTF-8, unicode, hex, junk), every file option x hostile files (deep JSON,
# duplicate keys, integers past 2^64, 1e400, invalid UTF-8, empty, a directory, /dev/zero, a missing file, binary,
# CSV tables missing a column or with short rows), and the client commands against no server. Each case must:
#   - exit 0, 1, 2 or 3 (never a signal) within the timeout (a hang is a failure);
#   - on failure, print a non-empty stderr that names a field or option;
#   - print no library text ("internal error", "json.exception", "what():", stoll/stod, "std::", "terminate");
#   - after `launch` exits 0, the launch.sbatch it wrote passes `bash -n` (the fuzz target fuzz_launch_writer checks
#     that no input adds a line);
#   - print valid UTF-8, and on exit 0 no nan/inf number and no null in stdout (a figure that does not exist, e.g.
#     est_time_s without a token budget, is an absent key: docs/formats.md).
#   tests/regress/cli_sweep.sh BUILD/examples/frenzy [SOURCE_DIR] [TIMEOUT_S] [STRIDE] [OFFSET]
# STRIDE N and OFFSET k run the cases k, k + N, k + 2N, ... of the same ordered list (default: every case). The
# Release build runs every case as N shards (offsets 0..N-1) side by side; the sanitizer build runs one shard, a
# documented sample (tests/regress/CMakeLists.txt).
set -uo pipefail
F="$1"
S="${2:-$(cd "$(dirname "$0")/../.." && pwd)}"
T="${3:-20}"
STRIDE="${4:-1}"
OFFSET="${5:-0}"
case "$STRIDE" in ''|*[!0-9]*|0) echo "cli_sweep.sh: STRIDE=\"$STRIDE\" must be a positive whole number" >&2; exit 2;; esac
case "$OFFSET" in ''|*[!0-9]*) echo "cli_sweep.sh: OFFSET=\"$OFFSET\" must be a whole number" >&2; exit 2;; esac
[ "$OFFSET" -lt "$STRIDE" ] || { echo "cli_sweep.sh: OFFSET=$OFFSET must be less than STRIDE=$STRIDE" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cases=0; fails=0; listed=0
declare -A per_cmd

# ---- inputs -------------------------------------------------------------------------------------------------------
gpt2='"model": {"preset": "gpt2"}'
echo "{$gpt2}" > "$tmp/job.json"
echo '{"model": {"preset": "qwen3-1.7b"}}' > "$tmp/job_tt.json"  # a model torchtitan has a recipe for
echo '{"nodes": [{"gpu": "a100-80g", "count": 1}, {"gpu": "v100-32g", "count": 1}]}' > "$tmp/cluster.json"
printf 'job_id,submit_s,model,seq_len,global_batch,total_tokens,requested_gpus,requested_type\n' > "$tmp/trace.csv"
printf 'a,0,gpt3-125m,2048,8,1e7,1,a100-80g\nb,10,gpt3-125m,2048,8,1e7,,\n' >> "$tmp/trace.csv"
printf 'timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,660.0,1,660.0,vc1\n2017-10-09 08:01:55,7200.0,2,14400.0,vc1\n' > "$tmp/philly.csv"
TH="gpu_type,num_layers,hidden,heads,ffn_hidden,vocab,seq_len,micro_batch,global_batch_seqs,dp,tp,pp,tokens_per_s_per_gpu"
printf '%s\na100-80g,24,2048,16,8192,50304,2048,4,64,8,1,1,12000\nh100-80g,24,2048,16,8192,50304,2048,4,64,8,1,1,30000\n' "$TH" > "$tmp/tput.csv"
MH="id,value_type,framework,model,layers,hidden,heads,kv_heads,ffn_hidden,mlp_act,vocab_padded,tied_emb,seq_len,micro_batch,global_batch,num_gpus,dp,tp,pp,vpp,cp,ep,seq_parallel,sharding,recompute,attention_impl,precision,optimizer,gpu,peak_GiB,peak_bytes,metric,rank_measured,other_flags,source,confidence,notes"
MR="7,measured,Megatron-Core,toy,12,512,8,8,2048,GELU,50304,yes,1024,4,32,8,4,1,2,,1,1,no,none,full,TE,bf16,Adam,H100,3.0,,max_memory_allocated,last rank,,src,high,"
printf '%s\n%s\n' "$MH" "$MR" > "$tmp/mem.csv"
cp "$S/tests/data/launch/megatron_llama3_8b_h100_fp8.sh" "$tmp/train.sh" 2>/dev/null || echo 'torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --micro-batch-size 1 --global-batch-size 8' > "$tmp/train.sh"
echo '{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}}' > "$tmp/ds.json"
printf 'def f(config):\n    config.parallelism.tensor_parallel_degree = 2\n    config.training.max_context_length = 1024\n' > "$tmp/recipe.py"

# Hostile files (each path is a case for every file option).
hf="$tmp/hostile"; mkdir -p "$hf"
echo "{\"a\": $(printf '[%.0s' $(seq 100000))$(printf ']%.0s' $(seq 100000))}" > "$hf/deep.json"
echo "{$gpt2, \"model\": {\"preset\": \"gpt2\"}}" > "$hf/dup_keys.json"
echo "{$gpt2, \"parallel\": {\"dp\": 18446744073709551616}}" > "$hf/u64.json"
echo "{$gpt2, \"training\": {\"seq_len\": 1e400}}" > "$hf/e400.json"
echo "{$gpt2, \"training\": {\"seq_len\": -0}}" > "$hf/neg0.json"
printf '{"model": {"preset": "gpt2\xff\xfe"}, "nodes": [{"gpu": "a\xff", "count": 1}]}' > "$hf/bad_utf8.json"
printf '{"nodes": [{"gpu": "a100-80g", "count": 9223372036854775807}], "model_type": "llama", "num_hidden_layers": 1e30}' > "$hf/big_counts.json"
echo '[1, 2, 3]' > "$hf/array.json"
echo 'null' > "$hf/null.json"
: > "$hf/empty"
head -c 4096 /dev/urandom > "$hf/binary" 2>/dev/null || printf '\x00\x01\x02\xff' > "$hf/binary"
printf '%s\n%s\n' "${TH/,hidden/}" "a100-80g,24,16,8192,50304,2048,4,64,8,1,1,12000" > "$hf/tput_missing_col.csv"
printf '%s\n%s\n' "$TH" "a100-80g,24,2048,16,8192,50304,2048,4,64,8,1,1" > "$hf/tput_short_row.csv"
printf '%s\n%s\n' "$TH" "a100-80g,24,2048,16,8192,50304,2048,4,64,8,1,1,nan" > "$hf/tput_nan.csv"
printf '%s\n%s\n' "${MH/,tied_emb/}" "$MR" > "$hf/mem_missing_col.csv"
printf 'job_id,submit_s,model,seq_len,global_batch,total_tokens,requested_gpus,requested_type\na,nan,gpt3-125m,2048,8,inf,1,\n' > "$hf/trace_nan.csv"
printf 'job_id,submit_s,model,seq_len,global_batch,total_tokens,requested_gpus,requested_type\na,0,gpt3-125m,2048,8,1e7,1,h100-80g\n' > "$hf/trace_unknown_type.csv"
printf 'timestamp,duration,num_gpus,gpu_time,cluster\n2017-02-30 07:01:55,66.0,1,66.0,vc\n' > "$hf/philly_bad_date.csv"
printf 'timestamp,duration,num_gpus,gpu_time,cluster\n2017-02-03 07:01:55,1e400,99999999999999999999,66.0,vc\n' > "$hf/philly_huge.csv"
hostile_files=("$hf"/* / /dev/zero "$tmp/no-such-file.json")
# Launcher configurations that crashed, hung or were read silently wrong (issue 28): for --from only.
hostile_launcher_files=("$S"/tests/data/launch/hostile/*)

hostile_values=(9223372036854775808 18446744073709551616 99999999999999999999999999999999 -9223372036854775809
  1e308 -1e308 1e-320 -0 -1 0 nan -nan inf -inf '' ' ' abc 0x10 3.5 ' 7' '7 ' $'\xff\xfe' 'ünïcødé' '1e400' '--'
  "$(head -c 3000 /dev/zero | tr '\0' 9)")

# ---- one case -------------------------------------------------------------------------------------------------------
# run CMD_LABEL OPTION ARGS... : runs the binary with ARGS, checks the properties; OPTION is the option (or field)
# under test, which a failing run's stderr should name (or any FIELD=/file name).
# A case forks only `timeout` and the CLI (and `bash -n` after a launch that wrote a script): the checks that read
# the output for library text, invalid UTF-8 and nan/inf/null run once over every case's files at the end (bulk_checks),
# and the field-name check reads stderr with bash's own `read` and pattern matching. Forks, not the CLI, were most
# of the sweep's time.
res="$tmp/results"; mkdir -p "$res"
declare -a cmd_of rc_of ok_rc
run() {
  local label="$1" opt="$2"; shift 2
  listed=$((listed + 1))
  [ $(( (listed - 1) % STRIDE )) -eq "$OFFSET" ] || return 0
  [ -e "$tmp/launch-out" ] && rm -rf "$tmp/launch-out"
  local n="$cases" rc why=""
  local out="$res/$n.out" err="$res/$n.err"
  timeout -s KILL "$T" "$F" "$@" >"$out" 2>"$err" </dev/null; rc=$?
  cases=$((cases + 1)); per_cmd[$label]=$(( ${per_cmd[$label]:-0} + 1 ))
  printf -v "cmd_of[$n]" '%q ' "$@"; rc_of[$n]=$rc
  if [ "$rc" -eq 137 ]; then why="hung or killed (timeout ${T}s)";
  elif [ "$rc" -ge 128 ]; then why="killed by signal $((rc - 128))";
  elif [ "$rc" -gt 3 ]; then why="exit code $rc not in {0,1,2,3}";
  elif [ "$rc" -ne 0 ] && [ ! -s "$err" ]; then why="failed with an empty stderr";
  elif [ "$rc" -eq 0 ]; then
    ok_rc+=("$out")
    if [ -f "$tmp/launch-out/launch.sbatch" ] && ! bash -n "$tmp/launch-out/launch.sbatch" 2>/dev/null; then
      why="the written launch.sbatch is not valid bash"
    fi
  else
    # the option, a FIELD=VALUE, any --option, or the file given (its file name, as the last argument)
    local o="${opt#--}"; o="${o#-}" last="${*: -1}" e=""
    o="${o:-=}"
    last="${last#*:}"; [ -n "$last" ] || last="="  # KIND:PATH names PATH
    local base="${last%/}"; base="${base##*/}"; [ -n "$base" ] || base="$last"
    base="${base:0:100}"
    IFS= read -r -d '' e <"$err"  # up to the first NUL byte (none in a message)
    local lower="${e,,}" re_field='[]A-Za-z_0-9]=|--[a-z]'
    if [[ "$lower" != *"${o,,}"* && "$lower" != *"${base,,}"* ]] && ! [[ "$e" =~ $re_field ]]; then
      why="stderr names no field or option"
    fi
  fi
  [ -n "$why" ] && fail_case "$n" "$why"
}

# fail_case N WHY: reports case N (its command line and the start of its stderr).
fail_case() {
  fails=$((fails + 1))
  echo "FAIL   ${cmd_of[$1]}-- $2 (exit ${rc_of[$1]})"; head -c 600 "$res/$1.err" | head -4 | sed 's/^/       | /'
}

# bulk_checks: the checks over every case's output, one process each: library text in stdout or stderr, invalid
# UTF-8 (in a UTF-8 locale `.` matches no invalid byte sequence, so such a line fails -x '.*'), and nan/inf/null in
# the stdout of a case that exited 0.
bulk_checks() {
  local f
  while IFS= read -r f; do f="${f##*/}"; fail_case "${f%.*}" "library exception text"; done < <(
    find "$res" -type f -print0 | xargs -0 -r grep -l -a -E \
      'internal error|json\.exception|what\(\)|stoll|stod|stoi|std::|terminate called|basic_string|Segmentation|Aborted' | sort -u)
  while IFS= read -r f; do f="${f##*/}"; fail_case "${f%.*}" "output is not valid UTF-8"; done < <(
    find "$res" -type f -print0 | xargs -0 -r env LC_ALL=C.UTF-8 grep -l -a -v -x '.*' | sort -u)
  [ "${#ok_rc[@]}" -gt 0 ] || return 0
  while IFS= read -r f; do f="${f##*/}"; fail_case "${f%.*}" "nan/inf/null in stdout"; done < <(
    printf '%s\0' "${ok_rc[@]}" | xargs -0 -r grep -l -a -i -E '(^|[ :,[])(-?nan|-?inf|-?infinity|null)([ ,}]|]|$)')
}

# Options of a subcommand that take a value: "--name" per line (the first long name), from its --help.
value_options() {
  "$F" "$@" --help 2>/dev/null | sed -n 's/^  \(-[a-z],\)\?\(--[a-z0-9-]*\)\(,[-a-z0-9,]*\)\? \+\(TEXT\|INT\|UINT\|FLOAT\)\b.*/\2 \4/p' | grep -v -- '--help'
}
is_file_option() { case "$1" in --job|--spec|--cluster|--data|--trace|--philly|--hf-config|--calibration|--gpu-types|--start|--token-file|--state) return 0;; esac; return 1; }

# sweep LABEL "BASE ARGS" SUBCOMMAND...: each value option of SUBCOMMAND x each hostile value/file, on BASE ARGS.
sweep() {
  local label="$1" base="$2"; shift 2
  local -a b; read -r -a b <<<"$base"
  local opt type v
  while read -r opt type; do
    [ -z "$opt" ] && continue
    if is_file_option "$opt"; then
      for v in "${hostile_files[@]}"; do run "$label" "$opt" "$@" "${b[@]}" "$opt" "$v"; done
    elif [ "$opt" = "--from" ] && [ -z "${SWEEP_SKIP_FROM:-}" ]; then
      for k in megatron torchtitan deepspeed fsdp llm-foundry nemo; do
        for v in "${hostile_files[@]}"; do run "$label" "$opt" "$@" "${b[@]}" "$opt" "$k:$v"; done
      done
      for v in "${hostile_values[@]}"; do run "$label" "$opt" "$@" "${b[@]}" "$opt" "$v"; done
      for k in megatron torchtitan deepspeed fsdp llm-foundry; do
        for v in "${hostile_launcher_files[@]}"; do run "$label" "$opt" "$@" "${b[@]}" "$opt" "$k:$v"; done
      done
    elif [ "$opt" = "--out" ] || [ "$opt" = "-o" ]; then
      for v in / /dev/full "$tmp/no/such/dir/x" "$hf/empty/x" $'\xff'; do run "$label" "$opt" "$@" "${b[@]}" "$opt" "$v"; done
    else
      for v in "${hostile_values[@]}"; do run "$label" "$opt" "$@" "${b[@]}" "$opt" "$v"; done
    fi
  done < <(value_options "$@")
}

# ---- the sweep ------------------------------------------------------------------------------------------------------
cd "$tmp"  # every case runs here (a command's default output folder lands in the scratch folder)
run models '' models; run models '' models --json
run gpus '' gpus --json
sweep gpus "" gpus
sweep estimate "--model gpt2 --gpu a100-80g" estimate
sweep estimate "--model gpt2 --gpu a100-80g --json" estimate
sweep validate "--data $tmp/mem.csv" validate
sweep plan "--job $tmp/job.json --cluster $tmp/cluster.json --json" plan
sweep launch "--job $tmp/job.json --cluster $tmp/cluster.json -o $tmp/launch-out" launch
# The other launchers (torchtitan; llm-foundry; hf writing a LoRA fine-tune): the options above parse the same for
# every launcher, so these sweep what differs, each hostile value in each option whose text the launcher writes into
# its files, and jobs with hostile names (the fuzz target fuzz_launch_writer checks that no such text adds a line to
# any file of any launcher).
echo '{"model": {"preset": "gpt2"}, "training": {"finetune": {"method": "lora"}}}' > "$tmp/job_lora.json"
i=0
for name in $'x\nrm -rf $HOME #' $'x\rimport os' 'x$(touch pwned)' 'x`id`' "x'y\"z" 'x;y&z|w' '../../etc/passwd'; do
  i=$((i + 1))
  quoted="$(printf '%s' "$name" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')"
  printf '{"name": %s, "model": {"preset": "qwen3-1.7b"}}\n' "$quoted" > "$tmp/job_name_$i.json"
  printf '{"name": %s, "model": {"preset": "gpt2"}, "training": {"finetune": {"method": "lora"}}}\n' "$quoted" > "$tmp/job_name_${i}_lora.json"
done
for fw in "torchtitan:$tmp/job_tt.json" "llm-foundry:$tmp/job.json" "hf:$tmp/job_lora.json"; do
  names=("$tmp"/job_name_?.json); [ "${fw%%:*}" = hf ] && names=("$tmp"/job_name_?_lora.json)
  for opt in --run-command --torchtitan-base --partition --account --qos --mem --gres-map; do
    for v in "${hostile_values[@]}"; do
      run launch "$opt" launch --job "${fw#*:}" --cluster "$tmp/cluster.json" -o "$tmp/launch-out" --framework "${fw%%:*}" "$opt" "$v"
    done
  done
  for j in "${names[@]}"; do run launch name launch --job "$j" --cluster "$tmp/cluster.json" -o "$tmp/launch-out" --framework "${fw%%:*}"; done
done
sweep import "--from megatron:$tmp/train.sh" import
sweep import "--from deepspeed:$tmp/ds.json --model gpt2 --world-size 8" import
SWEEP_SKIP_FROM=1 sweep import "--from torchtitan:$tmp/recipe.py --model gpt2 --world-size 8" import
sweep calibrate "--data $tmp/tput.csv --folds 0" calibrate
sweep simulate "--cluster $tmp/cluster.json --trace $tmp/trace.csv --quiet --json" simulate
sweep "trace synth" "--cluster $tmp/cluster.json --philly $tmp/philly.csv --jobs 2" trace synth
# report: every hostile file as its input, hostile output paths; completion: hostile shell names
"$F" plan --job "$tmp/job.json" --cluster "$tmp/cluster.json" --json >"$tmp/plan_doc.json" 2>/dev/null || true
for v in "${hostile_files[@]}"; do run report input report -o "$tmp/report.html" "$v"; done
sweep report "$tmp/plan_doc.json" report
for v in "${hostile_values[@]}"; do run completion shell completion "$v"; done
run completion shell completion bash
run serve '' serve --help
for v in "${hostile_values[@]}"; do run serve --listen serve --state "$tmp/state.db" --listen "$v" --help; done
for srv in http://127.0.0.1:1 http://127.0.0.1:0 'http://[::1' 'ftp://x' '' $'\xff' http://127.0.0.1:99999999999999999999; do
  run submit --server submit --job "$tmp/job.json" --server "$srv"
  run status --server status --server "$srv"
  run cancel --server cancel x --server "$srv"
done
sweep submit "--job $tmp/job.json --server http://127.0.0.1:1" submit
sweep status "--server http://127.0.0.1:1" status
sweep cancel "x --server http://127.0.0.1:1" cancel
# Unknown subcommands and options, positional junk.
run frenzy '' nosuchcommand; run frenzy '' estimate --no-such-option; run frenzy '' $'\xff'; run frenzy '' estimate --model

bulk_checks
echo "cli_sweep: $cases cases (of $listed: stride $STRIDE, offset $OFFSET), $fails failed"
for k in "${!per_cmd[@]}"; do echo "  $k: ${per_cmd[$k]}"; done | sort
[ "$fails" -eq 0 ]
