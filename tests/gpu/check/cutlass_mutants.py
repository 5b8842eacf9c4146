"""Seeded bugs in CUTLASS's own PTX for `tmakit check` (issue 23, docs/check-seeded.md "CUTLASS mutants").

Each mutant is ONE textual edit of the PTX nvcc makes of CUTLASS 4.2's Hopper GEMM examples: the
warp-specialized cooperative kernel of example 48 (4x2 clusters, multicast TMA loads, a 7-stage
pipeline, no TMA store), or, for the two epilogue mutants, the ping-pong kernel of example 49 (TMA
stores). The edit is made by `tmakit check --ptx-filter` while the program loads its fatbin's PTX,
so every finding is placed at a CUTLASS source line through the PTX's own .loc lines.

  python3 cutlass_mutants.py list                      names, examples, edits, expected rules
  python3 cutlass_mutants.py filter NAME               PTX on stdin, NAME's mutant on stdout (the
                                                       --ptx-filter); a module without the target
                                                       kernel passes unchanged; exit 1 (and why on
                                                       stderr) when the kernel is there but the
                                                       mutation's place is not exactly as expected
  python3 cutlass_mutants.py selftest PTX...           every mutation applied to each PTX (example
                                                       48's or 49's module, or the committed
                                                       excerpts): each changes exactly its lines
  python3 cutlass_mutants.py excerpt IN.ptx OUT.ptx    cut the lines the mutations read from IN
  python3 cutlass_mutants.py device --tmakit DIR --example PATH [--example49 PATH] --out OUT [--only A,B]
                                                       each mutant under `tmakit check`; OUT/summary.json
                                                       and a table
"""
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.abspath(__file__)
sys.path.insert(0, os.path.dirname(HERE))
from ptx_mutants import (NotApplicable, apply_edits, changed_lines, checked_env, declare, frames,  # noqa: E402
                         kernels, operand_replaced, outside_changed, place, replayed, run_filter, shared_command,
                         write_excerpt)


# ---- the CUTLASS GEMM kernels ------------------------------------------------------------------

def gemm_kernels(lines):
    return [k for k in kernels(lines) if "GemmUniversal" in k.name]


# ---- the places the mutations change (finders over one kernel) --------------------------------

TRY3 = r"^\s*mbarrier\.try_wait\.parity\.shared::cta\.b64\s+\w+,\s*\[([^\]]+)\],\s*(%\w+)\s*;"
TRY4 = r"^\s*mbarrier\.try_wait\.parity\.shared::cta\.b64\s+\w+,\s*\[([^\]]+)\],\s*(%\w+),\s*(%\w+)\s*;"
EXPECT_TX = r"^\s*mbarrier\.arrive\.expect_tx\.shared::cta\.b64\s+_,\s*\[([^\]]+)\],\s*(\S+?)\s*;"
MCAST_LOAD = r"^\s*cp\.async\.bulk\.tensor\.\w+\.shared::cluster\.global\.\S*multicast::cluster\S*\s+\["
RELEASE = r"^\s*mbarrier\.arrive\.shared::cluster\.b64\s+_,\s*\[[^\]]+\]\s*;"
INIT = r"^\s*mbarrier\.init\.shared::cta\.b64\s+\[[^\]]+\],\s*(%\w+|\d+)\s*;"
INIT_FENCE = r"^\s*fence\.mbarrier_init\.release\.cluster\s*;"
TMA_STORE = r"^\s*cp\.async\.bulk\.tensor\.\w+\.global\.shared::cta\S*\s+\["
STORE_FENCE = r"^\s*fence\.proxy\.async(\.shared::cta)?\s*;"
WAIT_GROUP_READ = r"^\s*cp\.async\.bulk\.wait_group\.read\s+\d+\s*;"


