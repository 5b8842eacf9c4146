// The engine's core: operand evaluation and stepping (each instruction executed, blocked or
// retried). Operations in flight, waits and the end-of-program checks: engine_in_flight.cpp.
#include "tmakit/model/engine.hpp"

#include <algorithm>
#include <cstdio>

namespace tmakit::model {

std::string Value::str() const {
  switch (kind) {
    case Kind::integer: return std::to_string(v);
    case Kind::shared: return "shared:" + std::to_string(v);
    case Kind::cluster: return "shared@" + std::to_string(rank) + ":" + std::to_string(v);
    case Kind::global: return "global address " + std::to_string(v);
  }
  return "";
}

Engine::Engine(EngineConfig cfg)
    : cfg_(std::move(cfg)), smem_(cfg_.ctas), unfenced_(cfg_.ctas), rng_(cfg_.seed.value_or(0)) {
  for (auto& s : smem_) s.bytes.assign(cfg_.shared_bytes, 0);
}

void Engine::define_map(const std::string& name, const tensor_map::TensorMap& map) { maps_[name] = map; }

std::optional<Value> Engine::symbol(const std::string& name) const {
  auto it = symbols_.find(name);
  if (it == symbols_.end()) return std::nullopt;
  return it->second;
}

Value Engine::eval(const ptx::Expr& e, const std::string& where) const {
  if (e.is_immediate()) return {Value::Kind::integer, e.offset};
  auto it = symbols_.find(e.symbol);
  if (it == symbols_.end()) {
    if (maps_.count(e.symbol)) fail("model.operand", "tensor map `" + e.symbol + "` used as a value", where);
    fail("model.unknown-symbol", "unknown symbol `" + e.symbol + "`", where);
  }
  Value v = it->second;
  v.v += e.offset;
  return v;
}

int64_t Engine::integer(const ptx::Operand& o, const std::string& what, const std::string& where) const {
  Value v = eval(o.expr, where);
  if (v.kind != Value::Kind::integer)
    fail("model.operand", what + " must be an integer, got " + v.str(), where);
  return v.v;
}

uint32_t Engine::shared_cta_address(const ptx::Operand& o, int cta, const std::string& what,
                                    const std::string& where) const {
  Value v = eval(o.expr, where);
  if (v.kind == Value::Kind::cluster && v.rank != cta)
    fail("model.shared-cta-remote",
         what + " is a .shared::cta operand but names CTA " + std::to_string(v.rank) + "'s memory (" + v.str() +
             "); the executing CTA is " + std::to_string(cta),
         where);
  if (v.kind == Value::Kind::global) fail("model.address-space", what + " must be a shared address, got " + v.str(), where);
  if (v.v < 0 || v.v >= static_cast<int64_t>(cfg_.shared_bytes))
    fail("model.shared-range", what + " " + v.str() + " is outside the " + std::to_string(cfg_.shared_bytes) +
                                   " bytes of shared memory", where);
  return static_cast<uint32_t>(v.v);
}

std::pair<int, uint32_t> Engine::cluster_address(const ptx::Operand& o, int cta, const std::string& what,
                                                 const std::string& where) const {
  Value v = eval(o.expr, where);
  if (v.kind == Value::Kind::global) fail("model.address-space", what + " must be a shared address, got " + v.str(), where);
  int rank = v.kind == Value::Kind::cluster ? v.rank : cta;
  if (rank < 0 || rank >= cfg_.ctas)
    fail("model.cluster-rank", what + " names CTA " + std::to_string(rank) + " of a cluster of " + std::to_string(cfg_.ctas), where);
  if (v.v < 0 || v.v >= static_cast<int64_t>(cfg_.shared_bytes))
    fail("model.shared-range", what + " " + v.str() + " is outside the " + std::to_string(cfg_.shared_bytes) +
                                   " bytes of shared memory", where);
  return {rank, static_cast<uint32_t>(v.v)};
}

uint64_t Engine::global_address(const ptx::Operand& o, const std::string& what, const std::string& where) const {
  Value v = eval(o.expr, where);
  if (v.kind == Value::Kind::shared || v.kind == Value::Kind::cluster)
    fail("model.address-space", what + " must be a global address, got " + v.str(), where);
  return static_cast<uint64_t>(v.v);
}

Engine::Landing Engine::landing(const ptx::Operand& dst, const ptx::Operand& mbar,
                                const std::optional<ptx::Operand>& cta_mask, bool pair, int cta, bool cta_window,
                                const char* mbar_rule, const std::string& where) const {
  Landing l;
  // §10.2: with .cta_group::2 the barrier may be in the destination CTA or its peer
  // (the CTA pair is ranks 2k, 2k+1); the parity of the CTA holding mbar picks which.
  auto peer_check = [&](int dest, int mrank) {
    if (mrank != dest && mrank != (dest ^ 1))
      fail(mbar_rule, "mbar is in CTA " + std::to_string(mrank) + " but dstMem in CTA " + std::to_string(dest) +
                          ": with .cta_group::2 the barrier must be in the destination CTA or its peer CTA " +
                          std::to_string(dest ^ 1) + "", where);
  };
  if (cta_window) {
    l.dst = shared_cta_address(dst, cta, "dstMem", where);
    l.ctas = {cta};
    if (!pair) {
      l.mbar = shared_cta_address(mbar, cta, "mbar", where);
      l.mbar_ctas = {cta};
      return l;
    }
    auto [mrank, moff] = cluster_address(mbar, cta, "mbar", where);
    peer_check(cta, mrank);
    l.mbar = moff;
    l.mbar_ctas = {mrank};
    return l;
  }
  auto [rank, off] = cluster_address(dst, cta, "dstMem", where);
  auto [mrank, moff] = cluster_address(mbar, cta, "mbar", where);
  l.dst = off;
  l.mbar = moff;
  if (const auto& m = cta_mask) {
    // §10.1: bit r selects %cluster_ctarank r (H16); offsets are CTA-relative in every destination.
    const int64_t mask = integer(*m, "ctaMask", where);
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(mask & 0xffffffffll));
    if (mask <= 0 || mask > 0xffff) fail("multicast.mask-empty", std::string("ctaMask ") + hex + " selects no CTA", where);
    for (int r = 0; r < 16; ++r)
      if (mask >> r & 1) {
        if (r >= cfg_.ctas)
          fail("multicast.mask-range", std::string("ctaMask ") + hex + " selects CTA " + std::to_string(r) +
                                           " of a cluster of " + std::to_string(cfg_.ctas) + "", where);
        l.ctas.push_back(r);
        // §10.2: ::1 signals each destination's own barrier; ::2 the destination or its
        // peer, whichever has the parity of the CTA that holds mbar.
        const int to = pair ? ((r & ~1) | (mrank & 1)) : r;
        if (to >= cfg_.ctas)
          fail("multicast.peer-missing", std::string("ctaMask ") + hex + " selects CTA " + std::to_string(r) +
                                             ", whose .cta_group::2 signal goes to CTA " + std::to_string(to) +
                                             " (the parity of mbar's CTA " + std::to_string(mrank) +
                                             "), outside the cluster of " + std::to_string(cfg_.ctas) + "",
               where);
        l.mbar_ctas.push_back(to);
      }
    return l;
  }
  if (pair) {
    peer_check(rank, mrank);
    l.ctas = {rank};
    l.mbar_ctas = {mrank};
    return l;
  }
  // Without multicast (and with .cta_group::1) the barrier is in the destination's CTA (§7, §10.2).
  if (mrank != rank)
    fail(mbar_rule, "mbar is in CTA " + std::to_string(mrank) + " but dstMem in CTA " + std::to_string(rank) +
                        ": the destination is CTA " + std::to_string(rank) +
                        ", and the barrier must be in the destination CTA", where);
  l.ctas = {rank};
  l.mbar_ctas = {rank};
  return l;
}

