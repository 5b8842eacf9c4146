"""Seeded bugs in the PTX of Triton's own tutorials for `tmakit check` (docs/check-seeded.md,
"Triton tutorial mutants").

Each mutant is ONE kind of edit, made by `tmakit check --ptx-filter` to the PTX Triton 3.6 emits for
one kernel of tutorial 09 (the persistent TMA matmuls) or 06 (fused attention), while
tests/gpu/check/triton_tutorials.py runs that kernel alone (`--only RUN`). The edits are written
over instruction forms and their order (the Nth `mbarrier.arrive.expect_tx`, every
`fence.proxy.async` that is the last before a TMA store, ...), never over register names or line
numbers, so each holds for its bug kind in any Triton kernel; the table below says which kernel
and which occurrence each mutant takes. Where the kernel is there and the place is not, the filter
exits 1 naming what it did not find (tmakit says `check.ptx-filter`; the run is NOT APPLIED);
modules of other kernels pass unchanged. Triton's .loc lines name the tutorials' own files, so each
expected finding is a tutorial line, read by the filter from the module it was given.

  python3 triton_tutorial_mutants.py list                    mutants: run, kernel, edit, expected rules
  python3 triton_tutorial_mutants.py filter NAME             PTX on stdin, NAME's mutant on stdout (the
                                                             --ptx-filter)
  python3 triton_tutorial_mutants.py selftest PTX...         every mutant on each module whose kernel it
                                                             targets: each changes exactly its lines; and
                                                             which edit kinds the module offers
  python3 triton_tutorial_mutants.py ptx TUTORIALS OUT       compile each run's kernel for sm_90a with
                                                             Triton (no GPU; a stand-in driver), OUT/RUN.ptx
  python3 triton_tutorial_mutants.py excerpt IN.ptx OUT.ptx  cut the lines the mutations read from IN
  python3 triton_tutorial_mutants.py device --tmakit DIR --tutorials DIR --out OUT [--only A,B] [--jobs N]
                                                             each mutant under `tmakit check`;
                                                             OUT/summary.json and a table; exit 1 when a
                                                             mutant is not found as expected or a control
                                                             has findings
"""
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.abspath(__file__)
sys.path.insert(0, os.path.dirname(HERE))
import ptx_mutants as pm  # noqa: E402  (shared with cutlass_mutants.py: kernels, places, edits, excerpts)

NotApplicable = pm.NotApplicable
TUTORIALS_SCRIPT = os.path.join(os.path.dirname(HERE), "triton_tutorials.py")

# ---- instruction forms (a guard `@%p` / `@!%p` may precede each) ------------------------------

G = r"^\s*(?:@!?%\w+\s+)?"
ARM = G + r"mbarrier\.arrive\.expect_tx\S*\s+(?:_|%\w+),\s*\[([^\]]+)\],\s*(%\w+|\d+)\s*;"
WAIT = G + r"mbarrier\.try_wait\.parity\S*\s+\w+,\s*\[([^\]]+)\],\s*(%\w+|\d+)\s*(?:,\s*(?:%\w+|\d+)\s*)?;"
INIT = G + r"mbarrier\.init\S*\s+\[([^\]]+)\],\s*(%\w+|\d+)\s*;"
TMA_LOAD = G + r"cp\.async\.bulk\.tensor\.\w+\.shared::(?:cluster|cta)\.global\S*\s+\["
TMA_STORE = G + r"cp\.async\.bulk\.tensor\.\w+\.global\.shared::cta\S*\s+\["
BULK_COPY = G + r"cp\.(?:reduce\.)?async\.bulk\.(?!commit_group|wait_group)"
STORE_FENCE = G + r"fence\.proxy\.async(?:\.shared::cta)?\s*;"
WAIT_GROUP_READ = G + r"cp\.async\.bulk\.wait_group\.read\s+\d+\s*;"
INIT_FENCE = G + r"fence\.mbarrier_init\S*\s*;"
ACQUIRE = G + r"fence\.proxy\.tensormap::generic\.acquire\S*\s+\["
SHARED_WRITE = G + r"(?:st(?:\.\w+)*\.shared\S*|stmatrix\S*)\s"
# What ends the straight line a wait_group.read guards: a label, a branch, a return, or another
# operation on shared memory through the async proxy or a barrier.
STRAIGHT_END = r"^\s*[\w$]+:|\bbra\b|\bret\b|^\s*(?:@!?%\w+\s+)?(?:cp\.|mbarrier\.|wgmma\.|tensormap\.|fence\.proxy\.tensormap)"
COMMENT = r"^\s*(?://.*)?$"


