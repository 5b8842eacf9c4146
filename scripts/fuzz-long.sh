#!/usr/bin/env bash
# The long fuzz run: each target of tests/fuzz (fuzz_NAME.cpp) for SECONDS (default 600), one at
# a time, starting from the corpus kept in the repository (tests/fuzz/corpus/NAME/), which is
# then replaced by the run's corpus minimised with libFuzzer's -merge=1 (a small, growing
# corpus: commit it). FUZZ_DIR, the fuzz/ folder of a sanitized build (default build-asan/fuzz, made
# by scripts/sanitize.sh), holds the binaries and the working corpora.
# Usage: scripts/fuzz-long.sh [SECONDS] [NAME...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
out=${FUZZ_DIR:-build-asan/fuzz}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.cpp; do t=${f#tests/fuzz/fuzz_}; targets+=("${t%.cpp}"); done
fi
# Bring the fuzzers up to date with the sources: they are targets of the sanitized build.
if [ -f "$out/../CMakeCache.txt" ]; then
  cmake --build "$out/.." --target fuzzers
else
  bash scripts/sanitize.sh build fuzzers
fi
for t in "${targets[@]}"; do
  kept=tests/fuzz/corpus/$t
  mkdir -p "$kept" "$out/corpus_$t"
  cp "$kept"/. "$out/corpus_$t/" -r
  echo "== fuzz_$t: ${seconds}s from $(ls "$kept" | wc -l) kept inputs"
  bash tests/fuzz/run.sh "$t" "$seconds" "$out"
  # Keep only inputs that add coverage: merge the working corpus into an empty folder.
  rm -rf "$kept.new" && mkdir -p "$kept.new"
  "$out/fuzz_$t" -merge=1 -timeout=10 -rss_limit_mb=2048 -max_len=4096 "$kept.new" "$out/corpus_$t" 2>&1 | tail -1
  rm -rf "$kept" && mv "$kept.new" "$kept"
  echo "kept $(ls "$kept" | wc -l) inputs, $(du -sh "$kept" | cut -f1) in $kept"
done
