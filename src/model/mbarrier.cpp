// mbarrier semantics, §8 (PTX-MB). Phase completion: pending == 0 and tx == 0.
#include "tmakit/model/mbarrier.hpp"

#include "tmakit/diag.hpp"

namespace tmakit::model {

void MBarrier::init(int64_t count) {
  // An untouched barrier is initialised again as if it were new (Triton 3.6's warp-specialised
  // kernels do it before first use, with right results on the H100:
  // tests/vectors/check/real-triton-matmul-descriptor-ws). One in use is undefined.
  if (valid && !untouched())
    fail("mbarrier.init-valid", "mbarrier.init on a barrier in use since its last init (" + describe() +
                                    "); inval it first, after its last use");
  if (count < 1 || count > kMaxArrivals)
    fail("mbarrier.count-range", "arrival count " + std::to_string(count) + " outside 1..1048575");
  *this = MBarrier{};
  valid = true;
  pending = expected = count;
}

void MBarrier::check_tx() const {
  if (tx > kMaxTx || tx < -kMaxTx)
    fail("mbarrier.tx-range", "transaction count " + std::to_string(tx) + " leaves ±1048575");
}

void MBarrier::expect_tx(int64_t n) {
  if (!valid) fail("mbarrier.invalid", "expect-tx on memory that holds no initialised barrier");
  if (n < 0 || n > 0xffffffffll) fail("mbarrier.tx-range", "txCount " + std::to_string(n) + " is not a u32");
  tx += n;
  armed += n;
  check_tx();
}

bool MBarrier::complete_tx(int64_t n, const std::string& by) {
  if (!valid) fail("mbarrier.invalid", "complete-tx on memory that holds no initialised barrier");
  tx -= n;
  delivered += n;
  if (!by.empty()) feeders.push_back(by);
  check_tx();
  return try_complete();
}

uint64_t MBarrier::arrive(int64_t count, bool no_complete) {
  if (!valid) fail("mbarrier.invalid", "arrive on memory that holds no initialised barrier");
  if (count < 1 || count > kMaxArrivals)
    fail("mbarrier.count-range", "arrive count " + std::to_string(count) + " outside 1..1048575");
  if (count > pending)
    fail("mbarrier.arrive-underflow", "arrive count " + std::to_string(count) + " exceeds the " +
                                          std::to_string(pending) + " pending arrivals of phase " +
                                          std::to_string(phase) + "");
  uint64_t token = phase;
  pending -= count;
  if (no_complete && pending == 0 && tx == 0)
    fail("mbarrier.nocomplete-completes", "arrive.noComplete would complete phase " + std::to_string(phase) + "");
  try_complete();
  return token;
}

uint64_t MBarrier::arrive_drop(int64_t count) {
  if (!valid) fail("mbarrier.invalid", "arrive_drop on memory that holds no initialised barrier");
  if (count > expected)
    fail("mbarrier.arrive-underflow", "arrive_drop count " + std::to_string(count) + " exceeds the " +
                                          std::to_string(expected) + " expected arrivals");
  expected -= count;
  return arrive(count, false);
}

bool MBarrier::test_wait(uint64_t token) const {
  if (!valid) fail("mbarrier.invalid", "wait on memory that holds no initialised barrier");
  if (token != phase && token + 1 != phase)
    fail("mbarrier.stale-token", "state token of phase " + std::to_string(token) + " is older than the phase before " +
                                     std::to_string(phase) + "");
  return token != phase;
}

bool MBarrier::test_parity(int64_t parity) const {
  if (!valid) fail("mbarrier.invalid", "wait on memory that holds no initialised barrier");
  // A boolean true sign-extended (all ones in 32 bits, or -1) is parity 1: compilers widen an i1
  // that way, and Triton 3.6's warp-specialised kernels wait with it (right results on the H100:
  // tests/vectors/check/real-triton-matmul-descriptor-ws). Any other value is refused.
  if (parity == 0xFFFFFFFFll || parity == -1) parity = 1;
  if (parity != 0 && parity != 1)
    fail("mbarrier.parity", "phaseParity must be 0 or 1 (or all ones, a widened true), got " + std::to_string(parity));
  return static_cast<int64_t>(phase & 1) != parity;
}

void MBarrier::inval() {
  if (!valid) fail("mbarrier.invalid", "mbarrier.inval on memory that holds no initialised barrier");
  valid = false;
}

bool MBarrier::try_complete() {
  if (pending != 0 || tx != 0) return false;
  ++phase;
  if (clock) previous_completed_at = completed_at, completed_at = *clock;
  pending = expected;
  armed = delivered = 0;
  feeders.clear();
  return true;
}

std::string MBarrier::describe() const {
  return "phase " + std::to_string(phase) + " (parity " + std::to_string(phase & 1) + "): " + std::to_string(pending) +
         " of " + std::to_string(expected) + " arrivals pending, transaction count " + std::to_string(tx) +
         " (armed " + std::to_string(armed) + " bytes, delivered " + std::to_string(delivered) + ")";
}

}  // namespace tmakit::model
