#!/usr/bin/env bash
# Builds one libFuzzer target with clang (ASan + UBSan) and runs it for SECONDS,
# starting from the seed corpus. Usage: run.sh ptx|scenario|cli|watch|trace|fatbin SECONDS [BUILD_DIR]
set -euo pipefail
target=$1; seconds=$2
root="$(cd "$(dirname "$0")/../.." && pwd)"
out=${3:-$root/build/fuzz}
mkdir -p "$out/corpus_$target"
bin="$out/fuzz_$target"
srcs=$(ls "$root"/src/diag.cpp "$root"/src/terminal_text.cpp "$root"/src/spec/*.cpp "$root"/src/ptx/*.cpp)
if [ "$target" = scenario ]; then
  srcs="$srcs $(ls "$root"/src/tensor_map/*.cpp "$root"/src/model/*.cpp "$root"/src/scenario/*.cpp)"
fi
if [ "$target" = watch ]; then  # the watch layer's plain part (capture, judgement, record, message)
  srcs="$srcs $(ls "$root"/src/tensor_map/*.cpp) $root/src/watch/call.cpp"
fi
if [ "$target" = trace ]; then  # tmakit check --replay: the trace directory's parser and the replay
  srcs="$srcs $(ls "$root"/src/tensor_map/*.cpp "$root"/src/model/*.cpp "$root"/src/instrument/*.cpp "$root"/src/check/*.cpp)"
fi
if [ "$target" = fatbin ]; then  # tmakit check's fatbin reader alone
  srcs="$root/src/watch/fatbin.cpp"
fi
if [ "$target" = cli ]; then  # the map and layout front ends of tools/tmakit, without its main()
  srcs="$srcs $(ls "$root"/src/tensor_map/*.cpp "$root"/src/model/*.cpp "$root"/src/scenario/*.cpp "$root"/src/layout/*.cpp)"
  for f in map_command layout_command map_input call_log numbers output_files; do srcs="$srcs $root/tools/tmakit/$f.cpp"; done
fi
if [ ! -x "$bin" ] || [ -n "$(find "$root/src" "$root/include" "$root/tests/fuzz" "$root/tools/tmakit" -newer "$bin" -name '*.[ch]pp' | head -1)" ]; then
  clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$root/include" $srcs "$root/tests/fuzz/fuzz_$target.cpp" -lfmt -o "$bin"
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
"$bin" -artifact_prefix="$out/" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=$max_len "$out/corpus_$target" 2>&1 | tail -5