def ex48_kernel(lines):
    """Example 48's GEMM kernel: the module's one CUTLASS GemmUniversal kernel without a TMA store;
    None when it has none."""
    ks = [k for k in gemm_kernels(lines) if not k.find(TMA_STORE)]
    if not ks:
        return None
    if len(ks) != 1:
        raise NotApplicable(f"{len(ks)} CUTLASS GEMM kernels without a TMA store in the module; example 48's has one")
    return ks[0]


def ex49_kernel(lines):
    """Example 49's first GEMM kernel with a TMA-store epilogue (its ping-pong kernel); None when
    the module has none."""
    return next((k for k in gemm_kernels(lines) if k.find(TMA_STORE)), None)


def consumer_pairs(k):
    """The consumer's full-barrier waits: a try_wait without a time limit, then (if it failed) a
    try_wait loop on the same barrier and parity. Example 48: the mainloop's prologue, then its
    k-loop."""
    pairs = []
    for t in k.find(TRY3):
        addr, parity = re.search(TRY3, k.lines[t]).groups()
        loop = [w for w in k.find(TRY4, after=t, before=min(t + 60, k.end))
                if re.search(TRY4, k.lines[w]).groups()[:2] == (addr, parity)]
        if loop:
            pairs.append((t, loop[0]))
    if len(pairs) != 2:
        raise NotApplicable(f"consumer waits: {len(pairs)} try_wait/wait pairs, expected 2 (prologue, k-loop)")
    return pairs


def producer_wait(k):
    """The producer's wait on a stage's empty barrier: the kernel's first try_wait loop, the one
    whose next barrier operation arms the stage's full barrier (arrive.expect_tx)."""
    waits = k.find(TRY4)
    if not waits:
        raise NotApplicable("no try_wait loop in the kernel")
    nxt = k.find(r"^\s*mbarrier\.", after=waits[0])
    if not nxt or not re.search(EXPECT_TX, k.lines[nxt[0]]):
        raise NotApplicable("the kernel's first try_wait loop is not followed by an arrive.expect_tx")
    return waits[0]


def anchors48(k):
    """The lines a finding is expected at (their .loc), by name."""
    return {"expect-tx": k.exactly(1, EXPECT_TX, "arrive.expect_tx")[0],
            "consumer-wait": consumer_pairs(k)[1][1],
            "producer-wait": producer_wait(k),
            "mcast-load-a": k.exactly(2, MCAST_LOAD, "multicast TMA loads")[0],
            "release": k.exactly(2, RELEASE, "remote arrives (consumer releases)")[0]}


def anchors49(k):
    store = k.find(TMA_STORE)[0]
    return {"tma-store": store}


# ---- the mutations: each returns its edits [(index, lines removed, new lines)] -----------------

def m_expect_tx(delta):
    def edit(lines, k):
        at = k.exactly(1, EXPECT_TX, "arrive.expect_tx")[0]
        line = lines[at]
        count = re.search(EXPECT_TX, line).group(2)
        if re.fullmatch(r"\d+", count):
            return [(at, 1, [operand_replaced(line, count, str(int(count) + delta))])]
        indent = re.match(r"\s*", line).group(0)
        return [declare(k, ".reg .b32 %mut_r;"),
                (at, 1, [f"{indent}add.s32 %mut_r, {count}, {delta};", operand_replaced(line, count, "%mut_r")])]
    return edit


def m_parity_inverted(lines, k):
    t, w = consumer_pairs(k)[1]  # the k-loop's pair
    parity = re.search(TRY3, lines[t]).group(2)
    indent = re.match(r"\s*", lines[t]).group(0)
    return [declare(k, ".reg .b32 %mut_r;"),
            (t, 1, [f"{indent}xor.b32 %mut_r, {parity}, 1;", operand_replaced(lines[t], parity, "%mut_r")]),
            (w, 1, [re.sub(r"(\],\s*)" + re.escape(parity) + r"(\s*,)", r"\g<1>%mut_r\2", lines[w], count=1)])]


