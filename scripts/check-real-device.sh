#!/usr/bin/env bash
# `tmakit check` on programs people really run (docs/check.md, "Real programs"), in two parts:
#   scripts/check-real-device.sh build    here: tmakit, libtmakit_watch.so, tmakit-ptxas (BUILD_DIR,
#        default build), the ring of tests/gpu/check/ring (four variants in one binary) on cuda::ptx
#        (ring.cu) and on tmakit's device library (ring_devlib.cu, CMake target check_ring_devlib), CUTLASS's
#        Hopper GEMM examples 48 (cooperative, 4×2 clusters, multicast) and 49 (ping-pong,
#        cooperative, 2×1 clusters) built with PTX embedded from PyPI nvidia-cutlass's sources
#        (pip download, into .gpubuild/ext), and Triton's tutorials when TRITON_TUTORIALS names a
#        folder holding them: everything into .gpubuild/real, packed as .gpupack/real.tar.xz
#        (carry .gpupack; ignored by git).
#   scripts/check-real-device.sh builds BASE_REV [EXP_REV]   here: the other builds the compare part
#        times beside this one, from git revisions (.gpupack/base, .gpupack/exp).
#   scripts/check-real-device.sh sass [TMAKIT...]   here: CUTLASS 48's GEMM kernel's SASS instructions
#        and spill bytes after each build's instrumentation (no GPU needed).
#   scripts/check-real-device.sh device   on the GPU machine, from the repository root: each program
#        plain and under `tmakit check --save-trace`, its exit status, the head lines and findings;
#        $OUT/log.txt and the traces as $OUT/traces-<part>.tar.xz. REAL_PARTS picks sections
#        ("ring cutlass small triton", "records": a faulting kernel under --records auto and CUTLASS 48
#        under --records host and device, and "mutants": CUTLASS's seeded bugs of
#        tests/gpu/check/cutlass_mutants.py, docs/check-seeded.md; "triton-mutants": the seeded bugs
#        in the Triton tutorials' kernels, tests/gpu/check/triton_tutorial_mutants.py; "cutedsl": CuTe
#        DSL's TMA copy kernel (the corpus's PTX) and its seeded bugs, tests/gpu/check/cutedsl_mutants.py; small: whole
#        launches at 512 for tests/vectors/check/real-*); GEMM_SIZE (default 1024) the CUTLASS problem
#        size; "profile": Nsight Compute on CUTLASS 48 at PROFILE_SIZE^3 (default 4096), plain and traced
#        (PROFILE_RUNS: what:launches-skipped, what plain, recording, not-recording, or base-… for the
#        build in .gpupack/base; and the SASS of
#        the cubins in .gpupack/sass, where carried); "compare": CUTLASS 48 traced under the build in
#        .gpupack/base (B), .gpupack/exp (E, where carried) and this one (N), in turn (COMPARE_ROUNDS, default 2; 4096^3 once where a build replays;
#        COMPARE_ENVS="NAME:VAR=v;..." times this one once an environment), and
#        Triton's matmuls and attention so where the tutorials and each build's tmakit-ptxas were carried; "ex49":
#        example 49's seven GEMMs at 4096^3, plain by Nsight Compute and traced; "clock": the probe of
#        tests/gpu/check/order_clock_probe.cu (a cluster's SMs read one %clock64); "warmth": each of
#        CUTLASS 48's launches timed alone by Nsight Compute, plain and traced. Each ring run is judged against
#        tests/gpu/check/ring/ring_expect.py (the rule at the
#        source's `// at:TAG` line) and the mutant drivers judge theirs: the log says AS EXPECTED or
#        DIFFERENT, and the last lines count them.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
R=$ROOT/.gpubuild/real
CUTLASS_VERSION=${CUTLASS_VERSION:-4.2.0.0}
ARCH="-gencode=arch=compute_90a,code=[sm_90a,compute_90a]"

# CUTLASS's sources, from PyPI nvidia-cutlass (pip download, into .gpubuild/ext): prints their folder.
cutlass_sources() {
  local ext=$ROOT/.gpubuild/ext src=$ROOT/.gpubuild/ext/cutlass/cutlass_library/source
  if [ ! -d "$src/include" ]; then
    mkdir -p "$ext" && python3 -m pip download -q --no-deps "nvidia-cutlass==$CUTLASS_VERSION" -d "$ext" >&2 &&
      unzip -q -o "$ext"/nvidia_cutlass-*.whl -d "$ext/cutlass" >&2 || return 1
  fi
  echo "$src"
}
# The flags CUTLASS's examples build with, for the sources in $1 (the GPU build and the SASS count alike).
cutlass_flags() {
  echo "-std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -DNDEBUG -I$1/include -I$1/tools/util/include" \
    "-I$1/examples/common -diag-suppress 177,550"
}

