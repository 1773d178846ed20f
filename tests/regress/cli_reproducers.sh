#!/usr/bin/env bash
# CLI-level reproducers of issue 13: each command line once crashed (SIGFPE/SIGSEGV), hung, printed a library's
# exception text, or was silently accepted. Each must now exit with the expected code within 20 s, print a message
# naming the field, and print no "internal error", nlohmann/std exception text or invalid UTF-8.
#   tests/regress/cli_reproducers.sh BUILD/examples/frenzy/frenzy SOURCE_DIR
set -uo pipefail
F="$1"
S="${2:-$(cd "$(dirname "$0")/../.." && pwd)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0

# check must RC REGEX -- ARGS...
check() {
  local kind="$1" want_rc="$2" regex="$3"; shift 4
  local out rc why=""
  out="$(timeout 20 "$F" "$@" 2>&1)"; rc=$?
  if [ "$rc" -eq 124 ]; then why="hung (killed after 20 s)";
  elif [ "$rc" -ge 128 ]; then why="killed by signal $((rc - 128))";
  elif [ "$want_rc" = nonzero ] && [ "$rc" -eq 0 ]; then why="exit 0, expected non-zero";
  elif [ "$want_rc" != nonzero ] && [ "$rc" -ne "$want_rc" ]; then why="exit $rc, expected $want_rc";
  elif ! grep -q -E -- "$regex" <<<"$out"; then why="output does not match /$regex/";
  elif grep -q -E 'internal error|json\.exception|what\(\)|stoll|stod|std::' <<<"$out"; then why="library exception text";
  elif ! iconv -f UTF-8 -t UTF-8 <<<"$out" >/dev/null 2>&1; then why="output is not valid UTF-8";
  elif grep -q -E '[0-9]{26,}' <<<"$out"; then why="a number of more than 25 digits";
  fi
  local shown
  shown="$(printf '%q ' "$@")"  # no raw bytes in the log
  if [ -z "$why" ]; then
    echo "ok     $shown"
    passes=$((passes + 1))
  else
    echo "FAIL   $shown -- $why"; printf '%s\n' "$out" | head -5 | sed 's/^/       | /'; fails=$((fails + 1))
  fi
}

gpt2='"model": {"preset": "gpt2"}'
echo "{$gpt2, \"training\": {\"seq_len\": $(printf '[%.0s' $(seq 100000))$(printf ']%.0s' $(seq 100000))}}" > "$tmp/deep.json"
echo "{$gpt2, \"parallel\": {\"dp\": 18446744073709551615}}" > "$tmp/dp_u64.json"
echo "{$gpt2, \"parallel\": {\"dp\": 1, \"dp\": 2}}" > "$tmp/dup.json"
echo '[1, 2]' > "$tmp/array.json"
echo "{$gpt2, \"training\": {\"total_tokens\": 1e400}}" > "$tmp/huge.json"
echo '{"model": {"preset": "gpt2", "layers": 4611686018427387904}}' > "$tmp/layers.json"
echo "{$gpt2, \"training\": {\"global_batch\": 1000000000000000}}" > "$tmp/gb.json"
echo '{"nodes": [{"gpu": "x", "count": 1}], "gpu_types": [{"name": "x", "memory_mib": 1e308, "bf16_tflops": 100, "mem_bw_GBps": 100, "link_GBps": 10}]}' > "$tmp/mem.json"
echo '{"nodes": [{"gpu": "a100-80g", "count": 1}]}' > "$tmp/cluster.json"
echo "{$gpt2}" > "$tmp/job.json"
printf '{"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 0, "intermediate_size": 128, "vocab_size": 100}' > "$tmp/kv0.json"
H="id,value_type,framework,model,layers,hidden,heads,kv_heads,ffn_hidden,mlp_act,vocab_padded,tied_emb,seq_len,micro_batch,global_batch,num_gpus,dp,tp,pp,vpp,cp,ep,seq_parallel,sharding,recompute,attention_impl,precision,optimizer,gpu,peak_GiB,peak_bytes,metric,rank_measured,other_flags,source,confidence,notes"
R="7,measured,Megatron-Core,toy,12,512,8,8,2048,GELU,50304,yes,1024,4,32,8,4,1,2,,1,1,no,none,full,TE,bf16,Adam,H100,PEAK,,max_memory_allocated,last rank,,src,high,"
printf '%s\n%s\n' "${H/,tied_emb/}" "${R/PEAK/3.0}" > "$tmp/missing_col.csv"
printf '%s\n%s\n' "$H,dp" "${R/PEAK/3.0},4" > "$tmp/dup_col.csv"
printf '%s\n%s\n' "$H" "${R/PEAK/3.0},extra" > "$tmp/long_row.csv"
printf '%s\n%s\n' "$H" "${R/PEAK/0}" > "$tmp/zero_peak.csv"
printf '%s\n%s\n' "$H" "${R/PEAK/-3}" > "$tmp/neg_peak.csv"
printf '%s\n%s\n' "$H" "${R/PEAK/3.0}" > "$tmp/good.csv"