def replaced(line, pattern, group, new):
    """`line` with the text of `pattern`'s group `group` replaced by `new`."""
    m = re.search(pattern, line)
    return line[:m.start(group)] + new + line[m.end(group):]


def indent(line):
    return re.match(r"\s*", line).group(0)


def nth(k, pattern, n, what):
    found = k.find(pattern)
    if len(found) <= n:
        raise NotApplicable(f"{what}: {len(found)} in kernel {k.name}, the mutant takes number {n + 1}")
    return found[n]


def immediate_before(k, reg, at):
    """The immediate last moved into `reg` before line `at` (mov.u32/b32 REG, N)."""
    movs = k.find(r"^\s*mov\.[ub]32\s+" + re.escape(reg) + r"\s*,\s*(\d+)\s*;", before=at)
    if not movs:
        raise NotApplicable(f"no mov of an immediate into {reg} before the mbarrier.init")
    return int(re.search(r",\s*(\d+)\s*;", k.lines[movs[-1]]).group(1))


# ---- the edit kinds: each returns its edits [(index, lines removed, new lines)] ----------------

def expect_tx(delta, n=0):
    """The Nth mbarrier.arrive.expect_tx armed `delta` bytes off (an immediate changed, or a
    register through a new one)."""
    def edit(lines, k):
        at = nth(k, ARM, n, "mbarrier.arrive.expect_tx")
        count = re.search(ARM, lines[at]).group(2)
        if count.isdigit():
            return [(at, 1, [replaced(lines[at], ARM, 2, str(int(count) + delta))])]
        return [pm.declare(k, ".reg .b32 %mut_tx;"),
                (at, 1, [f"{indent(lines[at])}add.s32 %mut_tx, {count}, {delta};", replaced(lines[at], ARM, 2, "%mut_tx")])]
    return edit


def parity_flipped(n=0):
    """The Nth mbarrier.try_wait.parity polls the other parity (a register XOR 1 through a new
    one, or the immediate 0 <-> 1)."""
    def edit(lines, k):
        at = nth(k, WAIT, n, "mbarrier.try_wait.parity")
        parity = re.search(WAIT, lines[at]).group(2)
        if parity.isdigit():
            return [(at, 1, [replaced(lines[at], WAIT, 2, str(int(parity) ^ 1))])]
        return [pm.declare(k, ".reg .b32 %mut_parity;"),
                (at, 1, [f"{indent(lines[at])}xor.b32 %mut_parity, {parity}, 1;", replaced(lines[at], WAIT, 2, "%mut_parity")])]
    return edit


def arrival_count(delta, n=0, count=None):
    """The Nth mbarrier.init (of those for `count` arrivals, when given) initialised for `delta`
    more arrivals than the program makes."""
    def edit(lines, k):
        inits = []
        for i in k.find(INIT):
            c = re.search(INIT, lines[i]).group(2)
            value = int(c) if c.isdigit() else immediate_before(k, c, i)
            if count is None or value == count:
                inits.append((i, value))
        if len(inits) <= n:
            raise NotApplicable(f"mbarrier.init{'' if count is None else f' for {count} arrivals'}: {len(inits)} "
                                f"in kernel {k.name}, the mutant takes number {n + 1}")
        at, value = inits[n]
        return [(at, 1, [replaced(lines[at], INIT, 2, str(value + delta))])]
    return edit


def store_fences_removed(lines, k):
    """Every fence.proxy.async that is the last one before a TMA store (after the copy before it):
    each store's source then reaches the copy engine unfenced."""
    gone = []
    for store in k.find(TMA_STORE):
        copies = k.find(BULK_COPY, before=store)
        fences = k.find(STORE_FENCE, after=copies[-1] if copies else None, before=store)
        if fences and fences[-1] not in gone:
            gone.append(fences[-1])
    if not gone:
        raise NotApplicable(f"no fence.proxy.async before a TMA store in kernel {k.name}")
    return [(i, 1, []) for i in gone]


def guards_a_reuse(k, at):
    """Whether the wait_group.read at `at` guards a rewrite of shared memory: the next thing on
    its straight line is an ordinary store into shared memory (not a copy, barrier operation,
    label or branch), and it is not the wait that follows a tensor map's publication
    (tensormap.cp_fenceproxy, then fence.proxy.tensormap, then commit and wait)."""
    before = [i for i in range(k.start, at) if not re.match(COMMENT, k.lines[i])
              and "commit_group" not in k.lines[i]][-1:]
    if before and "tensormap" in k.lines[before[0]]:
        return False
    for i in range(at + 1, k.end):
        line = k.lines[i]
        if re.search(SHARED_WRITE, line):
            return True
        if re.search(STRAIGHT_END, line):
            return False
    return False