void Engine::store_symbol(const ptx::Operand& o, int64_t value) {
  if (o.kind == ptx::Operand::Kind::sink) return;
  symbols_[o.expr.symbol] = {Value::Kind::integer, value};
}

void Engine::check_shared_range(int cta, uint64_t offset, uint64_t bytes, const std::string& what,
                                const std::string& where) const {
  if (offset > cfg_.shared_bytes || bytes > cfg_.shared_bytes - offset)
    fail("model.shared-range", what + " [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                                   ") of CTA " + std::to_string(cta) + " overflows its " +
                                   std::to_string(cfg_.shared_bytes) + " bytes of shared memory",
         where);
}

MBarrier& Engine::barrier(BarrierRef ref, const std::string& where) {
  if (ref.offset % 8)
    fail("mbarrier.align", "mbarrier at shared offset " + std::to_string(ref.offset) + " is not 8-byte aligned", where);
  check_shared_range(ref.cta, ref.offset, 8, "the mbarrier", where);
  MBarrier& b = barriers_[ref];
  b.clock = &clock_;
  return b;
}

// ---- stepping ----

void Engine::admit(const ptx::Step& step, int cta, const std::string& where) {
  if (cta < 0 || cta >= cfg_.ctas)
    fail("model.cta", "step names CTA " + std::to_string(cta) + " of a cluster of " + std::to_string(cfg_.ctas), where);
  // The checks read the instruction's form and qualifiers (its canonical mnemonic) and operand
  // count, never operand values: an instruction found clean once is clean again (a replay steps
  // the same few instructions millions of times). One with a diagnostic is checked every time.
  std::string key = step.mnemonic;
  key += '/';
  key += std::to_string(step.inst.operands.size());
  if (clean_forms_.count(key)) return;
  const auto diags = ptx::check(step.inst, cfg_.target, cfg_.ptx_version);
  for (const auto& d : diags) {
    if (d.severity == Severity::error) throw DiagnosticError({d.severity, d.rule, d.message, where});
    warnings_.push_back({d.severity, d.rule, d.message, where});
  }
  if (diags.empty()) clean_forms_.insert(std::move(key));
}

