#!/usr/bin/env bash
# The H100 half of the Python package's tests (docs/python.md), one command from the
# repository root on the GPU machine (nvcc, PyTorch and Triton there; no network):
#
#   bash scripts/python-device.sh             # on the H100; carry .deps/python (made by --prepare)
#   bash scripts/python-device.sh --prepare   # here, once: .deps/python = what the device lacks
#
# 1. records tests/vectors/python into $OUT/vectors (default out/python-device/vectors):
#    tests/python/h100/record.py + tma_dump.cu (raw shared-memory bytes of real TMA loads,
#    the tensors' DLPack / __cuda_array_interface__ facts, real Triton descriptors and tiles);
#    copy them to tests/vectors/python/ and commit: CI replays them.
# 2. when .deps/python was carried (headers of fmt, nlohmann-json and CLI11, libfmt, and
#    wheels of nanobind, scikit-build-core, pytest, numpy for CPython 3.12): builds and
#    installs the package with the device's own Python in a venv that sees the torch venv, and runs
#    the whole pytest suite there — the torch tests live, the fresh recordings replayed
#    (TMAKIT_PYTHON_VECTORS), and tests/python/h100/live_cuda.py on real CUDA tensors and
#    real Triton descriptors.
# PYTHON picks the interpreter with torch and triton (default /opt/torch/.venv/bin/python3).
# TMAKIT_PYTHON_DEPS names another folder for .deps/python (e.g. a copy without the NumPy wheel,
# 4.6 MB instead of 20: the torch venv has NumPy) when the carry must stay small.
set -euo pipefail
cd "$(dirname "$0")/.."
DEPS="${TMAKIT_PYTHON_DEPS:-.deps/python}"  # another folder made by --prepare may stand in

if [ "${1:-}" = "--prepare" ]; then
  rm -rf "$DEPS" && mkdir -p "$DEPS/wheels" "$DEPS/usr/include" "$DEPS/usr/lib/x86_64-linux-gnu/cmake" "$DEPS/usr/share/cmake"
  cp -r /usr/include/fmt /usr/include/nlohmann /usr/include/CLI "$DEPS/usr/include/"
  cp -r /usr/lib/x86_64-linux-gnu/cmake/fmt "$DEPS/usr/lib/x86_64-linux-gnu/cmake/"
  cp -a /usr/lib/x86_64-linux-gnu/libfmt.so* "$DEPS/usr/lib/x86_64-linux-gnu/"
  cp -r /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json "$DEPS/usr/share/cmake/"
  # nanobind as here: the stub test compares stubgen's output with the shipped _core.pyi.
  nb=$(.venv/bin/python -c "import nanobind; print(nanobind.__version__)")
  .venv/bin/pip download -q --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
    --implementation cp -d "$DEPS/wheels" "nanobind==$nb" "scikit-build-core>=0.10" "pytest>=7" "numpy>=1.22"
  du -sh "$DEPS"
  exit 0
fi

# --package-only: step 2 alone (against recordings already in $OUT/vectors).
package_only=0
[ "${1:-}" = "--package-only" ] && package_only=1
OUT="${OUT:-out/python-device}"
PY="${PYTHON:-/opt/torch/.venv/bin/python3}"
[ -x "$PY" ] || PY=python3
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
mkdir -p "$OUT"
status=0
if [ $package_only = 0 ]; then
rm -rf "$OUT/vectors"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
"$PY" -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)" | tee -a "$OUT/device.txt"

# 1. The recordings.
"$NVCC" -std=c++17 -O2 -arch=sm_90a -o "$OUT/tma_dump" tests/python/h100/tma_dump.cu -lcuda
"$PY" tests/python/h100/record.py --tma-dump "$OUT/tma_dump" --out "$OUT/vectors" 2>&1 | tee "$OUT/record.log" || status=1
echo "recorded: $(ls "$OUT/vectors"/case_*.json 2>/dev/null | wc -l) cases in $OUT/vectors"
fi

# 2. The package on the device, when its build dependencies were carried.
if [ ! -d "$DEPS/wheels" ]; then
  echo "no $DEPS: the package is not built here (run --prepare where the packages are and carry $DEPS)"
  exit $status
fi
VENV=/tmp/tmakit-device-venv
rm -rf "$VENV"
# A venv of its own that still sees the torch venv's packages (a .pth line naming its site-packages).
"$PY" -m venv "$VENV"
"$PY" -c "import site; print(site.getsitepackages()[0])" > "$("$VENV/bin/python" -c "import site; print(site.getsitepackages()[0])")/torch-venv.pth"
"$VENV/bin/pip" install -q --no-index --find-links "$DEPS/wheels" nanobind scikit-build-core pytest numpy
usr="$PWD/$DEPS/usr"
export LD_LIBRARY_PATH="$usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{ time "$VENV/bin/pip" install --no-build-isolation --no-deps -C build-dir=build-py/device \
    -C cmake.define.fmt_DIR="$usr/lib/x86_64-linux-gnu/cmake/fmt" \
    -C cmake.define.nlohmann_json_DIR="$usr/share/cmake/nlohmann_json" \
    -C cmake.define.CLI11_DIR="$usr/share/cmake/CLI11" . ; } > "$OUT/pip-install.log" 2>&1
tail -5 "$OUT/pip-install.log"
"$VENV/bin/python" -c "import tmakit, sys; print('import tmakit: ok on', sys.version.split()[0])" | tee -a "$OUT/device.txt"
# OUT may be relative or absolute (the first recording gave an absolute OUT and "$PWD/$OUT" named
# nothing: the replay skipped itself); test_h100_vectors fails, not skips, on an empty given folder.
TMAKIT_PYTHON_VECTORS="$(realpath -m "$OUT/vectors")" "$VENV/bin/python" -m pytest -q -rs tests/python 2>&1 | tee "$OUT/pytest.log" \
  || status=1
# A run of its own: given beside tests/python, pytest would drop it as a duplicate of that folder.
"$VENV/bin/python" -m pytest -q -rs tests/python/h100/live_cuda.py 2>&1 | tee "$OUT/pytest-live-cuda.log" || status=1
exit $status
