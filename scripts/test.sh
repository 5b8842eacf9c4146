#!/usr/bin/env bash
# Fresh machine → build → every test (unit tests, recorded hardware vectors, examples, short fuzz runs, the
# Python package's pytest suite),
# then the same suite again built with AddressSanitizer and UndefinedBehaviorSanitizer.
# SANITIZE=0 skips the second stage.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
# The Python package (docs/python.md): built by pip from the same CMake project, then its pytest suite.
.venv/bin/pip install -q --no-build-isolation .
.venv/bin/python -m pytest -q tests/python
[ "${SANITIZE:-1}" = 0 ] && exit 0
bash scripts/sanitize.sh
