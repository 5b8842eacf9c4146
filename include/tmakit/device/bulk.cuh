// Non-tensor bulk copies and reductions (§7, §6.2), bulk async-groups and proxy fences
// (§9), and the L2 cache policies (§12.3). The copies, reductions and prefetch are
// generated from the table of forms (generated/bulk.cuh): CCCL's cuda::ptx emits the forms
// it has; inline PTX covers the `.L2::cache_hint` variants and the bulk prefetch
// (docs/device-library.md). Every function whose last parameter is `policy` is the hinted
// variant of the one without. Included by copy.cuh (include tmakit/device/tma.cuh).
//
// bulk_load (.shared::cta), bulk_load_cluster, bulk_load_multicast, bulk_copy_to_peer
// (dst and remote_bar in another CTA's window: mapa / cluster.map_shared_rank), bulk_store,
// bulk_prefetch: size a multiple of 16, both addresses 16-byte aligned.
// bulk_reduce(op, dst, src, size[, policy]) into global memory and
// bulk_reduce_cluster(op, remote_dst, src, size, remote_bar) into another CTA's shared
// memory: one overload per op x type pair of the table (§6.2); T picks the type:
// uint32_t int32_t uint64_t int64_t float double __half __nv_bfloat16, and for and/or/xor
// any 4- or 8-byte type (.b32 / .b64). As in CCCL, f16/bf16 add is .add.noftz and s64 add
// is .add.u64 (the same bits). A pair the table does not list has no overload.
#pragma once
#include <cuda/ptx>

#include <cstdint>

#include "tmakit/device/generated/bulk.cuh"
#include "tmakit/device/mbarrier.cuh"

namespace tmakit::device {

namespace ptx = cuda::ptx;

// The older name of the hinted bulk store.
__device__ inline void bulk_store_hint(void* dst, const void* src, uint32_t size, uint64_t policy) {
  bulk_store(dst, src, size, policy);
}

// ---- bulk async-groups and proxy fences (§9) --------------------------------

__device__ inline void commit_group() { ptx::cp_async_bulk_commit_group(); }
template <int N = 0>
__device__ inline void wait_group() {
  ptx::cp_async_bulk_wait_group(ptx::n32_t<N>{});
}
template <int N = 0>
__device__ inline void wait_group_read() {
  ptx::cp_async_bulk_wait_group_read(ptx::n32_t<N>{});
}
// fence.proxy.async.shared::cta: ordinary smem writes -> visible to the copy engine.
__device__ inline void fence_proxy_async_shared() { ptx::fence_proxy_async(ptx::space_shared); }
// fence.proxy.async.shared::cluster and fence.proxy.async.global: the same for
// the cluster's shared memory and for global memory.
__device__ inline void fence_proxy_async_cluster() { ptx::fence_proxy_async(ptx::space_cluster); }
__device__ inline void fence_proxy_async_global() { ptx::fence_proxy_async(ptx::space_global); }

// L2 cache policies CUTLASS uses (§12.3); hints only.
inline constexpr uint64_t kEvictNormal = 0x1000000000000000ull;
inline constexpr uint64_t kEvictFirst = 0x12F0000000000000ull;
inline constexpr uint64_t kEvictLast = 0x14F0000000000000ull;

}  // namespace tmakit::device
