// The GPU engine's kernel (docs/gpu-engine.md). One cluster of `ctas` CTAs; every
// thread of a CTA walks the step list, the step's thread executes the step, and
// a sequencer in global memory keeps the program's order across CTAs: CTA Y runs
// its step i once every other CTA has passed all its steps before i, or is
// blocked in an mbarrier.try_wait (scenario-format.md: a wait blocks only the
// stepping CTA). Qualifiers are compile-time in PTX, so each Code is one
// inline-PTX statement (a switch over dimension, reduction op and type).
#include "engine_launch.hpp"
#include "tmakit/device/launch.cuh"

namespace tmakit::gpu::detail {
namespace {

__device__ __forceinline__ uint32_t smem_u32(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ uint32_t ld_acquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release(uint32_t* p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// The .shared::cluster address of window offset `off` in CTA `rank` (kSelf: the executing CTA).
__device__ __forceinline__ uint32_t cluster_addr(uint32_t base, uint32_t off, uint8_t rank) {
  const uint32_t local = base + off;
  if (rank == kSelf) return local;
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(local), "r"(uint32_t(rank)));
  return r;
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

// ---- tensor copies: coordinates are operands %0..%4, the rest follow ----
#define TK_C1 "{%0}"
#define TK_C2 "{%0, %1}"
#define TK_C3 "{%0, %1, %2}"
#define TK_C4 "{%0, %1, %2, %3}"
#define TK_C5 "{%0, %1, %2, %3, %4}"
#define TK_COORDS "r"(s.c[0]), "r"(s.c[1]), "r"(s.c[2]), "r"(s.c[3]), "r"(s.c[4])
#define TK_BY_DIM(M, A)               \
  switch (s.dim) {                    \
    case 1: M(A, ".1d", TK_C1); break; \
    case 2: M(A, ".2d", TK_C2); break; \
    case 3: M(A, ".3d", TK_C3); break; \
    case 4: M(A, ".4d", TK_C4); break; \
    default: M(A, ".5d", TK_C5); break; \
  }

#define TK_LOAD(DST, D, C)                                                                                   \
  asm volatile("cp.async.bulk.tensor" D DST ".global.tile.mbarrier::complete_tx::bytes [%5], [%6, " C "], [%7];" \
               ::TK_COORDS, "r"(dst), "l"(map), "r"(bar) : "memory")
#define TK_LOAD_H(DST, D, C)                                                                             \
  asm volatile("cp.async.bulk.tensor" D DST                                                             \
               ".global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%5], [%6, " C "], [%7], %8;" \
               ::TK_COORDS, "r"(dst), "l"(map), "r"(bar), "l"(s.policy) : "memory")
#define TK_MCAST(X, D, C)                                                                                       \
  asm volatile("cp.async.bulk.tensor" D ".shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster" \
               " [%5], [%6, " C "], [%7], %8;" ::TK_COORDS, "r"(dst), "l"(map), "r"(bar), "h"(s.mask) : "memory")
#define TK_MCAST_H(X, D, C)                                                                 \
  asm volatile("cp.async.bulk.tensor" D                                                    \
               ".shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint" \
               " [%5], [%6, " C "], [%7], %8, %9;" ::TK_COORDS, "r"(dst), "l"(map), "r"(bar), "h"(s.mask), \
               "l"(s.policy) : "memory")
#define TK_STORE(X, D, C)                                                                              \
  asm volatile("cp.async.bulk.tensor" D ".global.shared::cta.tile.bulk_group [%5, " C "], [%6];" ::TK_COORDS, \
               "l"(map), "r"(src) : "memory")
#define TK_STORE_H(X, D, C)                                                                            \
  asm volatile("cp.async.bulk.tensor" D ".global.shared::cta.tile.bulk_group.L2::cache_hint [%5, " C "], [%6], %7;" \
               ::TK_COORDS, "l"(map), "r"(src), "l"(s.policy) : "memory")
#define TK_RED(OP, D, C)                                                                                   \
  asm volatile("cp.reduce.async.bulk.tensor" D ".global.shared::cta" OP ".tile.bulk_group [%5, " C "], [%6];" \
               ::TK_COORDS, "l"(map), "r"(src) : "memory")
#define TK_RED_H(OP, D, C)                                                                        \
  asm volatile("cp.reduce.async.bulk.tensor" D ".global.shared::cta" OP                           \
               ".tile.bulk_group.L2::cache_hint [%5, " C "], [%6], %7;" ::TK_COORDS, "l"(map), "r"(src), \
               "l"(s.policy) : "memory")
#define TK_PREFETCH(X, D, C) \
  asm volatile("cp.async.bulk.prefetch.tensor" D ".L2.global.tile [%5, " C "];" ::TK_COORDS, "l"(map) : "memory")
#define TK_PREFETCH_H(X, D, C)                                                                              \
  asm volatile("cp.async.bulk.prefetch.tensor" D ".L2.global.tile.L2::cache_hint [%5, " C "], %6;" ::TK_COORDS, \
               "l"(map), "l"(s.policy) : "memory")

__device__ void tensor_load(const Step& s, const void* map, uint32_t dst, uint32_t bar) {
  const bool hint = s.flags & kHint;
  if (s.code == kTensorLoadCta) {
    if (hint) { TK_BY_DIM(TK_LOAD_H, ".shared::cta") } else { TK_BY_DIM(TK_LOAD, ".shared::cta") }
  } else if (s.flags & kMulticast) {
    if (hint) { TK_BY_DIM(TK_MCAST_H, "") } else { TK_BY_DIM(TK_MCAST, "") }
  } else {
    if (hint) { TK_BY_DIM(TK_LOAD_H, ".shared::cluster") } else { TK_BY_DIM(TK_LOAD, ".shared::cluster") }
  }
}

__device__ void tensor_store(const Step& s, const void* map, uint32_t src) {
  if (s.flags & kHint) { TK_BY_DIM(TK_STORE_H, "") } else { TK_BY_DIM(TK_STORE, "") }
}

// s.red follows spec::RedOp: add min max inc dec and or xor (§6.1); the type is the map's.
__device__ void tensor_reduce(const Step& s, const void* map, uint32_t src) {
#define TK_RED_CASE(N, OP)                                                    \
  case N:                                                                     \
    if (s.flags & kHint) { TK_BY_DIM(TK_RED_H, OP) } else { TK_BY_DIM(TK_RED, OP) } \
    break;
  switch (s.red) {
    TK_RED_CASE(0, ".add")
    TK_RED_CASE(1, ".min")
    TK_RED_CASE(2, ".max")
    TK_RED_CASE(3, ".inc")
    TK_RED_CASE(4, ".dec")
    TK_RED_CASE(5, ".and")
    TK_RED_CASE(6, ".or")
    TK_RED_CASE(7, ".xor")
  }
#undef TK_RED_CASE
}

__device__ void tensor_prefetch(const Step& s, const void* map) {
  if (s.flags & kHint) { TK_BY_DIM(TK_PREFETCH_H, "") } else { TK_BY_DIM(TK_PREFETCH, "") }
}

// ---- non-tensor bulk copies and reductions (§7, §6.2) ----

__device__ void bulk_load(const Step& s, uint32_t dst, uint32_t bar) {
  const void* src = reinterpret_cast<const void*>(s.gaddr);
  const bool hint = s.flags & kHint;
  if (s.code == kBulkLoadCta) {
    if (hint)
      asm volatile("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
                   ::"r"(dst), "l"(src), "r"(s.size), "r"(bar), "l"(s.policy) : "memory");
    else
      asm volatile("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   ::"r"(dst), "l"(src), "r"(s.size), "r"(bar) : "memory");
  } else if (s.flags & kMulticast) {
    if (hint)
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint"
                   " [%0], [%1], %2, [%3], %4, %5;"
                   ::"r"(dst), "l"(src), "r"(s.size), "r"(bar), "h"(s.mask), "l"(s.policy) : "memory");
    else
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                   " [%0], [%1], %2, [%3], %4;"
                   ::"r"(dst), "l"(src), "r"(s.size), "r"(bar), "h"(s.mask) : "memory");
  } else {
    if (hint)
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
                   ::"r"(dst), "l"(src), "r"(s.size), "r"(bar), "l"(s.policy) : "memory");
    else
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   ::"r"(dst), "l"(src), "r"(s.size), "r"(bar) : "memory");
  }
}

__device__ void bulk_store(const Step& s, uint32_t src) {
  void* dst = reinterpret_cast<void*>(s.gaddr);
  if (s.flags & kHint)
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;"
                 ::"l"(dst), "r"(src), "r"(s.size), "l"(s.policy) : "memory");
  else
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(s.size)
                 : "memory");
}

