// .tile::gather4 / .tile::scatter4 (§5): each of the four rows is a one-row
// tiled box at (col, row_k), so the tile walk (tile.cpp) moves it; this file
// adds the map and coordinate rules and places row k at offset + k × pitch.
#include "tmakit/model/gather4.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "tmakit/model/tile.hpp"

namespace tmakit::model {
namespace {

using tensor_map::Direction;
using tensor_map::TensorMap;

// The shape rules alone (no coordinates), shared by the check and the walks.
Diagnostics map_rules(const TensorMap& m) {
  Diagnostics d;
  if (m.encode != tensor_map::Encode::tiled || m.rank != 2)
    d.error("gather4.map-rank",
            fmt::format(".tile::gather4/.tile::scatter4 need a rank-2 tiled map, got a rank-{} {} map", m.rank,
                        tensor_map::name(m.encode)),
            "rank");
  if (m.box[1] != 1)
    d.error("gather4.box-rows",
            fmt::format("box[1] = {}: a gather4/scatter4 map moves one row per box, box[1] must be 1; the "
                        "four rows come from the coordinates",
                        m.box[1]),
            "box[1]");
  if (m.interleave != tensor_map::Interleave::none)
    d.error("gather4.interleave",
            fmt::format("gather4/scatter4 maps need interleave none, got {}", tensor_map::name(m.interleave)),
            "interleave");
  return d;
}

void require_map(const TensorMap& m, const char* what) {
  for (const auto& d : map_rules(m))
    fail(d.rule, fmt::format("{}: {}", what, d.message));
}

std::array<int32_t, 2> row_coords(std::span<const int32_t> c, int k) { return {c[0], c[1 + k]}; }

}  // namespace

Diagnostics gather4_check(const TensorMap& map, std::span<const int32_t> coords, Direction dir,
                          const spec::Target& target) {
  Diagnostics d = map_rules(map);
  if (coords.size() != kGather4Coords) {
    d.error("coord.count",
            fmt::format("gather4/scatter4 take 5 coordinates {{col, row0, row1, row2, row3}}, got {}", coords.size()),
            "coords");
    return d;
  }
  if (!d.empty() || map.rank != 2) return d;
  // The column's rules (inner alignment H9, packed c[0] % 128, direction rules) are
  // those of a tiled access at (col, 0); the rows are checked one by one below.
  const std::array<int32_t, 2> probe{coords[0], 0};
  for (const auto& x : tensor_map::check_coordinates(map, probe, dir, target)) d.push_back(x);
  // H14, PTX-R: a store must start at non-negative coordinates; every row starts a box.
  if (dir == Direction::store || dir == Direction::reduce)
    for (int k = 0; k < kGather4Rows; ++k)
      if (coords[1 + k] < 0)
        d.error("coord.store-negative",
                fmt::format("a scatter4 must start at non-negative coordinates, got row_idx{} = coords[{}] = {} (the H100 raises "
                            "an illegal instruction for such a tile store; the PTX ISA forbids it)",
                            k, 1 + k, coords[1 + k]),
                fmt::format("coords[{}]", 1 + k));
  return d;
}

uint64_t gather4_bytes(const TensorMap& map) { return kGather4Rows * map.bytes_per_box(); }

uint64_t gather4_footprint(const TensorMap& map) { return uint64_t{kGather4Rows} * map.row_pitch(); }

std::pair<uint64_t, uint64_t> gather4_global_extent(const TensorMap& m, std::span<const int32_t> c) {
  if (m.rank != 2 || c.size() != kGather4Coords) return {0, 0};
  const uint64_t bits = static_cast<uint64_t>(tensor_map::bits_per_element(m.data_type));
  const int64_t first = std::max<int64_t>(c[0], 0);
  const int64_t last = std::min<int64_t>(int64_t{c[0]} + m.box[0] - 1, static_cast<int64_t>(m.dims[0]) - 1);
  if (last < first) return {0, 0};
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int k = 0; k < kGather4Rows; ++k) {
    const int64_t row = c[1 + k];
    if (row < 0 || static_cast<uint64_t>(row) >= m.dims[1]) continue;
    const uint64_t base = m.global_address + static_cast<uint64_t>(row) * m.strides[0];
    lo = std::min(lo, base + static_cast<uint64_t>(first) * bits / 8);
    hi = std::max(hi, base + ((static_cast<uint64_t>(last) + 1) * bits + 7) / 8);
  }
  if (hi == 0) return {0, 0};
  return {lo & ~15ull, (hi + 15) & ~15ull};
}

void gather4_load(const TensorMap& map, std::span<const int32_t> coords, const GlobalMemory& g,
                  std::span<uint8_t> cta_smem, uint32_t dst_offset) {
  require_map(map, "gather4 load");
  if (coords.size() != kGather4Coords) fail("coord.count", fmt::format("gather4: {} coordinates, not 5", coords.size()));
  const uint32_t pitch = map.row_pitch();
  for (int k = 0; k < kGather4Rows; ++k) tile_load(map, row_coords(coords, k), g, cta_smem, dst_offset + k * pitch);
}

void scatter4_store(const TensorMap& map, std::span<const int32_t> coords, std::span<const uint8_t> cta_smem,
                    uint32_t src_offset, GlobalMemory& g) {
  require_map(map, "scatter4 store");
  if (coords.size() != kGather4Coords) fail("coord.count", fmt::format("scatter4: {} coordinates, not 5", coords.size()));
  const uint32_t pitch = map.row_pitch();
  for (int k = 0; k < kGather4Rows; ++k) tile_store(map, row_coords(coords, k), cta_smem, src_offset + k * pitch, g);
}

}  // namespace tmakit::model
