// The kernel's bulk-copy steps: each Code and flag set to one device-library call, chosen
// by dimension, reduction op and type (tensor and bulk copies, reductions, prefetch, groups).
// Part of the GPU engine's kernel (engine_kernel.cu, docs/gpu-engine.md): included there only,
// into the one translation unit of the kernel.
#pragma once
#include "engine_kernel_common.cuh"

namespace tmakit::gpu::detail {
namespace {

// Calls f(c) with the step's coordinates as `const int32_t (&)[dim]`.
template <class F>
__device__ void by_dim(const Step& s, F&& f) {
  switch (s.dim) {
    case 1: { const int32_t c[1] = {s.c[0]}; f(c); break; }
    case 2: { const int32_t c[2] = {s.c[0], s.c[1]}; f(c); break; }
    case 3: { const int32_t c[3] = {s.c[0], s.c[1], s.c[2]}; f(c); break; }
    case 4: { const int32_t c[4] = {s.c[0], s.c[1], s.c[2], s.c[3]}; f(c); break; }
    default: { const int32_t c[5] = {s.c[0], s.c[1], s.c[2], s.c[3], s.c[4]}; f(c); break; }
  }
}
// im2col (dim 3..5, which the PTX front end enforces): f(c, offsets) with the
// coordinates as `const int32_t (&)[dim]` and the im2colInfo as `const uint16_t (&)[dim - 2]`.
template <class F>
__device__ void by_dim_im2col(const Step& s, F&& f) {
  switch (s.dim) {
    case 3: { const int32_t c[3] = {s.c[0], s.c[1], s.c[2]}; const uint16_t o[1] = {s.off[0]}; f(c, o); break; }
    case 4: { const int32_t c[4] = {s.c[0], s.c[1], s.c[2], s.c[3]}; const uint16_t o[2] = {s.off[0], s.off[1]}; f(c, o); break; }
    default: {
      const int32_t c[5] = {s.c[0], s.c[1], s.c[2], s.c[3], s.c[4]};
      const uint16_t o[3] = {s.off[0], s.off[1], s.off[2]};
      f(c, o);
      break;
    }
  }
}
// Calls f(op) with s.red in spec::RedOp order: add min max inc dec and or xor (§6.1).
template <class F>
__device__ void by_red_op(uint8_t red, F&& f) {
  switch (red) {
    case 0: f(ptx::op_add); break;
    case 1: f(ptx::op_min); break;
    case 2: f(ptx::op_max); break;
    case 3: f(ptx::op_inc); break;
    case 4: f(ptx::op_dec); break;
    case 5: f(ptx::op_and_op); break;
    case 6: f(ptx::op_or_op); break;
    case 7: f(ptx::op_xor_op); break;
  }
}

// ---- tensor copies ----

__device__ void im2col_load(const Step& s, const CUtensorMap& map, void* dst, uint64_t* bar) {
  const bool hint = s.flags & kHint;
  by_dim_im2col(s, [&](const auto& c, const auto& off) {
    if (s.code == kTensorLoadCta) {
      if (hint) dev::load_im2col(dst, map, c, off, bar, s.policy);
      else dev::load_im2col(dst, map, c, off, bar);
    } else if (s.flags & kMulticast) {
      if (hint) dev::load_im2col_multicast(dst, map, c, off, bar, s.mask, s.policy);
      else dev::load_im2col_multicast(dst, map, c, off, bar, s.mask);
    } else {
      if (hint) dev::load_im2col_cluster(dst, map, c, off, bar, s.policy);
      else dev::load_im2col_cluster(dst, map, c, off, bar);
    }
  });
}

__device__ void tensor_load(const Step& s, const CUtensorMap& map, void* dst, uint64_t* bar) {
  if (s.flags & kIm2col) return im2col_load(s, map, dst, bar);
  const bool hint = s.flags & kHint;
  by_dim(s, [&](const auto& c) {
    if (s.code == kTensorLoadCta) {
      if (hint) dev::load_tile(dst, map, c, bar, s.policy);
      else dev::load_tile(dst, map, c, bar);
    } else if (s.flags & kMulticast) {
      if (hint) dev::load_tile_multicast(dst, map, c, bar, s.mask, s.policy);
      else dev::load_tile_multicast(dst, map, c, bar, s.mask);
    } else {
      if (hint) dev::load_tile_cluster(dst, map, c, bar, s.policy);
      else dev::load_tile_cluster(dst, map, c, bar);
    }
  });
}

__device__ void tensor_store(const Step& s, const CUtensorMap& map, const void* src) {
  if (s.flags & kIm2col)  // .im2col_no_offs (§4.3)
    return by_dim_im2col(s, [&](const auto& c, const auto&) {
      if (s.flags & kHint) dev::store_im2col(map, c, src, s.policy);
      else dev::store_im2col(map, c, src);
    });
  by_dim(s, [&](const auto& c) {
    if (s.flags & kHint) dev::store_tile(map, c, src, s.policy);
    else dev::store_tile(map, c, src);
  });
}

// The element type is the map's (§6.1).
__device__ void tensor_reduce(const Step& s, const CUtensorMap& map, const void* src) {
  if (s.flags & kIm2col)  // .im2col_no_offs (§4.3, §6.1)
    return by_red_op(s.red, [&](auto op) {
      by_dim_im2col(s, [&](const auto& c, const auto&) {
        if (s.flags & kHint) dev::reduce_im2col(op, map, c, src, s.policy);
        else dev::reduce_im2col(op, map, c, src);
      });
    });
  by_red_op(s.red, [&](auto op) {
    by_dim(s, [&](const auto& c) {
      if (s.flags & kHint) dev::reduce_tile(op, map, c, src, s.policy);
      else dev::reduce_tile(op, map, c, src);
    });
  });
}

__device__ void tensor_prefetch(const Step& s, const CUtensorMap& map) {
  if (s.flags & kIm2col)
    return by_dim_im2col(s, [&](const auto& c, const auto& off) {
      if (s.flags & kHint) dev::prefetch_im2col(map, c, off, s.policy);
      else dev::prefetch_im2col(map, c, off);
    });
  by_dim(s, [&](const auto& c) {
    if (s.flags & kHint) dev::prefetch_tile(map, c, s.policy);
    else dev::prefetch_tile(map, c);
  });
}

// ---- non-tensor bulk copies and reductions (§7, §6.2) ----

__device__ void bulk_load(const Step& s, void* dst, uint64_t* bar) {
  const void* src = reinterpret_cast<const void*>(s.gaddr);
  const bool hint = s.flags & kHint;
  if (s.code == kBulkLoadCta) {
    if (hint) dev::bulk_load(dst, src, s.size, bar, s.policy);
    else dev::bulk_load(dst, src, s.size, bar);
  } else if (s.flags & kMulticast) {
    if (hint) dev::bulk_load_multicast(dst, src, s.size, bar, s.mask, s.policy);
    else dev::bulk_load_multicast(dst, src, s.size, bar, s.mask);
  } else {
    if (hint) dev::bulk_load_cluster(dst, src, s.size, bar, s.policy);
    else dev::bulk_load_cluster(dst, src, s.size, bar);
  }
}

__device__ void bulk_store(const Step& s, const void* src) {
  void* dst = reinterpret_cast<void*>(s.gaddr);
  if (s.flags & kHint) dev::bulk_store(dst, src, s.size, s.policy);
  else dev::bulk_store(dst, src, s.size);
}

__device__ void bulk_reduce_global(const Step& s, const void* src) {
  const bool hint = s.flags & kHint;
#define TK_BRED(name, OP, TYPE, TAG, CTYPE)                                                 \
  case kG_##name: {                                                                         \
    auto* d = reinterpret_cast<CTYPE*>(s.gaddr);                                            \
    auto* from = static_cast<const CTYPE*>(src);                                            \
    if (hint) dev::bulk_reduce(ptx::TAG, d, from, s.size, s.policy);                        \
    else dev::bulk_reduce(ptx::TAG, d, from, s.size);                                       \
    break;                                                                                  \
  }
  switch (s.red) { TMAKIT_GPU_BULK_RED_GLOBAL(TK_BRED) }
#undef TK_BRED
}

__device__ void bulk_reduce_cluster(const Step& s, void* dst, const void* src, uint64_t* bar) {
#define TK_BRED(name, OP, TYPE, TAG, CTYPE)                                                                     \
  case kC_##name:                                                                                               \
    dev::bulk_reduce_cluster(ptx::TAG, static_cast<CTYPE*>(dst), static_cast<const CTYPE*>(src), s.size, bar); \
    break;
  switch (s.red) { TMAKIT_GPU_BULK_RED_CLUSTER(TK_BRED) }
#undef TK_BRED
}

template <int N>
__device__ __forceinline__ void wait_group_n(bool read) {
  if (read) dev::wait_group_read<N>();
  else dev::wait_group<N>();
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

}  // namespace
}  // namespace tmakit::gpu::detail
