#!/usr/bin/env bash
# Sets everything up and runs the whole test suite, stage by stage, and ends with one line `N passed, N failed`
# (stages counted) after a table of each stage's wall time:
#   1. build (Release, clang-14, -Wall -Wextra -Werror): library checks, CLI, examples, Python module, benchmarks (the
#      unit test programs only with --quick: the full suite runs them in stage 6, under the sanitizers). Clang
#      compiles these translation units in two thirds of GCC's time; GCC (Debian's default compiler) compiles every
#      installed header with the same warnings in the consumer test of stage 2 (tests/consumer)
#   2. ctest (Release): the CLI tests, the library checks, the CLI sweep (all cases); with --quick every unit test
#   3. pytest (the Python module)
#   4. build (AddressSanitizer + UBSan, clang-14, -O0, line tables only: reports name file and line; -O1 doubles the
#      compile, -g doubles it again); the tests and the CLI, not the embedding examples. Clang compiles these
#      translation units in half GCC's time
#   5. the real-Slurm `serve` test (Release CLI), beside stage 4: it mostly waits on Slurm
#   6. ctest (ASan + UBSan): every unit test and the CLI tests (not Slurm's or the examples'); the CLI sweep runs one
#      case in FRENZY_SWEEP_SANITIZE_STRIDE
#   7. the libFuzzer targets (ASan + UBSan, 12 s each), running beside stage 6
#
#   bash scripts/test.sh            # everything (CI runs this)
#   bash scripts/test.sh --quick    # the inner loop: stages 1-2 without benchmarks, sanitizers, the sweep or Slurm
set -uo pipefail
cd "$(dirname "$0")/.."

quick=0
case "${1:-}" in
  "") ;;
  --quick) quick=1 ;;
  -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "test.sh: unknown argument \"$1\" (use --quick, or no argument for the whole suite)" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "test.sh: takes at most one argument (--quick)" >&2; exit 2; }

bash scripts/setup.sh || { echo "test.sh: setup failed"; echo "0 passed, 1 failed"; exit 1; }
jobs="$(nproc)"
passed=0; failed=0; rows=()
declare -A ok

# stage NAME COMMAND...: runs COMMAND, records its wall time and whether it passed.
stage() {
  local name="$1"; shift
  echo; echo "== $name =="
  local t0 rc
  t0=$(date +%s)
  "$@"; rc=$?
  local dt=$(( $(date +%s) - t0 ))
  if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); ok[$name]=1; rows+=("$(printf '%-34s %6d s  passed' "$name" "$dt")")
  else failed=$((failed + 1)); ok[$name]=0; rows+=("$(printf '%-34s %6d s  FAILED (exit %d)' "$name" "$dt" "$rc")"); fi
  return 0
}
# skip NAME WHY: a stage that cannot run because one it needs failed counts as failed.
skip() { failed=$((failed + 1)); rows+=("$(printf '%-34s %8s  FAILED (not run: %s)' "$1" "" "$2")"); }

