// libFuzzer target: any bytes as a trace directory (meta.json, trace.bin, sites.json,
// maps.jsonl) parse and replay, or fail with a TraceError; never a crash, a hang or an
// unbounded allocation, whether the trace is expanded whole or a cluster at a time. Input: four little-endian u16 lengths, then the four files' bytes in
// that order (a shorter input gives the remaining files empty).
#include <cstdint>
#include <cstring>
#include <string_view>

#include "tmakit/check/replay.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  std::string_view parts[4];
  size_t at = 8;
  for (int i = 0; i < 4; ++i) {
    uint16_t n;
    std::memcpy(&n, data + 2 * i, 2);
    const size_t take = std::min<size_t>(n, size - at);
    parts[i] = std::string_view(reinterpret_cast<const char*>(data) + at, take);
    at += take;
  }
  try {
    tmakit::check::ReplayOptions options;
    options.max_global_bytes = 1u << 20;  // keep the fuzzer's memory bounded
    options.max_clusters = 4;
    // The whole trace expanded, and again with a bound on records of threads small enough that
    // a trace with warp records is replayed a cluster at a time (TraceDir::compact), cut too.
    for (uint64_t bound : {tmakit::check::kMaxLaneRecords, uint64_t{1} + data[0] % 64}) {
      auto trace = tmakit::check::parse_trace_dir(parts[0], parts[1], parts[2], parts[3], bound);
      auto report = tmakit::check::replay(trace, options);
      (void)tmakit::check::to_text(report);
      (void)tmakit::check::to_json(report).dump();
    }
  } catch (const tmakit::check::TraceError&) {
  }
  return 0;
}
