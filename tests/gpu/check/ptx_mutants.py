"""What the `--ptx-filter` mutant scripts of tests/gpu/check share (cutlass_mutants.py,
triton_tutorial_mutants.py; docs/check-seeded.md): reading a PTX module's kernels and the source
place of a line, applying edits [(index, lines removed, new lines)], checking that an edit stayed
in its kernel, cutting the committed excerpts, and reading a saved trace's replay."""
import json
import os
import re
import subprocess
import sys
from collections import Counter


class NotApplicable(Exception):
    """The kernel is there and the mutation's place is not: the filter fails loudly (exit 1)."""


# ---- reading the module: kernels, .loc, .file --------------------------------------------------

ENTRY = re.compile(r"^(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)")
FUNCTION_OR_TAIL = re.compile(r"^(?:\.visible\s+|\.weak\s+|\.extern\s+)?\.(?:entry|func)\s|^\s*\.file\s")
LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', re.M)


class Kernel:
    def __init__(self, lines, name, start, end):
        self.lines, self.name, self.start, self.end = lines, name, start, end

    def find(self, pattern, after=None, before=None):
        """Indices (into the module's lines) of the kernel's lines matching `pattern`."""
        r = re.compile(pattern)
        lo = self.start if after is None else after + 1
        hi = self.end if before is None else before
        return [i for i in range(lo, hi) if r.search(self.lines[i])]

    def exactly(self, n, pattern, what, **where):
        found = self.find(pattern, **where)
        if len(found) != n:
            raise NotApplicable(f"{what}: {len(found)} in kernel {self.name[:60]}..., expected {n} "
                                f"(pattern {pattern!r})")
        return found


def kernels(lines):
    starts = [(i, m.group(1)) for i, l in enumerate(lines) for m in [ENTRY.match(l)] if m]
    out = []
    for i, name in starts:
        end = next((j for j in range(i + 1, len(lines)) if FUNCTION_OR_TAIL.match(lines[j])), len(lines))
        out.append(Kernel(lines, name, i, end))
    return out


def place(lines, index, kernel):
    """(file's base name, line) of the last .loc before `index` in its kernel, as tmakit's site
    table places the instruction; None where there is none."""
    files = {int(m.group(1)): m.group(2) for m in FILE.finditer("\n".join(lines))}
    for i in range(index, kernel.start, -1):
        m = LOC.match(lines[i])
        if m:
            return os.path.basename(files.get(int(m.group(1)), f"file{m.group(1)}")), int(m.group(2))
    return None


# ---- editing ------------------------------------------------------------------------------------

def declare(k, decl):
    """A register declared after the kernel's `.reg .b32 %r<N>;` line."""
    at = k.exactly(1, r"^\s*\.reg\s+\.b32\s+%r<\d+>;", ".reg .b32 %r<N> declaration")[0]
    return (at + 1, 0, ["\t" + decl])


def operand_replaced(line, old, new):
    """`line` with its one operand `old` (a whole token) replaced by `new`."""
    pattern = re.escape(old) + r"(?![\w$])"
    out, n = re.subn(pattern, new, line)
    if n != 1:
        raise NotApplicable(f"operand {old} appears {n} times in {line.strip()!r}")
    return out


def apply_edits(edits, lines):
    """(new lines, the edits as (PTX line, removed, added)); refuses edits that overlap."""
    edits = sorted(edits, key=lambda e: e[0])
    for (a, n, _), (b, _, _) in zip(edits, edits[1:]):
        if a + n > b:
            raise NotApplicable(f"the edits overlap at PTX line {b + 1}")
    new = list(lines)
    for at, n, added in reversed(edits):
        new[at:at + n] = added
    return new, [(at + 1, [l.strip() for l in lines[at:at + n]], [l.strip() for l in added]) for at, n, added in edits]


def changed_lines(old, new):
    """The lines `new` lost and gained against `old`, each in text order (a multiset difference:
    CUTLASS's kernels are tens of thousands of lines, too many for difflib)."""
    gone, came = Counter(old) - Counter(new), Counter(new) - Counter(old)

    def ordered(lines, counts):
        out = []
        for l in lines:
            if counts[l] > 0:
                counts[l] -= 1
                out.append(l)
        return out
    return ordered(old, gone), ordered(new, came)


