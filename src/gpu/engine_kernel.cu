// The GPU engine's kernel (docs/gpu-engine.md). One cluster of `ctas` CTAs; every
// thread of a CTA walks the step list, the step's thread executes the step, and
// a sequencer in global memory keeps the program's order across CTAs: CTA Y runs
// its step i once every other CTA has passed all its steps before i, or is
// blocked in an mbarrier.try_wait (scenario-format.md: a wait blocks only the
// stepping CTA). Qualifiers are compile-time in PTX, so each Code maps to one
// typed call of the device library (include/tmakit/device/), chosen by a switch
// over dimension, reduction op and type: the engine and the library share one
// implementation of every form, and this file holds no inline PTX.
#include <cuda/atomic>
#include <cuda/barrier>
#include <cuda/ptx>

#include "engine_launch.hpp"
#include "tmakit/device/copy.cuh"
#include "tmakit/device/launch.cuh"

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

// Calls f(c) with the step's coordinates as `const int32_t (&)[dim]`.
template <class F>
__device__ void by_dim(const Step& s, F&& f) {
  switch (s.dim) {
    case 1: { const int32_t c[1] = {s.c[0]}; f(c); break; }
    case 2: { const int32_t c[2] = {s.c[0], s.c[1]}; f(c); break; }
    case 3: { const int32_t c[3] = {s.c[0], s.c[1], s.c[2]}; f(c); break; }
    case 4: { const int32_t c[4] = {s.c[0], s.c[1], s.c[2], s.c[3]}; f(c); break; }
    default: { const int32_t c[5] = {s.c[0], s.c[1], s.c[2], s.c[3], s.c[4]}; f(c); break; }
  }
}
// im2col (dim 3..5, which the PTX front end enforces): f(c, offsets) with the
// coordinates as `const int32_t (&)[dim]` and the im2colInfo as `const uint16_t (&)[dim - 2]`.
template <class F>
__device__ void by_dim_im2col(const Step& s, F&& f) {
  switch (s.dim) {
    case 3: { const int32_t c[3] = {s.c[0], s.c[1], s.c[2]}; const uint16_t o[1] = {s.off[0]}; f(c, o); break; }
    case 4: { const int32_t c[4] = {s.c[0], s.c[1], s.c[2], s.c[3]}; const uint16_t o[2] = {s.off[0], s.off[1]}; f(c, o); break; }
    default: {
      const int32_t c[5] = {s.c[0], s.c[1], s.c[2], s.c[3], s.c[4]};
      const uint16_t o[3] = {s.off[0], s.off[1], s.off[2]};
      f(c, o);
      break;
    }
  }
}
// Calls f(op) with s.red in spec::RedOp order: add min max inc dec and or xor (§6.1).
template <class F>
__device__ void by_red_op(uint8_t red, F&& f) {
  switch (red) {
    case 0: f(ptx::op_add); break;
    case 1: f(ptx::op_min); break;
    case 2: f(ptx::op_max); break;
    case 3: f(ptx::op_inc); break;
    case 4: f(ptx::op_dec); break;
    case 5: f(ptx::op_and_op); break;
    case 6: f(ptx::op_or_op); break;
    case 7: f(ptx::op_xor_op); break;
  }
}

// ---- tensor copies ----

__device__ void im2col_load(const Step& s, const CUtensorMap& map, void* dst, uint64_t* bar) {
  const bool hint = s.flags & kHint;
  by_dim_im2col(s, [&](const auto& c, const auto& off) {
    if (s.code == kTensorLoadCta) {
      if (hint) dev::load_im2col(dst, map, c, off, bar, s.policy);
      else dev::load_im2col(dst, map, c, off, bar);
    } else if (s.flags & kMulticast) {
      if (hint) dev::load_im2col_multicast(dst, map, c, off, bar, s.mask, s.policy);
      else dev::load_im2col_multicast(dst, map, c, off, bar, s.mask);
    } else {
      if (hint) dev::load_im2col_cluster(dst, map, c, off, bar, s.policy);
      else dev::load_im2col_cluster(dst, map, c, off, bar);
    }
  });
}

__device__ void tensor_load(const Step& s, const CUtensorMap& map, void* dst, uint64_t* bar) {
  if (s.flags & kIm2col) return im2col_load(s, map, dst, bar);
  const bool hint = s.flags & kHint;
  by_dim(s, [&](const auto& c) {
    if (s.code == kTensorLoadCta) {
      if (hint) dev::load_tile(dst, map, c, bar, s.policy);
      else dev::load_tile(dst, map, c, bar);
    } else if (s.flags & kMulticast) {
      if (hint) dev::load_tile_multicast(dst, map, c, bar, s.mask, s.policy);
      else dev::load_tile_multicast(dst, map, c, bar, s.mask);
    } else {
      if (hint) dev::load_tile_cluster(dst, map, c, bar, s.policy);
      else dev::load_tile_cluster(dst, map, c, bar);
    }
  });
}

