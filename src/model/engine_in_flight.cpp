// The engine's operations in flight (§9, §13): issuing and completing copies, the conflicts
// they may not have with ordinary stores and other copies, blocking waits and their
// deadlock report, bulk async-groups, and the end-of-program checks. The core (operand
// evaluation, stepping) is engine.cpp.
#include <algorithm>
#include <cstdio>

#include "tmakit/model/engine.hpp"

namespace tmakit::model {

bool Engine::Range::overlaps(const Range& o) const {
  if (space != o.space || (space == shared && cta != o.cta) || begin >= o.end || o.begin >= end) return false;
  if (!spans && !o.spans) return true;
  // Walk both span lists (a range without spans is one span) for a common byte.
  const std::vector<std::pair<uint64_t, uint64_t>> whole_a{{begin, end}}, whole_b{{o.begin, o.end}};
  const auto& a = spans ? *spans : whole_a;
  const auto& b = o.spans ? *o.spans : whole_b;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i].first < b[j].second && b[j].first < a[i].second) return true;
    if (a[i].second <= b[j].second) ++i;
    else ++j;
  }
  return false;
}

Engine::ThreadState& Engine::thread_state(int cta, int thread) { return threads_[thread_index(cta, thread)]; }

int Engine::thread_index(int cta, int thread) {
  for (size_t i = 0; i < threads_.size(); ++i)
    if (threads_[i].cta == cta && threads_[i].thread == thread) return static_cast<int>(i);
  threads_.push_back({cta, thread, {}, {}, {}});
  return static_cast<int>(threads_.size() - 1);
}

void Engine::check_barrier_overwrite(const Range& r, const std::string& where) {
  if (r.space != Range::shared) return;
  for (auto& [ref, b] : barriers_) {
    if (!b.valid || ref.cta != r.cta || ref.offset >= r.end || r.begin >= ref.offset + 8ull) continue;
    // An untouched barrier's memory is taken back (Triton 3.6's warp-specialised kernels reuse it
    // for data): it holds no barrier from now on, so a later use is `mbarrier.invalid` there.
    if (b.untouched()) {
      b.valid = false;
      continue;
    }
    fail("mbarrier.overwritten",
           "write to shared bytes [" + std::to_string(r.begin) + ", " + std::to_string(r.end) + ") of CTA " +
               std::to_string(r.cta) + " overwrites the live mbarrier at offset " + std::to_string(ref.offset) +
               " while it is in use (" + b.describe() + "; inval it first, after its last use)",
         where);
  }
}

void Engine::check_no_conflict(const Op& op, const std::string& where) const {
  auto describe = [](const Range& r) {
    return std::string(r.space == Range::shared ? "shared bytes [" : "global bytes [") + std::to_string(r.begin) +
           ", " + std::to_string(r.end) + ")" + (r.space == Range::shared ? " of CTA " + std::to_string(r.cta) : "");
  };
  // The same copy issued again (same source bytes, same destination): every lane of a warp
  // issuing one TMA store, as CUTLASS 4.2's epilogue does (issue_tma_store is true in a whole
  // warp). The copies write the same bytes with the same values; no order between them matters.
  auto same_ranges = [](const std::vector<Range>& a, const std::vector<Range>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      const Range &x = a[i], &y = b[i];
      if (x.space != y.space || x.cta != y.cta || x.begin != y.begin || x.end != y.end) return false;
      if (static_cast<bool>(x.spans) != static_cast<bool>(y.spans) || (x.spans && *x.spans != *y.spans)) return false;
    }
    return true;
  };
  for (const auto& [id, other] : in_flight_) {
    if (!op.atomic && !other.atomic && !op.writes.empty() && same_ranges(op.writes, other.writes) &&
        same_ranges(op.reads, other.reads))
      continue;
    for (const auto& w : op.writes) {
      for (const auto& x : other.writes)
        // Two reductions may hit the same elements: each update is atomic (§6.3; the H100
        // summed four concurrent .add reductions of one box, tests/vectors/questions/q18_*).
        if (w.overlaps(x) && !(op.atomic && other.atomic))
          fail("model.in-flight-overlap", "writes " + describe(w) + " that " + other.desc +
                                              " is still writing; wait for it first", where);
      for (const auto& x : other.reads)
        if (w.overlaps(x))
          fail("model.in-flight-overlap", "writes " + describe(w) + " that " + other.desc +
                                              " is still reading; wait for it first", where);
    }
    for (const auto& r : op.reads)
      for (const auto& x : other.writes)
        if (r.overlaps(x))
          fail("model.use-before-completion", "reads " + describe(r) + " before " + other.desc +
                                                  " has completed writing them", where);
  }
}

