// The mbarrier object of PTX-MB, following the reference state machine of
// tma-semantics.md §8.6. Every undefined use is a DiagnosticError.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tmakit::model {

// §8.1: expected/pending arrivals 1..2^20-1 and tx-count within ±(2^20-1).
inline constexpr int64_t kMaxArrivals = (1 << 20) - 1;
inline constexpr int64_t kMaxTx = (1 << 20) - 1;

struct MBarrier {
  bool valid = false;
  uint64_t phase = 0;
  int64_t pending = 0, expected = 0, tx = 0;
  // Bookkeeping for diagnostics: what the current phase was armed with and delivered,
  // and which operations (by description) fed it.
  int64_t armed = 0, delivered = 0;
  std::vector<std::string> feeders;
  // When the last phase completed, on a clock the driver keeps (Engine::set_clock: tmakit check
  // sets the trace's record index); 0 when no phase completed or no clock is kept.
  uint64_t completed_at = 0;
  uint64_t previous_completed_at = 0;  // the completion before that one (0: none)
  const uint64_t* clock = nullptr;

  void init(int64_t count);
  void expect_tx(int64_t n);
  // Returns true when this completed the phase.
  bool complete_tx(int64_t n, const std::string& by);
  // Returns the state token (the phase at arrival).
  uint64_t arrive(int64_t count, bool no_complete);
  uint64_t arrive_drop(int64_t count);
  bool test_wait(uint64_t token) const;    // state form
  bool test_parity(int64_t parity) const;  // parity form
  void inval();
  bool phase_complete_possible() const { return pending == 0 && tx == 0; }
  // Valid, and nothing has moved its state since its init: no arrival, no transaction, no
  // completed phase. Such a barrier may be initialised again or its memory taken back without
  // an inval: nothing can observe the difference (Triton 3.6's warp-specialised kernels do both).
  bool untouched() const { return valid && phase == 0 && pending == expected && tx == 0 && armed == 0 && delivered == 0; }
  std::string describe() const;  // "phase 0: 1 of 1 arrivals pending, tx-count 512 (armed 1024, delivered 512)"

 private:
  bool try_complete();
  void check_tx() const;
};

}  // namespace tmakit::model
