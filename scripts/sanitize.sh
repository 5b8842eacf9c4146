#!/usr/bin/env bash
# The sanitized stage of CI (scripts/test.sh): the CPU parts built with AddressSanitizer and
# UndefinedBehaviorSanitizer in build-asan (no benchmarks, no CUDA: neither runs in CI), then
# every ctest test there. Any report fails the run: UBSan does not recover, ASan stops at the
# first error, LeakSanitizer runs at exit. Left out here: the fuzz targets (built with the same
# sanitizers by clang in the first stage's build/fuzz, and run there) and the Watch.* tests,
# which LD_PRELOAD libtmakit_watch.so into other programs: a sanitized preload library needs
# the ASan runtime first in the host program ("ASan runtime does not come first"), and ASan's
# own dlsym interception changes what the library is there to observe; for the same reason the
# tmakit check tests that run programs under the library (CheckHooks, CheckPtxas, CheckRun,
# CheckPtxFilter).
set -euo pipefail
cd "$(dirname "$0")/.."
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# -O1 builds about twice as fast as -O2 and keeps the tests quick; Debug keeps assert() on.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
  -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" -DCMAKE_SHARED_LINKER_FLAGS="$SAN" \
  -DTMAKIT_CUDA=OFF -DTMAKIT_BUILD_BENCH=OFF -DTMAKIT_BUILD_FUZZERS=OFF >/dev/null
cmake --build build-asan -j "$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_stack_use_after_return=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -E '^fuzz_|^Watch\.|^CheckHooks\.|^CheckPtxas\.|^CheckRun\.|^CheckPtxFilter\.'
