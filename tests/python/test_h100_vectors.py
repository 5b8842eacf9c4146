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
  fills OOB with zeros: compared with the zero-fill load)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import reference
import tmakit
from tmakit import _tensors

VECTORS = Path(__file__).resolve().parents[2] / "tests/vectors/python"
CASES = sorted(VECTORS.glob("case_*.json"))
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def test_there_are_at_least_20_recorded_cases():
    if not VECTORS.exists():
        pytest.skip("tests/vectors/python not recorded yet (scripts/python-device.sh on an H100)")
    assert len(CASES) >= 20


def load(case: Path):
    rec = json.loads(case.read_text())
    k = rec["cuda_tensor"]["element_size"]
    memory = np.fromfile(VECTORS / rec["tensor"]["file"], dtype=UINT[k]).reshape(rec["tensor"]["shape_in_memory"])
    tensor = memory[..., :rec["map"]["dims"][0]]
    return rec, tensor


def same_map(m: tmakit.TensorMap, rec, address: int):
    want = rec["map"]
    assert (m.dims, m.strides, m.data_type, m.global_address) == (want["dims"], want["strides"], want["data_type"],
                                                                  address)


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_from_tensor_facts(case):
    rec, _ = load(case)
    mp = rec["map"]
    opts = dict(swizzle=mp["swizzle"], oob_fill=mp["oob_fill"])
    for key in ("cuda_tensor", "host_tensor"):
        t = rec[key]
        d = t["dlpack"]
        facts = _tensors.facts_from_dlpack(d["shape"], d["strides"], d["dtype"], d["device"], d["address"])
        assert facts.device == ("cuda" if key == "cuda_tensor" else "cpu")
        assert d["address"] == t["data_ptr"]
        if key == "cuda_tensor":
            same_map(_tensors.map_from_facts(facts, mp["box"], **opts), rec, t["data_ptr"])
        else:  # the host copy is dense: its strides are its own
            m = _tensors.map_from_facts(facts, mp["box"], **opts)
            assert m.dims == mp["dims"] and m.data_type == mp["data_type"]
            assert m.strides == [s * t["element_size"] for s in reversed(t["stride"][:-1])]
        iface = t.get("cuda_array_interface")
        if iface:
            m = _tensors.map_from_facts(_tensors.facts_from_interface(iface, "cuda"), mp["box"], **opts)
            same_map(m, rec, t["data_ptr"])


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_from_triton_descriptor(case):
    rec, _ = load(case)
    tri = rec.get("triton")
    if tri is None:
        pytest.skip(f"Triton refused this descriptor on the H100: {rec.get('triton_error')}")
    d = tri["base"]["dlpack"]
    base = _tensors.facts_from_dlpack(d["shape"], d["strides"], d["dtype"], d["device"], d["address"])

    class Desc:  # the recorded attributes of triton.tools.tensor_descriptor.TensorDescriptor
        pass

    desc = Desc()
    desc.base, desc.shape, desc.strides, desc.block_shape, desc.padding = (base, tri["shape"], tri["strides"],
                                                                           tri["block_shape"], tri["padding"])
    m = tmakit.from_triton(desc)
    same_map(m, rec, rec["cuda_tensor"]["data_ptr"])
    assert m.box == rec["map"]["box"]
    meta = tri.get("tensordesc_meta")
    if meta and isinstance(meta, list) and isinstance(meta[0], dict) and "swizzle" in meta[0]:
        assert reference.SPAN[m.swizzle] == {0: 0, 1: 32, 2: 64, 3: 128}.get(meta[0]["swizzle"], meta[0]["swizzle"])


def model_map(rec, tensor, **changes):
    mp = {**rec["map"], **changes}
    return tmakit.from_tensor(tensor, box=mp["box"], element_strides=mp["element_strides"], swizzle=mp["swizzle"],
                              oob_fill=mp["oob_fill"], data_type=mp["data_type"])


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_simulate_load_equals_the_h100_bytes(case):
    rec, tensor = load(case)
    if "smem_error" in rec:
        pytest.fail(rec["smem_error"])
    m = model_map(rec, tensor)
    got = tmakit.simulate_load(m, tensor, rec["coords"], smem_offset=rec["smem_offset"])
    hardware = (VECTORS / rec["smem"]).read_bytes()
    assert len(hardware) == m.smem_footprint == rec["smem_footprint"]
    assert got.tobytes() == hardware


@pytest.mark.parametrize("case", [c for c in CASES if "tile" in json.loads(c.read_text()).get("triton", {})],
                         ids=lambda c: c.stem)
def test_triton_logical_tile(case):
    rec, tensor = load(case)
    m = model_map(rec, tensor, oob_fill="none")
    base = rec["smem_offset"]
    smem = tmakit.simulate_load(m, tensor, rec["coords"], smem_offset=base)
    # Unswizzle (§3.1 is an involution): logical byte b of row r sits at swizzle(base + r·pitch + b) − base.
    rows, pitch, row_bytes = m.rows, m.row_pitch, m.row_bytes
    tile = bytearray()
    for r in range(rows):
        for b in range(row_bytes):
            tile.append(smem[reference.swizzle(base + r * pitch + b, m.swizzle) - base])
    assert bytes(tile) == (VECTORS / rec["triton"]["tile"]).read_bytes()
