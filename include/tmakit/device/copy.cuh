// Typed wrappers for the bulk-copy engine (§2, §4, §6, §7, §9). Coordinates are
// `const int32_t (&c)[N]` with N = the map's rank, dimension 0 first, as in PTX.
// The map is a MapHandle or a CUtensorMap in .param/.const/.global memory.
// CCCL's cuda::ptx emits every form it has; inline PTX covers what CUDA 13.0's
// CCCL lacks (docs/device-library.md, "Inline PTX"): `.L2::cache_hint` on tensor
// and bulk copies, im2col loads, .im2col_no_offs stores and reductions, tensor
// and bulk prefetch. Every function whose
// last parameter is `policy` is the `.L2::cache_hint` variant of the one without
// (a 64-bit policy such as kEvictFirst; a hint only, H16).
// Rules the hardware enforces at run time are the caller's: tensor smem
// operands 128-byte aligned (H15), c[0] × elemBytes a multiple of 16 (H9),
// non-negative store/reduce coordinates (H14), bulk sizes multiples of 16 (§7).
#pragma once
#include <cuda/ptx>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "tmakit/device/bulk.cuh"
#include "tmakit/device/map.cuh"
#include "tmakit/device/mbarrier.cuh"

namespace tmakit::device {

namespace ptx = cuda::ptx;

namespace detail {
// The coordinates padded to five operands (inline PTX names only the first N).
struct Coords5 {
  int32_t v[5];
};
template <int N>
__device__ inline Coords5 pad5(const int32_t (&c)[N]) {
  static_assert(N >= 1 && N <= 5, "tensor rank 1..5");
  Coords5 r{};
  for (int i = 0; i < N; ++i) r.v[i] = c[i];
  return r;
}
}  // namespace detail

// Inline-PTX helpers: the five coordinates are operands %0..%4 (only the first N
// named in the text); the form's other operands follow from %5.
#define TMAKIT_C1 "{%0}"
#define TMAKIT_C2 "{%0, %1}"
#define TMAKIT_C3 "{%0, %1, %2}"
#define TMAKIT_C4 "{%0, %1, %2, %3}"
#define TMAKIT_C5 "{%0, %1, %2, %3, %4}"
#define TMAKIT_COORDS "r"(k.v[0]), "r"(k.v[1]), "r"(k.v[2]), "r"(k.v[3]), "r"(k.v[4])
#define TMAKIT_BY_RANK(EMIT)                        \
  const detail::Coords5 k = detail::pad5(c);        \
  if constexpr (N == 1) EMIT(".1d", TMAKIT_C1)      \
  else if constexpr (N == 2) EMIT(".2d", TMAKIT_C2) \
  else if constexpr (N == 3) EMIT(".3d", TMAKIT_C3) \
  else if constexpr (N == 4) EMIT(".4d", TMAKIT_C4) \
  else EMIT(".5d", TMAKIT_C5)

// ---- tensor tile loads (global -> shared, mbarrier complete_tx) ----------------

// cp.async.bulk.tensor.Nd.shared::cta.global.tile.mbarrier::complete_tx::bytes
template <int N, TensorMapArg M>
__device__ inline void load_tile(void* dst, const M& m, const int32_t (&c)[N], uint64_t* bar) {
  ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, dst, map_ptr(m), c, bar);
}
// The hinted tile load into destination space DST (.shared::cta or .shared::cluster).
#define TMAKIT_LOAD_HINT(DST, DIM, C)                                                                        \
  asm volatile("cp.async.bulk.tensor" DIM DST ".global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"    \
               " [%5], [%6, " C "], [%7], %8;" ::TMAKIT_COORDS, "r"(smem_addr(dst)), "l"(map_ptr(m)),       \
               "r"(smem_addr(bar)), "l"(policy) : "memory");