build() {
  local b=${BUILD_DIR:-$ROOT/build}
  ninja -C "$b" -j2 tmakit tmakit_watch tmakit_ptxas check_ring_devlib || exit 1
  mkdir -p "$R"
  strip -o "$R/tmakit" "$b/tools/tmakit/tmakit"
  strip -o "$R/libtmakit_watch.so" "$b/src/watch/libtmakit_watch.so"
  strip -o "$R/tmakit-ptxas" "$b/tools/check/tmakit-ptxas"
  local fmt; fmt=$(ldd "$b/tools/tmakit/tmakit" | awk '/libfmt/ {print $3; exit}')
  [ -n "$fmt" ] && cp -L "$fmt" "$R/"
  echo "== ring"
  nvcc -std=c++20 -O2 -lineinfo $ARCH tests/gpu/check/ring/ring.cu -o "$R/ring" || exit 1
  cp "$b/tests/gpu/check/check_ring_devlib" "$R/ring_devlib"  # the same flags, through tmakit::device
  nvcc -std=c++20 -O2 -lineinfo $ARCH tests/gpu/check/ring/fault.cu -o "$R/fault" || exit 1
  # CuTe DSL's TMA copy kernel is the corpus's PTX; this launches it as the DSL's runtime would.
  nvcc -std=c++20 -O2 tests/gpu/check/cutedsl/tma_copy_launch.cpp -o "$R/cutedsl_tma_copy" -lcuda || exit 1
  # What the order of records rests on: a cluster's SMs reading one clock (docs/check.md, Order).
  nvcc -std=c++20 -O2 $ARCH tests/gpu/check/order_clock_probe.cu -o "$R/order_clock_probe" || exit 1
  echo "== CUTLASS $CUTLASS_VERSION examples 48 and 49"
  local src
  src=$(cutlass_sources) || exit 1
  for ex in 48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm 49_hopper_gemm_with_collective_builder/49_collective_builder; do
    [ -x "$R/$(basename "$ex")" ] && [ -z "${REBUILD:-}" ] && continue  # minutes each: REBUILD=1 redoes them
    nvcc $(cutlass_flags "$src") $ARCH "$src/examples/$ex.cu" -o "$R/$(basename "$ex")" || exit 1
  done
  if [ -n "${TRITON_TUTORIALS:-}" ]; then cp -r "$TRITON_TUTORIALS" "$R/triton-tutorials"; fi
  mkdir -p "$ROOT/.gpupack"
  tar -C "$ROOT" -cf - .gpubuild/real | xz -T2 -6 > "$ROOT/.gpupack/real.tar.xz"
  ls -la "$R" "$ROOT/.gpupack"
}

# One program plain, then under tmakit check; NAME for the trace folder, the rest is the command.
plain_and_checked() {
  local name=$1 limit=$2; shift 2
  echo "-- $name: plain"
  local t0=$SECONDS
  timeout -k 5 "$limit" "$@" 2>&1 | tail -12
  echo "   exit ${PIPESTATUS[0]} ($((SECONDS - t0)) s)"
  echo "-- $name: under tmakit check ${CHECK_ARGS:-}"
  t0=$SECONDS
  timeout -k 5 $((limit * 4)) "$R/tmakit" check --timeout "${CHECK_TIMEOUT:-5}" ${CHECK_ARGS:-} \
    --save-trace "$OUT/traces/$name" -- "$@" 2>&1 | grep -v '^tmakit check:   ' | sed -n '1,80p'
  echo "   exit ${PIPESTATUS[0]} ($((SECONDS - t0)) s)"
}