int Engine::issue(Op op, int cta, int thread, bool bulk_group) {
  const std::string& where = op.desc;
  check_no_conflict(op, where);
  for (const auto& w : op.writes) check_barrier_overwrite(w, where);
  for (const auto& r : op.reads)
    if (r.space == Range::shared)
      for (const auto& u : unfenced_[r.cta])
        if (u.overlaps(r))
          fail("model.missing-proxy-fence",
               "the copy engine reads shared bytes [" + std::to_string(u.begin) + ", " + std::to_string(u.end) +
                   ") written by an ordinary st.shared with no fence.proxy.async.shared::cta in between",
               where);
  op.id = next_op_++;
  for (const auto& [ref, bytes] : op.signals) barrier_history_[ref].push_back(op.desc);
  if (bulk_group) {
    op.group_owner = thread_index(cta, thread);
    threads_[op.group_owner].uncommitted.push_back(op.id);
  }
  log(op.desc + ": issued as operation #" + std::to_string(op.id));
  int id = op.id;
  in_flight_.emplace(id, std::move(op));
  return id;
}

void Engine::read_sources(int id) {
  Op& op = in_flight_.at(id);
  if (op.read_done) return;
  if (op.read) op.read();
  op.read_done = true;
  op.reads.clear();
  log(op.desc + ": sources read (operation #" + std::to_string(id) + ")");
}

void Engine::complete(int id) {
  const std::string desc = in_flight_.at(id).desc;
  // Faults found while completing (the tile walk's global fault, a barrier's tx range)
  // are raised without a place: name the operation's step.
  try {
    read_sources(id);
    Op op = std::move(in_flight_.at(id));
    in_flight_.erase(id);
    if (op.write) op.write();
    log(op.desc + ": completed (operation #" + std::to_string(id) + ")");
    for (const auto& [ref, bytes] : op.signals) {
      MBarrier& b = barrier(ref, op.desc);
      if (!b.valid)
        fail("mbarrier.invalid", "completes on the mbarrier at offset " + std::to_string(ref.offset) + " of CTA " +
                                     std::to_string(ref.cta) + ", which holds no initialised barrier", op.desc);
      bool completed = false;
      try {
        completed = b.complete_tx(static_cast<int64_t>(bytes), op.desc + " (" + std::to_string(bytes) + " bytes)");
      } catch (const DiagnosticError& e) {
        Diagnostic d = e.diagnostic();
        d.message = "mbarrier at shared offset " + std::to_string(ref.offset) + " of CTA " + std::to_string(ref.cta) +
                    ": " + d.message;
        d.where = op.desc;
        throw DiagnosticError(d);
      }
      if (completed)
        log("  mbarrier CTA " + std::to_string(ref.cta) + " offset " + std::to_string(ref.offset) + ": phase " +
            std::to_string(b.phase - 1) + " completed");
    }
  } catch (const DiagnosticError& e) {
    if (!e.diagnostic().where.empty()) throw;
    Diagnostic d = e.diagnostic();
    d.where = desc;
    throw DiagnosticError(d);
  }
}

std::vector<int> Engine::order(std::vector<int> ids) {
  if (cfg_.seed) std::shuffle(ids.begin(), ids.end(), rng_);
  return ids;
}