# SIGFPE: micro_batch x dp and pp x vpp wrapping to 0.
check must 2 'micro-batch.*4294967296 must be in' -- estimate --model gpt2 --micro-batch 4294967296 --dp 4294967296 --global-batch 8
check must 2 '--pp.*4294967296 must be in' -- estimate --model gpt2 --pp 4294967296 --vpp 4294967296 --schedule interleaved
# SIGSEGV: 10^5-deep array in a typed field.
check must 2 'training.seq_len\[0\].*nests deeper than 64' -- estimate --spec "$tmp/deep.json"
# Silent acceptance.
check must 2 'parallel.dp=18446744073709551615 is outside the 64-bit integer range' -- estimate --spec "$tmp/dp_u64.json"
check must 2 'parallel.dp is given twice' -- estimate --spec "$tmp/dup.json"
check must 2 'the document=.* must be a JSON object' -- estimate --spec "$tmp/array.json"
check must 2 'training.total_tokens=1e400 is outside the range of a double' -- estimate --spec "$tmp/huge.json"
check must 2 'memory_mib=.*must be in' -- plan --job "$tmp/job.json" --cluster "$tmp/mem.json"
check must 2 'num_key_value_heads=0' -- estimate --hf-config "$tmp/kv0.json"
check must 2 'row has 37 fields but the header has 36' -- validate --data "$tmp/missing_col.csv"
check must 2 'column "dp" appears twice' -- validate --data "$tmp/dup_col.csv"
check must 2 'row has 38 fields' -- validate --data "$tmp/long_row.csv"
check must 2 'peak_GiB=0 must be positive' -- validate --data "$tmp/zero_peak.csv"
check must 2 'peak_GiB=-3 must be in' -- validate --data "$tmp/neg_peak.csv"
# Hangs: work linear in a number's magnitude, unbounded reads.
check must 2 'model.layers=4611686018427387904 must be in 1..100000' -- estimate --spec "$tmp/layers.json"
check must 2 'training.global_batch=1000000000000000 must be in' -- plan --job "$tmp/gb.json" --cluster "$tmp/cluster.json"
check must 1 '/dev/zero is not a regular file' -- estimate --spec /dev/zero
check must 1 '/dev/zero is not a regular file' -- validate --data /dev/zero
check must 1 '/dev/zero is not a regular file' -- calibrate --data /dev/zero
check must 1 '/dev/zero is not a regular file' -- simulate --trace /dev/zero --cluster "$S/examples/clusters/three-type.json"
check must 1 '/dev/zero is not a regular file' -- plan --job /dev/zero --cluster "$tmp/cluster.json"
# Unclear errors: raw bytes, 309-digit bounds.
check must 2 '\\xFF' -- estimate --model $'\xff' --json
check must 2 'top' -- plan --job "$tmp/job.json" --cluster "$tmp/cluster.json" --top abc
# CLI flags: whole-number and finite-number validators (examples/frenzy/cli.hpp).
check must 2 'seq-len.*18446744073709551616.* is out of range' -- estimate --model gpt2 --seq-len 18446744073709551616
check must 2 'margin=nan' -- estimate --model gpt2 --gpu a100-80g --margin nan
check must 2 'tolerance.*nan must be a finite number' -- validate --data "$tmp/good.csv" --tolerance nan
check must 2 'price.*inf.*must be a finite number' -- plan --job "$tmp/job.json" --cluster "$tmp/cluster.json" --price a100-80g=inf --objective cost

