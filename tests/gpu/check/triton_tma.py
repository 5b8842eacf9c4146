"""A clean Triton TMA kernel for `tmakit check` on the H100 (scripts/check-device.sh): the PTX
goes through Triton's ptxas, which `tmakit check` replaces with its wrapper (the ptxas route).

  python3 triton_tma.py host     copy a 512x512 fp16 tensor through two host TensorDescriptors
  python3 triton_tma.py device   the same with device-side tl.make_tensor_descriptor (tensormap.replace
                                 and fence.proxy.tensormap in the kernel), doubling each value
Prints one line "<mode>: bytes equal" or "<mode>: MISMATCH ..." and exits 1 on a mismatch.
"""
import sys

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def copy_host_desc(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    dst.store([m, n], src.load([m, n]))


@triton.jit
def copy_device_desc(src_ptr, dst_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(src_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(dst_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    dst.store([m, n], src.load([m, n]) * 2)


def main(mode):
    side, block = 512, 64
    x = torch.randn(side, side, device="cuda", dtype=torch.float16)
    y = torch.zeros_like(x)
    grid = (side // block, side // block)
    if mode == "host":
        copy_host_desc[grid](TensorDescriptor.from_tensor(x, [block, block]),
                             TensorDescriptor.from_tensor(y, [block, block]), BM=block, BN=block)
        want = x
    elif mode == "device":
        # Device-side descriptors live in a scratch buffer Triton asks the allocator for.
        triton.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
        copy_device_desc[grid](x, y, side, side, BM=block, BN=block)
        want = x * 2
    else:
        print(__doc__)
        return 2
    torch.cuda.synchronize()
    if torch.equal(y, want):
        print(f"{mode}: bytes equal ({side}x{side} fp16, {grid[0] * grid[1]} tiles of {block}x{block})")
        return 0
    print(f"{mode}: MISMATCH ({int((y != want).sum())} of {y.numel()} values differ)")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ""))