device() {
  OUT=${OUT:-$ROOT/real-out}
  [ -f .gpupack/real.tar.xz ] && tar -xJf .gpupack/real.tar.xz
  rm -rf "$OUT/traces" && mkdir -p "$OUT/traces"
  exec > >(tee "$OUT/log.txt") 2>&1
  local start=$SECONDS parts=" ${REAL_PARTS:-ring cutlass small triton} " n=${GEMM_SIZE:-1024} judged=0 different=0
  date -u
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  export LD_LIBRARY_PATH=$R${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  if [[ $parts == *" ring "* ]]; then
    local prog name
    for prog in ring ring_devlib; do
      echo "== the ring (tests/gpu/check/ring/$prog.cu)"
      for mode in clean parity refill nofence; do
        name=${prog/_/-}-$mode  # ring-MODE, ring-devlib-MODE
        CHECK_TIMEOUT=3 plain_and_checked "$name" 20 "$R/$prog" $mode
        judged=$((judged + 1))
        python3 tests/gpu/check/ring/ring_expect.py verdict --tmakit "$R" "tests/gpu/check/ring/$prog.cu" $mode \
          "$OUT/traces/$name" || different=$((different + 1))
      done
    done
  fi
  if [[ $parts == *" clock "* ]]; then
    echo "== the SM clock across a cluster (tests/gpu/check/order_clock_probe.cu)"
    "$R/order_clock_probe"
  fi
  if [[ $parts == *" records "* ]]; then
    # --records: a fault loses device records, and auto runs the program again with host ones;
    # then the cost of each place on CUTLASS 48 (one launch at GEMM_SIZE and at 4096^3).
    echo "== a kernel that faults (tests/gpu/check/ring/fault.cu) under the default --records auto"
    judged=$((judged + 1))
    timeout -k 5 60 "$R/tmakit" check --timeout 5 --save-trace "$OUT/traces/records-fault" -- "$R/fault" 2>&1 |
      tee "$OUT/fault.txt" | grep -v '^tmakit check:   ' | sed -n '1,40p'
    grep -q "running the program again with the records in host-mapped memory" "$OUT/fault.txt" &&
      grep -q "the last operation recorded before the fault: .*fault.cu:$(grep -n 'at:arrive' tests/gpu/check/ring/fault.cu | cut -d: -f1)" "$OUT/fault.txt" &&
      echo "   AS EXPECTED: device records lost, the rerun names fault.cu's arrive" || { echo "   DIFFERENT"; different=$((different + 1)); }
    for w in host device; do
      CHECK_ARGS="--launches 1 --records $w" plain_and_checked records-cutlass48-$w 60 "$R/48_hopper_warp_specialized_gemm" --m=$n --n=$n --k=$n --iterations=10
    done
    CHECK_ARGS="--launches 1 --records device" plain_and_checked records-cutlass48-4096-device 120 "$R/48_hopper_warp_specialized_gemm" --m=4096 --n=4096 --k=4096 --iterations=10
    du -sh "$OUT/traces/"records-cutlass48-* 2>/dev/null
    rm -rf "$OUT/traces/"records-cutlass48-*  # hundreds of MB; the log has what they showed
  fi
  if [[ $parts == *" cutlass "* ]]; then
    echo "== CUTLASS $CUTLASS_VERSION example 48 (cooperative, 4x2 clusters, multicast), ${n}^3"
    plain_and_checked cutlass48 60 "$R/48_hopper_warp_specialized_gemm" --m=$n --n=$n --k=$n --iterations=10
    echo "== CUTLASS $CUTLASS_VERSION example 48 at 4096^3 (one launch checked)"
    CHECK_ARGS="--launches 1" plain_and_checked cutlass48-4096 60 "$R/48_hopper_warp_specialized_gemm" --m=4096 --n=4096 --k=4096 --iterations=10
    echo "== CUTLASS $CUTLASS_VERSION example 49 (ping-pong, cooperative, 2x1 clusters), ${n}^3"
    CHECK_ARGS="--launches 1" plain_and_checked cutlass49 120 "$R/49_collective_builder" --m=$n --n=$n --k=$n
  fi
  if [[ $parts == *" compare "* ]] && [ -x .gpupack/base/tmakit ]; then
    # The traced time of CUTLASS 48 under another build of tmakit (.gpupack/base: tmakit and
    # libtmakit_watch.so, carried beside this one) and this one, taken in turn on the same GPU:
    # an instrumentation change is judged against its baseline in the same run.
    echo "== compare: CUTLASS 48 traced, .gpupack/base (B) against this build (N)"
    local size round
    cp "$R"/libfmt* .gpupack/base/ 2>/dev/null; [ -d .gpupack/exp ] && cp "$R"/libfmt* .gpupack/exp/ 2>/dev/null
    # Timing needs no replay: a build that has --no-replay saves the trace and goes on (a 4096^3
    # launch's replay runs 35 M records of threads on the model), into a folder cleared before each
    # run; asked of each build once, its flags are the run's last field.
    local kept=$OUT/compare-trace
    # The traced launch is timed without the functions' plain copies (--plain-copy off, where a build
    # has it): with --launches 1 they would be in the module, and the traced time is the sites' alone.
    no_replay() {
      local help; help=$("$1/tmakit" check --help 2>&1)
      grep -q -- --no-replay <<< "$help" && echo -n "--save-trace $kept --no-replay "
      grep -q -- --plain-copy <<< "$help" && echo -n "--plain-copy off"
      echo
    }
    # The runs, in turn: B, E where carried, and this build (N), or this build once for each of
    # COMPARE_ENVS' environments ("NAME:VAR=v VAR2=w;NAME2:..." → N:NAME, ...): an experiment's
    # knobs, read where the build instruments, timed against each other in one device call.
    local runs=() spec specs run b dir envs flags
    for b in B E; do
      dir=$ROOT/.gpupack/base; [ $b = E ] && dir=$ROOT/.gpupack/exp
      [ -x "$dir/tmakit" ] && runs+=("$b|$dir||$(no_replay "$dir")")
    done
    if [ -x "$R/tmakit" ]; then
      flags=$(no_replay "$R")
      if [ -n "${COMPARE_ENVS:-}" ]; then
        IFS=';' read -ra specs <<< "$COMPARE_ENVS"
        for spec in "${specs[@]}"; do runs+=("N:${spec%%:*}|$R|${spec#*:}|$flags"); done
      else
        runs+=("N|$R||$flags")
      fi
    fi
    for size in $n 4096; do
      echo "-- ${size}^3 plain: $("$R/48_hopper_warp_specialized_gemm" --m=$size --n=$size --k=$size --iterations=10 | grep 'Avg runtime')"
      for round in $(seq "${COMPARE_ROUNDS:-2}"); do
        for run in "${runs[@]}"; do
          IFS='|' read -r b dir envs flags <<< "$run"
          # A build that replays (no --no-replay) spends minutes on a 4096^3 launch's 35 M records: once.
          [ $size = 4096 ] && [ $round -gt 1 ] && [ -z "$flags" ] && continue
          rm -rf "$kept"
          echo "-- ${size}^3 $b round $round: $(timeout -k 5 120 env $envs "$dir/tmakit" check --timeout 10 --launches 1 $flags -- \
            "$R/48_hopper_warp_specialized_gemm" --m=$size --n=$size --k=$size --iterations=2 2>&1 |
            grep -E 'device_kernel.*traced|Disposition' | sed -E 's/.*(<<<.*)/\1/' | tr '\n' ' ')"
        done
      done
    done
    # Triton's matmuls and attention the same way, where the tutorials were carried and each build
    # has its tmakit-ptxas (Triton's route instruments through it).
    if [ -d "$R/triton-tutorials" ]; then
      local only
      for round in $(seq "${COMPARE_ROUNDS:-2}"); do
        for run in "${runs[@]}"; do
          IFS='|' read -r b dir envs flags <<< "$run"
          [ -x "$dir/tmakit-ptxas" ] || continue
          for only in matmul attention; do
            rm -rf "$kept"
            echo "-- triton $only $b round $round: $(timeout -k 5 120 env $envs "$dir/tmakit" check --timeout 10 --launches 1 $flags -- \
              python3 tests/gpu/check/triton_tutorials.py "$R/triton-tutorials" --only $only 2>&1 |
              grep -E 'traced' | sed -E 's/^tmakit check: ([a-z_]+) .*records, (.*) on the GPU traced/\1 \2/' | tr '\n' ' ')"
          done
        done
      done
    fi
    rm -rf "$kept"
  fi
  if [[ $parts == *" warmth "* ]] && command -v ncu >/dev/null; then
    # Each launch's own time, first (cold: code, descriptors and caches) and later ones, plain and
    # traced, taken the same way (Nsight Compute's kernel duration, clocks and caches left as they
    # are): the traced/plain ratio free of launch overhead and of a first launch against warm ones.
    echo "== warmth: CUTLASS 48's launches one by one, plain and traced (ms)"
    local size what wrap
    local ncu_args=(--clock-control none --cache-control none --target-processes all --kernel-name regex:device_kernel
                    --launch-count 3 --metrics gpu__time_duration.sum)
    for size in $n 4096; do
      for what in plain traced; do
        wrap=(); [ $what = traced ] && wrap=("$R/tmakit" check --timeout 20 --launches $([ $size = 4096 ] && echo 2 || echo 3) --)
        echo "-- ${size}^3 $what: $(timeout -k 5 200 ncu "${ncu_args[@]}" "${wrap[@]}" "$R/48_hopper_warp_specialized_gemm" \
          --m=$size --n=$size --k=$size --iterations=2 2>&1 | awk '/gpu__time_duration/ {print $2, $3}' | tr '\n' ' ')"
      done
    done
  fi
  if [[ $parts == *" ex49 "* ]] && command -v ncu >/dev/null; then
    # Example 49's seven GEMMs at 4096^3, each launched once: plain by Nsight Compute (its kernel
    # duration, clocks and caches left as they are), traced by `tmakit check --launches 1
    # --no-replay` (the GPU time of each launch), twice each, in the example's order.
    echo "== ex49: CUTLASS 49's GEMMs at 4096^3, plain (Nsight Compute, us) and traced (ms)"
    local round
    for round in 1 2; do
      echo "-- plain round $round: $(timeout -k 5 240 ncu --clock-control none --cache-control none --kernel-name regex:device_kernel \
        --metrics gpu__time_duration.sum "$R/49_collective_builder" --m=4096 --n=4096 --k=4096 2>&1 |
        awk '/gpu__time_duration/ {print $3 $2}' | tr '\n' ' ')"
      # The traces (a gigabyte and more) are not kept.
      echo "-- traced round $round: $(timeout -k 5 300 "$R/tmakit" check --timeout 20 --launches 1 --no-replay \
        --save-trace /tmp/tmakit-ex49-traces -- "$R/49_collective_builder" --m=4096 --n=4096 --k=4096 2>&1 |
        grep GemmUniversal | sed -n 's/.* \([0-9.]*\) ms on the GPU traced.*/\1/p' | tr '\n' ' ')"
      rm -rf /tmp/tmakit-ex49-traces
    done
  fi
  if [[ $parts == *" small "* ]]; then
    # Whole launches small enough to keep in the repository (tests/vectors/check/real-*).
    echo "== small whole launches for the recorded vectors"
    CHECK_ARGS="--launches 1" plain_and_checked real-cutlass48-512 60 "$R/48_hopper_warp_specialized_gemm" --m=512 --n=512 --k=512 --iterations=1
    if [ -d "$R/triton-tutorials" ]; then
      CHECK_ARGS="--launches 1" plain_and_checked real-triton-tutorials-512 120 python3 tests/gpu/check/triton_tutorials.py "$R/triton-tutorials" --size 512 --warmup 0 --iters 1
    fi
  fi
  if [[ $parts == *" profile "* ]] && command -v ncu >/dev/null; then
    # Where the traced CUTLASS GEMM's time goes (docs/check.md, "Cost"): Nsight Compute on the
    # 4096^3 launch plain, under check recording (launch 0, checked) and not recording (launch 1,
    # past --launches 1): its duration and instructions, and the SASS lines with most stall
    # samples (scripts/sass_stalls.py, which also sums a loop's lines: --executed). The counters'
    # names are checked first.
    echo "== profile: CUTLASS 48 at ${PROFILE_SIZE:-4096}^3 under Nsight Compute"
    local size=${PROFILE_SIZE:-4096}
    local g="$R/48_hopper_warp_specialized_gemm --m=$size --n=$size --k=$size --iterations=2" run
    local ncu_args=(--clock-control none --target-processes all --kernel-name regex:device_kernel --launch-count 1)
    for run in ${PROFILE_RUNS:-plain:0 recording:0 not-recording:1}; do
      local what=${run%%:*} skip=${run##*:} wrap=()
      [ "$what" != plain ] && wrap=("$R/tmakit" check --launches 1 --)
      [[ $what == base-* ]] && wrap=("$ROOT/.gpupack/base/tmakit" check --launches 1 --)  # the build before
      echo "-- $what"
      timeout -k 5 240 ncu "${ncu_args[@]}" --launch-skip "$skip" --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__cycles_active.avg \
        "${wrap[@]}" $g 2>&1 | grep -E "gpu__time|inst_executed|cycles_active|ERROR" | head -6
      timeout -k 5 240 ncu "${ncu_args[@]}" --launch-skip "$skip" --section SourceCounters --page source --print-source sass --csv \
        "${wrap[@]}" $g > "$OUT/sass-$what.csv" 2>/dev/null
      python3 scripts/sass_stalls.py "$OUT/sass-$what.csv" --top 25
      xz -T4 -6 "$OUT/sass-$what.csv"
    done
    local cubin
    for cubin in .gpupack/sass/*.cubin; do
      [ -f "$cubin" ] && nvdisasm -c "$cubin" | xz -T4 -6 > "$OUT/$(basename "$cubin" .cubin).sass.xz"
    done
  fi
  if [[ $parts == *" mutants "* ]]; then
    echo "== CUTLASS mutants (tests/gpu/check/cutlass_mutants.py)"
    judged=$((judged + 1))
    python3 tests/gpu/check/cutlass_mutants.py device --tmakit "$R" --example "$R/48_hopper_warp_specialized_gemm" \
      --example49 "$R/49_collective_builder" --out "$OUT/traces/cutlass-mutants" || different=$((different + 1))
  fi
  if [[ $parts == *" cutedsl "* ]]; then
    echo "== CuTe DSL's TMA copy kernel and its mutants (tests/gpu/check/cutedsl_mutants.py)"
    judged=$((judged + 1))
    python3 tests/gpu/check/cutedsl_mutants.py device --tmakit "$R" --launcher "$R/cutedsl_tma_copy" \
      --ptx tests/corpus/cutedsl/tma_copy.sm_90a.ptx --out "$OUT/traces/cutedsl" || different=$((different + 1))
  fi
  if [[ $parts == *" triton-mutants "* ]] && [ -d "$R/triton-tutorials" ]; then
    echo "== the Triton tutorials' mutants (tests/gpu/check/triton_tutorial_mutants.py)"
    python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
    judged=$((judged + 1))
    python3 tests/gpu/check/triton_tutorial_mutants.py device --tmakit "$R" --tutorials "$R/triton-tutorials" \
      --out "$OUT/traces/triton-tutorial-mutants" --jobs "${MUTANT_JOBS:-4}" || different=$((different + 1))
  fi
  if [[ $parts == *" triton "* ]] && [ -d "$R/triton-tutorials" ]; then
    echo "== Triton tutorials (tests/gpu/check/triton_tutorials.py)"
    python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
    CHECK_ARGS="--launches 1" plain_and_checked triton-matmul 120 python3 tests/gpu/check/triton_tutorials.py "$R/triton-tutorials" --only matmul
    CHECK_ARGS="--launches 1" plain_and_checked triton-attention 120 python3 tests/gpu/check/triton_tutorials.py "$R/triton-tutorials" --only attention
  fi
  echo "device half took $((SECONDS - start)) s; judged: $judged (each ring run, each mutant driver), not as expected: $different"
  for part in ring cutlass real triton records cutedsl; do  # cutlass* takes the mutants' folder too
    local names; names=$(cd "$OUT/traces" && ls -d ${part}* 2>/dev/null)
    [ -n "$names" ] && tar -C "$OUT/traces" -cf - $names | xz -T8 -6 > "$OUT/traces-$part.tar.xz"
  done
  rm -rf "$OUT/traces"
  ls -la "$OUT"
}

# DIR: the files `device` left (traces-*.tar.xz, log.txt) -> tests/vectors/check/: the rings' three
# bugs, ring-* and ring-devlib-* where the run had the device library's ring (CTA 0's records only
# for the race and the fence: one cluster, as the replay takes them; meta's counts follow), the
# small whole launches of CUTLASS and Triton (real-*: their GEMM launches), each without
# module.ptx (the replay does not read it) and with an expect.json written from the rings'
# `// at:TAG` markers (tests/gpu/check/ring/ring_expect.py) and from what the GPU did (the log,
# the trace's outcome), not from a replay.
unpack() {
  local from=$1 tmp; tmp=$(mktemp -d)
  for f in "$from"/traces-ring.tar.xz "$from"/traces-real.tar.xz; do [ ! -f "$f" ] || tar -C "$tmp" -xJf "$f" || exit 1; done
  # The GPU the run had: the name nvidia-smi gave at the log's start.
  local gpu; gpu=$(grep -m1 -E '^NVIDIA ' "$from/log.txt" 2>/dev/null | cut -d, -f1 | sed 's/^NVIDIA //')
  python3 - "$tmp" "$ROOT" "${gpu:-GPU}" "$(head -1 "$from/log.txt" 2>/dev/null)" <<'PY'
import json, os, re, shutil, struct, sys
tmp, root, gpu, when = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
dest = os.path.join(root, "tests/vectors/check")
sys.path.insert(0, os.path.join(root, "tests/gpu/check/ring"))
import ring_expect
def copy(launch, name, keep_cluster0, expect):
    out = os.path.join(dest, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    meta = json.load(open(os.path.join(launch, "meta.json")))
    data = open(os.path.join(launch, "trace.bin"), "rb").read()
    if keep_cluster0:
        recs = [data[i:i + 128] for i in range(0, len(data), 128)]
        recs = [r for r in recs if struct.unpack_from("<IHH", r, 24) == (0, 0, 0)]  # clusterid x, y, z
        data = b"".join(recs)
        meta["records"] = len(recs)
        if meta.get("next") is not None: meta["next"] = len(recs)
    open(os.path.join(out, "trace.bin"), "wb").write(data)
    json.dump(meta, open(os.path.join(out, "meta.json"), "w"), indent=1)
    for f in ("sites.json", "maps.jsonl"):
        shutil.copy(os.path.join(launch, f), out)
    json.dump(expect, open(os.path.join(out, "expect.json"), "w"), indent=1)
    print(name, meta["records"], "records")
# What the GPU did with ring.cu (the outcome, the words); other outcomes say only the outcome.
HARDWARE = {"refill": ("completed", "the " + gpu + " completed with the right output (the race was not lost this time)"),
            "nofence": ("completed", "the " + gpu + " completed with the right output"),
            "parity": ("timeout", "the " + gpu + " hung (the plain run too: its exit status is in the device log)")}
for prefix, source in (("ring", "ring.cu"), ("ring-devlib", "ring_devlib.cu")):
    for mode in ("refill", "nofence", "parity"):
        launch = os.path.join(tmp, prefix + "-" + mode, "launch-0")
        if not os.path.isdir(launch):
            print(prefix + "-" + mode, "not in the traces")
            continue
        outcome = json.load(open(os.path.join(launch, "meta.json")))["outcome"]
        want = ring_expect.expected(os.path.join(root, "tests/gpu/check/ring", source), mode, outcome)
        if want is None:
            print(prefix + "-" + mode, "had outcome", outcome, "which the", mode, "ring should not: not kept")
            continue
        hardware = (HARDWARE[mode][1] if (prefix, outcome) == ("ring", HARDWARE[mode][0])
                    else "the " + gpu + ": " + outcome + " (the device log says how the plain run ended)")
        hardware += " (" + when + ")"
        copy(launch, prefix + "-" + mode, mode != "parity", {"hardware": hardware, "outcome": outcome,
             "diagnoses": [{"rule": rules[0], "file": f, "line": l} for rules, f, l in want]})
def gemm_launches(folder):
    for l in sorted(os.listdir(folder)):
        m = json.load(open(os.path.join(folder, l, "meta.json")))
        if m["records"] and ("GemmUniversal" in m["kernel"] or "matmul" in m["kernel"]):
            yield os.path.join(folder, l), m
clean = {"outcome": "completed", "clean": True}
for launch, m in gemm_launches(os.path.join(tmp, "real-cutlass48-512")) if os.path.isdir(os.path.join(tmp, "real-cutlass48-512")) else ():
    copy(launch, "real-cutlass48-512", False, dict(clean, hardware="CUTLASS 4.2 example 48 at 512^3 on the " + gpu + ": Disposition: Passed (" + when + ")"))
for launch, m in gemm_launches(os.path.join(tmp, "real-triton-tutorials-512")) if os.path.isdir(os.path.join(tmp, "real-triton-tutorials-512")) else ():
    copy(launch, "real-triton-" + m["kernel"].replace("_", "-"), False, dict(clean, hardware="Triton 3.6's tutorial 09 at 512^3 on the " + gpu + ": checked against PyTorch, OK (" + when + ")"))
PY
  rm -rf "$tmp"
}

# Another build of tmakit for the compare part: REV's tmakit, libtmakit_watch.so and tmakit-ptxas,
# stripped into .gpupack/NAME (base: B, exp: E), from a worktree of REV in .gpubuild/rev-NAME with a
# build folder of its own beside it (only those three targets, the tests left out).
other_build() {
  local name=$1 rev=$2 tree=$ROOT/.gpubuild/rev-$1
  local out=$tree-build
  git -C "$ROOT" worktree remove --force "$tree" 2>/dev/null
  rm -rf "$tree"
  git -C "$ROOT" worktree add --detach "$tree" "$rev" >/dev/null || exit 1
  cmake -S "$tree" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTMAKIT_TESTS=unsanitized \
    -DTMAKIT_GPU_PROGRAMS=OFF >/dev/null || exit 1
  ninja -C "$out" -j2 tmakit tmakit_watch tmakit_ptxas >/dev/null || exit 1
  mkdir -p "$ROOT/.gpupack/$name"
  strip -o "$ROOT/.gpupack/$name/tmakit" "$out/tools/tmakit/tmakit"
  strip -o "$ROOT/.gpupack/$name/libtmakit_watch.so" "$out/src/watch/libtmakit_watch.so"
  strip -o "$ROOT/.gpupack/$name/tmakit-ptxas" "$out/tools/check/tmakit-ptxas"
  echo "== .gpupack/$name: $(git -C "$tree" log --oneline -1 | cut -c1-72)"
}

# scripts/check-real-device.sh sass [TMAKIT...]: here, with no GPU: CUTLASS 48's GEMM kernel as
# ptxas compiles it after each tmakit's `instrument` (default: BUILD_DIR's, then .gpupack/base's and
# .gpupack/exp's where built): its SASS instructions and spill bytes, the figures docs/check.md
# quotes for an instrumentation change (cuobjdump from PyPI nvidia-cuda-cuobjdump, into .gpubuild/ext).
sass() {
  local src out=$ROOT/.gpubuild/sass ext=$ROOT/.gpubuild/ext t
  src=$(cutlass_sources) || exit 1
  mkdir -p "$out"
  if [ ! -s "$out/ex48.ptx" ]; then
    nvcc $(cutlass_flags "$src") -arch=compute_90a -ptx \
      "$src/examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu" -o "$out/ex48.ptx" || exit 1
  fi
  local cuobjdump=$ext/cuobjdump/nvidia/cu13/bin/cuobjdump
  if [ ! -x "$cuobjdump" ]; then
    # cuobjdump calls nvdisasm beside it: both wheels into one folder.
    python3 -m pip download -q --no-deps "nvidia-cuda-cuobjdump==${CUDA_TOOLS_VERSION:-13.5.37}" \
      "nvidia-cuda-nvdisasm==${CUDA_TOOLS_VERSION:-13.5.37}" -d "$ext" &&
      for w in "$ext"/nvidia_cuda_cuobjdump-*.whl "$ext"/nvidia_cuda_nvdisasm-*.whl; do unzip -q -o "$w" -d "$ext/cuobjdump" || exit 1; done || exit 1
  fi
  local tools=("$@")
  [ ${#tools[@]} -gt 0 ] || tools=("${BUILD_DIR:-$ROOT/build}/tools/tmakit/tmakit" .gpupack/base/tmakit .gpupack/exp/tmakit)
  for t in "${tools[@]}"; do
    [ -x "$t" ] || continue
    "$t" instrument "$out/ex48.ptx" -o "$out/instrumented.ptx" >/dev/null || exit 1
    ptxas -arch=sm_90a -v "$out/instrumented.ptx" -o "$out/instrumented.cubin" 2> "$out/ptxas.txt" || exit 1
    echo "$t: CUTLASS 48's GEMM kernel, $("$cuobjdump" -sass "$out/instrumented.cubin" | awk '
      /Function :/ { f = $3 } /^ +\/\*[0-9a-f]+\*\// { if (f ~ /GemmUniversal/) n++ } END { print n + 0 }') SASS instructions," \
      "$(awk '/Function properties for .*GemmUniversal/ { getline; for (i = 1; i + 3 <= NF; ++i) if ($(i + 1) == "bytes" && $(i + 2) == "spill" && $(i + 3) == "stores,") { print $i; exit } }' "$out/ptxas.txt") bytes of spill stores"
  done
}

case "${1:-}" in
  build) build ;;
  sass) shift; sass "$@" ;;
  # scripts/check-real-device.sh builds BASE_REV [EXP_REV]: the builds the compare part runs
  # beside this one (B, and E where given).
  builds)
    other_build base "${2:?builds BASE_REV [EXP_REV]}"
    [ -n "${3:-}" ] && other_build exp "$3"
    [ -n "${3:-}" ] || rm -rf "$ROOT/.gpupack/exp"
    ;;
  device) device ;;
  unpack) unpack "${2:?unpack DIR}" ;;
  *) echo "usage: scripts/check-real-device.sh build|builds BASE_REV [EXP_REV]|sass [TMAKIT...]|device|unpack DIR" >&2; exit 2 ;;
esac
