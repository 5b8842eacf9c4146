"""Seeded bugs in Triton's own PTX for `tmakit check` (issue 18, docs/check-seeded.md "Triton").

Each mutant compiles one small Triton 3.6 TMA kernel (host or device descriptors) through a ptxas
wrapper that applies ONE textual mutation to the PTX Triton emits and then runs the ptxas Triton
would have run (under `tmakit check` that is tmakit-ptxas, which instruments and runs the real
ptxas). Triton's .loc lines point at this file, so every finding names a line below.

  python3 triton_mutants.py list                 the mutants, their kernels and expected rules
  python3 triton_mutants.py run NAME [--timeout S] [--side N]
                                                 compile NAME's mutant, launch it, wait at most S s
                                                 (polling an event), print "observed: ...";
                                                 exit 0 bytes right, 1 wrong bytes, 3 still running
                                                 (hung), 4 the GPU reported an error, 2 bad input
  python3 triton_mutants.py mutate NAME IN.ptx   apply NAME's mutation to IN.ptx in place (no GPU)
  python3 triton_mutants.py all --tmakit DIR --out OUT
                                                 every mutant plain (64 CTAs) and under
                                                 `tmakit check --timeout 3 --save-trace` (1 CTA),
                                                 its trace replayed; OUT/summary.json
  python3 triton_mutants.py ptxas ARGS...        the wrapper's body (TRITON_PTXAS_PATH)
"""
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.abspath(__file__)

try:  # the kernels need Triton; `list` and `mutate` do not
    import triton
    import triton.language as tl
    HAVE_TRITON = True
except ImportError:
    HAVE_TRITON = False


