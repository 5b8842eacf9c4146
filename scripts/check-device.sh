#!/usr/bin/env bash
# The seeded bugs of `tmakit check` on a GPU machine (docs/check-seeded.md), in three parts:
#   scripts/check-device.sh build    here: build check_seeded (+ its PTX), tmakit, libtmakit_watch.so
#                                    and tmakit-ptxas (BUILD_DIR, default build), stripped, with the
#                                    libfmt they need, into .gpubuild/check (carry .gpubuild/check).
#   scripts/check-device.sh device   on the GPU machine, from the repository root: every case and its
#                                    clean twin with --self-capture (the program's own trace, bounded
#                                    wait), then under `tmakit check --timeout 2 --save-trace` where
#                                    tmakit was built, each trace replayed; the overhead run; the
#                                    Triton TMA kernel (host and device descriptors) plain and under
#                                    `tmakit check`. Log in $OUT/log.txt, everything in
#                                    $OUT/check-device.tar.xz. CHECK_PARTS picks sections:
#                                    "seeded checked overhead triton triton-mutants". Well under 8 minutes.
#                                    "triton-mutants": tests/gpu/check/triton_mutants.py all (each mutant
#                                    plain and under tmakit check --timeout 3; traces in the tar).
#   scripts/check-device.sh unpack-mutants DIR [DEST]   here: the mutants' traces -> DEST/triton-<name>/
#                                    (DEST defaults to tests/vectors/check).
#   scripts/check-device.sh unpack DIR [DEST]   here: DIR's self-captured traces -> DEST/<case>/ (and
#                                    <case>.clean/; DEST defaults to tests/vectors/check), each with its
#                                    expect.json (cases.json's rules at the marked lines of
#                                    seeded_kernels.cu, and what the H100 did).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# CHECK_BIN_DIR: where build puts the binaries and device reads them (default .gpubuild/check).
C=${CHECK_BIN_DIR:-$ROOT/.gpubuild/check}

build() {
  local b=${BUILD_DIR:-$ROOT/build}
  ninja -C "$b" -j2 check_seeded || exit 1
  # tmakit check's own parts: the device half runs the --self-capture recordings without them.
  ninja -C "$b" -j2 tmakit tmakit_watch tmakit_ptxas || echo "warning: tmakit/libtmakit_watch.so/tmakit-ptxas did not build: device runs --self-capture only"
  rm -rf "$C" && mkdir -p "$C"
  strip -o "$C/check_seeded" "$b/tests/gpu/check/check_seeded"
  cp "$b/tests/gpu/check/seeded_kernels.ptx" "$C/"
  [ -f "$b/tools/tmakit/tmakit" ] && strip -o "$C/tmakit" "$b/tools/tmakit/tmakit"
  [ -f "$b/src/watch/libtmakit_watch.so" ] && strip -o "$C/libtmakit_watch.so" "$b/src/watch/libtmakit_watch.so"
  [ -f "$b/tools/check/tmakit-ptxas" ] && strip -o "$C/tmakit-ptxas" "$b/tools/check/tmakit-ptxas"
  local fmt; fmt=$(ldd "$b/tests/gpu/check/check_seeded" "$b/tools/tmakit/tmakit" 2>/dev/null | awk '/libfmt/ {print $3; exit}')
  [ -n "$fmt" ] && cp -L "$fmt" "$C/"
  ls -la "$C" && du -sh "$C"
}

# One case (or its clean twin, "$2" = --clean): the self-captured run, then the same under tmakit check.
one() {
  local c=$1 flag=${2:-} name=$1 out=$3 parts=$4
  [ -n "$flag" ] && name=$c.clean
  if [[ $parts == *" seeded "* ]]; then
    echo "-- $name (self-capture)"
    timeout -k 5 30 "$C/check_seeded" "$c" $flag --timeout 2 --self-capture "$out/traces/$name" 2>&1
    echo "   exit $?"
    if [ -x "$C/tmakit" ] && [ -f "$out/traces/$name/meta.json" ]; then
      timeout -k 5 60 "$C/tmakit" check --replay "$out/traces/$name" 2>&1 | head -20 | sed 's/^/   replay: /'
    fi
  fi
  if [[ $parts == *" checked "* ]] && [ -x "$C/tmakit" ]; then
    echo "-- $name (tmakit check --timeout 2)"
    timeout -k 5 60 "$C/tmakit" check --timeout 2 --save-trace "$out/checked/$name" -- \
      "$C/check_seeded" "$c" $flag --timeout 30 2>&1 | head -40
    echo "   exit ${PIPESTATUS[0]}"
  fi
}

