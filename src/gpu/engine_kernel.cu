// The GPU engine's kernel (docs/gpu-engine.md). One cluster of `ctas` CTAs; every
// thread of a CTA walks the step list, the step's thread executes the step, and
// a sequencer in global memory keeps the program's order across CTAs: CTA Y runs
// its step i once every other CTA has passed all its steps before i, or is
// blocked in an mbarrier.try_wait (scenario-format.md: a wait blocks only the
// stepping CTA). Qualifiers are compile-time in PTX, so each Code maps to one
// typed call of the device library (include/tmakit/device/), chosen by a switch
// over dimension, reduction op and type: the engine and the library share one
// implementation of every form, and the kernel holds no inline PTX. The steps live in
// engine_kernel_copies.cuh (bulk-copy forms) and engine_kernel_barriers.cuh (mbarriers,
// plain stores, libcu++ calls), the helpers in engine_kernel_common.cuh; this file has
// the step switch, the sequencer and the launch.
#include <cuda/atomic>
#include <cuda/barrier>
#include <cuda/ptx>

#include "engine_launch.hpp"
#include "tmakit/device/copy.cuh"
#include "tmakit/device/launch.cuh"

#include "engine_kernel_common.cuh"
#include "engine_kernel_copies.cuh"
#include "engine_kernel_barriers.cuh"

