#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build tmakit (apt-get), once.
set -euo pipefail
need=()
for pkg in cmake ninja-build g++ python3 libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libbenchmark-dev clang libclang-rt-dev libpng-dev chromium; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
