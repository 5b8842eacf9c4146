// The host's order of a launch's records (include/tmakit/check/capture.hpp, in_clock_order):
// chunk headers' ids into their records, each cluster's records sorted by clock, and the map
// halves of a tensor operation that did not write them put back.
#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <tuple>

#include "tmakit/check/capture.hpp"

namespace tmakit::check {

using instrument::Record;
using instrument::TraceOp;

namespace {

bool is(const Record& r, TraceOp op) { return r.op == static_cast<uint16_t>(op); }

bool is_tensor_operation(const Record& r) { return instrument::is_tensor_operation(static_cast<TraceOp>(r.op)); }

// The ids a chunk's header holds (trace.hpp: bytes 8..31), into each record after it in the
// chunk; the header itself leaves. A record whose chunk has no header (a copy made while the
// kernel ran, which saw the record and not yet its header) cannot be told apart from another
// lane's and is left out.
void fill_ids(std::vector<Record>& records) {
  constexpr size_t kIdsAt = offsetof(Record, ctaid_x), kIdsBytes = offsetof(Record, values) - kIdsAt;
  for (size_t c = 0; c < records.size(); c += instrument::kChunkRecords) {
    const bool header = is(records[c], TraceOp::lane_ids);
    const size_t end = std::min(records.size(), c + instrument::kChunkRecords);
    for (size_t s = c + 1; s < end; ++s) {
      if (records[s].op == 0) continue;
      // A header anywhere but a chunk's first slot is no record (a kernel wrote over the buffer).
      if (is(records[s], TraceOp::lane_ids)) {
        records[s].op = 0;
        continue;
      }
      if (header) std::memcpy(reinterpret_cast<char*>(&records[s]) + kIdsAt, reinterpret_cast<const char*>(&records[c]) + kIdsAt, kIdsBytes);
      else records[s].op = 0;
    }
    records[c].op = 0;  // a header, or what a faulty kernel wrote where one belongs: no record
  }
}

// The thread and site a tensor operation's map halves were last written for (trace.hpp,
// kFlagMapCached).
using SiteOfThread = std::array<uint32_t, 5>;
SiteOfThread site_of_thread(const Record& r) {
  return {r.ctaid_x, uint32_t(r.ctaid_y) | uint32_t(r.ctaid_z) << 16, uint32_t(r.tid_x) | uint32_t(r.tid_y) << 16,
          r.tid_z, r.site};
}

// Each slot's clock (trace.hpp, Order: bytes 8..15 of a record's slot), read before the ids are
// filled in over it; 0 where the slot has none: a chunk's header, a slot not written, a record
// whose clock a copy made while the kernel ran did not see. A tensor operation's map halves
// take their operation's: they stand just before it, in its chunk.
std::vector<uint64_t> clocks(const std::vector<Record>& records) {
  std::vector<uint64_t> out(records.size(), 0);
  for (size_t s = 0; s < records.size(); ++s) {
    const Record& r = records[s];
    if (r.op == 0 || is(r, TraceOp::lane_ids) || is(r, TraceOp::tensor_map_lo) || is(r, TraceOp::tensor_map_hi)) continue;
    std::memcpy(&out[s], reinterpret_cast<const char*>(&r) + instrument::kClockAt, 8);
    if (s % instrument::kChunkRecords >= 3 && is(records[s - 2], TraceOp::tensor_map_lo) &&
        is(records[s - 1], TraceOp::tensor_map_hi) && records[s - 2].site == r.site && !(r.flags & instrument::kFlagMapCached))
      out[s - 2] = out[s - 1] = out[s];
  }
  return out;
}

}  // namespace

std::vector<Record> in_clock_order(const Record* slots, size_t n) {
  std::vector<Record> records(n);
  for (size_t s = 0; s < n; ++s) std::memcpy(&records[s], const_cast<const Record*>(slots + s), sizeof records[s]);
  const std::vector<uint64_t> clock = clocks(records);
  fill_ids(records);
  struct Key {
    uint16_t z, y;
    uint32_t x;
    bool late;        // no clock yet: after the cluster's records that have one
    uint64_t clock;
    uint32_t slot;
  };
  std::vector<Key> keys;
  for (size_t s = 0; s < n; ++s) {
    const Record& r = records[s];
    if (r.op == 0) continue;
    keys.push_back({r.clusterid_z, r.clusterid_y, r.clusterid_x, clock[s] == 0, clock[s], static_cast<uint32_t>(s)});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return std::tie(a.z, a.y, a.x, a.late, a.clock, a.slot) < std::tie(b.z, b.y, b.x, b.late, b.clock, b.slot);
  });
  // Each thread's records are in its program order now: a tensor operation whose halves were
  // not written gets copies of those its thread last wrote at its site (none kept: it is left
  // out, as a record past the capacity is).
  std::map<SiteOfThread, std::array<Record, 2>> halves;
  std::vector<Record> out;
  out.reserve(keys.size());
  for (const Key& k : keys) {
    Record r = records[k.slot];
    if (is_tensor_operation(r) && (r.flags & instrument::kFlagMapCached)) {
      const auto known = halves.find(site_of_thread(r));
      if (known == halves.end()) continue;
      r.flags = static_cast<uint16_t>(r.flags & ~instrument::kFlagMapCached);
      for (int h = 0; h < 2; ++h) {
        Record half = known->second[h];
        std::memcpy(&half, &r, offsetof(Record, values));  // this record's site and ids
        half.op = static_cast<uint16_t>(h == 0 ? TraceOp::tensor_map_lo : TraceOp::tensor_map_hi);
        half.flags = 0;
        out.push_back(half);
      }
    } else if (is_tensor_operation(r) && out.size() >= 2 && is(out[out.size() - 2], TraceOp::tensor_map_lo) &&
               is(out.back(), TraceOp::tensor_map_hi) && out.back().site == r.site) {
      halves[site_of_thread(r)] = {out[out.size() - 2], out.back()};
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace tmakit::check
