"""Replays tests/vectors/python, recorded on an H100 by scripts/python-device.sh
(tests/python/h100/record.py): with no GPU, every case must give

- from the recorded facts of the CUDA tensor (DLPack, __cuda_array_interface__) and of
  its host copy, through from_tensor's own conversions: the map the driver encoded
  (dims, byte strides, type) at the tensor's address;
- from the recorded Triton TensorDescriptor, through from_triton: the same map, with
  the swizzle Triton's compiled kernel used where Triton recorded it;
- from simulate_load on the recorded tensor bytes: the raw shared-memory bytes the
  hardware's cp.async.bulk.tensor left, byte for byte (swizzle, fill and all);
- for 2-D cases, unswizzled: the logical tile Triton's desc.load returned (Triton
  fills OOB with zeros: compared with the zero-fill load).

test_replay_of_a_synthetic_recording runs the same checks on a case written here in the
recorder's format (bytes from the NumPy reference), so the replay itself is tested before
and beside the real recordings."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

import reference
import tmakit
from tmakit import _core, _tensors

# TMAKIT_PYTHON_VECTORS: fresh recordings (scripts/python-device.sh replays them on the H100 at once).
VECTORS = Path(os.environ.get("TMAKIT_PYTHON_VECTORS") or Path(__file__).resolve().parents[2] / "tests/vectors/python")
CASES = sorted(VECTORS.glob("case_*.json"))
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SWIZZLE_ENUM = {0: "none", 1: "32b", 2: "64b", 3: "128b"}  # CUtensorMapSwizzle


def load(folder: Path, case: Path):
    rec = json.loads(case.read_text())
    k = rec["cuda_tensor"]["element_size"]
    memory = np.fromfile(folder / rec["tensor"]["file"], dtype=UINT[k]).reshape(rec["tensor"]["shape_in_memory"])
    return rec, memory[..., :rec["map"]["dims"][0]]


def dlpack_of(t: dict):
    if "dlpack" not in t:
        pytest.fail(f"no DLPack facts were recorded: {t.get('dlpack_error')}")
    d = t["dlpack"]
    return _tensors.facts_from_dlpack(d["shape"], d["strides"], d["dtype"], d["device"], d["address"])


def same_map(m: tmakit.TensorMap, rec, address: int):
    want = rec["map"]
    assert (m.dims, m.strides, m.data_type, m.global_address) == (want["dims"], want["strides"], want["data_type"],
                                                                  address)


def unit_free(strides, dims):
    """What a map may have for strides: the stride of a dimension of size 1 addresses nothing (its only
    in-bounds coordinate is 0), and from_tensor rounds it up to a multiple of 16, as the driver takes it."""
    return [-(-s // 16) * 16 if dims[i + 1] == 1 else s for i, s in enumerate(strides)]


def check_facts(folder: Path, case: Path):
    rec, _ = load(folder, case)
    mp = rec["map"]
    opts = dict(swizzle=mp["swizzle"], oob_fill=mp["oob_fill"])
    cuda, host = rec["cuda_tensor"], rec["host_tensor"]
    facts = dlpack_of(cuda)
    assert facts.device == "cuda" and facts.address == cuda["data_ptr"]
    same_map(_tensors.map_from_facts(facts, mp["box"], **opts), rec, cuda["data_ptr"])
    # torch 2.11 gives every recorded type an interface: bfloat16 as "<V2" (ml_dtypes' spelling).
    iface = cuda["cuda_array_interface"]
    assert iface is not None, cuda.get("cuda_array_interface_error")
    m = _tensors.map_from_facts(_tensors.facts_from_interface(iface, "cuda"), mp["box"], **opts)
    if iface["strides"] is None and any(n == 1 for n in mp["dims"][1:]):
        # torch omits the strides of a tensor it calls contiguous; one whose outer dimensions are 1 is,
        # padded rows and all: those strides are not in the interface, and address nothing.
        dense = [math.prod(mp["dims"][:i + 1]) * cuda["element_size"] for i in range(len(mp["dims"]) - 1)]
        assert m.strides == unit_free(dense, mp["dims"])
        assert [s for s, n in zip(m.strides, mp["dims"][1:]) if n > 1] == \
            [s for s, n in zip(mp["strides"], mp["dims"][1:]) if n > 1]
        assert (m.dims, m.data_type, m.global_address) == (mp["dims"], mp["data_type"], cuda["data_ptr"])
    else:
        same_map(m, rec, cuda["data_ptr"])
    facts = dlpack_of(host)  # the host copy: a torch CPU tensor, dense, with strides of its own
    m = _tensors.map_from_facts(facts, mp["box"], **opts)
    assert facts.device == "cpu" and m.dims == mp["dims"] and m.data_type == mp["data_type"]
    assert m.strides == unit_free([s * host["element_size"] for s in reversed(host["stride"][:-1])], mp["dims"])


def check_triton(folder: Path, case: Path):
    rec, _ = load(folder, case)
    tri = rec.get("triton")
    if tri is None:
        pytest.skip(f"Triton refused this descriptor on the H100: {rec.get('triton_error')}")

    class Desc:  # the recorded attributes of triton.tools.tensor_descriptor.TensorDescriptor
        pass

    desc = Desc()
    desc.base, desc.shape, desc.strides, desc.block_shape, desc.padding = (dlpack_of(tri["base"]), tri["shape"],
                                                                           tri["strides"], tri["block_shape"],
                                                                           tri["padding"])
    m = tmakit.from_triton(desc)
    same_map(m, rec, rec["cuda_tensor"]["data_ptr"])
    assert m.box == rec["map"]["box"]
    meta = tri.get("tensordesc_meta")
    if meta and isinstance(meta, list) and isinstance(meta[0], dict) and "swizzle" in meta[0]:
        s = meta[0]["swizzle"]
        assert m.swizzle == (SWIZZLE_ENUM.get(s) if s in SWIZZLE_ENUM else f"{s}b")


def model_map(rec, tensor, **changes):
    mp = {**rec["map"], **changes}
    return tmakit.from_tensor(tensor, box=mp["box"], element_strides=mp["element_strides"], swizzle=mp["swizzle"],
                              oob_fill=mp["oob_fill"], data_type=mp["data_type"])


def check_smem(folder: Path, case: Path):
    rec, tensor = load(folder, case)
    if "smem_error" in rec:
        pytest.fail(rec["smem_error"])
    m = model_map(rec, tensor)
    got = tmakit.simulate_load(m, tensor, rec["coords"], smem_offset=rec["smem_offset"])
    hardware = (folder / rec["smem"]).read_bytes()
    assert len(hardware) == m.smem_footprint == rec["smem_footprint"]
    assert got.tobytes() == hardware


def check_tile(folder: Path, case: Path):
    rec, tensor = load(folder, case)
    m = model_map(rec, tensor, oob_fill="none")
    base = rec["smem_offset"]
    smem = tmakit.simulate_load(m, tensor, rec["coords"], smem_offset=base)
    # Unswizzle (§3.1 is an involution): logical byte b of row r sits at swizzle(base + r·pitch + b) − base.
    tile = bytes(smem[reference.swizzle(base + r * m.row_pitch + b, m.swizzle) - base]
                 for r in range(m.rows) for b in range(m.row_bytes))
    assert tile == (folder / rec["triton"]["tile"]).read_bytes()


def test_there_are_at_least_20_recorded_cases():
    # A folder given by TMAKIT_PYTHON_VECTORS (python-device.sh's fresh recordings) must hold them.
    assert len(CASES) >= 20, f"{VECTORS} holds {len(CASES)} recorded cases (scripts/python-device.sh on an H100)"


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_from_tensor_facts(case):
    check_facts(VECTORS, case)


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_from_triton_descriptor(case):
    check_triton(VECTORS, case)


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_simulate_load_equals_the_h100_bytes(case):
    check_smem(VECTORS, case)


@pytest.mark.parametrize("case", [c for c in CASES if "tile" in json.loads(c.read_text()).get("triton", {})],
                         ids=lambda c: c.stem)
def test_triton_logical_tile(case):
    check_tile(VECTORS, case)


def recorded_facts(a: np.ndarray, data_type: str) -> dict:
    """What record.py writes for a tensor, from a NumPy array standing in for it."""
    shape, strides, (code, bits, lanes), device, address = _core.dlpack_facts(a)
    if data_type == "bfloat16":
        code = 4
    elif data_type.startswith("float"):
        code = 2
    return {"shape": list(a.shape), "stride": [s // a.itemsize for s in a.strides], "element_size": a.itemsize,
            "data_ptr": address, "dlpack": {"shape": shape, "strides": strides, "dtype": [code, bits, lanes],
                                            "device": device, "address": address}}


def test_replay_of_a_synthetic_recording(tmp_path):
    # A bf16 case in the recorder's format; its "hardware" bytes come from the NumPy reference.
    dims, box, coords, base, mode = [72, 9], [64, 4], [-8, 7], 384, "128b"
    memory = np.random.default_rng(9).integers(0, 2**16, size=(9, 80), dtype=np.uint16)
    t = memory[:, :72]
    (tmp_path / "case_00.tensor.bin").write_bytes(memory.tobytes())
    cuda = recorded_facts(t, "bfloat16")
    cuda["dlpack"]["device"] = [2, 0]  # on the GPU
    cuda["cuda_array_interface"] = {"shape": [9, 72], "typestr": "<V2", "strides": [160, 2], "data": [cuda["data_ptr"],
                                                                                                  False], "version": 2}
    host = recorded_facts(np.ascontiguousarray(t), "bfloat16")
    host["dlpack"]["device"] = [1, 0]
    smem = reference.load(t, box, [1, 1], coords, mode, base)
    (tmp_path / "case_00.smem.bin").write_bytes(smem.tobytes())
    tile = np.zeros((4, 64), np.uint16)
    for y in range(4):
        for x in range(64):
            gy, gx = coords[1] + y, coords[0] + x
            tile[y, x] = t[gy, gx] if 0 <= gy < 9 and 0 <= gx < 72 else 0
    (tmp_path / "case_00.tile.bin").write_bytes(tile.tobytes())
    rec = {"format": "tmakit-python-vector/1", "case": 0,
           "map": {"encode": "tiled", "data_type": "bfloat16", "dims": dims, "strides": [160], "box": box,
                   "element_strides": [1, 1], "interleave": "none", "swizzle": mode, "l2_promotion": "none",
                   "oob_fill": "none"},
           "coords": coords, "smem_offset": base, "smem_footprint": smem.size,
           "tensor": {"file": "case_00.tensor.bin", "shape_in_memory": [9, 80], "shape": [9, 72]},
           "smem": "case_00.smem.bin", "cuda_tensor": cuda, "host_tensor": host,
           "triton": {"shape": [9, 72], "strides": [80, 1], "block_shape": [4, 64], "padding": "zero", "base": cuda,
                      "tile": "case_00.tile.bin", "tensordesc_meta": [{"swizzle": 0, "elem_size": 2}]}}
    # Triton's own swizzle for a 4-row block is none (fewer than 8 rows: recorded cases 03, 17, 19, 27),
    # whatever swizzle tma_dump's map of the case had.
    case = tmp_path / "case_00.json"
    case.write_text(json.dumps(rec))
    for check in (check_facts, check_triton, check_smem, check_tile):
        check(tmp_path, case)
    # And each check fails on a wrong recording.
    (tmp_path / "case_00.smem.bin").write_bytes(bytes([smem[0] ^ 1]) + smem[1:].tobytes())
    with pytest.raises(AssertionError):
        check_smem(tmp_path, case)
    (tmp_path / "case_00.tile.bin").write_bytes(np.roll(tile, 1).tobytes())
    with pytest.raises(AssertionError):
        check_tile(tmp_path, case)
    rec["triton"]["tensordesc_meta"] = [{"swizzle": 2}]
    case.write_text(json.dumps(rec))
    with pytest.raises(AssertionError):
        check_triton(tmp_path, case)
    rec["cuda_tensor"]["dlpack"]["strides"] = [72, 1]
    case.write_text(json.dumps(rec))
    with pytest.raises(AssertionError):
        check_facts(tmp_path, case)
