#!/usr/bin/env bash
# Installs the Debian packages Frenzy needs, only those missing: compiler, CMake and the libraries; pybind11 and
# pytest and pandas (Python module; its to_dataframe()); jsonschema (the schema test of docs/schema); cpp-httplib, SQLite, Slurm and munge (frenzy serve and its tests); clang-14 + libFuzzer;
# Chromium (the browser tests of the HTML reports); Node.js and npm where the machine has none, then the charting
# library the reports inline (web/package-lock.json: Vega, Vega-Lite, vega-embed) into web/node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(g++ cmake make ninja-build libeigen3-dev libfmt-dev catch2 libcli11-dev nlohmann-json3-dev libglpk-dev libyaml-cpp-dev
      python3 python3-dev pybind11-dev python3-pybind11 python3-pytest python3-pandas python3-jsonschema
      libcpp-httplib-dev libsqlite3-dev sqlite3 slurm-wlm munge
      clang-14 libfuzzer-14-dev libbenchmark-dev chromium)
command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "frenzy setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The charting library, at the locked versions; again only when the lock file changed since the last install.
if ! cmp -s web/package-lock.json web/node_modules/.frenzy-installed-lock 2>/dev/null; then
  echo "frenzy setup: installing the charting library (npm ci --prefix web)"
  npm ci --prefix web --no-audit --no-fund --loglevel=error
  cp web/package-lock.json web/node_modules/.frenzy-installed-lock
fi