def _kernels():
    # Each statement on its own line: the marker comments name the lines a finding must carry.
    @triton.jit
    def scale_host_desc(src, dst, BM: tl.constexpr, BN: tl.constexpr):
        m = tl.program_id(0) * BM
        n = tl.program_id(1) * BN
        x = src.load([m, n])  # at:load
        dst.store([m, n], x * 2)  # at:store

    @triton.jit
    def scale_rows(src, dst, BM: tl.constexpr, BN: tl.constexpr, TILES: tl.constexpr):
        # Two tiles one after the other through the same shared buffer: the second load reuses
        # the buffer the first store reads, which only its wait_group.read makes safe.
        n = tl.program_id(1) * BN
        for i in tl.static_range(TILES):
            m = (tl.program_id(0) * TILES + i) * BM
            x = src.load([m, n])  # at:rows-load
            dst.store([m, n], x * 2)  # at:rows-store

    @triton.jit
    def scale_device_desc(src_ptr, dst_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
        src = tl.make_tensor_descriptor(src_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])  # at:dev-src
        dst = tl.make_tensor_descriptor(dst_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        m = tl.program_id(0) * BM
        n = tl.program_id(1) * BN
        x = src.load([m, n])  # at:dev-load
        dst.store([m, n], x * 2)  # at:dev-store

    return {"host": scale_host_desc, "rows": scale_rows, "device": scale_device_desc}


# ---- the mutations: each edits exactly one place of Triton's PTX, or refuses -------------------

class NotApplicable(Exception):
    pass


def _sub_first(pattern, repl, text, what):
    new, n = re.subn(pattern, repl, text, count=1, flags=re.M)
    if n != 1:
        raise NotApplicable(f"no {what} in the PTX (pattern {pattern!r})")
    return new


def _expect_tx(delta):
    def edit(ptx):
        return _sub_first(r"(mbarrier\.arrive\.expect_tx\S*\s+_,\s*\[[^\]]+\],\s*)(\d+)\s*;",
                          lambda m: f"{m.group(1)}{int(m.group(2)) + delta};", ptx, "mbarrier.arrive.expect_tx with an immediate")
    return edit


def _arrival_count_2(ptx):
    return _sub_first(r"(mbarrier\.init\S*\s+\[[^\]]+\],\s*)1\s*;", r"\g<1>2;", ptx, "mbarrier.init for 1 arrival")


def _parity_inverted(ptx):
    # The wait's parity register XOR 1, in a register declared at the top of the kernel's body.
    ptx = _sub_first(r"^(\s*\.reg \.b32\s+%r<\d+>;)", r"\1\n\t.reg .b32 \t%parity_inverted;", ptx, ".reg .b32 %r<N> declaration")
    return _sub_first(r"^(\s*)(mbarrier\.try_wait\.parity\S*\s+\w+,\s*\[[^\]]+\],\s*)(%\w+)\s*;",
                      r"\1xor.b32 \t%parity_inverted, \3, 1;\n\1\2%parity_inverted;", ptx, "mbarrier.try_wait.parity")


def _store_fence_removed(ptx):
    # The last fence.proxy.async before the first TMA store (global <- shared::cta).
    store = re.search(r"cp\.async\.bulk\.tensor\.\w+\.global\.shared::cta", ptx)
    if not store:
        raise NotApplicable("no TMA store in the PTX")
    fences = list(re.finditer(r"^\s*fence\.proxy\.async(\.shared::cta)?\s*;[^\n]*\n", ptx[:store.start()], re.M))
    if not fences:
        raise NotApplicable("no fence.proxy.async before the TMA store")
    f = fences[-1]
    return ptx[:f.start()] + ptx[f.end():]


def _wait_group_read_removed(ptx):
    return _sub_first(r"^\s*cp\.async\.bulk\.wait_group\.read\s+0\s*;[^\n]*\n", "", ptx, "cp.async.bulk.wait_group.read 0")


def _tensormap_acquire_removed(ptx):
    return _sub_first(r"^[^\n]*fence\.proxy\.tensormap::generic\.acquire[^\n]*\n", "", ptx,
                      "fence.proxy.tensormap::generic.acquire")


def _dst_offset_64(ptx):
    return _sub_first(r"(cp\.async\.bulk\.tensor\.\w+\.shared::cluster\.global\S*\s+\[)(%\w+)\]",
                      r"\1\2+64]", ptx, "TMA load into shared::cluster")


# kernel: which one; edit: the mutation (None: the clean kernel); expect: rules by outcome as in
# tests/gpu/check/cases.json, `at` naming a marker above (written from the spec before any run).
MUTANTS = {
    "clean-host": {"kernel": "host", "edit": None, "expect": {}},
    "clean-rows": {"kernel": "rows", "edit": None, "expect": {}},
    "clean-device": {"kernel": "device", "edit": None, "expect": {}},
    "expect-short16": {"kernel": "host", "edit": _expect_tx(-16), "what": "mbarrier.arrive.expect_tx armed 16 bytes short",
                       "expect": {"timeout": [("check.hang", "load")], "completed": [("model.tx-mismatch", "load")]}},
    "expect-long16": {"kernel": "host", "edit": _expect_tx(+16), "what": "mbarrier.arrive.expect_tx armed 16 bytes long",
                      "expect": {"timeout": [("check.hang", "load")], "completed": [("model.tx-mismatch", "load")]}},
    "arrival-count2": {"kernel": "host", "edit": _arrival_count_2, "what": "mbarrier.init for 2 arrivals (one arrives)",
                       "expect": {"timeout": [("check.hang", "load")]}},
    "parity-inverted": {"kernel": "host", "edit": _parity_inverted, "what": "the try_wait's parity XOR 1",
                        # The wait returns before the data, so the load is still in flight when
                        # the result's st.shared lands in the same buffer (Triton stores from the
                        # buffer it loaded into): the model also names that write.
                        "expect": {"always": [("check.wrong-parity", "load"), ("model.use-before-completion", "store")]}},
    "store-fence-removed": {"kernel": "host", "edit": _store_fence_removed,
                            "what": "the fence.proxy.async between st.shared and the TMA store removed",
                            "expect": {"always": [("model.missing-proxy-fence", "store")]}},
    "wait-group-read-removed": {"kernel": "rows", "edit": _wait_group_read_removed,
                                "what": "the first tile's cp.async.bulk.wait_group.read 0 removed (the next load reuses its buffer)",
                                "expect": {"always": [("model.in-flight-overlap", "rows-load")]}},
    "tensormap-acquire-removed": {"kernel": "device", "edit": _tensormap_acquire_removed,
                                  "what": "the first fence.proxy.tensormap::generic.acquire (the source map's) removed",
                                  "expect": {"always": [("check.tensormap-fence-missing", "dev-load")]}},
    "dst-offset64": {"kernel": "host", "edit": _dst_offset_64, "what": "the TMA load's shared destination + 64 bytes",
                     "expect": {"always": [("tensor.smem-align", "load")], "fault": [("check.fault", "load")],
                                "timeout": [("check.hang", "load")]}},
}


def marker_line(at):
    """The line of this file that carries `# at:AT`."""
    for i, line in enumerate(open(HERE).read().split("\n")):
        if line.rstrip().endswith("# at:" + at):
            return i + 1
    raise SystemExit(f"triton_mutants.py: no marker '# at:{at}'")


def expected(name, outcome):
    e = MUTANTS[name]["expect"]
    return [{"rule": r, "file": os.path.basename(HERE), "line": marker_line(at)}
            for r, at in e.get("always", []) + e.get(outcome, [])]


def mutate_file(name, path):
    edit = MUTANTS[name]["edit"]
    text = open(path).read()
    if edit is None:
        return "none"
    new = edit(text)
    open(path, "w").write(new)
    old_lines, new_lines = text.split("\n"), new.split("\n")
    changes = []
    for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag != "equal":
            changes.append(f"PTX line {a0 + 1}: {[l.strip() for l in old_lines[a0:a1]]} -> {[l.strip() for l in new_lines[b0:b1]]}")
    return "; ".join(changes)


# ---- the wrapper: TRITON_PTXAS_PATH -> this file -> the ptxas that was there before -----------

def ptxas_main(args):
    name, nxt = os.environ["TMAKIT_MUTANT"], os.environ["TMAKIT_MUTANT_NEXT"]
    ptx = [a for i, a in enumerate(args) if a.endswith(".ptx") and (i == 0 or args[i - 1] != "-o")]
    if ptx:
        try:
            what = mutate_file(name, ptx[-1])
        except NotApplicable as e:
            print(f"triton_mutants.py: mutant {name}: {e}", file=sys.stderr)
            return 1
        with open(os.environ["TMAKIT_MUTANT_LOG"], "a") as log:
            log.write(json.dumps({"mutant": name, "ptx": os.path.basename(ptx[-1]), "edit": what}) + "\n")
    os.execv(nxt, [nxt] + args)


def write_wrapper(folder):
    path = os.path.join(folder, "ptxas")
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\nexec '{sys.executable}' '{HERE}' ptxas \"$@\"\n")
    os.chmod(path, 0o755)
    return path


