#!/usr/bin/env bash
# GPU side of tmakit, in two halves (docs/hardware-notes.md):
#   scripts/gpu.sh build    here (nvcc, no GPU needed): configure build-gpu with
#                           TMAKIT_CUDA=ON, build the harnesses and GPU tests, copy
#                           them to .gpubuild/bin (ignored by git; carried to the device).
#   scripts/gpu.sh device   on the GPU machine: run every harness and GPU test from
#                           .gpubuild/bin and write results under $OUT (default ./gpu-out):
#                           driver_verdicts.jsonl, vectors.tar.gz, log.txt.
#   scripts/gpu.sh unpack DIR   here: copy DIR's results into tests/vectors/.
# The GPU engine (docs/gpu-engine.md):
#   scripts/gpu.sh sample   here: extract every 8th recorded vector's scenario into
#                           .gpubuild/sample/ (for `tmakit run --engine both`).
#   scripts/gpu.sh engine   on the GPU machine: `tmakit run --engine both` over the
#                           sample and examples/, engine_vectors replay over every
#                           recorded vector, engine_vectors faults; results under $OUT.
#   scripts/gpu.sh unpack-faults DIR   here: DIR/faults.tar.gz -> tests/vectors/faults/.
# Hardware truth (docs/hardware-notes.md, "§14 answers"):
#   scripts/gpu.sh truth    on the GPU machine: the GPU tests, `engine`, then
#                           `engine_vectors record` of the im2col categories and the
#                           §14 question scenarios; results under $OUT (truth-vectors.tar.gz).
#                           Carry .gpubuild/{engine,lib,sample,tests}.
#   scripts/gpu.sh check    on the GPU machine: every GPU test (tests/gpu/*.cu), then `engine`;
#                           results under $OUT (check-log.txt, one log per test).
#   scripts/gpu.sh unpack-truth DIR    here: DIR/truth-vectors.tar.gz -> tests/vectors/{im2col_load,im2col_store,tile_load_interleave,tile_store_interleave,im2col_load_interleave,im2col_store_interleave,questions}/.
# The im2col driver verdicts (docs/hardware-notes.md, "im2col driver verdicts"):
#   scripts/gpu.sh build-verdicts   here: build record_driver_verdicts alone (BUILD_DIR, default
#                           build-gpu) into .gpubuild/verdicts (stripped; cudart is static, libfmt
#                           goes to .gpubuild/lib when the binary needs it).
#   scripts/gpu.sh verdicts on the GPU machine: record the im2col and im2col_wide verdicts;
#                           results under $OUT (driver_verdicts_im2col.jsonl, verdicts-log.txt).
#                           Carry .gpubuild/verdicts and .gpubuild/lib.
#   scripts/gpu.sh unpack-verdicts DIR here: DIR's file -> tests/vectors/driver_verdicts_im2col.jsonl.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$ROOT/.gpubuild/bin

# Vectors per category (tile_load first: the settled [H] facts are richest there).
CATEGORIES="tile_load:650:11 tile_store:300:12 tile_reduce:330:13 bulk_copy:150:14 multicast:120:15"

B=${BUILD_DIR:-$ROOT/build-gpu}

build() {
  cmake -S "$ROOT" -B "$B" -G Ninja -DTMAKIT_CUDA=ON -DTMAKIT_BUILD_BENCH=OFF >/dev/null || exit 1
  local tests
  tests=$(cd "$ROOT/tests/gpu" && ls *.cu | sed 's/^/gpu_/; s/\.cu$//')
  ninja -C "$B" -j"${JOBS:-1}" record_driver_verdicts record_vectors engine_vectors tmakit $tests || exit 1
  mkdir -p "$BIN"
  cp "$B"/src/gpu/{record_driver_verdicts,record_vectors,gpu_test_device_library,gpu_test_debug_wait,engine_vectors} \
    "$B"/tools/tmakit/tmakit "$BIN/"
  # The engine's two programs, stripped, plus the libfmt tmakit links (the device lacks it):
  # carry .gpubuild/engine and .gpubuild/lib (64 MiB travel limit).
  mkdir -p "$ROOT/.gpubuild/engine" "$ROOT/.gpubuild/lib"
  strip -o "$ROOT/.gpubuild/engine/tmakit" "$B/tools/tmakit/tmakit"
  strip -o "$ROOT/.gpubuild/engine/engine_vectors" "$B/src/gpu/engine_vectors"
  cp -L "$(ldd "$B/tools/tmakit/tmakit" | awk '/libfmt/ {print $3}')" "$ROOT/.gpubuild/lib/"
  # Every GPU test (tests/gpu/*.cu), stripped, for `truth` and `check` (.gpubuild/bin is too big to carry).
  mkdir -p "$ROOT/.gpubuild/tests"
  for t in $tests; do strip -o "$ROOT/.gpubuild/tests/$t" "$B/src/gpu/$t"; done
  ls -la "$BIN" "$ROOT/.gpubuild/engine" "$ROOT/.gpubuild/tests"
}