# Found by tests/regress/cli_sweep.sh: launcher configurations read without the bounded reader or strict JSON.
echo "[$(printf '[%.0s' $(seq 100000))$(printf ']%.0s' $(seq 100000))]" > "$tmp/deep_args.json"
echo '{"num-layers": 1e400}' > "$tmp/e400_args.json"
printf '["--num-layers", "\xff"]' > "$tmp/utf8_args.json"
echo '{"train_micro_batch_size_per_gpu": 18446744073709551615}' > "$tmp/ds_u64.json"
echo '["--num-layers", "abc"]' > "$tmp/bad_int_args.json"
: > "$tmp/empty.json"
check must 2 'nests deeper than 64' -- estimate --model gpt2 --from "megatron:$tmp/deep_args.json"
check must 2 'megatron arguments: num-layers=1e400 is outside the range of a double' -- estimate --model gpt2 --from "megatron:$tmp/e400_args.json"
check must 1 'utf8_args.json: megatron arguments: invalid JSON at line 1' -- estimate --model gpt2 --from "megatron:$tmp/utf8_args.json"
check must 1 'utf8_args.json: invalid JSON at line 1' -- import --model gpt2 --from "fsdp:$tmp/utf8_args.json"
check must 1 '/dev/zero is not a regular file' -- estimate --model gpt2 --from megatron:/dev/zero
check must 1 '/dev/zero is not a regular file' -- estimate --model gpt2 --from torchtitan:/dev/zero
check must 1 '/dev/zero is not a regular file' -- import --model gpt2 --from deepspeed:/dev/zero
check must 1 'is a directory' -- import --model gpt2 --from fsdp:/
check must 1 'empty.json: invalid JSON at line 1, column 1' -- import --model gpt2 --from "deepspeed:$tmp/empty.json"
check must 2 'train_micro_batch_size_per_gpu=18446744073709551615 must be an integer' -- import --model gpt2 --from "deepspeed:$tmp/ds_u64.json"
check must 2 'bad_int_args.json: .*--num-layers=abc is not an integer' -- import --from "megatron:$tmp/bad_int_args.json"

# Found by tests/regress/cli_sweep.sh: a duration option's text buffer freed while CLI11 still wrote to it (SIGSEGV
# for `--startup 0`), and the serve client: unclear errors for a bad --server, /dev/zero read as a token file.
printf 'job_id,submit_s,model,seq_len,global_batch,total_tokens,requested_gpus,requested_type\na,0,gpt3-125m,2048,8,1e7,1,a100-80g\n' > "$tmp/trace1.csv"
check must 0 'avg_jct_s' -- simulate --cluster "$tmp/cluster.json" --trace "$tmp/trace1.csv" --quiet --json --startup 0
check must 0 'avg_jct_s' -- simulate --cluster "$tmp/cluster.json" --trace "$tmp/trace1.csv" --quiet --json --restart 3.5 --mtbf 7 --repair 60 --has-aging 1h
check must 2 '--server="ftp://x" must be http://HOST:PORT' -- status --server ftp://x
check must 2 '--server="http://127.0.0.1:99999999999999999999" must be' -- status --server http://127.0.0.1:99999999999999999999
check must 2 '--server="\\xFF" must be' -- cancel x --server $'\xff'
check must 1 'cannot reach frenzy serve at --server=http://127.0.0.1:1' -- status --server http://127.0.0.1:1
check must 2 '--token-file: /dev/zero is not a regular file' -- status --server http://127.0.0.1:1 --token-file /dev/zero
check must 2 '--job=.*dup.json.*parallel.dp is given twice' -- submit --job "$tmp/dup.json" --server http://127.0.0.1:1
check must 2 '--deadline=\\xFF\\xFE is not valid UTF-8' -- submit --job "$tmp/job.json" --server http://127.0.0.1:1 --deadline $'\xff\xfe'
TH="gpu_type,num_layers,hidden,heads,ffn_hidden,vocab,seq_len,micro_batch,global_batch_seqs,dp,tp,pp,tokens_per_s_per_gpu"
printf '%s\na100-80g,24,2048,16,8192,50304,2048,4,64,8,1,1,12000\n' "$TH" > "$tmp/tput.csv"
check must 0 'wrote .*\\xFF' -- calibrate --data "$tmp/tput.csv" --folds 0 -o "$tmp/"$'\xff'  # raw bytes were printed

