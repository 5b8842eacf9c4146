"""Triton programs for `tmakit watch` on a GPU machine (scripts/watch-device.sh).

  python3 triton_watch.py good          copy a 1024x1024 fp16 tensor through two host-side
                                        TensorDescriptors; checks the bytes
  python3 triton_watch.py case NAME     one descriptor that gets past Triton's own checks (or not):
                                        prints what Triton said, or that the kernel ran
  python3 triton_watch.py cases         the case names
  python3 triton_watch.py bench N       N launches of the copy kernel (each encodes two maps on
                                        the host): microseconds per launch, median of 5 rounds
"""
import statistics
import sys
import time

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def copy_kernel(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    dst.store([m, n], src.load([m, n]))


def copy(src_desc, dst_desc, grid):
    bm, bn = src_desc.block_shape
    copy_kernel[grid](src_desc, dst_desc, BM=bm, BN=bn)


def good():
    x = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    copy(TensorDescriptor.from_tensor(x, [64, 64]), TensorDescriptor.from_tensor(y, [64, 64]), (16, 16))
    torch.cuda.synchronize()
    assert torch.equal(x, y), "copy mismatch"
    print("good: 1024x1024 fp16 copied through two host descriptors, bytes equal")


def _desc(base, shape, strides, block):
    return TensorDescriptor(base, shape, strides, block)


def _case(name):
    """Returns (source descriptor, destination descriptor, grid) for a case."""
    dev = "cuda"
    f16 = torch.float16
    if name == "empty-tensor":  # a batch of zero rows: dims[1] = 0
        x = torch.empty(0, 64, device=dev, dtype=f16)
        return TensorDescriptor.from_tensor(x, [16, 64]), TensorDescriptor.from_tensor(x, [16, 64]), (1, 1)
    if name == "dim-above-2^32":
        x = torch.zeros(64, 64, device=dev, dtype=f16)
        d = _desc(x, [1 << 33, 64], [64, 1], [64, 64])
        return d, d, (1, 1)
    if name == "stride-above-2^40":
        x = torch.zeros(64, 64, device=dev, dtype=f16)
        d = _desc(x, [64, 64], [1 << 40, 1], [64, 64])
        return d, d, (1, 1)
    if name == "box-512":
        x = torch.zeros(1024, 1024, device=dev, dtype=f16)
        return TensorDescriptor.from_tensor(x, [512, 64]), TensorDescriptor.from_tensor(x, [512, 64]), (2, 16)
    if name == "inner-box-8-bytes":
        x = torch.zeros(1024, 1024, device=dev, dtype=torch.int8)
        return TensorDescriptor.from_tensor(x, [64, 8]), TensorDescriptor.from_tensor(x, [64, 8]), (16, 128)
    if name == "rows-overlap":  # a 128-element row with a 64-element stride: rows overlap
        x = torch.zeros(64 * 128, device=dev, dtype=f16)
        d = _desc(x, [64, 128], [64, 1], [64, 64])
        y = torch.zeros(64, 128, device=dev, dtype=f16)
        return d, TensorDescriptor.from_tensor(y, [64, 64]), (1, 2)
    if name == "box-exceeds-tensor":
        x = torch.zeros(8, 8, device=dev, dtype=f16)
        return TensorDescriptor.from_tensor(x, [64, 64]), TensorDescriptor.from_tensor(x, [64, 64]), (1, 1)
    if name == "base-off-16-bytes":  # Triton's own check
        x = torch.zeros(1024 * 1024 + 1, device=dev, dtype=f16)[1:].view(1024, 1024)
        return TensorDescriptor.from_tensor(x, [64, 64]), TensorDescriptor.from_tensor(x, [64, 64]), (16, 16)
    if name == "store-row-of-126-bytes":  # a 63-wide view of 72-wide rows: the store's last chunk
        base = torch.full((64, 72), 7.0, device=dev, dtype=f16)  # column 63 holds 7 and is not in the view
        src = torch.zeros(64, 64, device=dev, dtype=f16)
        dst = _desc(base, [64, 63], [72, 1], [64, 64])
        _case.check = lambda: f"column 63 (outside the view) after the store: {'UNCHANGED' if bool((base[:, 63] == 7).all()) else 'OVERWRITTEN'}"
        return _desc(src, [64, 63], [64, 1], [64, 64]), dst, (1, 1)
    raise SystemExit(f"unknown case {name}")


CASES = ["empty-tensor", "dim-above-2^32", "stride-above-2^40", "box-512", "inner-box-8-bytes", "rows-overlap",
         "box-exceeds-tensor", "base-off-16-bytes", "store-row-of-126-bytes"]


def case(name):
    try:
        src, dst, grid = _case(name)
        copy(src, dst, grid)
        torch.cuda.synchronize()
        check = getattr(_case, "check", None)
        print(f"case {name}: the kernel ran" + (f"; {check()}" if check else ""))
    except BaseException as e:  # what Triton (or the driver through it) said
        text = " ".join(str(e).split())[:300]
        print(f"case {name}: {type(e).__name__}: {text}")


def bench(n):
    x = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    rounds = []
    for r in range(6):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            copy(TensorDescriptor.from_tensor(x, [64, 64]), TensorDescriptor.from_tensor(y, [64, 64]), (4, 4))
        torch.cuda.synchronize()
        if r:  # the first round compiles and warms up
            rounds.append((time.perf_counter() - t0) / n * 1e6)
    print(f"bench: {statistics.median(rounds):.2f} us per launch (median of {len(rounds)} rounds of {n}; "
          f"rounds {' '.join(f'{v:.2f}' for v in rounds)})")


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "good":
        good()
    elif what == "case":
        case(sys.argv[2])
    elif what == "cases":
        print("\n".join(CASES))
    elif what == "bench":
        bench(int(sys.argv[2]))