def m_arrival_count_plus1(lines, k):
    at = k.find(INIT)
    if not at:
        raise NotApplicable("no mbarrier.init in the kernel")
    at = at[0]
    count = re.search(INIT, lines[at]).group(1)
    if count.startswith("%"):  # the value the register was given last before the init
        movs = k.find(r"^\s*mov\.[ub]32\s+" + re.escape(count) + r"\s*,\s*(\d+)\s*;", before=at)
        if not movs:
            raise NotApplicable(f"no mov of an immediate into {count} before the first mbarrier.init")
        value = int(re.search(r",\s*(\d+)\s*;", lines[movs[-1]]).group(1))
    else:
        value = int(count)
    return [(at, 1, [operand_replaced(lines[at], count, str(value + 1))])]


def m_mask_past_cluster(lines, k):
    at = k.exactly(2, MCAST_LOAD, "multicast TMA loads")[0]
    m = re.search(r"\],\s*(%rs\d+)\s*(?:,\s*%rd\d+\s*)?;", lines[at])
    if not m:
        raise NotApplicable(f"no 16-bit ctaMask register in {lines[at].strip()!r}")
    mask = m.group(1)
    indent = re.match(r"\s*", lines[at]).group(0)
    # Rank 8: one past the 4x2 cluster.
    return [declare(k, ".reg .b16 %mut_h;"),
            (at, 1, [f"{indent}or.b16 %mut_h, {mask}, 256;", operand_replaced(lines[at], mask, "%mut_h")])]


def m_dst_offset64(lines, k):
    at = k.exactly(2, MCAST_LOAD, "multicast TMA loads")[0]
    new, n = re.subn(r"(multicast::cluster\S*\s+\[)(%r\d+)\]", r"\1\2+64]", lines[at], count=1)
    if n != 1:
        raise NotApplicable(f"no register destination in {lines[at].strip()!r}")
    return [(at, 1, [new])]


def m_init_fences_removed(lines, k):
    return [(i, 1, []) for i in k.exactly(3, INIT_FENCE, "fence.mbarrier_init")]


def m_init_fence_first_removed(lines, k):
    return [(k.exactly(3, INIT_FENCE, "fence.mbarrier_init")[0], 1, [])]


def m_release_removed(lines, k):
    return [(k.exactly(2, RELEASE, "remote arrives (consumer releases)")[0], 1, [])]


def m_empty_wait_removed(lines, k):
    at = producer_wait(k)
    # The loop `LAB: try_wait P1; @P1 bra DONE; bra LAB; DONE:` goes; its labels stay (unused).
    if not (re.match(r"^\s*@\w+\s+bra\s+\w+\s*;", lines[at + 1]) and re.match(r"^\s*bra\s+\w+\s*;", lines[at + 2])):
        raise NotApplicable("the producer's try_wait is not followed by its loop's two branches")
    return [(at, 3, [])]


def m_store_fence_removed(lines, k):
    store = k.find(TMA_STORE)[0]
    fences = k.find(STORE_FENCE, before=store)
    if not fences:
        raise NotApplicable("no fence.proxy.async before the kernel's first TMA store")
    return [(fences[-1], 1, [])]


def m_wait_group_read_removed(lines, k):
    store = k.find(TMA_STORE)[0]
    waits = k.find(WAIT_GROUP_READ, after=store)
    if not waits:
        raise NotApplicable("no cp.async.bulk.wait_group.read after the kernel's first TMA store")
    return [(waits[0], 1, [])]


