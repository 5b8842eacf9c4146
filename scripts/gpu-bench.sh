#!/usr/bin/env bash
# The GPU benchmark suite (bench/gpu, docs/benchmarks.md "GPU (H100)"), in two halves:
#   scripts/gpu-bench.sh build    here (nvcc, no GPU needed): build gpu_bench and
#                                 gpu_test_pipeline in build-gpubench, strip them into
#                                 .gpubuild/bench with the libfmt they link (about 3 MB;
#                                 carry .gpubuild/bench, the travel limit is 64 MiB).
#   scripts/gpu-bench.sh device   on the GPU machine, one call: the pipeline tests, the
#                                 whole suite with its lever sweeps, PyTorch's unfold
#                                 for the im2col reference, then ncu on the tuned
#                                 configurations. Results under $OUT (default ./gpu-out):
#                                 bench.txt, bench.csv (bench-W.* with WORKLOADS), unfold.txt,
#                                 ncu.txt, ncu-short.txt, ncu-feed.txt, ncu-multicast.txt,
#                                 ncu-multicast-metrics.txt, resources.txt, log.txt.
# Environment: BENCH_ARGS (extra gpu_bench arguments), NCU=0 to skip the profiler,
#   WORKLOADS="copy transpose ..." (one gpu_bench --only W per workload, WORKLOAD_LIMIT
#   seconds each, results in bench-W.txt/.csv), UNFOLD=0 (no PyTorch), NCU_KERNELS (regex),
#   NCU_LIMIT (seconds), NCU_ARGS (extra gpu_bench arguments under ncu).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${BUILD_DIR:-$ROOT/build-gpubench}
DIR=$ROOT/.gpubuild/bench

build() {
  cmake -S "$ROOT" -B "$B" -G Ninja -DTMAKIT_CUDA=ON -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
  ninja -C "$B" -j"${JOBS:-1}" gpu_bench gpu_test_pipeline || exit 1
  mkdir -p "$DIR"
  strip -o "$DIR/gpu_bench" "$B/bench/gpu/gpu_bench"
  strip -o "$DIR/gpu_test_pipeline" "$B/src/gpu/gpu_test_pipeline"
  local fmt
  fmt=$(ldd "$B/bench/gpu/gpu_bench" | awk '/libfmt/ {print $3}')
  [ -n "$fmt" ] && cp -L "$fmt" "$DIR/"
  ls -la "$DIR"
  du -sh "$DIR"
}

unfold() {  # PyTorch's F.unfold on the same layer shapes: bytes of the im2col matrix written per second
  python3 - <<'PY'
import torch, torch.nn.functional as F
print("torch", torch.__version__)
for n, h, w, c in [(128, 56, 56, 64), (128, 28, 28, 128), (128, 14, 14, 256), (128, 7, 7, 512)]:
    x = (torch.randint(-255, 256, (n, c, h, w), device="cuda").to(torch.bfloat16) / 256)
    x[x == 0] = 1 / 256
    y = F.unfold(x, 3, padding=1)                      # (n, c*9, h*w)
    ok = torch.equal(y.view(n, c, 9, h * w)[:, :, 4], x.view(n, c, h * w))  # centre tap = input
    ts = []
    for i in range(23):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); F.unfold(x, 3, padding=1); b.record(); torch.cuda.synchronize()
        if i >= 3: ts.append(a.elapsed_time(b))
    ms = sorted(ts)[len(ts) // 2]
    print(f"unfold {h}x{w}x{c} n{n} bf16: {ms:.3f} ms, {y.numel() * 2 / ms / 1e6:.0f} GB/s of im2col matrix written, check {'ok' if ok else 'FAILED'}")
PY
}

