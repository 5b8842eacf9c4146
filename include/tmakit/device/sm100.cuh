// The sm_100-only forms of the bulk-copy engine (§11): .tile::gather4 loads and
// prefetch, .tile::scatter4 stores, .cta_group::1/::2 tensor loads, .cp_mask bulk
// stores, .im2col::w / .im2col::w::128 loads and prefetch. Included by copy.cuh
// (it uses copy.cuh's operand macros); include tmakit/device/tma.cuh.
//
// Each function compiles only where the target can run its form (the targets of
// the forms table, src/spec/forms_table.cpp):
//   TMAKIT_DEVICE_SM100         sm_100 or higher: gather4 / im2col::w into
//                               .shared::cta, .cp_mask
//   TMAKIT_DEVICE_SM100_FAMILY  sm_100a / sm_100f (and sm_103, sm_110 a/f): the rest
// Used in a device pass for any other target, it stops the build with
//   "tmakit: .tile::gather4 needs sm_100 or higher (compiling for sm_90a)".
// Guard multi-target code with `#if TMAKIT_DEVICE_SM100_FAMILY`.
//
// CCCL 13.0 has gather4 into .shared::cta and .cp_mask, and those go through it.
// Its gather4 into .shared::cluster, scatter4 and .cta_group wrappers compile
// only under __CUDA_ARCH_FEAT_SM100_ALL (sm_100a: an sm_100f build fails in
// ptxas with "Unresolved extern function"), it has no non-multicast gather4 into
// .shared::cluster, and no im2col or prefetch forms: inline PTX for those.
#pragma once
#ifndef TMAKIT_BY_RANK
#error "include tmakit/device/copy.cuh (or tma.cuh), which includes this header"
#endif
#include <cuda/ptx>

#include <cstdint>

#include "tmakit/device/map.cuh"
#include "tmakit/device/mbarrier.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
#define TMAKIT_DEVICE_SM100 1
#else
#define TMAKIT_DEVICE_SM100 0
#endif
#if defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && __CUDA_ARCH_FAMILY_SPECIFIC__ >= 1000 && \
    __CUDA_ARCH_FAMILY_SPECIFIC__ < 1200
#define TMAKIT_DEVICE_SM100_FAMILY 1
#else
#define TMAKIT_DEVICE_SM100_FAMILY 0
#endif

// The target of this device pass as nvcc names it, for the messages.
#if defined(__CUDA_ARCH_SPECIFIC__)
#define TMAKIT_TARGET_SUFFIX "a"
#elif defined(__CUDA_ARCH_FAMILY_SPECIFIC__)
#define TMAKIT_TARGET_SUFFIX "f"
#else
#define TMAKIT_TARGET_SUFFIX ""
#endif
#define TMAKIT_STR2(x) #x
#define TMAKIT_STR(x) TMAKIT_STR2(x)
#if !defined(__CUDA_ARCH__)
#define TMAKIT_TARGET_NAME "the host"
#elif __CUDA_ARCH__ == 750
#define TMAKIT_TARGET_NAME "sm_75" TMAKIT_TARGET_SUFFIX
#elif __CUDA_ARCH__ == 800
#define TMAKIT_TARGET_NAME "sm_80" TMAKIT_TARGET_SUFFIX
#elif __CUDA_ARCH__ == 860
#define TMAKIT_TARGET_NAME "sm_86" TMAKIT_TARGET_SUFFIX
#elif __CUDA_ARCH__ == 870
#define TMAKIT_TARGET_NAME "sm_87" TMAKIT_TARGET_SUFFIX
#elif __CUDA_ARCH__ == 890
#define TMAKIT_TARGET_NAME "sm_89" TMAKIT_TARGET_SUFFIX
#elif __CUDA_ARCH__ == 900
#define TMAKIT_TARGET_NAME "sm_90" TMAKIT_TARGET_SUFFIX
#elif __CUDA_ARCH__ == 1000
#define TMAKIT_TARGET_NAME "sm_100" TMAKIT_TARGET_SUFFIX
#elif __CUDA_ARCH__ == 1030
#define TMAKIT_TARGET_NAME "sm_103" TMAKIT_TARGET_SUFFIX
#elif __CUDA_ARCH__ == 1100
#define TMAKIT_TARGET_NAME "sm_110" TMAKIT_TARGET_SUFFIX
#elif __CUDA_ARCH__ == 1200
#define TMAKIT_TARGET_NAME "sm_120" TMAKIT_TARGET_SUFFIX
#elif __CUDA_ARCH__ == 1210
#define TMAKIT_TARGET_NAME "sm_121" TMAKIT_TARGET_SUFFIX
#else
#define TMAKIT_TARGET_NAME "__CUDA_ARCH__ " TMAKIT_STR(__CUDA_ARCH__) TMAKIT_TARGET_SUFFIX
#endif

