"""Live on the H100 (scripts/python-device.sh runs it with pytest once the package is built
there; CI does not collect it): from_tensor on real CUDA tensors, from_triton on real Triton
TensorDescriptors, and simulate_load on the host copy of a CUDA tensor against the bytes a
TMA load put in shared memory through Triton (unswizzled: the tile desc.load returned)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tmakit

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.uint8]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_from_tensor_on_cuda_tensors(dtype):
    full = torch.zeros((40, 96), dtype=dtype, device="cuda")
    t = full[3:, 16:80]  # a view: its own address, the parent's row stride
    k = t.element_size()
    m = tmakit.from_tensor(t, box=[64 // k, 8], swizzle="64b")  # 64-byte rows
    assert (m.dims, m.strides, m.global_address) == ([64, 37], [96 * k], t.data_ptr())
    assert m.data_type == str(dtype).removeprefix("torch.")
    assert tmakit.describe(t).device == "cuda"
    with pytest.raises(tmakit.InputError, match="stride"):
        tmakit.from_tensor(full.t(), box=[8, 8])
    with pytest.raises(tmakit.InputError, match="host"):
        tmakit.simulate_load(m, t, [0, 0])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_from_triton_on_real_descriptors(dtype):
    from triton.tools.tensor_descriptor import TensorDescriptor
    t = torch.zeros((128, 256), dtype=dtype, device="cuda")
    k = t.element_size()
    block = [16, 128 // k]
    desc = TensorDescriptor.from_tensor(t, block)
    m = tmakit.from_triton(desc)
    assert (m.dims, m.strides, m.box, m.global_address) == ([256, 128], [256 * k], [128 // k, 16], t.data_ptr())
    assert m.swizzle == "128b" and m.l2_promotion == "128b"
    m.check()


def test_simulate_load_against_a_triton_load():
    import triton
    import triton.language as tl
    from triton.tools.tensor_descriptor import TensorDescriptor

    @triton.jit
    def load_tile(desc, out_ptr, y, x, BY: tl.constexpr, BX: tl.constexpr):
        tile = desc.load([y, x])
        tl.store(out_ptr + tl.arange(0, BY)[:, None] * BX + tl.arange(0, BX)[None, :], tile)

    g = torch.Generator(device="cuda").manual_seed(7)
    t = torch.randint(-2**15, 2**15, (100, 200), dtype=torch.int16, device="cuda", generator=g).view(torch.bfloat16)
    desc = TensorDescriptor.from_tensor(t, [32, 64])
    out = torch.empty((32, 64), dtype=torch.bfloat16, device="cuda")
    load_tile[(1,)](desc, out, 80, 160, BY=32, BX=64)  # partly past both edges
    m = tmakit.from_triton(desc)
    host = t.cpu()
    smem = tmakit.simulate_load(m, host, [160, 80]).view(np.uint16)
    # Unswizzle the model's 128B-swizzled box: chunk j of row r sits at chunk j ^ (r % 8).
    tile = np.stack([smem[r * 64:(r + 1) * 64].reshape(8, 8)[[j ^ (r % 8) for j in range(8)]].reshape(64)
                     for r in range(32)])
    assert np.array_equal(tile, out.view(torch.int16).cpu().numpy().view(np.uint16))


@pytest.mark.parametrize("dtype, block", [(torch.float16, [8, 64]), (torch.float16, [4, 64]), (torch.uint8, [8, 32]),
                                          (torch.uint8, [2, 256]), (torch.float32, [16, 16]),
                                          (torch.float16, [16, 128]), (torch.bfloat16, [1, 64])], ids=str)
def test_from_triton_swizzle_and_box_are_tritons(dtype, block):
    # What the compiled kernel chose (metadata.tensordesc_meta: the swizzle and box its launcher encodes).
    import triton
    import triton.language as tl
    from triton.tools.tensor_descriptor import TensorDescriptor

    @triton.jit
    def copy_tile(desc, out_ptr, BY: tl.constexpr, BX: tl.constexpr):
        tile = desc.load([0, 0])
        tl.store(out_ptr + tl.arange(0, BY)[:, None] * BX + tl.arange(0, BX)[None, :], tile)

    t = torch.zeros((64, 512), dtype=dtype, device="cuda")
    desc = TensorDescriptor.from_tensor(t, block)
    compiled = copy_tile[(1,)](desc, torch.empty(block, dtype=dtype, device="cuda"), BY=block[0], BX=block[1])
    meta = compiled.metadata.tensordesc_meta[0]
    m = tmakit.from_triton(desc)
    assert m.swizzle == {0: "none", 1: "32b", 2: "64b", 3: "128b"}[meta["swizzle"]]
    assert m.box == list(reversed(meta["block_size"]))
