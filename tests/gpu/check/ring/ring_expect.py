"""What `tmakit check` must say about each mode of the rings (ring.cu on cuda::ptx, ring_devlib.cu
on tmakit's device library): the rule, at the line its source marks `// at:TAG`, by the outcome
the GPU gave. Written from docs/check-replay.md before the runs; read by
scripts/check-real-device.sh to judge the H100's runs (`verdict`) and to write the expectations of
their recorded traces (`unpack`).

  python3 ring_expect.py verdict --tmakit DIR SOURCE MODE TRACES
      replays TRACES (a --save-trace folder) and compares the ring kernel's launch with MODE's
      expectation at SOURCE's markers; prints one line; exit 0 as expected, 1 not
"""
import json
import os
import subprocess
import sys

# mode -> outcome -> [(rules, marker)]: a finding by one of `rules` at the marker's line. The
# parity bug hangs when the stage's next load has landed before the stale wait (the H100's
# recorded run), or reads the stage early when it has not.
EXPECT = {
    "clean": {"completed": []},
    "parity": {"timeout": [(("check.hang",), "wait")],
               "completed": [(("check.wrong-parity", "check.read-before-wait", "check.race-raw"), "read")]},
    "refill": {"completed": [(("check.race-war",), "load")]},
    "nofence": {"completed": [(("model.missing-proxy-fence",), "store")]},
}


def marker_line(source, tag):
    """The line of `source` that ends with `// at:TAG` (exactly one)."""
    hits = [i + 1 for i, l in enumerate(open(source).read().split("\n")) if l.rstrip().endswith("// at:" + tag)]
    if len(hits) != 1:
        raise SystemExit(f"ring_expect.py: {len(hits)} lines of {source} carry '// at:{tag}', expected 1")
    return hits[0]


def expected(source, mode, outcome):
    """[(rules, file name, line)] for the mode and outcome; None when the outcome is not one the
    mode may have."""
    by_outcome = EXPECT[mode].get(outcome)
    if by_outcome is None:
        return None
    return [(rules, os.path.basename(source), marker_line(source, tag)) for rules, tag in by_outcome]


def verdict(tmakit, source, mode, traces):
    r = subprocess.run([os.path.join(tmakit, "tmakit"), "check", "--replay", traces, "--json"], capture_output=True, text=True)
    try:
        j = json.loads(r.stdout)
        reports = [l["report"] for l in j["launches"]] if "launches" in j else [j]
    except ValueError:
        return False, f"no replay of {traces}: {r.stderr.strip()[-300:]}"
    ring = [rep for rep in reports if rep["kernel"].startswith(("_Z4ring", "_Z11ring_devlib"))]
    if len(ring) != 1:
        return False, f"{len(ring)} launches of the ring kernel in {traces}"
    rep = ring[0]
    want = expected(source, mode, rep["outcome"])
    frames = [(f["rule"], {(os.path.basename(x["file"]), x["line"]) for x in f.get("frames", [])}
               | {(os.path.basename(f["file"]), f["line"])}) for f in rep["findings"]]
    found = sorted({f"{f['rule']}@{os.path.basename(f['file'])}:{f['line']}" for f in rep["findings"]})
    said = f"outcome {rep['outcome']}, found {', '.join(found) or 'nothing'}"
    if want is None:
        return False, f"{said}: an outcome the {mode} ring should not have"
    if not want:
        return not found, f"{said}; expected nothing"
    missing = [w for w in want if not any(rule in w[0] and (w[1], w[2]) in places for rule, places in frames)]
    return not missing, f"{said}; expected " + ", ".join(f"{'/'.join(w[0])}@{w[1]}:{w[2]}" for w in want)


def main(argv):
    if len(argv) == 6 and argv[0] == "verdict" and argv[1] == "--tmakit" and argv[4] in EXPECT:
        ok, text = verdict(os.path.abspath(argv[2]), argv[3], argv[4], argv[5])
        print(f"   verdict {os.path.basename(argv[3])} {argv[4]}: {'AS EXPECTED' if ok else 'DIFFERENT'}: {text}")
        return 0 if ok else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
