// The PTX that writes one record (the layout is trace.hpp's). Every line uses only fresh
// registers, the module's `__tmakit_trace` and the instruction's own operands, and every
// store is guarded by a predicate that is false when the instruction's own guard is, when
// tracing is off (no records address) and when the buffer is full.
#include <string>

#include "site.hpp"

namespace tmakit::instrument::detail {

namespace {
// A shared address on a 32-bit base register: recorded as the 32-bit sum the instruction forms,
// in its field's low half (trace.hpp), not widened into a register pair.
bool is_32bit_address(const Source& s) { return s.kind == Source::Kind::address && s.base_is_reg && s.bits == 32; }
}  // namespace

uint32_t lanes_at(const Plan& plan) {
  if (plan.map || plan.op == TraceOp::shared_load || plan.op == TraceOp::shared_store) return 0;
  uint32_t end = kValuesOffset;
  for (const Entry& e : plan.entries)
    if (e.field.count) end = std::max(end, e.field.offset + e.field.stride * (e.field.count - 1) + e.field.bytes);
  end = (end + 3) / 4 * 4;
  return end + 4 <= kRecordBytes ? end : 0;
}

Code emit_site(const Plan& plan, uint32_t id, const std::string& prefix, int map_slot) {
  Writer w(prefix);
  Code c;
  auto& pre = c.before;
  auto& rec_lines = plan.after ? c.after : c.before;
  const std::string base = w.d(0), rec = w.d(1), on = w.p(0), write = w.p(1);

  pre.push_back("// " + prefix + " site " + std::to_string(id) + ": " + std::string(to_string(plan.op)));
  // Taken before the instruction, which may write its own guard (a try_wait's predicate).
  pre.push_back("ld.const.u64 " + base + ", " + trace(kTraceRecordsWord) + ";");
  if (plan.guard.empty())
    pre.push_back("setp.ne.u64 " + on + ", " + base + ", 0;");
  else
    pre.push_back("setp.ne.and.u64 " + on + ", " + base + ", 0, " + (plan.guard_negated ? "!" : "") + plan.guard + ";");

  if (!plan.wait_result.empty() && !plan.guard.empty())
    pre.push_back((plan.guard_negated ? "not.pred " : "mov.pred ") + w.p(13) + ", " + plan.guard + ";");

  // Each value as a store operand. Addresses and, where the record follows the instruction,
  // the registers it reads are taken before it runs: it may overwrite them (`arrive %rd1, [%rd1]`).
  int next_d = 6, next_r = 1, next_h = 0;
  std::vector<std::vector<std::string>> operands;
  for (const Entry& e : plan.entries) {
    auto& vals = operands.emplace_back();
    for (const Source& s : e.elems) {
      if (s.kind == Source::Kind::imm) {
        vals.push_back(std::to_string(s.value));
      } else if (s.kind == Source::Kind::reg && (!plan.after || e.output)) {
        vals.push_back(s.name);
      } else if (s.kind == Source::Kind::reg) {
        std::string t = s.bits == 64 ? w.d(next_d++) : s.bits == 16 ? w.h(next_h++) : w.r(next_r++);
        pre.push_back("mov.b" + std::to_string(s.bits == 64 || s.bits == 16 ? s.bits : 32) + " " + t + ", " + s.name + ";");
        vals.push_back(t);
      } else if (is_32bit_address(s)) {  // the field's other half stays as zeroed
        std::string t = w.r(next_r++);
        pre.push_back(s.value ? "add.u32 " + t + ", " + s.name + ", " + std::to_string(static_cast<uint32_t>(s.value)) + ";"
                              : "mov.b32 " + t + ", " + s.name + ";");
        vals.push_back(t);
      } else {  // address: base (a 64-bit register or a variable's address) plus offset
        std::string t = w.d(next_d++);
        address_into(pre, t, s);
        vals.push_back(t);
      }
    }
  }

  // The record's slots (three for a tensor operation: its map's two halves, then its own) in
  // the lane's chunk (trace.hpp); past the capacity nothing is written (counter 1 counts the
  // record). The lanes executing the site together are the active mask, so the `.sync`
  // instructions below wait for no one else.
  const int records = plan.map ? 3 : 1;
  const std::string head_reg = w.d(next_d++);  // the record's first 8 bytes
  const uint32_t warp_at = lanes_at(plan);
  const std::string alone = w.p(14);          // one voter: the same in every lane of the warp
  const std::string uniform = w.p(4);
  // A wait's failed polls are counted, not recorded: only the kFailedPollRecorded-th since the
  // thread's last successful wait is (a hung thread polls for good, so its last record is that
  // failed wait; a wait that passes after a few polls costs one record, its success). Failed
  // polls were most of a pipelined kernel's records, and the replay reads one as a hung
  // thread's last word or as a fact about its barrier, which the success then says as well.
  const std::string polls = polls_register(prefix);
  const std::string slot = lane_slot(prefix);
  if (!plan.wait_result.empty()) {
    rec_lines.push_back("setp.eq.or.u32 " + w.p(3) + ", " + polls + ", " + std::to_string(kFailedPollRecorded - 1) + ", " +
                        plan.wait_result + ";");
    rec_lines.push_back("and.pred " + on + ", " + on + ", " + w.p(3) + ";");
  }
  const std::string voters_reg = w.r(next_r + 1);
  // Where no lane of the warp records (tracing off, a guard that is false, a failed poll not
  // recorded, a cluster not traced), everything up to the poll count's update is branched around:
  // most sites a kernel executes record nothing, and the record's work is most of a site's cost.
  const std::string skip = "$" + prefix + "_skip_" + std::to_string(id);
  const std::string counters = w.d(3), traced_word = w.d(4), capacity = w.r(0);
  const std::string map_miss = w.p(9);
  const std::string traced = w.p(21);  // the lane's cluster is traced (`tmakit check --ctas`)
  std::string map_key;
  {
    const std::string mask = w.r(next_r++), voters = w.r(next_r++), above = w.r(next_r++), rank = w.r(next_r++);
    const std::string several = w.p(6);
    const std::string n = std::to_string(records);
    auto& l = rec_lines;
    l.push_back("activemask.b32 " + mask + ";");
    if (plan.guard.empty() && plan.wait_result.empty()) {
      // `on` is whether tracing is on, the same in every lane: no vote.
      l.push_back("@!" + on + " bra.uni " + skip + ";");
    } else {
      l.push_back("vote.sync.any.pred " + several + ", " + on + ", " + mask + ";");
      l.push_back("@!" + several + " bra.uni " + skip + ";");
    }
    // A success starts the count again (the increment below makes it 0). A wait recorded here
    // always has `on` set where it succeeded, so no success goes uncounted.
    if (!plan.wait_result.empty()) {
      l.push_back("and.pred " + w.p(7) + ", " + on + ", " + plan.wait_result + ";");
      l.push_back("@" + w.p(7) + " mov.u32 " + polls + ", 0xFFFFFFFF;");
    }
    if (warp_at) {
      // A warp record when every voter's values agree (match.all.sync over the voters, who all
      // run it: it is guarded by `on`) and so does a wait's outcome: one record, written by the
      // highest voter, its lane mask beside the values. (The highest, not the lowest, was 2 %
      // faster on CUTLASS 48 with the ticket order, docs/check.md: a kernel's elected lane is
      // mostly its warp's lowest, which goes on to issue the warp's copies and releases.)
      l.push_back("vote.sync.ballot.b32 " + voters + ", " + on + ", " + mask + ";");
      l.push_back("mov.pred " + uniform + ", " + on + ";");
      // A lone voter's record is a warp record as it stands (a producer's elected lane, a
      // consumer's release): the comparisons are branched around.
      const std::string compared = "$" + prefix + "_compared_" + std::to_string(id);
      l.push_back("popc.b32 " + w.r(next_r) + ", " + voters + ";");
      l.push_back("setp.eq.u32 " + alone + ", " + w.r(next_r) + ", 1;");
      l.push_back("@" + alone + " bra.uni " + compared + ";");
      l.push_back("mov.u32 " + above + ", %lanemask_gt;");  // rank: the voters above the lane
      l.push_back("and.b32 " + above + ", " + above + ", " + voters + ";");
      l.push_back("popc.b32 " + rank + ", " + above + ";");
      // The values compared: each register the record holds, an address by its base register
      // (its offset is the instruction's own, the same in every lane: the low half of a 32-bit
      // base's widened sum is as exact as the base), none for an immediate or a variable's
      // address; 32-bit ones two to a match.
      std::vector<std::string> keys32, keys64;
      int key_r = next_r + 2;
      for (size_t i = 0; i < plan.entries.size(); ++i)
        for (size_t k = 0; k < operands[i].size(); ++k) {
          const Source& src = plan.entries[i].elems[k];
          const std::string& v = operands[i][k];
          if (src.kind == Source::Kind::imm || (src.kind == Source::Kind::address && !src.base_is_reg)) continue;
          if (src.bits == 64) {
            keys64.push_back(v);
          } else if (src.kind == Source::Kind::address && !is_32bit_address(src)) {
            const std::string lo = w.r(key_r++);
            l.push_back("cvt.u32.u64 " + lo + ", " + v + ";");
            keys32.push_back(lo);
          } else if (src.bits == 16) {
            const std::string wide = w.r(key_r++);
            l.push_back("cvt.u32.u16 " + wide + ", " + v + ";");
            keys32.push_back(wide);
          } else {
            keys32.push_back(v);
          }
        }
      for (size_t k = 0; k + 1 < keys32.size(); k += 2) {
        const std::string pair = w.d(next_d + 2 + static_cast<int>(k / 2));
        l.push_back("mov.b64 " + pair + ", {" + keys32[k] + ", " + keys32[k + 1] + "};");
        keys64.push_back(pair);
      }
      const std::string same = w.p(5);
      auto match = [&](const std::string& v, int bits) {
        // d is the 32-bit mask of the agreeing lanes whatever the type; only the predicate is used.
        l.push_back("@" + on + " match.all.sync.b" + std::to_string(bits) + " " + w.r(next_r + 1) + "|" + same + ", " + v +
                    ", " + voters + ";");
        l.push_back("@" + on + " and.pred " + uniform + ", " + uniform + ", " + same + ";");
      };
      for (const std::string& v : keys64) match(v, 64);
      if (keys32.size() % 2) match(keys32.back(), 32);
      if (!plan.wait_result.empty()) {
        l.push_back("vote.sync.ballot.b32 " + w.r(next_r) + ", " + plan.wait_result + ", " + mask + ";");
        l.push_back("and.b32 " + w.r(next_r) + ", " + w.r(next_r) + ", " + voters + ";");
        l.push_back("setp.eq.u32 " + same + ", " + w.r(next_r) + ", 0;");
        l.push_back("setp.eq.or.u32 " + same + ", " + w.r(next_r) + ", " + voters + ", " + same + ";");
        l.push_back("and.pred " + uniform + ", " + uniform + ", " + same + ";");
      }
      // Only the highest voter writes a warp record; the others write nothing.
      l.push_back("setp.eq.u32 " + same + ", " + rank + ", 0;");
      l.push_back("not.pred " + w.p(6) + ", " + uniform + ";");
      l.push_back("or.pred " + same + ", " + same + ", " + w.p(6) + ";");
      l.push_back("and.pred " + on + ", " + on + ", " + same + ";");
      l.push_back(compared + ":");
    }
    // The slots: the lane's chunk, or a new one where it has no room left for the site's. A
    // chunk lies wholly below the capacity or wholly past it (the host rounds the capacity up
    // to whole chunks), so a lane whose chunk is below it writes there until the chunk is full.
    // A new chunk and a record past the capacity are both rare, and are branched around
    // together where no lane of the warp meets either.
    const std::string used = w.r(next_r++), fresh = w.p(8), header = w.p(10), over = w.p(16), rare = w.p(17),
                      taken = "$" + prefix + "_chunk_" + std::to_string(id);
    if (records > 1) {  // the slot before the next, in its chunk (a full chunk's last): room for `records` past it
      l.push_back("add.u32 " + used + ", " + slot + ", " + std::to_string(kChunkRecords - 1) + ";");
      l.push_back("and.b32 " + used + ", " + used + ", " + std::to_string(kChunkRecords - 1) + ";");
      l.push_back("setp.ge.and.u32 " + fresh + ", " + used + ", " + std::to_string(kChunkRecords - records) + ", " + on + ";");
    } else {
      l.push_back("and.b32 " + used + ", " + slot + ", " + std::to_string(kChunkRecords - 1) + ";");
      l.push_back("setp.eq.and.u32 " + fresh + ", " + used + ", 0, " + on + ";");
    }
    // A lane that needs no new chunk writes in the one it has, which lies below the capacity: a
    // lane past it keeps kPastCapacity as its slot (a chunk's start above any capacity), so each
    // of its records comes to the rare lines, which count it and take no chunk.
    l.push_back("mov.pred " + write + ", " + on + ";");
    l.push_back("vote.sync.any.pred " + rare + ", " + fresh + ", " + mask + ";");
    l.push_back("@!" + rare + " bra.uni " + taken + ";");
    // The capacity's low half: it is at most kMaxCapacity.
    l.push_back("ld.const.u32 " + capacity + ", " + trace(kTraceCapacityWord) + ";");
    l.push_back("setp.le.and.u32 " + fresh + ", " + slot + ", " + capacity + ", " + fresh + ";");
    // A new chunk begins with its header, the lane's ids (trace.hpp): the special registers
    // are read once a chunk, not once a record.
    l.push_back("ld.const.u64 " + counters + ", " + trace(kTraceCountersWord) + ";");
    l.push_back("@" + fresh + " atom.global.add.u32 " + used + ", [" + counters + "], 1;");
    // Clamped so that the slot number cannot wrap round into the buffer (a capacity is at most kMaxCapacity).
    l.push_back("@" + fresh + " min.u32 " + used + ", " + used + ", " + std::to_string(UINT32_MAX / kChunkRecords - 1) + ";");
    l.push_back("@" + fresh + " mul.lo.u32 " + slot + ", " + used + ", " + std::to_string(kChunkRecords) + ";");
    l.push_back("setp.lt.and.u32 " + header + ", " + slot + ", " + capacity + ", " + fresh + ";");
    slot_address(l, rec, slot, base);
    ids(w, l, header, rec, next_r + 1, next_d + 2);
    l.push_back(store(header, rec, 0, 8, std::to_string(id | uint64_t(TraceOp::lane_ids) << 32)));
    l.push_back("@" + header + " add.u32 " + slot + ", " + slot + ", 1;");
    // A record past the capacity is counted (counter 1), not written; one of a cluster not traced
    // (its lane word 0, its slot kPastCapacity from the function's start) is not.
    l.push_back("ld.local.u64 " + traced_word + ", " + lane_word(prefix, kLaneTraced) + ";");
    l.push_back("setp.ne.and.u64 " + traced + ", " + traced_word + ", 0, " + on + ";");
    l.push_back("setp.ge.and.u32 " + over + ", " + slot + ", " + capacity + ", " + traced + ";");
    l.push_back("@" + over + " mov.u32 " + slot + ", " + std::to_string(kPastCapacity) + ";");
    l.push_back("@" + over + " red.global.add.u32 [" + counters + "+" + std::to_string(4 * kDroppedCounter) + "], " + n + ";");
    l.push_back("setp.lt.and.u32 " + write + ", " + slot + ", " + capacity + ", " + on + ";");
    l.push_back(taken + ":");
    slot_address(l, rec, slot, base);
    // A tensor operation writes its map's halves only where this site of the lane's last read
    // another map address (trace.hpp): the function's map cache, in local memory, holds the
    // address each such site last wrote the halves for (0: none since the function began or
    // since a tensormap fence). The whole warp writes them where any of its lanes must, so that
    // the slots a site takes are the same in every lane.
    // Tested after the slots are taken (a tensor operation's room is three slots, halves or
    // not), with `write`: a lane that writes nothing (a cluster not traced) misses no map.
    std::string slots = n;
    if (map_slot >= 0) {
      const std::string key = w.d(next_d++), last = w.d(next_d++);
      slots = w.r(next_r++);
      address_into(l, key, plan.map->at);
      l.push_back("ld.local.u64 " + last + ", " + map_cache(prefix, map_slot) + ";");
      l.push_back("setp.ne.and.u64 " + map_miss + ", " + last + ", " + key + ", " + write + ";");
      l.push_back("vote.sync.any.pred " + map_miss + ", " + map_miss + ", " + mask + ";");
      l.push_back("selp.u32 " + slots + ", " + n + ", 1, " + map_miss + ";");
      map_key = key;
    }
    // A lane past the capacity keeps kPastCapacity.
    l.push_back("@" + write + " add.u32 " + slot + ", " + slot + ", " + slots + ";");
  }
  if (warp_at) {
    rec_lines.push_back("and.pred " + w.p(5) + ", " + write + ", " + uniform + ";");
    rec_lines.push_back(store(w.p(5), rec, warp_at, 4, voters_reg));
  }
  if (plan.map && map_slot < 0) map_records(rec_lines, *plan.map, id, write, rec, w.d(next_d), w.d(next_d + 1));
  if (map_slot >= 0) {  // branched around where no lane writes the halves (map_miss is the warp's)
    const std::string halves = w.p(11), cached = "$" + prefix + "_cached_" + std::to_string(id);
    rec_lines.push_back("@!" + map_miss + " bra.uni " + cached + ";");
    rec_lines.push_back("and.pred " + halves + ", " + write + ", " + map_miss + ";");
    map_records(rec_lines, *plan.map, id, halves, rec, w.d(next_d), w.d(next_d + 1));
    rec_lines.push_back("@" + halves + " st.local.u64 " + map_cache(prefix, map_slot) + ", " + map_key + ";");
    rec_lines.push_back(cached + ":");
  }
  for (size_t i = 0; i < plan.entries.size(); ++i) {
    const Field& f = plan.entries[i].field;
    for (size_t k = 0; k < operands[i].size(); ++k) {
      const Source& s = plan.entries[i].elems[k];
      // A register narrower than its field is stored with its own width (the rest stays 0).
      const bool narrow = s.kind == Source::Kind::reg || is_32bit_address(s);
      uint32_t bytes = narrow ? std::min<uint32_t>(f.bytes, s.bits / 8) : f.bytes;
      rec_lines.push_back(store(write, rec, f.offset + static_cast<uint32_t>(k) * f.stride, bytes, operands[i][k]));
    }
  }
  // The first 16 bytes last: site, op, flags and the clock in one store, so a record whose op is
  // set is whole as far as this thread's stores reach the host in order. The head is made in
  // its register, which the store takes with the clock.
  const uint64_t head = id | uint64_t(plan.op) << 32;
  if (!plan.wait_result.empty()) {
    rec_lines.push_back("selp.b64 " + head_reg + ", " + std::to_string(head | uint64_t(kFlagWaitComplete) << 48) + ", " +
                        std::to_string(head) + ", " + plan.wait_result + ";");
  } else if (map_slot >= 0) {  // a tensor operation: no wait result, no warp record
    rec_lines.push_back("selp.b64 " + head_reg + ", " + std::to_string(head) + ", " +
                        std::to_string(head | uint64_t(kFlagMapCached) << 48) + ", " + map_miss + ";");
  } else {
    rec_lines.push_back("mov.b64 " + head_reg + ", " + std::to_string(head) + ";");
  }
  if (warp_at)
    rec_lines.push_back("@" + uniform + " or.b64 " + head_reg + ", " + head_reg + ", " + std::to_string(uint64_t(kFlagWarp) << 48) + ";");
  // The record's clock (trace.hpp, Order), read last: after every value the record holds, so
  // after the instruction where the record follows it. (In a store of its own the clock cost
  // CUTLASS 48's 4096^3 launch 2 % more, docs/check.md.)
  static_assert(kClockAt == 8, "the clock's 8 bytes follow the head's");
  const std::string clock = w.d(next_d++);
  rec_lines.push_back("mov.u64 " + clock + ", %clock64;");
  rec_lines.push_back("@" + write + " st.global.v2.b64 [" + rec + "], {" + head_reg + ", " + clock + "};");
  rec_lines.push_back(skip + ":");
  if (!plan.wait_result.empty())  // a poll that ran: its guard held (taken before it, which may write it)
    rec_lines.push_back((plan.guard.empty() ? "" : "@" + w.p(13) + " ") + "add.u32 " + polls + ", " + polls + ", 1;");
  c.regs = w.regs();
  return c;
}

bool writes_map_once(const Plan& plan) {
  return plan.map && is_tensor_operation(plan.op);
}

}  // namespace tmakit::instrument::detail
