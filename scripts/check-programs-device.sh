#!/usr/bin/env bash
# The project's own nvcc-built CUDA programs under `tmakit check` (docs/check.md, "nvcc-built
# C++"): the bench suite's kernels and the GPU engine's kernel, from their fatbins' PTX, with
# no change to either program. Issue 18's "no false reports on correct kernels".
#   scripts/check-programs-device.sh build    here: configure BUILD_DIR (default build-embed) with
#                                             -DTMAKIT_EMBED_PTX=ON, build gpu_bench, tmakit (with
#                                             the GPU engine), libtmakit_watch.so and tmakit-ptxas,
#                                             stripped, with libfmt, into .gpubuild/programs; a
#                                             sample of recorded scenarios into .gpubuild/programs/sample.
#   scripts/check-programs-device.sh device   on the GPU machine (carry .gpubuild/programs): the bench
#                                             workloads plain and under `tmakit check`, the GPU engine
#                                             on the examples and the sample under `tmakit check`,
#                                             Triton's device-descriptor copy under `tmakit check`.
#                                             Log in $OUT/log.txt, traces in $OUT/programs.tar.xz.
#                                             PARTS picks sections: "bench engine triton".
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
P=$ROOT/.gpubuild/programs

build() {
  local b=${BUILD_DIR:-$ROOT/build-embed}
  cmake -S "$ROOT" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTMAKIT_EMBED_PTX=ON -DTMAKIT_BUILD_TESTS=OFF >/dev/null || exit 1
  ninja -C "$b" -j"${JOBS:-2}" gpu_bench tmakit tmakit_watch tmakit_ptxas || exit 1
  rm -rf "$P" && mkdir -p "$P/sample"
  strip -o "$P/gpu_bench" "$b/bench/gpu/gpu_bench"
  strip -o "$P/tmakit" "$b/tools/tmakit/tmakit"
  strip -o "$P/libtmakit_watch.so" "$b/src/watch/libtmakit_watch.so"
  strip -o "$P/tmakit-ptxas" "$b/tools/check/tmakit-ptxas"
  local fmt; fmt=$(ldd "$b/tools/tmakit/tmakit" | awk '/libfmt/ {print $3; exit}')
  [ -n "$fmt" ] && cp -L "$fmt" "$P/"
  python3 - "$ROOT" "$P/sample" <<'PY'
import json, pathlib, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for cat in ["tile_load", "tile_store", "tile_reduce", "bulk_copy", "multicast", "im2col_load", "memcpy_async_tx"]:
    for f in sorted((root / "tests/vectors" / cat).glob("*.json"))[::40]:
        (out / f"{cat}_{f.stem}.json").write_text(json.dumps(json.loads(f.read_text())["scenario"]))
PY
  ls -la "$P" && ls "$P/sample" | wc -l && du -sh "$P"
}

device() {
  local out=${OUT:-$ROOT/programs-out} parts=" ${PARTS:-bench engine triton} "
  mkdir -p "$out/traces"
  exec > >(tee "$out/log.txt") 2>&1
  local start=$SECONDS
  date -u
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  export LD_LIBRARY_PATH=$P${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  "$P/tmakit" --version 2>/dev/null | head -1
  if [[ $parts == *" bench "* ]]; then
    for w in copy transpose reduce multicast; do
      echo "== gpu_bench --quick --only $w, plain (every configuration: its ms is the plain time of that launch)"
      timeout -k 5 120 "$P/gpu_bench" --quick --only "$w" --reps 5 2>&1
      echo "== gpu_bench --quick --only $w, under tmakit check --launches 1 (each kernel's first launch traced and"
      echo "   replayed; 'ms on the GPU traced' is that launch's kernel time with the trace on)"
      timeout -k 5 240 "$P/tmakit" check --timeout 30 --launches 1 --capacity 4194304 --save-trace "$out/traces/bench-$w" -- \
        "$P/gpu_bench" --quick --only "$w" --reps 5 2>&1 | grep -v '^| ' | grep -E 'tmakit check|error|warning|FAIL' | grep -v 'not replayed' | head -60
      echo "   exit ${PIPESTATUS[0]}"
    done
  fi
  if [[ $parts == *" engine "* ]]; then
    echo "== the GPU engine (tmakit run --engine gpu) under tmakit check"
    local n=0 clean=0
    for f in "$ROOT"/examples/*/scenario.json "$P"/sample/*.json; do
      n=$((n + 1))
      local name; name=$(basename "$(dirname "$f")")_$(basename "$f" .json)
      local o; o=$(timeout -k 5 60 "$P/tmakit" check --timeout 20 --save-trace "$out/traces/engine-$name" -- \
        "$P/tmakit" run --engine gpu "$f" -o "$out/run-$name" 2>&1)
      local s=$?
      local summary; summary=$(echo "$o" | grep -E '^tmakit check: [0-9]+ launch|no instrumented kernel' | tail -1)
      echo "-- $name: exit $s; $summary"
      echo "$o" | grep -E ' error: | warning: ' | head -5 | sed 's/^/   /'
      echo "$summary" | grep -q ', 0 findings' && clean=$((clean + 1))
    done
    echo "engine: $clean of $n runs with 0 findings"
  fi
  if [[ $parts == *" triton "* ]]; then
    echo "== Triton 3.6 TMA copy, device-built descriptors, under tmakit check (the ptxas route)"
    for m in device host; do
      timeout -k 5 180 "$P/tmakit" check --timeout 20 --save-trace "$out/traces/triton-$m" -- \
        python3 "$ROOT/tests/gpu/check/triton_tma.py" $m 2>&1 | grep -v 'note: operations of this cluster' | tail -6
      echo "   exit ${PIPESTATUS[0]}"
    done
  fi
  echo "device half took $((SECONDS - start)) s"
  # The traces are large (a bench launch fills its buffer): keep the engine's and Triton's.
  rm -rf "$out"/traces/bench-*
  tar -C "$out" -cJf "$out/programs.tar.xz" traces log.txt 2>/dev/null
  rm -rf "$out/traces" "$out"/run-*
  ls -la "$out"
}

case "${1:-}" in
  build) build ;;
  device) device ;;
  *) echo "usage: $0 build|device" >&2; exit 2 ;;
esac
