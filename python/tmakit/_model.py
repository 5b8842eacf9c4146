"""The reference model from Python: tmakit.run(scenario) and the one-call
helpers simulate_load / simulate_store / simulate_reduce, each a scenario of a
few PTX steps run by the same C++ engine as `tmakit run`."""
from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _core, _values
from ._errors import InputError, ModelWarning, finding_of, translated
from ._maps import TensorMap
from ._tensors import _as_numpy, host_bytes

__all__ = ["run", "simulate_load", "simulate_store", "simulate_reduce"]

Scenario = Union[Dict[str, Any], str, "os.PathLike[str]"]


def _scenario_text(scenario: Any) -> "tuple[str, str]":
    """(JSON text, folder its init files are read from)."""
    if isinstance(scenario, dict):
        try:
            return json.dumps(scenario), os.getcwd()
        except (TypeError, ValueError) as e:
            raise TypeError(f"scenario: {e}") from None
    if isinstance(scenario, (str, os.PathLike)):
        path = os.fspath(scenario)
        try:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"cannot read the scenario: {e}", "scenario.file", path) from None
        try:
            json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"not valid JSON: {e}", "scenario.json", path) from None
        return text, os.path.dirname(os.path.abspath(path))
    raise TypeError(f"scenario must be a dict in the scenario format or a path, got {type(scenario).__name__}")


@translated()
def run(scenario: Scenario, inputs: Optional[Mapping[str, Any]] = None, *,
        seed: Optional[int] = None) -> Dict[str, np.ndarray]:
    """Runs a scenario (docs/scenario-format.md; a dict or a file) on the model, as `tmakit run`:
    returns every output as a uint8 array by name. `inputs` give global allocations their
    initial bytes (any array of the allocation's size in bytes). A diagnosed error raises
    ModelError (rule, step, message); the model's warnings become ModelWarning."""
    text, folder = _scenario_text(scenario)
    given: List[tuple] = []
    for name, array in (inputs or {}).items():
        if not isinstance(name, str):
            raise TypeError(f"inputs: keys must be allocation names (str), got {type(name).__name__}")
        given.append((name, host_bytes(array, f"inputs[\"{name}\"]")))
    s = None if seed is None else _values.integer(seed, "seed")
    outputs, warns = _core.run(text, folder, given, s)
    for w in warns:
        warnings.warn(str(finding_of(w)), ModelWarning, stacklevel=2)
    return {name: np.frombuffer(data, dtype=np.uint8).copy() for name, data in outputs}


# -- the one-call helpers ------------------------------------------------------------------
# Shared memory of the scenarios they build: the box at smem_offset, then the barrier.


def _coords(m: TensorMap, coords: Sequence[int]) -> List[int]:
    return _values.integers(coords, "coords", m.rank)


def _smem(m: TensorMap, smem_offset: int) -> int:
    off = _values.integer(smem_offset, "smem_offset")
    if off < 0 or off % 16:
        raise InputError(f"{off} is not a 16-byte aligned shared offset", "python.smem-offset", "smem_offset")
    return off


def _tensor_scenario(m: TensorMap, tensor: Any, smem_bytes: int, target: str) -> "tuple[Dict[str, Any], bytes]":
    """A scenario with the tensor as global allocation "T", read by map "m" from its first byte."""
    if m.encode != "tiled":
        raise InputError(f"the simulate_* helpers take tiled maps; this is an {m.encode} map: write a scenario "
                         "and use tmakit.run", "python.encode", "m")
    spec = m.to_json()
    spec.pop("global_address", None)
    spec.update(encode="tiled", **{"global": "T"})
    data = host_bytes(tensor)
    # The bytes the map reaches from the tensor's first byte: a smaller tensor is the caller's mistake
    # (a wrong shape), said as such, not a fault of the model's global memory.
    dims, strides = spec.get("dims", []), spec.get("strides", [])
    if dims and not str(spec.get("data_type", "")).startswith("16u"):
        reach = dims[0] * m._facts["element_bits"] // 8 + sum((d - 1) * s for d, s in zip(dims[1:], strides))
        if len(data) < reach:
            raise InputError(f"the tensor holds {len(data)} bytes, but the map (dims {dims}, strides {strides}) reaches "
                             f"{reach} bytes: pass the tensor the map was made from, or a map of this tensor's shape",
                             "python.tensor-size", "tensor")
    shared = min(max(smem_bytes + 16, 1024), 232448)
    return {"format": "tmakit-scenario/1", "target": str(target), "shared_bytes": shared,
            "global": {"T": {"bytes": max(len(data), 16), "align": 1024}}, "tensor_maps": {"m": spec},
            "symbols": {}, "program": [], "outputs": []}, data


