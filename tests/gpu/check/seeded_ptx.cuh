// The PTX of the seeded-bug kernels (seeded_kernels.cu), one macro an instruction. Macros, not
// inline functions: with -lineinfo a macro's code carries the line that uses it, so every trace
// record (and every diagnosis) points at the kernel's own line, not at a helper shared by all.
#pragma once
#include <cstdint>

#define SMEM(p) static_cast<uint32_t>(__cvta_generic_to_shared(p))

#define MBAR_INIT(bar, count) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory")
#define FENCE_MBAR_INIT() asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory")
#define FENCE_PROXY_ASYNC() asm volatile("fence.proxy.async.shared::cta;" ::: "memory")
#define ARRIVE_EXPECT(bar, bytes) \
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory")
#define ARRIVE(bar) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory")
#define ARRIVE_REMOTE(remote_bar) \
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote_bar) : "memory")
// A blocking wait: try_wait until the phase of `parity` has completed. Never gives up, so a
// barrier that never completes hangs the kernel as it would in a real program.
#define WAIT(bar, parity)                                                                         \
  do {                                                                                            \
    uint32_t done_;                                                                               \
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" \
                 : "=r"(done_) : "r"(bar), "r"(parity) : "memory");                                \
    if (done_) break;                                                                             \
  } while (true)

#define TMA_LOAD_2D(dst, map, x, y, bar)                                                                 \
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" \
               ::"r"(dst), "l"(map), "r"(x), "r"(y), "r"(bar) : "memory")
#define TMA_LOAD_2D_MULTICAST(dst, map, x, y, bar, mask)                                                   \
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster" \
               " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst), "l"(map), "r"(x), "r"(y), "r"(bar), "h"(mask) : "memory")
#define TMA_STORE_2D(map, x, y, src) \
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(map), "r"(x), "r"(y), "r"(src) : "memory")
#define BULK_LOAD(dst, src, bytes, bar)                                                                    \
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" \
               ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory")
#define COMMIT_GROUP() asm volatile("cp.async.bulk.commit_group;" ::: "memory")
#define WAIT_GROUP_READ_0() asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory")
#define WAIT_GROUP_0() asm volatile("cp.async.bulk.wait_group 0;" ::: "memory")
#define CLUSTER_SYNC_RELAXED() \
  asm volatile("barrier.cluster.arrive.relaxed.aligned; barrier.cluster.wait.aligned;" ::: "memory")
#define CLUSTER_SYNC() asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;" ::: "memory")
#define MAPA(addr, rank) \
  ({ uint32_t r_; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r_) : "r"(addr), "r"(rank)); r_; })
#define CLUSTER_RANK() ({ uint32_t r_; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r_)); r_; })
#define TENSORMAP_REPLACE_ADDRESS(gmap, value) \
  asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" ::"l"(gmap), "l"(value) : "memory")
#define FENCE_TENSORMAP_RELEASE() asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory")
#define FENCE_TENSORMAP_ACQUIRE(gmap) \
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(gmap) : "memory")
