// The relay kernels of the suite (copy 2-D / 1-D, split-K reduce): one thread per
// CTA runs tmakit::device::Relay (include/tmakit/device/pipeline.cuh) over the
// items this CTA owns; either a persistent grid of ctas × SMs CTAs or a
// non-persistent grid of items / per_cta CTAs (the faster one on the H100).
#pragma once
#include "common.cuh"

namespace bench {

enum class RelayOp : int { copy2d, copy1d, reduce3d };

struct RelayArgs {
  uint32_t tiles_x = 1, tiles_y = 1;  // tile grid of the 2-D tensor (copy2d, reduce3d)
  uint32_t parts = 1;                 // reduce3d: K partial tensors (dimension 2 of `in`)
  uint32_t items = 0;                 // total items (tiles × parts, or 1-D chunks)
  uint32_t bx = 0, by = 0;            // box
  uint32_t chunk = 0;                 // copy1d: bytes per item
  uint32_t slot_bytes = 0;            // shared bytes per stage (1024-aligned)
  int hint = 0;                       // 0 none, 1 evict_first loads, 2 evict_first loads + stores
  int order = 0;                      // 0: item = cta + k × grid; 1: contiguous range per CTA
  const uint8_t* src = nullptr;       // copy1d
  uint8_t* dst = nullptr;
  uint32_t threads = 32;              // threads a CTA (only thread 0 works): more ones, fewer CTAs per SM
};

__device__ inline uint8_t* align_1k(uint8_t* p) {
  return p + ((1024 - (dev::smem_addr(p) & 1023)) & 1023);
}

// The items of this CTA: order 0 = blockIdx.x + k × gridDim.x (the grid sweeps
// the tensor together); order 1 = a contiguous range (a non-persistent grid of
// items / per-CTA CTAs is order 1 with few items each).
__device__ inline void cta_items(uint32_t items, int order, uint32_t& first, uint32_t& n, uint32_t& step) {
  if (order == 0) {
    first = blockIdx.x;
    step = gridDim.x;
    n = items > first ? (items - first + step - 1) / step : 0;
  } else {
    first = uint32_t(uint64_t(items) * blockIdx.x / gridDim.x);
    n = uint32_t(uint64_t(items) * (blockIdx.x + 1) / gridDim.x) - first;
    step = 1;
  }
}

template <int Stages, int Lag, RelayOp Op>
__global__ void __launch_bounds__(256) relay_kernel(const __grid_constant__ dev::MapHandle in,
                                                   const __grid_constant__ dev::MapHandle out, RelayArgs a) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ dev::Relay<Stages, Lag> relay;
  if (threadIdx.x != 0) return;
  uint8_t* slots = align_1k(smem_raw);
  relay.init();
  uint32_t first, n, step;
  cta_items(a.items, a.order, first, n, step);
  const uint64_t pol = dev::kEvictFirst;
  auto slot = [&](uint32_t s) { return slots + size_t(s) * a.slot_bytes; };
  if constexpr (Op == RelayOp::copy1d) {
    relay.run(
        n, a.chunk,
        [&](uint32_t k, uint32_t s, uint64_t* bar) {
          dev::bulk_load(slot(s), a.src + size_t(first + k * step) * a.chunk, a.chunk, bar);
        },
        [&](uint32_t k, uint32_t s) {
          uint8_t* d = a.dst + size_t(first + k * step) * a.chunk;
          if (a.hint >= 2) dev::bulk_store_hint(d, slot(s), a.chunk, pol);
          else dev::bulk_store(d, slot(s), a.chunk);
        });
  } else {
    // copy2d: item = tile; reduce3d: item = tile × parts + part (the parts of one
    // tile follow each other, so the output tile stays in L2 between its K adds).
    const uint32_t parts = Op == RelayOp::reduce3d ? a.parts : 1;
    auto tile_xy = [&](uint32_t item, int32_t& x, int32_t& y) {
      const uint32_t t = item / parts;
      x = int32_t((t % a.tiles_x) * a.bx);
      y = int32_t((t / a.tiles_x) * a.by);
    };
    relay.run(
        n, in, 1,
        [&](uint32_t k, uint32_t s, uint64_t* bar) {
          const uint32_t item = first + k * step;
          int32_t x, y;
          tile_xy(item, x, y);
          if constexpr (Op == RelayOp::reduce3d) {
            const int32_t c[3] = {x, y, int32_t(item % parts)};
            if (a.hint >= 1) dev::load_tile_hint(slot(s), in, c, bar, pol);
            else dev::load_tile(slot(s), in, c, bar);
          } else {
            const int32_t c[2] = {x, y};
            if (a.hint >= 1) dev::load_tile_hint(slot(s), in, c, bar, pol);
            else dev::load_tile(slot(s), in, c, bar);
          }
        },
        [&](uint32_t k, uint32_t s) {
          int32_t x, y;
          tile_xy(first + k * step, x, y);
          const int32_t c[2] = {x, y};
          if constexpr (Op == RelayOp::reduce3d) dev::reduce_tile(cuda::ptx::op_add, out, c, slot(s));
          else if (a.hint >= 2) dev::store_tile_hint(out, c, slot(s), pol);
          else dev::store_tile(out, c, slot(s));
        });
  }
}

// Launches relay_kernel<S, L, Op> for one of the compiled (S, L) pairs: a
// persistent grid of ctas × SMs CTAs, or with per_cta > 0 a grid of
// items / per_cta CTAs (order 1). Returns false when the pair is not compiled
// or fewer than `ctas` CTAs fit per SM.
template <RelayOp Op>
bool launch_relay(int stages, int lag, int ctas, int per_cta, const dev::MapHandle& in, const dev::MapHandle& out,
                  RelayArgs a, int sms, std::function<void()>& launch, std::string& why);

}  // namespace bench
