#!/usr/bin/env bash
# Fresh machine → build → every test (unit tests, recorded hardware vectors, examples, short fuzz runs, the
# Python package's pytest suite), then the same suite again built with AddressSanitizer and
# UndefinedBehaviorSanitizer. SANITIZE=0 skips the second stage. A line per stage, with the time spent so
# far; each stage shows its own progress (ninja's [n/N], ctest's test lines, pip's build steps).
# About 20 minutes on a fresh 2-core machine (README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
stage() { echo "== test.sh [$(( (SECONDS - t0) / 60 ))m$(( (SECONDS - t0) % 60 ))s] $*"; }
stage "1/5 set-up and build: every target in build/ (the fuzzers too, by clang, in build/fuzz)"
bash scripts/build.sh
stage "2/5 ctest in build/: $(ctest --test-dir build -N | tail -1 | grep -o '[0-9]*') tests, $(nproc) at a time;" \
  "the $(ctest --test-dir build -N -L fuzz | tail -1 | grep -o '[0-9]*') fuzz_* tests fuzz" \
  "$(grep -o 'FUZZ_SECONDS:STRING=[0-9]*' build/CMakeCache.txt | cut -d= -f2)s each and start first"
ctest --test-dir build --output-on-failure -j "$(nproc)"
# The Python package (docs/python.md): built by pip from the same CMake project, then its pytest suite.
# build-pip/ sits beside build/ with the same build type, so ccache hands back build/'s objects; the full
# log is kept in build-pip/pip.log and shown on failure.
stage "3/5 pip install . (build-pip/: the C++ core again, mostly from ccache, then the module)"
mkdir -p build-pip
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
command -v ccache >/dev/null && export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
if ! .venv/bin/pip install -v --no-build-isolation -C build-dir=build-pip -C cmake.build-type=RelWithDebInfo . \
     2>&1 | tee build-pip/pip.log | grep --line-buffered -E '^ *\[[0-9]+/[0-9]+\]|^Successfully'; then
  tail -60 build-pip/pip.log; exit 1
fi
stage "4/5 pytest tests/python"
.venv/bin/python -m pytest -q tests/python
if [ "${SANITIZE:-1}" = 0 ]; then stage "done (SANITIZE=0: no sanitized stage)"; exit 0; fi
stage "5/5 the same tests under ASan and UBSan (build-asan/)"
bash scripts/sanitize.sh
stage "done"