# expect: rules by outcome ("always", "completed", "timeout", "fault"), each (rule, anchor): the
# anchor's .loc is where the finding must be, None = any line. any_of: at least one of these rules
# (any line). changes: what the edit must do to the lines (selftest): regexes of the lines removed
# and of the lines added, each list matched in order. Expectations were written from
# docs/check-replay.md and docs/diagnostics.md before any run.
MUTANTS = {
    "clean": {"example": 48, "edit": None, "what": "none (the module as nvcc made it)", "expect": {}},
    "expect-long16": {
        "example": 48, "edit": m_expect_tx(+16), "what": "the mainloop's arrive.expect_tx armed 16 bytes long",
        "expect": {"timeout": [("check.hang", "consumer-wait")], "completed": [("model.tx-mismatch", "expect-tx")]},
        "changes": ([EXPECT_TX], [r"^\s*\.reg \.b32 %mut_r;$", r"^\s*add\.s32 %mut_r, %r\d+, 16;$",
                                  r"expect_tx\.shared::cta\.b64 _, \[%r\d+\], %mut_r;"])},
    "expect-short16": {
        "example": 48, "edit": m_expect_tx(-16), "what": "the mainloop's arrive.expect_tx armed 16 bytes short",
        "expect": {"timeout": [("check.hang", "consumer-wait")], "completed": [("model.tx-mismatch", "expect-tx")]},
        "changes": ([EXPECT_TX], [r"^\s*\.reg \.b32 %mut_r;$", r"^\s*add\.s32 %mut_r, %r\d+, -16;$",
                                  r"expect_tx\.shared::cta\.b64 _, \[%r\d+\], %mut_r;"])},
    "parity-inverted": {
        "example": 48, "edit": m_parity_inverted,
        "what": "the consumer's k-loop wait on the full barrier polls the parity XOR 1 (try_wait and its loop)",
        "expect": {"timeout": [("check.hang", "consumer-wait")]},
        "changes": ([TRY3, TRY4], [r"^\s*\.reg \.b32 %mut_r;$", r"^\s*xor\.b32 %mut_r, %r\d+, 1;$",
                                   r"try_wait\.parity\.shared::cta\.b64 P1, \[%r\d+\], %mut_r;",
                                   r"try_wait\.parity\.shared::cta\.b64 P1, \[%r\d+\], %mut_r, %r\d+;"])},
    "arrival-count-plus1": {
        "example": 48, "edit": m_arrival_count_plus1,
        "what": "the first mbarrier.init (stage 0's full barrier) for 2 arrivals; the producer arrives once",
        "expect": {"timeout": [("check.hang", "consumer-wait")]},
        "changes": ([INIT], [r"mbarrier\.init\.shared::cta\.b64 \[%r\d+\], 2;"])},
    "mask-past-cluster": {
        "example": 48, "edit": m_mask_past_cluster,
        "what": "the first multicast load's ctaMask with bit 8 set: a rank past the 8-CTA cluster",
        "expect": {"always": [("multicast.mask-range", "mcast-load-a")], "fault": [("check.fault", None)],
                   "timeout": [("check.hang", None)]},
        "changes": ([MCAST_LOAD], [r"^\s*\.reg \.b16 %mut_h;$", r"^\s*or\.b16 %mut_h, %rs\d+, 256;$",
                                   r"multicast::cluster.*\], %mut_h, %rd\d+;"])},
    "dst-offset64": {
        "example": 48, "edit": m_dst_offset64, "what": "the first multicast load's shared destination + 64 bytes",
        "expect": {"always": [("tensor.smem-align", "mcast-load-a")], "fault": [("check.fault", None)],
                   "timeout": [("check.hang", None)]},
        "changes": ([MCAST_LOAD], [r"multicast::cluster\S*\s+\[%r\d+\+64\]"])},
    "init-fences-removed": {
        "example": 48, "edit": m_init_fences_removed,
        "what": "every fence.mbarrier_init of the kernel (3) removed: the multicast loads and the consumers' "
                "remote arrives reach barriers whose init no fence released (the cluster barrier is .relaxed)",
        "expect": {"always": [("check.init-fence-missing", "mcast-load-a")]},
        "changes": ([INIT_FENCE] * 3, [])},
    "init-fence-first-removed": {
        "example": 48, "edit": m_init_fence_first_removed, "control": True,
        "what": "only the first fence.mbarrier_init removed: no bug, the same threads' later fences release "
                "the same inits before the cluster barrier (a control: nothing may be found)",
        "expect": {},
        "changes": ([INIT_FENCE], [])},
    "release-removed": {
        "example": 48, "edit": m_release_removed,
        "what": "the consumers' release of a stage in the k-loop (a remote arrive on its empty barrier) removed",
        "expect": {"timeout": [("check.hang", "producer-wait")]},
        "changes": ([r"^\s*mbarrier\.arrive\.shared::cluster\.b64"], [])},
    "empty-wait-removed": {
        "example": 48, "edit": m_empty_wait_removed,
        "what": "the producer's wait on a stage's empty barrier removed: stages are refilled before their "
                "consumers released them",
        # What the trace can show: the refill arming a full barrier whose phase has not completed,
        # or a load into a stage whose previous load the model still has in flight, or the hang that
        # follows. The consumers' wgmma reads of the stage are not traced, so a refill that lands
        # after the previous load completed, while wgmma still reads the stage, is not seen.
        "expect": {}, "any_of": ["mbarrier.arrive-underflow", "model.in-flight-overlap", "model.tx-mismatch",
                                 "check.hang", "check.wait-disagrees", "model.deadlock"],
        "timing_limit": "when every refill lands after the stage's previous load completed, only the consumers' "
                        "wgmma reads overlap it, and tmakit does not trace wgmma (not seen on the H100 with "
                        "records in device memory, 2026-11-27)",
        "changes": ([TRY4, r"^\s*@\w+\s+bra\s+\w+\s*;", r"^\s*bra\s+\w+\s*;"], [])},
    "store-fence-removed": {
        "example": 49, "edit": m_store_fence_removed,
        "what": "the epilogue's fence.proxy.async before its first TMA store removed",
        "limit": "CUTLASS's epilogue writes the stored tile with stmatrix, which tmakit does not trace: the "
                 "missing fence (model.missing-proxy-fence) is not seen",
        "expect": {},
        "changes": ([STORE_FENCE], [])},
    "wait-group-read-removed": {
        "example": 49, "edit": m_wait_group_read_removed,
        "what": "the epilogue's first cp.async.bulk.wait_group.read removed (the next subtile's stmatrix may "
                "overwrite what the store still reads)",
        "limit": "the overwrite is by stmatrix, which tmakit does not trace: model.use-before-completion is not seen",
        "expect": {},
        "changes": ([WAIT_GROUP_READ], [])},
}


