// Typed wrappers for the bulk-copy engine (§2, §4, §6, §7, §9). Coordinates are
// `const int32_t (&c)[N]` with N = the map's rank, dimension 0 first, as in PTX.
// The map is a MapHandle or a CUtensorMap in .param/.const/.global memory.
// The functions are generated from the table of forms, one per form, rank and
// variant (generated/tensor.cuh, generated/bulk.cuh, generated/sm100.cuh); CCCL's
// cuda::ptx emits every form it has; inline PTX covers what CUDA 13.0's CCCL lacks
// (docs/device-library.md, "Inline PTX"): `.L2::cache_hint` on tensor and bulk
// copies, im2col loads, .im2col_no_offs stores and reductions, tensor and bulk
// prefetch. Every function whose last parameter is `policy` is the
// `.L2::cache_hint` variant of the one without (a 64-bit policy such as
// kEvictFirst; a hint only, H16).
// Rules the hardware enforces at run time are the caller's: tensor smem
// operands 128-byte aligned (H15), c[0] × elemBytes a multiple of 16 (H9),
// non-negative store/reduce coordinates (H14), bulk sizes multiples of 16 (§7).
//
// Tensor loads: load_tile (.shared::cta), load_tile_cluster, load_tile_multicast;
// load_im2col{,_cluster,_multicast} (offsets = im2colInfo, N - 2 of them).
// Stores and reductions (op: cuda::ptx::op_add ... op_xor_op; the type is the
// map's, §6.1; INT64 maps fault on and/or/xor, H7): store_tile, reduce_tile,
// store_im2col, reduce_im2col (.im2col_no_offs). Prefetch: prefetch_tile,
// prefetch_im2col. Precede a store with fence_proxy_async_shared() when its
// source was written by ordinary stores (§9).
#pragma once
#include <cstdint>

#include "tmakit/device/barrier_copy.cuh"
#include "tmakit/device/bulk.cuh"
#include "tmakit/device/generated/tensor.cuh"
#include "tmakit/device/map.cuh"
#include "tmakit/device/mbarrier.cuh"
#include "tmakit/device/sm100.cuh"

namespace tmakit::device {

// The older name of the hinted .shared::cluster load (record_vectors' "form 2").
template <int N, TensorMapArg M>
__device__ inline void load_tile_hint(void* dst, const M& m, const int32_t (&c)[N], uint64_t* bar, uint64_t policy) {
  load_tile_cluster(dst, m, c, bar, policy);
}
// The older name of the hinted store.
template <int N, TensorMapArg M>
__device__ inline void store_tile_hint(const M& m, const int32_t (&c)[N], const void* src, uint64_t policy) {
  store_tile(m, c, src, policy);
}

}  // namespace tmakit::device
