#!/usr/bin/env bash
# GPU side of tmakit, in two halves (docs/hardware-notes.md):
#   scripts/gpu.sh build    here (nvcc, no GPU needed): configure build-gpu with
#                           TMAKIT_CUDA=ON, build the harnesses and GPU tests, copy
#                           them to .gpubuild/bin (ignored by git; carried to the device).
#   scripts/gpu.sh device   on the GPU machine: run every harness and GPU test from
#                           .gpubuild/bin and write results under $OUT (default ./gpu-out):
#                           driver_verdicts.jsonl, vectors.tar.gz, log.txt.
#   scripts/gpu.sh unpack DIR   here: copy DIR's results into tests/vectors/.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$ROOT/.gpubuild/bin

# Vectors per category (tile_load first: the settled [H] facts are richest there).
CATEGORIES="tile_load:650:11 tile_store:300:12 tile_reduce:330:13 bulk_copy:150:14 multicast:120:15"

build() {
  cmake -S "$ROOT" -B "$ROOT/build-gpu" -G Ninja -DTMAKIT_CUDA=ON -DTMAKIT_BUILD_BENCH=OFF >/dev/null || exit 1
  ninja -C "$ROOT/build-gpu" -j"${JOBS:-1}" record_driver_verdicts record_vectors gpu_test_device_library \
    gpu_test_debug_wait || exit 1
  mkdir -p "$BIN"
  cp "$ROOT"/build-gpu/src/gpu/{record_driver_verdicts,record_vectors,gpu_test_device_library,gpu_test_debug_wait} "$BIN/"
  ls -la "$BIN"
}

# One category, resuming after a faulting case (exit 3) at most 5 times.
record_category() {
  local dir=$1 cat=$2 n=$3 seed=$4 first=0
  for attempt in 1 2 3 4 5 6; do
    timeout 300 "$BIN/record_vectors" "$dir" "$cat" "$n" "$seed" "$first"
    local rc=$?
    [ $rc -eq 3 ] || { echo "record_vectors $cat exit $rc"; return; }
    local last
    last=$(grep "^FAULT $cat/" "$dir/mismatches.txt" | tail -1 | sed 's|.*/||')
    first=$((10#$last + 1))
    echo "resuming $cat at case $first"
  done
}

device() {
  local out=${OUT:-$ROOT/gpu-out}
  mkdir -p "$out"
  exec > >(tee "$out/log.txt") 2>&1
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  echo "== driver verdicts"
  time timeout 300 "$BIN/record_driver_verdicts" "$out/driver_verdicts.jsonl" 2400 20261122
  echo "== GPU tests"
  timeout 120 "$BIN/gpu_test_device_library"; echo "test_device_library exit $?"
  timeout 60 "$BIN/gpu_test_debug_wait" | tee /tmp/debug_wait.txt
  grep -q "tmakit: mbarrier stuck" /tmp/debug_wait.txt && echo "PASS debug wait printed the barrier" ||
    echo "FAIL debug wait printed nothing"
  echo "== hardware vectors"
  local vec=/tmp/vectors
  rm -rf "$vec"; mkdir -p "$vec"
  for spec in $CATEGORIES; do
    IFS=: read -r cat n seed <<<"$spec"
    time record_category "$vec" "$cat" "$n" "$seed"
  done
  for d in "$vec"/*/; do echo "$(basename "$d"): $(ls "$d" | wc -l) vectors"; done
  echo "mismatches against the harness reference: $(grep -vc '^FAULT' "$vec/mismatches.txt" 2>/dev/null)"
  du -sh "$vec"
  tar -C "$vec" -czf "$out/vectors.tar.gz" .
}

unpack() {
  local dir=$1
  cp "$dir/driver_verdicts.jsonl" "$ROOT/tests/vectors/driver_verdicts.jsonl"
  for c in tile_load tile_store tile_reduce bulk_copy multicast; do rm -rf "$ROOT/tests/vectors/$c"; done
  tar -C "$ROOT/tests/vectors" -xzf "$dir/vectors.tar.gz"
  mkdir -p "$ROOT/tests/vectors/logs"
  mv "$ROOT/tests/vectors/mismatches.txt" "$ROOT/tests/vectors/logs/" 2>/dev/null
  cp "$dir/log.txt" "$ROOT/tests/vectors/logs/gpu-run.log"
}

case "${1:-}" in
  build) build ;;
  device) device ;;
  unpack) unpack "$2" ;;
  *) echo "usage: $0 build | device | unpack DIR" >&2; exit 2 ;;
esac