def target_kernel(name, lines):
    return (ex48_kernel if MUTANTS[name]["example"] == 48 else ex49_kernel)(lines)


def mutate(name, text):
    """(new text, the edits as (PTX line, removed, added), the kernel) or (text, [], None) when the
    module has no target kernel. Raises NotApplicable when the kernel is there and the place is not."""
    lines = text.split("\n")
    k = target_kernel(name, lines)
    edit = MUTANTS[name]["edit"]
    if k is None or edit is None:
        return text, [], k
    new, report = apply_edits(edit(lines, k), lines)
    return "\n".join(new), report, k


def places(name, text):
    """{anchor: [file, line]} in the unmutated text (where findings are expected)."""
    lines = text.split("\n")
    k = target_kernel(name, lines)
    if k is None:
        return {}
    found = anchors48(k) if MUTANTS[name]["example"] == 48 else anchors49(k)
    return {a: list(place(lines, i, k) or ["?", 0]) for a, i in found.items()}


def filter_main(name):
    return run_filter("cutlass_mutants.py", name, MUTANTS, mutate, lambda n, text, _: places(n, text), "CUTLASS_MUTANT_LOG")


# ---- selftest: each mutation changes exactly the lines it names --------------------------------

def selftest(paths):
    failures = 0
    for path in paths:
        text = open(path).read()
        lines = text.split("\n")
        has = {48: False, 49: False}
        for ex, find in ((48, ex48_kernel), (49, ex49_kernel)):
            try:
                has[ex] = find(lines) is not None
            except NotApplicable:
                pass
        for name, m in MUTANTS.items():
            if not has[m["example"]]:
                continue
            try:
                new, edits, k = mutate(name, text)
                where = places(name, text)
            except NotApplicable as e:
                print(f"FAIL {os.path.basename(path)} {name}: {e}")
                failures += 1
                continue
            if m["edit"] is None:
                ok = new == text
                print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(path)} {name}: unchanged")
                failures += not ok
                continue
            removed, added = changed_lines(lines, new.split("\n"))
            want_removed, want_added = m["changes"]
            problems = []
            if len(removed) != len(want_removed) or not all(re.search(p, l) for p, l in zip(want_removed, removed)):
                problems.append(f"removed {[l.strip() for l in removed]}, expected lines matching {want_removed}")
            if len(added) != len(want_added) or not all(re.search(p, l) for p, l in zip(want_added, added)):
                problems.append(f"added {[l.strip() for l in added]}, expected lines matching {want_added}")
            # Outside the kernel nothing moves: the text before it and after it is the same.
            if outside_changed(lines, new.split("\n"), k):
                problems.append("lines outside the target kernel changed")
            if any(p == ["?", 0] for p in where.values()):
                problems.append(f"an expected place has no .loc: {where}")
            print(f"{'ok  ' if not problems else 'FAIL'} {os.path.basename(path)} {name}: "
                  + "; ".join(f"PTX line {at}: {rm} -> {ad}" for at, rm, ad in edits) + ("" if not problems else
                  "\n     " + "\n     ".join(problems)))
            failures += bool(problems)
        if not any(has.values()):
            for name in MUTANTS:  # a module without CUTLASS's kernels passes every filter unchanged
                if mutate(name, text)[0] != text:
                    print(f"FAIL {os.path.basename(path)} {name}: a module without the kernel was changed")
                    failures += 1
            print(f"ok   {os.path.basename(path)}: no CUTLASS GEMM kernel; every mutant leaves it unchanged")
    print(f"{failures} failures")
    return 1 if failures else 0