# Issue 28: the newer surfaces. Importer inputs that crashed (SIGSEGV from unbounded recursion, SIGFPE), hung, or
# were read silently wrong (tests/data/launch/hostile, also the fuzz seeds), and flags that took NaN, -1 or "".
H="$S/tests/data/launch/hostile"
M=(--model llama-3.1-8b --world-size 8 --seq-len 4096)
check must 2 'nested.sh: line 2: \$\(\( \)\) nests parentheses deeper than 64' -- import --from "megatron:$H/nested.sh"
check must 2 'nested_tt.py: line 2: config.training.steps = \(+.* is not an integer' -- import --from "torchtitan:$H/nested_tt.py" "${M[@]}"
check must 2 'tt_longline.py: line 2: config.training.steps = x+.* is not an integer' -- import --from "torchtitan:$H/tt_longline.py" "${M[@]}"
check must 2 'double.sh: line 21: a value grows past 1 MiB' -- import --from "megatron:$H/double.sh"
check must 2 'array_double.sh: line [0-9]+: an array grows past 65536 elements' -- import --from "megatron:$H/array_double.sh"
check must 2 'ds_big.json: gradient_accumulation_steps=34359738368 must be in 1..1073741824' -- import --from "deepspeed:$H/ds_big.json" "${M[@]}"
check must 2 'ds_both.json: bf16.enabled and fp16.enabled are both true' -- import --from "deepspeed:$H/ds_both.json" "${M[@]}"
check must 2 'tt_ctx0.py: line 2: config.training.max_context_length=0 must be in 1..' -- import --from "torchtitan:$H/tt_ctx0.py" "${M[@]}"
check must 2 'tt_dup.py: line 3: config.training.steps is assigned again \(first on line 2\)' -- import --from "torchtitan:$H/tt_dup.py" "${M[@]}"
check must 2 "quote.sh: line 2: unterminated ' quote" -- import --from "megatron:$H/quote.sh"
check must 2 'np0.sh: torchrun --nproc-per-node=0 must be in 1..' -- import --from "megatron:$H/np0.sh"
check must 2 'fp8bogus.sh: --fp8-format="bogus" must be one of e4m3 \| hybrid' -- import --from "megatron:$H/fp8bogus.sh"
check must 2 'qg0.sh: --num-query-groups=0 must be in 1..' -- import --from "megatron:$H/qg0.sh"
check must 2 'dup.yaml: megatron YAML arguments: model.seq_len is given twice \(line 3\)' -- import --from "megatron:$H/dup.yaml"
check must 2 'switch_value.json: --swiglu is a switch and takes no value \(given "no"\)' -- import --from "megatron:$H/switch_value.json"
check must 2 'overflow_arith.sh: --num-layers=\$\(\(9223372036854775807\*2\)\) is not an integer' -- import --from "megatron:$H/overflow_arith.sh"  # overflow: the text stays
echo '{"model": {"preset": "mixtral-8x7b", "moe": {"capacity_factor": 1e308}}}' > "$tmp/cf.json"
check must 2 'model.moe.capacity_factor=1e\+308 must be at most model.moe.experts=8' -- estimate --job "$tmp/cf.json" --gpu h100-80g
printf 'job_id,submit_s,model,seq_len,global_batch,total_tokens,requested_gpus,requested_type\na,0,gpt3-125m,2048,8,1e7,1,a100-80g\n' > "$tmp/trace28.csv"
for flag in --has-slack --has-equi --has-max-share --has-idle-slack; do
  check must 2 "$flag: .*(nan|finite)" -- simulate --cluster "$tmp/cluster.json" --trace "$tmp/trace28.csv" --quiet "$flag" nan
