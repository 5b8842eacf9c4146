"""Triton's own TMA tutorials, unmodified, under `tmakit check`: one fixed config each, checked
against PyTorch (on the CPU) and timed.

The tutorials are not ours and are not in this repository. Put python/tutorials/
09-persistent-matmul.py and 06-fused-attention.py of triton-lang/triton release/3.6.x (commit
7c56a5e40f7fd928dfd5c72902d5def0097db73a, "[release 3.6] Release Triton to pypi") in a folder
and name it as the first argument or in TMAKIT_TRITON_TUTORIALS. Needs Triton 3.6 and PyTorch.

  python3 triton_tutorials.py DIR [--only matmul|attention|RUN,...] [--size N] [--warmup W] [--iters I]
  tmakit check --launches 1 -- python3 triton_tutorials.py DIR --warmup 0 --iters 1

Runs (each launches its kernel W + I times; the last launch's result is checked), with the names
--only takes (besides matmul and attention, each tutorial's runs; RUNS below):
  09 matmul_tma_persistent         host TensorDescriptors, fp16 M=N=K=--size (2048),
                                   warp_specialize False, and True where the tutorial's own
                                   validate() runs it (not on Hopper: it skips host-descriptor
                                   kernels with warp specialization there)
  09 matmul_descriptor_persistent  device tl.make_tensor_descriptor + triton.set_allocator,
                                   warp_specialize False and True (on Hopper with FLATTEN=False,
                                   as the tutorial does)
  06 attention forward             fp16 Z=2 H=4 N_CTX=1024 HEAD_DIM=64, causal True and False with
                                   warp_specialize=False (host TensorDescriptors); non-causal with
                                   warp_specialize=True where the tutorial's benchmark enables it
                                   (Hopper, Blackwell); on Hopper that path uses device descriptors
  (tma, tma-ws; descriptor, descriptor-ws; attention-causal, attention, attention-ws: one kernel each,
  for tests/gpu/check/triton_tutorial_mutants.py, which puts bugs into one kernel at a time.)
No autotuning: each tutorial Autotuner's .configs is cut to the ONE tutorial config named in
MATMUL/ATTENTION below (keeping its pre_hook, which sets the host descriptors' block_shape), and a
single-config Autotuner neither benchmarks nor prunes. Inputs are made and checked on the CPU, so
the only GPU kernels are the tutorials'. One line per run; exit 1 if any result is wrong or a run
fails, 2 on a usage error. With --warmup 0 the time includes compiling.
"""
import argparse
import importlib.util
import os
import sys
import types

import torch

# (kwargs, num_stages, num_warps): must be one of the tutorial's own configs (an H100 fits both).
# num_warps 4: with 8, Triton 3.6 on sm_90 leaves the descriptor kernel silently unspecialized
# (8 warps, no setmaxnreg); with 4 it warp-specializes it (12 warps: a producer and 2 consumers).
MATMUL = (dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, EPILOGUE_SUBTILE=False), 3, 4)
ATTENTION = (dict(BLOCK_M=128, BLOCK_N=64), 2, 4)  # the tutorial's own single config under pytest
Z, H, N_CTX, HEAD_DIM, SM_SCALE = 2, 4, 1024, 64, 0.5
# Each tutorial's runs, in the order they run; --only names a tutorial or runs.
RUNS = {"matmul": ["tma", "tma-ws", "descriptor", "descriptor-ws"],
        "attention": ["attention-causal", "attention", "attention-ws"]}


def load(folder, filename, name):
    """Import a tutorial as a module; its benchmarks stay behind `if __name__ == "__main__"`."""
    if name == "tut06_fused_attention" and importlib.util.find_spec("pytest") is None:
        # 06 imports pytest only to decorate its test_op; plain Triton + PyTorch lack it, so hand
        # it a stand-in whose pytest.mark.* decorators do nothing. (09's triton.profiler import
        # needs nothing beyond the Triton wheel, which ships libproton.)
        stub = types.ModuleType("pytest")
        stub.mark = types.SimpleNamespace(parametrize=lambda *a, **k: (lambda f: f))
        sys.modules["pytest"] = stub
    spec = importlib.util.spec_from_file_location(name, os.path.join(folder, filename))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def pin(autotuner, chosen):
    """Cut an Autotuner to the one tutorial config equal to `chosen`."""
    kwargs, stages, warps = chosen
    same = [c for c in autotuner.configs if c.kwargs == kwargs and (c.num_stages, c.num_warps) == (stages, warps)]
    if not same:
        sys.exit(f"{autotuner.base_fn.__name__}: no tutorial config {kwargs} stages={stages} warps={warps}")
    autotuner.configs = same[:1]
    autotuner.cache.clear()


def timed(fn, warmup, iters):
    for _ in range(warmup):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        out = fn()
    end.record()
    torch.cuda.synchronize()
    return out, start.elapsed_time(end) / iters


