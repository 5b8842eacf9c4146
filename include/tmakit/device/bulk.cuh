// Non-tensor bulk copies and reductions (§7, §6.2), bulk async-groups and proxy fences
// (§9), and the L2 cache policies (§12.3). CCCL's cuda::ptx emits the forms it has; inline
// PTX covers the `.L2::cache_hint` variants and the bulk prefetch (docs/device-library.md).
// Every function whose last parameter is `policy` is the hinted variant of the one without.
// Included by copy.cuh (include tmakit/device/tma.cuh).
#pragma once
#include <cuda/ptx>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "tmakit/device/mbarrier.cuh"

namespace tmakit::device {

namespace ptx = cuda::ptx;

namespace detail {
template <class T>
inline constexpr bool dependent_false = false;
}  // namespace detail

// ---- non-tensor bulk copies (§7) ---------------------------------------------
// size: a multiple of 16; both addresses 16-byte aligned.

// cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes
__device__ inline void bulk_load(void* dst, const void* src, uint32_t size, uint64_t* bar) {
  ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, dst, src, size, bar);
}
__device__ inline void bulk_load(void* dst, const void* src, uint32_t size, uint64_t* bar, uint64_t policy) {
  asm volatile("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
               ::"r"(smem_addr(dst)), "l"(src), "r"(size), "r"(smem_addr(bar)), "l"(policy) : "memory");
}
// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
__device__ inline void bulk_load_cluster(void* dst, const void* src, uint32_t size, uint64_t* bar) {
  ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, dst, src, size, bar);
}
__device__ inline void bulk_load_cluster(void* dst, const void* src, uint32_t size, uint64_t* bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
      ::"r"(smem_addr(dst)), "l"(src), "r"(size), "r"(smem_addr(bar)), "l"(policy) : "memory");
}
// ... .multicast::cluster (§10.1)
__device__ inline void bulk_load_multicast(void* dst, const void* src, uint32_t size, uint64_t* bar,
                                           uint16_t cta_mask) {
  ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, dst, src, size, bar, cta_mask);
}
__device__ inline void bulk_load_multicast(void* dst, const void* src, uint32_t size, uint64_t* bar,
                                           uint16_t cta_mask, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint"
      " [%0], [%1], %2, [%3], %4, %5;" ::"r"(smem_addr(dst)), "l"(src), "r"(size), "r"(smem_addr(bar)),
      "h"(cta_mask), "l"(policy) : "memory");
}
// cp.async.bulk.shared::cluster.shared::cta: dst and remote_bar are addresses in
// another CTA's window (mapa / cluster.map_shared_rank).
__device__ inline void bulk_copy_to_peer(void* dst, const void* src, uint32_t size, uint64_t* remote_bar) {
  ptx::cp_async_bulk(ptx::space_cluster, ptx::space_shared, dst, src, size, remote_bar);
}
// cp.async.bulk.global.shared::cta.bulk_group
__device__ inline void bulk_store(void* dst, const void* src, uint32_t size) {
  ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, dst, src, size);
}
__device__ inline void bulk_store(void* dst, const void* src, uint32_t size, uint64_t policy) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;" ::"l"(dst),
               "r"(smem_addr(src)), "r"(size), "l"(policy)
               : "memory");
}
// The older name of the hinted bulk store.
__device__ inline void bulk_store_hint(void* dst, const void* src, uint32_t size, uint64_t policy) {
  bulk_store(dst, src, size, policy);
}

