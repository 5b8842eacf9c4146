"""from_tensor and from_triton: dims, byte strides, dtype and address read from the
object (NumPy, DLPack, the array interfaces, torch when installed), refusals by name."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional

import numpy as np
import pytest

import tmakit


class DLPackOnly:
    """An object that offers nothing but DLPack (as JAX, CuPy or a framework of one's own)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class ArrayInterfaceOnly:
    def __init__(self, a):
        self.__array_interface__ = a.__array_interface__
        self._keep = a


class CudaArrayStub:
    """What a CUDA tensor's __cuda_array_interface__ says (version 3; strides None = C order)."""

    def __init__(self, shape, typestr, address, strides=None):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (address, False),
                                         "strides": strides, "version": 3}


def test_numpy_array(tmp_path):
    a = np.zeros((32, 48), dtype=np.float32)
    m = tmakit.from_tensor(a, box=[16, 8], swizzle="64b")
    assert (m.dims, m.strides, m.box, m.data_type) == ([48, 32], [192], [16, 8], "float32")
    assert m.global_address == a.ctypes.data and m.swizzle == "64b"
    assert tmakit.TensorMap.from_tensor(a, box=[16, 8], swizzle="64b") == m


def test_views_keep_their_strides_and_address():
    big = np.zeros((4, 32, 64), dtype=np.uint16)
    v = big[1:, :, 8:40]
    m = tmakit.from_tensor(v, box=[32, 4, 2])
    assert m.dims == [32, 32, 3] and m.strides == [128, 32 * 128]  # bytes: 64 × 2, 32 × 64 × 2
    assert m.global_address == big.ctypes.data + 1 * 32 * 128 + 8 * 2
    assert m.data_type == "uint16"


@pytest.mark.parametrize("dtype, name", [(np.uint8, "uint8"), (np.uint16, "uint16"), (np.uint32, "uint32"),
                                         (np.int32, "int32"), (np.uint64, "uint64"), (np.int64, "int64"),
                                         (np.float16, "float16"), (np.float32, "float32"), (np.float64, "float64")])
def test_dtypes(dtype, name):
    assert tmakit.from_tensor(np.zeros((2, 64), dtype=dtype), box=[16, 1]).data_type == name


def test_dlpack_and_interfaces_agree_with_numpy():
    a = np.arange(64 * 16, dtype=np.float16).reshape(16, 64)[:, :32]
    want = tmakit.from_tensor(a, box=[32, 8])
    for obj in (DLPackOnly(a), ArrayInterfaceOnly(a)):
        assert tmakit.from_tensor(obj, box=[32, 8]) == want
    assert tmakit.describe(DLPackOnly(a)).source == "dlpack"
    assert tmakit.describe(ArrayInterfaceOnly(a)).source == "array_interface"


def test_cuda_array_interface():
    t = CudaArrayStub((128, 64), "<f4", 0x7F0000000000)
    m = tmakit.from_tensor(t, box=[32, 16], swizzle="128b")
    assert (m.dims, m.strides, m.global_address) == ([64, 128], [256], 0x7F0000000000)
    assert tmakit.describe(t).device == "cuda"
    with pytest.raises(tmakit.InputError, match="cuda.*host"):
        tmakit.simulate_load(m, t, [0, 0])