def report(name, size, fn, ref, atol, rtol, args):
    try:
        out, ms = timed(fn, args.warmup, args.iters)
        got = out.cpu().float()  # copy first: a .float() on the GPU would launch a kernel
        err = (got - ref).abs().max().item()
        ok = torch.allclose(got, ref, atol=atol, rtol=rtol)
        print(f"{name:<44} {size:<30} max_abs_err={err:.3e} time_ms={ms:.4f} {'OK' if ok else 'WRONG'}")
    except Exception as e:  # a compile or launch failure is a failed run, the others still run
        ok = False
        print(f"{name:<44} {size:<30} FAILED {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    sys.stdout.flush()
    return ok


def skip(name, size, why):
    print(f"{name:<44} {size:<30} SKIPPED {why}")
    return True


def run_matmul(folder, args, runs):
    t = load(folder, "09-persistent-matmul.py", "tut09_persistent_matmul")
    pin(t.matmul_kernel_tma_persistent, MATMUL)
    pin(t.matmul_kernel_descriptor_persistent, MATMUL)
    n = args.size
    g = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=g).half()
    b = torch.randn(n, n, generator=g).half()  # (N, K): the tutorial's kernels take b transposed
    ref = a.float() @ b.float().T
    a, b = a.cuda(), b.cuda()
    size = f"fp16 M=N=K={n}"
    ok = True
    for ws in (False, True):
        name = f"09 matmul_tma_persistent ws={ws}"
        if ("tma-ws" if ws else "tma") not in runs:
            continue
        if ws and not t.HAS_WARP_SPECIALIZE:
            ok &= skip(name, size, "the tutorial has no warp specialization here (HAS_WARP_SPECIALIZE)")
        elif ws and t.is_hopper():
            ok &= skip(name, size, "the tutorial skips host-descriptor kernels with warp_specialize on Hopper")
        else:
            ok &= report(name, size, lambda: t.matmul_tma_persistent(a, b, ws), ref, 5e-2, 1e-2, args)
    for ws in (False, True):
        name = f"09 matmul_descriptor_persistent ws={ws}"
        if ("descriptor-ws" if ws else "descriptor") not in runs:
            continue
        if ws and not t.HAS_WARP_SPECIALIZE:
            ok &= skip(name, size, "the tutorial has no warp specialization here (HAS_WARP_SPECIALIZE)")
        else:
            ok &= report(name, size, lambda: t.matmul_descriptor_persistent(a, b, ws), ref, 5e-2, 1e-2, args)
    return ok


def run_attention(folder, args, runs):
    t = load(folder, "06-fused-attention.py", "tut06_fused_attention")
    pin(t._attn_fwd, ATTENTION)
    g = torch.Generator().manual_seed(20)
    q, k, v = (torch.randn(Z, H, N_CTX, HEAD_DIM, generator=g).mul(0.5).half() for _ in range(3))
    size = f"fp16 Z={Z} H={H} N_CTX={N_CTX} D={HEAD_DIM}"
    p = (q.float() @ k.float().transpose(2, 3)) * SM_SCALE
    refs = {False: torch.softmax(p, -1) @ v.float()}
    p[:, :, torch.tril(torch.ones(N_CTX, N_CTX)) == 0] = float("-inf")
    refs[True] = torch.softmax(p, -1) @ v.float()
    q, k, v = q.cuda(), k.cuda(), v.cuda()
    ok = True
    for run, causal, ws in (("attention-causal", True, False), ("attention", False, False), ("attention-ws", False, True)):
        name = f"06 attention fwd causal={causal} ws={ws}"
        if run not in runs:
            continue
        if ws and not (t.is_hopper() or t.is_blackwell()):
            ok &= skip(name, size, "the tutorial enables warp_specialize only on Hopper and Blackwell")
            continue
        fn = lambda: t.attention(q, k, v, causal, SM_SCALE, ws)
        ok &= report(name, size, fn, refs[causal], 1e-2, 0, args)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tutorials", nargs="?", default=os.environ.get("TMAKIT_TRITON_TUTORIALS"),
                    help="folder with the two tutorial files (default: $TMAKIT_TRITON_TUTORIALS)")
    ap.add_argument("--only", help="matmul, attention, or runs by name, comma-separated (RUNS)")
    ap.add_argument("--size", type=int, default=2048, help="matmul M=N=K (a multiple of 8)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--iters", type=int, default=1)
    args = ap.parse_args()
    if not args.tutorials or not os.path.isdir(args.tutorials):
        ap.print_usage(sys.stderr)
        print("error: name the tutorials' folder (argument or TMAKIT_TRITON_TUTORIALS)", file=sys.stderr)
        return 2
    if args.size <= 0 or args.size % 8 or args.warmup < 0 or args.iters < 1:
        print("error: --size a positive multiple of 8, --warmup >= 0, --iters >= 1", file=sys.stderr)
        return 2
    every = [r for rs in RUNS.values() for r in rs]
    runs = set(every)
    if args.only:
        names = args.only.split(",")
        unknown = [n for n in names if n not in RUNS and n not in every]
        if unknown:
            print(f"error: --only {','.join(unknown)}: not a tutorial or run (matmul, attention, {', '.join(every)})",
                  file=sys.stderr)
            return 2
        runs = {r for n in names for r in RUNS.get(n, [n])}
    import triton
    print(f"triton {triton.__version__} torch {torch.__version__} {torch.cuda.get_device_name()}")
    ok = True
    if runs & set(RUNS["matmul"]):
        ok &= run_matmul(args.tutorials, args, runs)
    if runs & set(RUNS["attention"]):
        ok &= run_attention(args.tutorials, args, runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
