#!/usr/bin/env bash
# Regenerates tests/corpus/: real PTX modules from every compiler the linter must accept
# (issue 14 item 6), and ptxas's verdict on each (tests/corpus/verdicts.jsonl).
#
#   scripts/corpus.sh [--only nvcc|nvrtc|triton|cutedsl|broken|verdicts]...
#
# Needs nvcc/ptxas/NVRTC (CUDA 13.0 at /usr/local/cuda), and for triton/ and cutedsl/ a Python
# with `triton==3.6.*` and `nvidia-cutlass-dsl` (TRITON_PYTHON, CUTE_PYTHON; default python3).
# Neither needs a GPU: both compile for an explicit target. The generators are copied to a
# fixed folder first, so the file names the modules' debug info records do not depend on
# where the checkout lives.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=$ROOT/tests/corpus
CUDA=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA/bin/nvcc
PTXAS=$CUDA/bin/ptxas
TRITON_PYTHON=${TRITON_PYTHON:-python3}
CUTE_PYTHON=${CUTE_PYTHON:-python3}
WORK=/tmp/tmakit-corpus
ONLY=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --only) ONLY+=("$2"); shift 2 ;;
    *) echo "usage: scripts/corpus.sh [--only nvcc|nvrtc|triton|cutedsl|broken|verdicts]..." >&2; exit 2 ;;
  esac