// Body of an sm_100 wrapper: the form where GATE holds; elsewhere, in a device
// pass only, a static_assert on the template parameter D (so it fires only when
// the wrapper is instantiated) naming the form and both targets.
#define TMAKIT_NEEDS_SM100(FORM) "tmakit: " FORM " needs sm_100 or higher (compiling for " TMAKIT_TARGET_NAME ")"
#define TMAKIT_NEEDS_SM100_FAMILY(FORM) \
  "tmakit: " FORM " needs sm_100a or sm_100f (compiling for " TMAKIT_TARGET_NAME ")"
#if defined(__CUDA_ARCH__)
#define TMAKIT_SM100_ELSE(D, MESSAGE) static_assert(detail::dependent_false<D>, MESSAGE);
#else
#define TMAKIT_SM100_ELSE(D, MESSAGE)
#endif

namespace tmakit::device {

// ---- .tile::gather4 (2-D maps: c = {x0, y0, y1, y2, y3}: four rows y0..y3 of one box width, §11) ----

// cp.async.bulk.tensor.2d.shared::cta.global.tile::gather4.mbarrier::complete_tx::bytes (CCCL)
template <TensorMapArg M>
__device__ inline void load_tile_gather4(void* dst, const M& m, const int32_t (&c)[5], uint64_t* bar) {
#if TMAKIT_DEVICE_SM100
  ptx::cp_async_bulk_tensor_tile_gather4(ptx::space_shared, ptx::space_global, dst, map_ptr(m), c, bar);
#else
  TMAKIT_SM100_ELSE(M, TMAKIT_NEEDS_SM100(".tile::gather4"))
#endif
}

// ... .shared::cluster.global.tile::gather4 ...: dst and bar in any CTA of the cluster.
template <TensorMapArg M>
__device__ inline void load_tile_gather4_cluster(void* dst, const M& m, const int32_t (&c)[5], uint64_t* bar) {
#if TMAKIT_DEVICE_SM100_FAMILY
  const detail::Coords5 k = detail::pad5(c);
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes"
               " [%5], [%6, " TMAKIT_C5 "], [%7];" ::TMAKIT_COORDS, "r"(smem_addr(dst)), "l"(map_ptr(m)),
               "r"(smem_addr(bar)) : "memory");
#else
  TMAKIT_SM100_ELSE(M, TMAKIT_NEEDS_SM100_FAMILY(".tile::gather4 into .shared::cluster"))
#endif
}

// ... .multicast::cluster: the four rows into every CTA of cta_mask (§10.1).
template <TensorMapArg M>
__device__ inline void load_tile_gather4_multicast(void* dst, const M& m, const int32_t (&c)[5], uint64_t* bar,
                                                   uint16_t cta_mask) {
#if TMAKIT_DEVICE_SM100_FAMILY
  const detail::Coords5 k = detail::pad5(c);
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%5], [%6, " TMAKIT_C5 "], [%7], %8;" ::TMAKIT_COORDS, "r"(smem_addr(dst)),
               "l"(map_ptr(m)), "r"(smem_addr(bar)), "h"(cta_mask) : "memory");
#else
  TMAKIT_SM100_ELSE(M, TMAKIT_NEEDS_SM100_FAMILY(".tile::gather4 .multicast::cluster"))
#endif
}

// cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4
template <TensorMapArg M>
__device__ inline void prefetch_tile_gather4(const M& m, const int32_t (&c)[5]) {
#if TMAKIT_DEVICE_SM100_FAMILY
  const detail::Coords5 k = detail::pad5(c);
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4 [%5, " TMAKIT_C5 "];" ::TMAKIT_COORDS,
               "l"(map_ptr(m)) : "memory");