template <int N, TensorMapArg M>
__device__ inline void load_tile(void* dst, const M& m, const int32_t (&c)[N], uint64_t* bar, uint64_t policy) {
#define TMAKIT_EMIT(DIM, C) TMAKIT_LOAD_HINT(".shared::cta", DIM, C)
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}

// ... .shared::cluster.global ...: dst and bar are the executing CTA's own, or
// another CTA's (cluster.map_shared_rank / mapa).
template <int N, TensorMapArg M>
__device__ inline void load_tile_cluster(void* dst, const M& m, const int32_t (&c)[N], uint64_t* bar) {
  ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst, map_ptr(m), c, bar);
}
template <int N, TensorMapArg M>
__device__ inline void load_tile_cluster(void* dst, const M& m, const int32_t (&c)[N], uint64_t* bar,
                                         uint64_t policy) {
#define TMAKIT_EMIT(DIM, C) TMAKIT_LOAD_HINT(".shared::cluster", DIM, C)
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}
#undef TMAKIT_LOAD_HINT
// The older name of the hinted .shared::cluster load (record_vectors' "form 2").
template <int N, TensorMapArg M>
__device__ inline void load_tile_hint(void* dst, const M& m, const int32_t (&c)[N], uint64_t* bar, uint64_t policy) {
  load_tile_cluster(dst, m, c, bar, policy);
}

// ... .multicast::cluster: same CTA-relative dst and barrier in every CTA whose
// %cluster_ctarank bit is set in cta_mask (§10.1, H12, H16).
template <int N, TensorMapArg M>
__device__ inline void load_tile_multicast(void* dst, const M& m, const int32_t (&c)[N], uint64_t* bar,
                                           uint16_t cta_mask) {
  ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, dst, map_ptr(m), c, bar, cta_mask);
}
template <int N, TensorMapArg M>
__device__ inline void load_tile_multicast(void* dst, const M& m, const int32_t (&c)[N], uint64_t* bar,
                                           uint16_t cta_mask, uint64_t policy) {
#define TMAKIT_EMIT(DIM, C)                                                                                 \
  asm volatile("cp.async.bulk.tensor" DIM ".shared::cluster.global.tile.mbarrier::complete_tx::bytes"      \
               ".multicast::cluster.L2::cache_hint [%5], [%6, " C "], [%7], %8, %9;" ::TMAKIT_COORDS,      \
               "r"(smem_addr(dst)), "l"(map_ptr(m)), "r"(smem_addr(bar)), "h"(cta_mask), "l"(policy)      \
               : "memory");
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}

// ---- im2col loads (§4.2): global -> shared, mbarrier complete_tx -------------
// Coordinates {c, w, (h), (d), n} (N = 3..5); `offsets` is the im2colInfo operand
// {offW, (offH), (offD)}: N - 2 16-bit values added to the filter base (§4.1).
// Inline PTX: CCCL has no im2col form. Operands: coordinates %0..%4, offsets
// %5..%7 (only the first N - 2 named), dst %8, map %9, mbar %10, then ctaMask
// and/or the cache policy from %11.
namespace detail {
struct Offsets3 {
  uint16_t v[3];
};
template <int N>
__device__ inline Offsets3 pad3(const uint16_t (&o)[N - 2]) {
  Offsets3 r{};
  for (int i = 0; i < N - 2; ++i) r.v[i] = o[i];
  return r;
}
}  // namespace detail
#define TMAKIT_OFFSETS "h"(o.v[0]), "h"(o.v[1]), "h"(o.v[2])
#define TMAKIT_BY_IM2COL_RANK(EMIT)                                                 \
  static_assert(N >= 3 && N <= 5, "im2col maps have rank 3..5 (NWC, NHWC, NDHWC)"); \
  const detail::Coords5 k = detail::pad5(c);                                        \
  const detail::Offsets3 o = detail::pad3<N>(offsets);                              \
  if constexpr (N == 3) EMIT(".3d", TMAKIT_C3, "{%5}")                              \
  else if constexpr (N == 4) EMIT(".4d", TMAKIT_C4, "{%5, %6}")                     \
  else EMIT(".5d", TMAKIT_C5, "{%5, %6, %7}")
