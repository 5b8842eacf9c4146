// Packed sub-byte types (§2.5): the global bytes of a box move through a plain
// uint8 view of the map (tile.cpp does bounds, OOB fill and the H6 chunks), and
// this file turns packed global groups into the shared-memory layout and back.
#include "tmakit/model/packed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/model/swizzle.hpp"
#include "tmakit/model/tile.hpp"

namespace tmakit::model {
namespace {

using tensor_map::DataType;
using tensor_map::TensorMap;

// The smallest run of values that is whole bytes in global and in shared memory.
struct Unit {
  uint32_t values;  // values per unit
  uint32_t global;  // packed bytes in global memory
  uint32_t shared;  // bytes in shared memory (data, then pad)
  uint32_t data;    // of which data bytes
};

Unit unit_of(DataType t, bool store) {
  switch (t) {
    case DataType::u4_align8b: return {2, 1, 1, 1};    // two nibbles per byte, both sides (§2.5)
    case DataType::u4_align16b: return {16, 8, 16, 8};  // 8 data + 8 pad
    case DataType::u6_align16b:
      return store ? Unit{16, 12, 16, 16}   // .b6p2x16: one value per shared byte
                   : Unit{16, 12, 16, 12};  // .b6x16_p32: 12 data + 4 pad
    default: break;
  }
  fail("model.map-unsupported", fmt::format("{} is not a packed type", tensor_map::name(t)));
}

[[noreturn]] void unsupported(const char* what, const std::string& why) {
  fail("model.map-unsupported", fmt::format("packed {}: {}", what, why));
}

// The map and coordinates seen as uint8 rows of packed global bytes.
struct View {
  TensorMap map;
  std::array<int32_t, tensor_map::kMaxRank> coords{};
  uint32_t row_global = 0, row_shared = 0, pitch = 0;
  uint64_t rows = 0;
  Unit u;
};

View make_view(const TensorMap& m, std::span<const int32_t> c, bool store, const char* what) {
  if (m.encode != tensor_map::Encode::tiled) unsupported(what, "only tiled maps are walked here");
  if (m.interleave != tensor_map::Interleave::none) unsupported(what, "interleaved packed maps are not modelled");
  if (m.rank < 1 || m.rank > tensor_map::kMaxRank || c.size() != size_t(m.rank))
    fail("model.coord-count", fmt::format("packed {}: {} coordinates for a rank-{} map", what, c.size(), m.rank));
  View v{m, {}, 0, 0, 0, 0, unit_of(m.data_type, store)};
  const uint32_t n = v.u.values;
  // Validation (map.packed-*, coord.packed-inner-align) guarantees whole units; a
  // caller that skipped it gets a refusal, not a half-byte walk.
  if (m.dims[0] % n || m.box[0] % n || c[0] % int64_t(n))
    unsupported(what, fmt::format("dims[0] = {}, box[0] = {} and coords[0] = {} must be multiples of {} values "
                                  "for {}",
                                  m.dims[0], m.box[0], c[0], n, tensor_map::name(m.data_type)));
  v.map.data_type = DataType::uint8;
  v.map.swizzle = tensor_map::Swizzle::none;
  v.map.oob_fill = tensor_map::OobFill::zero;
  v.map.dims[0] = m.dims[0] / n * v.u.global;
  v.map.box[0] = m.box[0] / n * v.u.global;
  std::copy(c.begin(), c.end(), v.coords.begin());
  v.coords[0] = int32_t(c[0] / int64_t(n) * v.u.global);
  v.row_global = v.map.box[0];
  v.row_shared = m.box[0] / n * v.u.shared;
  v.pitch = std::max(v.row_shared, swizzle_span_bytes(m.swizzle));  // H2, as tile mode
  v.rows = m.rows();
  return v;
}

void check_shared(const View& v, const TensorMap& m, size_t smem_size, uint32_t offset, const char* what) {
  uint64_t end = uint64_t(offset) + (v.rows - 1) * v.pitch + v.row_shared;
  if (const uint64_t span = swizzle_span_bytes(m.swizzle)) end = (end + span - 1) / span * span;
  if (end > smem_size)
    fail("model.shared-range", fmt::format("packed {}: box at shared offset {} needs bytes up to {} ({} rows of "
                                           "pitch {}), shared memory has {}",
                                           what, offset, end, v.rows, v.pitch, smem_size));
}

std::span<const int32_t> coords_of(const View& v) { return {v.coords.data(), size_t(v.map.rank)}; }

}  // namespace

void pack_b6p2x16(const uint8_t* sixteen, uint8_t* twelve) {
  std::fill(twelve, twelve + 12, 0);
  for (int i = 0; i < 16; ++i)
    for (int b = 0; b < 6; ++b)
      if (sixteen[i] >> b & 1) twelve[(6 * i + b) / 8] |= uint8_t(1u << ((6 * i + b) % 8));
}

void packed_load(const TensorMap& map, std::span<const int32_t> coords, const GlobalMemory& g,
                 std::span<uint8_t> cta_smem, uint32_t dst_offset) {
  if (map.data_type == DataType::u6_align16b && map.swizzle == tensor_map::Swizzle::b128_atom_64b)
    fail("coord.packed-direction", "packed load: 16u6_align16b with swizzle 128b_atom_64b serves stores only");
  const View v = make_view(map, coords, false, "load");
  check_shared(v, map, cta_smem.size(), dst_offset, "load");
  std::vector<uint8_t> rows(v.rows * v.row_global);
  tile_load(v.map, coords_of(v), g, rows, 0);  // dense packed rows, OOB bytes zero
  for (uint64_t r = 0; r < v.rows; ++r) {
    const uint8_t* src = rows.data() + r * v.row_global;
    const uint32_t row = dst_offset + uint32_t(r * v.pitch);
    for (uint32_t k = 0; k < v.row_global / v.u.global; ++k)
      for (uint32_t i = 0; i < v.u.data; ++i)  // pad bytes [data, shared) untouched
        cta_smem[swizzle_address(map.swizzle, row + k * v.u.shared + i)] = src[k * v.u.global + i];
  }
}

void packed_store(const TensorMap& map, std::span<const int32_t> coords, std::span<const uint8_t> cta_smem,
                  uint32_t src_offset, GlobalMemory& g) {
  if (map.data_type == DataType::u4_align16b)
    fail("coord.packed-direction", "packed store: stores do not support data type 16u4_align16b (PTX-R)");
  const View v = make_view(map, coords, true, "store");
  check_shared(v, map, cta_smem.size(), src_offset, "store");
  std::vector<uint8_t> rows(v.rows * v.row_global);
  std::array<uint8_t, 16> group{};
  for (uint64_t r = 0; r < v.rows; ++r) {
    uint8_t* dst = rows.data() + r * v.row_global;
    const uint32_t row = src_offset + uint32_t(r * v.pitch);
    for (uint32_t k = 0; k < v.row_global / v.u.global; ++k) {
      for (uint32_t i = 0; i < v.u.shared; ++i) group[i] = cta_smem[swizzle_address(map.swizzle, row + k * v.u.shared + i)];
      if (map.data_type == DataType::u6_align16b) pack_b6p2x16(group.data(), dst + k * v.u.global);
      else std::copy_n(group.begin(), v.u.global, dst + k * v.u.global);
    }
  }
  tile_store(v.map, coords_of(v), rows, 0, g);
}

}  // namespace tmakit::model