done
check must 2 '--gavel-round=0.001 must be in \[10, ' -- simulate --cluster "$tmp/cluster.json" --trace "$tmp/trace28.csv" --quiet --policy gavel --gavel-round 0.001
check must 2 '--seed: "-1" must not be negative' -- simulate --cluster "$tmp/cluster.json" --trace "$tmp/trace28.csv" --quiet --seed -1
printf 'timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,660.0,1,660.0,vc1\n' > "$tmp/philly.csv"
check must 2 '--min-duration: "nan" is not a finite number' -- trace synth --cluster "$tmp/cluster.json" --philly "$tmp/philly.csv" --min-duration nan
check must 2 '--precision: an empty value is not allowed' -- estimate --model gpt2 --precision ''
check must 2 '--gpu: an empty value is not allowed' -- estimate --model gpt2 --gpu ''
check must 2 '--time-margin: "nan" is not a finite number' -- launch --model gpt2 --framework megatron --cluster "$tmp/cluster.json" -o "$tmp/l28" --time-margin nan
check must 2 'the job is invalid on every layout tried: .*fp8' -- plan --model llama-3.1-8b --cluster "$tmp/cluster.json" --fp8-param-gather  # a bad input: 2 (issue 57)
check must 0 'wrote' -- launch --model gpt2 --framework megatron --cluster "$tmp/cluster.json" -o "$tmp/l28" --total-tokens 1e18
if grep -q '^# time limit capped at Slurm.s largest, 24855-00:00:00' "$tmp/l28/launch.sbatch" &&
   grep -q '^#SBATCH --time=24855-00:00:00$' "$tmp/l28/launch.sbatch"; then
  echo "ok     launch --total-tokens 1e18: --time capped at Slurm's largest, with the reason"; passes=$((passes + 1))
else
  echo "FAIL   launch --total-tokens 1e18: no capped --time"; grep -E '^#' "$tmp/l28/launch.sbatch" | head -12 | sed 's/^/       | /'; fails=$((fails + 1))
fi

# Issue 57: launch --objective cost could never run (no --price); validate --markdown --json printed Markdown; a
# JSON typo got no hint (issue 55).
check must 2 '--objective cost.*--price a100-80g=USD_PER_HOUR' -- launch --model gpt2 --framework megatron --cluster "$tmp/cluster.json" -o "$tmp/l57" --objective cost
check must 0 'wrote' -- launch --model gpt2 --framework megatron --cluster "$tmp/cluster.json" -o "$tmp/l57" --objective cost --price example
check must 2 '--markdown excludes --json|--json excludes --markdown' -- validate --data "$tmp/good.csv" --markdown --json
echo "{$gpt2, \"training\": {\"globl_batch\": 8}}" > "$tmp/typo.json"
check must 2 'training.globl_batch is not a known field \(did you mean "global_batch"\?\)' -- estimate --job "$tmp/typo.json"
# a bandwidth of 1e-300 GB/s gave step_time_s null and a run time of 0 s: no speed, said why, and no plan
echo '{"nodes": [{"gpu": "x", "count": 8}], "gpu_types": [{"name": "x", "memory_mib": 81920, "bf16_tflops": 100, "mem_bw_GBps": 1e-300, "link_GBps": 1e-300}]}' > "$tmp/tinybw.json"
check must 0 'no step-time prediction: the predicted step time is inf s' -- estimate --model gpt2 --gpu-types "$tmp/tinybw.json" --gpu x
check must 1 'x' -- plan --model gpt2 --cluster "$tmp/tinybw.json" --json
if "$F" plan --model gpt2 --cluster "$tmp/tinybw.json" --json 2>/dev/null | grep -q null; then
  echo "FAIL   plan --json with a 1e-300 GB/s bandwidth prints null"; fails=$((fails + 1))
