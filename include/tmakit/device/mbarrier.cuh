// mbarrier helpers (§8) on CCCL's cuda::ptx, plus a bounded wait for debugging.
// Every form CCCL 13.0 has goes through it; inline PTX only for what it lacks
// (cuda/__ptx/instructions/generated/mbarrier_*.h has no arrive_drop, no
// complete_tx and no inval): docs/device-library.md, "Inline PTX".
//
// Scope (template parameter, default cta): the .cta / .cluster scope of the
// release (arrives) or acquire (waits); use Scope::cluster when the arrival or
// the data comes from other CTAs of the cluster (multicast, remote arrives, §10.1).
// Barriers are `uint64_t*` in the executing CTA's shared memory; `remote_bar`
// is the same barrier in another CTA's window (cluster.map_shared_rank / mapa).
//
// Define TMAKIT_DEBUG_WAIT (e.g. -DTMAKIT_DEBUG_WAIT) to turn every wait_parity
// into a bounded wait: after TMAKIT_DEBUG_WAIT_NS nanoseconds (default 2 s) it
// prints the barrier's shared address, the parity it waited for and the bytes
// the caller armed, then traps, so a mis-armed barrier (§2.3: over-armed
// barriers never complete) is named instead of hanging the GPU.
#pragma once
#include <cuda/barrier>
#include <cuda/ptx>

#include <cstdint>
#include <cstdio>

#include "tmakit/device/detail/operands.cuh"
#include "tmakit/device/map.cuh"

namespace tmakit::device {

// The debug wait's bound (TMAKIT_DEBUG_WAIT_NS, a configuration macro the header reads and
// never defines).
#ifdef TMAKIT_DEBUG_WAIT_NS
inline constexpr uint64_t kDebugWaitNs = TMAKIT_DEBUG_WAIT_NS;
#else
inline constexpr uint64_t kDebugWaitNs = 2000000000ull;
#endif

enum class Scope { cta, cluster };

namespace detail {
template <Scope S>
__device__ constexpr auto cccl_scope() {
  if constexpr (S == Scope::cta) return cuda::ptx::scope_cta;
  else return cuda::ptx::scope_cluster;
}
}  // namespace detail

// mbarrier.init.shared::cta.b64 [bar], count; count in [1, 2^20 - 1] (§8.1).
__device__ inline void mbar_init(uint64_t* bar, uint32_t count) { cuda::ptx::mbarrier_init(bar, count); }

// Makes initialised barriers visible to the async proxy and to the cluster (§8.3).
__device__ inline void fence_mbarrier_init() {
  cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
}

// ---- arrivals on a barrier of the executing CTA (return the state token) ----

// mbarrier.arrive.expect_tx.release.SCOPE.shared::cta.b64: expect `bytes`, then arrive once.
template <Scope S = Scope::cta>
__device__ inline uint64_t arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  return cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, detail::cccl_scope<S>(),
                                              cuda::ptx::space_shared, bar, bytes);
}
// The same with the byte count of `loads` boxes of `m` (the count comes from the map).
__device__ inline uint64_t arrive_expect_tx(uint64_t* bar, const MapHandle& m, uint32_t loads = 1) {
  return arrive_expect_tx(bar, m.box_bytes * loads);
}

// mbarrier.expect_tx.relaxed.SCOPE.shared::cta.b64 (no arrival).
template <Scope S = Scope::cta>
__device__ inline void expect_tx(uint64_t* bar, uint32_t bytes) {
  cuda::ptx::mbarrier_expect_tx(cuda::ptx::sem_relaxed, detail::cccl_scope<S>(), cuda::ptx::space_shared, bar, bytes);
}

// mbarrier.arrive.release.SCOPE.shared::cta.b64 (one arrival, or `count`).
template <Scope S = Scope::cta>
__device__ inline uint64_t arrive(uint64_t* bar) {
  return cuda::ptx::mbarrier_arrive(cuda::ptx::sem_release, detail::cccl_scope<S>(), cuda::ptx::space_shared, bar);
}
template <Scope S = Scope::cta>
__device__ inline uint64_t arrive(uint64_t* bar, uint32_t count) {
  return cuda::ptx::mbarrier_arrive(cuda::ptx::sem_release, detail::cccl_scope<S>(), cuda::ptx::space_shared, bar,
                                    count);
}