__device__ void bulk_reduce_global(const Step& s, uint32_t src) {
  void* dst = reinterpret_cast<void*>(s.gaddr);
  const bool hint = s.flags & kHint;
#define TK_BRED(name, OP, TYPE)                                                                              \
  case kG_##name:                                                                                                 \
    if (hint)                                                                                                \
      asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint" OP TYPE " [%0], [%1], %2, %3;" \
                   ::"l"(dst), "r"(src), "r"(s.size), "l"(s.policy) : "memory");                             \
    else                                                                                                     \
      asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group" OP TYPE " [%0], [%1], %2;" ::"l"(dst), \
                   "r"(src), "r"(s.size) : "memory");                                                        \
    break;
  switch (s.red) { TMAKIT_GPU_BULK_RED_GLOBAL(TK_BRED) }
#undef TK_BRED
}

__device__ void bulk_reduce_cluster(const Step& s, uint32_t dst, uint32_t src, uint32_t bar) {
#define TK_BRED(name, OP, TYPE)                                                                          \
  case kC_##name:                                                                                             \
    asm volatile("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes" OP TYPE \
                 " [%0], [%1], %2, [%3];" ::"r"(dst), "r"(src), "r"(s.size), "r"(bar) : "memory");      \
    break;
  switch (s.red) { TMAKIT_GPU_BULK_RED_CLUSTER(TK_BRED) }
#undef TK_BRED
}

