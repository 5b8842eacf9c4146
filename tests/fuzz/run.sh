#!/usr/bin/env bash
# Runs one libFuzzer target (clang, ASan + UBSan: a target of the sanitized build, tests/fuzz/CMakeLists.txt)
# for SECONDS, starting from the seed corpus, and says what it spent.
# Usage: run.sh ptx|scenario|cli|watch|trace|slots|fatbin SECONDS [FUZZ_DIR]
# FUZZ_DIR: where the sanitized build put the fuzzers, and the working corpora (default build-asan/fuzz).
set -euo pipefail
target=$1; seconds=$2
root="$(cd "$(dirname "$0")/../.." && pwd)"
out=${3:-$root/build-asan/fuzz}
bin="$out/fuzz_$target"
# The ctest tests run fuzzers their build made; alone, this builds the one it needs, in build-asan/.
if [ ! -x "$bin" ]; then
  [ -z "${3:-}" ] || { echo "run.sh: no fuzzer $bin (build it: cmake --build $out/.. --target fuzz_$target)" >&2; exit 2; }
  bash "$root/scripts/sanitize.sh" build "fuzz_$target"
fi
mkdir -p "$out/corpus_$target"
# Seed corpus: the bundled examples and the instruction lines of their programs.
if [ "$target" = cli ]; then
  cp "$root"/tests/fuzz/seeds_cli/* "$out/corpus_$target/"
elif [ "$target" = scenario ]; then
  cp "$root"/examples/*/scenario.json "$out/corpus_$target/" 2>/dev/null || true
  for f in "$root"/examples/*/scenario.json; do cp "$f" "$out/corpus_$target/$(basename "$(dirname "$f")").json"; done
elif [ "$target" = trace ]; then
  cp "$root"/tests/fuzz/seeds_trace/* "$out/corpus_$target/"
elif [ "$target" = fatbin ]; then
  cp "$root"/tests/watch/fatbin/*.fatbin "$out/corpus_$target/"
elif [ "$target" = slots ]; then
  # Records as the host keeps them (no chunk headers: the fuzzer makes its own), two chunks' worth.
  head -c 16384 "$root"/tests/vectors/check/ring-refill/trace.bin > "$out/corpus_$target/ring"
elif [ "$target" = watch ]; then
  printf '\000\007\002\000\000\000\000\000' > "$out/corpus_$target/seed"
else
  i=0
  grep -ho '"[a-z@!][^"]*;"' "$root"/examples/*/scenario.json | tr -d '"' | while read -r line; do
    i=$((i+1)); printf '%s' "$line" > "$out/corpus_$target/ex$i"; done
fi
max_len=4096
[ "$target" = trace ] && max_len=32768
[ "$target" = slots ] && max_len=24576  # three chunks of 64 slots
[ "$target" = fatbin ] && max_len=8192  # the seed fatbins are 5-7 KB  # a trace directory's four files, the site table the largest
echo "fuzz_$target: fuzzing for ${seconds}s from $(ls "$out/corpus_$target" | wc -l) inputs"
"$bin" -artifact_prefix="$out/" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=$max_len "$out/corpus_$target" 2>&1 | tail -5