// QUAL: qualifiers after complete_tx::bytes; TAIL: operand text after im2colInfo;
// the variadic part: `, "h"(cta_mask)` and/or `, "l"(policy)`.
#define TMAKIT_IM2COL_LOAD(DIM, C, O, DST, QUAL, TAIL, ...)                                                 \
  asm volatile("cp.async.bulk.tensor" DIM DST ".global.im2col.mbarrier::complete_tx::bytes" QUAL             \
               " [%8], [%9, " C "], [%10], " O TAIL ";" ::TMAKIT_COORDS, TMAKIT_OFFSETS, "r"(smem_addr(dst)), \
               "l"(map_ptr(m)), "r"(smem_addr(bar)) __VA_ARGS__ : "memory");

// cp.async.bulk.tensor.Nd.shared::cta.global.im2col.mbarrier::complete_tx::bytes
template <int N, TensorMapArg M>
__device__ inline void load_im2col(void* dst, const M& m, const int32_t (&c)[N], const uint16_t (&offsets)[N - 2],
                                   uint64_t* bar) {
#define TMAKIT_EMIT(DIM, C, O) TMAKIT_IM2COL_LOAD(DIM, C, O, ".shared::cta", "", "")
  TMAKIT_BY_IM2COL_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}
template <int N, TensorMapArg M>
__device__ inline void load_im2col(void* dst, const M& m, const int32_t (&c)[N], const uint16_t (&offsets)[N - 2],
                                   uint64_t* bar, uint64_t policy) {
#define TMAKIT_EMIT(DIM, C, O) TMAKIT_IM2COL_LOAD(DIM, C, O, ".shared::cta", ".L2::cache_hint", ", %11", , "l"(policy))
  TMAKIT_BY_IM2COL_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}
// ... .shared::cluster.global ...: dst and bar the executing CTA's own or another CTA's.
template <int N, TensorMapArg M>
__device__ inline void load_im2col_cluster(void* dst, const M& m, const int32_t (&c)[N],
                                           const uint16_t (&offsets)[N - 2], uint64_t* bar) {
#define TMAKIT_EMIT(DIM, C, O) TMAKIT_IM2COL_LOAD(DIM, C, O, ".shared::cluster", "", "")
  TMAKIT_BY_IM2COL_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}
template <int N, TensorMapArg M>
__device__ inline void load_im2col_cluster(void* dst, const M& m, const int32_t (&c)[N],
                                           const uint16_t (&offsets)[N - 2], uint64_t* bar, uint64_t policy) {
#define TMAKIT_EMIT(DIM, C, O) \
  TMAKIT_IM2COL_LOAD(DIM, C, O, ".shared::cluster", ".L2::cache_hint", ", %11", , "l"(policy))
  TMAKIT_BY_IM2COL_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}
// ... .multicast::cluster: the same rows into every CTA of cta_mask (§10.1, H12).
template <int N, TensorMapArg M>
__device__ inline void load_im2col_multicast(void* dst, const M& m, const int32_t (&c)[N],
                                             const uint16_t (&offsets)[N - 2], uint64_t* bar, uint16_t cta_mask) {
#define TMAKIT_EMIT(DIM, C, O) \
  TMAKIT_IM2COL_LOAD(DIM, C, O, ".shared::cluster", ".multicast::cluster", ", %11", , "h"(cta_mask))
  TMAKIT_BY_IM2COL_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}
template <int N, TensorMapArg M>
__device__ inline void load_im2col_multicast(void* dst, const M& m, const int32_t (&c)[N],
                                             const uint16_t (&offsets)[N - 2], uint64_t* bar, uint16_t cta_mask,
                                             uint64_t policy) {
#define TMAKIT_EMIT(DIM, C, O)                                                                               \
  TMAKIT_IM2COL_LOAD(DIM, C, O, ".shared::cluster", ".multicast::cluster.L2::cache_hint", ", %11, %12", ,   \
                     "h"(cta_mask), "l"(policy))
  TMAKIT_BY_IM2COL_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}