def wait_group_reads_removed(lines, k):
    """Every cp.async.bulk.wait_group.read that guards a rewrite of shared memory: the buffer a
    TMA store still reads is written again."""
    gone = [i for i in k.find(WAIT_GROUP_READ) if guards_a_reuse(k, i)]
    if not gone:
        raise NotApplicable(f"no cp.async.bulk.wait_group.read before a rewrite of shared memory in kernel {k.name}")
    return [(i, 1, []) for i in gone]


def init_fences_removed(lines, k):
    """Every fence.mbarrier_init (Triton 3.6 emits none in these tutorials' sm_90 kernels: it
    orders its inits with bar.sync alone, and the kernels have no clusters)."""
    found = k.find(INIT_FENCE)
    if not found:
        raise NotApplicable(f"no fence.mbarrier_init in kernel {k.name}")
    return [(i, 1, []) for i in found]


def acquire_removed(n=0):
    """The Nth fence.proxy.tensormap::generic.acquire (a device-built map used unacquired)."""
    def edit(lines, k):
        return [(nth(k, ACQUIRE, n, "fence.proxy.tensormap::generic.acquire"), 1, [])]
    return edit


# Each kind: its edit for any kernel (the table's mutants pick the occurrence), for `selftest`.
KINDS = {"expect-long16": expect_tx(+16), "expect-short16": expect_tx(-16), "parity-flipped": parity_flipped(),
         "arrival-count-plus1": arrival_count(+1), "store-fences-removed": store_fences_removed,
         "wait-group-reads-removed": wait_group_reads_removed, "init-fences-removed": init_fences_removed,
         "tensormap-acquire-removed": acquire_removed()}

# ---- the mutants ------------------------------------------------------------------------------

KERNELS = {"tma": "matmul_kernel_tma_persistent", "descriptor": "matmul_kernel_descriptor_persistent",
           "descriptor-ws": "matmul_kernel_descriptor_persistent", "attention": "_attn_fwd",
           "attention-causal": "_attn_fwd", "attention-ws": "_attn_fwd"}

# What a pipelined kernel's inverted wait leads to when it does not hang: the wait returns before
# the bytes land (its readers are wgmma, not traced) and the program goes on to re-arm or refill
# a stage the model still has in flight, or to invalidate its barrier.
PARITY_CONSEQUENCES = ("check.wrong-parity", "check.read-before-wait", "mbarrier.arrive-underflow",
                       "model.in-flight-overlap", "model.tx-mismatch", "mbarrier.invalid", "check.wait-disagrees",
                       "model.deadlock", "check.race-war", "check.race-raw")
STMATRIX = ("Triton writes the stored tile with stmatrix, which tmakit does not trace (docs/check.md): "
            "{} has no ordinary shared store to judge")


def hang_or_mismatch():
    return {"timeout": [("check.hang", "waits")], "completed": [("model.tx-mismatch", "edited")]}


