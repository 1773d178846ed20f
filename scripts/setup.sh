#!/usr/bin/env bash
# Installs the Debian packages Frenzy needs (compiler, CMake and the libraries), only those missing.
set -euo pipefail
pkgs=(g++ cmake make libeigen3-dev libfmt-dev catch2 libcli11-dev nlohmann-json3-dev libglpk-dev python3)
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
