// libFuzzer target: any bytes as the record slots a kernel left in its trace buffer
// (include/tmakit/instrument/trace.hpp: chunk headers, records with their clocks, map halves,
// cached tensor operations) are put in order by in_clock_order, never a crash or an unbounded
// allocation, whatever a faulty kernel scribbled there. Checked on what comes out: no record of
// op 0 or a chunk header, at most three records a slot (a cached tensor operation takes its two
// halves back), and each cluster's records together.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <tuple>
#include <vector>

#include "tmakit/check/capture.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tmakit::instrument::Record;
  const size_t n = size / sizeof(Record);
  std::vector<Record> slots(n);
  if (n) std::memcpy(slots.data(), data, n * sizeof(Record));
  const std::vector<Record> out = tmakit::check::in_clock_order(slots.data(), n);
  if (out.size() > 3 * n) std::abort();
  std::set<std::tuple<uint16_t, uint16_t, uint32_t>> done;  // clusters already left behind
  for (size_t i = 0; i < out.size(); ++i) {
    const Record& r = out[i];
    if (r.op == 0 || r.op == static_cast<uint16_t>(tmakit::instrument::TraceOp::lane_ids)) std::abort();
    const auto cluster = std::tuple{r.clusterid_z, r.clusterid_y, r.clusterid_x};
    if (done.count(cluster)) std::abort();
    if (i + 1 < out.size() &&
        cluster != std::tuple{out[i + 1].clusterid_z, out[i + 1].clusterid_y, out[i + 1].clusterid_x})
      done.insert(cluster);
  }
  return 0;
}