# run: triton_tutorials.py --only RUN; edit: the kind and its occurrence (None: the kernel as
# Triton made it); expect: rules by outcome ("always", "completed", "timeout", "fault"), each
# (rule, anchor): the finding must be at one of the anchor's places (any frame of its chain),
# None = any line; a tuple of rules = any one of them. Anchors: "waits" (every try_wait of the
# kernel), "edited" (the first line the edit changes), "tensor-ops" (every TMA load and store),
# "stores". Written from docs/check-replay.md before any run.
MUTANTS = {
    "tma-clean": {"run": "tma", "edit": None, "what": "none (Triton's kernel as it is)", "expect": {}},
    "tma-expect-long16": {"run": "tma", "edit": expect_tx(+16, 0), "expect": hang_or_mismatch(),
                          "what": "the first arrive.expect_tx (the prologue's, stage 0) armed 16 bytes long"},
    "tma-expect-short16": {"run": "tma", "edit": expect_tx(-16, 0), "expect": hang_or_mismatch(),
                           "what": "the first arrive.expect_tx armed 16 bytes short"},
    "tma-arrival-count-plus1": {"run": "tma", "edit": arrival_count(+1, 0), "expect": {"timeout": [("check.hang", "waits")]},
                                "what": "the first mbarrier.init (stage 0) for 2 arrivals; one thread arrives"},
    "tma-parity-flipped": {"run": "tma", "edit": parity_flipped(0),
                           "expect": {"timeout": [("check.hang", "waits")], "completed": [(PARITY_CONSEQUENCES, None)]},
                           "what": "the k-loop's wait (the kernel's one try_wait) polls the other parity"},
    "tma-store-fences-removed": {"run": "tma", "edit": store_fences_removed, "expect": {},
                                 "limit": STMATRIX.format("model.missing-proxy-fence"),
                                 "what": "the fence.proxy.async before each TMA store (the epilogue's) removed"},
    "tma-wait-group-reads-removed": {"run": "tma", "edit": wait_group_reads_removed, "expect": {},
                                     "limit": STMATRIX.format("model.use-before-completion / check.race-war"),
                                     "what": "the cp.async.bulk.wait_group.read before the epilogue rewrites "
                                             "its buffer removed (the previous tile's store may still read it)"},
    "descriptor-clean": {"run": "descriptor", "edit": None, "what": "none", "expect": {}},
    "descriptor-expect-long16": {"run": "descriptor", "edit": expect_tx(+16, 0), "expect": hang_or_mismatch(),
                                 "what": "the first arrive.expect_tx armed 16 bytes long"},
    "descriptor-tensormap-acquire-removed": {
        "run": "descriptor", "edit": acquire_removed(0), "expect": {"always": [("check.tensormap-fence-missing", "tensor-ops")]},
        "what": "the first fence.proxy.tensormap::generic.acquire (a_desc's, built on the device) removed"},
    "descriptor-ws-clean": {"run": "descriptor-ws", "edit": None, "what": "none", "expect": {}},
    "descriptor-ws-expect-long16": {"run": "descriptor-ws", "edit": expect_tx(+16, 0), "expect": hang_or_mismatch(),
                                    "what": "the producer partition's first arrive.expect_tx armed 16 bytes long"},
    "descriptor-ws-tensormap-acquire-removed": {
        "run": "descriptor-ws", "edit": acquire_removed(0),
        "expect": {"always": [("check.tensormap-fence-missing", "tensor-ops")]},
        "what": "the first fence.proxy.tensormap::generic.acquire (the producer's a_desc) removed"},
    "attention-clean": {"run": "attention", "edit": None, "what": "none", "expect": {}},
    "attention-expect-short16": {"run": "attention", "edit": expect_tx(-16, 0), "expect": hang_or_mismatch(),
                                 "what": "the first arrive.expect_tx (Q's tile) armed 16 bytes short"},
    "attention-expect-long16": {"run": "attention", "edit": expect_tx(+16, 1), "expect": hang_or_mismatch(),
                                "what": "the second arrive.expect_tx (the K loop's first stage) armed 16 bytes long"},
    "attention-arrival-count-plus1": {"run": "attention", "edit": arrival_count(+1, 0),
                                      "expect": {"timeout": [("check.hang", "waits")]},
                                      "what": "the first mbarrier.init (Q's barrier) for 2 arrivals"},
    "attention-parity-flipped": {"run": "attention", "edit": parity_flipped(1),
                                 "expect": {"timeout": [("check.hang", "waits")], "completed": [(PARITY_CONSEQUENCES, None)]},
                                 "what": "the second try_wait (K's, in the inner loop) polls the other parity"},
    # The output tile is written by stmatrix (not traced), but the st.shared of the row statistics'
    # layout change (tutorial line 241) writes the first 512 bytes of the same buffer just before,
    # and nothing fences those either.
    "attention-store-fences-removed": {"run": "attention", "edit": store_fences_removed,
                                       "expect": {"always": [("model.missing-proxy-fence", "stores")]},
                                       "what": "the fence.proxy.async before the output's TMA store removed"},
    "attention-causal-clean": {"run": "attention-causal", "edit": None, "what": "none", "expect": {}},
    "attention-causal-expect-long16": {"run": "attention-causal", "edit": expect_tx(+16, 1), "expect": hang_or_mismatch(),
                                       "what": "the second arrive.expect_tx (the off-band loop's first K stage) "
                                               "armed 16 bytes long"},
    "attention-ws-clean": {"run": "attention-ws", "edit": None, "what": "none", "expect": {}},
    "attention-ws-expect-long16": {"run": "attention-ws", "edit": expect_tx(+16, 0), "expect": hang_or_mismatch(),
                                   "what": "the first arrive.expect_tx armed 16 bytes long"},
    "attention-ws-store-fences-removed": {"run": "attention-ws", "edit": store_fences_removed,
                                          "expect": {"always": [("model.missing-proxy-fence", "stores")]},
                                          "what": "the fence.proxy.async before each consumer partition's TMA "
                                                  "store of the output removed"},
}


def target_kernel(run, lines):
    """The run's kernel in this module (found by its .entry name), or None."""
    ks = [k for k in pm.kernels(lines) if k.name == KERNELS[run]]
    if len(ks) > 1:
        raise NotApplicable(f"{len(ks)} kernels named {KERNELS[run]} in the module")
    return ks[0] if ks else None


