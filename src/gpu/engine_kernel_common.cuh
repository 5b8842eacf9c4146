// The kernel's small helpers: time, cluster rank and barrier, the sequencer's acquire/release
// words, cluster pointers, the status report.
// Part of the GPU engine's kernel (engine_kernel.cu, docs/gpu-engine.md): included there only,
// into the one translation unit of the kernel, as are engine_kernel_copies.cuh and
// engine_kernel_barriers.cuh, which use the names below (dev, ptx, Scope).
#pragma once
#include <cuda/atomic>
#include <cuda/barrier>
#include <cuda/ptx>

#include "engine_launch.hpp"
#include "tmakit/device/copy.cuh"

namespace tmakit::gpu::detail {
namespace {

namespace dev = tmakit::device;
namespace ptx = cuda::ptx;
using dev::Scope;

__device__ __forceinline__ unsigned long long now_ns() { return dev::global_timer_ns(); }
__device__ __forceinline__ uint32_t cluster_rank() { return ptx::get_sreg_cluster_ctarank(); }
__device__ __forceinline__ void cluster_sync() {
  ptx::barrier_cluster_arrive(ptx::sem_release);
  ptx::barrier_cluster_wait(ptx::sem_acquire);
}
// ld.acquire.gpu / st.release.gpu on the sequencer's words.
__device__ __forceinline__ uint32_t ld_acquire(uint32_t* p) {
  return cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(*p).load(cuda::memory_order_acquire);
}
__device__ __forceinline__ void st_release(uint32_t* p, uint32_t v) {
  cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(*p).store(v, cuda::memory_order_release);
}
// Window offset `off` in CTA `rank` (kSelf: the executing CTA) as a generic
// pointer; the library turns it into the .shared::cluster address (mapa + cvta).
template <class T = uint8_t>
__device__ __forceinline__ T* cluster_ptr(uint8_t* win, uint32_t off, uint8_t rank) {
  void* p = win + off;
  return static_cast<T*>(rank == kSelf ? p : __cluster_map_shared_rank(p, rank));
}

__device__ void report(const KernelArgs& a, uint32_t status, uint32_t step, uint32_t cta, uint32_t i0, uint32_t i1) {
  if (atomicCAS(&a.status->status, 0u, status) == 0u) {
    a.status->step = step;
    a.status->cta = cta;
    a.status->info0 = i0;
    a.status->info1 = i1;
    __threadfence();
  }
}
__device__ __forceinline__ bool aborted(const KernelArgs& a) {
  return *reinterpret_cast<volatile uint32_t*>(&a.status->status) != 0;
}

}  // namespace
}  // namespace tmakit::gpu::detail
