// The order between threads and the copy engine (race_order.hpp): vector clocks moved along
// CTA barriers, cluster barriers, mbarrier phases and bulk async-groups.
#include <algorithm>

#include "race_order.hpp"

namespace tmakit::check::detail {

void Clock::raise(uint32_t c, uint32_t x) {
  if (c >= v_.size()) v_.resize(c + 1, 0);
  v_[c] = std::max(v_[c], x);
}

void Clock::join(const Clock& o) {
  if (o.v_.size() > v_.size()) v_.resize(o.v_.size(), 0);
  for (size_t i = 0; i < o.v_.size(); ++i) v_[i] = std::max(v_[i], o.v_[i]);
}

uint32_t Order::thread(int cta, int tid) {
  const uint64_t key = uint64_t(uint32_t(cta)) << 32 | uint32_t(tid);
  auto [it, fresh] = index_.try_emplace(key, static_cast<uint32_t>(threads_.size()));
  if (fresh) threads_.push_back(Thread{cta});
  return it->second;
}

uint32_t Order::component(uint32_t t) {
  Thread& th = threads_[t];
  if (th.comp < 0) {
    th.comp = new_component();
    th.c.hb.raise(static_cast<uint32_t>(th.comp), 1);
  }
  return static_cast<uint32_t>(th.comp);
}

// After a release (or a fence, or a copy's issue): the thread's later accesses get a new epoch,
// so what was released is told apart from what came after it.
void Order::tick(Thread& th) {
  if (th.comp >= 0) th.c.hb.raise(static_cast<uint32_t>(th.comp), th.c.hb.get(static_cast<uint32_t>(th.comp)) + 1);
}

bool Order::settle(uint32_t t, bool may_close) {
  Thread& th = threads_[t];
  if (th.passing) {
    // The hardware let the thread through, so every participant had arrived; a generation short
    // of its count (threads that exited, a count the trace cannot see) closes here.
    if (th.passing->open) {
      if (!may_close) return false;
      th.passing->open = false;
    }
    th.c.join(th.passing->joined);
    th.passing.reset();
  }
  if (th.cluster_gen) {
    if (auto g = cluster_gens_.find(*th.cluster_gen); g != cluster_gens_.end()) th.c.join(g->second);
    th.cluster_gen.reset();
  }
  return true;
}

void Order::cta_barrier(uint32_t t, uint32_t id, uint32_t count, bool waits) {
  Thread& th = threads_[t];
  auto& g = cta_bars_[{th.cta, id}];
  if (!g || !g->open) {
    g = std::make_shared<Generation>();
    g->expected = count ? count : block_threads_;
  }
  g->joined.join(th.c);
  g->arrived++;
  tick(th);
  if (waits) th.passing = g;
  if (g->arrived >= g->expected) g->open = false;  // the next arrival starts the next generation
}

void Order::cluster_arrive(uint32_t t, bool release) {
  Thread& th = threads_[t];
  const uint32_t gen = th.cluster_arrivals++;
  if (release) cluster_gens_[gen].join(th.c);  // .relaxed releases nothing
  tick(th);
}

void Order::cluster_wait(uint32_t t) { threads_[t].cluster_gen = threads_[t].cluster_waits++; }

void Order::proxy_fence(uint32_t t) {
  Thread& th = threads_[t];
  th.c.fenced.join(th.c.hb);
  tick(th);
}

Order::MBar& Order::bar(int cta, uint32_t offset) {
  auto [it, fresh] = mbars_.try_emplace({cta, offset});
  if (fresh) it->second.comp = new_component();
  return it->second;
}

void Order::mbar_init(int cta, uint32_t offset, uint32_t count) {
  MBar& b = bar(cta, offset);
  const uint32_t comp = b.comp, seq = b.seq;
  b = MBar{};
  b.comp = comp, b.seq = seq;  // copies keep their numbers across a new init
  b.valid = true;
  b.expected = b.pending = count;
}

void Order::mbar_inval(int cta, uint32_t offset) { bar(cta, offset).valid = false; }

// The current phase completes once its arrivals are in and its bytes landed: the copies'
// bytes are counted here, when something needs the phase (a wait, the next phase's arrive).
// `force`: complete it whatever the counts say (the hardware says it completed).
bool Order::try_complete(MBar& b, bool force) {
  if (b.pending > 0 && !force) return false;
  while (b.tx > 0 && !b.copies.empty()) {
    const uint64_t n = b.copies.front();
    b.copies.pop_front();
    b.tx = n ? b.tx - static_cast<int64_t>(n) : 0;  // bytes not known: taken as the rest
  }
  if (b.tx != 0 && !force) return false;
  if (b.tx != 0 || b.pending > 0) ++forced_;
  b.snap[b.phase & 1] = std::make_shared<const Clocks>(b.acc);
  b.snap_phase[b.phase & 1] = b.phase;
  b.phase++;
  b.pending = b.expected;
  b.tx = 0;
  return true;
}

void Order::mbar_arrive(uint32_t t, int cta, uint32_t offset, const Arrive& a) {
  Thread& th = threads_[t];
  MBar& b = bar(cta, offset);
  // An arrive on a phase whose arrivals are all in belongs to the next one: the current phase
  // completed (its bytes landed) before it.
  if (b.valid && b.pending <= 0) try_complete(b, true);
  if (a.token) {
    b.tokens[*a.token] = b.phase;
    if (b.tokens.size() > 64) b.tokens.erase(b.tokens.begin());
  }
  b.tx += a.tx;
  b.pending -= a.count;
  if (a.drop && b.expected > 0) b.expected--;
  if (a.release) b.acc.join(th.c);
  tick(th);
  if (b.valid && b.pending <= 0 && !a.no_complete) try_complete(b, false);
}

void Order::mbar_tx(int cta, uint32_t offset, int64_t bytes, bool complete) {
  MBar& b = bar(cta, offset);
  b.tx += complete ? -bytes : bytes;
  if (complete && b.valid && b.pending <= 0) try_complete(b, false);
}

Completion Order::mbar_copy(uint32_t t, int cta, uint32_t offset, uint64_t bytes) {
  MBar& b = bar(cta, offset);
  b.copies.push_back(bytes);
  if (b.copies.size() > 4096) {  // never needed by a wait: count the oldest now (bounded memory)
    const uint64_t n = b.copies.front();
    b.copies.pop_front();
    b.tx = n ? b.tx - static_cast<int64_t>(n) : 0;
  }
  b.seq++;
  b.acc.join(threads_[t].c);  // what came before the issue is before the copy's bytes land
  b.acc.hb.raise(b.comp, b.seq);
  return {b.comp, b.seq};
}

bool Order::mbar_wait(uint32_t t, int cta, uint32_t offset, std::optional<uint32_t> parity,
                      std::optional<uint64_t> token, bool force) {
  Thread& th = threads_[t];
  MBar& b = bar(cta, offset);
  if (!b.valid) {  // no init in the trace: what was released into it so far
    th.c.join(b.acc);
    return true;
  }
  uint64_t seen;  // the phase the wait observed complete
  if (parity) {
    // The wait returns while the current phase's parity differs from the one it names: it saw
    // the phase before the current one; the phase before the first means nothing to acquire.
    if ((b.phase & 1) != (*parity & 1)) {
      if (b.phase == 0) return true;
      seen = b.phase - 1;
    } else {
      seen = b.phase;
    }
  } else {
    auto it = token ? b.tokens.find(*token) : b.tokens.end();
    seen = it != b.tokens.end() ? it->second : b.phase ? b.phase - 1 : 0;
  }
  if (seen >= b.phase && !try_complete(b, force)) return false;
  const auto& s = b.snap[seen & 1];
  if (s && b.snap_phase[seen & 1] >= seen) th.c.join(*s);
  else th.c.join(b.acc);  // a token older than the barriers kept: the later phase's clocks cover it
  return true;
}

Completion Order::group_copy(uint32_t t) {
  Thread& th = threads_[t];
  if (th.group_comp < 0) th.group_comp = new_component();
  return {static_cast<uint32_t>(th.group_comp), th.commits + 1};
}

void Order::commit_group(uint32_t t) { threads_[t].commits++; }

void Order::wait_group(uint32_t t, uint64_t allowed_pending) {
  Thread& th = threads_[t];
  if (th.commits <= allowed_pending) return;
  if (th.group_comp < 0) th.group_comp = new_component();
  th.c.hb.raise(static_cast<uint32_t>(th.group_comp), static_cast<uint32_t>(th.commits - allowed_pending));
}

void Order::issued(uint32_t t) { tick(threads_[t]); }

size_t Order::entries() const {
  // Every holder's clocks may reach every component: threads, barrier generations, cluster
  // generations, mbarriers (with their two snapshots), two clocks each.
  const size_t holders = threads_.size() + cta_bars_.size() + cluster_gens_.size() + 3 * mbars_.size();
  return holders * 2 * static_cast<size_t>(next_comp_);
}

}  // namespace tmakit::check::detail