else
  echo "ok     plan --json with a 1e-300 GB/s bandwidth: no null"; passes=$((passes + 1))
fi
# outputs on a FIFO blocked for ever (inputs refused FIFOs already): refused, naming the option
mkfifo "$tmp/fifo"
check must 1 '--html=.*fifo is not a regular file' -- estimate --model gpt2 --html "$tmp/fifo"
check must 1 '-o/--out=.*fifo is not a regular file' -- simulate --cluster "$tmp/cluster.json" --trace "$tmp/trace28.csv" --quiet -o "$tmp/fifo"
# --from with per-device batches and --gpus: the global batch of the GPUs given (2 x 2 accumulation x 8 = 32), not
# of one GPU (issue 57: plan read torchtune's per-device batch as the global one)
check must 0 'global batch 32' -- plan --from "axolotl:$S/tests/data/trainer_yaml/axolotl_lora_1b.yml" --gpus 8xa100-80g
# the simulator at its documented largest speed error: bounded (7 million Tiresias rounds for these 30 jobs before)
check must 0 'tiresias' -- simulate --cluster "$S/examples/clusters/three-type.json" --trace "$S/examples/traces/small.csv" --policy tiresias --speed-error 5
# issue 57 item 2: a config.json without its shape keys was filled from one model's defaults (a 40-48-layer model);
# layer_types of any length or entries was ignored. Now refused naming the key.
for t in llama4 cohere falcon deepseek_v3 gpt_oss; do
  echo "{\"model_type\": \"$t\"}" > "$tmp/bare_$t.json"
  check must 2 'missing required key "num_hidden_layers"' -- estimate --hf-config "$tmp/bare_$t.json"
done
python3 - "$S/tests/data/hf" "$tmp" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
g = json.load(open(f"{src}/gemma-3-1b-it.json")); g["layer_types"] = ["sliding_attention"] * 5
json.dump(g, open(f"{out}/gemma3_short_types.json", "w"))
q = json.load(open(f"{src}/qwen3-1.7b.json")); q["layer_types"] = ["full_attention"] * 27 + ["global"]
json.dump(q, open(f"{out}/qwen3_bad_types.json", "w"))
PY
check must 2 'layer_types=.*must be a list of num_hidden_layers=26 entries' -- estimate --hf-config "$tmp/gemma3_short_types.json"
check must 2 'layer_types\[27\]="global" is not one of' -- estimate --hf-config "$tmp/qwen3_bad_types.json"
# issue 57 item 3: Slurm flags given a value are bounded and non-empty (--requeue-signal '' silently turned requeue
# off, --cpus-per-task 0 was dropped, --mem had no bound); --run-command is shell words torchrun starts, so what the
# batch shell would run itself is refused
l57=(launch --model gpt2 --framework megatron --cluster "$tmp/cluster.json" -o "$tmp/l57b")
check must nonzero 'requeue-signal' -- "${l57[@]}" --requeue-signal ''
check must nonzero 'cpus-per-task' -- "${l57[@]}" --cpus-per-task 0
check must nonzero 'mem.*empty' -- "${l57[@]}" --mem ''
check must nonzero 'partition.*empty' -- "${l57[@]}" --partition ''
check must 2 'launch_options::mem=.*more than 909 TiB per node' -- "${l57[@]}" --mem 99999999999999999999999T
check must 2 'run_command.*holds ; at byte 8.*outside srun' -- "${l57[@]}" --run-command 'train.py; rm -rf x'
check must 2 'run_command.*holds \$\( at byte' -- "${l57[@]}" --run-command 'train.py $(id)'
check must 2 'run_command.*is blank' -- "${l57[@]}" --run-command '   '
check must 0 'wrote' -- "${l57[@]}" --run-command 'train.py --data "$DATA" --tag '"'"'a;b'"'"

