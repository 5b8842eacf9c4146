#!/usr/bin/env bash
# PTX lint speed (docs/benchmarks.md, "PTX lint"): builds a module of tens of MB from the
# repository's real kernels (nvcc -ptx of its CUDA sources, every function replicated under
# new names), then times `tmakit lint` and `ptxas -arch=sm_90a` on the same module in the
# same run, and lint on a quarter of it to show the time is linear in the size.
#
#   bench/lint_bench.sh [COPIES]     (default 30: about 24 MB)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
copies="${1:-30}"
tmakit="$build/tools/tmakit/tmakit"
[ -x "$tmakit" ] || cmake --build "$build" --target tmakit -- -j1 >/dev/null
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Real kernels: the GPU engine, the device library's tests and the GPU benchmarks.
n=0
for src in src/gpu/engine_kernel.cu tests/gpu/test_device_library.cu tests/gpu/test_pipeline.cu \
           bench/gpu/copy.cu bench/gpu/multicast.cu bench/gpu/reduce.cu bench/gpu/transpose.cu bench/gpu/im2col.cu; do
  [ -f "$root/$src" ] || continue
  if "$cuda/bin/nvcc" -std=c++20 -arch=sm_90a -ptx --expt-relaxed-constexpr -I"$root/include" \
       -I"$root/bench/gpu" -I"$root/src/gpu" -o "$work/k$n.ptx" "$root/$src" 2>/dev/null; then
    n=$((n + 1))
  fi
done
[ "$n" -gt 0 ] || { echo "$0: nvcc produced no PTX" >&2; exit 2; }

python3 - "$work" "$n" "$copies" <<'PY'
import re, sys
work, n, copies = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
header = ".version 9.0\n.target sm_90a\n.address_size 64\n\n"
bodies, patterns = [], []
for i in range(n):
    text = open(f"{work}/k{i}.ptx").read()
    text = re.sub(r"^\.(version|target|address_size)\b.*$", "", text, flags=re.M)
    # Names the module defines: functions and module-scope variables (not extern functions).
    names = set(re.findall(r"^(?:\.visible\s+|\.weak\s+)*\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)", text, re.M))
    names |= set(re.findall(r"^(?:\.visible\s+|\.extern\s+|\.weak\s+)*\.(?:global|shared|const)\s[^;=]*?([\w$]+)\s*(?:\[[^\]]*\])?\s*[;=]",
                            text, re.M))
    names = sorted(names, key=len, reverse=True)
    bodies.append(text)
    patterns.append(re.compile(r"(?<![\w$])(" + "|".join(map(re.escape, names)) + r")(?![\w$])") if names else None)
def build(path, k):
    with open(path, "w") as out:
        out.write(header)
        for c in range(k):
            for i, text in enumerate(bodies):
                out.write(patterns[i].sub(lambda m: f"{m.group(1)}_c{c}_{i}", text) if patterns[i] else text)
build(f"{work}/big.ptx", copies)
build(f"{work}/quarter.ptx", max(1, copies // 4))
PY

secs() {  # wall seconds of a command, best of $1 runs
  local best="" runs="$1"; shift
  for _ in $(seq "$runs"); do
    local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s.%N)
    local t; t=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
  done
  printf '%.3f' "$best"
}
big_mb=$(echo "$(stat -c %s "$work/big.ptx") / 1000000" | bc -l)
q_mb=$(echo "$(stat -c %s "$work/quarter.ptx") / 1000000" | bc -l)
insts=$("$tmakit" lint --format json "$work/big.ptx" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["instructions"])')
"$tmakit" lint "$work/big.ptx" || { echo "$0: the module does not lint clean" >&2; exit 1; }
lint_q=$(secs 3 "$tmakit" lint "$work/quarter.ptx")
lint_big=$(secs 3 "$tmakit" lint "$work/big.ptx")
t0=$(date +%s.%N)
"$cuda/bin/ptxas" -arch=sm_90a "$work/big.ptx" -o "$work/big.cubin" || { echo "$0: ptxas rejects the module" >&2; exit 1; }
ptxas_big=$(printf '%.3f' "$(echo "$(date +%s.%N) - $t0" | bc -l)")
printf 'module: %.1f MB, %s lines, %s TMA/mbarrier/fence instructions (%d kernels files x %d copies)\n' \
  "$big_mb" "$(wc -l < "$work/big.ptx")" "$insts" "$n" "$copies"
printf 'tmakit lint: %ss (%.0f MB/s); on a quarter of it (%.1f MB): %ss\n' "$lint_big" "$(echo "$big_mb / $lint_big" | bc -l)" "$q_mb" "$lint_q"
printf 'ptxas -arch=sm_90a: %ss\n' "$ptxas_big"
printf 'lint is %.0fx faster than ptxas; size x%.2f -> lint time x%.2f\n' "$(echo "$ptxas_big / $lint_big" | bc -l)" \
  "$(echo "$big_mb / $q_mb" | bc -l)" "$(echo "$lint_big / $lint_q" | bc -l)"
