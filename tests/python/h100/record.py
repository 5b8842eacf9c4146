"""Records tests/vectors/python on an H100 (scripts/python-device.sh runs it).

Needs only PyTorch, Triton and the tma_dump program (tma_dump.cu, built by the
script): tmakit itself is not imported here. For each random case it writes

  case_NN.json        the map as encoded (scenario-format names), coordinates, smem
                      offset, and what the CUDA tensor, its host copy and a Triton
                      TensorDescriptor over it say about themselves (DLPack read
                      through ctypes, __cuda_array_interface__, torch's attributes,
                      the descriptor's shape/strides/block_shape/padding, the
                      compiled kernel's descriptor metadata when Triton has it)
  case_NN.tensor.bin  the tensor's memory from its first byte (rows padded as in memory)
  case_NN.smem.bin    the raw shared-memory bytes one cp.async.bulk.tensor load left
                      (tma_dump: the driver's map over the same bytes)
  case_NN.tile.bin    2-D cases: the logical tile a Triton kernel read through the
                      descriptor (desc.load), row-major, when Triton ran it (Triton's
                      descriptor fills out-of-bounds elements with zeros, whatever the case's fill)

CI replays them (tests/python/test_h100_vectors.py) with no GPU."""
from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import random
import subprocess
import sys
import traceback

import torch

DTYPES = {"float16": (torch.float16, 6, 2), "bfloat16": (torch.bfloat16, 9, 2), "float32": (torch.float32, 7, 4),
          "uint8": (torch.uint8, 0, 1)}  # name → (torch dtype, CUtensorMapDataType, bytes)
SWIZZLES = {"none": (0, 0), "32b": (1, 32), "64b": (2, 64), "128b": (3, 128)}  # name → (CUtensorMapSwizzle, span)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


def dlpack_facts(t: torch.Tensor) -> dict:
    """The DLTensor of t.__dlpack__() as nanobind would read it (data + byte_offset)."""
    capsule = t.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    if name(capsule) == b"dltensor_versioned":
        # DLManagedTensorVersioned: version (2 × u32), manager_ctx, deleter, flags (u64), then the DLTensor.
        d = DLTensor.from_address(get(capsule, b"dltensor_versioned") + 32)
    else:
        d = DLTensor.from_address(get(capsule, b"dltensor"))  # DLManagedTensor starts with its DLTensor
    n = d.ndim
    strides = [d.strides[i] for i in range(n)] if d.strides else None
    return {"shape": [d.shape[i] for i in range(n)], "strides": strides,
            "dtype": [d.dtype.code, d.dtype.bits, d.dtype.lanes], "device": [d.device.device_type, d.device.device_id],
            "address": (d.data or 0) + d.byte_offset}


def torch_facts(t: torch.Tensor) -> dict:
    out = {"shape": list(t.shape), "stride": list(t.stride()), "dtype": str(t.dtype), "element_size": t.element_size(),
           "data_ptr": t.data_ptr(), "device": str(t.device)}
    try:
        out["dlpack"] = dlpack_facts(t)
    except Exception as e:  # recorded, never the end of the recording
        out["dlpack_error"] = f"{type(e).__name__}: {e}"
    try:
        iface = t.__cuda_array_interface__ if t.is_cuda else None
        out["cuda_array_interface"] = None if iface is None else {
            "shape": list(iface["shape"]), "typestr": iface["typestr"], "strides": iface.get("strides"),
            "data": [iface["data"][0], iface["data"][1]], "version": iface.get("version")}
    except Exception as e:  # recorded (torch 2.11 gives bfloat16 one: "<V2")
        out["cuda_array_interface_error"] = f"{type(e).__name__}: {e}"
    return out