#undef TMAKIT_IM2COL_LOAD

// cp.async.bulk.prefetch.tensor.Nd.L2.global.im2col{.L2::cache_hint} (no completion, §2.7)
template <int N, TensorMapArg M>
__device__ inline void prefetch_im2col(const M& m, const int32_t (&c)[N], const uint16_t (&offsets)[N - 2]) {
#define TMAKIT_EMIT(DIM, C, O)                                                                              \
  asm volatile("cp.async.bulk.prefetch.tensor" DIM ".L2.global.im2col [%8, " C "], " O ";" ::TMAKIT_COORDS, \
               TMAKIT_OFFSETS, "l"(map_ptr(m)) : "memory");
  TMAKIT_BY_IM2COL_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}
template <int N, TensorMapArg M>
__device__ inline void prefetch_im2col(const M& m, const int32_t (&c)[N], const uint16_t (&offsets)[N - 2],
                                       uint64_t policy) {
#define TMAKIT_EMIT(DIM, C, O)                                                                             \
  asm volatile("cp.async.bulk.prefetch.tensor" DIM ".L2.global.im2col.L2::cache_hint [%8, " C "], " O   \
               ", %9;" ::TMAKIT_COORDS, TMAKIT_OFFSETS, "l"(map_ptr(m)), "l"(policy) : "memory");
  TMAKIT_BY_IM2COL_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}
#undef TMAKIT_BY_IM2COL_RANK
#undef TMAKIT_OFFSETS

// ---- tensor stores and reductions (shared::cta -> global, bulk_group) ---------

// cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group. Precede it with
// fence_proxy_async_shared() when src was written by ordinary stores (§9).
template <int N, TensorMapArg M>
__device__ inline void store_tile(const M& m, const int32_t (&c)[N], const void* src) {
  ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, map_ptr(m), c, src);
}
template <int N, TensorMapArg M>
__device__ inline void store_tile(const M& m, const int32_t (&c)[N], const void* src, uint64_t policy) {
#define TMAKIT_EMIT(DIM, C)                                                                                    \
  asm volatile("cp.async.bulk.tensor" DIM ".global.shared::cta.tile.bulk_group.L2::cache_hint [%5, " C "], [%6], %7;" \
               ::TMAKIT_COORDS, "l"(map_ptr(m)), "r"(smem_addr(src)), "l"(policy) : "memory");
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}
// The older name of the hinted store.
template <int N, TensorMapArg M>
__device__ inline void store_tile_hint(const M& m, const int32_t (&c)[N], const void* src, uint64_t policy) {
  store_tile(m, c, src, policy);
}