def mutate(name, text):
    """(new text, edits, kernel) or (text, [], None) when the module lacks the kernel."""
    lines = text.split("\n")
    k = target_kernel(MUTANTS[name]["run"], lines)
    if k is None or MUTANTS[name]["edit"] is None:
        return text, [], k
    new, edits = pm.apply_edits(MUTANTS[name]["edit"](lines, k), lines)
    return "\n".join(new), edits, k


def places(name, text, edits):
    """{anchor: [[file, line], ...]} in the unmutated text: where findings are expected."""
    lines = text.split("\n")
    k = target_kernel(MUTANTS[name]["run"], lines)
    if k is None:
        return {}

    def at(indices):
        return sorted({tuple(pm.place(lines, i, k) or ("?", 0)) for i in indices})
    out = {"waits": at(k.find(WAIT)), "tensor-ops": at(k.find(TMA_LOAD) + k.find(TMA_STORE)), "stores": at(k.find(TMA_STORE))}
    changed = [line for line, removed, _ in edits if removed]  # not a register's declaration
    if changed:
        out["edited"] = at([changed[0] - 1])
    return {a: [list(p) for p in ps] for a, ps in out.items()}


def filter_main(name):
    return pm.run_filter("triton_tutorial_mutants.py", name, MUTANTS, mutate, places, "TUTORIAL_MUTANT_LOG")


# ---- without a GPU: selftest, excerpts, Triton's PTX ------------------------------------------

def module_runs(lines):
    """The runs whose kernel this module holds, told apart as Triton builds them: the descriptor
    and attention kernels warp-specialized (setmaxnreg) or not, attention causal (two inner loops:
    more than three waits without specialization) or not."""
    names = {k.name for k in pm.kernels(lines)}
    ws = any("setmaxnreg" in l for l in lines)
    runs = [r for r in KERNELS if KERNELS[r] in names and r.endswith("-ws") == ws]
    if "attention" in runs or "attention-causal" in runs:
        k = target_kernel("attention", lines)
        runs = ["attention-causal" if len(k.find(WAIT)) > 3 else "attention"]
    return runs


def selftest(paths):
    failures = 0
    for path in paths:
        text = open(path).read()
        lines = text.split("\n")
        base = os.path.basename(path)
        runs = module_runs(lines)
        if not runs:
            for name in MUTANTS:  # a module without a tutorial kernel passes every filter unchanged
                if mutate(name, text)[0] != text:
                    print(f"FAIL {base} {name}: a module without the kernel was changed")
                    failures += 1
            print(f"ok   {base}: no tutorial kernel; every mutant leaves it unchanged")
            continue
        k = target_kernel(runs[0], lines)
        offers = []
        for kind, edit in KINDS.items():
            try:
                offers.append(f"{kind} ({len(edit(lines, k))} edits)")
            except NotApplicable:
                offers.append(f"{kind} (none)")
        print(f"     {base}: run {runs[0]}, kernel {k.name}; edit kinds: {', '.join(offers)}")
        for name, m in MUTANTS.items():
            if m["run"] not in runs:
                continue
            try:
                new, edits, k = mutate(name, text)
                where = places(name, text, edits)
            except NotApplicable as e:
                print(f"FAIL {base} {name}: {e}")
                failures += 1
                continue
            problems = []
            if m["edit"] is None:
                problems += [] if new == text else ["the clean mutant changed the module"]
            else:
                removed, added = pm.changed_lines(lines, new.split("\n"))
                want_removed = sum(len(rm) for _, rm, _ in edits)
                want_added = sum(len(ad) for _, _, ad in edits)
                if (len(removed), len(added)) != (want_removed, want_added):
                    problems.append(f"{len(removed)} lines removed and {len(added)} added, the edits say "
                                    f"{want_removed} and {want_added}")
                if pm.outside_changed(lines, new.split("\n"), k):
                    problems.append("lines outside the target kernel changed")
            anchors = {a for rules in m["expect"].values() for _, a in rules if a}
            problems += [f"no place for anchor {a}" for a in anchors if not where.get(a) or ["?", 0] in where[a]]
            print(f"{'ok  ' if not problems else 'FAIL'} {base} {name}: "
                  + ("; ".join(f"PTX line {at}: {rm} -> {ad}" for at, rm, ad in edits) or "unchanged")
                  + ("" if not problems else "\n     " + "\n     ".join(problems)))
            failures += bool(problems)
    print(f"{failures} failures")
    return 1 if failures else 0