# issue 57 item 1: the hf importer read only the settings block. TrainingArguments' batch keywords that disagree
# with it, a later or augmented assignment of a block name, a keyword given twice (Python's SyntaxError) and bf16
# with fp16 (Trainer refuses) were read as the block says, exit 0. Now refused naming the keyword and both values.
"$F" launch --model llama-3.2-1b --finetune lora --framework hf --gpus 8xh100-80g --sharding none --global-batch 64 --micro-batch 8 -o "$tmp/h57hf" >/dev/null 2>&1
hs="$tmp/h57hf/frenzy_hf_train.py"
sed 's/per_device_train_batch_size=MICRO_BATCH,/per_device_train_batch_size=64,/' "$hs" > "$tmp/hf_pdb.py"
sed 's/gradient_accumulation_steps=GRAD_ACCUM,/gradient_accumulation_steps=8,/' "$hs" > "$tmp/hf_ga.py"
sed 's/^QLORA = False$/QLORA = False\nMICRO_BATCH = 99/' "$hs" > "$tmp/hf_rep.py"
sed 's/^QLORA = False$/QLORA = False\nMICRO_BATCH += 97/' "$hs" > "$tmp/hf_aug.py"
sed 's/^    seed=17,$/    seed=17,\n    per_device_train_batch_size=4,/' "$hs" > "$tmp/hf_twice.py"
sed 's/^    bf16=True,$/    bf16=True,\n    fp16=True,/' "$hs" > "$tmp/hf_both.py"
hm=(--model llama-3.2-1b --world-size 8)
check must 2 'per_device_train_batch_size=64\) disagrees with the settings block.s MICRO_BATCH = ' -- import --from "hf:$tmp/hf_pdb.py" "${hm[@]}"
check must 2 'gradient_accumulation_steps=8\) disagrees with the settings block.s GRAD_ACCUM = ' -- import --from "hf:$tmp/hf_ga.py" "${hm[@]}"
check must 2 'MICRO_BATCH is given twice \(MICRO_BATCH = 99' -- import --from "hf:$tmp/hf_rep.py" "${hm[@]}"
check must 2 'MICRO_BATCH is given twice \(MICRO_BATCH \+= 97' -- import --from "hf:$tmp/hf_aug.py" "${hm[@]}"
check must 2 'is given per_device_train_batch_size twice.*SyntaxError' -- import --from "hf:$tmp/hf_twice.py" "${hm[@]}"
check must 2 'bf16=True, fp16=True\): Trainer refuses both' -- import --from "hf:$tmp/hf_both.py" "${hm[@]}"