#else
  TMAKIT_SM100_ELSE(M, TMAKIT_NEEDS_SM100_FAMILY(".tile::gather4 prefetch"))
#endif
}

// cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group: four rows
// of src to rows y0..y3 at column x0.
template <TensorMapArg M>
__device__ inline void store_tile_scatter4(const M& m, const int32_t (&c)[5], const void* src) {
#if TMAKIT_DEVICE_SM100_FAMILY
  const detail::Coords5 k = detail::pad5(c);
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile::scatter4.bulk_group [%5, " TMAKIT_C5 "], [%6];"
               ::TMAKIT_COORDS, "l"(map_ptr(m)), "r"(smem_addr(src)) : "memory");
#else
  TMAKIT_SM100_ELSE(M, TMAKIT_NEEDS_SM100_FAMILY(".tile::scatter4"))
#endif
}

// ---- .cta_group::G (G = 1 or 2): the barrier may be in the peer CTA of the pair ----

// cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::G
template <int G, int N, TensorMapArg M>
__device__ inline void load_tile_cta_group(void* dst, const M& m, const int32_t (&c)[N], uint64_t* bar) {
  static_assert(G == 1 || G == 2, ".cta_group::1 or .cta_group::2");
#if TMAKIT_DEVICE_SM100_FAMILY
#define TMAKIT_EMIT(DIM, C)                                                                                 \
  if constexpr (G == 1)                                                                                     \
    asm volatile("cp.async.bulk.tensor" DIM ".shared::cluster.global.tile.mbarrier::complete_tx::bytes"     \
                 ".cta_group::1 [%5], [%6, " C "], [%7];" ::TMAKIT_COORDS, "r"(smem_addr(dst)),             \
                 "l"(map_ptr(m)), "r"(smem_addr(bar)) : "memory");                                          \
  else                                                                                                      \
    asm volatile("cp.async.bulk.tensor" DIM ".shared::cluster.global.tile.mbarrier::complete_tx::bytes"     \
                 ".cta_group::2 [%5], [%6, " C "], [%7];" ::TMAKIT_COORDS, "r"(smem_addr(dst)),             \
                 "l"(map_ptr(m)), "r"(smem_addr(bar)) : "memory");
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
#else
  TMAKIT_SM100_ELSE(M, TMAKIT_NEEDS_SM100_FAMILY(".cta_group"))
#endif
}

// ... .tile::gather4 ... .cta_group::G
template <int G, TensorMapArg M>
__device__ inline void load_tile_gather4_cta_group(void* dst, const M& m, const int32_t (&c)[5], uint64_t* bar) {
  static_assert(G == 1 || G == 2, ".cta_group::1 or .cta_group::2");
#if TMAKIT_DEVICE_SM100_FAMILY
  const detail::Coords5 k = detail::pad5(c);
  if constexpr (G == 1)
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes"
                 ".cta_group::1 [%5], [%6, " TMAKIT_C5 "], [%7];" ::TMAKIT_COORDS, "r"(smem_addr(dst)),
                 "l"(map_ptr(m)), "r"(smem_addr(bar)) : "memory");
  else
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes"
                 ".cta_group::2 [%5], [%6, " TMAKIT_C5 "], [%7];" ::TMAKIT_COORDS, "r"(smem_addr(dst)),
                 "l"(map_ptr(m)), "r"(smem_addr(bar)) : "memory");
#else
  TMAKIT_SM100_ELSE(M, TMAKIT_NEEDS_SM100_FAMILY(".cta_group"))
#endif
}

// ---- .cp_mask: bulk store of the bytes whose bit is set in byte_mask (bit i: byte i of each 16) ----

// cp.async.bulk.global.shared::cta.bulk_group.cp_mask (CCCL)
template <class D = void>
__device__ inline void bulk_store_masked(void* dst, const void* src, uint32_t size, uint16_t byte_mask) {
#if TMAKIT_DEVICE_SM100
  ptx::cp_async_bulk_cp_mask(ptx::space_global, ptx::space_shared, dst, src, size, byte_mask);
#else
  TMAKIT_SM100_ELSE(D, TMAKIT_NEEDS_SM100(".cp_mask"))
#endif
}

