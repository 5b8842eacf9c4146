// Internal to the check layer: the order a kernel's synchronisation guarantees between its
// threads and the copy engine, as vector clocks over one cluster's trace (race_order.cpp).
// races.cpp walks the records and asks it; race_memory.cpp keeps who touched which bytes.
//
// A clock has one component for each of:
//   - a thread that reads or writes shared memory with ordinary ld/st (its epoch: raised after
//     each of its releases, so an access is "before" another thread's point when that point's
//     clock has reached the access's epoch);
//   - an mbarrier: the copies completing on it, numbered in issue order (a copy's bytes have
//     landed before a point whose clock has reached its number);
//   - a thread's bulk async-groups: how many of its committed groups are known to have read
//     their sources (cp.async.bulk.wait_group[.read]).
// Each thread, and each synchronisation object, holds two clocks: the happens-before order,
// and the part of it that went through a fence.proxy.async (the async proxy is ordered after an
// ordinary store only through such a fence on the way: in the storing thread after the store,
// or in any thread the store was ordered before).
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tmakit::check::detail {

class Clock {
 public:
  uint32_t get(uint32_t c) const { return c < v_.size() ? v_[c] : 0; }
  void raise(uint32_t c, uint32_t x);  // component c at least x
  void join(const Clock& o);
  size_t size() const { return v_.size(); }

 private:
  std::vector<uint32_t> v_;
};

struct Clocks {
  Clock hb, fenced;
  void join(const Clocks& o) {
    hb.join(o.hb);
    fenced.join(o.fenced);
  }
};

// When a copy's access is over: before a point whose happens-before clock has `value` at `comp`.
struct Completion {
  uint32_t comp = 0, value = 0;
};

class Order {
 public:
  explicit Order(uint32_t block_threads) : block_threads_(block_threads) {}

  uint32_t thread(int cta, int tid);  // the thread's index, made at first sight
  int cta_of(uint32_t t) const { return threads_[t].cta; }
  const Clocks& clocks(uint32_t t) const { return threads_[t].c; }
  // The thread's own component (made at its first ordinary shared access) and its epoch there.
  uint32_t component(uint32_t t);
  uint32_t epoch(uint32_t t) { return threads_[t].c.hb.get(component(t)); }

  // Before each record of thread t: it has passed the barriers it recorded last (records are
  // written before a CTA or cluster barrier, so every participant's record precedes every record
  // after it) and acquires what they released. False where the CTA barrier's generation is still
  // short of its thread count and `may_close` is false: the walk holds t while another thread of
  // its CTA is held (its arrival may be among that thread's records).
  bool settle(uint32_t t, bool may_close);

  // bar.sync / bar.red (`waits`) and bar.arrive on barrier `id` of t's CTA, for `count` threads
  // (0: every thread of the CTA).
  void cta_barrier(uint32_t t, uint32_t id, uint32_t count, bool waits);
  void cluster_arrive(uint32_t t, bool release);
  void cluster_wait(uint32_t t);
  void proxy_fence(uint32_t t);  // fence.proxy.async (shared memory): what t knows is now fenced

  // mbarriers, by (CTA, shared offset). Phases are followed as the hardware counts them: pending
  // arrivals from the init count, the transaction count from expect-tx and the copies' bytes.
  void mbar_init(int cta, uint32_t offset, uint32_t count);
  void mbar_inval(int cta, uint32_t offset);
  struct Arrive {
    uint32_t count = 1;
    int64_t tx = 0;  // .expect_tx
    bool drop = false, no_complete = false, release = true;
    std::optional<uint64_t> token;  // the state it returned (a token-form wait names it)
  };
  void mbar_arrive(uint32_t t, int cta, uint32_t offset, const Arrive& a);
  // expect_tx and complete_tx (both .relaxed: they release nothing).
  void mbar_tx(int cta, uint32_t offset, int64_t bytes, bool complete);
  // A copy issued by t that completes on the barrier (`bytes` 0: not known): t's point is released
  // into the barrier at once; the bytes count toward a phase when a wait needs it (as the model does).
  Completion mbar_copy(uint32_t t, int cta, uint32_t offset, uint64_t bytes);
  // A wait the hardware saw succeed, by parity or by a token. It acquires the barrier as it was when
  // the phase it observed completed. False: that phase has not completed yet in the walk (an
  // arrive is recorded after it returns, so a waiter's record can come first): hold t. `force`
  // (the end of the walk): take the phase as complete.
  bool mbar_wait(uint32_t t, int cta, uint32_t offset, std::optional<uint32_t> parity, std::optional<uint64_t> token,
                 bool force);

  Completion group_copy(uint32_t t);  // a copy t issues: done once its next bulk group is waited for
  void commit_group(uint32_t t);
  void wait_group(uint32_t t, uint64_t allowed_pending);
  void issued(uint32_t t);  // after a copy's issue: t's later accesses are not before it

  // Clock entries held (the memory bound) and phases completed by force (bytes not known, records
  // missing): the order is then looser than the program's.
  size_t entries() const;
  uint64_t forced_phases() const { return forced_; }

 private:
  struct Generation {
    Clocks joined;
    uint32_t arrived = 0, expected = 0;
    bool open = true;
  };
  struct Thread {
    int cta = 0;
    Clocks c;
    int64_t comp = -1, group_comp = -1;
    uint32_t commits = 0, cluster_arrivals = 0, cluster_waits = 0;
    std::shared_ptr<Generation> passing;   // the CTA barrier generation it recorded last (bar.sync)
    std::optional<uint32_t> cluster_gen;   // the cluster barrier generation it waits on
  };
  struct MBar {
    bool valid = false;
    int64_t expected = 0, pending = 0, tx = 0;
    uint64_t phase = 0;  // phases completed
    Clocks acc;          // everything released into it so far
    std::array<std::shared_ptr<const Clocks>, 2> snap;  // acc when the last phase of each parity completed
    std::array<uint64_t, 2> snap_phase{};
    std::deque<uint64_t> copies;  // bytes of copies issued and not yet counted (0: not known)
    uint32_t comp = 0, seq = 0;
    std::map<uint64_t, uint64_t> tokens;  // hardware state token -> its phase (the latest few)
  };

  uint32_t new_component() { return next_comp_++; }
  void tick(Thread& th);
  MBar& bar(int cta, uint32_t offset);
  bool try_complete(MBar& b, bool force);

  uint32_t block_threads_;
  uint32_t next_comp_ = 0;
  uint64_t forced_ = 0;
  std::vector<Thread> threads_;
  std::unordered_map<uint64_t, uint32_t> index_;  // cta << 32 | thread -> index
  std::map<std::pair<int, uint32_t>, std::shared_ptr<Generation>> cta_bars_;
  std::map<uint32_t, Clocks> cluster_gens_;
  std::map<std::pair<int, uint32_t>, MBar> mbars_;
};

}  // namespace tmakit::check::detail