def _run_helper(s: Dict[str, Any], data: bytes) -> Dict[str, np.ndarray]:
    data = data + bytes(max(0, 16 - len(data)))
    return run(s, {"T": np.frombuffer(data, dtype=np.uint8)})


@translated()
def simulate_load(m: TensorMap, tensor: Any, coords: Sequence[int], smem_offset: int = 0, *,
                  target: str = "sm_90a") -> np.ndarray:
    """The shared-memory bytes one tile load of `m` at `coords` (dimension 0 first) puts at
    `smem_offset` (CTA-relative; the window starts 1024-aligned, so the swizzle phase follows
    the offset): m.smem_footprint bytes, swizzle, padding and OOB fill included. The map reads
    `tensor` from its first byte (m's global_address is not used)."""
    m.check(target)
    c, off = _coords(m, coords), _smem(m, smem_offset)
    mbar = (off + m.smem_footprint + 7) // 8 * 8
    s, data = _tensor_scenario(m, tensor, mbar + 8, target)
    s["symbols"] = {"dst": f"shared:{off}", "mbar": f"shared:{mbar}"}
    s["program"] = [
        "mbarrier.init.shared::cta.b64 [mbar], 1;",
        f"mbarrier.arrive.expect_tx.shared::cta.b64 _, [mbar], {m.box_bytes};",
        f"cp.async.bulk.tensor.{m.rank}d.shared::cta.global.mbarrier::complete_tx::bytes.tile [dst], "
        f"[m, {{{', '.join(map(str, c))}}}], [mbar];",
        "mbarrier.try_wait.parity.shared::cta.b64 done, [mbar], 0;",
    ]
    s["outputs"] = [{"name": "box", "shared": {"cta": 0, "offset": off, "bytes": m.smem_footprint}}]
    return _run_helper(s, data)["box"]


def _from_shared(m: TensorMap, tensor: Any, smem: Any, coords: Sequence[int], smem_offset: int, target: str,
                 instruction: str) -> np.ndarray:
    m.check(target)
    c, off = _coords(m, coords), _smem(m, smem_offset)
    box = np.ascontiguousarray(_as_numpy(smem, "smem")).view(np.uint8).reshape(-1)
    if box.size != m.smem_footprint:
        raise InputError(f"smem has {box.size} bytes; the box occupies m.smem_footprint = {m.smem_footprint}",
                         "python.smem-size", "smem")
    s, data = _tensor_scenario(m, tensor, off + box.size, target)
    s["shared_init"] = [{"cta": 0, "offset": off, "init": {"hex": box.tobytes().hex()}}]
    s["symbols"] = {"src": f"shared:{off}"}
    s["program"] = [instruction.format(rank=m.rank, coords=", ".join(map(str, c))),
                    "cp.async.bulk.commit_group;", "cp.async.bulk.wait_group 0;"]
    s["global"]["T"]["bytes"] = max(len(data), 16)
    s["outputs"] = [{"name": "T", "global": "T"}]
    out = _run_helper(s, data)["T"][:len(data)]
    # Back into the tensor's own shape and type, element for element as the map addresses it.
    a = _as_numpy(tensor, "tensor")
    memory = np.frombuffer(out.tobytes(), dtype=a.dtype)
    return np.lib.stride_tricks.as_strided(memory, shape=a.shape, strides=a.strides).copy()


@translated()
def simulate_store(m: TensorMap, tensor: Any, smem: Any, coords: Sequence[int], smem_offset: int = 0, *,
                   target: str = "sm_90a") -> np.ndarray:
    """The tensor after one tile store of `m` at `coords` from shared memory holding `smem`
    (m.smem_footprint bytes at `smem_offset`): returned as a new array of unsigned integers
    of the element's width, in the tensor's shape (view it as the tensor's dtype)."""
    return _from_shared(m, tensor, smem, coords, smem_offset, target,
                        "cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group.tile [m, {{{coords}}}], [src];")


REDUCTIONS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")


@translated()
def simulate_reduce(m: TensorMap, tensor: Any, smem: Any, coords: Sequence[int], op: str = "add",
                    smem_offset: int = 0, *, target: str = "sm_90a") -> np.ndarray:
    """The tensor after one cp.reduce.async.bulk.tensor of `m` with `op` (add min max inc dec
    and or xor) at `coords` from shared memory holding `smem`; as simulate_store."""
    op = _values.choice(op, "op", REDUCTIONS)
    return _from_shared(m, tensor, smem, coords, smem_offset, target,
                        "cp.reduce.async.bulk.tensor.{rank}d.global.shared::cta." + op +
                        ".tile.bulk_group [m, {{{coords}}}], [src];")

