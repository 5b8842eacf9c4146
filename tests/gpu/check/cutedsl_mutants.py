"""Seeded bugs in a CuTe DSL kernel's own PTX for `tmakit check` (docs/check.md, "CuTe DSL").

The kernel is tests/corpus/cutedsl/tma_copy.sm_90a.ptx: compiled by nvidia-cutlass-dsl from
tests/corpus/gen/cutedsl_kernels.py (one TMA tile load completing on an mbarrier, one TMA tile
store in a bulk group, a CTA per 64x64 tile), its PTX kept with CUTE_DSL_KEEP=ptx. The DSL cannot
run on the lent GPU machine, so tests/gpu/check/cutedsl/tma_copy_launch.cpp loads that PTX and
launches it through the driver API as the DSL's runtime would; each mutant is ONE line of the
PTX edited, the launcher given the edited module.

  python3 cutedsl_mutants.py list                  names, edits, expected rules
  python3 cutedsl_mutants.py selftest PTX          every edit applied to PTX: each changes exactly one line
  python3 cutedsl_mutants.py device --tmakit DIR --launcher PATH --ptx PTX --out OUT
                                                   each mutant under `tmakit check`: OUT/summary.json, a
                                                   table, the traces in OUT/<name>; exit 1 unless each
                                                   is as expected
"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ptx_mutants import replayed  # noqa: E402

# name: (what, the line's pattern, its replacement, outcome the hardware should show, rules any of
# which is the finding expected; none for the clean run). Each pattern matches exactly one line.
WAIT = r"mbarrier\.try_wait\.parity\.shared\.b64 P1, \[(%r\d+)\], 0, 10000000;"
MUTANTS = {
    "clean": ("the kernel as the DSL compiled it", None, None, "completed", []),
    "expect-long16": ("the load's expect_tx 16 bytes more than the box", r"mov\.b32 \t(%r\d+), 8192;",
                      r"mov.b32 \t\1, 8208;", "timeout", ["check.hang"]),
    "expect-short16": ("the load's expect_tx 16 bytes less than the box", r"mov\.b32 \t(%r\d+), 8192;",
                       r"mov.b32 \t\1, 8176;", "timeout", ["check.hang", "model.tx-mismatch"]),
    "arrival-count-plus1": ("the mbarrier initialised for 2 arrivals (one arrives)",
                            r"mov\.b32 \t(%r\d+), 1;\n(\s*)mbarrier\.init", r"mov.b32 \t\1, 2;\n\2mbarrier.init",
                            "timeout", ["check.hang"]),
    "parity-flipped": ("the wait on parity 1: it returns before the load lands", WAIT,
                       r"mbarrier.try_wait.parity.shared.b64 P1, [\1], 1, 10000000;", "completed",
                       ["model.in-flight-overlap", "model.use-before-completion", "check.wrong-parity"]),
}


def mutate(text, name):
    """NAME's module: the text with its one line edited (ValueError where the pattern is not there once)."""
    _, pattern, repl, _, _ = MUTANTS[name]
    if pattern is None:
        return text
    found = re.findall(pattern, text)
    if len(found) != 1:
        raise ValueError(f"{name}: `{pattern}` matches {len(found)} times, not once")
    return re.sub(pattern, repl, text, count=1)


def selftest(path):
    text = open(path).read()
    bad = 0
    for name in MUTANTS:
        try:
            new = mutate(text, name)
        except ValueError as e:
            print(e)
            bad += 1
            continue
        a, b = text.split("\n"), new.split("\n")
        changed = [i for i in range(min(len(a), len(b))) if a[i] != b[i]]
        want = 0 if MUTANTS[name][1] is None else 1
        if len(a) != len(b) or len(changed) != want:
            print(f"{name}: {len(changed)} lines changed, {len(b) - len(a)} added; expected {want} and 0")
            bad += 1
        else:
            print(f"{name}: " + (f"line {changed[0] + 1}: {a[changed[0]].strip()} -> {b[changed[0]].strip()}" if changed
                                  else "unchanged"))
    return 1 if bad else 0


