// The host's order of a launch's records (include/tmakit/check/capture.hpp, in_ticket_order):
// chunk headers' ids into their records, ticket words resolved, each cluster's records sorted by
// ticket, and the map halves of a tensor operation that did not write them put back.
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
      if (header) std::memcpy(reinterpret_cast<char*>(&records[s]) + kIdsAt, reinterpret_cast<const char*>(&records[c]) + kIdsAt, kIdsBytes);
      else records[s].op = 0;
    }
    if (header) records[c].op = 0;
  }
}

// The thread and site a tensor operation's map halves were last written for (trace.hpp,
// kFlagMapCached).
using SiteOfThread = std::array<uint32_t, 5>;
SiteOfThread site_of_thread(const Record& r) {
  return {r.ctaid_x, uint32_t(r.ctaid_y) | uint32_t(r.ctaid_z) << 16, uint32_t(r.tid_x) | uint32_t(r.tid_y) << 16,
          r.tid_z, r.site};
}

// Each slot's ticket word (trace.hpp, Order: bytes 8..11 of a record's slot), read before the
// ids are filled in over it, kNoTicket where the slot has none: a chunk's header, a slot not
// written, a map's second half. A tensor operation that wrote its map's halves holds its
// relative word (or kNoTicket) in its own record, an anchor's absolute word in its first
// half's: the word goes to the first half, which stands for the three below.
std::vector<uint32_t> ticket_words(const std::vector<Record>& records) {
  using instrument::kNoTicket;
  std::vector<uint32_t> words(records.size(), kNoTicket);
  for (size_t s = 0; s < records.size(); ++s) {
    const Record& r = records[s];
    if (r.op == 0 || is(r, TraceOp::lane_ids) || is(r, TraceOp::tensor_map_hi)) continue;
    std::memcpy(&words[s], reinterpret_cast<const char*>(&r) + instrument::kTicketWordAt, 4);
    // An absolute word is the first ticket plus one; 0 is none (not written, or not seen yet).
    if (words[s] == 0) words[s] = kNoTicket;
    else if (words[s] != kNoTicket && !(words[s] & instrument::kRelativeTicket)) words[s] -= 1;
    // The halves just before it in the lane's chunk, from the same site.
    if (s % instrument::kChunkRecords >= 3 && is(records[s - 2], TraceOp::tensor_map_lo) &&
        is(records[s - 1], TraceOp::tensor_map_hi) && records[s - 2].site == r.site && !(r.flags & instrument::kFlagMapCached)) {
      if (words[s] != kNoTicket) words[s - 2] = words[s];
      words[s] = kNoTicket;
    }
  }
  return words;
}

}  // namespace

std::vector<Record> in_ticket_order(const Record* slots, size_t n) {
  using instrument::kNoTicket;
  std::vector<Record> records(n);
  for (size_t s = 0; s < n; ++s) std::memcpy(&records[s], const_cast<const Record*>(slots + s), sizeof records[s]);
  const std::vector<uint32_t> tickets = ticket_words(records);
  std::vector<uint32_t> ticket = tickets;
  fill_ids(records);
  // The ticket words (trace.hpp, Order), each resolved to its record's last ticket: an absolute
  // word is its reservation's first ticket, at the anchor's first slot (a tensor operation's,
  // whose halves were written or not, takes three); a relative word counts from its anchor's.
  auto takes_three = [&](size_t s) {
    return is(records[s], TraceOp::tensor_map_lo) || (is_tensor_operation(records[s]) && (records[s].flags & instrument::kFlagMapCached));
  };
  for (size_t s = 0; s < n; ++s) {
    const uint32_t word = tickets[s];
    if (word == kNoTicket) continue;
    if (!(word & instrument::kRelativeTicket)) {
      ticket[s] = word + (takes_three(s) ? 2 : 0);
      continue;
    }
    const uint64_t anchor = (word >> instrument::kRelativeSlotAt) & instrument::kRelativeSlotMask;
    const uint32_t first = anchor < n ? tickets[anchor] : kNoTicket;
    ticket[s] = first == kNoTicket || (first & instrument::kRelativeTicket)
                    ? kNoTicket
                    : first + (word & ((1u << instrument::kRelativeSlotAt) - 1)) + 1;
  }
  // A tensor operation's three tickets (trace.hpp): the last of them at its map's first half,
  // which takes the first, the next two for the records after it; or, where the halves were
  // not written, at its own record, which stands third and keeps it.
  for (size_t s = 0; s < n; ++s) {
    if (ticket[s] == kNoTicket || !is(records[s], TraceOp::tensor_map_lo)) continue;
    const uint32_t last = ticket[s];
    ticket[s] = last - 2;
    for (size_t k = 1; k <= 2 && s + k < n; ++k)
      if (ticket[s + k] == kNoTicket) ticket[s + k] = last - 2 + static_cast<uint32_t>(k);
  }
  struct Key {
    uint16_t z, y;
    uint32_t x;
    uint64_t order;  // the ticket; past every ticket, by slot, where none came
    uint32_t slot;
  };
  std::vector<Key> keys;
  for (size_t s = 0; s < n; ++s) {
    const Record& r = records[s];
    if (r.op == 0) continue;
    keys.push_back({r.clusterid_z, r.clusterid_y, r.clusterid_x,
                    ticket[s] != kNoTicket ? ticket[s] : (uint64_t{1} << 32) + s, static_cast<uint32_t>(s)});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return std::tie(a.z, a.y, a.x, a.order, a.slot) < std::tie(b.z, b.y, b.x, b.order, b.slot);  // ties: by slot
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
