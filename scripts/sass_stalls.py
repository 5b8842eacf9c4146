#!/usr/bin/env python3
"""Where a kernel's warps wait, from Nsight Compute's SASS source page (scripts/check-real-device.sh,
part "profile": `ncu --section SourceCounters --page source --print-source sass --csv`).

  sass_stalls.py CSV [--top N]                 the N SASS lines with most warp stall samples
  sass_stalls.py CSV --executed LO HI [--lines] the lines run between LO and HI times (a loop's
        body: CUTLASS's producer runs its lines once a k-block, its consumers eight times), their
        share of the samples and the stall reasons that make it up; --lines lists each line.
"""
import argparse
import collections
import csv
import sys


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def read(path):
    with open(path, newline="") as f:
        lines = f.readlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"Address"')), None)
    if start is None:
        sys.exit(f"sass_stalls.py: {path}: no \"Address\" header line: not Nsight Compute's SASS source page in CSV")
    rows = list(csv.reader(lines[start:]))
    return rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--executed", type=float, nargs=2, metavar=("LO", "HI"))
    ap.add_argument("--lines", action="store_true")
    a = ap.parse_args()
    header, rows = read(a.csv)
    col = {h: i for i, h in enumerate(header)}
    for need in ("Source", "Warp Stall Sampling (All Samples)", "Instructions Executed"):
        if need not in col:
            sys.exit(f"sass_stalls.py: {a.csv}: no column {need!r}")
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    samples = lambda r: number(r[col["Warp Stall Sampling (All Samples)"]])
    executed = lambda r: int(number(r[col["Instructions Executed"]]))
    total = sum(samples(r) for r in rows) or 1.0
    print(f"total samples {total:.0f} instructions {len(rows)}")

    def show(r):
        why = " ".join(f"{h[6:]}={number(r[col[h]]):.0f}" for h in reasons if number(r[col[h]]) >= 0.1 * samples(r) > 0)
        print(f"{samples(r):8.0f} {100 * samples(r) / total:5.1f}% {executed(r):9d}x  {r[col['Address']]}  "
              f"{r[col['Source']].strip()[:72]:72s} {why}")

    if not a.executed:
        for r in sorted(rows, key=samples, reverse=True)[:a.top]:
            show(r)
        return
    lo, hi = a.executed
    chosen = [r for r in rows if lo <= executed(r) <= hi]
    share = sum(samples(r) for r in chosen)
    print(f"{len(chosen)} lines run {lo:.0f}..{hi:.0f} times: {share:.0f} samples ({100 * share / total:.1f} %)")
    by_reason = collections.Counter({h[6:]: sum(number(r[col[h]]) for r in chosen) for h in reasons})
    print("  " + ", ".join(f"{k} {v:.0f}" for k, v in by_reason.most_common(8) if v))
    for r in chosen if a.lines else sorted(chosen, key=samples, reverse=True)[:a.top]:
        show(r)


if __name__ == "__main__":
    main()
