// A lane's state for its records across a function (trace.hpp, docs/check.md "How the module is
// changed"): the registers every site of the function shares, the lane words in local memory,
// and what a function with sites begins with.
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

std::string lane_slot(const std::string& prefix) { return "%" + prefix + "_slot"; }

std::vector<std::string> function_prologue(RegCounts regs, const std::string& prefix, int map_entries,
                                           const std::string& plain) {
  // Whether the lane's cluster is traced: tracing is on (a counters address, word 4) and the
  // cluster is among those word 3 names (`tmakit check --ctas`: [low half, high half) by linear
  // %clusterid; a launch without clusters has each CTA its own; 0 traces every cluster).
  // Looked up once a call, not at each record: five special-register reads.
  Writer w(prefix);
  std::vector<std::string> setup;
  {
    const std::string word3 = w.d(0), counters = w.d(1), traced = w.d(2), a = w.r(0), b = w.r(1), c = w.r(2),
                      lo = w.r(3), hi = w.r(4), in = w.p(0);
    setup.push_back("ld.const.u64 " + word3 + ", " + trace(kTraceClustersWord) + ";");
    setup.push_back("mov.b64 {" + lo + ", " + hi + "}, " + word3 + ";");
    linear_cluster(setup, a, b, c);
    setup.push_back("setp.ge.u32 " + in + ", " + a + ", " + lo + ";");
    setup.push_back("setp.lt.and.u32 " + in + ", " + a + ", " + hi + ", " + in + ";");
    setup.push_back("setp.eq.or.u64 " + in + ", " + word3 + ", 0, " + in + ";");
    setup.push_back("ld.const.u64 " + counters + ", " + trace(kTraceCountersWord) + ";");
    setup.push_back("setp.ne.and.u64 " + in + ", " + counters + ", 0, " + in + ";");
    setup.push_back("selp.u64 " + traced + ", 1, 0, " + in + ";");
    setup.push_back("st.local.u64 " + lane_word(prefix, kLaneTraced) + ", " + traced + ";");
    // A lane of a cluster not traced starts past the capacity: its records take the rare lines,
    // where they are neither written nor counted (the records' common lines test nothing).
    setup.push_back("@!" + in + " mov.u32 " + lane_slot(prefix) + ", " + std::to_string(kPastCapacity) + ";");
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
  out.push_back(".reg .b32 " + polls_register(prefix) + ", " + lane_slot(prefix) + ";");
  out.push_back(".local .align 8 .b64 " + prefix + "_lane[" + std::to_string(kLaneMaps + map_entries) + "];");
  out.push_back("mov.u32 " + polls_register(prefix) + ", 0;");
  out.push_back("mov.u32 " + lane_slot(prefix) + ", 0;");  // no chunk yet: the first record takes one
  for (const std::string& l : setup) out.push_back(l);
  for (const std::string& l : clear_map_cache(prefix, map_entries)) out.push_back(l);
  return out;
}

}  // namespace tmakit::instrument::detail
