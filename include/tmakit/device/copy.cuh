// Typed wrappers for the bulk-copy engine (§2, §4, §6, §7, §9). Coordinates are
// `const int32_t (&c)[N]` with N = the map's rank, dimension 0 first, as in PTX.
// CCCL's cuda::ptx provides most forms; inline PTX covers what it lacks in CUDA
// 13.0 (§12.3): .L2::cache_hint on tensor copies, im2col loads, tensor and bulk
// prefetch. Rules the hardware enforces at run time are the caller's: tensor
// smem operands 128-byte aligned (H15), c[0] × elemBytes a multiple of 16 (H9),
// non-negative store/reduce coordinates (H14), bulk sizes multiples of 16 (§7).
#pragma once
#include <cuda/ptx>

#include <cstdint>

#include "tmakit/device/map.cuh"
#include "tmakit/device/mbarrier.cuh"

namespace tmakit::device {

namespace ptx = cuda::ptx;

// ---- tensor tile loads (global -> shared, mbarrier complete_tx) ----------------

// cp.async.bulk.tensor.Nd.shared::cta.global.tile.mbarrier::complete_tx::bytes
template <int N>
__device__ inline void load_tile(void* dst, const MapHandle& m, const int32_t (&c)[N], uint64_t* bar) {
  ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, dst, m.ptr(), c, bar);
}
// ... .shared::cluster.global ... (destination and barrier in the executing CTA's window)
template <int N>
__device__ inline void load_tile_cluster(void* dst, const MapHandle& m, const int32_t (&c)[N], uint64_t* bar) {
  ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst, m.ptr(), c, bar);
}
// ... .multicast::cluster: same CTA-relative dst and barrier in every CTA whose
// %cluster_ctarank bit is set in cta_mask (§10.1, H12, H16).
template <int N>
__device__ inline void load_tile_multicast(void* dst, const MapHandle& m, const int32_t (&c)[N], uint64_t* bar,
                                           uint16_t cta_mask) {
  ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst, m.ptr(), c, bar, cta_mask);
}

// Inline-PTX helpers: every form passes all five coordinates as operands %4..%8
// and names only the first N in the text.
#define TMAKIT_C1 "{%4}"
#define TMAKIT_C2 "{%4, %5}"
#define TMAKIT_C3 "{%4, %5, %6}"
#define TMAKIT_C4 "{%4, %5, %6, %7}"
#define TMAKIT_C5 "{%4, %5, %6, %7, %8}"
#define TMAKIT_COORD_OPERANDS                                                                                 \
  "r"(c[0]), "r"(N > 1 ? c[N > 1 ? 1 : 0] : 0), "r"(N > 2 ? c[N > 2 ? 2 : 0] : 0),                             \
      "r"(N > 3 ? c[N > 3 ? 3 : 0] : 0), "r"(N > 4 ? c[N > 4 ? 4 : 0] : 0)
#define TMAKIT_BY_RANK(EMIT)                  \
  if constexpr (N == 1) EMIT(".1d", TMAKIT_C1) \
  else if constexpr (N == 2) EMIT(".2d", TMAKIT_C2) \
  else if constexpr (N == 3) EMIT(".3d", TMAKIT_C3) \
  else if constexpr (N == 4) EMIT(".4d", TMAKIT_C4) \
  else EMIT(".5d", TMAKIT_C5)

// Tile load with an L2 cache policy (.L2::cache_hint; a hint only, H16).
template <int N>
__device__ inline void load_tile_hint(void* dst, const MapHandle& m, const int32_t (&c)[N], uint64_t* bar,
                                      uint64_t policy) {
  static_assert(N >= 1 && N <= 5, "tensor rank 1..5");
#define TMAKIT_EMIT(DIM, COORDS)                                                                         \
  asm volatile("cp.async.bulk.tensor" DIM                                                               \
               ".shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, " COORDS \
               "], [%2], %3;" ::"r"(smem_addr(dst)),                                                    \
               "l"(m.ptr()), "r"(smem_addr(bar)), "l"(policy), TMAKIT_COORD_OPERANDS                    \
               : "memory");
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}

// im2col load (§4.2): coordinates {c, w, (h), (d), n}; offsets {offW, (offH), (offD)}
// are 16-bit (N - 2 of them). Destination and barrier in the executing CTA.
template <int N>
__device__ inline void load_im2col(void* dst, const MapHandle& m, const int32_t (&c)[N],
                                   const uint16_t (&offsets)[N - 2], uint64_t* bar) {
  static_assert(N >= 3 && N <= 5, "im2col maps have rank 3..5");
  const uint32_t d = smem_addr(dst), b = smem_addr(bar);
  if constexpr (N == 3)
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
        "[%5], {%6};" ::"r"(d),
        "l"(m.ptr()), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(b), "h"(offsets[0])
        : "memory");
  else if constexpr (N == 4)
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
        "%5}], [%6], {%7, %8};" ::"r"(d),
        "l"(m.ptr()), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(b), "h"(offsets[0]), "h"(offsets[1])
        : "memory");
  else
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
        "%5, %6}], [%7], {%8, %9, %10};" ::"r"(d),
        "l"(m.ptr()), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(b), "h"(offsets[0]),
        "h"(offsets[1]), "h"(offsets[2])
        : "memory");
}

// ---- tensor stores and reductions (shared::cta -> global, bulk_group) ---------

// cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group. Precede it with
// fence_proxy_async_shared() when src was written by ordinary stores (§9).
template <int N>
__device__ inline void store_tile(const MapHandle& m, const int32_t (&c)[N], const void* src) {
  ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, m.ptr(), c, src);
}

template <int N>
__device__ inline void store_tile_hint(const MapHandle& m, const int32_t (&c)[N], const void* src, uint64_t policy) {
  static_assert(N >= 1 && N <= 5, "tensor rank 1..5");
#define TMAKIT_EMIT(DIM, COORDS)                                                                              \
  asm volatile("cp.async.bulk.tensor" DIM ".global.shared::cta.tile.bulk_group.L2::cache_hint [%0, " COORDS \
               "], [%1], %2;" ::"l"(m.ptr()),                                                                \
               "r"(smem_addr(src)), "l"(policy), "r"(0), TMAKIT_COORD_OPERANDS                               \
               : "memory");
  // (%3 is a placeholder so that the coordinates stay at %4..%8)
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}

// cp.reduce.async.bulk.tensor.Nd.global.shared::cta.OP.tile.bulk_group; the element
// type comes from the map (§6.1). Op: cuda::ptx::op_add, op_min, op_max, op_inc,
// op_dec, op_and_op, op_or_op, op_xor_op. INT64 maps fault on and/or/xor (H7).
template <ptx::dot_op Op, int N>
__device__ inline void reduce_tile(ptx::op_t<Op> op, const MapHandle& m, const int32_t (&c)[N], const void* src) {
  ptx::cp_reduce_async_bulk_tensor(ptx::space_global, ptx::space_shared, op, m.ptr(), c, src);
}

// ---- tensor prefetch (L2 hint, no completion, §2.7) ---------------------------

template <int N>
__device__ inline void prefetch_tile(const MapHandle& m, const int32_t (&c)[N]) {
  static_assert(N >= 1 && N <= 5, "tensor rank 1..5");
#define TMAKIT_EMIT(DIM, COORDS)                                                                           \
  asm volatile("cp.async.bulk.prefetch.tensor" DIM ".L2.global.tile [%0, " COORDS "];" ::"l"(m.ptr()),    \
               "r"(0), "r"(0), "r"(0), TMAKIT_COORD_OPERANDS                                              \
               : "memory");
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}

template <int N>
__device__ inline void prefetch_im2col(const MapHandle& m, const int32_t (&c)[N], const uint16_t (&offsets)[N - 2]) {
  static_assert(N >= 3 && N <= 5, "im2col maps have rank 3..5");
  if constexpr (N == 3)
    asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.im2col [%0, {%1, %2, %3}], {%4};" ::"l"(m.ptr()),
                 "r"(c[0]), "r"(c[1]), "r"(c[2]), "h"(offsets[0])
                 : "memory");
  else if constexpr (N == 4)
    asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global.im2col [%0, {%1, %2, %3, %4}], {%5, %6};" ::"l"(m.ptr()),
                 "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "h"(offsets[0]), "h"(offsets[1])
                 : "memory");
  else
    asm volatile("cp.async.bulk.prefetch.tensor.5d.L2.global.im2col [%0, {%1, %2, %3, %4, %5}], {%6, %7, %8};" ::"l"(
                     m.ptr()),
                 "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "h"(offsets[0]), "h"(offsets[1]),
                 "h"(offsets[2])
                 : "memory");
}

#undef TMAKIT_C1
#undef TMAKIT_C2
#undef TMAKIT_C3
#undef TMAKIT_C4
#undef TMAKIT_C5
#undef TMAKIT_COORD_OPERANDS
#undef TMAKIT_BY_RANK

// ---- non-tensor bulk copies (§7) ---------------------------------------------
// size: a multiple of 16; both addresses 16-byte aligned.

// cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes
__device__ inline void bulk_load(void* dst, const void* src, uint32_t size, uint64_t* bar) {
  ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, dst, src, size, bar);
}
// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
__device__ inline void bulk_load_cluster(void* dst, const void* src, uint32_t size, uint64_t* bar) {
  ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, dst, src, size, bar);
}
// ... .multicast::cluster (§10.1)
__device__ inline void bulk_load_multicast(void* dst, const void* src, uint32_t size, uint64_t* bar,
                                           uint16_t cta_mask) {
  ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, dst, src, size, bar, cta_mask);
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
// ... with .L2::cache_hint
__device__ inline void bulk_store_hint(void* dst, const void* src, uint32_t size, uint64_t policy) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;" ::"l"(dst),
               "r"(smem_addr(src)), "r"(size), "l"(policy)
               : "memory");
}
// cp.reduce.async.bulk.global.shared::cta.bulk_group.OP.TYPE (§6.2); T picks the type
// (CCCL emits f16/bf16 add as .add.noftz and s64 add as .add.u64).
template <class Op, class T>
__device__ inline void bulk_reduce(Op op, T* dst, const T* src, uint32_t size) {
  ptx::cp_reduce_async_bulk(ptx::space_global, ptx::space_shared, op, dst, src, size);
}
// cp.async.bulk.prefetch.L2.global
__device__ inline void bulk_prefetch(const void* src, uint32_t size) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(size) : "memory");
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

// L2 cache policies CUTLASS uses (§12.3); hints only.
inline constexpr uint64_t kEvictNormal = 0x1000000000000000ull;
inline constexpr uint64_t kEvictFirst = 0x12F0000000000000ull;
inline constexpr uint64_t kEvictLast = 0x14F0000000000000ull;

}  // namespace tmakit::device