// cp.reduce.async.bulk.tensor.Nd.global.shared::cta.OP.tile.bulk_group; the element
// type comes from the map (§6.1). Op: cuda::ptx::op_add, op_min, op_max, op_inc,
// op_dec, op_and_op, op_or_op, op_xor_op. INT64 maps fault on and/or/xor (H7).
template <ptx::dot_op Op, int N, TensorMapArg M>
__device__ inline void reduce_tile(ptx::op_t<Op> op, const M& m, const int32_t (&c)[N], const void* src) {
  ptx::cp_reduce_async_bulk_tensor(ptx::space_global, ptx::space_shared, op, map_ptr(m), c, src);
}
template <ptx::dot_op Op, int N, TensorMapArg M>
__device__ inline void reduce_tile(ptx::op_t<Op>, const M& m, const int32_t (&c)[N], const void* src,
                                   uint64_t policy) {
#define TMAKIT_EMIT_OP(OP, DIM, C)                                                                  \
  asm volatile("cp.reduce.async.bulk.tensor" DIM ".global.shared::cta" OP                          \
               ".tile.bulk_group.L2::cache_hint [%5, " C "], [%6], %7;" ::TMAKIT_COORDS,           \
               "l"(map_ptr(m)), "r"(smem_addr(src)), "l"(policy) : "memory");
#define TMAKIT_EMIT(DIM, C)                                                         \
  if constexpr (Op == ptx::dot_op::add) TMAKIT_EMIT_OP(".add", DIM, C)              \
  else if constexpr (Op == ptx::dot_op::min) TMAKIT_EMIT_OP(".min", DIM, C)         \
  else if constexpr (Op == ptx::dot_op::max) TMAKIT_EMIT_OP(".max", DIM, C)         \
  else if constexpr (Op == ptx::dot_op::inc) TMAKIT_EMIT_OP(".inc", DIM, C)         \
  else if constexpr (Op == ptx::dot_op::dec) TMAKIT_EMIT_OP(".dec", DIM, C)         \
  else if constexpr (Op == ptx::dot_op::and_op) TMAKIT_EMIT_OP(".and", DIM, C)      \
  else if constexpr (Op == ptx::dot_op::or_op) TMAKIT_EMIT_OP(".or", DIM, C)        \
  else if constexpr (Op == ptx::dot_op::xor_op) TMAKIT_EMIT_OP(".xor", DIM, C)      \
  else static_assert(detail::dependent_false<M>, "tensor reductions: add min max inc dec and or xor");
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
#undef TMAKIT_EMIT_OP
}

// ---- .im2col_no_offs stores and reductions (§4.3, §6.1) -------------------------
// The load walk with offsets 0, shared::cta -> global, bulk_group. Coordinates
// {c, w, (h), (d), n} (N = 3..5), non-negative (H14). Inline PTX: CCCL has tile
// forms only. Operands: coordinates %0..%4, map %5, src %6, policy %7.
#define TMAKIT_IM2COL_WRITE(HEAD, DIM, C, QUAL, TAIL, ...)                                            \
  asm volatile(HEAD DIM ".global.shared::cta" QUAL " [%5, " C "], [%6]" TAIL ";" ::TMAKIT_COORDS,    \
               "l"(map_ptr(m)), "r"(smem_addr(src)) __VA_ARGS__ : "memory");
#define TMAKIT_IM2COL_BY_RANK(HEAD, QUAL, TAIL, ...)                                                  \
  static_assert(N >= 3 && N <= 5, "im2col maps have rank 3..5 (NWC, NHWC, NDHWC)");           \
  if constexpr (N == 3) TMAKIT_IM2COL_WRITE(HEAD, ".3d", TMAKIT_C3, QUAL, TAIL, __VA_ARGS__)          \
  else if constexpr (N == 4) TMAKIT_IM2COL_WRITE(HEAD, ".4d", TMAKIT_C4, QUAL, TAIL, __VA_ARGS__)     \
  else TMAKIT_IM2COL_WRITE(HEAD, ".5d", TMAKIT_C5, QUAL, TAIL, __VA_ARGS__)

// cp.async.bulk.tensor.Nd.global.shared::cta.im2col_no_offs.bulk_group{.L2::cache_hint}
template <int N, TensorMapArg M>
__device__ inline void store_im2col(const M& m, const int32_t (&c)[N], const void* src) {
  const detail::Coords5 k = detail::pad5(c);
  TMAKIT_IM2COL_BY_RANK("cp.async.bulk.tensor", ".im2col_no_offs.bulk_group", "", )
}
template <int N, TensorMapArg M>
__device__ inline void store_im2col(const M& m, const int32_t (&c)[N], const void* src, uint64_t policy) {
  const detail::Coords5 k = detail::pad5(c);
  TMAKIT_IM2COL_BY_RANK("cp.async.bulk.tensor", ".im2col_no_offs.bulk_group.L2::cache_hint", ", %7", , "l"(policy))
}