bool Engine::wait_satisfied(const ptx::MbarWait& w, int cta, const std::string& where, bool complete_ops) {
  BarrierRef ref{cta, shared_cta_address(w.addr, cta, "addr", where)};
  MBarrier& b = barrier(ref, where);
  auto done = [&] {
    // The barrier's own checks (invalid object, stale token, parity) carry no place: add it.
    try {
      return w.parity ? b.test_parity(integer(w.phase, "phaseParity", where))
                      : b.test_wait(static_cast<uint64_t>(integer(w.phase, "state", where)) >> 21);
    } catch (const DiagnosticError& e) {
      if (!e.diagnostic().where.empty()) throw;
      Diagnostic d = e.diagnostic();
      d.where = where;
      d.message = "mbarrier at shared offset " + std::to_string(ref.offset) + " of CTA " + std::to_string(ref.cta) +
                  ": " + d.message;
      throw DiagnosticError(d);
    }
  };
  while (!done()) {
    if (!complete_ops || !complete_one_feeding(ref)) return false;
  }
  return true;
}

bool Engine::complete_one_feeding(BarrierRef ref) {
  std::vector<int> feeding;
  for (const auto& [id, op] : in_flight_)
    for (const auto& s : op.signals)
      if (s.first.cta == ref.cta && s.first.offset == ref.offset) feeding.push_back(id);
  if (feeding.empty()) return false;
  complete(order(feeding).front());
  return true;
}

bool Engine::observe_failed_wait(const ptx::Step& step, int cta, const std::string& where) {
  const auto* w = std::get_if<ptx::MbarWait>(&step.body);
  if (!w) return true;
  admit(step, cta, where);
  if (!guard_holds(step, where)) return true;
  const BarrierRef ref{cta, shared_cta_address(w->addr, cta, "addr", where)};
  while (wait_satisfied(*w, cta, where, false))
    if (!complete_one_feeding(ref)) return false;
  return true;
}

std::string Engine::deadlock_report(const Blocked& blocked, int cta) {
  BarrierRef ref{cta, shared_cta_address(blocked.step.as<ptx::MbarWait>().addr, cta, "addr", blocked.where)};
  const MBarrier& b = barrier(ref, blocked.where);
  std::string msg = std::string(blocked.step.inst.form().opcode) + " on the mbarrier at shared offset " +
                    std::to_string(ref.offset) + " of CTA " + std::to_string(cta) +
                    " can never complete: " + b.describe();
  if (b.tx > 0 && b.pending == 0) msg += "; " + std::to_string(b.tx) + " armed bytes were never delivered";
  if (b.tx < 0) msg += "; " + std::to_string(-b.tx) + " bytes more were delivered than armed";
  const auto& hist = barrier_history_[ref];
  msg += "; operations issued against it: ";
  if (hist.empty()) msg += "none";
  for (size_t i = 0; i < hist.size(); ++i) msg += (i ? "; " : "") + hist[i];
  if (backlog_[cta].size() > 1)
    msg += " (" + std::to_string(backlog_[cta].size() - 1) + " later steps of CTA " + std::to_string(cta) + " never ran)";
  return msg;
}

void Engine::finish() {
  retry_blocked();
  for (auto& [cta, held] : backlog_)
    if (!held.empty()) fail("model.deadlock", deadlock_report(held.front(), cta), held.front().where);
  std::vector<int> ids;
  for (const auto& [id, op] : in_flight_) ids.push_back(id);
  for (int id : order(ids))
    if (in_flight_.count(id)) complete(id);
  for (const auto& [ref, b] : barriers_) {
    if (!b.valid || b.tx == 0) continue;
    std::string msg = "the mbarrier at shared offset " + std::to_string(ref.offset) + " of CTA " +
                      std::to_string(ref.cta) + " ends with an unbalanced transaction count: " + b.describe();
    if (b.tx < 0)
      msg += "; bytes arrived after its phase had completed, so the barrier was armed with fewer bytes than "
             "were delivered (on the hardware an under-armed phase can complete before all bytes land)";
    else
      msg += "; the armed bytes were never all delivered (on the hardware the phase hangs)";
    msg += "; delivered by: ";
    if (b.feeders.empty()) msg += "nothing";
    for (size_t i = 0; i < b.feeders.size(); ++i) msg += (i ? "; " : "") + b.feeders[i];
    fail("model.tx-mismatch", msg, "end of program");
  }
}

}  // namespace tmakit::model
