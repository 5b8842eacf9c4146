#!/usr/bin/env bash
# Configures and builds tmakit in build/ (CUDA parts too when nvcc is present).
#   scripts/build.sh                 every target (tests, benchmarks; the fuzzers are built by
#                                    scripts/sanitize.sh, in build-asan/)
#   scripts/build.sh TARGET...       only these (scripts/quickstart.sh: tmakit)
# TMAKIT_TESTS=unsanitized: only the tests that a sanitized build cannot run (scripts/test.sh, whose
# sanitized stage runs the others); default all. TMAKIT_GPU_PROGRAMS=OFF: the programs that run only
# on a GPU stay out of the default target (scripts/test.sh: CI has no GPU); default ON.
# SETUP=build installs only what building needs, SETUP=none nothing (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh "${SETUP:-all}"
# ccache where installed: scripts/test.sh builds the same sources again for `pip install .`, in
# build-pip/ (the same depth, so paths relative to CCACHE_BASEDIR match; NOHASHDIR leaves the
# build folder out of the hash of -g objects).
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  export CMAKE_CUDA_COMPILER_LAUNCHER=${CMAKE_CUDA_COMPILER_LAUNCHER:-ccache}
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTMAKIT_TESTS="${TMAKIT_TESTS:-all}" \
  -DTMAKIT_GPU_PROGRAMS="${TMAKIT_GPU_PROGRAMS:-ON}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