void Engine::step(const ptx::Step& step, int cta, int thread, const std::string& where) {
  admit(step, cta, where);
  auto& held = backlog_[cta];
  if (!held.empty()) {
    log(where + ": held (CTA " + std::to_string(cta) + " is blocked in a wait)");
    held.push_back({step, thread, where});
    return;
  }
  if (!execute(step, cta, thread, where)) held.push_back({step, thread, where});
  retry_blocked();
}

bool Engine::try_step(const ptx::Step& step, int cta, int thread, const std::string& where) {
  admit(step, cta, where);
  return execute(step, cta, thread, where);
}

const MBarrier* Engine::find_barrier(int cta, uint32_t offset) const {
  auto it = barriers_.find({cta, offset});
  return it == barriers_.end() ? nullptr : &it->second;
}

std::optional<Engine::InFlightWriter> Engine::in_flight_writer(int cta, uint64_t begin, uint64_t end) const {
  const Range r{Range::shared, cta, begin, end};
  for (const auto& [id, op] : in_flight_)
    for (const auto& w : op.writes)
      if (w.overlaps(r)) {
        InFlightWriter out{op.desc, {}};
        for (const auto& [ref, bytes] : op.signals) out.barriers.push_back({ref.cta, ref.offset});
        return out;
      }
  return std::nullopt;
}

bool Engine::guard_holds(const ptx::Step& step, const std::string& where) const {
  const auto& guard = step.guard();
  if (!guard) return true;
  const Value p = eval({guard->predicate, 0}, where);
  if ((p.v != 0) != guard->negated) return true;
  log(where + ": skipped (guard " + guard->predicate + " = " + std::to_string(p.v) + ")");
  return false;
}