# issue 57 item 2: torchtune.yaml and frenzy_hf_train.py state per-rank batches; with --gpus they were planned as one
# GPU's (global batch 8 where 16 ranks run 128), and estimate then failed (global_batch=8 is not a multiple of
# micro_batch=8 x dp=16). Now the GPU count given is the world size: batch_size 8 x 1 accumulation x 16 = 128.
"$F" launch --model llama-3.2-1b --finetune lora --framework torchtune --precision bf16 --gpus 16xh100-80g --global-batch 128 --micro-batch 8 -o "$tmp/h57tt" >/dev/null 2>&1
check must 0 'global batch 128' -- plan --from "torchtune:$tmp/h57tt/torchtune.yaml" --gpus 16xh100-80g
check must 0 "global batch 128" -- estimate --from "torchtune:$tmp/h57tt/torchtune.yaml" --gpus 16xh100-80g
check must 0 'global batch 64' -- estimate --from "torchtune:$tmp/h57tt/torchtune.yaml" --gpus 8xh100-80g
check must 0 'global batch 128' -- plan --from "hf:$tmp/h57hf/frenzy_hf_train.py" --model llama-3.2-1b --gpus 16xh100-80g
# issue 57 items 3-4: llm-foundry's fsdp_config.mixed_precision BOGUS was read as DEFAULT, model.loss_fn/attn_impl/name/
# max_seq_len unread; torchtune's lora_attn_modules [] read as q,k,v,o, a full builder beside LoRA keys as a full
# fine-tune, an unknown loss as the default, activation offloading without checkpointing accepted. Each now refused
# as the framework refuses it.
"$F" launch --model gpt3-125m --framework llm-foundry --gpus 8xh100-80g -o "$tmp/h57lf" >/dev/null 2>&1
ly="$tmp/h57lf/train.yaml"
sed 's/  mixed_precision: DEFAULT/  mixed_precision: BOGUS/' "$ly" > "$tmp/lf_mp.yaml"
sed 's/  loss_fn: .*/  loss_fn: bogus/' "$ly" > "$tmp/lf_loss.yaml"
sed 's/    attn_impl: flash/    attn_impl: bogus/' "$ly" > "$tmp/lf_attn.yaml"
sed 's/  name: mpt_causal_lm/  name: bogus_lm/' "$ly" > "$tmp/lf_name.yaml"
sed '/^model:/,/^tokenizer:/s/  max_seq_len: .*/  max_seq_len: -1/' "$ly" > "$tmp/lf_msl.yaml"
check must 2 'fsdp_config.mixed_precision=BOGUS must be FULL, DEFAULT or PURE' -- import --from "llm-foundry:$tmp/lf_mp.yaml" --world-size 8
check must 2 'model.loss_fn=bogus must be fused_crossentropy or torch_crossentropy' -- import --from "llm-foundry:$tmp/lf_loss.yaml" --world-size 8
check must 2 'attn_impl=bogus must be torch or flash' -- import --from "llm-foundry:$tmp/lf_attn.yaml" --world-size 8
check must 2 'model.name=bogus_lm must be mpt_causal_lm' -- import --from "llm-foundry:$tmp/lf_name.yaml" --world-size 8
check must 2 'model.max_seq_len=-1 must be in 1' -- import --from "llm-foundry:$tmp/lf_msl.yaml" --world-size 8
ty="$tmp/h57tt/torchtune.yaml"
sed "s/  lora_attn_modules: .*/  lora_attn_modules: []/" "$ty" > "$tmp/tt_empty.yaml"
sed "s/lora_llama3_2_1b/llama3_2_1b/" "$ty" > "$tmp/tt_full.yaml"
sed "s/torchtune.modules.loss.[A-Za-z]*/bogus.Loss/" "$ty" > "$tmp/tt_loss.yaml"
sed "s/enable_activation_offloading: False/enable_activation_offloading: True/" "$ty" > "$tmp/tt_off.yaml"
check must 2 'model.lora_attn_modules=\[\]' -- import --from "torchtune:$tmp/tt_empty.yaml" --world-size 16
check must 2 'beside model._component_=torchtune.models.llama3_2.llama3_2_1b, a full-model builder' -- import --from "torchtune:$tmp/tt_full.yaml" --world-size 16
check must 2 'loss._component_=bogus.Loss is not a loss Frenzy reads' -- import --from "torchtune:$tmp/tt_loss.yaml" --world-size 16
check must 2 'enable_activation_offloading=True without enable_activation_checkpointing' -- import --from "torchtune:$tmp/tt_off.yaml" --world-size 16
# issue 57 item 5: LitGPT's --world-size and --model beside the file were ignored without a word; its own optimizer
# form (class_path/init_args) and train.max_seq_length null were refused.
"$F" launch --model llama-3.2-1b --finetune lora --framework litgpt --gpus 8xh100-80g -o "$tmp/h57lg" >/dev/null 2>&1
gy="$tmp/h57lg/litgpt.yaml"
sed 's/^optimizer: AdamW/optimizer:\n  class_path: torch.optim.AdamW\n  init_args:\n    lr: 0.0002/' "$gy" > "$tmp/lg_opt.yaml"
sed 's/  max_seq_length: .*/  max_seq_length: null/' "$gy" > "$tmp/lg_null.yaml"
check must 0 '"optimizer": "adamw"' -- import --from "litgpt:$tmp/lg_opt.yaml" --json
check must 0 'train.max_seq_length=null.*seq_len 4096 assumed' -- import --from "litgpt:$tmp/lg_null.yaml" --seq-len 4096
check must 2 'devices x num_nodes = 8 contradicts the world size given beside it \(16\)' -- import --from "litgpt:$gy" --world-size 16
check must 2 'the model given beside the file \(llama-3.1-8b\) is not the file.s' -- import --from "litgpt:$gy" --model llama-3.1-8b
echo "cli_reproducers: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