// cp.reduce.async.bulk.global.shared::cta.bulk_group.OP.TYPE (§6.2); T picks the
// type: uint32_t int32_t uint64_t int64_t float double __half __nv_bfloat16, and
// for and/or/xor any 4- or 8-byte type (.b32 / .b64). As in CCCL, f16/bf16 add
// is .add.noftz and s64 add is .add.u64 (the same bits).
template <class Op, class T>
__device__ inline void bulk_reduce(Op op, T* dst, const T* src, uint32_t size) {
  ptx::cp_reduce_async_bulk(ptx::space_global, ptx::space_shared, op, dst, src, size);
}
template <ptx::dot_op Op, class T>
__device__ inline void bulk_reduce(ptx::op_t<Op>, T* dst, const T* src, uint32_t size, uint64_t policy) {
  using ptx::dot_op;
#define TMAKIT_EMIT(OT)                                                                                         \
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint" OT " [%0], [%1], %2, %3;" \
               ::"l"(dst), "r"(smem_addr(src)), "r"(size), "l"(policy) : "memory")
  constexpr bool bitwise = Op == dot_op::and_op || Op == dot_op::or_op || Op == dot_op::xor_op;
  constexpr bool minmax = Op == dot_op::min || Op == dot_op::max;
  if constexpr (bitwise && sizeof(T) == 4) {
    if constexpr (Op == dot_op::and_op) TMAKIT_EMIT(".and.b32");
    else if constexpr (Op == dot_op::or_op) TMAKIT_EMIT(".or.b32");
    else TMAKIT_EMIT(".xor.b32");
  } else if constexpr (bitwise && sizeof(T) == 8) {
    if constexpr (Op == dot_op::and_op) TMAKIT_EMIT(".and.b64");
    else if constexpr (Op == dot_op::or_op) TMAKIT_EMIT(".or.b64");
    else TMAKIT_EMIT(".xor.b64");
  } else if constexpr (Op == dot_op::add) {
    if constexpr (std::is_same_v<T, uint32_t>) TMAKIT_EMIT(".add.u32");
    else if constexpr (std::is_same_v<T, int32_t>) TMAKIT_EMIT(".add.s32");
    else if constexpr (std::is_same_v<T, uint64_t> || std::is_same_v<T, int64_t>) TMAKIT_EMIT(".add.u64");
    else if constexpr (std::is_same_v<T, float>) TMAKIT_EMIT(".add.f32");
    else if constexpr (std::is_same_v<T, double>) TMAKIT_EMIT(".add.f64");
    else if constexpr (std::is_same_v<T, __half>) TMAKIT_EMIT(".add.noftz.f16");
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) TMAKIT_EMIT(".add.noftz.bf16");
    else static_assert(detail::dependent_false<T>, "bulk add: u32 s32 u64 s64 f32 f64 f16 bf16");
  } else if constexpr (minmax) {
#define TMAKIT_MINMAX(TY)                                   \
  if constexpr (Op == dot_op::min) TMAKIT_EMIT(".min" TY); \
  else TMAKIT_EMIT(".max" TY);
    if constexpr (std::is_same_v<T, uint32_t>) { TMAKIT_MINMAX(".u32") }
    else if constexpr (std::is_same_v<T, int32_t>) { TMAKIT_MINMAX(".s32") }
    else if constexpr (std::is_same_v<T, uint64_t>) { TMAKIT_MINMAX(".u64") }
    else if constexpr (std::is_same_v<T, int64_t>) { TMAKIT_MINMAX(".s64") }
    else if constexpr (std::is_same_v<T, __half>) { TMAKIT_MINMAX(".f16") }
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) { TMAKIT_MINMAX(".bf16") }
    else static_assert(detail::dependent_false<T>, "bulk min/max: u32 s32 u64 s64 f16 bf16");
#undef TMAKIT_MINMAX
  } else if constexpr ((Op == dot_op::inc || Op == dot_op::dec) && std::is_same_v<T, uint32_t>) {
    if constexpr (Op == dot_op::inc) TMAKIT_EMIT(".inc.u32");
    else TMAKIT_EMIT(".dec.u32");
  } else {
    static_assert(detail::dependent_false<T>, "no bulk reduction with this (op, type) pair");
  }
#undef TMAKIT_EMIT
}
// cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.OP.TYPE:
// into another CTA's shared memory, completing on remote_bar there (§6.2: 32-bit
// add min max inc dec and or xor, 64-bit add).
template <class Op, class T>
__device__ inline void bulk_reduce_cluster(Op op, T* remote_dst, const T* src, uint32_t size, uint64_t* remote_bar) {
  ptx::cp_reduce_async_bulk(ptx::space_cluster, ptx::space_shared, op, remote_dst, src, size, remote_bar);
}

// cp.async.bulk.prefetch.L2.global{.L2::cache_hint}. Inline PTX: not in CCCL.
__device__ inline void bulk_prefetch(const void* src, uint32_t size) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(size) : "memory");
}
__device__ inline void bulk_prefetch(const void* src, uint32_t size, uint64_t policy) {
  asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;" ::"l"(src), "r"(size), "l"(policy)
               : "memory");
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
