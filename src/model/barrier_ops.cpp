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

void Engine::mbarrier_op(const ptx::Instruction& inst, int cta, int, const std::string& where) {
  using spec::Op;
  const std::string_view id = inst.form().id;
  const std::string_view opcode = inst.form().opcode;
  if (inst.op() == Op::mbar_pending_count) {
    int64_t token = integer(*inst.operand("state"), "state", where);
    store_symbol(*inst.operand("count"), token & ((1 << kPendingBits) - 1));
    return;
  }
  BarrierRef ref;
  if (inst.sel.get("state_space") == ".shared::cluster") {
    auto [rank, off] = cluster_address(*inst.operand("addr"), cta, "addr", where);
    ref = {rank, off};
  } else {
    ref = {cta, shared_cta_address(*inst.operand("addr"), cta, "addr", where)};
  }
  MBarrier& b = barrier(ref, where);
  auto u32 = [&](const char* name) {
    int64_t v = integer(*inst.operand(name), name, where);
    if (v < 0 || v > 0xffffffffll) fail("mbarrier.operand-range", std::string(name) + " " + std::to_string(v) + " is not a u32", where);
    return v;
  };
  std::string what = "mbarrier at shared offset " + std::to_string(ref.offset) + " of CTA " + std::to_string(ref.cta);
  try {
    switch (inst.op()) {
      case Op::mbar_init:
        for (const auto& [opid, op] : in_flight_)
          for (const auto& w : op.writes)
            if (w.space == Range::shared && w.cta == ref.cta && w.begin < ref.offset + 8ull && ref.offset < w.end)
              fail("model.use-before-completion", "mbarrier.init on bytes that " + op.desc + " is still writing", where);
        b.init(u32("count"));
        barrier_history_[ref].clear();
        log(where + ": " + what + " initialised for " + std::to_string(b.expected) + " arrivals");
        break;
      case Op::mbar_arrive: {
        const bool drop = opcode.starts_with("mbarrier.arrive_drop");
        const bool expect = opcode.ends_with(".expect_tx");
        const bool no_complete = opcode.ends_with(".noComplete");
        int64_t count = 1;
        if (!expect && inst.operand("count")) count = u32("count");
        if (expect) {
          b.expect_tx(u32("txCount"));
          barrier_history_[ref].push_back(where + " " + std::string(opcode) + " armed " +
                                          std::to_string(u32("txCount")) + " bytes");
        }
        uint64_t before = b.phase;
        const int64_t pending_before = b.pending;  // §8.2: pending_count reads the count prior to the arrive
        uint64_t token = drop ? b.arrive_drop(count) : b.arrive(count, no_complete);
        store_symbol(*inst.operand("state"), make_token(token, pending_before));
        log(where + ": " + what + " arrive x" + std::to_string(count) +
            (b.phase != before ? ", phase " + std::to_string(before) + " completed" : ""));
        break;
      }
      case Op::mbar_expect_tx:
        b.expect_tx(u32("txCount"));
        barrier_history_[ref].push_back(where + " mbarrier.expect_tx armed " + std::to_string(u32("txCount")) + " bytes");
        break;
      case Op::mbar_complete_tx:
        b.complete_tx(u32("txCount"), where + " mbarrier.complete_tx");
        break;
      case Op::mbar_inval:
        b.inval();
        break;
      default:
        fail("model.internal", "not an mbarrier operation: " + std::string(id), where);
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
