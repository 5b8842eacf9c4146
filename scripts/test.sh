#!/usr/bin/env bash
# Fresh machine → build → every test (unit tests, recorded hardware vectors, examples, short fuzz runs, the
# Python package's pytest suite). The tests run once each, in one of two builds:
#   build/       g++, plain: the libraries, the tmakit tool, the CUDA parts, and only the tests that
#                cannot run sanitized (they preload libtmakit_watch.so into other programs, need nvcc,
#                or install the build: tests/CMakeLists.txt, TMAKIT_TESTS=unsanitized)
#   build-asan/  clang with AddressSanitizer and UndefinedBehaviorSanitizer (scripts/sanitize.sh): every
#                other test, and the fuzzers, which are targets of that build
# SANITIZE=0 builds and runs every test in build/ instead, and only the fuzzers and their tests in
# build-asan/. A line per stage, with the time spent so far; each stage shows its own progress
# (ninja's [n/N], ctest's test lines, pip's build steps). About 19 minutes on a fresh 2-core machine
# (README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
# The processor time of the commands so far (user + system, bash's `times`) beside the wall time: on a
# shared machine the wall time says little, and the two cores' time is what a stage costs.
# (`times` is read in this shell: in a $(...) subshell it would count nothing).
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
stage() {
  times > "$times_file"
  local cpu
  cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] }
                       printf "%dm%ds", n / 60, n % 60 }' "$times_file")
  echo "== test.sh [$(( (SECONDS - t0) / 60 ))m$(( (SECONDS - t0) % 60 ))s, CPU $cpu] $*"
}
count() { ctest --test-dir "$1" -N "${@:2}" | tail -1 | grep -o '[0-9]*'; }
if [ "${SANITIZE:-1}" = 0 ]; then
  stage "1/6 set-up and build: every target in build/ (SANITIZE=0: every test plain)"
  TMAKIT_TESTS=all bash scripts/build.sh
else
  stage "1/6 set-up and build/: the libraries, the tmakit tool, the CUDA parts, the tests that run unsanitized"
  TMAKIT_TESTS=unsanitized TMAKIT_GPU_PROGRAMS=OFF bash scripts/build.sh
fi
stage "2/6 ctest in build/: $(count build) tests, $(nproc) at a time"
ctest --test-dir build --output-on-failure -j "$(nproc)"
# The Python package (docs/python.md): built by pip from the same CMake project, then its pytest suite.
# build-pip/ sits beside build/ with the same build type and the same compiler (by the same name:
# scikit-build-core would otherwise name g++ where build/ has c++, and ccache tells them apart), so
# ccache hands back build/'s objects; the full log is kept in build-pip/pip.log and shown on failure.
stage "3/6 pip install . (build-pip/: the C++ core again, from ccache, then the module)"
mkdir -p build-pip
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
command -v ccache >/dev/null && export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' build/CMakeCache.txt)
if ! .venv/bin/pip install -v --no-build-isolation -C build-dir=build-pip -C cmake.build-type=RelWithDebInfo \
       -C cmake.define.CMAKE_CXX_COMPILER="$cxx" . \
     2>&1 | tee build-pip/pip.log | grep --line-buffered -E '^ *\[[0-9]+/[0-9]+\]|^Successfully'; then
  tail -60 build-pip/pip.log; exit 1
fi
stage "4/6 pytest tests/python"
.venv/bin/python -m pytest -q tests/python
fuzz_line() {
  echo "the $(count build-asan -R '^fuzz_') fuzz_* tests fuzz" \
    "$(grep -o 'FUZZ_SECONDS:STRING=[0-9]*' build-asan/CMakeCache.txt | cut -d= -f2)s each and start first"
}
if [ "${SANITIZE:-1}" = 0 ]; then
  stage "5/6 build-asan/: the fuzzers only (clang, ASan, UBSan, libFuzzer)"
  bash scripts/sanitize.sh build fuzzers
  stage "6/6 ctest -L fuzz in build-asan/: $(count build-asan -L fuzz) tests; $(fuzz_line)"
  bash scripts/sanitize.sh test -L fuzz
else
  stage "5/6 build-asan/: every target under ASan and UBSan (clang; the fuzzers too)"
  bash scripts/sanitize.sh build
  stage "6/6 ctest in build-asan/: $(count build-asan) tests, $(nproc) at a time; $(fuzz_line)"
  bash scripts/sanitize.sh test
fi
stage "done"
