#!/usr/bin/env bash
# The long fuzz run: each target for SECONDS (default 1800).
set -euo pipefail
cd "$(dirname "$0")/.."
for t in ptx scenario; do bash tests/fuzz/run.sh "$t" "${1:-1800}"; done
