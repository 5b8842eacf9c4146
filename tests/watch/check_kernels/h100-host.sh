#!/bin/sh
# tmakit check's host side on a real GPU (docs/check.md, "On the H100"). From the repository
# root, with the stripped binaries of build-h/h100 carried (tmakit, libtmakit_watch.so,
# tmakit-ptxas, check_probe, check_example, libfmt.so.9):
#   OUT=/some/folder sh tests/watch/check_kernels/h100-host.sh [build-h/h100]
# Each run prints its report and "== what: status N (expected)"; the traces go to $OUT.
set -u
C=$(cd "${1:-build-h/h100}" && pwd)
OUT=${OUT:-/tmp/tmakit-check-h100}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$C${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
T="$C/tmakit"
K=tests/watch/check_kernels/bulk.ptx
nvidia-smi -L 2>/dev/null
for route in linked dlsym gpa runtime ex library link; do
  "$T" check --timeout 10 --save-trace "$OUT/ok-$route" -- "$C/check_probe" $route $K bulk_ok
  echo "== bulk_ok by $route: status $? (0 expected: clean)"
done
start=$(date +%s)
"$T" check --timeout 3 --save-trace "$OUT/hang" -- "$C/check_probe" gpa $K bulk_expect_long
echo "== bulk_expect_long: status $? (124 expected: hang reported, then killed) after $(( $(date +%s) - start )) s"
LD_PRELOAD="$C/libtmakit_watch.so" "$C/check_probe" gpa $K bulk_ok
echo "== bulk_ok preloaded without check: status $? (0 expected, no tmakit check line above)"
"$T" check --timeout 10 --save-trace "$OUT/example" -- "$C/check_example"
echo "== check_example (tmakit_instrument_ptx): status $? (0 expected: clean, 'bulk_copy ran')"
"$T" check --timeout 120 --save-trace "$OUT/triton" -- python3 tests/watch/check_kernels/triton_copy.py
echo "== triton_copy.py: status $? (0 expected: one launch checked, clean, 'triton copy ok')"
ls -R "$OUT" | head -80