sample() {
  rm -rf "$ROOT/.gpubuild/sample"
  mkdir -p "$ROOT/.gpubuild/sample"
  python3 - "$ROOT" <<'PY'
import json, pathlib, sys
root = pathlib.Path(sys.argv[1])
for cat in ["tile_load", "tile_store", "tile_reduce", "bulk_copy", "multicast", "im2col_load", "im2col_store", "tile_load_interleave", "tile_store_interleave", "im2col_load_interleave", "im2col_store_interleave"]:
    files = sorted((root / "tests/vectors" / cat).glob("*.json"))
    for f in files[::8]:
        sc = json.loads(f.read_text())["scenario"]
        (root / ".gpubuild/sample" / f"{cat}_{f.stem}.json").write_text(json.dumps(sc))
PY
  ls "$ROOT/.gpubuild/sample" | wc -l
}

# From here on everything the calling mode prints also goes to $out/$1 (the caller's
# $out, created), starting with the GPU's name, driver and compute capability.
log_to() {
  mkdir -p "$out"
  exec > >(tee "$out/$1") 2>&1
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
}

# One line per scenario: NAME rc=N both: ... (the summary line of `tmakit run --engine both`).
engine() {
  local out=${OUT:-$ROOT/gpu-out}
  local BIN=$ROOT/.gpubuild/engine
  export LD_LIBRARY_PATH=$ROOT/.gpubuild/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  mkdir -p /tmp/both
  log_to engine-log.txt
  echo "== tmakit run --engine both: sample + examples"
  ls "$ROOT"/.gpubuild/sample/*.json "$ROOT"/examples/*/scenario.json "$ROOT"/tests/gpu/scenarios/*.json >/tmp/both.list
  time xargs -P 4 -I{} sh -c 'n=$(echo {} | tr / _); timeout 60 '"$BIN"'/tmakit run --engine both {} >/tmp/both/$n.log 2>&1; echo "rc=$?" >>/tmp/both/$n.log' </tmp/both.list
  for f in /tmp/both/*.log; do echo "== $(basename "$f" .log)"; cat "$f"; done >"$out/both.txt"
  grep -h "^both:" /tmp/both/*.log | sort | uniq -c
  echo "== tmakit run --engine gpu -o"
  "$BIN/tmakit" run --engine gpu examples/quickstart/scenario.json -o /tmp/quickstart-gpu && ls -l /tmp/quickstart-gpu
  echo "== engine_vectors replay (every recorded vector)"
  time timeout 200 "$BIN/engine_vectors" replay "$ROOT"/tests/vectors/{tile_load,tile_store,tile_reduce,bulk_copy,multicast,im2col_load,im2col_store,tile_load_interleave,tile_store_interleave,im2col_load_interleave,im2col_store_interleave}/*.json \
    >"$out/replay.txt" 2>&1
  tail -9 "$out/replay.txt"
  echo "== engine_vectors faults"
  rm -rf /tmp/faults
  time timeout 150 "$BIN/engine_vectors" faults /tmp/faults "${FAULTS_PER_KIND:-12}" 2026 >"$out/faults.txt" 2>&1
  grep summary "$out/faults.txt"
  tar -C /tmp/faults -czf "$out/faults.tar.gz" .
}

unpack_faults() {
  rm -rf "$ROOT/tests/vectors/faults"
  mkdir -p "$ROOT/tests/vectors/faults"
  tar -C "$ROOT/tests/vectors/faults" -xzf "$1/faults.tar.gz"
}

# im2col and interleaved tile categories (COUNT random cases, SEED) and the §14 questions, recorded through the GPU engine.
TRUTH_CATEGORIES="im2col_load:160:31 im2col_store:80:32 tile_load_interleave:120:41 tile_store_interleave:100:42 im2col_load_interleave:80:43 im2col_store_interleave:60:44 memcpy_async_tx:120:16"

truth() {
  local out=${OUT:-$ROOT/gpu-out}
  local T=$ROOT/.gpubuild/tests
  log_to truth-log.txt
  echo "== GPU tests"
  timeout 120 "$T/gpu_test_device_library"; echo "gpu_test_device_library exit $?"
  timeout 60 "$T/gpu_test_debug_wait" | tee /tmp/debug_wait.txt
  grep -q "tmakit: mbarrier stuck" /tmp/debug_wait.txt && echo "PASS debug wait printed the barrier" ||
    echo "FAIL debug wait printed nothing"
  echo "== engine (its log: engine-log.txt)"
  (engine) >/dev/null 2>&1
  sleep 2  # the tee of engine-log.txt may still be writing
  grep -E "^ +[0-9]+ both:|^total|^summary|gpu = recorded|real" "$out/engine-log.txt"
  echo "== engine_vectors record"
  export LD_LIBRARY_PATH=$ROOT/.gpubuild/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local vec=/tmp/truth
  rm -rf "$vec"; mkdir -p "$vec"
  for spec in $TRUTH_CATEGORIES; do
    IFS=: read -r cat n seed <<<"$spec"
    time timeout 200 "$ROOT/.gpubuild/engine/engine_vectors" record "$cat" "$vec/$cat" "$n" "$seed" >"$vec/$cat.txt" 2>&1
    grep -v "model agrees" "$vec/$cat.txt" | tail -40
  done
  time timeout 200 "$ROOT/.gpubuild/engine/engine_vectors" record questions "$vec/questions" >"$vec/questions.txt" 2>&1
  cat "$vec/questions.txt"
  tar -C "$vec" -czf "$out/truth-vectors.tar.gz" .
}

# Every GPU test, each under its own timeout (the undefined multicast masks in their own
# processes, Q15), then `engine`. Carry .gpubuild/{tests,engine,lib,sample}. The summary
# lines of each test go to $OUT/check-log.txt.
check() {
  local out=${OUT:-$ROOT/gpu-out}
  local T=$ROOT/.gpubuild/tests
  log_to check-log.txt
  for t in "$T"/gpu_test_*; do
    local name args=()
    name=$(basename "$t")
    [ "$name" = gpu_test_fma_oob ] && args=("$out/fma_oob.jsonl")
    echo "== $name"
    timeout 180 "$t" "${args[@]}" >"$out/$name.log" 2>&1
    echo "$name exit $?"
    grep -E "PASS|FAIL|ALL|checks|passed|failed|SUMMARY|RESULT|stuck" "$out/$name.log" | tail -12
  done
  for spec in "2 0x7" "4 0x30" "8 0x1fe" "2 0" "4 0"; do
    echo "== gpu_test_multicast_clusters --unsafe $spec"
    # shellcheck disable=SC2086
    timeout 60 "$T/gpu_test_multicast_clusters" --unsafe $spec 2>&1 | grep -E "RESULT|UNSAFE" | head -3
  done
  (engine) >/dev/null 2>&1
  sleep 2
  grep -E "^ +[0-9]+ both:|^total|^summary|agree|real" "$out/engine-log.txt"
}

unpack_truth() {
  local tmp
  tmp=$(mktemp -d)
  tar -C "$tmp" -xzf "$1/truth-vectors.tar.gz"
  for c in im2col_load im2col_store tile_load_interleave tile_store_interleave im2col_load_interleave im2col_store_interleave memcpy_async_tx questions; do
    rm -rf "$ROOT/tests/vectors/$c"
    cp -r "$tmp/$c" "$ROOT/tests/vectors/$c"
  done
  mkdir -p "$ROOT/tests/vectors/logs"
  cat "$tmp"/*.txt >"$ROOT/tests/vectors/logs/truth-record.log"
  rm -rf "$tmp"
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
  log_to log.txt
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

# The seed and counts of tests/vectors/driver_verdicts_im2col.jsonl (im2col, im2col_wide, seed).
VERDICTS_IM2COL="1200 600 20260514"

build_verdicts() {
  cmake -S "$ROOT" -B "$B" -G Ninja -DTMAKIT_CUDA=ON -DTMAKIT_BUILD_BENCH=OFF >/dev/null || exit 1
  ninja -C "$B" -j"${JOBS:-2}" record_driver_verdicts || exit 1
  mkdir -p "$ROOT/.gpubuild/verdicts" "$ROOT/.gpubuild/lib"
  strip -o "$ROOT/.gpubuild/verdicts/record_driver_verdicts" "$B/src/gpu/record_driver_verdicts"
  local fmt
  fmt=$(ldd "$B/src/gpu/record_driver_verdicts" | awk '/libfmt/ {print $3}')
  [ -z "$fmt" ] || cp -L "$fmt" "$ROOT/.gpubuild/lib/"
  ldd "$ROOT/.gpubuild/verdicts/record_driver_verdicts"
  ls -la "$ROOT/.gpubuild/verdicts"
}

verdicts() {
  local out=${OUT:-$ROOT/gpu-out}
  export LD_LIBRARY_PATH=$ROOT/.gpubuild/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  log_to verdicts-log.txt
  # shellcheck disable=SC2086
  time timeout 300 "$ROOT/.gpubuild/verdicts/record_driver_verdicts" im2col "$out/driver_verdicts_im2col.jsonl" \
    $VERDICTS_IM2COL
  echo "record_driver_verdicts exit $?"
  wc -l "$out/driver_verdicts_im2col.jsonl"
}

unpack_verdicts() {
  cp "$1/driver_verdicts_im2col.jsonl" "$ROOT/tests/vectors/driver_verdicts_im2col.jsonl"
  mkdir -p "$ROOT/tests/vectors/logs"
  cp "$1/verdicts-log.txt" "$ROOT/tests/vectors/logs/verdicts-im2col.log"
}

case "${1:-}" in
  build) build ;;
  device) device ;;
  unpack) unpack "$2" ;;
  sample) sample ;;
  engine) engine ;;
  unpack-faults) unpack_faults "$2" ;;
  truth) truth ;;
  check) check ;;
  unpack-truth) unpack_truth "$2" ;;
  build-verdicts) build_verdicts ;;
  verdicts) verdicts ;;
  unpack-verdicts) unpack_verdicts "$2" ;;
  *) echo "usage: $0 build | device | unpack DIR | sample | engine | unpack-faults DIR | truth | check | unpack-truth DIR | build-verdicts | verdicts | unpack-verdicts DIR" >&2; exit 2 ;;
esac