def test_bfloat16_through_the_array_interfaces():
    # torch 2.11's __cuda_array_interface__ of a bfloat16 tensor says "<V2" (recorded on the H100:
    # tests/vectors/python, the bfloat16 cases), as ml_dtypes' bfloat16 does in __array_interface__.
    t = CudaArrayStub((16, 72), "<V2", 0x7F0000002000, strides=(160, 2))
    m = tmakit.from_tensor(t, box=[64, 8], swizzle="128b")
    assert (m.data_type, m.dims, m.strides, m.global_address) == ("bfloat16", [72, 16], [160], 0x7F0000002000)
    # "|V2" is NumPy's raw (or structured) two bytes: nothing says bfloat16, so it is refused by name.
    raw = np.zeros((4, 64), dtype="V2")
    with pytest.raises(tmakit.InputError, match=r'"\|V2" is raw bytes') as e:
        tmakit.from_tensor(raw, box=[16, 1])
    assert e.value.rule == "python.dtype"
    pairs = np.zeros((4, 64), dtype=[("lo", "u1"), ("hi", "u1")])
    with pytest.raises(tmakit.InputError, match="fields"):
        tmakit.from_tensor(pairs, box=[16, 1])
    named = CudaArrayStub((4, 64), "<V2", 0x7F0000002000)
    named.__cuda_array_interface__["descr"] = [("lo", "|u1"), ("hi", "|u1")]
    with pytest.raises(tmakit.InputError, match="fields"):
        tmakit.from_tensor(named, box=[16, 1])


def test_a_dimension_of_size_1_takes_any_stride():
    # Its only in-bounds coordinate is 0, so its stride addresses nothing; a one-row tensor whose
    # row is not a multiple of 16 bytes still gets a map the driver takes (stride rounded up to 16).
    a = np.zeros((1, 45), dtype=np.uint8)
    m = tmakit.from_tensor(a, box=[16, 2])
    assert (m.dims, m.strides) == ([45, 1], [48])
    m.check()
    assert tmakit.from_tensor(np.zeros((1, 3, 40), dtype=np.uint8), box=[16, 1, 1]).strides == [40, 128]
    assert tmakit.from_tensor(np.zeros((2, 45), dtype=np.uint8), box=[16, 2]).strides == [45]  # size 2: kept
    # A padded row in memory: a stride that is a multiple of 16 already stays.
    assert tmakit.from_tensor(np.zeros((1, 96), dtype=np.uint8)[:, :71], box=[16, 1]).strides == [96]


def test_inner_stride_refused_by_name():
    a = np.zeros((64, 32), dtype=np.float32).T  # innermost stride 32 elements
    with pytest.raises(tmakit.InputError) as e:
        tmakit.from_tensor(a, box=[8, 8])
    assert e.value.where == "tensor.stride[1]" and e.value.rule == "python.inner-stride"
    assert "32 elements" in str(e.value)
    with pytest.raises(tmakit.InputError, match="stride"):
        tmakit.from_tensor(CudaArrayStub((8, 8), "<f2", 0, strides=(16, 4)), box=[4, 4])


def test_refusals():
    with pytest.raises(tmakit.InputError, match="complex") as e:
        tmakit.from_tensor(np.zeros((4, 64), dtype=np.complex64), box=[16, 1])
    assert e.value.rule == "python.dtype"
    with pytest.raises(tmakit.InputError, match="dimensions"):
        tmakit.from_tensor(np.zeros((1,) * 6, dtype=np.uint8), box=[1] * 6)
    with pytest.raises(tmakit.InputError, match="box"):
        tmakit.from_tensor(np.zeros((4, 64), dtype=np.uint8), box=[16])
    with pytest.raises(TypeError, match="tensor must be a tensor"):
        tmakit.from_tensor([[1, 2]], box=[2, 1])
    with pytest.raises(tmakit.InputError, match="negative"):
        tmakit.from_tensor(np.zeros((8, 16), dtype=np.float32)[::-1], box=[16, 1])


@dataclass
class FakeDescriptor:
    """triton.tools.tensor_descriptor.TensorDescriptor's fields (Triton 3.6)."""

    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    padding: str = "zero"


@dataclass
class FakeLayout:
    swizzle_byte_width: int


@dataclass
class FakeGluonDescriptor(FakeDescriptor):
    layout: Optional[FakeLayout] = None