def outside_changed(lines, new_lines, k):
    """Whether a line before or after kernel `k` moved or changed."""
    tail = len(lines) - k.end
    return lines[:k.start] != new_lines[:k.start] or lines[len(lines) - tail:] != new_lines[len(new_lines) - tail:]


# ---- excerpts -----------------------------------------------------------------------------------

def write_excerpt(out, lines, keep, sites, k, header):
    """Write to `out` the lines of `keep` and of each site with a neighbour either side, the .loc
    placing each site and the .file lines those name, with `\\t// ...` where lines were left out,
    after the comment lines of `header`."""
    keep = set(keep)
    used_files = set()
    for s in sites:
        keep.update(range(max(s - 1, k.start), min(s + 2, k.end)))
        locs = [i for i in range(k.start, s + 1) if LOC.match(lines[i])]
        keep.update(locs[-1:])  # the .loc that places the line
        if locs:
            used_files.add(LOC.match(lines[locs[-1]]).group(1))
    keep.update(i for i in range(k.end, len(lines))
                for m in [re.match(r"^\s*\.file\s+(\d+)\s", lines[i])] if m and m.group(1) in used_files)
    text = list(header)
    prev = -1
    for i in sorted(x for x in keep if x < len(lines)):
        if prev >= 0 and i != prev + 1:
            text.append("\t// ...")
        text.append(lines[i])
        prev = i
    open(out, "w").write("\n".join(text) + "\n")
    print(f"{out}: {len(text)} lines")
    return 0


def run_filter(script, name, mutants, mutate, places, log_variable):
    """`SCRIPT filter NAME`, the --ptx-filter: the module on standard input, NAME's mutant on standard
    output (`mutate(name, text)` -> (new text, edits, kernel or None)); exit 1 naming what is
    missing where the kernel is there and the place is not, 2 for an unknown mutant. Where the
    module has the kernel and $LOG_VARIABLE names a file, one JSON line is added to it: the
    kernel, the edits and `places(name, text, edits)` (where findings are expected)."""
    if name not in mutants:
        print(f"{script}: no mutant {name!r} (python3 {script} list)", file=sys.stderr)
        return 2
    text = sys.stdin.read()
    try:
        new, edits, k = mutate(name, text)
        where = places(name, text, edits) if k is not None else {}
    except NotApplicable as e:
        print(f"{script}: mutant {name}: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(new)
    if k is not None and os.environ.get(log_variable):
        with open(os.environ[log_variable], "a") as log:
            log.write(json.dumps({"mutant": name, "kernel": k.name, "edits": edits, "places": where}) + "\n")
    return 0


def shared_command(argv, filter_main, selftest, excerpt_main):
    """The commands every mutant script has (`filter NAME`, `selftest PTX...`, `excerpt IN OUT`):
    its exit status, or None for another command."""
    if len(argv) == 2 and argv[0] == "filter":
        return filter_main(argv[1])
    if len(argv) >= 2 and argv[0] == "selftest":
        return selftest(argv[1:])
    if len(argv) == 3 and argv[0] == "excerpt":
        return excerpt_main(argv[1], argv[2])
    return None


# ---- the GPU run --------------------------------------------------------------------------------

def checked_env(here, python, tmakit):
    """The environment the mutants run in (tmakit's folder on LD_LIBRARY_PATH); refuses paths the
    filter's command (split at spaces by tmakit check) would break."""
    if " " in here or " " in python:
        raise SystemExit(f"{os.path.basename(here)}: the filter's command is split at spaces: move the script (or "
                         "Python) to a path without one")
    return dict(os.environ, LD_LIBRARY_PATH=tmakit + ":" + os.environ.get("LD_LIBRARY_PATH", ""))


def replayed(cli, save, env):
    """The launches of a saved trace folder, as `tmakit check --replay --json` reports them."""
    r = subprocess.run([cli, "check", "--replay", save, "--json"], env=env, capture_output=True, text=True)
    try:
        return json.loads(r.stdout)["launches"]
    except (ValueError, KeyError):
        return []


def frames(f):
    """A finding's places, innermost first: every frame of its inlining chain (docs/check-replay.md,
    "Places"), as (file's base name, line)."""
    return [(os.path.basename(x["file"]), x["line"]) for x in f.get("frames", [])] or [
        (os.path.basename(f["file"]), f["line"])]
