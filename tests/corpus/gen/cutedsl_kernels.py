"""CuTe DSL kernels for the PTX corpus (tests/corpus/cutedsl/), compiled without a GPU.

Run by scripts/corpus.sh with nvidia-cutlass-dsl: `python3 cutedsl_kernels.py OUTDIR`. Fake
tensors stand in for device memory, CUTE_DSL_ARCH names the target, and the PTX CuTe DSL keeps
(CUTE_DSL_KEEP=ptx) is copied to OUTDIR/<kernel>.<sm>.ptx. Each target runs in its own process
because the DSL reads its environment once.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

TILE = (64, 64)


def build(kernel):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import cpasync
    from cutlass.cute.runtime import make_fake_compact_tensor

    @cute.kernel
    def add_kernel(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
        # An ordinary kernel: no bulk copies.
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        i = bidx * 128 + tidx
        c[i] = a[i] + b[i]

    @cute.jit
    def add(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
        add_kernel(a, b, c).launch(grid=(8, 1, 1), block=(128, 1, 1))

    @cute.kernel
    def tma_copy_kernel(atom_l: cute.CopyAtom, tma_src: cute.Tensor, atom_s: cute.CopyAtom, tma_dst: cute.Tensor,
                        smem_layout: cute.Layout):
        # A TMA tile load completing on an mbarrier, then a TMA tile store with a bulk group.
        bidx, bidy, _ = cute.arch.block_idx()
        tidx = cute.arch.thread_idx()[0]
        smem = cutlass.memory.SmemAllocator()
        buf = smem.allocate_tensor(cutlass.Float16, smem_layout, byte_alignment=128)
        mbar = smem.allocate_array(cutlass.Int64, 1)
        if tidx == 0:
            cute.arch.mbarrier_init(mbar, 1)
        cute.arch.mbarrier_init_fence()
        cute.arch.sync_threads()
        g_src = cute.local_tile(tma_src, TILE, (bidx, bidy))
        s_a, g_a = cpasync.tma_partition(atom_l, 0, cute.make_layout(1), cute.group_modes(buf, 0, 2),
                                         cute.group_modes(g_src, 0, 2))
        if tidx == 0:
            cute.arch.mbarrier_arrive_and_expect_tx(mbar, TILE[0] * TILE[1] * 2)
        # The copy elects its issuing lane itself (elect.sync over the whole warp): a whole warp
        # calls it. Called by thread 0 alone, the elect waited for 31 lanes that never came, and
        # the kernel hung (tmakit check on the H200: the armed bytes never delivered, thread 0's
        # last record its arrive).
        if cute.arch.make_warp_uniform(cute.arch.warp_idx()) == 0:
            cute.copy(atom_l, g_a, s_a, tma_bar_ptr=mbar)
        cute.arch.mbarrier_wait(mbar, 0)
        g_dst = cute.local_tile(tma_dst, TILE, (bidx, bidy))
        s_b, g_b = cpasync.tma_partition(atom_s, 0, cute.make_layout(1), cute.group_modes(buf, 0, 2),
                                         cute.group_modes(g_dst, 0, 2))
        cute.arch.fence_proxy("async.shared", space="cta")
        cute.arch.sync_threads()
        if tidx == 0:
            cute.copy(atom_s, s_b, g_b)
            cute.arch.cp_async_bulk_commit_group()
            cute.arch.cp_async_bulk_wait_group(0, read=True)

    @cute.jit
    def tma_copy(src: cute.Tensor, dst: cute.Tensor):
        smem_layout = cute.make_layout(TILE, stride=(TILE[1], 1))
        atom_l, tma_src = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), src, smem_layout, TILE)
        atom_s, tma_dst = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), dst, smem_layout, TILE)
        tma_copy_kernel(atom_l, tma_src, atom_s, tma_dst, smem_layout).launch(grid=(4, 4, 1), block=(128, 1, 1))

    if kernel == "add":
        vec = lambda: make_fake_compact_tensor(cutlass.Float32, (1024,))
        cute.compile(add, vec(), vec(), vec())
    else:
        mat = lambda: make_fake_compact_tensor(cutlass.Float16, (256, 256), stride_order=(1, 0))
        cute.compile(tma_copy, mat(), mat())


KERNELS = [("add", ["sm_90a"]), ("tma_copy", ["sm_90a", "sm_100a"])]


def main(out):
    os.makedirs(out, exist_ok=True)
    failed = 0
    for kernel, archs in KERNELS:
        for arch in archs:
            with tempfile.TemporaryDirectory() as dump:
                env = dict(os.environ, CUTE_DSL_ARCH=arch, CUTE_DSL_KEEP="ptx", CUTE_DSL_DUMP_DIR=dump,
                           CUTE_DSL_DISABLE_FILE_CACHING="1")
                r = subprocess.run([sys.executable, __file__, "--one", kernel], env=env)
                found = glob.glob(os.path.join(dump, "**", "*.ptx"), recursive=True)
                if r.returncode != 0 or len(found) != 1:
                    print(f"cutedsl: {kernel} for {arch} failed ({len(found)} PTX files)", file=sys.stderr)
                    failed += 1
                    continue
                shutil.copy(found[0], os.path.join(out, f"{kernel}.{arch}.ptx"))
                print(f"cutedsl: {kernel}.{arch}.ptx")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        build(sys.argv[2])
    else:
        main(sys.argv[1])