device() {
  local out=${OUT:-$ROOT/gpu-out}
  mkdir -p "$out"
  exec > >(tee "$out/log.txt") 2>&1
  export LD_LIBRARY_PATH=$DIR:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  if ! ldconfig -p | grep -q libcublas.so.13 && [ ! -e /usr/local/cuda/lib64/libcublas.so.13 ]; then
    local lib
    lib=$(find /usr/local /opt -name 'libcublas.so.13*' 2>/dev/null | head -1)
    [ -n "$lib" ] && export LD_LIBRARY_PATH=$(dirname "$lib"):$LD_LIBRARY_PATH
  fi
  nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem,clocks.max.sm --format=csv
  echo "ncu: $(command -v ncu || echo missing)"
  # Registers, stack (spills) and shared memory of every kernel in the suite.
  cuobjdump --dump-resource-usage "$DIR/gpu_bench" 2>&1 | grep -E 'Function|REG' >"$out/resources.txt"
  grep -B1 -E 'STACK:[1-9]' "$out/resources.txt" | head -20
  echo "== pipeline tests"
  timeout 60 "$DIR/gpu_test_pipeline"; echo "gpu_test_pipeline exit $?"
  echo "== suite"
  if [ -n "${WORKLOADS:-}" ]; then
    # One process per workload (--only), each with its own time limit, so that a slow or
    # stuck workload cannot take the others' results with it; every ratio is still to
    # cudaMemcpy measured in the same process.
    local w
    for w in $WORKLOADS; do
      # shellcheck disable=SC2086
      timeout "${WORKLOAD_LIMIT:-150}" "$DIR/gpu_bench" --reps 30 --only "$w" --csv "$out/bench-$w.csv" ${BENCH_ARGS:-} \
        >"$out/bench-$w.txt" 2>&1
      echo "gpu_bench --only $w exit $?"
    done
  else
    # shellcheck disable=SC2086
    timeout 300 "$DIR/gpu_bench" --reps 30 --csv "$out/bench.csv" ${BENCH_ARGS:-} >"$out/bench.txt" 2>&1
    echo "gpu_bench exit $?"
  fi
  if [ "${UNFOLD:-1}" = 1 ]; then
    echo "== unfold"
    unfold >"$out/unfold.txt" 2>&1
    cat "$out/unfold.txt"
  fi
  if [ "${NCU:-1}" = 1 ] && command -v ncu >/dev/null; then
    echo "== ncu (tuned configurations, --quick, clocks left alone)"
    local want=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_red.sum,l1tex__m_xbar2l1tex_read_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_membar.ratio
    # The feed's own pass: what reaches the SMs, what L2 reads, and the multicast share.
    local want_feed=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum,l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld_dest_multicast.sum,l1tex__m_l1tex2xbar_read_requests_mem_global_op_tma_ld_dest_multicast.sum,sm__warps_active.avg.pct_of_peak_sustained_active
    # Only the metrics this ncu knows for this GPU (an unknown name fails the whole run);
    # the names that mention multicast are listed for the record.
    local known
    known=$(ncu --query-metrics 2>/dev/null | awk '{print $1}')
    grep -i multicast <<<"$known" | head -20 >"$out/ncu-multicast-metrics.txt"
    known_only() {
      local x m=""
      for x in ${1//,/ }; do
        if grep -qx "${x%%.*}" <<<"$known"; then m=${m:+$m,}$x; else echo "ncu: no metric ${x%%.*} here, left out" >&2; fi
      done
      echo "$m"
    }
    # shellcheck disable=SC2086
    timeout "${NCU_LIMIT:-240}" ncu --clock-control none --kernel-name regex:"${NCU_KERNELS:-relay_kernel|vec_copy|tma_load_stg|ldg_tma_store|tma_transpose|tma_splitk|classic|raw_reduce|atomic_reduce|geam}" \
      --launch-count 200 --metrics "$(known_only "$want")" "$DIR/gpu_bench" --quick --reps 1 ${NCU_ARGS:-} >"$out/ncu.txt" 2>&1
    echo "ncu exit $?"
    grep -E '^  [a-z_]+.*\(|gpu__time|dram__|lts__t|stalled|warps_active' "$out/ncu.txt" | sed 's/  */ /g' | head -400 >"$out/ncu-short.txt"
    timeout "${NCU_LIMIT:-240}" ncu --clock-control none --kernel-name regex:feed --launch-count 200 \
      --metrics "$(known_only "$want_feed")" "$DIR/gpu_bench" --quick --reps 1 --only gemm >"$out/ncu-feed.txt" 2>&1
    echo "ncu (feed) exit $?"
    timeout "${NCU_LIMIT:-240}" ncu --clock-control none --kernel-name regex:mcast --launch-count 200 \
      --metrics "$(known_only "$want_feed,smsp__average_warp_latency_issue_stalled_membar.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio")" \
      "$DIR/gpu_bench" --quick --reps 1 --only multicast >"$out/ncu-multicast.txt" 2>&1
    echo "ncu (multicast) exit $?"
  fi
  echo "== suite output (sweep in bench*.txt)"
  cat "$out"/bench*.txt
}

case "${1:-}" in
  build) build ;;
  device) device ;;
  *) echo "usage: $0 build | device" >&2; exit 2 ;;
esac
