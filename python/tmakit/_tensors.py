"""What a tensor object says about itself (DLPack, __cuda_array_interface__,
__array_interface__), turned into a tensor map: TensorMap.from_tensor and from_triton.

A tensor's shape is outermost first; a map's dims are innermost first, so the
dims are the shape reversed and map stride i is the byte stride of tensor
dimension ndim-1-i. Element strides (DLPack, Triton) are multiplied by the
element size; the interfaces give bytes already."""
from __future__ import annotations

import warnings

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _core, _values
from ._errors import InputError
from ._maps import TensorMap

__all__ = ["TensorFacts", "describe", "from_tensor", "from_triton", "host_bytes"]

# DLPack type codes (dlpack.h: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6, the float8 codes
# 7..14 of DLPack 1.1) → map data types. 1- and 2-byte types with no map type of their own (int8,
# int16, bool, every fp8) are copied as uint8/uint16, as Triton encodes them: the engine moves bytes.
_DLPACK_TYPES = {(1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (0, 32): "int32", (1, 64): "uint64",
                 (0, 64): "int64", (2, 16): "float16", (2, 32): "float32", (2, 64): "float64", (4, 16): "bfloat16",
                 (0, 8): "uint8", (0, 16): "uint16", (6, 8): "uint8",
                 **{(code, 8): "uint8" for code in range(7, 15)}}
_DLPACK_NAMES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 5: "complex", 6: "bool", 7: "float8_e3m4",
                 8: "float8_e4m3", 9: "float8_e4m3b11fnuz", 10: "float8_e4m3fn", 11: "float8_e4m3fnuz",
                 12: "float8_e5m2", 13: "float8_e5m2fnuz", 14: "float8_e8m0fnu"}
# Array-interface type strings (kind, bytes) → map data types.
_TYPESTR_TYPES = {("u", 1): "uint8", ("u", 2): "uint16", ("u", 4): "uint32", ("i", 4): "int32", ("u", 8): "uint64",
                  ("i", 8): "int64", ("f", 2): "float16", ("f", 4): "float32", ("f", 8): "float64",
                  ("i", 1): "uint8", ("i", 2): "uint16", ("b", 1): "uint8"}
DLPACK_CPU, DLPACK_CUDA = 1, 2


@dataclass(frozen=True)
class TensorFacts:
    """A tensor as a tensor map sees it: outermost dimension first, strides in bytes."""

    shape: Tuple[int, ...]
    byte_strides: Tuple[int, ...]
    data_type: str
    element_bytes: int
    address: int
    device: str  # "cpu" or "cuda"
    source: str  # which interface said so: "dlpack", "cuda_array_interface", "array_interface"


def _data_type(name: Optional[str], what: str, where: str) -> str:
    if name is None:
        raise InputError(f"{what} has no tensor-map data type (uint8 uint16 uint32 int32 uint64 int64 float16 "
                         "float32 float64 bfloat16, and 1- or 2-byte types as uint8/uint16)", "python.dtype", where)
    return name


def facts_from_dlpack(shape: Sequence[int], strides: Sequence[int], dtype: Sequence[int], device: Sequence[int],
                      address: int, where: str = "tensor") -> TensorFacts:
    """DLPack's raw facts (strides in elements) → TensorFacts."""
    code, bits, lanes = dtype
    what = f"DLPack type {_DLPACK_NAMES.get(code, code)}{bits}" + (f"x{lanes}" if lanes != 1 else "")
    name = _data_type(_DLPACK_TYPES.get((code, bits)) if lanes == 1 else None, what, where)
    size = bits // 8
    dev = {DLPACK_CPU: "cpu", DLPACK_CUDA: "cuda"}.get(device[0], f"dlpack-device-{device[0]}")
    return TensorFacts(tuple(int(n) for n in shape), tuple(int(s) * size for s in strides), name, size, int(address),
                       dev, "dlpack")


