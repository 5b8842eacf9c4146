#!/usr/bin/env bash
# `tmakit watch` on a GPU machine (docs/watch.md), in two halves:
#   scripts/watch-device.sh build    here: build tmakit, libtmakit_watch.so, watch_probe and
#                                    watch_runtime_probe (BUILD_DIR, default build), stripped, into
#                                    .gpubuild/watch with the libfmt they need (carry .gpubuild/watch).
#   scripts/watch-device.sh device   on the GPU machine: every entry path against the real driver,
#                                    the recorded verdicts replayed through the real driver, the
#                                    hostile-argument cases, the CUDA runtime path, Triton programs
#                                    (a good copy, descriptors that get past Triton's checks, speed)
#                                    and PyTorch operations, each under `tmakit watch --log`;
#                                    results in $OUT/watch-device.tar.gz and $OUT/watch-device.txt.
#                                    WATCH_PARTS picks sections: "driver runtime triton bench torch".
#   scripts/watch-device.sh unpack DIR   here: DIR's results -> tests/vectors/watch/h100/.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
W=$ROOT/.gpubuild/watch

build() {
  local b=${BUILD_DIR:-$ROOT/build}
  ninja -C "$b" tmakit tmakit_watch watch_probe watch_runtime_probe || exit 1
  rm -rf "$W" && mkdir -p "$W"
  strip -o "$W/tmakit" "$b/tools/tmakit/tmakit"
  strip -o "$W/libtmakit_watch.so" "$b/src/watch/libtmakit_watch.so"
  strip -o "$W/watch_probe" "$b/tests/watch/watch_probe"
  strip -o "$W/watch_runtime_probe" "$b/tests/watch/watch_runtime_probe"
  cp -L "$(ldd "$b/tools/tmakit/tmakit" | awk '/libfmt/ {print $3}')" "$W/"
  ls -la "$W"
}

device() {
  local out=${OUT:-$ROOT/watch-out} r=/tmp/watch-device
  rm -rf "$r" && mkdir -p "$r" "$out"
  exec > >(tee "$out/watch-device.txt") 2>&1
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  export LD_LIBRARY_PATH=$W${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local tw="$W/tmakit watch" v=$ROOT/tests/vectors/driver_verdicts.jsonl
  local parts=" ${WATCH_PARTS:-driver runtime triton bench torch} "
  if [[ $parts == *" driver "* ]]; then
  echo "== entry paths on the real driver (200 recorded maps each)"
  for p in linked dlsym gpa runtime; do
    "$W/watch_probe" $p replay "$v" 0 200 >"$r/plain-$p.out" 2>&1
    $tw --log "$r/paths-$p.jsonl" -- "$W/watch_probe" $p replay "$v" 0 200 >"$r/paths-$p.out" 2>"$r/paths-$p.err"
    echo "$p: exit $? $(cmp -s "$r/plain-$p.out" "$r/paths-$p.out" && echo same-output || echo OUTPUT-DIFFERS)" \
      "$(tail -1 "$r/paths-$p.err")"
  done
  echo "== every recorded verdict through the real driver, watched"
  for f in "$v" "$ROOT/tests/vectors/driver_verdicts_im2col.jsonl"; do
    [ -f "$f" ] || continue
    local n; n=$(basename "$f" .jsonl)
    $tw --log "$r/replay-$n.jsonl" -- "$W/watch_probe" dlsym replay "$f" >"$r/replay-$n.out" 2>"$r/replay-$n.err"
    echo "$n: exit $? $(tail -1 "$r/replay-$n.err")"
  done
  echo "== hostile arguments, one process each"
  for c in $("$W/watch_probe" dlsym defensive list); do
    timeout 20 $tw --log "$r/defensive-$c.jsonl" -- "$W/watch_probe" dlsym defensive "$c" >"$r/defensive-$c.out" 2>"$r/defensive-$c.err"
    echo "$c: exit $? $(cat "$r/defensive-$c.out")"
  done
  echo "== replace address, threads, fork, exec"
  $tw --log "$r/replace.jsonl" -- "$W/watch_probe" linked replace "$v" 2>&1 | grep -v "^  "
  $tw --log "$r/threads.jsonl" -- "$W/watch_probe" dlsym threads "$v" 8 200 2>&1 | tail -2
  $tw --log "$r/fork.jsonl" -- "$W/watch_probe" dlsym fork "$v" 2>&1 | grep -E "^map|tmakit watch: pid"
  fi
  if [[ $parts == *" runtime "* ]]; then
  echo "== the CUDA runtime's path (cudaGetDriverEntryPoint)"
  $tw --log "$r/runtime.jsonl" -- "$W/watch_runtime_probe" 2>&1
  fi
  local t=$ROOT/tests/watch/device/triton_watch.py
  if [[ $parts == *" triton "* ]]; then
  echo "== Triton"
  python3 "$t" good >/dev/null 2>&1  # compile once, outside the timings
  $tw --log "$r/triton-good.jsonl" -- python3 "$t" good 2>&1 | tail -3
  for c in $(python3 "$t" cases); do
    timeout 120 python3 "$t" case "$c" >"$r/triton-plain-$c.txt" 2>&1
    timeout 120 $tw --log "$r/triton-$c.jsonl" -- python3 "$t" case "$c" >"$r/triton-watch-$c.txt" 2>&1
    echo "-- $c"; echo "   plain:   $(grep "^case" "$r/triton-plain-$c.txt")"
    echo "   watched: $(grep "^case" "$r/triton-watch-$c.txt")"
    grep -E "tmakit watch:|\[(map|watch)\.|    at |no Python" "$r/triton-watch-$c.txt" | head -12 | sed 's/^/   /'
  done
  fi
  if [[ $parts == *" bench "* ]]; then
  echo "== Triton launch speed (2 host maps per launch)"
  for round in 1 2; do
    python3 "$t" bench 2000 | sed "s/^/plain ($round): /"
    $tw -- python3 "$t" bench 2000 2>/dev/null | sed "s/^/watched ($round): /"
    $tw --log "$r/bench.jsonl" -- python3 "$t" bench 2000 2>/dev/null | sed "s/^/watched+log ($round): /"
  done
  rm -f "$r/bench.jsonl"
  fi
  if [[ $parts == *" torch "* ]]; then
  echo "== PyTorch operations"
  local o=$ROOT/tests/watch/device/torch_ops.py
  for op in $(python3 "$o" list); do
    timeout 240 $tw --log "$r/torch-$op.jsonl" -- python3 "$o" "$op" >"$r/torch-$op.txt" 2>&1
    echo "$op: exit $? $(grep -E "^$op:" "$r/torch-$op.txt") $(grep -c '"kind":"call"' "$r/torch-$op.jsonl") calls" \
      "$(grep -o '"call":"[A-Za-z0-9]*","call_site[^]]*' "$r/torch-$op.jsonl" | head -1 | cut -c1-200)"
  done
  fi
  tar -C "$r" -czf "$out/watch-device.tar.gz" .
  ls -la "$out"
}

unpack() {
  local d=$ROOT/tests/vectors/watch
  mkdir -p "$d/h100"
  tar -C "$d/h100" -xzf "$1/watch-device.tar.gz"
  cp "$1/watch-device.txt" "$d/h100/watch-device.txt"
}

case "${1:-}" in
  build) build ;;
  device) device ;;
  unpack) unpack "$2" ;;
  *) echo "usage: $0 build | device | unpack DIR" >&2; exit 2 ;;
esac