// cp.reduce.async.bulk.tensor.Nd.global.shared::cta.OP.im2col_no_offs.bulk_group{.L2::cache_hint};
// op and the map's element type as for reduce_tile (§6.1; INT64 and/or/xor fault, H7).
#define TMAKIT_BY_RED_OP(EMIT_OP)                                                         \
  if constexpr (Op == ptx::dot_op::add) EMIT_OP(".add")                                   \
  else if constexpr (Op == ptx::dot_op::min) EMIT_OP(".min")                              \
  else if constexpr (Op == ptx::dot_op::max) EMIT_OP(".max")                              \
  else if constexpr (Op == ptx::dot_op::inc) EMIT_OP(".inc")                              \
  else if constexpr (Op == ptx::dot_op::dec) EMIT_OP(".dec")                              \
  else if constexpr (Op == ptx::dot_op::and_op) EMIT_OP(".and")                           \
  else if constexpr (Op == ptx::dot_op::or_op) EMIT_OP(".or")                             \
  else if constexpr (Op == ptx::dot_op::xor_op) EMIT_OP(".xor")                           \
  else static_assert(detail::dependent_false<M>, "tensor reductions: add min max inc dec and or xor");
template <ptx::dot_op Op, int N, TensorMapArg M>
__device__ inline void reduce_im2col(ptx::op_t<Op>, const M& m, const int32_t (&c)[N], const void* src) {
  const detail::Coords5 k = detail::pad5(c);
#define TMAKIT_EMIT_OP(OP) { TMAKIT_IM2COL_BY_RANK("cp.reduce.async.bulk.tensor", OP ".im2col_no_offs.bulk_group", "", ) }
  TMAKIT_BY_RED_OP(TMAKIT_EMIT_OP)
#undef TMAKIT_EMIT_OP
}
template <ptx::dot_op Op, int N, TensorMapArg M>
__device__ inline void reduce_im2col(ptx::op_t<Op>, const M& m, const int32_t (&c)[N], const void* src,
                                     uint64_t policy) {
  const detail::Coords5 k = detail::pad5(c);
#define TMAKIT_EMIT_OP(OP)                                                                                        \
  { TMAKIT_IM2COL_BY_RANK("cp.reduce.async.bulk.tensor", OP ".im2col_no_offs.bulk_group.L2::cache_hint", ", %7", \
                          , "l"(policy)) }
  TMAKIT_BY_RED_OP(TMAKIT_EMIT_OP)
#undef TMAKIT_EMIT_OP
}
#undef TMAKIT_BY_RED_OP
#undef TMAKIT_IM2COL_BY_RANK
#undef TMAKIT_IM2COL_WRITE

// ---- tensor prefetch (L2 hint, no completion, §2.7). Inline PTX: not in CCCL ----

template <int N, TensorMapArg M>
__device__ inline void prefetch_tile(const M& m, const int32_t (&c)[N]) {
#define TMAKIT_EMIT(DIM, C)                                                                              \
  asm volatile("cp.async.bulk.prefetch.tensor" DIM ".L2.global.tile [%5, " C "];" ::TMAKIT_COORDS,       \
               "l"(map_ptr(m)) : "memory");
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}
template <int N, TensorMapArg M>
__device__ inline void prefetch_tile(const M& m, const int32_t (&c)[N], uint64_t policy) {
#define TMAKIT_EMIT(DIM, C)                                                                                   \
  asm volatile("cp.async.bulk.prefetch.tensor" DIM ".L2.global.tile.L2::cache_hint [%5, " C "], %6;"          \
               ::TMAKIT_COORDS, "l"(map_ptr(m)), "l"(policy) : "memory");
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
}

}  // namespace tmakit::device

#include "tmakit/device/barrier_copy.cuh"
#include "tmakit/device/sm100.cuh"

#undef TMAKIT_C1
#undef TMAKIT_C2
#undef TMAKIT_C3
#undef TMAKIT_C4
#undef TMAKIT_C5
#undef TMAKIT_COORDS
#undef TMAKIT_BY_RANK
