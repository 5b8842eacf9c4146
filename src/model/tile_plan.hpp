// The tiled-mode walk's plan of one box (§2.1-§2.3, §3): the map and coordinates checked and
// turned into per-dimension counts, strides and in-bound ranges, the shared-memory row layout
// and the swizzle. Internal to the model (tile_reference.cpp, tile_plan.cpp, fast/tile.cpp, fast/tile_walk.hpp).
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "tmakit/model/swizzle.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::model::tile_walk {

using tensor_map::DataType;
using tensor_map::Encode;
using tensor_map::Interleave;
using tensor_map::OobFill;
using tensor_map::Swizzle;
using tensor_map::TensorMap;
using u128 = unsigned __int128;

constexpr uint32_t kMaxBox = 256;                     // boxDim[i] <= 256 (§1.3)
constexpr uint32_t kMaxElementStride = 8;             // elementStrides[i] <= 8 (§1.3)
constexpr uint32_t kMaxRowBytes = kMaxBox * 32;       // 256 elements of at most 32 bytes (interleave 32B slices)

inline int element_size(DataType t) {
  switch (t) {
    case DataType::uint8: return 1;
    case DataType::uint16:
    case DataType::float16:
    case DataType::bfloat16: return 2;
    case DataType::uint32:
    case DataType::int32:
    case DataType::float32:
    case DataType::float32_ftz:
    case DataType::tfloat32:
    case DataType::tfloat32_ftz: return 4;
    case DataType::uint64:
    case DataType::int64:
    case DataType::float64: return 8;
    default: return 0;  // packed types (§2.5, sm_100+): not walked by this model
  }
}

struct Plan {
  const char* what;
  int rank, eb;
  uint64_t global_address;
  std::array<int64_t, 5> c{};
  std::array<uint32_t, 5> n{}, e{};
  std::array<uint64_t, 5> dims{}, stride{};
  uint32_t row_bytes, pitch;
  uint64_t rows;
  Swizzle swz;
  uint32_t granule;     // swizzle_granule_bytes (0 = no swizzle)
  uint32_t chunk_mask;  // §3.1 modes: a' = a ^ (((a >> 7) & chunk_mask) << 4); 0 otherwise
  uint32_t k_lo, k_hi;  // k0 range whose g0 lies in [0, dims[0])
  std::array<uint32_t, 5> in_lo{}, in_hi{};  // per dimension: k range whose g lies in [0, dims[i])
};

// Checks the map and the coordinates (model.map-unsupported, model.coord-count) and that the
// box fits the CTA's shared memory from `offset` (model.shared-range); `what` names the
// operation in messages ("load", "store", "reduce").
Plan make_plan(const TensorMap& m, std::span<const int32_t> coords, size_t smem_size,
               uint32_t offset, const char* what);

// Fill bytes for a row (§2.1 item 4, H4): zeros, or the NaN pattern of the element size.
const uint8_t* fill_bytes(OobFill fill, int elem_bytes);

inline int64_t g0_of(const Plan& p, uint32_t k0) { return p.c[0] + int64_t(k0) * p.e[0]; }
inline u128 element_address(const Plan& p, u128 base, uint32_t k0) {
  return base + u128(uint64_t(g0_of(p, k0))) * uint64_t(p.eb);
}

// Global bytes [lo, hi) from the first to the last in-bound element of the box
// (§2.1 items 2-3); lo == hi when no element is in bounds.
inline std::pair<u128, u128> in_bound_extent(const Plan& p) {
  u128 lo = p.global_address, hi = lo;
  for (int i = 0; i < tensor_map::kMaxRank; ++i) {
    if (p.in_lo[i] >= p.in_hi[i]) return {lo, lo};
    lo += u128(uint64_t(p.c[i] + int64_t(p.in_lo[i]) * p.e[i])) * p.stride[i];
    hi += u128(uint64_t(p.c[i] + int64_t(p.in_hi[i] - 1) * p.e[i])) * p.stride[i];
  }
  return {lo, hi + uint64_t(p.eb)};
}

// A 128-bit address in hex.
std::string hex(u128 a);

// model.global-fault for the in-bound element k0 of shared row `row` at global address addr.
[[noreturn]] void global_fault(const Plan& p, uint64_t row, uint32_t k0, u128 addr);

}  // namespace tmakit::model::tile_walk
