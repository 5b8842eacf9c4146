#!/usr/bin/env bash
# Records tests/vectors/python on an H100 (docs/python.md), in one command from the
# repository root on a machine with nvcc, PyTorch and Triton (no tmakit build, no
# network, nothing carried):
#
#   bash scripts/python-device.sh            # writes $OUT/vectors (default out/python-device/vectors)
#
# then copy $OUT/vectors/* to tests/vectors/python/ and commit; CI replays them
# (tests/python/test_h100_vectors.py). PYTHON picks the interpreter with torch and
# triton (default /opt/torch/.venv/bin/python3, else python3).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-out/python-device}"
PY="${PYTHON:-/opt/torch/.venv/bin/python3}"
[ -x "$PY" ] || PY=python3
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
mkdir -p "$OUT"
rm -rf "$OUT/vectors"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
"$NVCC" -std=c++17 -O2 -arch=sm_90a -o "$OUT/tma_dump" tests/python/h100/tma_dump.cu -lcuda
"$PY" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" | tee -a "$OUT/device.txt"
"$PY" tests/python/h100/record.py --tma-dump "$OUT/tma_dump" --out "$OUT/vectors" 2>&1 | tee "$OUT/record.log"
echo "recorded: $(ls "$OUT/vectors"/case_*.json | wc -l) cases in $OUT/vectors"