// ---- .im2col::w / .im2col::w::128 (§4.4): c = {c, w, (h), (d), n}; im2colInfo {wHalo, wOffset} ----

#define TMAKIT_IM2COL_W_LOAD(MODE, DIM, C)                                                                   \
  asm volatile("cp.async.bulk.tensor" DIM ".shared::cta.global" MODE ".mbarrier::complete_tx::bytes"         \
               " [%5], [%6, " C "], [%7], {%8, %9};" ::TMAKIT_COORDS, "r"(smem_addr(dst)), "l"(map_ptr(m)),  \
               "r"(smem_addr(bar)), "h"(w_halo), "h"(w_offset) : "memory");
#define TMAKIT_IM2COL_W_PREFETCH(MODE, DIM, C)                                                        \
  asm volatile("cp.async.bulk.prefetch.tensor" DIM ".L2.global" MODE " [%5, " C "], {%6, %7};"         \
               ::TMAKIT_COORDS, "l"(map_ptr(m)), "h"(w_halo), "h"(w_offset) : "memory");

// cp.async.bulk.tensor.Nd.shared::cta.global.im2col::w.mbarrier::complete_tx::bytes
template <int N, TensorMapArg M>
__device__ inline void load_im2col_w(void* dst, const M& m, const int32_t (&c)[N], uint16_t w_halo, uint16_t w_offset,
                                     uint64_t* bar) {
  static_assert(N >= 3 && N <= 5, "im2col maps have rank 3..5");
#if TMAKIT_DEVICE_SM100
#define TMAKIT_EMIT(DIM, C) TMAKIT_IM2COL_W_LOAD(".im2col::w", DIM, C)
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
#else
  TMAKIT_SM100_ELSE(M, TMAKIT_NEEDS_SM100(".im2col::w"))
#endif
}

// ... .im2col::w::128 (128 pixels per load)
template <int N, TensorMapArg M>
__device__ inline void load_im2col_w128(void* dst, const M& m, const int32_t (&c)[N], uint16_t w_halo,
                                        uint16_t w_offset, uint64_t* bar) {
  static_assert(N >= 3 && N <= 5, "im2col maps have rank 3..5");
#if TMAKIT_DEVICE_SM100_FAMILY
#define TMAKIT_EMIT(DIM, C) TMAKIT_IM2COL_W_LOAD(".im2col::w::128", DIM, C)
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
#else
  TMAKIT_SM100_ELSE(M, TMAKIT_NEEDS_SM100_FAMILY(".im2col::w::128"))
#endif
}

// cp.async.bulk.prefetch.tensor.Nd.L2.global.im2col::w and ::w::128
template <int N, TensorMapArg M>
__device__ inline void prefetch_im2col_w(const M& m, const int32_t (&c)[N], uint16_t w_halo, uint16_t w_offset) {
  static_assert(N >= 3 && N <= 5, "im2col maps have rank 3..5");
#if TMAKIT_DEVICE_SM100_FAMILY
#define TMAKIT_EMIT(DIM, C) TMAKIT_IM2COL_W_PREFETCH(".im2col::w", DIM, C)
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
#else
  TMAKIT_SM100_ELSE(M, TMAKIT_NEEDS_SM100_FAMILY(".im2col::w prefetch"))
#endif
}
template <int N, TensorMapArg M>
__device__ inline void prefetch_im2col_w128(const M& m, const int32_t (&c)[N], uint16_t w_halo, uint16_t w_offset) {
  static_assert(N >= 3 && N <= 5, "im2col maps have rank 3..5");
#if TMAKIT_DEVICE_SM100_FAMILY
#define TMAKIT_EMIT(DIM, C) TMAKIT_IM2COL_W_PREFETCH(".im2col::w::128", DIM, C)
  TMAKIT_BY_RANK(TMAKIT_EMIT)
#undef TMAKIT_EMIT
#else
  TMAKIT_SM100_ELSE(M, TMAKIT_NEEDS_SM100_FAMILY(".im2col::w::128 prefetch"))
#endif
}

#undef TMAKIT_IM2COL_W_LOAD
#undef TMAKIT_IM2COL_W_PREFETCH

}  // namespace tmakit::device