bool Engine::execute(const ptx::Step& step, int cta, int thread, const std::string& where) {
  if (!guard_holds(step, where)) return true;
  const std::string_view opcode = step.inst.form().opcode;
  const auto& b = step.body;
  if (const auto* s = std::get_if<ptx::BulkCopy>(&b)) {
    bulk_copy(*s, where + " " + step.mnemonic, cta, thread, where);
  } else if (const auto* s = std::get_if<ptx::BulkReduce>(&b)) {
    bulk_reduce(*s, where + " " + step.mnemonic, cta, thread, where);
  } else if (const auto* s = std::get_if<ptx::TensorCopy>(&b)) {
    tensor_op(*s, where + " " + step.mnemonic, cta, thread, where);
  } else if (const auto* s = std::get_if<ptx::BulkPrefetch>(&b)) {
    // A hint with no architectural effect; its operands are still checked (§7).
    uint64_t src = global_address(s->srcMem, "srcMem", where);
    int64_t size = integer(s->size, "size", where);
    if (size % 16 || src % 16)
      fail("bulk.align", "cp.async.bulk.prefetch needs a 16-byte aligned address and size, got address " +
                             std::to_string(src) + ", size " + std::to_string(size), where);
    log(where + ": prefetch (no effect)");
  } else if (std::holds_alternative<ptx::CommitGroup>(b)) {
    auto& t = thread_state(cta, thread);
    t.groups.push_back({t.uncommitted});
    t.uncommitted.clear();
    log(where + ": commit_group (" + std::to_string(t.groups.back().ops.size()) + " operations)");
  } else if (const auto* s = std::get_if<ptx::WaitGroup>(&b)) {
    int64_t n = integer(s->n, "N", where);
    if (n < 0) fail("bulk.wait-group", "wait_group N must be non-negative, got " + std::to_string(n), where);
    auto& t = thread_state(cta, thread);
    const bool read_only = s->read;
    if (!read_only) {
      for (auto& g : t.read_only)
        for (int id : order(g.ops)) if (in_flight_.count(id)) complete(id);
      t.read_only.clear();
    }
    while (static_cast<int64_t>(t.groups.size()) > n) {
      Group g = t.groups.front();
      t.groups.pop_front();
      for (int id : order(g.ops)) {
        if (!in_flight_.count(id)) continue;
        if (read_only) read_sources(id);
        else complete(id);
      }
      if (read_only) t.read_only.push_back(g);
    }
  } else if (const auto* s = std::get_if<ptx::MbarWait>(&b)) {
    bool ok = wait_satisfied(*s, cta, where, s->blocking);
    if (!ok && s->blocking) {
      log(where + ": blocked in " + std::string(opcode));
      return false;
    }
    store_symbol(s->waitComplete, ok ? 1 : 0);
  } else if (const auto* s = std::get_if<ptx::Fence>(&b)) {
    if (s->kind == ptx::Fence::Kind::proxy_async && s->space != ptx::Space::global) unfenced_[cta].clear();
    log(where + ": " + std::string(opcode));
  } else if (std::holds_alternative<ptx::ClusterBarrier>(b)) {
    log(where + ": " + std::string(opcode) + " (no ordering needed in the sequential model)");
  } else if (const auto* s = std::get_if<ptx::Store>(&b)) {
    plain_store(*s, cta, where);
  } else if (std::holds_alternative<ptx::TensormapOp>(b)) {
    fail("model.unsupported", std::string(opcode) + " is checked by the PTX front end but not modelled", where);
  } else {
    mbarrier_op(step, cta, where);  // init, arrive, expect_tx, complete_tx, pending_count, inval
  }
  return true;
}

void Engine::retry_blocked() {
  bool progress = true;
  while (progress) {
    progress = false;
    for (auto& [cta, held] : backlog_) {
      while (!held.empty()) {
        Blocked& b = held.front();
        if (!execute(b.step, cta, b.thread, b.where)) break;
        log(b.where + ": resumed");
        held.pop_front();
        progress = true;
      }
    }
  }
}

void Engine::plain_store(const ptx::Store& s, int cta, const std::string& where) {
  const int bytes = s.bytes;
  int64_t value = integer(s.value, "value", where);
  Range r;
  uint8_t* dst;
  if (s.space == ptx::Space::global) {
    uint64_t a = global_address(s.addr, "addr", where);
    dst = global_.find(a, bytes);
    if (!dst) fail("model.global-fault", "st.global to " + std::to_string(a) + " (" + std::to_string(bytes) +
                                             " bytes) is outside every global allocation", where);
    r = {Range::global, 0, a, a + bytes};
  } else {
    uint32_t a = shared_cta_address(s.addr, cta, "addr", where);
    check_shared_range(cta, a, bytes, "st.shared", where);
    dst = smem_[cta].bytes.data() + a;
    r = {Range::shared, cta, a, a + static_cast<uint64_t>(bytes)};
    unfenced_[cta].push_back(r);
  }
  if (r.begin % bytes)
    fail("model.store-align", "st of " + std::to_string(bytes) + " bytes to unaligned address " + std::to_string(r.begin), where);
  for (const auto& [id, op] : in_flight_)
    for (const auto* list : {&op.reads, &op.writes})
      for (const auto& x : *list)
        if (x.overlaps(r))
          fail("model.use-before-completion",
               "ordinary store to bytes [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
                   ") that " + op.desc + " still has in flight; wait for its completion first",
               where);
  check_barrier_overwrite(r, where);
  for (int i = 0; i < bytes; ++i) dst[i] = static_cast<uint8_t>(static_cast<uint64_t>(value) >> (8 * i));
}

}  // namespace tmakit::model
