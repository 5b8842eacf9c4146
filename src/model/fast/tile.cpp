// The fast tiled walk, what the engine runs (§2.1-§2.3, §3): rows of the box, each split into
// its fill parts and its in-bound part; the in-bound part of a row is contiguous in global
// memory when E[0] = 1 and moves with one memcpy per swizzle granule. The plan of a box is
// tile_plan.hpp's, the walk over its rows tile_walk.hpp's. The plain reference it is kept
// equal to, element by element, is src/model/tile_reference.cpp (tests/model/test_tile_fast.cpp).
#include "tmakit/model/tile.hpp"

#include <cstring>

#include "../tile_plan.hpp"
#include "tile_walk.hpp"
#include "tmakit/model/numerics.hpp"
#include "tmakit/model/packed.hpp"
#include "tmakit/model/reduce.hpp"

namespace tmakit::model {
namespace {

using namespace tile_walk;

// Store and reduce share the element set: the in-bound elements of each row plus
// the H6 extension. apply(gdst, row, rel, len) moves shared row bytes
// [rel, rel + len) onto global bytes gdst.
template <class Apply>
void write_box(const Plan& p, uint32_t src_offset, GlobalMemory& g, Apply&& apply) {
  GlobalWindow<GlobalMemory, uint8_t*> win(g);
  const uint32_t eb = uint32_t(p.eb);
  if (p.k_lo >= p.k_hi) return;  // no row has an in-bound element
  // A box wholly in bounds has no H6 extension: its rows end inside the tensor.
  if (for_each_whole_row<true>(p, win, [&](uint64_t r, uint8_t* dst) {
        apply(dst, src_offset + uint32_t(r * p.pitch), 0, p.row_bytes);
      }))
    return;
  const RowLocator<decltype(win), true> locate(p, win);
  auto prefetch = [&](u128 base) { locate.prefetch(base); };
  for_each_row(p, locate, prefetch, [&](uint64_t r, bool in, u128 base, uint8_t* span) {
    if (!in) return;
    const uint32_t row = src_offset + uint32_t(r * p.pitch);
    // H6: the 16-byte global chunk holding the last in-bound element's bytes is
    // written whole.
    const u128 last_end = element_address(p, base, p.k_hi - 1) + eb;
    const u128 chunk_end = (last_end + 15) & ~u128(15);
    if (span) {
      // Extension elements are written only where their bytes exist (the
      // address right after an allocation's end lies in no other allocation).
      const uint32_t max_ext = std::min<uint32_t>(uint32_t((chunk_end - last_end) / eb), p.n[0] - p.k_hi);
      uint32_t ext = 0;
      if (max_ext && win.get(last_end, uint64_t(max_ext) * eb))
        ext = max_ext;
      else
        while (ext < max_ext && win.get(last_end + u128(ext) * eb, eb)) ++ext;
      apply(span, row, p.k_lo * eb, (p.k_hi - p.k_lo + ext) * eb);
      return;
    }
    // Element by element: strided dimension 0 (interleave), or a fault to name.
    for (uint32_t k0 = p.k_lo; k0 < p.k_hi; ++k0) {
      const u128 a = element_address(p, base, k0);
      uint8_t* dst = win.get(a, eb);
      if (!dst) global_fault(p, r, k0, a);
      apply(dst, row, k0 * eb, eb);
    }
    for (uint32_t k0 = p.k_hi; k0 < p.n[0]; ++k0) {
      const u128 a = element_address(p, base, k0);
      if (a + eb > chunk_end) break;
      uint8_t* dst = win.get(a, eb);
      if (!dst) break;
      apply(dst, row, k0 * eb, eb);
    }
  });
}

}  // namespace

void tile_load(const TensorMap& map, std::span<const int32_t> coords, const GlobalMemory& g,
               std::span<uint8_t> cta_smem, uint32_t dst_offset) {
  if (tensor_map::is_packed(map.data_type)) return packed_load(map, coords, g, cta_smem, dst_offset);  // §2.5
  const Plan p = make_plan(map, coords, cta_smem.size(), dst_offset, "load");
  const uint8_t* fill = fill_bytes(map.oob_fill, p.eb);
  // H3: TFLOAT32 maps round on load (FLOAT32_FTZ loads are plain copies).
  const bool tf32 = map.data_type == DataType::tfloat32 || map.data_type == DataType::tfloat32_ftz;
  const uint32_t eb = uint32_t(p.eb);
  uint8_t* smem = cta_smem.data();
  GlobalWindow<const GlobalMemory, const uint8_t*> win(g);
  if (!tf32 && for_each_whole_row<false>(p, win, [&](uint64_t r, const uint8_t* src) {
        put(p, smem, dst_offset + uint32_t(r * p.pitch), 0, src, p.row_bytes);
      }))
    return;
  const RowLocator<decltype(win), false> locate(p, win);
  auto prefetch = [&](u128 base) { locate.prefetch(base); };
  for_each_row(p, locate, prefetch, [&](uint64_t r, bool in, u128 base, const uint8_t* src) {
    const uint32_t row = dst_offset + uint32_t(r * p.pitch);
    if (!in || p.k_lo >= p.k_hi) {
      put(p, smem, row, 0, fill, p.row_bytes);
      return;
    }
    const uint32_t b_lo = p.k_lo * eb, b_hi = p.k_hi * eb;
    if (b_lo) put(p, smem, row, 0, fill, b_lo);
    if (src) {
      put(p, smem, row, b_lo, src, b_hi - b_lo);
    } else {
      for (uint32_t k0 = p.k_lo; k0 < p.k_hi; ++k0) {
        const u128 a = element_address(p, base, k0);
        const uint8_t* s = win.get(a, eb);
        if (!s) global_fault(p, r, k0, a);
        put(p, smem, row, k0 * eb, s, eb);
      }
    }
    if (b_hi < p.row_bytes) put(p, smem, row, b_hi, fill, p.row_bytes - b_hi);
    if (tf32) {  // every 4-byte element of the in-bound part (an interleaved slice holds several)
      for (uint32_t b = b_lo; b < b_hi; b += 4) {
        uint8_t* e = smem + swizzle_address(p.swz, row + b);
        uint32_t bits;
        std::memcpy(&bits, e, 4);
        bits = tf32_round(bits);
        std::memcpy(e, &bits, 4);
      }
    }
  });
}

void tile_store(const TensorMap& map, std::span<const int32_t> coords, std::span<const uint8_t> cta_smem,
                uint32_t src_offset, GlobalMemory& g) {
  if (tensor_map::is_packed(map.data_type)) return packed_store(map, coords, cta_smem, src_offset, g);  // §2.5
  const Plan p = make_plan(map, coords, cta_smem.size(), src_offset, "store");
  const uint8_t* smem = cta_smem.data();
  // H3: a plain copy for every type.
  write_box(p, src_offset, g, [&](uint8_t* dst, uint32_t row, uint32_t rel, uint32_t len) {
    take(p, smem, row, rel, dst, len);
  });
}

void tile_reduce(const TensorMap& map, std::span<const int32_t> coords, spec::RedOp op,
                 std::span<const uint8_t> cta_smem, uint32_t src_offset, GlobalMemory& g) {
  const spec::RedType type = red_type_for_map(map.data_type);
  const Plan p = make_plan(map, coords, cta_smem.size(), src_offset, "reduce");
  const uint8_t* smem = cta_smem.data();
  write_box(p, src_offset, g, [&](uint8_t* dst, uint32_t row, uint32_t rel, uint32_t len) {
    uint8_t tmp[kMaxRowBytes];
    take(p, smem, row, rel, tmp, len);
    reduce_elements(op, type, dst, tmp, len / uint32_t(element_size(map.data_type)));  // p.eb is a slice when interleaved
  });
}

}  // namespace tmakit::model
