#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build tmakit (apt-get), once.
set -euo pipefail
need=()
for pkg in cmake ninja-build g++ python3 python3-venv python3-dev libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libbenchmark-dev clang libclang-rt-dev libpng-dev chromium; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
# The Python package's build and test tools (docs/python.md), in .venv: Debian's pip refuses system installs.
venv="$(dirname "$0")/../.venv"
if ! "$venv/bin/python" -c "import nanobind, scikit_build_core, numpy, pytest" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "nanobind>=2.0" "scikit-build-core>=0.10" "numpy>=1.22" "pytest>=7"
fi
