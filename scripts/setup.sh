#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build tmakit (apt-get), once.
#   scripts/setup.sh          everything scripts/test.sh needs (clang for the fuzzers, Chromium,
#                             ccache, the Python package's .venv)
#   scripts/setup.sh build    only what configuring and building needs (scripts/quickstart.sh)
#   scripts/setup.sh none     nothing (a caller that ran it already)
set -euo pipefail
[ "${1:-all}" = none ] && exit 0
pkgs=(cmake ninja-build g++ libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libbenchmark-dev libpng-dev)
[ "${1:-all}" = all ] && pkgs+=(ccache python3 python3-venv python3-dev clang libclang-rt-dev chromium)
need=()
for pkg in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]} (apt-get)"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
[ "${1:-all}" = all ] || exit 0
# The Python package's build and test tools (docs/python.md), in .venv: Debian's pip refuses system installs.
venv="$(dirname "$0")/../.venv"
if ! "$venv/bin/python" -c "import nanobind, scikit_build_core, numpy, pytest" 2>/dev/null; then
  echo "setup: making .venv (nanobind, scikit-build-core, NumPy, pytest)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "nanobind>=2.0" "scikit-build-core>=0.10" "numpy>=1.22" "pytest>=7"
fi