__device__ void tensor_store(const Step& s, const CUtensorMap& map, const void* src) {
  if (s.flags & kIm2col)  // .im2col_no_offs (§4.3)
    return by_dim_im2col(s, [&](const auto& c, const auto&) {
      if (s.flags & kHint) dev::store_im2col(map, c, src, s.policy);
      else dev::store_im2col(map, c, src);
    });
  by_dim(s, [&](const auto& c) {
    if (s.flags & kHint) dev::store_tile(map, c, src, s.policy);
    else dev::store_tile(map, c, src);
  });
}

// The element type is the map's (§6.1).
__device__ void tensor_reduce(const Step& s, const CUtensorMap& map, const void* src) {
  if (s.flags & kIm2col)  // .im2col_no_offs (§4.3, §6.1)
    return by_red_op(s.red, [&](auto op) {
      by_dim_im2col(s, [&](const auto& c, const auto&) {
        if (s.flags & kHint) dev::reduce_im2col(op, map, c, src, s.policy);
        else dev::reduce_im2col(op, map, c, src);
      });
    });
  by_red_op(s.red, [&](auto op) {
    by_dim(s, [&](const auto& c) {
      if (s.flags & kHint) dev::reduce_tile(op, map, c, src, s.policy);
      else dev::reduce_tile(op, map, c, src);
    });
  });
}

__device__ void tensor_prefetch(const Step& s, const CUtensorMap& map) {
  if (s.flags & kIm2col)
    return by_dim_im2col(s, [&](const auto& c, const auto& off) {
      if (s.flags & kHint) dev::prefetch_im2col(map, c, off, s.policy);
      else dev::prefetch_im2col(map, c, off);
    });
  by_dim(s, [&](const auto& c) {
    if (s.flags & kHint) dev::prefetch_tile(map, c, s.policy);
    else dev::prefetch_tile(map, c);
  });
}

// ---- non-tensor bulk copies and reductions (§7, §6.2) ----

__device__ void bulk_load(const Step& s, void* dst, uint64_t* bar) {
  const void* src = reinterpret_cast<const void*>(s.gaddr);
  const bool hint = s.flags & kHint;
  if (s.code == kBulkLoadCta) {
    if (hint) dev::bulk_load(dst, src, s.size, bar, s.policy);
    else dev::bulk_load(dst, src, s.size, bar);
  } else if (s.flags & kMulticast) {
    if (hint) dev::bulk_load_multicast(dst, src, s.size, bar, s.mask, s.policy);
    else dev::bulk_load_multicast(dst, src, s.size, bar, s.mask);
  } else {
    if (hint) dev::bulk_load_cluster(dst, src, s.size, bar, s.policy);
    else dev::bulk_load_cluster(dst, src, s.size, bar);
  }
}

__device__ void bulk_store(const Step& s, const void* src) {
  void* dst = reinterpret_cast<void*>(s.gaddr);
  if (s.flags & kHint) dev::bulk_store(dst, src, s.size, s.policy);
  else dev::bulk_store(dst, src, s.size);
}

__device__ void bulk_reduce_global(const Step& s, const void* src) {
  const bool hint = s.flags & kHint;
#define TK_BRED(name, OP, TYPE, TAG, CTYPE)                                                 \
  case kG_##name: {                                                                         \
    auto* d = reinterpret_cast<CTYPE*>(s.gaddr);                                            \
    auto* from = static_cast<const CTYPE*>(src);                                            \
    if (hint) dev::bulk_reduce(ptx::TAG, d, from, s.size, s.policy);                        \
    else dev::bulk_reduce(ptx::TAG, d, from, s.size);                                       \
    break;                                                                                  \
  }
  switch (s.red) { TMAKIT_GPU_BULK_RED_GLOBAL(TK_BRED) }
#undef TK_BRED
}

__device__ void bulk_reduce_cluster(const Step& s, void* dst, const void* src, uint64_t* bar) {
#define TK_BRED(name, OP, TYPE, TAG, CTYPE)                                                                     \
  case kC_##name:                                                                                               \
    dev::bulk_reduce_cluster(ptx::TAG, static_cast<CTYPE*>(dst), static_cast<const CTYPE*>(src), s.size, bar); \
    break;
  switch (s.red) { TMAKIT_GPU_BULK_RED_CLUSTER(TK_BRED) }
#undef TK_BRED
}

template <int N>
__device__ __forceinline__ void wait_group_n(bool read) {
  if (read) dev::wait_group_read<N>();
  else dev::wait_group<N>();
}
__device__ void wait_group(uint32_t n, bool read) {
  switch (n) {
    case 0: wait_group_n<0>(read); break;
    case 1: wait_group_n<1>(read); break;
    case 2: wait_group_n<2>(read); break;
    case 3: wait_group_n<3>(read); break;
    case 4: wait_group_n<4>(read); break;
    case 5: wait_group_n<5>(read); break;
    case 6: wait_group_n<6>(read); break;
    default: wait_group_n<7>(read); break;
  }
}

// ---- mbarriers (§8) ----

