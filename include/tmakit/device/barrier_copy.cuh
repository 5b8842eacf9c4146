// The loads of copy.cuh and bulk.cuh on a cuda::barrier<thread_scope_block> (mbarrier.cuh,
// BlockBarrier): each forwards its arguments, the barrier replaced by
// cuda::device::barrier_native_handle(bar), to the raw form, so every raw overload (with or
// without cta_mask and policy) has its cuda::barrier twin. Arm the barrier with
// arrive_expect_tx(bar, map, loads, extra_bytes) / barrier_arrive_tx, or with
// cuda::device::barrier_arrive_tx itself. Included by copy.cuh (include tmakit/device/tma.cuh).
#pragma once
#include <cstdint>

#include "tmakit/device/bulk.cuh"
#include "tmakit/device/copy.cuh"
#include "tmakit/device/mbarrier.cuh"

namespace tmakit::device {

// Tensor tile loads: (dst, map, coords, bar[, cta_mask][, policy]).
#define TMAKIT_TILE_ON_BLOCK_BARRIER(NAME)                                                             \
  template <int N, TensorMapArg M, class... Rest>                                                      \
  __device__ inline void NAME(void* dst, const M& m, const int32_t (&c)[N], BlockBarrier& bar, Rest... rest) { \
    NAME(dst, m, c, native_mbar(bar), rest...);                                                        \
  }
TMAKIT_TILE_ON_BLOCK_BARRIER(load_tile)
TMAKIT_TILE_ON_BLOCK_BARRIER(load_tile_cluster)
TMAKIT_TILE_ON_BLOCK_BARRIER(load_tile_multicast)
#undef TMAKIT_TILE_ON_BLOCK_BARRIER

// The older name of the hinted .shared::cluster load.
template <int N, TensorMapArg M>
__device__ inline void load_tile_hint(void* dst, const M& m, const int32_t (&c)[N], BlockBarrier& bar,
                                      uint64_t policy) {
  load_tile_cluster(dst, m, c, native_mbar(bar), policy);
}

// im2col loads: (dst, map, coords, offsets, bar[, cta_mask][, policy]).
#define TMAKIT_IM2COL_ON_BLOCK_BARRIER(NAME)                                                                  \
  template <int N, TensorMapArg M, class... Rest>                                                             \
  __device__ inline void NAME(void* dst, const M& m, const int32_t (&c)[N], const uint16_t (&offsets)[N - 2], \
                              BlockBarrier& bar, Rest... rest) {                                              \
    NAME(dst, m, c, offsets, native_mbar(bar), rest...);                                                      \
  }
TMAKIT_IM2COL_ON_BLOCK_BARRIER(load_im2col)
TMAKIT_IM2COL_ON_BLOCK_BARRIER(load_im2col_cluster)
TMAKIT_IM2COL_ON_BLOCK_BARRIER(load_im2col_multicast)
#undef TMAKIT_IM2COL_ON_BLOCK_BARRIER

// Non-tensor bulk loads: (dst, src, size, bar[, cta_mask][, policy]).
#define TMAKIT_BULK_ON_BLOCK_BARRIER(NAME)                                                               \
  template <class... Rest>                                                                               \
  __device__ inline void NAME(void* dst, const void* src, uint32_t size, BlockBarrier& bar, Rest... rest) { \
    NAME(dst, src, size, native_mbar(bar), rest...);                                                     \
  }
TMAKIT_BULK_ON_BLOCK_BARRIER(bulk_load)
TMAKIT_BULK_ON_BLOCK_BARRIER(bulk_load_cluster)
TMAKIT_BULK_ON_BLOCK_BARRIER(bulk_load_multicast)
#undef TMAKIT_BULK_ON_BLOCK_BARRIER

}  // namespace tmakit::device
