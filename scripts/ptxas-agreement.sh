#!/usr/bin/env bash
# Agreement of `tmakit lint` with ptxas (docs/lint.md): tools/lintfuzz generates and mutates
# lines from the table of forms, asks ptxas and the linter about each, and prints the figures
# and every kind of disagreement, for sm_90, sm_90a and sm_100a.
#
#   scripts/ptxas-agreement.sh [--count N] [--seed S] [--record-sample]
#
# --record-sample rewrites tests/vectors/ptxas_sample.jsonl (the first 150 lines of each target
# with ptxas's verdicts), which test_ptx replays where no ptxas is installed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
ptxas="${PTXAS:-/usr/local/cuda/bin/ptxas}"
count=10000 seed=1 record=0
while [ $# -gt 0 ]; do
  case "$1" in
    --count) count="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --record-sample) record=1; shift ;;
    *) echo "usage: $0 [--count N] [--seed S] [--record-sample]" >&2; exit 2 ;;
  esac
done
[ -x "$ptxas" ] || { echo "$0: no ptxas at $ptxas (set PTXAS)" >&2; exit 2; }
[ -f "$build/build.ninja" ] || [ -f "$build/Makefile" ] || cmake -S "$root" -B "$build" -G Ninja -DTMAKIT_CUDA=OFF >/dev/null
cmake --build "$build" --target lintfuzz -- -j1 >/dev/null
out="$build/ptxas-agreement"
mkdir -p "$out"
sample="$root/tests/vectors/ptxas_sample.jsonl"
sample_args=()
if [ "$record" = 1 ]; then
  : > "$sample"
  sample_args=(--sample 150 --sample-out "$sample")
fi
"$ptxas" --version | tail -1
for target in sm_90 sm_90a sm_100a; do
  "$build/tools/lintfuzz/lintfuzz" --target "$target" --count "$count" --seed "$seed" --ptxas "$ptxas" \
    --out "$out/$target.jsonl" "${sample_args[@]}"
done
echo "every line's verdicts: $out/<target>.jsonl"
