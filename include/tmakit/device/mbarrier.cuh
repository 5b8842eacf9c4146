// mbarrier helpers (§8) on CCCL's cuda::ptx, plus a bounded wait for debugging.
//
// Define TMAKIT_DEBUG_WAIT (e.g. -DTMAKIT_DEBUG_WAIT) to turn every wait_parity
// into a bounded wait: after TMAKIT_DEBUG_WAIT_NS nanoseconds (default 2 s) it
// prints the barrier's shared address, the parity it waited for and the bytes
// the caller armed, then traps, so a mis-armed barrier (§2.3: over-armed
// barriers never complete) is named instead of hanging the GPU.
#pragma once
#include <cuda/ptx>

#include <cstdint>
#include <cstdio>

#include "tmakit/device/map.cuh"

#ifndef TMAKIT_DEBUG_WAIT_NS
#define TMAKIT_DEBUG_WAIT_NS 2000000000ull
#endif

namespace tmakit::device {

__device__ inline uint32_t smem_addr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// mbarrier.init.shared::cta.b64 [bar], count; count in [1, 2^20 - 1] (§8.1).
__device__ inline void mbar_init(uint64_t* bar, uint32_t count) { cuda::ptx::mbarrier_init(bar, count); }

// Makes initialised barriers visible to the async proxy and to the cluster (§8.3).
__device__ inline void fence_mbarrier_init() {
  cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
}

// mbarrier.arrive.expect_tx.shared::cta.b64: expect `bytes`, then arrive once.
__device__ inline uint64_t arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  return cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                              bar, bytes);
}
// The same with the byte count of `loads` boxes of `m` (the count comes from the map).
__device__ inline uint64_t arrive_expect_tx(uint64_t* bar, const MapHandle& m, uint32_t loads = 1) {
  return arrive_expect_tx(bar, m.box_bytes * loads);
}

// mbarrier.expect_tx.relaxed.cta.shared::cta.b64 (no arrival).
__device__ inline void expect_tx(uint64_t* bar, uint32_t bytes) {
  cuda::ptx::mbarrier_expect_tx(cuda::ptx::sem_relaxed, cuda::ptx::scope_cta, cuda::ptx::space_shared, bar, bytes);
}

// mbarrier.arrive.shared::cta.b64 (release, cta scope).
__device__ inline uint64_t arrive(uint64_t* bar) {
  return cuda::ptx::mbarrier_arrive(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, bar);
}
// Arrive on the barrier at the same offset in another CTA of the cluster (`_` result).
__device__ inline void arrive_cluster(uint64_t* remote_bar) {
  cuda::ptx::mbarrier_arrive(cuda::ptx::sem_release, cuda::ptx::scope_cluster, cuda::ptx::space_cluster, remote_bar);
}

// One mbarrier.try_wait.parity: true once the phase with this parity has completed (§8.4).
__device__ inline bool try_wait_parity(uint64_t* bar, uint32_t parity) {
  return cuda::ptx::mbarrier_try_wait_parity(bar, parity);
}
// The same with cluster-scope acquire (multicast consumers, §10.1).
__device__ inline bool try_wait_parity_cluster(uint64_t* bar, uint32_t parity) {
  return cuda::ptx::mbarrier_try_wait_parity(cuda::ptx::sem_acquire, cuda::ptx::scope_cluster, bar, parity);
}

__device__ inline uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

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
  while (!(cluster ? try_wait_parity_cluster(bar, parity) : try_wait_parity(bar, parity)))
    if (global_timer_ns() - start > TMAKIT_DEBUG_WAIT_NS) report_stuck_barrier(bar, parity, armed_bytes);
#else
  (void)armed_bytes;
  while (!(cluster ? try_wait_parity_cluster(bar, parity) : try_wait_parity(bar, parity))) {
  }
#endif
}

__device__ inline void mbar_inval(uint64_t* bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
}

}  // namespace tmakit::device
