"""Triton kernels for the PTX corpus (tests/corpus/triton/), compiled without a GPU.

Run by scripts/corpus.sh with Triton 3.6: `python3 triton_kernels.py OUTDIR`. Each kernel is
compiled for the targets listed beside it with Triton's default options (line info on, so the
PTX carries .file/.loc and DWARF .section blocks, as issue 14 reported) and its PTX written as
OUTDIR/<kernel>.<sm>.ptx.
"""
import os
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # An ordinary kernel: no bulk copies.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def softmax(x_ptr, out_ptr, stride, n, BLOCK: tl.constexpr):
    # Another ordinary one, with reductions across the block (shuffles, shared memory).
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(out_ptr + row * stride + offs, e / tl.sum(e, 0), mask=offs < n)


@triton.jit
def tma_copy_host_desc(src, dst, BM: tl.constexpr, BN: tl.constexpr, REDUCE: tl.constexpr):
    # The plain TMA copy of issue 14: host-side descriptors, a tile load and a tile store
    # (or, with REDUCE, a TMA reduction: cp.reduce.async.bulk.tensor .add).
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    if REDUCE:
        dst.atomic_add([m, n], src.load([m, n]))
    else:
        dst.store([m, n], src.load([m, n]))


@triton.jit
def tma_copy_device_desc(src_ptr, dst_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # Device-side descriptors (tensormap.replace, fence.proxy.tensormap) and TMA copies.
    src = tl.make_tensor_descriptor(src_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(dst_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    dst.store([m, n], src.load([m, n]) * 2)


@triton.jit
def tma_gather(src, idx_ptr, out_ptr, BN: tl.constexpr):
    # Row gather through a descriptor (.tile::gather4 on sm_100).
    rows = tl.load(idx_ptr + tl.arange(0, 8))
    x = src.gather(rows, 0)
    tl.store(out_ptr + tl.arange(0, 8)[:, None] * BN + tl.arange(0, BN)[None, :], x)


@triton.jit
def matmul_tma(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A pipelined matmul fed by TMA (wgmma on sm_90, tcgen05 on sm_100).
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=3):
        acc = tl.dot(a.load([m, k]), b.load([k, n]), acc)
    c.store([m, n], acc.to(tl.float16))


def desc(ty, block):
    return f"tensordesc<{ty}[{', '.join(str(b) for b in block)}]>"


KERNELS = [
    # (kernel, signature, constexprs, options, targets); the file is <kernel>[_reduce].<sm>.ptx
    (add, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 1024}, {}, [90]),
    (softmax, {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride": "i32", "n": "i32", "BLOCK": "constexpr"},
     {"BLOCK": 1024}, {}, [90]),
    (tma_copy_host_desc, {"src": desc("fp16", [64, 64]), "dst": desc("fp16", [64, 64]), "BM": "constexpr",
                          "BN": "constexpr", "REDUCE": "constexpr"}, {"BM": 64, "BN": 64, "REDUCE": False}, {},
     [90, 100]),
    (tma_copy_device_desc, {"src_ptr": "*fp16", "dst_ptr": "*fp16", "M": "i32", "N": "i32", "BM": "constexpr",
                            "BN": "constexpr"}, {"BM": 64, "BN": 64}, {}, [90, 100]),
    (tma_copy_host_desc, {"src": desc("fp32", [32, 64]), "dst": desc("fp32", [32, 64]), "BM": "constexpr",
                          "BN": "constexpr", "REDUCE": "constexpr"}, {"BM": 32, "BN": 64, "REDUCE": True}, {}, [90]),
    (tma_gather, {"src": desc("fp16", [1, 64]), "idx_ptr": "*i32", "out_ptr": "*fp16", "BN": "constexpr"},
     {"BN": 64}, {}, [100]),
    (matmul_tma, {"a": desc("fp16", [128, 64]), "b": desc("fp16", [64, 128]), "c": desc("fp16", [128, 128]),
                  "K": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
     {"BM": 128, "BN": 128, "BK": 64}, {"num_warps": 4}, [90, 100]),
]


def main(out):
    os.makedirs(out, exist_ok=True)
    failed = 0
    for fn, sig, consts, opts, targets in KERNELS:
        for sm in targets:
            name = f"{fn.__name__}{'_reduce' if consts.get('REDUCE') else ''}.sm_{sm}a.ptx"
            try:
                k = triton.compile(ASTSource(fn, sig, constexprs=consts), target=GPUTarget("cuda", sm, 32),
                                   options=opts)
            except Exception as e:  # report and go on: one kernel must not lose the others
                print(f"triton: {name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                      file=sys.stderr)
                failed += 1
                continue
            with open(os.path.join(out, name), "w") as f:
                f.write(k.asm["ptx"])
            print(f"triton: {name}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv[1])