def _interface_data_type(typestr: str, descr: Any, where: str) -> str:
    """The map data type of an array interface's typestr. "<V2" is bfloat16: torch (2.11:
    _dtype_to_typestr, "same as ml_dtypes.bfloat16.dtype.str") and ml_dtypes write it for bfloat16
    and for nothing else of 2 bytes; a void type without that byte order ("|V2", NumPy's
    raw or structured bytes) or with named fields in its descr says nothing of the elements."""
    size = int(typestr[2:]) if typestr[2:].isdigit() else 0
    if typestr[1:2] != "V":
        return _data_type(_TYPESTR_TYPES.get((typestr[1:2], size)), f"type string \"{typestr}\"", where)
    fields = [f[0] for f in descr if isinstance(f, (tuple, list)) and f] if isinstance(descr, (list, tuple)) else []
    if typestr == "<V2" and not any(fields):
        return "bfloat16"
    raise InputError(f"type string \"{typestr}\"" + (f" (fields {fields})" if any(fields) else "") +
                     " is raw bytes: the interface does not say what the elements are (only \"<V2\" is read, as "
                     "bfloat16, the spelling of torch and ml_dtypes); pass an object with __dlpack__, or view the "
                     "data as unsigned integers of its width", "python.dtype", where)


def facts_from_interface(iface: Dict[str, Any], device: str, where: str = "tensor") -> TensorFacts:
    """__array_interface__ / __cuda_array_interface__ (version 2-3): strides in bytes, None = C order."""
    typestr = str(iface["typestr"])
    size = int(typestr[2:]) if typestr[2:].isdigit() else 0
    name = _interface_data_type(typestr, iface.get("descr"), where)
    shape = tuple(int(n) for n in iface["shape"])
    strides = iface.get("strides")
    if strides is None:  # C-contiguous
        acc, out = size, []
        for n in reversed(shape):
            out.append(acc)
            acc *= n
        strides = tuple(reversed(out))
    data = iface.get("data")
    address = int(data[0]) if isinstance(data, (tuple, list)) else 0
    source = "cuda_array_interface" if device == "cuda" else "array_interface"
    return TensorFacts(shape, tuple(int(s) for s in strides), name, size, address, device, source)


def describe(tensor: Any, where: str = "tensor") -> TensorFacts:
    """The facts of a torch tensor, a NumPy array, or anything with __dlpack__,
    __cuda_array_interface__ or __array_interface__ (tried in that order); TensorFacts pass through
    (facts recorded elsewhere, e.g. on a GPU machine, stand for their tensor)."""
    if isinstance(tensor, TensorFacts):
        return tensor
    if hasattr(tensor, "__dlpack__"):
        try:
            raw = _core.dlpack_facts(tensor)
        except (TypeError, BufferError, RuntimeError, ValueError) as e:  # e.g. a read-only or odd-typed array
            if not (hasattr(tensor, "__array_interface__") or hasattr(tensor, "__cuda_array_interface__")):
                raise InputError(f"its __dlpack__ could not be read: {e}", "python.dlpack", where) from None
        else:
            return facts_from_dlpack(*raw, where=where)
    if hasattr(tensor, "__cuda_array_interface__"):
        return facts_from_interface(tensor.__cuda_array_interface__, "cuda", where)
    if hasattr(tensor, "__array_interface__"):
        return facts_from_interface(tensor.__array_interface__, "cpu", where)
    raise TypeError(f"{where} must be a tensor (torch, NumPy, or an object with __dlpack__, __cuda_array_interface__ "
                    f"or __array_interface__), got {type(tensor).__name__}")


