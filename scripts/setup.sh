#!/usr/bin/env bash
# Installs the Debian packages Frenzy needs, only those missing: compiler, CMake and the libraries; pybind11 and
# pytest (Python module); cpp-httplib, SQLite, Slurm and munge (frenzy serve and its tests); clang-14 + libFuzzer.
set -euo pipefail
pkgs=(g++ cmake make ninja-build libeigen3-dev libfmt-dev catch2 libcli11-dev nlohmann-json3-dev libglpk-dev libyaml-cpp-dev
      python3 python3-dev pybind11-dev python3-pybind11 python3-pytest
      libcpp-httplib-dev libsqlite3-dev sqlite3 slurm-wlm munge
      clang-14 libfuzzer-14-dev libbenchmark-dev)
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
