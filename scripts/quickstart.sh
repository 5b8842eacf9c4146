#!/usr/bin/env bash
# Fresh machine → build → run the bundled quickstart scenario on the reference model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/tools/tmakit/tmakit run examples/quickstart/scenario.json -o out/quickstart --trace
echo "outputs in out/quickstart/"