// A local arrive (returns the state token) at scope S.
template <Scope S>
__device__ uint64_t arrive_local(const Step& s, uint64_t* bar) {
  if (s.flags & kDrop) {
    if (s.flags & kExpectTx) return dev::arrive_drop_expect_tx<S>(bar, s.size);
    if (s.flags & kHasCount) return dev::arrive_drop<S>(bar, s.size);
    return dev::arrive_drop<S>(bar);
  }
  if (s.flags & kExpectTx) return dev::arrive_expect_tx<S>(bar, s.size);
  if (s.flags & kHasCount) return dev::arrive<S>(bar, s.size);
  return dev::arrive<S>(bar);
}
// An arrive on another CTA's barrier (`_`: no state).
__device__ void arrive_remote(const Step& s, uint64_t* bar) {
  if (s.flags & kDrop) {
    if (s.flags & kExpectTx) dev::arrive_drop_expect_tx_cluster(bar, s.size);
    else if (s.flags & kHasCount) dev::arrive_drop_cluster(bar, s.size);
    else dev::arrive_drop_cluster(bar);
  } else {
    if (s.flags & kExpectTx) dev::arrive_expect_tx_cluster(bar, s.size);
    else if (s.flags & kHasCount) dev::arrive_cluster(bar, s.size);
    else dev::arrive_cluster(bar);
  }
}
__device__ unsigned long long mbar_arrive(const Step& s, uint64_t* bar) {
  if (s.flags & kRemote) {
    arrive_remote(s, bar);
    return 0;
  }
  return s.flags & kClusterScope ? arrive_local<Scope::cluster>(s, bar) : arrive_local<Scope::cta>(s, bar);
}

// One test of the phase (test_wait never blocks; try_wait may suspend for a
// system-dependent time and is retried by the caller).
template <Scope S>
__device__ bool mbar_test_at(const Step& s, uint64_t* bar, unsigned long long v, bool try_wait) {
  if (s.flags & kParity) {
    const uint32_t parity = static_cast<uint32_t>(v & 1);
    return try_wait ? dev::try_wait_parity<S>(bar, parity) : dev::test_wait_parity<S>(bar, parity);
  }
  return try_wait ? dev::try_wait<S>(bar, v) : dev::test_wait<S>(bar, v);
}
__device__ bool mbar_test(const Step& s, uint64_t* bar, unsigned long long v, bool try_wait) {
  return s.flags & kClusterScope ? mbar_test_at<Scope::cluster>(s, bar, v, try_wait)
                                 : mbar_test_at<Scope::cta>(s, bar, v, try_wait);
}

// st.shared / st.global of s.size bytes (volatile: exactly one store of that width).
__device__ void plain_store(const Step& s, void* p) {
  const unsigned long long v = s.value;
  switch (s.size) {
    case 1: *static_cast<volatile uint8_t*>(p) = static_cast<uint8_t>(v); break;
    case 2: *static_cast<volatile uint16_t*>(p) = static_cast<uint16_t>(v); break;
    case 4: *static_cast<volatile uint32_t*>(p) = static_cast<uint32_t>(v); break;
    default: *static_cast<volatile uint64_t*>(p) = v; break;
  }
}

// ---- libcu++ <cuda/barrier> calls (scenario `call` steps, spec §12) ----

using Barrier = cuda::barrier<cuda::thread_scope_block>;
__device__ __forceinline__ Barrier& barrier_at(uint8_t* win, uint32_t off) { return *reinterpret_cast<Barrier*>(win + off); }

template <size_t A>
__device__ __forceinline__ void memcpy_tx(uint8_t* dst, const uint8_t* src, uint32_t size, Barrier& bar) {
  cuda::device::memcpy_async_tx(dst, src, cuda::aligned_size_t<A>(size), bar);
}
// The alignment is a template argument of aligned_size_t: the host allows 16 .. 4096.
__device__ void lib_memcpy_async_tx(const Step& s, uint8_t* win) {
  uint8_t* dst = win + s.smem;
  const auto* src = reinterpret_cast<const uint8_t*>(s.gaddr);
  Barrier& bar = barrier_at(win, s.mbar);
  switch (s.value) {
    case 16: memcpy_tx<16>(dst, src, s.size, bar); break;
    case 32: memcpy_tx<32>(dst, src, s.size, bar); break;
    case 64: memcpy_tx<64>(dst, src, s.size, bar); break;
    case 128: memcpy_tx<128>(dst, src, s.size, bar); break;
    case 256: memcpy_tx<256>(dst, src, s.size, bar); break;
    case 512: memcpy_tx<512>(dst, src, s.size, bar); break;
    case 1024: memcpy_tx<1024>(dst, src, s.size, bar); break;
    case 2048: memcpy_tx<2048>(dst, src, s.size, bar); break;
    default: memcpy_tx<4096>(dst, src, s.size, bar); break;
  }
}
// One poll of bar.wait(token): wait() loops on __try_wait(token), which try_wait_for
// reaches with a zero duration (one mbarrier.try_wait.shared.b64).
__device__ __forceinline__ bool lib_try_wait(Barrier& bar, unsigned long long token) {
  return bar.try_wait_for(Barrier::arrival_token(token), cuda::std::chrono::nanoseconds(0));
}

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
