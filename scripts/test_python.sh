#!/usr/bin/env bash
# Runs the Python module's tests (python/tests, pytest from Debian's python3-pytest) against the module built in
# BUILD_DIR (default build), building the module and the CLI there first if needed.
#   bash scripts/test_python.sh [BUILD_DIR]
# Exits non-zero when the module cannot be built, any test fails, or no test was collected (pytest's exit 5).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "test_python.sh: $build is not a configured build directory (cmake -S . -B $build first)" >&2
  exit 2
fi
if ! grep -q '^FRENZY_BUILD_PYTHON:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "test_python.sh: $build was configured without the Python module (FRENZY_BUILD_PYTHON is OFF or pybind11-dev" \
       "was not found); reconfigure with -DFRENZY_BUILD_PYTHON=ON" >&2
  exit 2
fi
py="$(sed -n 's/^Python_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")"
py="${py:-/usr/bin/python3}"
jobs="${FRENZY_JOBS:-$(nproc)}"
cmake --build "$build" -j"$jobs" --target frenzy_python frenzy_cli
export FRENZY_CLI="$(cd "$build" && pwd)/examples/frenzy"
export PYTHONPATH="$(cd "$build" && pwd)/python${PYTHONPATH:+:$PYTHONPATH}"
data="$(sed -n 's/^FRENZY_DATA_DIR:PATH=//p' "$build/CMakeCache.txt")"
if [ -n "$data" ]; then export FRENZY_DATA_DIR="$data"; fi
export PYTHONDONTWRITEBYTECODE=1
set +e
"$py" -m pytest -q -p no:cacheprovider python/tests
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "test_python.sh: pytest collected no tests" >&2
  exit 1
fi
exit "$rc"