def test_from_triton():
    a = np.zeros((256, 96), dtype=np.float16)
    m = tmakit.from_triton(FakeDescriptor(a, [256, 96], [96, 1], [32, 64]))
    assert (m.dims, m.strides, m.box, m.swizzle, m.oob_fill) == ([96, 256], [192], [64, 32], "128b", "none")
    assert m.global_address == a.ctypes.data
    # Triton's default swizzle follows the block's inner row bytes; padding="nan" is the OOB-NaN fill.
    assert tmakit.from_triton(FakeDescriptor(a, [256, 96], [96, 1], [8, 32])).swizzle == "64b"
    assert tmakit.from_triton(FakeDescriptor(a, [256, 96], [96, 1], [8, 16])).swizzle == "32b"
    assert tmakit.from_triton(FakeDescriptor(a, [256, 96], [96, 1], [8, 8])).swizzle == "none"
    assert tmakit.from_triton(FakeDescriptor(a, [256, 96], [96, 1], [8, 64], "nan")).oob_fill == "nan_request_zero_fma"
    g = FakeGluonDescriptor(a, [256, 96], [96, 1], [8, 64], "zero", FakeLayout(32))
    assert tmakit.from_triton(g).swizzle == "32b"
    assert tmakit.from_triton(FakeDescriptor(a, [256, 96], [96, 1], [8, 64]), swizzle="none").swizzle == "none"
    # Fewer than 8 rows in the block (outer dimensions flattened), or a 1-D block: no swizzle (Triton's
    # recorded choice on the H100, tests/vectors/python cases 03, 16, 17, 19, 27).
    assert tmakit.from_triton(FakeDescriptor(a, [256, 96], [96, 1], [4, 64])).swizzle == "none"
    assert tmakit.from_triton(FakeDescriptor(a, [256, 96], [96, 1], [7, 64])).swizzle == "none"
    b = np.zeros((4, 16, 96), dtype=np.float16)
    assert tmakit.from_triton(FakeDescriptor(b, [4, 16, 96], [16 * 96, 96, 1], [2, 4, 32])).swizzle == "64b"
    assert tmakit.from_triton(FakeDescriptor(b, [4, 16, 96], [16 * 96, 96, 1], [1, 4, 32])).swizzle == "none"
    assert tmakit.from_triton(FakeDescriptor(a.reshape(-1), [256 * 96], [1], [64])).swizzle == "none"
    # 96-byte rows: 32 divides them, 64 does not.
    assert tmakit.from_triton(FakeDescriptor(a, [256, 96], [96, 1], [8, 48])).swizzle == "32b"
    # A row wider than the swizzle span: the box's inner dimension is the span (Triton loads the block
    # in several boxes); every dimension at most 256.
    m = tmakit.from_triton(FakeDescriptor(a, [256, 96], [96, 1], [16, 96]))
    assert (m.swizzle, m.box) == ("64b", [32, 16])
    c = np.zeros((512, 512), dtype=np.uint8)
    m = tmakit.from_triton(FakeDescriptor(c, [512, 512], [512, 1], [512, 256]))
    assert (m.swizzle, m.box) == ("128b", [128, 256])
    m = tmakit.from_triton(FakeDescriptor(c, [512, 512], [512, 1], [4, 512]))
    assert (m.swizzle, m.box) == ("none", [256, 4])
    # A descriptor narrower than its base: its own shape and strides, the base's address and type.
    m = tmakit.from_triton(FakeDescriptor(a, [100, 40], [96, 1], [16, 32]))
    assert (m.dims, m.strides) == ([40, 100], [192])
    with pytest.raises(tmakit.InputError, match="stride"):
        tmakit.from_triton(FakeDescriptor(a, [96, 256], [1, 96], [32, 32]))
    with pytest.raises(TypeError, match="TensorDescriptor"):
        tmakit.from_triton(object())


def test_torch_tensors():
    torch = pytest.importorskip("torch")  # not installable here without a network index of CPU wheels
    t = torch.zeros((32, 64), dtype=torch.bfloat16)
    m = tmakit.from_tensor(t, box=[64, 8], swizzle="128b")
    assert (m.dims, m.strides, m.data_type, m.global_address) == ([64, 32], [128], "bfloat16", t.data_ptr())
    with pytest.raises(tmakit.InputError, match="stride"):
        tmakit.from_tensor(t.t(), box=[8, 8])
    box = tmakit.simulate_load(m, t, [0, 0])
    assert box.size == m.smem_footprint