fresh_ninja_dir() {  # DIR [COMPILER]: a build folder configured earlier with another generator or compiler starts again
  if [ -f "$1/CMakeCache.txt" ] && { ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$1/CMakeCache.txt" ||
       { [ -n "${2:-}" ] && ! grep -q "^CMAKE_CXX_COMPILER:FILEPATH=$(command -v "$2")\$" "$1/CMakeCache.txt"; }; }; then
    rm -rf "$1"
  fi
}
cxx=clang++-14  # installed by setup.sh (the fuzzers use it too)
build_release() {
  fresh_ninja_dir build-test "$cxx"
  # the full suite runs the unit tests once, in the sanitizer build (2 cores, 25 minutes: compiling them twice cost
  # about 4 minutes); the inner loop runs them here
  local units=OFF
  [ "$quick" -eq 1 ] && units=ON
  # the examples, benchmarks and Python module at -O0 (FRENZY_UNOPTIMIZED_EXTRAS): run for answers, never timed here
  CXX="$cxx" cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Release -DFRENZY_WERROR=ON -DFRENZY_BUILD_UNIT_TESTS=$units \
    -DFRENZY_UNOPTIMIZED_EXTRAS=ON >/dev/null &&
    cmake --build build-test -j"$jobs" &&
    if [ "$quick" -eq 0 ]; then cmake --build build-test -j"$jobs" --target benchmarks; fi
}
ctest_release() {  # the Slurm test runs beside the sanitizer build (slurm_wait)
  local exclude=(-LE slurm)
  [ "$quick" -eq 1 ] && exclude=(-LE 'slow|slurm|sweep')
  (cd build-test && ctest --output-on-failure -j"$jobs" "${exclude[@]}")
}
slurm_wait() {  # started beside the ASan build; its log follows here
  wait "$slurm_pid"; local rc=$?
  cat build-test/slurm.log
  return "$rc"
}
build_asan() {
  fresh_ninja_dir build-asan "$cxx"
  CXX="$cxx" cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFRENZY_WERROR=ON -DFRENZY_SANITIZE=ON \
    -DFRENZY_BUILD_BENCHMARKS=OFF -DFRENZY_BUILD_EMBEDDING_EXAMPLES=OFF -DFRENZY_BUILD_UNIT_TESTS=ON \
    -DCMAKE_CXX_FLAGS="-O0" -DCMAKE_CXX_FLAGS_DEBUG="-g1" >/dev/null &&
    cmake --build build-asan -j"$jobs"
}
ctest_asan() {
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j"$jobs")
}
fuzz_wait() {  # the fuzzers were started beside the ASan ctest; their log follows here
  wait "$fuzz_pid"; local rc=$?
  cat build-fuzz/run.log
  return "$rc"
}

start=$(date +%s)
stage "build (Release, -Werror)" build_release
if [ "${ok["build (Release, -Werror)"]}" -eq 1 ]; then stage "ctest (Release)" ctest_release
else skip "ctest (Release)" "the Release build failed"; fi
if [ "$quick" -eq 0 ]; then
  if [ "${ok["build (Release, -Werror)"]}" -eq 1 ]; then stage "pytest (Python module)" bash scripts/test_python.sh build-test
  else skip "pytest (Python module)" "the Release build failed"; fi
  # The Slurm test mostly sleeps (jobs that wait, a controller restart): it runs beside the sanitizer build.
  if [ "${ok["build (Release, -Werror)"]}" -eq 1 ]; then
    (cd build-test && ctest --output-on-failure -L slurm) >build-test/slurm.log 2>&1 &
    slurm_pid=$!
  fi
  stage "build (ASan + UBSan)" build_asan
  # The fuzzers build with clang and run for a fixed time each: they share the machine with the ASan ctest.
  mkdir -p build-fuzz
  # 12 s a target (fuzz.sh's default is 20): the suite's 25 minutes on 2 cores; longer runs are FUZZ_SECONDS=60
  FUZZ_SECONDS="${FUZZ_SECONDS:-12}" bash scripts/fuzz.sh >build-fuzz/run.log 2>&1 &
  fuzz_pid=$!
  if [ "${ok["build (ASan + UBSan)"]}" -eq 1 ]; then stage "ctest (ASan + UBSan)" ctest_asan
  else skip "ctest (ASan + UBSan)" "the sanitizer build failed"; fi
  stage "libFuzzer targets (beside the above)" fuzz_wait
  if [ "${ok["build (Release, -Werror)"]}" -eq 1 ]; then stage "Slurm serve test (beside the ASan build)" slurm_wait
  else skip "Slurm serve test (beside the ASan build)" "the Release build failed"; fi
fi

echo
echo "== summary ($( [ "$quick" -eq 1 ] && echo quick || echo full ) suite, $jobs cores, $(( $(date +%s) - start )) s after setup) =="
printf '%s\n' "${rows[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
