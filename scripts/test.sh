#!/usr/bin/env bash
# Fresh machine → build → every test (unit tests, recorded hardware vectors, examples, short fuzz runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