namespace tmakit::gpu::detail {
namespace {

// Executes step i (by the step's thread). Returns false when the kernel must stop (a hang).
__device__ bool execute(const KernelArgs& a, const Step& s, uint32_t i, uint32_t rank, uint8_t* win) {
  volatile unsigned long long* regs = a.regs;
  const auto bar_at = [&](uint32_t off, uint8_t r) { return cluster_ptr<uint64_t>(win, off, r); };
  uint64_t* const local_bar = reinterpret_cast<uint64_t*>(win + s.smem);  // mbarrier.* on this CTA's window
  switch (s.code) {
    case kNop: break;
    case kTensorLoadCta:
      tensor_load(s, a.maps[s.map], win + s.smem, reinterpret_cast<uint64_t*>(win + s.mbar));
      break;
    case kTensorLoadCluster:
      tensor_load(s, a.maps[s.map], cluster_ptr(win, s.smem, s.smem_rank), bar_at(s.mbar, s.mbar_rank));
      break;
    case kTensorStore: tensor_store(s, a.maps[s.map], win + s.smem); break;
    case kTensorReduce: tensor_reduce(s, a.maps[s.map], win + s.smem); break;
    case kTensorPrefetch: tensor_prefetch(s, a.maps[s.map]); break;
    case kBulkLoadCta: bulk_load(s, win + s.smem, reinterpret_cast<uint64_t*>(win + s.mbar)); break;
    case kBulkLoadCluster:
      bulk_load(s, cluster_ptr(win, s.smem, s.smem_rank), bar_at(s.mbar, s.mbar_rank));
      break;
    case kBulkCopyPeer:
      dev::bulk_copy_to_peer(cluster_ptr(win, s.smem, s.smem_rank), win + s.smem2, s.size,
                             bar_at(s.mbar, s.mbar_rank));
      break;
    case kBulkStore: bulk_store(s, win + s.smem); break;
    case kBulkReduceGlobal: bulk_reduce_global(s, win + s.smem); break;
    case kBulkReduceCluster:
      bulk_reduce_cluster(s, cluster_ptr(win, s.smem, s.smem_rank), win + s.smem2, bar_at(s.mbar, s.mbar_rank));
      break;
    case kBulkPrefetch: {
      const void* src = reinterpret_cast<const void*>(s.gaddr);
      if (s.flags & kHint) dev::bulk_prefetch(src, s.size, s.policy);
      else dev::bulk_prefetch(src, s.size);
      break;
    }
    case kCommitGroup: dev::commit_group(); break;
    case kWaitGroup: wait_group(s.size, s.flags & kRead); break;
    case kMbarInit: dev::mbar_init(local_bar, s.size); break;
    case kMbarArrive: {
      uint64_t* bar = s.flags & kRemote ? bar_at(s.smem, s.smem_rank) : local_bar;
      const unsigned long long state = mbar_arrive(s, bar);
      if (s.dst_reg >= 0) regs[s.dst_reg] = state, __threadfence();
      break;
    }
    case kMbarExpectTx: case kMbarCompleteTx: {
      const bool remote = s.flags & kRemote;
      uint64_t* bar = remote ? bar_at(s.smem, s.smem_rank) : local_bar;
      if (s.code == kMbarExpectTx) {
        if (remote) dev::expect_tx_cluster(bar, s.size);
        else dev::expect_tx(bar, s.size);
      } else {
        if (remote) dev::complete_tx_cluster(bar, s.size);
        else dev::complete_tx(bar, s.size);
      }
      break;
    }
    case kLibBarrierInit: init(&barrier_at(win, s.smem), s.size); break;
    case kLibMemcpyAsyncTx: lib_memcpy_async_tx(s, win); break;
    case kLibArriveTx: {
      const unsigned long long token = cuda::device::barrier_arrive_tx(barrier_at(win, s.smem), s.value, s.size);
      if (s.dst_reg >= 0) regs[s.dst_reg] = token, __threadfence();
      break;
    }
    case kLibExpectTx: cuda::device::barrier_expect_tx(barrier_at(win, s.smem), s.size); break;
    case kLibArrive: {
      const unsigned long long token = barrier_at(win, s.smem).arrive(s.size);
      if (s.dst_reg >= 0) regs[s.dst_reg] = token, __threadfence();
      break;
    }
    case kLibWait: case kLibArriveAndWait: {
      Barrier& bar = barrier_at(win, s.smem);
      const unsigned long long token = s.code == kLibWait ? regs[s.src_reg] : bar.arrive();
      if (!lib_try_wait(bar, token)) {
        // Blocked, as for kMbarTryWait below: other CTAs go on; past the bound it is a hang.
        st_release(&a.pos[rank], i | kBlocked);
        const unsigned long long t0 = now_ns();
        while (!lib_try_wait(bar, token)) {
          if (aborted(a)) return false;
          if (now_ns() - t0 > a.wait_bound_ns) {
            report(a, kStatusHang, i, rank, s.smem, static_cast<uint32_t>(token));
            return false;
          }
        }
      }
      break;
    }
    case kMbarTestWait: case kMbarTryWait: {
      const unsigned long long v = s.src_reg >= 0 ? regs[s.src_reg] : s.value;
      bool done = mbar_test(s, local_bar, v, s.code == kMbarTryWait);
      if (!done && s.code == kMbarTryWait) {
        // Blocked: let the other CTAs run their later steps meanwhile (scenario-format.md).
        st_release(&a.pos[rank], i | kBlocked);
        const unsigned long long t0 = now_ns();
        while (!(done = mbar_test(s, local_bar, v, true))) {
          if (aborted(a)) return false;
          if (now_ns() - t0 > a.wait_bound_ns) {
            report(a, kStatusHang, i, rank, s.smem, static_cast<uint32_t>(v));
            return false;
          }
        }
      }
      if (s.dst_reg >= 0) regs[s.dst_reg] = done ? 1 : 0, __threadfence();
      break;
    }
    case kMbarInval: dev::mbar_inval(local_bar); break;
    case kFenceProxyAsync:
      if (s.flags & kSpaceGlobal) dev::fence_proxy_async_global();
      else if (s.flags & kSpaceCluster) dev::fence_proxy_async_cluster();
      else dev::fence_proxy_async_shared();
      break;
    case kFenceMbarInit: dev::fence_mbarrier_init(); break;
    case kStShared: plain_store(s, win + s.smem); break;
    case kStGlobal: plain_store(s, reinterpret_cast<void*>(s.gaddr)); break;
  }
  return true;
}

// Thread 0: wait until every other CTA has passed its steps before i, or is blocked.
__device__ bool wait_turn(const KernelArgs& a, uint32_t i, uint32_t rank) {
  const unsigned long long t0 = now_ns();
  for (uint32_t x = 0; x < a.ctas; ++x) {
    if (x == rank) continue;
    for (;;) {
      const uint32_t p = ld_acquire(&a.pos[x]);
      if ((p & kBlocked) || p > i) break;
      if (aborted(a)) return false;
      if (now_ns() - t0 > 4 * a.wait_bound_ns) {
        report(a, kStatusStall, i, rank, x, p);
        return false;
      }
    }
  }
  return true;
}

__global__ void __launch_bounds__(256) engine_kernel(const __grid_constant__ KernelArgs a) {
  extern __shared__ __align__(1024) uint8_t dyn[];
  // Window offset 0 is 1024-byte aligned (scenario-format.md: swizzle follows the offset's bits).
  const uint32_t pad = (1024u - (dev::smem_addr(dyn) & 1023u)) & 1023u;
  uint8_t* win = dyn + pad;
  const uint32_t rank = cluster_rank();
  const uint32_t tid = threadIdx.x;
  if (pad + a.shared_need > a.dyn_bytes) {  // same in every CTA: all leave together
    if (tid == 0) report(a, kStatusLayout, 0, rank, pad, a.dyn_bytes);
    return;
  }
  for (uint32_t k = tid; k < a.shared_need; k += blockDim.x) win[k] = 0;
  __syncthreads();
  for (uint32_t r = 0; r < a.ninits; ++r) {
    const SharedRegion& g = a.inits[r];
    if (g.cta != rank) continue;
    for (uint32_t k = tid; k < g.bytes; k += blockDim.x) win[g.offset + k] = a.init_data[g.staging + k];
  }
  // The initial contents are ordinary writes: make them visible to the async proxy (§9).
  dev::fence_proxy_async_shared();
  if (tid == 0)
    for (uint32_t m = 0; m < a.nmaps; ++m)
      ptx::fence_proxy_tensormap_generic(ptx::sem_acquire, ptx::scope_gpu, &a.maps[m], ptx::n32_t<128>{});
  __syncthreads();
  cluster_sync();

  for (uint32_t i = 0; i < a.nsteps; ++i) {
    const Step s = a.steps[i];
    if (s.cta != rank) continue;
    bool stop = false;
    if (tid == 0) stop = !wait_turn(a, i, rank);
    if (__syncthreads_or(stop)) break;
    bool run = true;
    if (s.guard_reg >= 0) run = (reinterpret_cast<volatile unsigned long long*>(a.regs)[s.guard_reg] != 0) != (s.guard_negated != 0);
    if (run && tid == s.thread) stop = !execute(a, s, i, rank, win);
    stop = __syncthreads_or(stop);
    if (tid == 0) {
      uint32_t next = i + 1;
      while (next < a.nsteps && a.steps[next].cta != rank) ++next;
      st_release(&a.pos[rank], next);
    }
    if (stop) break;
  }
  if (tid == 0) st_release(&a.pos[rank], a.nsteps);

  // End of the program: every bulk-group operation of every thread completes (§9),
  // then the outputs are read once all CTAs are done.
  dev::wait_group<0>();
  __syncthreads();
  cluster_sync();
  for (uint32_t r = 0; r < a.nouts; ++r) {
    const SharedRegion& g = a.outs[r];
    if (g.cta != rank) continue;
    for (uint32_t k = tid; k < g.bytes; k += blockDim.x) a.out_data[g.staging + k] = win[g.offset + k];
  }
  cluster_sync();
}

}  // namespace

cudaError_t launch_engine(const KernelArgs& args, int threads) {
  auto fn = engine_kernel;
  cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(args.dyn_bytes));
  if (e != cudaSuccess) return e;
  if (args.ctas > 8) {  // clusters of 9..16 are non-portable on sm_90
    e = cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (e != cudaSuccess) return e;
  }
  tmakit::device::ClusterLaunch launch(args.ctas, threads, args.dyn_bytes);
  e = cudaLaunchKernelEx(&launch.config, fn, args);
  if (e != cudaSuccess) return e;
  return cudaDeviceSynchronize();
}

}  // namespace tmakit::gpu::detail
