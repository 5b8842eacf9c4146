// The tiled walk as the ISA describes it, one element and one byte at a time (§2.1-§2.3, §3):
// the plain reference (model::reference in tile.hpp). The model's engine runs the fast walk
// (src/model/fast/), which a property test keeps equal to this one on random maps
// (tests/model/test_tile_fast.cpp); this file has no runs, no prefetches and no fast paths.
#include <cstring>

#include "tile_plan.hpp"
#include "tmakit/model/numerics.hpp"
#include "tmakit/model/packed.hpp"
#include "tmakit/model/reduce.hpp"
#include "tmakit/model/tile.hpp"

namespace tmakit::model::reference {
namespace {

using namespace tile_walk;

// One shared row r of the box: its tile indices k1..k4 (r = k1 + N1 * (k2 + N2 * ...),
// §2.1 item 5), whether those are in bounds, and the global address of g0 = 0 in it.
struct Row {
  uint64_t r;
  bool outer_in = true;
  u128 base;
};

Row row_of(const Plan& p, uint64_t r) {
  Row row{r, true, p.global_address};
  uint64_t rest = r;
  for (int i = 1; i < tensor_map::kMaxRank; ++i) {
    const uint32_t k = uint32_t(rest % p.n[i]);
    rest /= p.n[i];
    row.outer_in = row.outer_in && k >= p.in_lo[i] && k < p.in_hi[i];
    // Negative coordinates wrap modulo 2^128; in-bound rows come out right.
    row.base += u128(uint64_t(p.c[i] + int64_t(k) * p.e[i])) * p.stride[i];
  }
  return row;
}

bool in_bounds(const Plan& p, const Row& row, uint32_t k0) { return row.outer_in && k0 >= p.k_lo && k0 < p.k_hi; }

// The shared byte `b` of element k0 in row r, after the swizzle (§3).
uint32_t shared_byte(const Plan& p, uint32_t offset, uint64_t r, uint32_t k0, int b) {
  return swizzle_address(p.swz, offset + uint32_t(r * p.pitch) + k0 * uint32_t(p.eb) + uint32_t(b));
}

// The elements a store or reduction writes in one row: the in-bound ones, then (H6) the
// elements past the last in-bound one while they lie in its 16-byte global chunk and in
// memory. f(k0, host pointer of the element's global bytes).
template <class F>
void for_each_written(const Plan& p, GlobalMemory& g, const Row& row, F&& f) {
  for (uint32_t k0 = p.k_lo; k0 < p.k_hi; ++k0) {
    const u128 a = element_address(p, row.base, k0);
    uint8_t* dst = a + uint64_t(p.eb) <= u128(UINT64_MAX) ? g.find(uint64_t(a), uint64_t(p.eb)) : nullptr;
    if (!dst) global_fault(p, row.r, k0, a);
    f(k0, dst);
  }
  const u128 last_end = element_address(p, row.base, p.k_hi - 1) + uint64_t(p.eb);
  const u128 chunk_end = (last_end + 15) & ~u128(15);
  for (uint32_t k0 = p.k_hi; k0 < p.n[0]; ++k0) {
    const u128 a = element_address(p, row.base, k0);
    if (a + uint64_t(p.eb) > chunk_end) break;
    uint8_t* dst = a + uint64_t(p.eb) <= u128(UINT64_MAX) ? g.find(uint64_t(a), uint64_t(p.eb)) : nullptr;
    if (!dst) break;
    f(k0, dst);
  }
}

// Store and reduce: apply(global bytes, the element's shared bytes) for every written element.
template <class Apply>
void write_box(const Plan& p, const uint8_t* smem, uint32_t src_offset, GlobalMemory& g, Apply&& apply) {
  if (p.k_lo >= p.k_hi) return;  // no row has an in-bound element
  uint8_t element[32];           // an element, or an interleaved slice of at most 32 bytes
  for (uint64_t r = 0; r < p.rows; ++r) {
    const Row row = row_of(p, r);
    if (!row.outer_in) continue;
    for_each_written(p, g, row, [&](uint32_t k0, uint8_t* dst) {
      for (int b = 0; b < p.eb; ++b) element[b] = smem[shared_byte(p, src_offset, r, k0, b)];
      apply(dst, element);
    });
  }
}

}  // namespace

void tile_load(const TensorMap& map, std::span<const int32_t> coords, const GlobalMemory& g,
               std::span<uint8_t> cta_smem, uint32_t dst_offset) {
  if (tensor_map::is_packed(map.data_type)) return packed_load(map, coords, g, cta_smem, dst_offset);  // §2.5
  const Plan p = make_plan(map, coords, cta_smem.size(), dst_offset, "load");
  // §2.1 item 4, H4: the fill of an out-of-bound element, indexed by its row-relative byte.
  const uint8_t* fill = fill_bytes(map.oob_fill, p.eb);
  // H3: TFLOAT32 maps round their in-bound f32 elements to tf32 on load.
  const bool tf32 = map.data_type == DataType::tfloat32 || map.data_type == DataType::tfloat32_ftz;
  for (uint64_t r = 0; r < p.rows; ++r) {
    const Row row = row_of(p, r);
    for (uint32_t k0 = 0; k0 < p.n[0]; ++k0) {
      uint8_t element[32];
      if (in_bounds(p, row, k0)) {
        const u128 a = element_address(p, row.base, k0);
        const uint8_t* src = a + uint64_t(p.eb) <= u128(UINT64_MAX) ? g.find(uint64_t(a), uint64_t(p.eb)) : nullptr;
        if (!src) global_fault(p, r, k0, a);
        std::memcpy(element, src, size_t(p.eb));
        for (int b = 0; tf32 && b < p.eb; b += 4) {  // an interleaved slice holds several f32
          uint32_t bits;
          std::memcpy(&bits, element + b, 4);
          bits = tf32_round(bits);
          std::memcpy(element + b, &bits, 4);
        }
      } else {
        std::memcpy(element, fill + k0 * uint32_t(p.eb), size_t(p.eb));
      }
      for (int b = 0; b < p.eb; ++b) cta_smem[shared_byte(p, dst_offset, r, k0, b)] = element[b];
    }
  }
}

void tile_store(const TensorMap& map, std::span<const int32_t> coords, std::span<const uint8_t> cta_smem,
                uint32_t src_offset, GlobalMemory& g) {
  if (tensor_map::is_packed(map.data_type)) return packed_store(map, coords, cta_smem, src_offset, g);  // §2.5
  const Plan p = make_plan(map, coords, cta_smem.size(), src_offset, "store");
  // H3: a plain copy for every type.
  write_box(p, cta_smem.data(), src_offset, g, [&](uint8_t* dst, const uint8_t* element) {
    std::memcpy(dst, element, size_t(p.eb));
  });
}

void tile_reduce(const TensorMap& map, std::span<const int32_t> coords, spec::RedOp op,
                 std::span<const uint8_t> cta_smem, uint32_t src_offset, GlobalMemory& g) {
  const spec::RedType type = red_type_for_map(map.data_type);
  const Plan p = make_plan(map, coords, cta_smem.size(), src_offset, "reduce");
  // An interleaved slice holds several elements of the map's type.
  const uint32_t count = uint32_t(p.eb / element_size(map.data_type));
  write_box(p, cta_smem.data(), src_offset, g, [&](uint8_t* dst, const uint8_t* element) {
    reduce_elements(op, type, dst, element, count);
  });
}

}  // namespace tmakit::model::reference