device() {
  local out=${OUT:-$ROOT/check-out}
  rm -rf "$out/traces" "$out/checked" && mkdir -p "$out/traces" "$out/checked"
  exec > >(tee "$out/log.txt") 2>&1
  local start=$SECONDS parts=" ${CHECK_PARTS:-seeded checked overhead triton triton-mutants} "
  date -u
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
  export LD_LIBRARY_PATH=$C${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  ls -la "$C"
  echo "== seeded cases and their clean twins"
  for c in $("$C/check_seeded" list | awk '{print $1}'); do
    one "$c" "" "$out" "$parts"
    one "$c" --clean "$out" "$parts"
  done
  echo "seeded cases took $((SECONDS - start)) s"
  if [[ $parts == *" overhead "* ]]; then
    echo "== overhead: copy_tiles plain vs instrumented"
    for ops in all copies barriers; do
      timeout -k 5 120 "$C/check_seeded" overhead --ops $ops --iterations 20 2>&1
    done
  fi
  if [[ $parts == *" triton "* ]]; then
    echo "== Triton TMA kernel (the ptxas route)"
    python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
    local t=$ROOT/tests/gpu/check/triton_tma.py
    for m in host device; do
      echo "-- $m descriptors, plain"
      timeout -k 5 120 python3 "$t" $m 2>&1 | tail -3
      if [ -x "$C/tmakit" ]; then
        echo "-- $m descriptors, under tmakit check --timeout 10"
        timeout -k 5 180 "$C/tmakit" check --timeout 10 --save-trace "$out/checked/triton-$m" -- python3 "$t" $m 2>&1 | tail -30
        echo "   exit ${PIPESTATUS[0]}"
      fi
    done
  fi
  if [[ $parts == *" triton-mutants "* ]] && [ -x "$C/tmakit" ]; then
    echo "== Triton mutants (tests/gpu/check/triton_mutants.py)"
    local mt; mt=$(mktemp -d)
    timeout -k 5 220 python3 "$ROOT/tests/gpu/check/triton_mutants.py" all --tmakit "$C" --out "$mt" 2>&1
    echo "   exit $?"
    mkdir -p "$out/checked/triton-mutants" && cp -r "$mt"/. "$out/checked/triton-mutants/"
    rm -rf "$mt"
  fi
  echo "device half took $((SECONDS - start)) s"
  tar -C "$out" -cJf "$out/check-device.tar.xz" traces checked log.txt
  rm -rf "$out/traces" "$out/checked"
  ls -la "$out"
}

# DIR: what `device` left in $OUT (check-device.tar.xz, or traces/ already unpacked).
unpack() {
  local from=$1 dest=${2:-$ROOT/tests/vectors/check} tmp; tmp=$(mktemp -d)
  if [ -f "$from/check-device.tar.xz" ]; then tar -C "$tmp" -xJf "$from/check-device.tar.xz"
  else cp -r "$from/traces" "$tmp/" && { [ ! -f "$from/log.txt" ] || cp "$from/log.txt" "$tmp/"; }; fi
  python3 - "$tmp/traces" "$ROOT" "$tmp/log.txt" "$dest" <<'EOF'
import json, os, re, shutil, sys
traces, root, log_path, dest = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
observed, current = {}, None  # the program's "observed:" line of each self-captured run, from the log
for l in (open(log_path).read().split("\n") if os.path.exists(log_path) else []):
    m = re.match(r"-- (\S+) \(self-capture\)", l)
    if m: current = m.group(1)
    elif l.startswith("-- "): current = None
    elif current and l.startswith("observed: "): observed[current] = l[len("observed: "):]
src = os.path.join(root, "tests/gpu/check/seeded_kernels.cu")
cases = json.load(open(os.path.join(root, "tests/gpu/check/cases.json")))
log = {}
lines = open(src).read().split("\n")
def line_of(case, at):
    for i, l in enumerate(lines):
        if re.search(r"seed:%s:%s\b" % (re.escape(case), re.escape(at)), l):
            return i + 1
    raise SystemExit("no marker seed:%s:%s in %s" % (case, at, src))
os.makedirs(dest, exist_ok=True)
for name in sorted(os.listdir(traces)):
    d = os.path.join(traces, name)
    if not os.path.isfile(os.path.join(d, "meta.json")):
        print("skipped (no meta.json):", name); continue
    case, clean = name.removesuffix(".clean"), name.endswith(".clean")
    meta = json.load(open(os.path.join(d, "meta.json")))
    want = [] if clean else cases[case].get("always", []) + cases[case].get(meta["outcome"], [])
    what = {"completed": "completed", "timeout": "still running after %s s (hung)" % meta.get("timeout_s"),
            "fault": "faulted: " + meta.get("driver_result", ""), "launch_error": "launch refused: " + meta.get("driver_result", "")}
    expect = {"hardware": "the H100 " + what.get(meta["outcome"], meta["outcome"]) +
                          (" (observed: %s)" % observed[name] if name in observed else ""),
              "outcome": meta["outcome"], "clean": clean,
              "diagnoses": [{"rule": w["rule"], "file": "seeded_kernels.cu", "line": line_of(case, w["at"])} for w in want]}
    out = os.path.join(dest, name)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(d, out)
    p = os.path.join(out, "module.ptx")
    if os.path.exists(p): os.remove(p)  # the same for every case and large: sites.json carries what the replay reads
    json.dump(expect, open(os.path.join(out, "expect.json"), "w"), indent=1)
    print(name, meta["outcome"], [(w["rule"], w["line"]) for w in expect["diagnoses"]])
EOF
  [ -f "$tmp/log.txt" ] && cp "$tmp/log.txt" "$dest/h100-log.txt"
  rm -rf "$tmp"
  du -sh "$dest"
}

# DIR: what `device` left with the triton-mutants part: each mutant's saved launch, unpacked as
# tests/vectors/check/triton-<name>/ with expect.json (the script's expected rules at its marked
# lines, for the outcome recorded) and what the H100 did, plain and under check (summary.json).
unpack_mutants() {
  local from=$1 dest=${2:-$ROOT/tests/vectors/check} tmp; tmp=$(mktemp -d)
  if [ -f "$from/check-device.tar.xz" ]; then tar -C "$tmp" -xJf "$from/check-device.tar.xz"; else cp -r "$from"/. "$tmp/"; fi
  python3 - "$tmp/checked/triton-mutants" "$ROOT" "$tmp/log.txt" "$dest" <<'EOF'
import json, os, shutil, sys
src, root, dest = sys.argv[1], sys.argv[2], sys.argv[4]
sys.path.insert(0, os.path.join(root, "tests/gpu/check"))
import triton_mutants as tm
summary = {r["mutant"]: r for r in json.load(open(os.path.join(src, "summary.json")))}
log = open(sys.argv[3]).read().split("\n") if os.path.exists(sys.argv[3]) else []
when = "%s (%s)" % (log[2].split(",")[0], log[0]) if len(log) > 2 else "the GPU machine"  # nvidia-smi's name, `date -u`
for name, r in summary.items():
    d = os.path.join(src, "checked", name, "launch-0")
    if not os.path.isfile(os.path.join(d, "meta.json")):
        print("skipped (no trace):", name); continue
    meta = json.load(open(os.path.join(d, "meta.json")))
    plain = "; ".join(r["plain"]["observed"][-1:]) or "exit %d" % r["plain"]["exit"]
    expect = {"hardware": when + ", Triton 3.6, tests/gpu/check/triton_mutants.py %s: plain (64 CTAs): %s (exit %d); "
                          "under tmakit check (1 CTA): %s%s, exit %d" % (name, plain, r["plain"]["exit"], meta["outcome"],
                          "".join("; " + o for o in r["checked"]["observed"][-1:]), r["checked"]["exit"]),
              "mutation": r["what"], "outcome": meta["outcome"], "clean": name.startswith("clean-"),
              "diagnoses": tm.expected(name, meta["outcome"])}
    out = os.path.join(dest, "triton-" + name)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(d, out)
    if os.path.exists(os.path.join(out, "module.ptx")): os.remove(os.path.join(out, "module.ptx"))
    # A hung kernel's spinning try_wait fills the whole buffer (262,144 records, 32 MiB): keep
    # the first KEEP, exactly what a buffer of KEEP records (TMAKIT_CHECK_CAPACITY) would hold.
    KEEP = 4096
    if meta["records"] > KEEP:
        with open(os.path.join(out, "trace.bin"), "r+b") as t: t.truncate(KEEP * 128)
        expect["hardware"] += "; the first %d of its %d records kept" % (KEEP, meta["records"])
        meta.update(records=KEEP, capacity=KEEP)
        json.dump(meta, open(os.path.join(out, "meta.json"), "w"), indent=1)
    json.dump(expect, open(os.path.join(out, "expect.json"), "w"), indent=1)
    print(name, meta["outcome"], [(w["rule"], w["line"]) for w in expect["diagnoses"]])
EOF
  rm -rf "$tmp"
}

case "${1:-}" in
  build) build ;;
  unpack-mutants) unpack_mutants "$2" "${3:-}" ;;
  device) device ;;
  unpack) unpack "$2" "${3:-}" ;;
  *) echo "usage: $0 build | device | unpack DIR [DEST] | unpack-mutants DIR [DEST]" >&2; exit 2 ;;
esac