def excerpt_main(src, out):
    """The lines the mutations read, a neighbour each side and the .loc placing them, from a
    module Triton made of one run's kernel (the committed excerpts tests/gpu/check/triton0?_*.ptx)."""
    lines = open(src).read().split("\n")
    runs = module_runs(lines)
    if not runs:
        raise SystemExit(f"triton_tutorial_mutants.py: no tutorial kernel in {src}")
    k = target_kernel(runs[0], lines)
    body = next(i for i in range(k.start, k.end) if lines[i].strip() == "{")
    keep = set(range(0, k.start)) | set(range(k.start, body + 1)) | {k.end - 1}
    keep.update(k.find(r"^\s*\.reg\s+\.b32\s+%r<\d+>;"))
    sites = []
    for pattern in (ARM, WAIT, INIT, TMA_LOAD, TMA_STORE, BULK_COPY, STORE_FENCE, WAIT_GROUP_READ, INIT_FENCE, ACQUIRE):
        sites += k.find(pattern)
    for i in k.find(WAIT_GROUP_READ):  # what guards_a_reuse reads: the line before, the straight line after
        j = next((j for j in range(i + 1, k.end) if re.search(SHARED_WRITE + "|" + STRAIGHT_END, lines[j])), k.end - 1)
        keep.update(range(max(i - 4, k.start), j + 1))
    for i in k.find(INIT):  # a count in a register: its mov
        c = re.search(INIT, lines[i]).group(2)
        if not c.isdigit():
            sites += k.find(r"^\s*mov\.[ub]32\s+" + re.escape(c) + r"\s*,", before=i)[-1:]
    return pm.write_excerpt(out, lines, keep, sites, k, [
        f"// An excerpt of the PTX Triton 3.6 made of the tutorials' {runs[0]} kernel ({k.name}) for sm_90a,",
        "// cut by `python3 tests/gpu/check/triton_tutorial_mutants.py excerpt`: the lines its mutations change",
        "// and read, a neighbour each side, the .loc placing them. Not a whole module: read by the",
        "// mutations' test (CheckTritonTutorialMutants), never assembled."])


def ptx_main(tutorials, out):
    """Each run's kernel compiled by Triton for sm_90a without a GPU: Triton's driver is replaced
    by a stand-in that names an sm_90 target, the autotuners are pinned to triton_tutorials.py's
    configs, and triton.compile gets the signature the tutorials' launches give (tensor
    descriptors of the pinned block shapes, or pointers for device-built ones)."""
    import importlib.util
    import torch
    import triton
    from triton.backends.compiler import GPUTarget

    class StandIn:
        def get_current_target(self):
            return GPUTarget("cuda", 90, 32)

        def get_active_torch_device(self):
            return torch.device("cuda", 0)

        def is_active(self):
            return True
    triton.runtime.driver.set_active(StandIn())
    torch.cuda.get_device_capability = lambda *a, **k: (9, 0)
    spec = importlib.util.spec_from_file_location("triton_tutorials", TUTORIALS_SCRIPT)
    tt = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tt)
    t9 = tt.load(tutorials, "09-persistent-matmul.py", "tut09_persistent_matmul")
    t6 = tt.load(tutorials, "06-fused-attention.py", "tut06_fused_attention")
    for autotuner, config in ((t9.matmul_kernel_tma_persistent, tt.MATMUL),
                              (t9.matmul_kernel_descriptor_persistent, tt.MATMUL), (t6._attn_fwd, tt.ATTENTION)):
        tt.pin(autotuner, config)
    mm = dict(M="i32", N="i32", K="i32")
    host = {n: f"tensordesc<fp16[{s}]>" for n, s in (("desc_q", "128, 64"), ("desc_k", "64, 64"), ("desc_v", "64, 64"),
                                                      ("desc_o", "128, 64"))}
    att = dict(sm_scale="fp32", M="*fp32", Z="i32", H="i32", N_CTX="i32")
    att_consts = dict(HEAD_DIM=64, FP8_OUTPUT=False, IS_HOPPER=True)
    builds = {
        "tma": (t9.matmul_kernel_tma_persistent, dict(a_desc="tensordesc<fp16[128, 64]>", b_desc="tensordesc<fp16[128, 64]>",
                                                      c_desc="tensordesc<fp16[128, 128]>", **mm),
                dict(FP8_OUTPUT=False, NUM_SMS=132, WARP_SPECIALIZE=False)),
        "descriptor": (t9.matmul_kernel_descriptor_persistent, dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", **mm),
                       dict(NUM_SMS=132, WARP_SPECIALIZE=False, FLATTEN=True)),
        "descriptor-ws": (t9.matmul_kernel_descriptor_persistent, dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", **mm),
                          dict(NUM_SMS=132, WARP_SPECIALIZE=True, FLATTEN=False)),
        "attention-causal": (t6._attn_fwd, dict(att, **host), dict(att_consts, STAGE=3, warp_specialize=False)),
        "attention": (t6._attn_fwd, dict(att, **host), dict(att_consts, STAGE=1, warp_specialize=False)),
        "attention-ws": (t6._attn_fwd, dict(att, **{n: "*fp16" for n in host}), dict(att_consts, STAGE=1, warp_specialize=True)),
    }
    os.makedirs(out, exist_ok=True)
    for run, (autotuner, sig, consts) in builds.items():
        cfg = autotuner.configs[0]
        consts = {**consts, **cfg.kwargs}
        sig = {**sig, **{n: "constexpr" for n in autotuner.fn.arg_names if n in consts}}
        src = triton.compiler.ASTSource(autotuner.fn, sig, consts)
        kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                                options=dict(num_warps=cfg.num_warps, num_stages=cfg.num_stages))
        path = os.path.join(out, run + ".ptx")
        open(path, "w").write(kernel.asm["ptx"])
        print(f"{path}: {kernel.asm['ptx'].count(chr(10))} lines, {kernel.metadata.num_warps} warps")
    return 0


