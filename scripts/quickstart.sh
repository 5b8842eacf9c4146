#!/usr/bin/env bash
# Fresh machine → build the tmakit tool alone → run the bundled quickstart scenario on the
# reference model. scripts/test.sh builds and runs everything else.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
stage() { echo "== quickstart [$(( (SECONDS - t0) / 60 ))m$(( (SECONDS - t0) % 60 ))s] $*"; }
stage "1/3 set-up: the build tools and libraries (apt-get, only what is missing)"
bash scripts/setup.sh build
stage "2/3 build: the tmakit tool only (build/tools/tmakit/tmakit)"
SETUP=none bash scripts/build.sh tmakit
stage "3/3 run: examples/quickstart/scenario.json on the model"
./build/tools/tmakit/tmakit run examples/quickstart/scenario.json -o out/quickstart --trace
stage "done: outputs in out/quickstart/"