def random_case(rng: random.Random, index: int) -> dict:
    name = ["float16", "bfloat16", "float32", "uint8"][index % 4]
    k = DTYPES[name][2]
    swizzle = ["none", "32b", "64b", "128b"][(index // 4) % 4] if index < 16 else rng.choice(list(SWIZZLES))
    span = SWIZZLES[swizzle][1] or 256
    rank = 2 if index % 3 else rng.choice([1, 2, 3])
    inner = [b for b in (8, 16, 32, 64, 128, 256) if b * k % 16 == 0 and b * k <= span]
    box = [rng.choice(inner)] + [2 ** rng.randint(0, 3) for _ in range(rank - 1)]
    dims = [rng.randint(box[0] // 2, 3 * box[0])] + [rng.randint(1, 24) for _ in range(rank - 1)]
    pad = rng.choice([0, 0, 16 // k, 64 // k])
    row = dims[0] + (-dims[0] * k % 16) // k + pad  # elements per row in memory (16-byte multiple)
    step = 16 // k
    coords = [rng.randrange(-box[0], dims[0] + step, step)] + [rng.randint(-box[i], dims[i]) for i in range(1, rank)]
    fill = "nan_request_zero_fma" if name != "uint8" and rng.random() < 0.25 else "none"
    return {"data_type": name, "swizzle": swizzle, "box": box, "dims": dims, "row_elements": row, "coords": coords,
            "element_strides": [1] * rank, "oob_fill": fill, "smem_offset": 128 * rng.randrange(0, 8)}


try:
    import triton
    import triton.language as tl

    @triton.jit
    def load_tile(desc, out_ptr, y, x, BY: tl.constexpr, BX: tl.constexpr):
        tile = desc.load([y, x])
        rows = tl.arange(0, BY)[:, None]
        cols = tl.arange(0, BX)[None, :]
        tl.store(out_ptr + rows * BX + cols, tile)
except Exception:  # recorded per case as triton_error
    triton = None


def triton_tile(t: torch.Tensor, case: dict) -> dict:
    """A real Triton TensorDescriptor over t, and (2-D) the tile desc.load gives at the case's coordinates."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    block = list(reversed(case["box"]))
    desc = TensorDescriptor.from_tensor(t, block)
    out = {"triton_version": triton.__version__, "shape": [int(x) for x in desc.shape],
           "strides": [int(x) for x in desc.strides], "block_shape": [int(x) for x in desc.block_shape],
           "padding": str(getattr(desc, "padding", "zero")), "base": torch_facts(desc.base)}
    if t.dim() != 2:
        return out

    dst = torch.empty(block, dtype=t.dtype, device=t.device)
    y, x = case["coords"][1], case["coords"][0]
    compiled = load_tile[(1,)](desc, dst, y, x, BY=block[0], BX=block[1])
    torch.cuda.synchronize()
    out["tile"] = dst.view(torch.uint8).cpu().numpy().tobytes() if dst.element_size() == 1 else \
        dst.view({2: torch.int16, 4: torch.int32}[dst.element_size()]).cpu().numpy().tobytes()
    meta = getattr(getattr(compiled, "metadata", None), "tensordesc_meta", None)
    out["tensordesc_meta"] = json.loads(json.dumps(meta, default=str)) if meta is not None else None
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tma-dump", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", type=int, default=28)
    ap.add_argument("--seed", type=int, default=16)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    lines, records = [], []
    for i in range(a.cases):
        c = random_case(rng, i)
        dtype, dt_code, k = DTYPES[c["data_type"]]
        rank = len(c["dims"])
        shape_full = list(reversed(c["dims"][1:])) + [c["row_elements"]]
        g = torch.Generator(device="cuda").manual_seed(1000 + i)
        raw = torch.randint(0, 256, (math.prod(shape_full) * k,), dtype=torch.uint8, device="cuda", generator=g)
        full = raw.view(dtype).view(shape_full)
        t = full[..., :c["dims"][0]]  # the tensor: rows padded in memory when row_elements > dims[0]
        strides = [t.stride(rank - 1 - i) * k for i in range(1, rank)]
        base = f"case_{i:02d}"
        with open(os.path.join(a.out, base + ".tensor.bin"), "wb") as f:
            f.write(raw.cpu().numpy().tobytes())
        n = [math.ceil(b / e) for b, e in zip(c["box"], c["element_strides"])]
        span = SWIZZLES[c["swizzle"]][1]
        pitch = max(n[0] * k, span) if span else n[0] * k
        footprint = pitch * math.prod(n[1:])
        rec = {"format": "tmakit-python-vector/1", "case": i,
               "map": {"encode": "tiled", "data_type": c["data_type"], "dims": c["dims"], "strides": strides,
                       "box": c["box"], "element_strides": c["element_strides"], "interleave": "none",
                       "swizzle": c["swizzle"], "l2_promotion": "none", "oob_fill": c["oob_fill"]},
               "coords": c["coords"], "smem_offset": c["smem_offset"], "smem_footprint": footprint,
               "tensor": {"file": base + ".tensor.bin", "shape_in_memory": shape_full, "shape": list(t.shape)},
               "smem": base + ".smem.bin", "cuda_tensor": torch_facts(t), "host_tensor": torch_facts(t.cpu())}
        fields = [DTYPES[c["data_type"]][1], rank, *c["dims"], *strides, *c["box"], *c["element_strides"],
                  SWIZZLES[c["swizzle"]][0], 1 if c["oob_fill"] != "none" else 0, *c["coords"], c["smem_offset"],
                  footprint, math.prod(n) * k, os.path.join(a.out, base + ".tensor.bin"),
                  os.path.join(a.out, base + ".smem.bin")]
        lines.append(" ".join(str(x) for x in fields))
        records.append((base, rec, t, c))
    cases_file = os.path.join(a.out, "cases.txt")
    with open(cases_file, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = subprocess.run([a.tma_dump, cases_file], capture_output=True, text=True)
    print(r.stdout + r.stderr)
    # Triton last: a kernel that faulted would leave this process's CUDA context unusable.
    for base, rec, t, c in records:
        try:
            tri = triton_tile(t, c)
            tile = tri.pop("tile", None)
            if tile is not None:
                with open(os.path.join(a.out, base + ".tile.bin"), "wb") as f:
                    f.write(tile)
                tri["tile"] = base + ".tile.bin"
            rec["triton"] = tri
        except Exception as e:
            rec["triton_error"] = f"{type(e).__name__}: {e}"
            traceback.print_exc()
    for base, rec, _, _ in records:
        if not os.path.exists(os.path.join(a.out, rec["smem"])):
            rec["smem_error"] = "tma_dump wrote no bytes (see its output)"
        with open(os.path.join(a.out, base + ".json"), "w") as f:
            json.dump(rec, f, indent=1)
    os.unlink(cases_file)
    ok = sum(os.path.exists(os.path.join(a.out, rec["smem"])) for _, rec, _, _ in records)
    tiles = sum("tile" in rec.get("triton", {}) for _, rec, _, _ in records)
    print(f"record.py: {len(records)} cases, {ok} with shared-memory bytes, {tiles} with a Triton tile, "
          f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    return 0 if ok == len(records) else 1


if __name__ == "__main__":
    sys.exit(main())