def triton_logged_maps():
    """The maps Triton 3.6 itself encoded on the H100, as `tmakit watch` logged them (docs/watch.md)."""
    import json
    from conftest import ROOT
    out = []
    for f in sorted((ROOT / "tests/vectors/watch/h100").glob("triton-*.jsonl")):
        for line in f.read_text().splitlines():
            j = json.loads(line)
            if j.get("call") == "cuTensorMapEncodeTiled" and "map" in j:
                out.append(pytest.param(j["map"], id=f"{f.stem}-{j['index']}"))
    return out


@pytest.mark.parametrize("logged", triton_logged_maps())
def test_from_triton_gives_the_map_triton_encoded(logged):
    # The descriptor Triton was given, rebuilt from the map it encoded: from_triton must give that map back.
    k = {"float16": 2, "uint8": 1, "float32": 4, "bfloat16": 2}[logged["data_type"]]
    typestr = {"float16": "<f2", "uint8": "|u1", "float32": "<f4"}[logged["data_type"]]
    shape = list(reversed(logged["dims"]))
    strides = [s // k for s in reversed(logged["strides"])] + [1]
    base = CudaArrayStub(shape, typestr, logged["global_address"])
    m = tmakit.from_triton(FakeDescriptor(base, shape, strides, list(reversed(logged["box"]))))
    assert m.to_json() == logged


class ForeignDLPack:
    """A DLPack producer written with ctypes: any dtype code (bfloat16 included) and device,
    as a framework with types NumPy lacks hands them out (torch.bfloat16, a CUDA tensor)."""

    def __init__(self, shape, strides, code, bits, device_type, address):
        import ctypes

        class DLTensor(ctypes.Structure):
            _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                        ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                        ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                        ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]

        class Managed(ctypes.Structure):
            _fields_ = [("t", DLTensor), ("ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]

        n = len(shape)
        self._shape = (ctypes.c_int64 * n)(*shape)
        self._strides = (ctypes.c_int64 * n)(*strides)
        self._managed = Managed(DLTensor(address, device_type, 0, n, code, bits, 1, self._shape, self._strides, 0),
                                None, None)
        self._ctypes, self.device_type = ctypes, device_type

    def __dlpack__(self, **kw):
        new = self._ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = self._ctypes.py_object, [self._ctypes.c_void_p, self._ctypes.c_char_p,
                                                              self._ctypes.c_void_p]
        return new(self._ctypes.addressof(self._managed), b"dltensor", None)

    def __dlpack_device__(self):
        return (self.device_type, 0)


def test_dlpack_bfloat16_and_cuda_devices():
    buffer = np.zeros((16, 80), np.uint16)
    t = ForeignDLPack([16, 72], [80, 1], 4, 16, 1, buffer.ctypes.data)  # bfloat16 on the host
    f = tmakit.describe(t)
    assert (f.data_type, f.shape, f.byte_strides, f.device, f.address) == ("bfloat16", (16, 72), (160, 2), "cpu",
                                                                           buffer.ctypes.data)
    m = tmakit.from_tensor(t, box=[64, 8], swizzle="128b")
    assert (m.dims, m.strides, m.data_type) == ([72, 16], [160], "bfloat16")
    gpu = ForeignDLPack([64, 128], [128, 1], 2, 32, 2, 0x7F0000001000)  # float32 on a CUDA device
    f = tmakit.describe(gpu)
    assert (f.device, f.data_type, f.address) == ("cuda", "float32", 0x7F0000001000)
    with pytest.raises(tmakit.InputError, match="complex"):
        tmakit.describe(ForeignDLPack([4], [1], 5, 64, 1, buffer.ctypes.data))