def run(name, cli, launcher, text, out, env):
    what, _, _, outcome_want, rules = MUTANTS[name]
    ptx = os.path.join(out, name + ".ptx")
    open(ptx, "w").write(mutate(text, name))
    save = os.path.join(out, name)
    subprocess.run(["rm", "-rf", save])
    cmd = [cli, "check", "--timeout", "10", "--save-trace", save, "--", launcher, ptx]
    t0 = time.monotonic()
    p = subprocess.run(["timeout", "-k", "5", "120"] + cmd, env=env, capture_output=True, text=True)
    launches = replayed(cli, save, env)
    report = launches[0]["report"] if launches else {}
    found = sorted({(f["rule"], os.path.basename(f["file"]), f["line"]) for f in report.get("findings", [])})
    outcome = report.get("outcome")
    copied = "OK" if "tma_copy_launch: OK" in p.stdout else "WRONG" if "WRONG" in p.stdout else "-"
    if not launches:
        verdict = "NO TRACE OF THE KERNEL"
    elif not rules:
        verdict = ("clean as expected" if not found and outcome == "completed" and p.returncode == 0 and copied == "OK"
                   else "FINDINGS ON A CORRECT KERNEL" if found else f"NOT CLEAN (exit {p.returncode}, {outcome}, {copied})")
    elif outcome != outcome_want:
        verdict = f"OUTCOME {outcome}, NOT {outcome_want}"
    else:
        verdict = "found as expected" if any(r in rules for r, _, _ in found) else "NOT SEEN"
    return {"mutant": name, "what": what, "exit": p.returncode, "seconds": round(time.monotonic() - t0, 1),
            "outcome": outcome, "copy": copied, "expected": rules, "found": [list(x) for x in found],
            "verdict": verdict, "command": " ".join(cmd), "log_tail": p.stderr[-2000:]}


def device_main(tmakit, launcher, ptx, out):
    cli = os.path.join(tmakit, "tmakit")
    env = dict(os.environ, LD_LIBRARY_PATH=tmakit + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
    os.makedirs(out, exist_ok=True)
    text = open(ptx).read()
    results = []
    for name in MUTANTS:
        r = run(name, cli, launcher, text, out, env)
        results.append(r)
        print(f"== {name}: exit {r['exit']}, {r['seconds']} s, outcome {r['outcome']}, copy {r['copy']}: {r['verdict']}",
              flush=True)
    json.dump(results, open(os.path.join(out, "summary.json"), "w"), indent=1)
    print(f"\n{'mutant':20} {'exit':>4} {'outcome':9} {'expected':52} {'found (rule @ file:line)':52} verdict")
    for r in results:
        found = ", ".join(f"{x[0]}@{x[1]}:{x[2]}" for x in r["found"]) or "nothing"
        print(f"{r['mutant']:20} {r['exit']:>4} {str(r['outcome']):9} {'/'.join(r['expected']) or 'nothing':52} "
              f"{found:52} {r['verdict']}")
    bad = [r for r in results if r["verdict"] not in ("found as expected", "clean as expected")]
    print(f"{len(results) - len(bad)} of {len(results)} as expected")
    return 1 if bad else 0


def main(argv):
    if argv[:1] == ["list"]:
        for name, (what, pattern, repl, outcome, rules) in MUTANTS.items():
            print(f"{name:20} {what}; {outcome}; expect {' or '.join(rules) or 'nothing'}")
        return 0
    if len(argv) == 2 and argv[0] == "selftest":
        return selftest(argv[1])
    if argv[:1] == ["device"]:
        opts = dict(zip(argv[1::2], argv[2::2]))
        if not all(k in opts for k in ("--tmakit", "--launcher", "--ptx", "--out")):
            print(__doc__)
            return 2
        return device_main(os.path.abspath(opts["--tmakit"]), os.path.abspath(opts["--launcher"]),
                           os.path.abspath(opts["--ptx"]), os.path.abspath(opts["--out"]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
