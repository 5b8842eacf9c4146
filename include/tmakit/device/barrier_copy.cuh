// The loads of copy.cuh and bulk.cuh on a cuda::barrier<thread_scope_block> (mbarrier.cuh,
// BlockBarrier): each forwards its arguments, the barrier replaced by
// cuda::device::barrier_native_handle(bar), to the raw form, so every raw overload (with or
// without cta_mask and policy) has its cuda::barrier twin. Arm the barrier with
// arrive_expect_tx(bar, map, loads, extra_bytes) / barrier_arrive_tx, or with
// cuda::device::barrier_arrive_tx itself. Included by copy.cuh (include tmakit/device/tma.cuh).
#pragma once
#include <cstdint>

#include "tmakit/device/bulk.cuh"
#include "tmakit/device/generated/tensor.cuh"
#include "tmakit/device/mbarrier.cuh"

namespace tmakit::device {

// Tensor tile loads: (dst, map, coords, bar[, cta_mask][, policy]).
template <int N, TensorMapArg M, class... Rest>
__device__ inline void load_tile(void* dst, const M& m, const int32_t (&c)[N], BlockBarrier& bar, Rest... rest) {
  load_tile(dst, m, c, native_mbar(bar), rest...);
}
template <int N, TensorMapArg M, class... Rest>
__device__ inline void load_tile_cluster(void* dst, const M& m, const int32_t (&c)[N], BlockBarrier& bar,
                                         Rest... rest) {
  load_tile_cluster(dst, m, c, native_mbar(bar), rest...);
}
template <int N, TensorMapArg M, class... Rest>
__device__ inline void load_tile_multicast(void* dst, const M& m, const int32_t (&c)[N], BlockBarrier& bar,
                                           Rest... rest) {
  load_tile_multicast(dst, m, c, native_mbar(bar), rest...);
}

// The older name of the hinted .shared::cluster load.
template <int N, TensorMapArg M>
__device__ inline void load_tile_hint(void* dst, const M& m, const int32_t (&c)[N], BlockBarrier& bar,
                                      uint64_t policy) {
  load_tile_cluster(dst, m, c, native_mbar(bar), policy);
}

// im2col loads: (dst, map, coords, offsets, bar[, cta_mask][, policy]).
template <int N, TensorMapArg M, class... Rest>
__device__ inline void load_im2col(void* dst, const M& m, const int32_t (&c)[N], const uint16_t (&offsets)[N - 2],
                                   BlockBarrier& bar, Rest... rest) {
  load_im2col(dst, m, c, offsets, native_mbar(bar), rest...);
}
template <int N, TensorMapArg M, class... Rest>
__device__ inline void load_im2col_cluster(void* dst, const M& m, const int32_t (&c)[N],
                                           const uint16_t (&offsets)[N - 2], BlockBarrier& bar, Rest... rest) {
  load_im2col_cluster(dst, m, c, offsets, native_mbar(bar), rest...);
}
template <int N, TensorMapArg M, class... Rest>
__device__ inline void load_im2col_multicast(void* dst, const M& m, const int32_t (&c)[N],
                                             const uint16_t (&offsets)[N - 2], BlockBarrier& bar, Rest... rest) {
  load_im2col_multicast(dst, m, c, offsets, native_mbar(bar), rest...);
}

// Non-tensor bulk loads: (dst, src, size, bar[, cta_mask][, policy]).
template <class... Rest>
__device__ inline void bulk_load(void* dst, const void* src, uint32_t size, BlockBarrier& bar, Rest... rest) {
  bulk_load(dst, src, size, native_mbar(bar), rest...);
}
template <class... Rest>
__device__ inline void bulk_load_cluster(void* dst, const void* src, uint32_t size, BlockBarrier& bar, Rest... rest) {
  bulk_load_cluster(dst, src, size, native_mbar(bar), rest...);
}
template <class... Rest>
__device__ inline void bulk_load_multicast(void* dst, const void* src, uint32_t size, BlockBarrier& bar,
                                           Rest... rest) {
  bulk_load_multicast(dst, src, size, native_mbar(bar), rest...);
}

}  // namespace tmakit::device
