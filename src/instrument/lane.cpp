// A lane's state for its records across a function (trace.hpp, docs/check.md "How the module is
// changed"): the registers every site of the function shares, the lane words in local memory,
// the write of a reservation's first ticket, and what a function with sites begins and returns with.
#include <string>

#include "site.hpp"

namespace tmakit::instrument::detail {
namespace {

// `a` = the linear %clusterid (x + nx × (y + ny × z)).
void linear_cluster(std::vector<std::string>& out, const std::string& a, const std::string& b, const std::string& c) {
  out.push_back("mov.u32 " + a + ", %clusterid.z;");
  out.push_back("mov.u32 " + b + ", %nclusterid.y;");
  out.push_back("mov.u32 " + c + ", %clusterid.y;");
  out.push_back("mad.lo.u32 " + a + ", " + a + ", " + b + ", " + c + ";");
  out.push_back("mov.u32 " + b + ", %nclusterid.x;");
  out.push_back("mov.u32 " + c + ", %clusterid.x;");
  out.push_back("mad.lo.u32 " + a + ", " + a + ", " + b + ", " + c + ";");
}

}  // namespace

std::string polls_register(const std::string& prefix) { return "%" + prefix + "_polls"; }

std::string lane_word(const std::string& prefix, int word) {
  return "[" + prefix + "_lane" + (word ? "+" + std::to_string(8 * word) : "") + "]";
}

std::string map_cache(const std::string& prefix, int slot) { return lane_word(prefix, kLaneMaps + slot); }

std::vector<std::string> clear_map_cache(const std::string& prefix, int entries) {
  std::vector<std::string> out;
  for (int k = 0; k < entries; ++k) out.push_back("st.local.u64 " + map_cache(prefix, k) + ", 0;");
  return out;
}

LaneRegisters lane_registers(const std::string& prefix) {
  return {"%" + prefix + "_ticket", "%" + prefix + "_pending", "%" + prefix + "_slot"};
}

std::vector<std::string> flush_anchor(const std::string& prefix, const std::string& d_records, const std::string& d_at,
                                      const std::string& r_anchor, const std::string& p_flush, const std::string& p_when) {
  const LaneRegisters lane = lane_registers(prefix);
  // Unguarded but the store: guarded, ptxas moved each result into place with selects.
  std::vector<std::string> out = {
      "and.b32 " + r_anchor + ", " + lane.pending + ", " + std::to_string(kPendingOwner) + ";",
      "setp.ne" + std::string(p_when.empty() ? "" : ".and") + ".u32 " + p_flush + ", " + r_anchor + ", 0" +
          (p_when.empty() ? "" : ", " + p_when) + ";",
      "bfe.u32 " + r_anchor + ", " + lane.pending + ", " + std::to_string(kPendingAnchorAt) + ", " +
          std::to_string(kRelativeSlotBits) + ";"};
  // The anchor's ticket word: bytes 8..11 of its slot (trace.hpp). The records' address is
  // loaded here again rather than taken from the site's register: keeping that one live through
  // the flush made ptxas spill in Triton's warp-specialized matmul.
  out.push_back("ld.const.u64 " + d_records + ", " + trace(kTraceRecordsWord) + ";");
  slot_address(out, d_at, r_anchor, d_records);
  // Plus one (trace.hpp): a word that reads 0 was not written yet, never a ticket.
  out.push_back("add.u32 " + r_anchor + ", " + lane.ticket + ", 1;");
  out.push_back("@" + p_flush + " st.global.u32 [" + d_at + "+" + std::to_string(kTicketWordAt) + "], " + r_anchor + ";");
  return out;
}

std::vector<std::string> end_reservation(const std::string& prefix, const std::string& p_guard) {
  const std::string pending = lane_registers(prefix).pending;
  return {(p_guard.empty() ? "" : "@" + p_guard + " ") + "or.b32 " + pending + ", " + pending + ", " +
          std::to_string(kPendingEnded) + ";"};
}

Code function_exit(const std::string& prefix) {
  Writer w(prefix);
  Code c;
  c.before.push_back("// " + prefix + ": the reservation's first ticket, before the function returns");
  for (const std::string& l : flush_anchor(prefix, w.d(0), w.d(1), w.r(0), w.p(0))) c.before.push_back(l);
  c.regs = w.regs();
  return c;
}

std::vector<std::string> function_prologue(RegCounts regs, const std::string& prefix, int map_entries,
                                           const std::string& plain) {
  // The lane's ticket counter (trace.hpp, word 4): the counter of its cluster's rank among those
  // traced (word 3's low half is 0 without --ctas), at most the last (word 5); 0 where tracing
  // is off, or the cluster is not among those word 3 names (`tmakit check --ctas`: [low half,
  // high half) by linear %clusterid; a launch without clusters has each CTA its own; 0 traces
  // every cluster). Looked up once a call, not at each record: ten special-register reads.
  Writer w(prefix);
  std::vector<std::string> setup;
  {
    const std::string word3 = w.d(0), counters = w.d(1), last = w.d(2), k = w.d(3), counter = w.d(4), a = w.r(0),
                      b = w.r(1), c = w.r(2), lo = w.r(3), hi = w.r(4), in = w.p(0);
    setup.push_back("ld.const.u64 " + word3 + ", " + trace(kTraceClustersWord) + ";");
    setup.push_back("mov.b64 {" + lo + ", " + hi + "}, " + word3 + ";");
    linear_cluster(setup, a, b, c);
    setup.push_back("setp.ge.u32 " + in + ", " + a + ", " + lo + ";");
    setup.push_back("setp.lt.and.u32 " + in + ", " + a + ", " + hi + ", " + in + ";");
    setup.push_back("setp.eq.or.u64 " + in + ", " + word3 + ", 0, " + in + ";");
    setup.push_back("sub.u32 " + a + ", " + a + ", " + lo + ";");
    setup.push_back("ld.const.u64 " + counters + ", " + trace(kTraceCountersWord) + ";");
    setup.push_back("setp.ne.and.u64 " + in + ", " + counters + ", 0, " + in + ";");
    setup.push_back("ld.const.u64 " + last + ", " + trace(kTraceCounterCountWord) + ";");
    setup.push_back("setp.ne.and.u64 " + in + ", " + last + ", 0, " + in + ";");
    setup.push_back("sub.u64 " + last + ", " + last + ", 1;");
    setup.push_back("cvt.u64.u32 " + k + ", " + a + ";");
    setup.push_back("min.u64 " + k + ", " + k + ", " + last + ";");
    setup.push_back("mad.lo.u64 " + counter + ", " + k + ", " + std::to_string(kCounterLineWords * 4) + ", " + counters + ";");
    setup.push_back("add.u64 " + counter + ", " + counter + ", " + std::to_string(ticket_counter_word(0) * 4) + ";");
    setup.push_back("selp.b64 " + counter + ", " + counter + ", 0, " + in + ";");
    setup.push_back("st.local.u64 " + lane_word(prefix, kLaneCounter) + ", " + counter + ";");
    // A lane of a cluster not traced starts past the capacity: its records take the rare lines,
    // where they are neither written nor counted (the records' common lines test nothing).
    setup.push_back("@!" + in + " mov.u32 " + lane_registers(prefix).slot + ", " + std::to_string(kPastCapacity) + ";");
    // A call that records nothing (no records address, or a cluster not traced) runs the
    // function's plain copy: the same for every thread of the cluster, so a uniform branch.
    if (!plain.empty()) {
      setup.push_back("ld.const.u64 " + word3 + ", " + trace(kTraceRecordsWord) + ";");
      setup.push_back("setp.eq.or.u64 " + in + ", " + word3 + ", 0, !" + in + ";");
      setup.push_back("@" + in + " bra.uni " + plain + ";");
    }
  }
  regs.at_least(w.regs());
  std::vector<std::string> out;
  auto bank = [&](const char* type, const char* b, int n) {
    if (n) out.push_back(std::string(".reg .") + type + " %" + prefix + "_" + b + "<" + std::to_string(n) + ">;");
  };
  bank("b64", "d", regs.d);
  bank("b32", "r", regs.r);
  bank("b16", "h", regs.h);
  bank("pred", "p", regs.p);
  const LaneRegisters lane = lane_registers(prefix);
  out.push_back(".reg .b32 " + polls_register(prefix) + ", " + lane.ticket + ", " + lane.pending + ", " + lane.slot + ";");
  out.push_back(".local .align 8 .b64 " + prefix + "_lane[" + std::to_string(kLaneMaps + map_entries) + "];");
  out.push_back("mov.u32 " + polls_register(prefix) + ", 0;");
  out.push_back("mov.u32 " + lane.ticket + ", 0;");
  out.push_back("mov.u32 " + lane.pending + ", " + std::to_string(kAnchorNone << kPendingAnchorAt | kPendingEnded) +
                ";");  // no reservation, no anchor
  out.push_back("mov.u32 " + lane.slot + ", 0;");  // no chunk yet: the first record takes one
  for (const std::string& l : setup) out.push_back(l);
  for (const std::string& l : clear_map_cache(prefix, map_entries)) out.push_back(l);
  return out;
}

}  // namespace tmakit::instrument::detail