# ---- the GPU run: each mutant under tmakit check ----------------------------------------------

def expectations(m, outcome, where):
    """[(rules, places or None)] for the outcome: a finding by one of `rules` at one of `places`."""
    out = []
    for rule, anchor in m["expect"].get("always", []) + m["expect"].get(outcome or "", []):
        rules = rule if isinstance(rule, tuple) else (rule,)
        out.append((rules, [tuple(p) for p in where.get(anchor, [])] if anchor else None))
    return out


def verdict(m, outcome, exit_status, findings, others):
    """The mutant's verdict from its kernel's findings [(rule, [(file, line) frames])]."""
    found_rules = {r for r, _ in findings}
    if m["edit"] is None:
        return ("FINDINGS ON A CORRECT KERNEL" if findings or others else "NO TRACE OF THE KERNEL" if outcome is None
                else f"NOT COMPLETED ({outcome})" if outcome != "completed"
                else "clean as expected" if exit_status == 0 else f"clean, exit {exit_status}")
    if m.get("limit"):
        return "not seen (a known limit)" if not findings else "found (the limit is gone?)"
    if outcome is None:
        return "NO TRACE OF THE KERNEL"
    want = m["want"]
    if not want:
        return f"NO EXPECTATION FOR OUTCOME {outcome}"
    missing = [w for w in want if not any(r in w[0] and (w[1] is None or set(frames) & set(w[1])) for r, frames in findings)]
    return "found as expected" if not missing else "DIFFERENT" if found_rules else "NOT SEEN"


def run_mutant(name, cli, tutorials, out, env):
    m = MUTANTS[name]
    log, save = os.path.join(out, name + ".filter.jsonl"), os.path.join(out, name)
    for p in (log, save):
        subprocess.run(["rm", "-rf", p])
    cmd = [cli, "check", "--timeout", "5", "--launches", "1", "--ptx-filter", f"{sys.executable} {HERE} filter {name}",
           "--save-trace", save, "--", sys.executable, TUTORIALS_SCRIPT, tutorials, "--only", m["run"],
           "--size", "512", "--warmup", "0", "--iters", "1"]
    t0 = time.monotonic()
    p = subprocess.run(["timeout", "-k", "5", "420"] + cmd, env=dict(env, TUTORIAL_MUTANT_LOG=log),
                       capture_output=True, text=True)
    res = {"mutant": name, "run": m["run"], "what": m["what"], "exit": p.returncode,
           "seconds": round(time.monotonic() - t0, 1), "command": " ".join(cmd),
           "filter_said": [l for l in p.stderr.split("\n") if "PTX filter" in l or "ptx-filter" in l],
           "tutorial_said": [l for l in p.stdout.split("\n") if l.startswith(("06 ", "09 "))],
           "log_tail": p.stderr[-3000:]}
    applied = [json.loads(l) for l in open(log)] if os.path.exists(log) else []
    res["edits"] = applied[0]["edits"] if applied else []
    where = applied[0]["places"] if applied else {}
    if m["edit"] is not None and not res["edits"]:
        res.update(verdict="NOT APPLIED", outcome=None, found=[], expected=[])
        return res
    launches = pm.replayed(cli, save, env)
    mine = [l["report"] for l in launches if l["report"]["kernel"] == KERNELS[m["run"]]]
    outcome = mine[0]["outcome"] if mine else None
    findings = [(f["rule"], pm.frames(f)) for l in mine for f in l["findings"]]
    others = sorted({(f["rule"], os.path.basename(f["file"]), f["line"]) for l in launches
                     if l["report"]["kernel"] != KERNELS[m["run"]] for f in l["report"]["findings"]})
    want = expectations(m, outcome, where)
    res.update(outcome=outcome, places=where, other_launches=[list(x) for x in others], limit=m.get("limit", ""),
               expected=[{"rules": list(rs), "places": ps} for rs, ps in want],
               found=sorted({(rule, fr[0][0], fr[0][1]) for rule, fr in findings}),
               verdict=verdict(dict(m, want=want), outcome, p.returncode, findings, others))
    return res


