// Instruction-time checks of a coordinate vector against its map: what the
// driver cannot see because coordinates are run-time values.
// Spec: §2.1 item 6 and H9 (inner alignment), H14 and PTX-R (store direction),
// §1.3 "Additional rules imposed per instruction" (packed types), §4.3 (im2col stores).
#include <fmt/format.h>

#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::tensor_map {
namespace {

const char* direction_name(Direction d) {
  switch (d) {
    case Direction::load: return "load";
    case Direction::store: return "store";
    case Direction::reduce: return "reduction";
    case Direction::prefetch: return "prefetch";
  }
  return "access";
}

}  // namespace

Diagnostics check_coordinates(const TensorMap& map, std::span<const int32_t> coords, Direction dir,
                              const spec::Target& /*target: every rule here holds on sm_90 and later alike*/) {
  Diagnostics d;
  if (map.rank < 1 || map.rank > kMaxRank || coords.size() != static_cast<size_t>(map.rank)) {
    d.error("coord.count", fmt::format("{} coordinates given for a map of rank {}", coords.size(), map.rank),
            "coords");
    return d;
  }
  const bool writes = dir == Direction::store || dir == Direction::reduce;
  const DataType t = map.data_type;

  // H14: a negative start coordinate on a store or reduction raises an illegal instruction.
  if (writes)
    for (size_t i = 0; i < coords.size(); ++i)
      if (coords[i] < 0)
        d.error("coord.store-negative",
                fmt::format("a {} must start at non-negative coordinates, got coords[{}] = {} (the H100 raises "
                            "an illegal instruction)",
                            direction_name(dir), i, coords[i]),
                fmt::format("coords[{}]", i));

  // §2.1 item 6, H9: loads, stores and prefetches of tiled and im2col maps die unless
  // c[0] × elemBytes ≡ 0 (mod 16): the H100 also faulted an im2col load whose channel
  // start is 8 bytes and a tile prefetch with c[0] = 3 bytes (illegal instruction,
  // tests/vectors/questions/q19_channel_misaligned, q21_prefetch_misaligned).
  // im2col_wide maps (sm_100) are unmeasured: not checked.
  if (map.encode != Encode::im2col_wide) {
    int64_t c0 = coords[0];
    if (is_packed(t)) {
      if (c0 % 128 != 0)  // PTX-R: the first coordinate of a packed type is a multiple of 128
        d.error("coord.packed-inner-align",
                fmt::format("data type {} needs the innermost coordinate to be a multiple of 128, got coords[0] = {}",
                            name(t), c0),
                "coords[0]");
    } else if (map.interleave == Interleave::none) {
      // Interleaved tiled and im2col maps count c[0] in whole 16/32-byte slices (Q26): always aligned.
      int64_t bytes = c0 * element_bytes(t);
      if (bytes % 16 != 0)
        d.error("coord.inner-align",
                fmt::format("innermost coordinate × element size = {} × {} bytes = {} bytes is not a multiple of 16 "
                            "(the H100 raises an illegal instruction)",
                            c0, element_bytes(t), bytes),
                "coords[0]");
    }
  }

  // The driver encodes extents up to 2^32 (H17), but the H100 raises an illegal instruction
  // for a load of a map with an extent above 2^31 (2^31 works, 2^31 + 16 ... 2^32 - 1 fault:
  // tests/vectors/questions/q13_dim1_*), and so for a store, a reduction and a prefetch of
  // such a map (q13x_store_*, q13x_reduce_*, q13x_prefetch_*): unlike a prefetch of huge
  // coordinates or of an unmapped tensor (Q21), this prefetch is not ignored.
  for (int i = 0; i < map.rank; ++i)
      if (map.dims[i] > (uint64_t{1} << 31))
        d.error("coord.extent-2p31",
                fmt::format("dims[{}] = {} is above 2^31: the H100 raises an illegal instruction for a {} of such a "
                            "map (the driver accepts it)",
                            i, map.dims[i], direction_name(dir)),
                fmt::format("dims[{}]", i));

  // PTX-R: no reductions on packed types; no stores of 16U4_ALIGN16B; §1.3: 16U6 with
  // 128B_ATOM_64B only for stores.
  if (dir == Direction::reduce && is_packed(t))
    d.error("coord.packed-direction", fmt::format("reductions do not support data type {}", name(t)), "data_type");
  if (dir == Direction::store && t == DataType::u4_align16b)
    d.error("coord.packed-direction", "stores do not support data type 16u4_align16b", "data_type");
  if ((dir == Direction::load || dir == Direction::prefetch) && t == DataType::u6_align16b &&
      map.swizzle == Swizzle::b128_atom_64b)
    d.error("coord.packed-direction", "data type 16u6_align16b with swizzle 128b_atom_64b serves stores only",
            "swizzle");

  // §4.3: an im2col store or reduction needs its bounding box inside the tensor.
  if (writes && map.encode == Encode::im2col)
    for (int i = 0; i + 2 < map.rank && i < 3; ++i) {
      if (map.pixel_box_lower[i] < 0)
        d.error("coord.im2col-store-box",
                fmt::format("an im2col {} needs pixel_box_lower[{}] >= 0, got {}", direction_name(dir), i,
                            map.pixel_box_lower[i]),
                fmt::format("pixel_box_lower[{}]", i));
      if (map.pixel_box_upper[i] > 0)
        d.error("coord.im2col-store-box",
                fmt::format("an im2col {} needs pixel_box_upper[{}] <= 0, got {}", direction_name(dir), i,
                            map.pixel_box_upper[i]),
                fmt::format("pixel_box_upper[{}]", i));
    }
  return d;
}

}  // namespace tmakit::tensor_map
