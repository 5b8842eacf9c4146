#!/usr/bin/env python3
"""Several runs of gpu_bench -> the tables of docs/benchmarks.md.

    bench/gpu/summarize.py RUN_DIR [RUN_DIR ...]

Each RUN_DIR holds the bench-*.csv (or bench.csv) that `scripts/gpu-bench.sh device`
writes. For every (workload, implementation, configuration) the ratio to the row's
baseline is taken in each run, and the median over the runs is what is compared: the
best configuration of an implementation is the one with the best median, and its
median and range (min-max over the runs) are printed. Baselines:
  - copy, transpose, split-K, im2col: cudaMemcpy D2D of the same bytes in the same run
    (the `ratio` column gpu_bench writes);
  - multicast: every CTA loading every tile itself, same grid, same run;
  - GEMM feed: each CTA loading A and B itself, same cluster shape, k-block and
    working set, same run.
A row that failed its check in any run is left out and said.
"""
import csv
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def read_runs(dirs):
    runs = []
    for d in dirs:
        rows = []
        for f in sorted(Path(d).glob("bench*.csv")):
            with open(f, newline="") as fh:
                rows += list(csv.DictReader(fh))
        if not rows:
            sys.exit(f"{d}: no bench*.csv")
        runs.append(rows)
    return runs


def multicast_key(r):
    """(workload, grid) of a multicast row: '..., 64 clusters of 2, ...' -> 128."""
    m = re.search(r"(\d+) clusters of (\d+)", r["config"])
    return r["workload"], int(m.group(1)) * int(m.group(2))


def feed_shape(config):
    """'cluster 2x1, k-block 64, S6' -> ('2x1', '64')."""
    m = re.search(r"cluster (\d+x\d+), k-block (\d+)", config)
    return m.group(1), m.group(2)


def feed_key(r):
    return (r["workload"],) + feed_shape(r["config"])


def peer_ratios(run, is_peer, key):
    """ratio of each row to the peer row with the same key in the same run."""
    peers = {key(r): float(r["ms"]) for r in run if is_peer(r)}
    return {(r["workload"], r["impl"], r["config"]): peers[key(r)] / float(r["ms"]) for r in run if key(r) in peers}


def collect(runs):
    """{(workload, impl, config): [ratio per run]}, and the rows that failed a check."""
    ratios, failed = defaultdict(list), set()
    for run in runs:
        for r in run:
            if r["checked"] != "1":
                failed.add((r["workload"], r["impl"], r["config"]))
        plain = [r for r in run if not r["workload"].startswith(("multicast", "gemm feed"))]
        for r in plain:
            ratios[(r["workload"], r["impl"], r["config"])].append(float(r["ratio"]))
        mc = [r for r in run if r["workload"].startswith("multicast")]
        for k, v in peer_ratios(mc, lambda r: r["impl"].startswith("peer"), multicast_key).items():
            ratios[k].append(v)
        feed = [r for r in run if r["workload"].startswith("gemm feed")]
        for k, v in peer_ratios(feed, lambda r: r["impl"].startswith("each CTA"), feed_key).items():
            ratios[k].append(v)
    return ratios, failed


def fmt_range(v):
    return f"{statistics.median(v):.3f} ({min(v):.3f}–{max(v):.3f})" if len(v) > 1 else f"{v[0]:.3f}"


def best_per_impl(ratios, failed, group):
    """{group key: {impl: (config, ratios)}}: the configuration with the best median."""
    out = defaultdict(dict)
    for (wl, impl, cfg), v in ratios.items():
        if (wl, impl, cfg) in failed:
            continue
        g = group(wl, impl, cfg)
        cur = out[g].get(impl)
        if cur is None or statistics.median(v) > statistics.median(cur[1]):
            out[g][impl] = (cfg, v)
    return out


def main():
    runs = read_runs(sys.argv[1:])
    ratios, failed = collect(runs)
    n = len(runs)
    print(f"{n} run(s); ratio = median over the runs (min–max)\n")
    print("| workload | implementation | × baseline | best configuration |\n| --- | --- | ---: | --- |")
    plain = best_per_impl(ratios, failed, lambda wl, impl, cfg: wl)
    for wl, impls in plain.items():
        if wl.startswith(("multicast", "gemm feed")):
            continue
        for impl, (cfg, v) in sorted(impls.items(), key=lambda kv: -statistics.median(kv[1][1])):
            print(f"| {wl} | {impl} | {fmt_range(v)} | {cfg} |")
    print("\nMulticast (× every CTA loading every tile itself, same grid):\n")
    print("| workload | grid | implementation | × peer | best configuration |\n| --- | ---: | --- | ---: | --- |")
    mc = best_per_impl(
        ratios, failed,
        lambda wl, impl, cfg: multicast_key({"workload": wl, "config": cfg}) if wl.startswith("multicast") else None)
    for (wl, grid), impls in sorted((k, v) for k, v in mc.items() if k):
        for impl, (cfg, v) in sorted(impls.items()):
            if not impl.startswith("peer"):
                print(f"| {wl} | {grid} | {impl} | {fmt_range(v)} | {cfg} |")
    print("\nGEMM-operand feed (× each CTA loading A and B itself, same cluster, k-block, working set):\n")
    print("| working set | cluster | k-block | implementation | × peer | peer GB/s (median) |\n| --- | --- | ---: | --- | ---: | ---: |")
    gbs = defaultdict(list)
    for run in runs:
        for r in run:
            if r["workload"].startswith("gemm feed"):
                gbs[(r["workload"], r["impl"], r["config"])].append(float(r["gbs"]))
    for (wl, impl, cfg), v in sorted(ratios.items()):
        if not wl.startswith("gemm feed") or impl.startswith("each CTA") or (wl, impl, cfg) in failed:
            continue
        shape, kb = feed_shape(cfg)
        peer = [k for k in gbs if k[0] == wl and k[1].startswith("each CTA") and feed_shape(k[2]) == (shape, kb)]
        peer_gbs = statistics.median(gbs[peer[0]]) if peer else float("nan")
        print(f"| {wl.replace('gemm feed 16x8 tiles, ', '')} | {shape} | {kb} | {impl} | {fmt_range(v)} | {peer_gbs:.0f} |")
    if failed:
        print("\nFailed their check (left out):", "; ".join(" / ".join(k) for k in sorted(failed)))


if __name__ == "__main__":
    main()