// mbarrier.arrive_drop...: arrive and lower the expected arrival count of every
// later phase by the same amount (§8.2). Inline PTX: CCCL has no arrive_drop.
template <Scope S = Scope::cta>
__device__ inline uint64_t arrive_drop(uint64_t* bar) {
  const uint32_t n = 0;  // unused operand %2 (the forms share one operand list)
  uint64_t state;
  if constexpr (S == Scope::cta)
    asm volatile("mbarrier.arrive_drop.release.cta.shared::cta.b64 %0, [%1];"
                 : "=l"(state) : "r"(smem_addr(bar)), "r"(n) : "memory");
  else
    asm volatile("mbarrier.arrive_drop.release.cluster.shared::cta.b64 %0, [%1];"
                 : "=l"(state) : "r"(smem_addr(bar)), "r"(n) : "memory");
  return state;
}
template <Scope S = Scope::cta>
__device__ inline uint64_t arrive_drop(uint64_t* bar, uint32_t count) {
  const uint32_t n = count;
  uint64_t state;
  if constexpr (S == Scope::cta)
    asm volatile("mbarrier.arrive_drop.release.cta.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(state) : "r"(smem_addr(bar)), "r"(n) : "memory");
  else
    asm volatile("mbarrier.arrive_drop.release.cluster.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(state) : "r"(smem_addr(bar)), "r"(n) : "memory");
  return state;
}
template <Scope S = Scope::cta>
__device__ inline uint64_t arrive_drop_expect_tx(uint64_t* bar, uint32_t bytes) {
  const uint32_t n = bytes;
  uint64_t state;
  if constexpr (S == Scope::cta)
    asm volatile("mbarrier.arrive_drop.expect_tx.release.cta.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(state) : "r"(smem_addr(bar)), "r"(n) : "memory");
  else
    asm volatile("mbarrier.arrive_drop.expect_tx.release.cluster.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(state) : "r"(smem_addr(bar)), "r"(n) : "memory");
  return state;
}

// mbarrier.complete_tx.relaxed.cta.shared::cta.b64: complete `bytes` of the
// pending transaction count without any copy (§8.2). Inline PTX: not in CCCL.
__device__ inline void complete_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}

// ---- arrivals on a barrier of another CTA of the cluster (.shared::cluster, `_` result) ----

// mbarrier.arrive.release.SCOPE.shared::cluster.b64 _, [remote_bar]{, count}
// Scope::cluster (default) makes everything this thread did before visible to the
// cluster: a cluster-scope fence per arrival (the membar stalls of the multicast
// benchmark, docs/benchmarks.md). Scope::cta orders only this thread's accesses to
// its own CTA's memory, which is enough to hand back a slot this CTA has finished
// *reading* (the reads are performed before the arrive), and is what CUTLASS's
// ClusterBarrier::arrive(cta_id) emits. Inline PTX for .cta: CCCL 13.0 has only
// the .cluster form.
template <Scope S = Scope::cluster>
__device__ inline void arrive_cluster(uint64_t* remote_bar) {
  if constexpr (S == Scope::cluster) {
    cuda::ptx::mbarrier_arrive(cuda::ptx::sem_release, cuda::ptx::scope_cluster, cuda::ptx::space_cluster,
                               remote_bar);
  } else {
    asm volatile("mbarrier.arrive.release.cta.shared::cluster.b64 _, [%0];" ::"r"(smem_addr(remote_bar))
                 : "memory");
  }
}
__device__ inline void arrive_cluster(uint64_t* remote_bar, uint32_t count) {
  cuda::ptx::mbarrier_arrive(cuda::ptx::sem_release, cuda::ptx::scope_cluster, cuda::ptx::space_cluster, remote_bar,
                             count);
}
// mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [remote_bar], bytes
__device__ inline void arrive_expect_tx_cluster(uint64_t* remote_bar, uint32_t bytes) {
  cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cluster, cuda::ptx::space_cluster,
                                       remote_bar, bytes);
}
// mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 [remote_bar], bytes
__device__ inline void expect_tx_cluster(uint64_t* remote_bar, uint32_t bytes) {
  cuda::ptx::mbarrier_expect_tx(cuda::ptx::sem_relaxed, cuda::ptx::scope_cluster, cuda::ptx::space_cluster,
                                remote_bar, bytes);
}
// mbarrier.arrive_drop{.expect_tx}.release.cluster.shared::cluster.b64 _, [remote_bar]{, n}
// and mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 (inline PTX: not in CCCL).
__device__ inline void arrive_drop_cluster(uint64_t* remote_bar) {
  asm volatile("mbarrier.arrive_drop.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(smem_addr(remote_bar))
               : "memory");
}
__device__ inline void arrive_drop_cluster(uint64_t* remote_bar, uint32_t count) {
  asm volatile("mbarrier.arrive_drop.release.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(smem_addr(remote_bar)),
               "r"(count)
               : "memory");
}
__device__ inline void arrive_drop_expect_tx_cluster(uint64_t* remote_bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive_drop.expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(
                   smem_addr(remote_bar)),
               "r"(bytes)
               : "memory");
}
__device__ inline void complete_tx_cluster(uint64_t* remote_bar, uint32_t bytes) {
  asm volatile("mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;" ::"r"(smem_addr(remote_bar)),
               "r"(bytes)
               : "memory");
}

// ---- waits (acquire at Scope; §8.4) ----

// One mbarrier.try_wait.parity: true once the phase with this parity has completed
// (it may suspend the thread for a system-dependent time first).
template <Scope S = Scope::cta>
__device__ inline bool try_wait_parity(uint64_t* bar, uint32_t parity) {
  return cuda::ptx::mbarrier_try_wait_parity(cuda::ptx::sem_acquire, detail::cccl_scope<S>(), bar, parity);
}
// mbarrier.try_wait with the state token an arrive returned (the phase of that arrival).
template <Scope S = Scope::cta>
__device__ inline bool try_wait(uint64_t* bar, uint64_t state) {
  return cuda::ptx::mbarrier_try_wait(cuda::ptx::sem_acquire, detail::cccl_scope<S>(), bar, state);
}
// mbarrier.test_wait{.parity}: the same tests without suspending.
template <Scope S = Scope::cta>
__device__ inline bool test_wait_parity(uint64_t* bar, uint32_t parity) {
  return cuda::ptx::mbarrier_test_wait_parity(cuda::ptx::sem_acquire, detail::cccl_scope<S>(), bar, parity);
}
template <Scope S = Scope::cta>
__device__ inline bool test_wait(uint64_t* bar, uint64_t state) {
  return cuda::ptx::mbarrier_test_wait(cuda::ptx::sem_acquire, detail::cccl_scope<S>(), bar, state);
}

__device__ inline uint64_t global_timer_ns() { return cuda::ptx::get_sreg_globaltimer(); }

// Reports a stuck barrier and traps (used by the bounded wait).
__device__ inline void report_stuck_barrier(uint64_t* bar, uint32_t parity, uint32_t armed_bytes) {
  printf("tmakit: mbarrier stuck: shared address 0x%x, waiting for phase parity %u, armed %u bytes, "
         "block (%d,%d,%d) thread %d\n",
         smem_addr(bar), parity, armed_bytes, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x);
  __trap();
}

// Waits until the phase with `parity` completes. `armed_bytes` is only reported
// by the debug wait (pass what the barrier was armed with).
__device__ inline void wait_parity(uint64_t* bar, uint32_t parity, uint32_t armed_bytes = 0, bool cluster = false) {
#ifdef TMAKIT_DEBUG_WAIT
  const uint64_t start = global_timer_ns();
  while (!(cluster ? try_wait_parity<Scope::cluster>(bar, parity) : try_wait_parity(bar, parity)))
    if (global_timer_ns() - start > kDebugWaitNs) report_stuck_barrier(bar, parity, armed_bytes);
#else
  (void)armed_bytes;
  while (!(cluster ? try_wait_parity<Scope::cluster>(bar, parity) : try_wait_parity(bar, parity))) {
  }
#endif
}

// mbarrier.inval.shared::cta.b64 (inline PTX: not in CCCL). The barrier's memory
// may then be reused for anything else (§8.1).
__device__ inline void mbar_inval(uint64_t* bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
}


// ---- libcu++'s cuda::barrier<thread_scope_block> (seed page 004, spec §12) ----
// A block-scope cuda::barrier in shared memory is an mbarrier (its first 8 bytes,
// cuda::device::barrier_native_handle). Every helper of this file and of copy.cuh
// that takes the executing CTA's `uint64_t* bar` has an overload taking the
// cuda::barrier itself, so a kernel that mixes CCCL's barrier with tmakit's tensor
// loads needs no casts. Initialise it with cuda's init(&bar, count) (not mbar_init).
using BlockBarrier = cuda::barrier<cuda::thread_scope_block>;
using BlockToken = BlockBarrier::arrival_token;

// The mbarrier of a block-scope cuda::barrier (it must be in shared memory).
__device__ inline uint64_t* native_mbar(BlockBarrier& bar) { return cuda::device::barrier_native_handle(bar); }

// cuda::device::barrier_arrive_tx(bar, 1, bytes): one arrival that also expects
// `bytes` (mbarrier.arrive.expect_tx.release.cta.shared::cta.b64, as CCCL emits).
__device__ inline BlockToken arrive_expect_tx(BlockBarrier& bar, uint32_t bytes) {
  return cuda::device::barrier_arrive_tx(bar, 1, bytes);
}
// The same with the byte count of `loads` boxes of `m` (from the map handle, as for
// the raw barrier) plus `extra_bytes` of other copies on the same barrier
// (memcpy_async_tx, bulk_load) in this phase.
__device__ inline BlockToken arrive_expect_tx(BlockBarrier& bar, const MapHandle& m, uint32_t loads = 1,
                                              uint32_t extra_bytes = 0) {
  return cuda::device::barrier_arrive_tx(bar, 1, m.bytes(loads) + extra_bytes);
}
// cuda::device::barrier_arrive_tx(bar, arrive_count, m.bytes(loads) + extra_bytes):
// arrive_count > 1 lowers to expect_tx then arrive (count), as CCCL emits.
__device__ inline BlockToken barrier_arrive_tx(BlockBarrier& bar, ptrdiff_t arrive_count, const MapHandle& m,
                                               uint32_t loads = 1, uint32_t extra_bytes = 0) {
  return cuda::device::barrier_arrive_tx(bar, arrive_count, m.bytes(loads) + extra_bytes);
}
// cuda::device::barrier_expect_tx (no arrival): `bytes`, or `loads` boxes of `m`.
__device__ inline void expect_tx(BlockBarrier& bar, uint32_t bytes) { cuda::device::barrier_expect_tx(bar, bytes); }
__device__ inline void expect_tx(BlockBarrier& bar, const MapHandle& m, uint32_t loads = 1) {
  cuda::device::barrier_expect_tx(bar, m.bytes(loads));
}
// bar.arrive(count) (one arrival by default).
__device__ inline BlockToken arrive(BlockBarrier& bar, ptrdiff_t count = 1) { return bar.arrive(count); }
// mbarrier.complete_tx on the cuda::barrier's mbarrier.
__device__ inline void complete_tx(BlockBarrier& bar, uint32_t bytes) { complete_tx(native_mbar(bar), bytes); }
// Parity waits on the cuda::barrier's mbarrier (bar.wait(token) works as well).
__device__ inline bool try_wait_parity(BlockBarrier& bar, uint32_t parity) {
  return try_wait_parity(native_mbar(bar), parity);
}
__device__ inline bool test_wait_parity(BlockBarrier& bar, uint32_t parity) {
  return test_wait_parity(native_mbar(bar), parity);
}
__device__ inline void wait_parity(BlockBarrier& bar, uint32_t parity, uint32_t armed_bytes = 0) {
  wait_parity(native_mbar(bar), parity, armed_bytes);
}

}  // namespace tmakit::device