template <int N>
__device__ __forceinline__ void wait_group_n(bool read) {
  if (read) asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
  else asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
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

__device__ unsigned long long mbar_arrive(const Step& s, uint32_t bar) {
  unsigned long long state = 0;
  const bool drop = s.flags & kDrop, cl = s.flags & kClusterScope;
#define TK_ARRIVE(OPC)                                                                                            \
  if (s.flags & kRemote) {                                                                                        \
    if (s.flags & kExpectTx)                                                                                      \
      asm volatile(OPC ".expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(bar), "r"(s.size) : "memory"); \
    else if (s.flags & kHasCount)                                                                                 \
      asm volatile(OPC ".release.cluster.shared::cluster.b64 _, [%0], %1;" ::"r"(bar), "r"(s.size) : "memory");  \
    else                                                                                                          \
      asm volatile(OPC ".release.cluster.shared::cluster.b64 _, [%0];" ::"r"(bar) : "memory");                   \
  } else if (s.flags & kExpectTx) {                                                                               \
    if (cl)                                                                                                       \
      asm volatile(OPC ".expect_tx.release.cluster.shared::cta.b64 %0, [%1], %2;" : "=l"(state) : "r"(bar), "r"(s.size) : "memory"); \
    else                                                                                                          \
      asm volatile(OPC ".expect_tx.release.cta.shared::cta.b64 %0, [%1], %2;" : "=l"(state) : "r"(bar), "r"(s.size) : "memory"); \
  } else if (s.flags & kHasCount) {                                                                               \
    if (cl)                                                                                                       \
      asm volatile(OPC ".release.cluster.shared::cta.b64 %0, [%1], %2;" : "=l"(state) : "r"(bar), "r"(s.size) : "memory"); \
    else                                                                                                          \
      asm volatile(OPC ".release.cta.shared::cta.b64 %0, [%1], %2;" : "=l"(state) : "r"(bar), "r"(s.size) : "memory"); \
  } else {                                                                                                        \
    if (cl)                                                                                                       \
      asm volatile(OPC ".release.cluster.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(bar) : "memory");         \
    else                                                                                                          \
      asm volatile(OPC ".release.cta.shared::cta.b64 %0, [%1];" : "=l"(state) : "r"(bar) : "memory");             \
  }
  if (drop) { TK_ARRIVE("mbarrier.arrive_drop") } else { TK_ARRIVE("mbarrier.arrive") }
#undef TK_ARRIVE
  return state;
}

// One test of the phase (test_wait never blocks; try_wait may suspend for a
// system-dependent time and is retried by the caller).
__device__ bool mbar_test(const Step& s, uint32_t bar, unsigned long long v, bool try_wait) {
  uint32_t ok;
  const bool cl = s.flags & kClusterScope;
#define TK_WAIT(TEXT, VT)                                                                                     \
  asm volatile("{\n\t.reg .pred p;\n\t" TEXT " p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}" : "=r"(ok) : "r"(bar), \
               VT : "memory")
  if (s.flags & kParity) {
    const uint32_t parity = static_cast<uint32_t>(v & 1);
    if (try_wait) {
      if (cl) TK_WAIT("mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64", "r"(parity));
      else TK_WAIT("mbarrier.try_wait.parity.acquire.cta.shared::cta.b64", "r"(parity));
    } else {
      if (cl) TK_WAIT("mbarrier.test_wait.parity.acquire.cluster.shared::cta.b64", "r"(parity));
      else TK_WAIT("mbarrier.test_wait.parity.acquire.cta.shared::cta.b64", "r"(parity));
    }
  } else {
    if (try_wait) {
      if (cl) TK_WAIT("mbarrier.try_wait.acquire.cluster.shared::cta.b64", "l"(v));
      else TK_WAIT("mbarrier.try_wait.acquire.cta.shared::cta.b64", "l"(v));
    } else {
      if (cl) TK_WAIT("mbarrier.test_wait.acquire.cluster.shared::cta.b64", "l"(v));
      else TK_WAIT("mbarrier.test_wait.acquire.cta.shared::cta.b64", "l"(v));
    }
  }
#undef TK_WAIT
  return ok != 0;
}

__device__ void plain_store(const Step& s, uint32_t saddr) {
  const unsigned long long v = s.value;
  const unsigned short h = static_cast<unsigned short>(v);
  const uint32_t w = static_cast<uint32_t>(v);
  void* g = reinterpret_cast<void*>(s.gaddr);
  if (s.code == kStShared) {
    switch (s.size) {
      case 1: asm volatile("st.shared.b8 [%0], %1;" ::"r"(saddr), "h"(h) : "memory"); break;
      case 2: asm volatile("st.shared.b16 [%0], %1;" ::"r"(saddr), "h"(h) : "memory"); break;
      case 4: asm volatile("st.shared.b32 [%0], %1;" ::"r"(saddr), "r"(w) : "memory"); break;
      default: asm volatile("st.shared.b64 [%0], %1;" ::"r"(saddr), "l"(v) : "memory"); break;
    }
  } else {
    switch (s.size) {
      case 1: asm volatile("st.global.b8 [%0], %1;" ::"l"(g), "h"(h) : "memory"); break;
      case 2: asm volatile("st.global.b16 [%0], %1;" ::"l"(g), "h"(h) : "memory"); break;
      case 4: asm volatile("st.global.b32 [%0], %1;" ::"l"(g), "r"(w) : "memory"); break;
      default: asm volatile("st.global.b64 [%0], %1;" ::"l"(g), "l"(v) : "memory"); break;
    }
  }
}

// Executes step i (by the step's thread). Returns false when the kernel must stop (a hang).
__device__ bool execute(const KernelArgs& a, const Step& s, uint32_t i, uint32_t rank, uint32_t base) {
  const void* map = s.code >= kTensorLoadCta && s.code <= kTensorPrefetch ? &a.maps[s.map] : nullptr;
  volatile unsigned long long* regs = a.regs;
  switch (s.code) {
    case kNop: break;
    case kTensorLoadCta:
      tensor_load(s, map, base + s.smem, base + s.mbar);
      break;
    case kTensorLoadCluster:
      tensor_load(s, map, cluster_addr(base, s.smem, s.smem_rank), cluster_addr(base, s.mbar, s.mbar_rank));
      break;
    case kTensorStore: tensor_store(s, map, base + s.smem); break;
    case kTensorReduce: tensor_reduce(s, map, base + s.smem); break;
    case kTensorPrefetch: tensor_prefetch(s, map); break;
    case kBulkLoadCta: bulk_load(s, base + s.smem, base + s.mbar); break;
    case kBulkLoadCluster:
      bulk_load(s, cluster_addr(base, s.smem, s.smem_rank), cluster_addr(base, s.mbar, s.mbar_rank));
      break;
    case kBulkCopyPeer: {
      const uint32_t dst = cluster_addr(base, s.smem, s.smem_rank), bar = cluster_addr(base, s.mbar, s.mbar_rank);
      asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   ::"r"(dst), "r"(base + s.smem2), "r"(s.size), "r"(bar) : "memory");
      break;
    }
    case kBulkStore: bulk_store(s, base + s.smem); break;
    case kBulkReduceGlobal: bulk_reduce_global(s, base + s.smem); break;
    case kBulkReduceCluster:
      bulk_reduce_cluster(s, cluster_addr(base, s.smem, s.smem_rank), base + s.smem2,
                          cluster_addr(base, s.mbar, s.mbar_rank));
      break;
    case kBulkPrefetch:
      if (s.flags & kHint)
        asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;" ::"l"(s.gaddr), "r"(s.size),
                     "l"(s.policy) : "memory");
      else
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(s.gaddr), "r"(s.size) : "memory");
      break;
    case kCommitGroup: asm volatile("cp.async.bulk.commit_group;" ::: "memory"); break;
    case kWaitGroup: wait_group(s.size, s.flags & kRead); break;
    case kMbarInit:
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(base + s.smem), "r"(s.size) : "memory");
      break;
    case kMbarArrive: {
      const uint32_t bar = s.flags & kRemote ? cluster_addr(base, s.smem, s.smem_rank) : base + s.smem;
      unsigned long long state = mbar_arrive(s, bar);
      if (s.dst_reg >= 0) regs[s.dst_reg] = state, __threadfence();
      break;
    }
    case kMbarExpectTx: case kMbarCompleteTx: {
      const bool remote = s.flags & kRemote;
      const uint32_t bar = remote ? cluster_addr(base, s.smem, s.smem_rank) : base + s.smem;
      if (s.code == kMbarExpectTx) {
        if (remote) asm volatile("mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;" ::"r"(bar), "r"(s.size) : "memory");
        else asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(s.size) : "memory");
      } else {
        if (remote) asm volatile("mbarrier.complete_tx.relaxed.cluster.shared::cluster.b64 [%0], %1;" ::"r"(bar), "r"(s.size) : "memory");
        else asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(s.size) : "memory");
      }
      break;
    }
    case kMbarTestWait: case kMbarTryWait: {
      const uint32_t bar = base + s.smem;
      const unsigned long long v = s.src_reg >= 0 ? regs[s.src_reg] : s.value;
      bool done = mbar_test(s, bar, v, s.code == kMbarTryWait);
      if (!done && s.code == kMbarTryWait) {
        // Blocked: let the other CTAs run their later steps meanwhile (scenario-format.md).
        st_release(&a.pos[rank], i | kBlocked);
        const unsigned long long t0 = now_ns();
        while (!(done = mbar_test(s, bar, v, true))) {
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
    case kMbarInval: asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(base + s.smem) : "memory"); break;
    case kFenceProxyAsync:
      if (s.flags & kSpaceGlobal) asm volatile("fence.proxy.async.global;" ::: "memory");
      else if (s.flags & kSpaceCluster) asm volatile("fence.proxy.async.shared::cluster;" ::: "memory");
      else asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      break;
    case kFenceMbarInit: asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); break;
    case kStShared: plain_store(s, base + s.smem); break;
    case kStGlobal: plain_store(s, 0); break;
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
  const uint32_t dyn_addr = smem_u32(dyn);
  const uint32_t pad = (1024u - (dyn_addr & 1023u)) & 1023u;
  uint8_t* win = dyn + pad;
  const uint32_t base = dyn_addr + pad;
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
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  if (tid == 0)
    for (uint32_t m = 0; m < a.nmaps; ++m)
      asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(&a.maps[m]) : "memory");
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
    if (run && tid == s.thread) stop = !execute(a, s, i, rank, base);
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
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
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
