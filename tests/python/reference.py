"""An independent NumPy reference of a tiled TMA load and store, written from
tma-semantics.md §2.1 (what a box touches), §2.2 and H4 (OOB fill), §3.1 (the swizzle
XORs address bits 4-6 with bits 7-9 of the absolute shared address) and §3.3 / H2
(a row narrower than the swizzle span occupies the whole span). It shares no code
with tmakit."""
from __future__ import annotations

import itertools
import math

import numpy as np

SPAN = {"none": 0, "32b": 32, "64b": 64, "128b": 128}
# H4: the OOB-NaN is 0x7FF7 repeated to the element width.
NAN_FILL = {2: 0x7FF7, 4: 0x7FF77FF7, 8: 0x7FF77FF77FF77FF7}


def swizzle(addr: int, mode: str) -> int:
    bits = {"none": 0, "32b": 1, "64b": 3, "128b": 7}[mode]
    return addr ^ (((addr >> 7) & bits) << 4)


def geometry(box, element_strides, k, mode):
    n = [math.ceil(b / e) for b, e in zip(box, element_strides)]
    row_bytes = n[0] * k
    pitch = max(row_bytes, SPAN[mode]) if mode != "none" else row_bytes
    rows = math.prod(n[1:])
    return n, pitch, rows


def box_elements(tensor, box, element_strides, coords):
    """Yields (k-vector, in bounds, g-vector) for every element of the box, dimension 0 first."""
    dims = list(reversed(tensor.shape))
    n = [math.ceil(b / e) for b, e in zip(box, element_strides)]
    for ks in itertools.product(*[range(x) for x in reversed(n)]):
        ks = list(reversed(ks))
        g = [c + kk * e for c, kk, e in zip(coords, ks, element_strides)]
        yield ks, all(0 <= gi < d for gi, d in zip(g, dims)), g


def smem_address(ks, n, pitch, k, base, mode):
    r = 0
    for i in reversed(range(1, len(n))):
        r = r * n[i] + ks[i]
    return swizzle(base + r * pitch + ks[0] * k, mode) - base


def load(tensor: np.ndarray, box, element_strides, coords, mode="none", base=0, nan_fill=False) -> np.ndarray:
    """The bytes a tile load puts in shared memory from `base` (tensor: unsigned ints, outermost first)."""
    k = tensor.dtype.itemsize
    n, pitch, rows = geometry(box, element_strides, k, mode)
    out = np.zeros(rows * pitch, dtype=np.uint8)
    fill = (NAN_FILL[k] if nan_fill else 0).to_bytes(k, "little")
    for ks, inb, g in box_elements(tensor, box, element_strides, coords):
        value = int(tensor[tuple(reversed(g))]).to_bytes(k, "little") if inb else fill
        a = smem_address(ks, n, pitch, k, base, mode)
        out[a:a + k] = np.frombuffer(value, dtype=np.uint8)
    return out


def store(tensor: np.ndarray, smem: np.ndarray, box, element_strides, coords, mode="none", base=0,
          combine=None) -> np.ndarray:
    """The tensor after a tile store (or a reduction with `combine(old, new)`): in-bound elements only."""
    k = tensor.dtype.itemsize
    n, pitch, rows = geometry(box, element_strides, k, mode)
    out = tensor.copy()
    for ks, inb, g in box_elements(tensor, box, element_strides, coords):
        if not inb:
            continue
        a = smem_address(ks, n, pitch, k, base, mode)
        new = smem[a:a + k].view(tensor.dtype)[0]
        idx = tuple(reversed(g))
        out[idx] = new if combine is None else combine(out[idx], new)
    return out
