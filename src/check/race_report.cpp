// The race check's findings (race_pass.hpp): each conflict of an access as a finding of a pair
// of sites, merged and counted, and what the replay said already left out.
#include <set>

#include "race_pass.hpp"

namespace tmakit::check::detail {
namespace {

using instrument::TraceOp;

std::string copy_name(TraceOp op) {
  switch (op) {
    case TraceOp::tensor_load: return "the tensor load";
    case TraceOp::tensor_store: return "the tensor store";
    case TraceOp::tensor_reduce: return "the tensor reduction";
    case TraceOp::bulk_reduce: return "the bulk reduction";
    default: return "the bulk copy";
  }
}

}  // namespace

std::string RacePass::place(size_t idx) const {
  const Who w = who(t_.records[idx], t_.meta);
  return site_place(t_, t_.records[idx].site) + " (cta " + std::to_string(w.cta) + ", thread " +
         std::to_string(w.thread) + ")";
}

// The conflicts one access met, as findings: a pair of sites once, counted.
void RacePass::found(const std::vector<Conflict>& conflicts) {
  std::set<std::tuple<std::string, uint32_t, uint32_t>> seen;  // each pair once an access
  for (const Conflict& c : conflicts) {
    const RaceCopy& cp = copies_[c.copy];
    const size_t at = c.copy_later ? cp.record : c.generic.record;
    const size_t other = c.copy_later ? c.generic.record : cp.record;
    const auto op = static_cast<TraceOp>(t_.records[cp.record].op);
    const std::string bytes = "shared bytes [" + std::to_string(c.begin) + ", " + std::to_string(c.end) + ") of CTA " +
                              std::to_string(c.cta);
    std::string barrier = "its bulk async-group, waited for by cp.async.bulk.wait_group.read in the issuing thread";
    if (!cp.barriers.empty())
      barrier = "the phase it completes on the mbarrier at shared offset " + std::to_string(cp.barriers.front().second) +
                " of CTA " + std::to_string(cp.barriers.front().first);
    std::string rule, message;
    switch (c.kind) {
      case RaceKind::read_after_write:
        rule = "check.race-raw";
        message = c.copy_later
                      ? "reads " + bytes + " that an ordinary store at " + place(other) +
                            " wrote, and nothing orders that store before this copy: the copy may read the old "
                            "bytes; after its stores the writing thread needs fence.proxy.async, then a barrier (or "
                            "an mbarrier) to the issuing thread"
                      : "reads " + bytes + " that " + copy_name(op) + " issued at " + place(other) +
                            " writes, and nothing orders the copy's completion before this read (" + barrier +
                            ", observed by a wait in this thread or passed on to it by a barrier): the read may see "
                            "the old bytes; wait on it first";
        break;
      case RaceKind::write_after_read:
        rule = "check.race-war";
        message = c.copy_later
                      ? "writes " + bytes + " that an ordinary load at " + place(other) +
                            " reads, and nothing orders that read before this copy's issue: the copy may overwrite "
                            "the bytes before they are read; release them first (an mbarrier arrive that the issuing "
                            "thread waits on, or a barrier)"
                      : "overwrites " + bytes + " that " + copy_name(op) + " issued at " + place(other) +
                            " reads, and nothing orders the copy's reads before this store (" + barrier +
                            "): the copy may read the new bytes; wait for it first";
        break;
      case RaceKind::write_after_write:
        rule = "check.race-waw";
        message = c.copy_later
                      ? "writes " + bytes + " that an ordinary store at " + place(other) +
                            " also wrote, and nothing orders that store before this copy: which bytes remain is "
                            "a race; order the store first (fence.proxy.async in the writing thread, then a barrier)"
                      : "writes " + bytes + " that " + copy_name(op) + " issued at " + place(other) +
                            " also writes, and nothing orders the copy's completion before this store (" + barrier +
                            "): the copy's bytes may land after it; wait on it first";
        break;
      case RaceKind::unfenced:
        rule = "model.missing-proxy-fence";
        message = std::string(c.copy_writes ? "the copy engine overwrites " : "the copy engine reads ") + bytes +
                  " that an ordinary st.shared at " + place(other) +
                  " wrote; the store is ordered before this copy (through a barrier or an mbarrier) but no "
                  "fence.proxy.async lies on the way, so the copy may not see it: fence.proxy.async.shared::cta in "
                  "the writing thread after its stores, before the barrier";
        break;
    }
    const auto key = std::tuple{rule, t_.records[at].site, t_.records[other].site};
    if (!seen.insert(key).second) continue;
    auto [it, fresh] = pairs_.try_emplace(key, Pair{at, other, c.copy_later, rule, message, 0});
    it->second.count++;
  }
}

void RacePass::emit() {
  // A thread's access and a copy that nothing orders either way meet at the access in some runs
  // and at the copy's issue in others (the trace's order is the timing's): such a pair of sites
  // is reported once, at the access. What the replay said at the access already stands for it
  // (the model stops a cluster at its first error, so a later one is new).
  auto replay_said = [&](const Pair& p) {
    const uint32_t site = t_.records[p.at].site;
    if (p.rule == "model.missing-proxy-fence") return sink_.has("model.missing-proxy-fence", site);
    if (p.at_copy) return false;
    if (p.rule == "check.race-raw") return sink_.has("check.read-before-wait", site) || sink_.has("check.wrong-parity", site);
    return sink_.has("model.use-before-completion", site);
  };
  std::set<std::pair<uint32_t, uint32_t>> at_access;  // (access site, copy site) reported at the access
  for (const auto& [key, p] : pairs_)
    if (!p.at_copy) at_access.insert({t_.records[p.at].site, t_.records[p.other].site});
  for (const auto& [key, p] : pairs_) {
    if (p.at_copy && p.rule != "model.missing-proxy-fence" &&
        at_access.count({t_.records[p.other].site, t_.records[p.at].site}))
      continue;
    if (replay_said(p)) continue;
    // Merged by the other side's source line, not its site: a loop the compiler unrolled reads
    // one line through several instructions, and the race is one bug (the ring's refill made
    // four errors of one line pair, one an unrolled load).
    sink_.add(p.rule, Severity::error, p.message, p.at, p.count, "with " + site_place(t_, t_.records[p.other].site));
  }
  if (!pairs_.empty() && order_.forced_phases())
    report_.notes.push_back(std::to_string(order_.forced_phases()) +
                            " mbarrier phases were taken as complete where the hardware's wait returned but the "
                            "trace's arrivals or bytes do not complete them: the race check's order there is looser "
                            "than the program's");
}

}  // namespace tmakit::check::detail