def excerpt_main(src, out):
    """The lines the mutations and their expected places read, with a neighbour each side and the
    .loc that places them, cut from a module nvcc made of example 48 or 49 (the committed
    excerpts: tests/gpu/check/cutlass4?_excerpt.ptx)."""
    lines = open(src).read().split("\n")
    found = {}
    for ex, find in ((48, ex48_kernel), (49, ex49_kernel)):
        try:
            found[ex] = find(lines)
        except NotApplicable:
            found[ex] = None
    ex = 48 if found[48] else 49
    k = found[ex]
    if k is None:
        raise SystemExit(f"cutlass_mutants.py: no kernel of example 48 or 49 in {src}")
    keep = set(range(0, 12))  # the header: .version, .target, .address_size
    body = next(i for i in range(k.start, k.end) if lines[i].strip() == "{")
    keep.update(range(k.start, body + 1))
    keep.update(k.find(r"^\s*\.reg\s+\.b32\s+%r<\d+>;"))
    keep.add(k.end - 1)
    sites = []
    for name, m in MUTANTS.items():
        if m["edit"] is None or m["example"] != ex:
            continue
        for at, n, _ in m["edit"](lines, k):
            sites += list(range(at, at + max(n, 1)))
    sites += list((anchors48(k) if ex == 48 else anchors49(k)).values())
    if ex == 48:  # what the finders read besides: the waits' pairs, the init's count, the producer's next op
        sites += [i for pair in consumer_pairs(k) for i in pair]
        sites += k.find(r"^\s*mov\.u32\s+%r\d+,\s*\d+;", before=k.find(INIT)[0])[-1:]
        sites += k.find(EXPECT_TX) + k.find(INIT)[:1] + k.find(MCAST_LOAD) + k.find(RELEASE) + k.find(INIT_FENCE)
    else:
        sites += k.find(TMA_STORE)[:1]
    return write_excerpt(out, lines, keep, sites, k, [
        f"// An excerpt of the PTX nvcc 13.0 made of CUTLASS 4.2's example {ex} (nvcc -ptx",
        "// -lineinfo -O3 -arch=sm_90a), cut by `python3 tests/gpu/check/cutlass_mutants.py excerpt`: the lines",
        "// its mutations change and read, a neighbour each side, the .loc placing them. Not a whole module:",
        "// read by the mutations' test (CheckCutlassMutants), never assembled."])


