#!/usr/bin/env bash
# Runs one libFuzzer target (clang, ASan + UBSan; built from tests/fuzz/targets) for SECONDS,
# starting from the seed corpus, and says what it spent. Usage: run.sh ptx|scenario|cli|watch|trace|fatbin SECONDS [BUILD_DIR]
set -euo pipefail
target=$1; seconds=$2
root="$(cd "$(dirname "$0")/../.." && pwd)"
out=${3:-$root/build/fuzz}
mkdir -p "$out/corpus_$target"
bin="$out/fuzz_$target"
# The fuzzers are built by the main build (tests/fuzz/CMakeLists.txt); alone, this builds them.
if [ ! -x "$bin" ]; then
  [ -f "$out/build.ninja" ] || [ -f "$out/Makefile" ] ||
    cmake -S "$root/tests/fuzz/targets" -B "$out" -DCMAKE_CXX_COMPILER=clang++ >/dev/null
  cmake --build "$out" --target "fuzz_$target"
fi
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
elif [ "$target" = watch ]; then
  printf '\000\007\002\000\000\000\000\000' > "$out/corpus_$target/seed"
else
  i=0
  grep -ho '"[a-z@!][^"]*;"' "$root"/examples/*/scenario.json | tr -d '"' | while read -r line; do
    i=$((i+1)); printf '%s' "$line" > "$out/corpus_$target/ex$i"; done
fi
max_len=4096
[ "$target" = trace ] && max_len=32768
[ "$target" = fatbin ] && max_len=8192  # the seed fatbins are 5-7 KB  # a trace directory's four files, the site table the largest
echo "fuzz_$target: fuzzing for ${seconds}s from $(ls "$out/corpus_$target" | wc -l) inputs"
"$bin" -artifact_prefix="$out/" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=$max_len "$out/corpus_$target" 2>&1 | tail -5
