// libFuzzer target: any bytes given as a scenario file load, run and fail with a
// diagnostic; never a crash, a hang or an unbounded allocation.
#include <cstdint>
#include <string>

#include "tmakit/scenario/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    auto s = tmakit::scenario::from_json(j, ".");
    uint64_t total = 0;
    for (const auto& g : s.globals) total += g.bytes;
    if (total > (1u << 20)) return 0;  // keep the fuzzer's memory bounded
    tmakit::scenario::run(s);
  } catch (const tmakit::DiagnosticError&) {
  }
  return 0;
}
