#!/usr/bin/env bash
# Fresh machine → build → every test (unit tests, recorded hardware vectors, examples, short fuzz runs),
# then the same suite again built with AddressSanitizer and UndefinedBehaviorSanitizer.
# SANITIZE=0 skips the second stage.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
[ "${SANITIZE:-1}" = 0 ] && exit 0
bash scripts/sanitize.sh