# ---- the GPU run: each mutant under tmakit check ----------------------------------------------

def run_mutant(name, cli, example, out, env):
    m = MUTANTS[name]
    log = os.path.join(out, name + ".filter.jsonl")
    save = os.path.join(out, name)
    if os.path.exists(log):
        os.remove(log)
    if os.path.exists(save):
        subprocess.run(["rm", "-rf", save])
    # Example 49 runs seven GEMMs (each checked once): a smaller problem keeps its replays short.
    args = ["--m=512", "--n=512", "--k=512", "--iterations=0"] if m["example"] == 48 else ["--m=256", "--n=256", "--k=256"]
    cmd = [cli, "check", "--timeout", "5"] + (["--launches", "1"] if m["example"] == 49 else []) + \
          ["--ptx-filter", f"{sys.executable} {HERE} filter {name}", "--save-trace", save, "--", example] + args
    t0 = time.monotonic()
    p = subprocess.run(["timeout", "-k", "5", "300"] + cmd, env=dict(env, CUTLASS_MUTANT_LOG=log),
                       capture_output=True, text=True)
    res = {"mutant": name, "example": m["example"], "what": m["what"], "exit": p.returncode,
           "seconds": round(time.monotonic() - t0, 1), "command": " ".join(cmd)}
    said = [l for l in p.stderr.split("\n") if "PTX filter" in l]
    res["filter_said"] = said
    res["disposition"] = [l.strip() for l in p.stdout.split("\n") if "Disposition" in l or "Passed" in l or "Failed" in l]
    applied = [json.loads(l) for l in open(log)] if os.path.exists(log) else []
    res["edits"] = applied[0]["edits"] if applied else []
    kernel = applied[0]["kernel"] if applied else None
    where = applied[0]["places"] if applied else {}
    if m["edit"] is not None and not res["edits"]:
        res.update(verdict="NOT APPLIED", found=[], expected=[], outcome=None,
                   log_tail=p.stderr[-3000:])
        return res
    launches = replayed(cli, save, env)
    gemm = [l for l in launches if kernel is None and "GemmUniversal" in l["report"]["kernel"]
            or kernel is not None and l["report"]["kernel"] == kernel]
    outcome = gemm[0]["report"]["outcome"] if gemm else None
    # A finding is placed at one frame of its inlining chain (docs/check-replay.md, "Places"); the
    # CUTLASS line a mutant expects may be any frame of that chain (the report prints each).
    found = sorted({(f["rule"], os.path.basename(f["file"]), f["line"]) for l in gemm for f in l["report"]["findings"]})
    found_chains = [(f["rule"], frames(f)) for l in gemm for f in l["report"]["findings"]]
    others = sorted({(f["rule"], os.path.basename(f["file"]), f["line"]) for l in launches if l not in gemm
                     for f in l["report"]["findings"]})
    want = []
    for rule, anchor in m["expect"].get("always", []) + m["expect"].get(outcome or "", []):
        f, line = where.get(anchor, [None, None]) if anchor else (None, None)
        want.append({"rule": rule, "anchor": anchor, "file": f, "line": line})
    missing = [w for w in want if not any(rule == w["rule"] and (w["file"] is None or (w["file"], w["line"]) in frames)
                                          for rule, frames in found_chains)]
    any_of = m.get("any_of", [])
    if m["edit"] is None or m.get("control"):
        verdict = ("FINDINGS ON A CORRECT KERNEL" if found or others else "NO TRACE OF THE KERNEL" if not gemm
                   else f"NOT COMPLETED ({outcome})" if outcome != "completed"
                   else "clean as expected" if p.returncode == 0 else f"clean, exit {p.returncode}")
    elif m.get("limit"):
        verdict = "not seen (a known limit)" if not found else "found (the limit is gone?)"
    elif not gemm:
        verdict = "NO TRACE OF THE KERNEL"
    elif any_of:
        # A mutant whose effect depends on timing may also name the limit it meets when it is missed.
        verdict = ("found" if any(x[0] in any_of for x in found)
                   else "not seen (a known limit)" if m.get("timing_limit") else "NOT SEEN")
    else:
        verdict = "found as expected" if want and not missing else "DIFFERENT"
    res.update(outcome=outcome, expected=want, any_of=any_of, found=[list(x) for x in found],
               other_launches=[list(x) for x in others], verdict=verdict, places=where,
               limit=m.get("limit", ""), log_tail=p.stderr[-3000:])
    return res


