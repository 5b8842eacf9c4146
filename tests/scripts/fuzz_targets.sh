#!/usr/bin/env bash
# ctest: the fuzz_* tests only fuzz (issue 24). Each fuzzer is a target of the sanitized build itself
# (not of a project of its own), made before ctest runs; no fuzz test compiles anything or holds the
# whole machine (RUN_SERIAL), and each says its budget. Usage: fuzz_targets.sh BUILD_DIR
set -euo pipefail
build=$1
root="$(cd "$(dirname "$0")/../.." && pwd)"
fail() { echo "FAIL: $*"; exit 1; }
tests_json=$(mktemp)
trap 'rm -f "$tests_json"' EXIT
ctest --test-dir "$build" --show-only=json-v1 > "$tests_json"
names=$(ls "$root"/tests/fuzz/fuzz_*.cpp | sed 's|.*/fuzz_\(.*\)\.cpp|\1|')
for t in $names; do
  python3 - "$t" "$tests_json" <<'PY' || exit 1
import json, sys
t = sys.argv[1]
tests = {x["name"]: x for x in json.load(open(sys.argv[2]))["tests"]}
x = tests.get("fuzz_" + t)
if x is None: sys.exit(f"FAIL: no ctest test fuzz_{t}")
props = {p["name"]: p["value"] for p in x.get("properties", [])}
if props.get("RUN_SERIAL"): sys.exit(f"FAIL: fuzz_{t} is RUN_SERIAL: it holds the whole machine")
if float(props.get("TIMEOUT", 1e9)) > 300: sys.exit(f"FAIL: fuzz_{t} may run {props.get('TIMEOUT')} s")
PY
  [ -x "$build/fuzz/fuzz_$t" ] || fail "fuzz_$t was not built by the build ($build/fuzz/fuzz_$t missing)"
  ninja -C "$build" -t query "fuzz/fuzz_$t" >/dev/null 2>&1 || fail "fuzz/fuzz_$t is not a target of $build"
done
# The test only runs the fuzzer: no compiler is started inside it.
! grep -q 'clang++ .*-fsanitize=fuzzer' "$root/tests/fuzz/run.sh" || fail "tests/fuzz/run.sh compiles its fuzzer"
# And says what it spends.
out=$(bash "$root/tests/fuzz/run.sh" fatbin 1 "$build/fuzz" 2>&1) || fail "run.sh fatbin 1: $out"
echo "$out" | grep -q 'fuzz_fatbin: fuzzing for 1s from [0-9]* inputs' || fail "no budget line in: $out"
echo "$out" | grep -q 'Done [0-9]* runs' || fail "no libFuzzer summary in: $out"
echo "ok: $(echo $names | wc -w) fuzzers built as targets, run in parallel with a stated budget"
