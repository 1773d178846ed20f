#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: -Wall -Wextra -Werror build + ctest, then the same
# tests again under AddressSanitizer + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs="$(nproc)"
echo "== build (Release, -Werror) =="
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Release -DFRENZY_WERROR=ON >/dev/null
cmake --build build-test -j"$jobs"
cmake --build build-test -j"$jobs" --target benchmarks
echo "== ctest =="
(cd build-test && ctest --output-on-failure -j"$jobs")
if [ -f scripts/test_python.sh ]; then echo "== pytest (Python module) =="; bash scripts/test_python.sh build-test; fi
echo "== build (AddressSanitizer + UBSan) =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DFRENZY_WERROR=ON -DFRENZY_SANITIZE=ON \
  -DFRENZY_BUILD_BENCHMARKS=OFF -DCMAKE_CXX_FLAGS="-O1" >/dev/null
cmake --build build-asan -j"$jobs"
echo "== ctest (ASan + UBSan) =="
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs")
if [ -f scripts/fuzz.sh ]; then echo "== libFuzzer targets (ASan + UBSan) =="; bash scripts/fuzz.sh; fi
