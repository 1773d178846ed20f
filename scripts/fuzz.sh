#!/usr/bin/env bash
# Builds every libFuzzer target (fuzz/fuzz_*.cpp) with clang-14 under AddressSanitizer + UBSan into one binary,
# build-fuzz/frenzy_fuzz (FRENZY_FUZZ_TARGET=<target> picks one: fuzz/fuzz_common.hpp), and runs each for FUZZ_SECONDS (default 20) from a seed corpus of the repository's fixtures (tests/data, examples/,
# data/) with its dictionary (fuzz/<target>.dict). Fails on any crash, leak, timeout, out-of-memory or
# sanitizer report; a finding is left in build-fuzz/findings/<target>/ (turn it into a test in tests/regress/).
# Prints executions per second and total executions per target (also in build-fuzz/summary.txt).
#   FUZZ_SECONDS=60 scripts/fuzz.sh            # longer runs
#   FUZZ_TARGETS="fuzz_job_json" scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CXX="${FUZZ_CXX:-clang++-14}"
secs="${FUZZ_SECONDS:-20}"
out=build-fuzz
data="${FRENZY_DATA_DIR:-data}"
if ! command -v "$CXX" >/dev/null; then
  echo "fuzz.sh: $CXX not found (apt-get install clang-14 libfuzzer-14-dev)" >&2
  exit 1
fi
mkdir -p "$out"
targets="${FUZZ_TARGETS:-$(cd fuzz && ls fuzz_*.cpp | sed 's/\.cpp$//')}"
flags=(-std=c++20 -O1 -gline-tables-only -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
       -Iinclude -I/usr/include/eigen3 -Wall -Wextra -Wno-unused-parameter)
[ -f /usr/include/glpk.h ] && flags+=(-DFRENZY_HAS_GLPK=1)
[ -f /usr/include/yaml-cpp/yaml.h ] && flags+=(-DFRENZY_HAS_YAML=1)  # Megatron's YAML arguments (linked below)

echo "== building the fuzz targets into one binary with $CXX =="
# Every target in one translation unit (fuzz/fuzz_common.hpp): they parse the same headers once. Rebuilt when a
# source or any header is newer than the binary.
bin="$out/frenzy_fuzz"
if [ ! -x "$bin" ] || [ -n "$(find fuzz include -newer "$bin" -name '*.?pp' -print -quit)" ]; then
  { echo '#include "main.cpp"'; for t in $(cd fuzz && ls fuzz_*.cpp | sed 's/\.cpp$//'); do echo "#include \"$t.cpp\""; done; } \
    > "$out/all_targets.cpp"
  libs=()
  [ -f /usr/include/yaml-cpp/yaml.h ] && libs+=(-lyaml-cpp)
  "$CXX" "${flags[@]}" -Ifuzz "$out/all_targets.cpp" -o "$bin.tmp" "${libs[@]}" && mv "$bin.tmp" "$bin"
fi
jobs_max="$(nproc)"

seeds_for() {  # seed inputs of a target
  case "$1" in
    fuzz_job_json|fuzz_estimate_plan) ls examples/jobs/*.json tests/data/*.json 2>/dev/null ;;
    fuzz_cluster_json) ls examples/clusters/*.json 2>/dev/null ;;
    fuzz_hf_config) ls tests/data/hf/*.json 2>/dev/null ;;
    fuzz_measurements_csv) ls "$data"/memory/*.csv 2>/dev/null ;;
    fuzz_trace_csv) ls examples/traces/*.csv 2>/dev/null ;;
    fuzz_seq_lengths) ls tests/data/seq_lengths/* 2>/dev/null ;;
    fuzz_launcher_import) ls tests/data/launch/*.sh tests/data/launch/*.yaml tests/data/launch/golden/*/* tests/data/launch/hostile/* 2>/dev/null ;;
    fuzz_launch_writer) ls tests/data/launch/writer/* 2>/dev/null ;;
    fuzz_report) ls tests/data/report/*.json 2>/dev/null ;;
  esac
}

echo "== running each target for ${secs}s, $jobs_max at a time =="
# fuzz_one TARGET: runs it and writes its summary row to $out/TARGET.row (exit status 1 when it found something).
fuzz_one() {
  local t="$1" corpus="$out/corpus/$1" findings="$out/findings/$1" log="$out/$1.log" rc=0 dict=()
  mkdir -p "$corpus" "$findings"
  for s in $(seeds_for "$t"); do cp -f "$s" "$corpus/seed_$(basename "$s")"; done
  [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  FRENZY_FUZZ_TARGET="$t" ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin" "${dict[@]}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" >"$log" 2>&1 || rc=$?
  local execs eps size result=ok
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)"
  eps="$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)"
  size="$(ls "$corpus" | wc -l)"
  if [ "$rc" -ne 0 ] || [ -z "$execs" ] || grep -q -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: ' "$log"; then
    result="FAILED (rc=$rc, see $log, input in $findings/)"
    grep -m5 -E 'ERROR:|runtime error:|SUMMARY:|uncaught|terminate' "$log" >&2 || true
  fi
  printf "%-24s %12s %12s %8s  %s\n" "$t" "${execs:-?}" "${eps:-?}" "$size" "$result" > "$out/$t.row"
  [ "$result" = ok ]
}
summary="$out/summary.txt"
printf "%-24s %12s %12s %8s  %s\n" target executions exec_per_s corpus result > "$summary"
pids=()
for t in $targets; do
  fuzz_one "$t" &
  pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do sleep 1; done
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
for t in $targets; do cat "$out/$t.row" >> "$summary"; done
cat "$summary"
echo "summary: $summary"
exit "$status"