done
want() { [[ ${#ONLY[@]} -eq 0 ]] || [[ " ${ONLY[*]} " == *" $1 "* ]]; }

rm -rf "$WORK" && mkdir -p "$WORK/src"
cp -r "$CORPUS/gen/." "$WORK/src/"

# The repository's CUDA sources: (source, targets, which of nvcc/ nvcc-lineinfo/ nvcc-G/ get it).
# -lineinfo and -G output is large, so only a few kernels get them (the corpus stays under 3 MB).
NVCC_SOURCES=(
  "tests/gpu/test_device_library.cu  90a,100a  plain,lineinfo"
  "tests/gpu/test_pipeline.cu        90a       plain,lineinfo,G"
  "tests/gpu/test_debug_wait.cu      90a       plain"
  "tests/gpu/test_fma_oob.cu         90a       plain"
  "tests/gpu/test_group_membership.cu 90a      plain"
  "tests/gpu/test_multicast_clusters.cu 90a    plain,G"
  "tests/gpu/test_reduce_vs_atomics.cu 90a     plain"
  "tests/gpu/compile/sm100_forms.cu  100a      plain,lineinfo"
  "bench/gpu/copy.cu                 90a       plain,lineinfo,G"
  "bench/gpu/im2col.cu               90a       plain"
  "bench/gpu/multicast.cu            90a       plain,lineinfo"
  "bench/gpu/reduce.cu               90a       plain"
  "bench/gpu/transpose.cu            90a       plain"
  "src/gpu/engine_kernel.cu          90a,100a  plain"
)
if want nvcc; then
  rm -rf "$CORPUS"/nvcc "$CORPUS"/nvcc-lineinfo "$CORPUS"/nvcc-G
  mkdir -p "$CORPUS"/nvcc "$CORPUS"/nvcc-lineinfo "$CORPUS"/nvcc-G
  for row in "${NVCC_SOURCES[@]}"; do
    read -r src archs modes <<<"$row"
    name=$(basename "$src" .cu)
    for arch in ${archs//,/ }; do
      for mode in ${modes//,/ }; do
        case $mode in
          plain) dir=nvcc; flags=() ;;
          lineinfo) dir=nvcc-lineinfo; flags=(-lineinfo) ;;
          G) dir=nvcc-G; flags=(-G) ;;
        esac
        out=$CORPUS/$dir/$name.sm_$arch.ptx
        (cd "$ROOT" && "$NVCC" -ptx -std=c++20 "${flags[@]}" -gencode=arch=compute_$arch,code=sm_$arch \
          -Iinclude "$src" -o "$out") || { echo "nvcc: $src for sm_$arch ($mode) failed" >&2; exit 1; }
        echo "nvcc: $dir/$(basename "$out")"
      done
    done
  done
fi

if want nvrtc; then
  rm -rf "$CORPUS/nvrtc" && mkdir -p "$CORPUS/nvrtc"
  g++ -O1 -o "$WORK/nvrtc_ptx" "$WORK/src/nvrtc_ptx.cpp" -I"$CUDA/include" -L"$CUDA/lib64" -lnvrtc \
    -Wl,-rpath,"$CUDA/lib64"
  for arch in sm_90a sm_100a; do
    (cd "$WORK/src" && "$WORK/nvrtc_ptx" nvrtc_kernels.cu "$CORPUS/nvrtc/nvrtc_kernels.$arch.ptx" $arch)
    echo "nvrtc: nvrtc/nvrtc_kernels.$arch.ptx"
  done
  (cd "$WORK/src" && "$WORK/nvrtc_ptx" nvrtc_kernels.cu "$CORPUS/nvrtc/nvrtc_kernels.lineinfo.sm_90a.ptx" sm_90a -lineinfo)
  (cd "$WORK/src" && "$WORK/nvrtc_ptx" nvrtc_kernels.cu "$CORPUS/nvrtc/nvrtc_kernels.G.sm_90a.ptx" sm_90a -G)
  echo "nvrtc: lineinfo and -G variants"
fi

if want triton; then
  rm -rf "$CORPUS/triton" && mkdir -p "$CORPUS/triton"
  (cd "$WORK/src" && TRITON_CACHE_DIR=$WORK/triton-cache "$TRITON_PYTHON" triton_kernels.py "$CORPUS/triton")
fi

if want cutedsl; then
  rm -rf "$CORPUS/cutedsl" && mkdir -p "$CORPUS/cutedsl"
  (cd "$WORK/src" && CUTE_DSL_DISABLE_FILE_CACHING=1 "$CUTE_PYTHON" cutedsl_kernels.py "$CORPUS/cutedsl")
fi

# A few modules broken on purpose (one edit each), so the replay sees rejections too:
# an instruction of the table's families after a `.loc`, one in a -G module, and a DWARF
# section that is never closed.
if want broken; then
  rm -rf "$CORPUS/broken" && mkdir -p "$CORPUS/broken"
  python3 - "$CORPUS" <<'PY'
import sys
corpus = sys.argv[1]
def mutate(src, dst, old, new):
    text = open(f"{corpus}/{src}").read()
    if old not in text:
        sys.exit(f"broken: `{old}` not found in {src}")
    open(f"{corpus}/broken/{dst}", "w").write(text.replace(old, new, 1))
    print(f"broken: broken/{dst}")
mutate("triton/tma_copy_host_desc.sm_90a.ptx", "triton_missing_completion.sm_90a.ptx",
       ".shared::cluster.global.mbarrier::complete_tx::bytes", ".shared::cluster.global")
mutate("nvrtc/nvrtc_kernels.G.sm_90a.ptx", "nvrtc_G_wait_group_register.sm_90a.ptx",
       "cp.async.bulk.wait_group.read 0;", "cp.async.bulk.wait_group.read %r1;")
mutate("triton/add.sm_90a.ptx", "triton_unclosed_section.sm_90a.ptx", "\t}\n\t.section\t.debug_macinfo", "\n\t.section\t.debug_macinfo")
PY
fi

# ptxas's verdict on each module, for its own .target: tests/corpus/verdicts.jsonl.
if want verdicts; then
  out=$CORPUS/verdicts.jsonl
  : >"$out"
  (cd "$CORPUS" && find . -name '*.ptx' -not -path './gen/*' | sed 's|^\./||' | LC_ALL=C sort) | while read -r f; do
    target=$(grep -m1 -E '^[[:space:]]*\.target' "$CORPUS/$f" | awk '{print $2}' | tr -d ',')
    set +e
    msg=$("$PTXAS" -arch="$target" "$CORPUS/$f" -o /dev/null 2>&1)
    status=$?
    set -e
    first=$(printf '%s\n' "$msg" | grep -m1 -i 'error' | sed "s|$CORPUS/||" || true)
    python3 -c 'import json,sys; print(json.dumps({"file": sys.argv[1], "target": sys.argv[2], "ptxas": int(sys.argv[3]), "first_error": sys.argv[4]}))' \
      "$f" "$target" "$status" "$first" >>"$out"
  done
  echo "verdicts: $(wc -l <"$out") modules, $(grep -c '"ptxas": 0' "$out") accepted by ptxas"
fi
