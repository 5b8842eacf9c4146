// mbarrier instructions (§8.2): init, arrive (expect_tx, noComplete, drop),
// expect_tx, complete_tx, pending_count, inval. Waits are in engine.cpp.
#include "tmakit/model/engine.hpp"

namespace tmakit::model {
namespace {
// A state token: the phase at arrival and the pending count prior to the arrive-on
// (mbarrier.pending_count reads the latter back from a .noComplete token, §8.2).
constexpr int kPendingBits = 21;
int64_t make_token(uint64_t phase, int64_t pending) {
  return static_cast<int64_t>((phase << kPendingBits) | static_cast<uint64_t>(pending));
}
}  // namespace

void Engine::mbarrier_op(const ptx::Step& step, int cta, const std::string& where) {
  const std::string_view opcode = step.inst.form().opcode;
  if (const auto* pc = std::get_if<ptx::MbarPendingCount>(&step.body)) {
    int64_t token = integer(pc->state, "state", where);
    store_symbol(pc->count, token & ((1 << kPendingBits) - 1));
    return;
  }
  // The barrier's operand and space: every remaining form has one.
  const ptx::Operand* addr = nullptr;
  ptx::Space space = ptx::Space::shared_cta;
  if (const auto* s = std::get_if<ptx::MbarInit>(&step.body)) addr = &s->addr;
  else if (const auto* s = std::get_if<ptx::MbarArrive>(&step.body)) addr = &s->addr, space = s->space;
  else if (const auto* s = std::get_if<ptx::MbarTx>(&step.body)) addr = &s->addr, space = s->space;
  else if (const auto* s = std::get_if<ptx::MbarInval>(&step.body)) addr = &s->addr;
  else fail("model.internal", "not an mbarrier operation: " + std::string(step.inst.form().id), where);
  BarrierRef ref;
  if (space == ptx::Space::shared_cluster) {
    auto [rank, off] = cluster_address(*addr, cta, "addr", where);
    ref = {rank, off};
  } else {
    ref = {cta, shared_cta_address(*addr, cta, "addr", where)};
  }
  MBarrier& b = barrier(ref, where);
  auto u32 = [&](const ptx::Operand& o, const char* name) {
    int64_t v = integer(o, name, where);
    if (v < 0 || v > 0xffffffffll) fail("mbarrier.operand-range", std::string(name) + " " + std::to_string(v) + " is not a u32", where);
    return v;
  };
  std::string what = "mbarrier at shared offset " + std::to_string(ref.offset) + " of CTA " + std::to_string(ref.cta);
  try {
    if (const auto* init = std::get_if<ptx::MbarInit>(&step.body)) {
      for (const auto& [opid, op] : in_flight_)
        for (const auto& w : op.writes)
          if (w.space == Range::shared && w.cta == ref.cta && w.begin < ref.offset + 8ull && ref.offset < w.end)
            fail("model.use-before-completion", "mbarrier.init on bytes that " + op.desc + " is still writing", where);
      b.init(u32(init->count, "count"));
      barrier_history_[ref].clear();
      log(where + ": " + what + " initialised for " + std::to_string(b.expected) + " arrivals");
    } else if (const auto* a = std::get_if<ptx::MbarArrive>(&step.body)) {
      int64_t count = 1;
      if (!a->expect_tx && a->count) count = u32(*a->count, "count");
      if (a->expect_tx) {
        const int64_t tx = u32(*a->txCount, "txCount");
        b.expect_tx(tx);
        barrier_history_[ref].push_back(where + " " + std::string(opcode) + " armed " + std::to_string(tx) + " bytes");
      }
      uint64_t before = b.phase;
      const int64_t pending_before = b.pending;  // §8.2: pending_count reads the count prior to the arrive
      uint64_t token = a->drop ? b.arrive_drop(count) : b.arrive(count, a->no_complete);
      store_symbol(a->state, make_token(token, pending_before));
      log(where + ": " + what + " arrive x" + std::to_string(count) +
          (b.phase != before ? ", phase " + std::to_string(before) + " completed" : ""));
    } else if (const auto* tx = std::get_if<ptx::MbarTx>(&step.body)) {
      const int64_t n = u32(tx->txCount, "txCount");
      if (tx->complete) {
        b.complete_tx(n, where + " mbarrier.complete_tx");
      } else {
        b.expect_tx(n);
        barrier_history_[ref].push_back(where + " mbarrier.expect_tx armed " + std::to_string(n) + " bytes");
      }
    } else {
      b.inval();
    }
  } catch (const DiagnosticError& e) {
    if (!e.diagnostic().where.empty()) throw;
    Diagnostic d = e.diagnostic();
    d.where = where;
    d.message = what + ": " + d.message;
    throw DiagnosticError(d);
  }
}

}  // namespace tmakit::model