OK_VERDICTS = ("found as expected", "clean as expected", "not seen (a known limit)")


def device_main(tmakit, tutorials, out, only, jobs):
    from concurrent.futures import ThreadPoolExecutor
    cli = os.path.join(tmakit, "tmakit")
    env = dict(pm.checked_env(HERE, sys.executable, tmakit), PYTHONUNBUFFERED="1")
    if not os.path.isfile(os.path.join(tutorials, "09-persistent-matmul.py")):
        raise SystemExit(f"triton_tutorial_mutants.py: {tutorials} does not hold the tutorials (09-persistent-matmul.py, "
                         "06-fused-attention.py)")
    unknown = [n for n in only if n not in MUTANTS]
    if unknown:
        raise SystemExit(f"triton_tutorial_mutants.py: no mutant {', '.join(unknown)} (list names them)")
    os.makedirs(out, exist_ok=True)
    names = [n for n in MUTANTS if not only or n in only]
    # A few at a time: each run is mostly Python's start, Triton's compile and the instrumenting;
    # processes share the GPU by time slices, so a hung kernel does not stop the others.
    with ThreadPoolExecutor(jobs) as pool:
        results = []
        for res in pool.map(lambda n: run_mutant(n, cli, tutorials, out, env), names):
            results.append(res)
            print(f"== {res['mutant']}: exit {res['exit']}, {res['seconds']} s, outcome {res.get('outcome')}: "
                  f"{res['verdict']}", flush=True)
            for line in res["tutorial_said"] + res["filter_said"] + [
                    f"edit: PTX line {at}: {rm} -> {ad}" for at, rm, ad in res["edits"]] + [
                    f"other launches' findings: {res['other_launches']}"] * bool(res.get("other_launches")):
                print("   " + line, flush=True)
            if res["verdict"] not in OK_VERDICTS:
                print("   " + res["log_tail"].replace("\n", "\n   "), flush=True)
            json.dump(results, open(os.path.join(out, "summary.json"), "w"), indent=1)
    print()
    print(f"{'mutant':40} {'exit':>4} {'outcome':9} {'expected':52} {'found (rule @ file:line)':60} verdict")
    for r in results:
        exp = ", ".join("/".join(w["rules"]) + ("" if w["places"] is None else "@" + ",".join(f"{f}:{l}" for f, l in w["places"]))
                        for w in r["expected"]) or ("nothing (limit)" if r.get("limit") else "nothing")
        found = ", ".join(f"{x[0]}@{x[1]}:{x[2]}" for x in r["found"]) or "nothing"
        print(f"{r['mutant']:40} {str(r['exit']):>4} {str(r.get('outcome')):9} {exp[:52]:52} {found[:60]:60} {r['verdict']}")
    bad = [r for r in results if r["verdict"] not in OK_VERDICTS]
    print(f"{len(results) - len(bad)} of {len(results)} as expected")
    return 1 if bad else 0


def main(argv):
    if argv[:1] == ["list"]:
        for name, m in MUTANTS.items():
            print(f"{name:40} {m['run']:17} {m['what']}\n{'':58}expect {m['expect'] or 'nothing'}"
                  + (f"\n{'':58}limit: {m['limit']}" if m.get("limit") else ""))
        return 0
    status = pm.shared_command(argv, filter_main, selftest, excerpt_main)
    if status is not None:
        return status
    if len(argv) == 3 and argv[0] == "ptx":
        return ptx_main(os.path.abspath(argv[1]), os.path.abspath(argv[2]))
    if argv[:1] == ["device"]:
        opts = dict(zip(argv[1::2], argv[2::2]))
        if not {"--tmakit", "--tutorials", "--out"} <= opts.keys() or len(argv) % 2 != 1:
            print(__doc__)
            return 2
        return device_main(os.path.abspath(opts["--tmakit"]), os.path.abspath(opts["--tutorials"]),
                           os.path.abspath(opts["--out"]), opts["--only"].split(",") if opts.get("--only") else [],
                           int(opts.get("--jobs", 4)))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
