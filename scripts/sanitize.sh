#!/usr/bin/env bash
# The sanitized build, build-asan/: clang with AddressSanitizer and UndefinedBehaviorSanitizer
# (-DTMAKIT_SANITIZE=ON), every object also instrumented for libFuzzer, so the fuzzers of tests/fuzz
# are targets of this build. No CUDA (it does not run in CI); the CPU benchmark is compiled, not run.
#   scripts/sanitize.sh              build every target, then run every test registered here: the
#                                    unit tests, recorded vectors and examples, the fuzz_* runs
#   scripts/sanitize.sh build [T...] configure and build every target, or only these (scripts/test.sh
#                                    with SANITIZE=0 and scripts/fuzz-long.sh: fuzzers)
#   scripts/sanitize.sh test [ARG...] ctest in build-asan with the sanitizers' options (and ctest's
#                                    ARGs: scripts/test.sh with SANITIZE=0 passes -L fuzz)
# Any report fails the run: UBSan does not recover, ASan stops at the first error, LeakSanitizer
# runs at exit. Left out of this build (tests/CMakeLists.txt, and run by the plain build/): the tests
# that LD_PRELOAD libtmakit_watch.so into other programs (Watch.*, CheckHooks.*, CheckPtxas.*,
# CheckRun.*, CheckPtxFilter.*): a sanitized preload library needs the ASan runtime first in the
# host program ("ASan runtime does not come first"), and ASan's own dlsym interception changes what
# the library is there to observe; install.consumer, which would link the sanitized static
# libraries into a plain program; and the CUDA tests.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
[ $# -gt 0 ] && shift
configure() {
  # A build-asan/ of the earlier layout (g++, no TMAKIT_SANITIZE) is made anew.
  if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^TMAKIT_SANITIZE:BOOL=ON' build-asan/CMakeCache.txt; then
    rm -rf build-asan
  fi
  # The libraries at -O1, which builds about twice as fast as -O2 and keeps the tests and fuzzers
  # quick (the programs' own files are at -O0: CMakeLists.txt); Debug keeps assert() on; line tables
  # are all that the sanitizers' reports need (file:line), for less than full debug information.
  cmake -S . -B build-asan -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DTMAKIT_SANITIZE=ON -DTMAKIT_TESTS=all \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
    -DTMAKIT_CUDA=OFF -DTMAKIT_BUILD_BENCH=ON >/dev/null
}
build() {
  configure
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build build-asan -j "$(nproc)" "${targets[@]}"
}
run_tests() {
  export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_stack_use_after_return=1:strict_string_checks=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  ctest --test-dir build-asan --output-on-failure -j "$(nproc)" "$@"
}
case $mode in
  all) build && run_tests ;;
  build) build "$@" ;;
  test) run_tests "$@" ;;
  *) echo "usage: scripts/sanitize.sh [build [TARGET...] | test [CTEST_ARG...]]" >&2; exit 2 ;;
esac