def device_main(tmakit, example48, example49, out, only):
    cli = os.path.join(tmakit, "tmakit")
    env = checked_env(HERE, sys.executable, tmakit)
    os.makedirs(out, exist_ok=True)
    results = []
    for name, m in MUTANTS.items():
        if only and name not in only:
            continue
        example = example48 if m["example"] == 48 else example49
        if not example:
            results.append({"mutant": name, "example": m["example"], "what": m["what"], "verdict": "not run (no --example49)",
                            "found": [], "expected": []})
            continue
        res = run_mutant(name, cli, example, out, env)
        results.append(res)
        print(f"== {name}: exit {res['exit']}, {res['seconds']} s, outcome {res.get('outcome')}: {res['verdict']}",
              flush=True)
        for line in res["filter_said"] + [f"other launches' findings: {res['other_launches']}"] * bool(res.get("other_launches")):
            print("   " + line, flush=True)
        json.dump(results, open(os.path.join(out, "summary.json"), "w"), indent=1)  # kept as it goes
    json.dump(results, open(os.path.join(out, "summary.json"), "w"), indent=1)
    print()
    print(f"{'mutant':26} {'exit':>4} {'outcome':9} {'expected':44} {'found (rule @ CUTLASS file:line)':60} verdict")
    for r in results:
        exp = ", ".join(f"{w['rule']}@{w['file']}:{w['line']}" if w.get("file") else w["rule"] for w in r["expected"])
        if r.get("any_of"):
            exp = "one of " + "/".join(r["any_of"])
        if not exp:
            exp = "nothing" + (" (limit)" if r.get("limit") else "")
        found = ", ".join(f"{x[0]}@{x[1]}:{x[2]}" for x in r["found"]) or "nothing"
        print(f"{r['mutant']:26} {str(r.get('exit', '')):>4} {str(r.get('outcome')):9} {exp:44} {found:60} {r['verdict']}")
    bad = [r for r in results if r["verdict"] not in ("found as expected", "found", "clean as expected",
                                                      "not seen (a known limit)", "not run (no --example49)")]
    print(f"{len(results) - len(bad)} of {len(results)} as expected")
    return 1 if bad else 0


def main(argv):
    if argv[:1] == ["list"]:
        for name, m in MUTANTS.items():
            exp = m["expect"] or ({"any_of": m["any_of"]} if m.get("any_of") else "nothing")
            print(f"{name:26} ex{m['example']}  {m['what']}\n{'':32}expect {exp}"
                  + (f"\n{'':32}limit: {m['limit']}" if m.get("limit") else ""))
        return 0
    status = shared_command(argv, filter_main, selftest, excerpt_main)
    if status is not None:
        return status
    if argv[:1] == ["device"]:
        opts = dict(zip(argv[1::2], argv[2::2]))
        if "--tmakit" not in opts or "--example" not in opts or "--out" not in opts:
            print(__doc__)
            return 2
        return device_main(os.path.abspath(opts["--tmakit"]), os.path.abspath(opts["--example"]),
                           os.path.abspath(opts["--example49"]) if opts.get("--example49") else None,
                           os.path.abspath(opts["--out"]), opts.get("--only", "").split(",") if opts.get("--only") else [])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