def _unit_dimension_stride(stride: int) -> int:
    """The stride of a dimension of size 1 never meets an address: its only in-bounds coordinate
    is 0, and loads fill and stores skip everything past it (docs/tensor-maps.md).
    Interfaces say little of it (torch's __cuda_array_interface__ omits the strides of a tensor it
    calls contiguous, and a padded one-row tensor is one), so such a stride becomes the next
    multiple of 16, which the driver takes, instead of a map the driver would refuse."""
    return -(-stride // 16) * 16


def map_from_facts(f: TensorFacts, box: Sequence[int], where: str = "tensor", *, unit_strides_free: bool = True,
                   **options: Any) -> TensorMap:
    """A tiled map over the whole tensor: dims = shape reversed, strides in bytes, address = the data.
    With unit_strides_free, the stride of a dimension of size 1 is rounded up to 16 bytes
    (_unit_dimension_stride); from_triton keeps Triton's own (Triton refuses unaligned strides)."""
    nd = len(f.shape)
    if not 1 <= nd <= 5:
        raise InputError(f"the tensor has {nd} dimensions; a tensor map has 1 to 5", "python.rank", where)
    if f.byte_strides[-1] != f.element_bytes:
        raise InputError(f"the innermost dimension has a stride of {f.byte_strides[-1] // max(f.element_bytes, 1)} "
                         f"elements ({f.byte_strides[-1]} bytes); a tensor map reads it contiguously (stride 1): "
                         "make it contiguous or transpose the map", "python.inner-stride", f"{where}.stride[{nd - 1}]")
    for i, s in enumerate(f.byte_strides):
        if s < 0:
            raise InputError(f"dimension {i} has a negative stride ({s} bytes); a tensor map's strides are unsigned",
                             "python.negative-stride", f"{where}.stride[{i}]")
    box_list = _values.integers(box, "box", nd)
    data_type = options.pop("data_type", None) or f.data_type
    strides = [f.byte_strides[nd - 1 - i] for i in range(1, nd)]
    if unit_strides_free:
        strides = [_unit_dimension_stride(s) if f.shape[nd - 1 - i] == 1 else s for i, s in enumerate(strides, 1)]
    return TensorMap.tiled(data_type=data_type, dims=list(reversed(f.shape)), box=box_list, strides=strides,
                           global_address=f.address, **options)


def from_tensor(tensor: Any, box_innermost_first: Optional[Sequence[int]] = None, *,
                block_shape: Optional[Sequence[int]] = None, swizzle: Any = "none",
                element_strides: Optional[Sequence[int]] = None, interleave: Any = "none", l2_promotion: Any = "none",
                oob_fill: Any = "none", data_type: Any = None, box: Optional[Sequence[int]] = None) -> TensorMap:
    """A tiled map over `tensor` (torch, NumPy, DLPack or array-interface object).

    The box is given in one of two orders, each named: `box_innermost_first` (also `box=`) in the
    map's order, dimension 0 first, as cuTensorMapEncodeTiled's boxDim and every TensorMap field;
    or `block_shape=` in the tensor's own order, outermost first, as `tensor.shape` and Triton's
    block_shape. A box that fits the tensor only when reversed draws a UserWarning
    (python.box-order). `data_type` overrides the tensor's (e.g. "tfloat32" for a float32 tensor)."""
    f = describe(tensor)
    given = [b for b in (box_innermost_first, box, block_shape) if b is not None]
    if len(given) != 1:
        raise InputError("give the box once: box_innermost_first (or box=), dimension 0 first, or block_shape=, "
                         "outermost first", "python.input", "box")
    if block_shape is not None:
        box = list(reversed(_values.integers(block_shape, "block_shape", len(f.shape))))
    else:
        box = _values.integers(given[0], "box", len(f.shape))
        dims = list(reversed(f.shape))
        if any(b > d for b, d in zip(box, dims)) and all(b <= d for b, d in zip(reversed(box), dims)):
            warnings.warn(f"box {box} is innermost dimension first (the map's order), so it is larger than the tensor "
                          f"(dims {dims}, innermost first) while its reverse fits: if you meant the tensor's order, "
                          f"pass block_shape={box} [python.box-order]", UserWarning, stacklevel=2)
    return map_from_facts(f, box, swizzle=swizzle, element_strides=element_strides, interleave=interleave,
                          l2_promotion=l2_promotion, oob_fill=oob_fill,
                          data_type=_values.data_type(data_type) if data_type is not None else None)


def triton_default_swizzle(block_shape: Sequence[int], element_bytes: int) -> str:
    """The swizzle Triton 3.6 gives a host TensorDescriptor whose loaded tile asks for no shared
    layout of its own (OptimizeDescriptorEncoding's fallback, NVMMASharedEncodingAttr's builder in
    TritonGPUAttrDefs.td): the largest of 128/64/32 bytes that divides the block's inner row,
    and none for a 1-D block or one whose outer dimensions hold fewer than 8 rows in all."""
    rows = 1
    for n in block_shape[:-1]:
        rows *= n
    if len(block_shape) < 2 or rows < 8:
        return "none"
    inner = block_shape[-1] * element_bytes
    for span in (128, 64, 32):
        if inner >= span and inner % span == 0:
            return f"{span}b"
    return "none"


def triton_box(block_shape: Sequence[int], element_bytes: int, swizzle: str) -> List[int]:
    """The box Triton 3.6 encodes for a block (getTMABlockShape, TMAUtilities.cpp), in the map's
    order: every dimension at most 256, and under a swizzle the inner one exactly the swizzle's
    span (Triton issues several loads per block when the block's row is wider)."""
    box = [min(int(n), 256) for n in block_shape]
    span = {"32b": 32, "64b": 64, "128b": 128}.get(swizzle, 0)
    if span:
        box[-1] = min(box[-1], span // element_bytes)
    return list(reversed(box))


def from_triton(desc: Any, *, swizzle: Any = None, l2_promotion: Any = "128b") -> TensorMap:
    """The map of a Triton TensorDescriptor (triton.tools.tensor_descriptor, or Gluon's, whose
    `layout.swizzle_byte_width` gives the swizzle): desc.shape / desc.strides (elements) /
    desc.block_shape, outermost first, over desc.base; padding "nan" → OOB-NaN fill.
    Without a Gluon layout the swizzle is `swizzle`, else Triton's default for the block
    (triton_default_swizzle); the box is Triton's for that swizzle (triton_box). L2 promotion
    128B is what Triton 3.6's launcher encodes (driver.c, fillTMADescriptorTiled); it never
    changes the bytes (docs/hardware-notes.md)."""
    for attr in ("base", "shape", "strides", "block_shape"):
        if not hasattr(desc, attr):
            raise TypeError(f"desc must be a Triton TensorDescriptor (it has no .{attr}), got {type(desc).__name__}")
    base = describe(desc.base, "desc.base")
    shape = _values.integers(list(desc.shape), "desc.shape")
    strides = _values.integers(list(desc.strides), "desc.strides", len(shape))
    block = _values.integers(list(desc.block_shape), "desc.block_shape", len(shape))
    f = TensorFacts(tuple(shape), tuple(s * base.element_bytes for s in strides), base.data_type, base.element_bytes,
                    base.address, base.device, "triton")
    padding = str(getattr(desc, "padding", "zero"))
    layout = getattr(desc, "layout", None)
    if swizzle is None:
        width = getattr(layout, "swizzle_byte_width", None)
        swizzle = int(width) if width is not None else triton_default_swizzle(block, base.element_bytes)
    swizzle = _values.choice(swizzle, "swizzle", _values.SWIZZLES)
    data_type = "tfloat32" if getattr(desc, "round_f32_to_tf32", False) else None
    return map_from_facts(f, triton_box(block, base.element_bytes, swizzle), "desc", unit_strides_free=False,
                          swizzle=swizzle,
                          l2_promotion=l2_promotion, oob_fill="nan_request_zero_fma" if padding == "nan" else "none",
                          data_type=data_type)


def _as_numpy(tensor: Any, where: str) -> np.ndarray:
    """The tensor's elements as a NumPy array of unsigned integers of the element's width (any dtype,
    bfloat16 included), on the host."""
    if isinstance(tensor, np.ndarray):
        a = tensor
    elif type(tensor).__module__.split(".")[0] == "torch":
        t = tensor.detach()
        if t.device.type != "cpu":
            raise InputError(f"the tensor is on {t.device}; the model reads host memory: pass tensor.cpu()",
                             "python.device", where)
        import torch  # noqa: PLC0415  (present: the tensor is one)
        ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
        a = t.view(ints).numpy()
    elif hasattr(tensor, "__array_interface__") or hasattr(tensor, "__array__"):
        a = np.asarray(tensor)
    elif hasattr(tensor, "__dlpack__"):
        a = np.from_dlpack(tensor)
    else:
        raise TypeError(f"{where} must be a tensor on the host (torch, NumPy, or an object with __dlpack__ or "
                        f"__array_interface__), got {type(tensor).__name__}")
    if a.dtype.itemsize not in (1, 2, 4, 8):
        raise InputError(f"elements of {a.dtype.itemsize} bytes are not a tensor-map type", "python.dtype", where)
    return a.view(f"u{a.dtype.itemsize}")


def host_bytes(tensor: Any, where: str = "tensor") -> bytes:
    """The memory the tensor's elements occupy, from its first byte to its last element's end,
    as the map addresses it (strides kept; gaps between rows are zero)."""
    f = describe(tensor, where)
    if f.device != "cpu":
        raise InputError(f"the tensor is on {f.device}; the model reads host memory: pass a copy on the host",
                         "python.device", where)
    a = _as_numpy(tensor, where)
    k = a.dtype.itemsize
    if any(n == 0 for n in a.shape):
        return b""
    if any(s < 0 for s in a.strides) or any(s % k for s in a.strides):
        raise InputError(f"strides {a.strides} bytes are not non-negative multiples of the element size {k}",
                         "python.strides", where)
    span = sum((n - 1) * s for n, s in zip(a.shape, a.strides)) + k
    memory = np.zeros(span // k, dtype=a.dtype)
    view = np.lib.stride_tricks.as_strided(memory, shape=a.shape, strides=a.strides, writeable=True)
    view[...] = a
    return memory.tobytes()