def run_main(name, timeout, side):
    import torch
    from triton.tools.tensor_descriptor import TensorDescriptor
    if name not in MUTANTS:
        print(f"triton_mutants.py: no mutant {name!r} (python3 triton_mutants.py list)", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="triton-mutant-")
    # Triton's ptxas knob reads TRITON_PTXAS_PATH at compile time; under tmakit check it names
    # tmakit-ptxas, which the wrapper then runs; plain, Triton's bundled ptxas.
    bundled = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")
    os.environ["TMAKIT_MUTANT_NEXT"] = os.environ.get("TRITON_PTXAS_PATH") or bundled
    os.environ["TMAKIT_MUTANT"] = name
    os.environ["TMAKIT_MUTANT_LOG"] = os.path.join(tmp, "mutations.jsonl")
    os.environ["TRITON_PTXAS_PATH"] = write_wrapper(tmp)
    if "TMAKIT_CHECK_DIR" not in os.environ:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(tmp, "cache")  # a mutant's cubin is never reused
    kind = MUTANTS[name]["kernel"]
    kernel, block = _kernels()[kind], 64
    rows = side * 2 if kind == "rows" else side
    x = torch.randn(rows, side, device="cuda", dtype=torch.float16)
    y = torch.zeros_like(x)
    grid = (side // block, side // block)
    if kind == "host":
        kernel[grid](TensorDescriptor.from_tensor(x, [block, block]), TensorDescriptor.from_tensor(y, [block, block]),
                     BM=block, BN=block)
    elif kind == "rows":
        kernel[grid](TensorDescriptor.from_tensor(x, [block, block]), TensorDescriptor.from_tensor(y, [block, block]),
                     BM=block, BN=block, TILES=2)
    else:
        triton.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
        kernel[grid](x, y, rows, side, BM=block, BN=block)
    if os.path.exists(os.environ["TMAKIT_MUTANT_LOG"]):
        for line in open(os.environ["TMAKIT_MUTANT_LOG"]):
            print("mutation:", json.loads(line)["edit"])
    done = torch.cuda.Event()
    try:
        done.record()
        start = time.monotonic()
        while not done.query():  # never a blocking wait: a hang must stay observable
            if timeout and time.monotonic() - start > timeout:
                print(f"observed: still running after {timeout} s (hung)", flush=True)
                os._exit(3)
            time.sleep(0.001)
        torch.cuda.synchronize()
    except RuntimeError as e:
        print(f"observed: the GPU reported an error: {str(e).splitlines()[0]}", flush=True)
        os._exit(4)
    bad = int((y != x * 2).sum())
    print(f"observed: {'bytes right' if bad == 0 else 'WRONG BYTES'}: {y.numel() - bad} of {y.numel()} fp16 values "
          f"equal 2*x ({rows}x{side}, grid {grid[0]}x{grid[1]})", flush=True)
    return 0 if bad == 0 else 1


def one_mutant(name, cli, out, env):
    """NAME plain (64 CTAs, what the H100 does) and under tmakit check (1 CTA, the trace kept and
    replayed); the result and the log text."""
    res, log = {"mutant": name, "what": MUTANTS[name].get("what", "none (the clean kernel)")}, []
    log.append(f"== {name}: {res['what']}")
    t0 = time.monotonic()
    p = subprocess.run(["timeout", "-k", "5", "60", sys.executable, HERE, "run", name, "--timeout", "3", "--side", "512"],
                       env=env, capture_output=True, text=True)
    res["plain"] = {"exit": p.returncode, "seconds": round(time.monotonic() - t0, 1),
                    "observed": [l for l in p.stdout.split("\n") if l.startswith(("observed", "mutation"))]}
    log.append(f"-- plain (64 CTAs): exit {p.returncode}\n{p.stdout}{p.stderr[-1500:]}")
    save = os.path.join(out, "checked", name)
    t0 = time.monotonic()
    p = subprocess.run(["timeout", "-k", "5", "120", cli, "check", "--timeout", "3", "--save-trace", save, "--",
                        sys.executable, HERE, "run", name, "--timeout", "30", "--side", "64"],
                       env=env, capture_output=True, text=True)
    log.append(f"-- tmakit check --timeout 3 (1 CTA): exit {p.returncode}\n{p.stdout}{p.stderr[-3000:]}")
    res["checked"] = {"exit": p.returncode, "seconds": round(time.monotonic() - t0, 1),
                      "observed": [l for l in p.stdout.split("\n") if l.startswith("observed")]}
    launch = os.path.join(save, "launch-0")
    if not os.path.isfile(os.path.join(launch, "meta.json")):
        res.update(ok=False, outcome=None)
        log.append("-- no trace saved")
        return res, "\n".join(log)
    outcome = json.load(open(os.path.join(launch, "meta.json")))["outcome"]
    r = subprocess.run([cli, "check", "--replay", launch, "--json"], env=env, capture_output=True, text=True)
    try:
        found = [(f["rule"], os.path.basename(f["file"]), f["line"]) for f in json.loads(r.stdout)["findings"]]
    except (ValueError, KeyError):
        found = [("replay-failed", r.stderr[-300:], 0)]
    want = expected(name, outcome)
    missing = [w for w in want if (w["rule"], w["file"], w["line"]) not in found]
    extra = [f for f in found if f[0] not in {w["rule"] for w in want}]
    # A mutant passes when every expected diagnosis is there; findings by other rules are listed
    # (a bug's consequences, judged in docs/check-seeded.md); a clean kernel passes with none.
    clean = MUTANTS[name]["edit"] is None
    res.update(outcome=outcome, findings=sorted(set(found)), expected=want, also=sorted(set(extra)),
               ok=not missing and not (clean and extra))
    log.append(f"-- replay: outcome {outcome}, findings {sorted(set(found))}; expected "
               f"{[(w['rule'], w['line']) for w in want]}: {'AS EXPECTED' if res['ok'] else 'DIFFERENT'}"
               + (f"; also {sorted(set(extra))}" if extra and not clean else ""))
    return res, "\n".join(log)


def all_main(tmakit, out, only):
    from concurrent.futures import ThreadPoolExecutor
    cli = os.path.join(tmakit, "tmakit")
    env = dict(os.environ, LD_LIBRARY_PATH=tmakit + ":" + os.environ.get("LD_LIBRARY_PATH", ""), PYTHONUNBUFFERED="1")
    names = [n for n in MUTANTS if not only or n in only]
    # Three at a time: each run is mostly Python start-up and Triton's compile; kernels of
    # different processes share the GPU by time slices, so a hung one does not stop the others.
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda n: one_mutant(n, cli, out, env), names))
    for _, text in results:
        print(text, flush=True)
    summary = [r for r, _ in results]
    json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
    print(f"{sum(r['ok'] for r in summary)} of {len(summary)} mutants as expected", flush=True)
    return 0 if all(r["ok"] for r in summary) else 1


def main(argv):
    if len(argv) >= 1 and argv[0] == "ptxas":
        return ptxas_main(argv[1:])
    if argv[:1] == ["list"]:
        for name, m in MUTANTS.items():
            print(f"{name:26} {m['kernel']:7} {m.get('what', 'none')}; expect {m['expect']}")
        return 0
    if len(argv) == 3 and argv[0] == "mutate" and argv[1] in MUTANTS:
        try:
            print(mutate_file(argv[1], argv[2]))
            return 0
        except NotApplicable as e:
            print(f"triton_mutants.py: mutant {argv[1]}: {e}", file=sys.stderr)
            return 1
    if len(argv) >= 2 and argv[0] == "run":
        opts = dict(zip(argv[2::2], argv[3::2]))
        return run_main(argv[1], float(opts.get("--timeout", 10)), int(opts.get("--side", 512)))
    if len(argv) >= 5 and argv[0] == "all":
        opts = dict(zip(argv[1::2], argv[2::2]))
        return all_main(os.path.abspath(opts["--tmakit"]), os.path.abspath(opts["--out"]),
                        opts.get("--only", "").split(",") if opts.get("--only") else [])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
