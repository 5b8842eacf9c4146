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

  // A ticket for each record (three for a tensor operation: its map's two halves, then its
  // own, consecutive in the order), from the lane's reservation (trace.hpp); past the capacity
  // nothing is written (counter 1 counts the record). The reservation's answer is read when the
  // lane leaves the reservation (flush_anchor), not here. The lanes executing the site together
  // are the active mask, so the `.sync` instructions below wait for no one else.
  const int records = plan.map ? 3 : 1;
  const std::string head_reg = w.d(next_d++);  // the record's first 8 bytes, where they vary
  const uint32_t warp_at = lanes_at(plan);
  const std::string shared_record = w.p(18);  // a warp record standing for more than one lane
  const std::string alone = w.p(14);          // one voter: the same in every lane of the warp
  const std::string uniform = w.p(4);
  // A wait's failed polls are counted, not recorded: only the kFailedPollRecorded-th since the
  // thread's last successful wait is (a hung thread polls for good, so its last record is that
  // failed wait; a wait that passes after a few polls costs one record, its success). Failed
  // polls were most of a pipelined kernel's records, and the replay reads one as a hung
  // thread's last word or as a fact about its barrier, which the success then says as well.
  const std::string polls = polls_register(prefix);
  const LaneRegisters lane = lane_registers(prefix);
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
  const std::string counters = w.d(3), counter = w.d(4), capacity = w.r(0);
  const std::string map_miss = w.p(9);
  const std::string traced = w.p(21);  // the lane's cluster is traced (its ticket counter is not 0)
  const std::string reserve = w.p(15);  // the record reserves afresh: the reservation's anchor
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
      // highest voter, its lane mask beside the values. The highest, not the lowest: a kernel's
      // elected lane is mostly its warp's lowest (elect.sync, lane 0), and where that lane then
      // releases at cluster scope (CUTLASS's consumers arrive on the producers' empty barriers
      // from lanes 0, 8, 16 and 24), its release waits for its earlier global writes, the
      // record's atomic and stores among them.
      l.push_back("vote.sync.ballot.b32 " + voters + ", " + on + ", " + mask + ";");
      l.push_back("mov.pred " + uniform + ", " + on + ";");
      // A lone voter's record is a warp record as it stands (a producer's elected lane, a
      // consumer's release): the comparisons are branched around.
      const std::string compared = "$" + prefix + "_compared_" + std::to_string(id);
      l.push_back("popc.b32 " + w.r(next_r) + ", " + voters + ";");
      l.push_back("setp.eq.u32 " + alone + ", " + w.r(next_r) + ", 1;");
      l.push_back("setp.ne.u32 " + shared_record + ", " + w.r(next_r) + ", 1;");  // and uniform: below
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
      // A warp record stands for every voter: its ticket must be above each voter's earlier
      // ones and below their later ones, and the voters' reservations were taken at other
      // times. So where it stands for more than one lane, the writer reserves afresh (above
      // every ticket handed out so far) and the other voters' reservations end; each voter's
      // next record takes the reservation's last ticket, relative to the warp record's (below,
      // trace.hpp). (Without
      // this, a lane's store recorded alone under a reservation newer than the writer's
      // followed the fence the warp recorded after it.) A lone voter writes its own record
      // and shares none: these lines are branched around.
      l.push_back("and.pred " + shared_record + ", " + shared_record + ", " + uniform + ";");
      l.push_back("setp.ne.and.u32 " + w.p(6) + ", " + rank + ", 0, " + shared_record + ";");
      for (const std::string& e : end_reservation(prefix, w.p(6))) l.push_back(e);
      // Only the highest voter writes a warp record; the others write nothing.
      l.push_back("setp.eq.u32 " + same + ", " + rank + ", 0;");
      l.push_back("not.pred " + w.p(6) + ", " + uniform + ";");
      l.push_back("or.pred " + same + ", " + same + ", " + w.p(6) + ";");
      l.push_back("and.pred " + on + ", " + on + ", " + same + ";");
      l.push_back(compared + ":");
    }
    // Each writing lane takes its tickets (three for a tensor operation) from its reservation,
    // and reserves kTicketReservation afresh with an atomic of its own where the reservation
    // has too few left, or the site acquires (a wait's record, written after it returned: its
    // ticket must be above those of the arrives it saw). Nothing reads the answer until the
    // lane reserves again. (One atomic for the warp, shared out with a shuffle, made every lane
    // wait for the answer at once; one atomic a record, eight CTAs of a cluster on one counter,
    // was 40 % of a CUTLASS GEMM's traced time.)
    // `scratch` and `scratch2`: one pair of virtual registers for the ticket lines throughout
    // (more made ptxas spill more in CUTLASS's producer, held to 40 registers).
    const std::string scratch = w.r(next_r++), scratch2 = w.r(next_r++);
    const std::string R = std::to_string(kTicketReservation);
    if (reserves_afresh(plan)) {
      l.push_back("mov.pred " + reserve + ", " + on + ";");
    } else {
      // Too few places left (the next free place past kTicketReservation less n), or ended.
      l.push_back("and.b32 " + scratch + ", " + lane.pending + ", " + std::to_string(kPendingEnded | kPendingPlaceMask) + ";");
      l.push_back("setp.gt.u32 " + reserve + ", " + scratch + ", " + std::to_string(kTicketReservation - records) + ";");
      if (warp_at) l.push_back("or.pred " + reserve + ", " + reserve + ", " + shared_record + ";");  // a shared record
      l.push_back("and.pred " + reserve + ", " + reserve + ", " + on + ";");
    }
    // A barrier's warp record keeps no tickets for its voters: the barrier ends every lane's
    // reservation right after it (Triton records a bar.sync between most steps).
    const bool keeps_tickets = warp_at && !ends_reservation(plan.op);
    // The slots: the lane's chunk, or a new one where it has no room left for the site's. A
    // chunk lies wholly below the capacity or wholly past it (the host rounds the capacity up
    // to whole chunks), so a lane whose chunk is below it writes there until the chunk is full.
    // A new chunk and a record past the capacity are both rare, and are branched around
    // together where no lane of the warp meets either.
    const std::string used = w.r(next_r++), fresh = w.p(8), header = w.p(10), over = w.p(16), rare = w.p(17),
                      taken = "$" + prefix + "_chunk_" + std::to_string(id);
    if (records > 1) {  // the slot before the next, in its chunk (a full chunk's last): room for `records` past it
      l.push_back("add.u32 " + used + ", " + lane.slot + ", " + std::to_string(kChunkRecords - 1) + ";");
      l.push_back("and.b32 " + used + ", " + used + ", " + std::to_string(kChunkRecords - 1) + ";");
      l.push_back("setp.ge.and.u32 " + fresh + ", " + used + ", " + std::to_string(kChunkRecords - records) + ", " + on + ";");
    } else {
      l.push_back("and.b32 " + used + ", " + lane.slot + ", " + std::to_string(kChunkRecords - 1) + ";");
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
    l.push_back("setp.le.and.u32 " + fresh + ", " + lane.slot + ", " + capacity + ", " + fresh + ";");
    // A new chunk begins with its header, the lane's ids (trace.hpp): the special registers
    // are read once a chunk, not once a record.
    l.push_back("ld.const.u64 " + counters + ", " + trace(kTraceCountersWord) + ";");
    l.push_back("@" + fresh + " atom.global.add.u32 " + used + ", [" + counters + "], 1;");
    // Clamped so that the slot number cannot wrap round into the buffer (a capacity is at most kMaxCapacity).
    l.push_back("@" + fresh + " min.u32 " + used + ", " + used + ", " + std::to_string(UINT32_MAX / kChunkRecords - 1) + ";");
    l.push_back("@" + fresh + " mul.lo.u32 " + lane.slot + ", " + used + ", " + std::to_string(kChunkRecords) + ";");
    l.push_back("setp.lt.and.u32 " + header + ", " + lane.slot + ", " + capacity + ", " + fresh + ";");
    slot_address(l, rec, lane.slot, base);
    ids(w, l, header, rec, next_r + 1, next_d + 2);
    l.push_back(store(header, rec, 0, 8, std::to_string(id | uint64_t(TraceOp::lane_ids) << 32)));
    l.push_back("@" + header + " add.u32 " + lane.slot + ", " + lane.slot + ", 1;");
    // A record past the capacity is counted (counter 1), not written; one of a cluster not traced
    // (its ticket counter 0, its slot kPastCapacity from the function's start) is not.
    l.push_back("ld.local.u64 " + counter + ", " + lane_word(prefix, kLaneCounter) + ";");
    l.push_back("setp.ne.and.u64 " + traced + ", " + counter + ", 0, " + on + ";");
    l.push_back("setp.ge.and.u32 " + over + ", " + lane.slot + ", " + capacity + ", " + traced + ";");
    l.push_back("@" + over + " mov.u32 " + lane.slot + ", " + std::to_string(kPastCapacity) + ";");
    l.push_back("@" + over + " red.global.add.u32 [" + counters + "+" + std::to_string(4 * kDroppedCounter) + "], " + n + ";");
    l.push_back("setp.lt.and.u32 " + write + ", " + lane.slot + ", " + capacity + ", " + on + ";");
    l.push_back(taken + ":");
    slot_address(l, rec, lane.slot, base);
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
    // The pending word: the place moves on by the record's tickets (the anchor's bits above it
    // stay as the flush below reads them); a record that reserves is the new anchor, owned
    // where it was written, its next place past its tickets, set where it reserves.
    l.push_back("@" + on + " add.u32 " + lane.pending + ", " + lane.pending + ", " + n + ";");
    // The reservation the lane leaves has its first ticket written to its anchor's ticket word
    // now, if the lane owns it: where the lane reserves again (its last atomic answered a
    // reservation ago), where it leaves for a shared warp record's kept ticket (below), and at
    // a barrier, where a hung lane would stop. Decided here, next to the branch: decided before the
    // slot lines, the predicate was kept in a register across them (CUTLASS's wait record).
    std::string when = reserve;
    const std::string leaving = w.p(19);  // keeps_tickets: a voter not writing (the writer's `on` alone holds)
    if (keeps_tickets) {
      when = w.p(20);
      l.push_back("not.pred " + leaving + ", " + on + ";");
      l.push_back("and.pred " + leaving + ", " + leaving + ", " + shared_record + ";");
      l.push_back("or.pred " + when + ", " + leaving + ", " + reserve + ";");
    }
    // Branched around where the lane neither reserves nor leaves (most records: a reservation
    // serves several), and the lanes brought together again right after: where only some lanes
    // of a warp took the lines (one elected lane, Triton's copies), ptxas left the warp split and
    // its lanes ran the rest of the record apart until its next vote (Triton's matmul 13 %
    // slower). On a warp that did not split, bar.warp.sync costs a divergence check; a vote
    // before the branch, to make it uniform, cost more (measured on the H100, docs/check.md).
    // A record that reserves wherever it is written (a wait's, a shared load's: reserves_afresh)
    // takes no branch: its flush is guarded instead.
    if (ends_reservation(plan.op)) when = "";
    const bool branched = !when.empty() && !reserves_afresh(plan);
    const std::string kept = "$" + prefix + "_kept_" + std::to_string(id);
    if (branched) l.push_back("@!" + when + " bra " + kept + ";");
    for (const std::string& f : flush_anchor(prefix, w.d(next_d), w.d(next_d + 1), scratch, w.p(12), branched ? "" : when))
      l.push_back(f);
    // The lane's ticket counter, which the function's prologue looked up (0 where its cluster is
    // not traced, `tmakit check --ctas`). Only a lane that writes the record reserves: one that
    // does not (past the capacity, or of a cluster not traced, whose slot is kPastCapacity from
    // the start) writes no record again, so it needs no tickets.
    l.push_back("ld.local.u64 " + counter + ", " + lane_word(prefix, kLaneCounter) + ";");
    const std::string reserves_here = w.p(22);  // reserve, where the lane writes
    l.push_back("and.pred " + reserves_here + ", " + reserve + ", " + write + ";");
    l.push_back("@" + reserves_here + " atom.global.add.u32 " + lane.ticket + ", [" + counter + "], " + R + ";");
    l.push_back("shl.b32 " + scratch + ", " + lane.slot + ", " + std::to_string(kPendingAnchorAt) + ";");
    l.push_back("or.b32 " + scratch + ", " + scratch + ", " + std::to_string(kPendingOwner | records) + ";");
    l.push_back("selp.b32 " + scratch + ", " + scratch + ", " + std::to_string(kAnchorNone << kPendingAnchorAt | records) +
                ", " + write + ";");
    l.push_back("@" + reserve + " mov.u32 " + lane.pending + ", " + scratch + ";");
    if (branched) {
      l.push_back(kept + ":");
      l.push_back("bar.warp.sync " + mask + ";");
    }
    // A lane past the capacity keeps kPastCapacity.
    l.push_back("@" + write + " add.u32 " + lane.slot + ", " + lane.slot + ", " + slots + ";");
    if (keeps_tickets) {
      // The other voters of a shared warp record: each one's next record takes the writer's
      // reservation's last ticket (trace.hpp), a relative ticket word naming the warp record's
      // slot, so that it needs no atomic of its own: the writer's anchor, not owned, at the
      // last place; a record after the next one reserves afresh. Where the writer wrote
      // nothing (past the capacity), the reservations stay ended.
      const std::string rel_done = "$" + prefix + "_relative_" + std::to_string(id);
      const std::string writer = scratch2, word = scratch, voter = w.p(6);
      l.push_back("@" + alone + " bra.uni " + rel_done + ";");
      l.push_back("bfind.u32 " + writer + ", " + voters + ";");  // the highest voter
      l.push_back("shfl.sync.idx.b32 " + word + ", " + lane.pending + ", " + writer + ", 31, " + mask + ";");
      l.push_back("and.b32 " + word + ", " + word + ", " + std::to_string(kAnchorNone << kPendingAnchorAt) + ";");
      l.push_back("setp.ne.and.u32 " + voter + ", " + word + ", " + std::to_string(kAnchorNone << kPendingAnchorAt) + ", " +
                  leaving + ";");
      l.push_back("@" + voter + " or.b32 " + lane.pending + ", " + word + ", " + std::to_string(kTicketReservation - 1) + ";");
      l.push_back(rel_done + ":");
    }
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
  // The first 8 bytes last: site, op and flags in one store, so a record whose op is set is whole
  // as far as this thread's stores reach the host in order.
  const uint64_t head = id | uint64_t(plan.op) << 32;
  std::string head_value = std::to_string(head);
  if (!plan.wait_result.empty()) {
    head_value = head_reg;
    rec_lines.push_back("selp.b64 " + head_reg + ", " + std::to_string(head | uint64_t(kFlagWaitComplete) << 48) + ", " +
                        std::to_string(head) + ", " + plan.wait_result + ";");
  }
  if (map_slot >= 0) {  // no wait result, no warp record: a tensor operation
    head_value = head_reg;
    rec_lines.push_back("selp.b64 " + head_reg + ", " + std::to_string(head) + ", " +
                        std::to_string(head | uint64_t(kFlagMapCached) << 48) + ", " + map_miss + ";");
  }
  if (warp_at) {
    if (head_value != head_reg) rec_lines.push_back("mov.b64 " + head_reg + ", " + head_value + ";");
    head_value = head_reg;
    rec_lines.push_back("@" + uniform + " or.b64 " + head_reg + ", " + head_reg + ", " + std::to_string(uint64_t(kFlagWarp) << 48) + ";");
  }
  // The record's ticket word (trace.hpp; bytes 8..11, which a record after its chunk's header
  // leaves free), before the head. Where the record took its tickets from the reservation it
  // found, it is relative to the reservation's anchor, made from the pending word alone (anchor
  // slot and place sit where the word has them; the place has moved on by the record's
  // tickets), no atomic's answer needed; a record that reserved is the new anchor, kNoTicket
  // until the lane leaves the reservation (flush_anchor). Made here, not where the pending word
  // changed: a register less through the record's stores. (In one 16-byte store with the head:
  // no fewer instructions, and the four registers it needs made ptxas spill 56 bytes in
  // Triton's warp-specialized matmul.)
  const std::string ticket_word = w.r(next_r++);
  rec_lines.push_back("and.b32 " + ticket_word + ", " + lane.pending + ", " +
                      std::to_string(kRelativeSlotMask << kPendingAnchorAt | kPendingPlaceMask) + ";");
  rec_lines.push_back("add.u32 " + ticket_word + ", " + ticket_word + ", " + std::to_string(kRelativeTicket - 2) + ";");
  rec_lines.push_back("selp.b32 " + ticket_word + ", " + std::to_string(kNoTicket) + ", " + ticket_word + ", " + reserve + ";");
  rec_lines.push_back(store(write, rec, kTicketWordAt, 4, ticket_word));
  rec_lines.push_back(store(write, rec, 0, 8, head_value));
  rec_lines.push_back(skip + ":");
  if (!plan.wait_result.empty())  // a poll that ran: its guard held (taken before it, which may write it)
    rec_lines.push_back((plan.guard.empty() ? "" : "@" + w.p(13) + " ") + "add.u32 " + polls + ", " + polls + ", 1;");
  // A barrier orders the lane after the other threads at it: its later records reserve afresh.
  if (ends_reservation(plan.op))
    for (const std::string& l : end_reservation(prefix)) c.after.insert(c.after.begin(), l);
  c.regs = w.regs();
  return c;
}

bool reserves_afresh(const Plan& plan) { return !plan.wait_result.empty() || plan.op == TraceOp::shared_load; }

bool ends_reservation(TraceOp op) {
  return op == TraceOp::bar_sync || op == TraceOp::bar_red || op == TraceOp::cluster_wait ||
         op == TraceOp::fence_proxy_other;  // fence.proxy.tensormap's acquire, among others
}

bool writes_map_once(const Plan& plan) {
  return plan.map && is_tensor_operation(plan.op);
}

}  // namespace tmakit::instrument::detail
