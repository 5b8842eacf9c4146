// The plan of one tiled box (tile_plan.hpp): checks, counts and in-bound ranges.
#include "tile_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "tmakit/model/tile.hpp"

#include "tmakit/diag.hpp"
#include "tmakit/model/numerics.hpp"

namespace tmakit::model::tile_walk {
namespace {

// The k in [0, n) with 0 <= c + k * e < d (§2.1 items 2-3), as [lo, hi).
std::pair<uint32_t, uint32_t> in_bounds_k(int64_t c, uint32_t e, uint64_t d, uint32_t n) {
  const int64_t lo = c >= 0 ? 0 : (-c + e - 1) / e;
  const int64_t hi = c >= int64_t(d) ? 0 : (int64_t(d) - c + e - 1) / e;
  const uint32_t h = uint32_t(std::min<int64_t>(hi, n));
  return {uint32_t(std::min<int64_t>(lo, h)), h};
}

[[noreturn]] void unsupported(const char* what, const std::string& why) {
  fail("model.map-unsupported", fmt::format("tile {}: {}", what, why));
}

}  // namespace

// Fill sources indexed by row-relative byte offset. Rows start on element
// boundaries and every fill run starts on one, so a 2-periodic pattern is in phase.
const uint8_t* fill_bytes(OobFill fill, int elem_bytes) {
  static const auto zeros = std::array<uint8_t, kMaxRowBytes>{};
  static const auto nan = [] {
    std::array<uint8_t, kMaxRowBytes> a{};
    for (size_t i = 0; i < a.size(); ++i) a[i] = oob_nan_byte(2, int(i % 2));
    return a;
  }();
  static const auto nan8 = [] {
    std::array<uint8_t, kMaxRowBytes> a{};
    a.fill(oob_nan_byte(1, 0));
    return a;
  }();
  if (fill == OobFill::zero) return zeros.data();
  return elem_bytes == 1 ? nan8.data() : nan.data();  // H4
}

Plan make_plan(const TensorMap& m, std::span<const int32_t> coords, size_t smem_size,
               uint32_t offset, const char* what) {
  Plan p{};
  p.what = what;
  if (m.encode != Encode::tiled) unsupported(what, "the map is not a tiled map");
  if (m.rank < 1 || m.rank > tensor_map::kMaxRank)
    unsupported(what, fmt::format("rank {} is outside 1..5", m.rank));
  if (coords.size() != size_t(m.rank))
    fail("model.coord-count",
         fmt::format("tile {}: {} coordinates for a rank-{} map", what, coords.size(), m.rank));
  p.eb = element_size(m.data_type);
  if (p.eb == 0)
    unsupported(what, fmt::format("data type {} is a packed type (sm_100 and later)", tensor_map::name(m.data_type)));
  p.rank = m.rank;
  p.global_address = m.global_address;
  const bool interleaved = m.interleave != Interleave::none;
  // Q26 (docs/hardware-notes.md, interleave decisions): with interleave an element of
  // dimension 0 is a whole slice of 16 or 32 bytes, whatever the data type (g0 counts
  // slices, address g0 × slice, bounded by dims[0]); dimension rank-2 is walked once
  // (k = 0: its coordinate and bounds apply, its box and element stride do not); the
  // slices land densely in shared memory (no H2 row padding), swizzled as usual.
  int once = -1;
  if (interleaved) {
    if (p.rank < 3) unsupported(what, fmt::format("interleave {} needs rank 3..5, got rank {}",
                                                  tensor_map::name(m.interleave), p.rank));
    p.eb = int(m.slice_bytes());
    once = p.rank - 2;
  }
  for (int i = 0; i < p.rank; ++i) {
    if (m.box[i] < 1 || m.box[i] > kMaxBox)
      unsupported(what, fmt::format("box[{}] = {} is outside 1..256", i, m.box[i]));
    const uint32_t es = m.element_strides[i];
    if (es < 1 || es > kMaxElementStride)
      unsupported(what, fmt::format("element_strides[{}] = {} is outside 1..8", i, es));
    // elementStrides[0] is ignored without interleave (§1.3, H16).
    p.e[i] = (i == 0 && !interleaved) ? 1 : es;
    p.n[i] = i == once ? 1 : (m.box[i] + p.e[i] - 1) / p.e[i];  // §2.1 item 1
    p.c[i] = coords[i];
    p.dims[i] = m.dims[i];
    p.stride[i] = i == 0 ? uint64_t(p.eb) : m.strides[i - 1];
  }
  p.swz = m.swizzle;
  p.granule = swizzle_granule_bytes(m.swizzle);
  p.chunk_mask = m.swizzle == Swizzle::b32 ? 1 : m.swizzle == Swizzle::b64 ? 3 : m.swizzle == Swizzle::b128 ? 7 : 0;
  p.row_bytes = p.n[0] * uint32_t(p.eb);
  p.pitch = interleaved ? p.row_bytes : std::max(p.row_bytes, swizzle_span_bytes(m.swizzle));  // H2
  p.rows = 1;
  for (int i = 1; i < p.rank; ++i) p.rows *= p.n[i];

  // The box must lie in the CTA's shared memory; a swizzle moves 16-byte chunks
  // only inside their aligned span (32/64/128 bytes, §3.1), so check to the end of
  // the last span (the H100 ran 32B-swizzled boxes that end 32 bytes into a line).
  uint64_t end = uint64_t(offset) + (p.rows - 1) * p.pitch + p.row_bytes;
  if (p.granule) {
    const uint64_t span = std::max<uint64_t>(swizzle_span_bytes(m.swizzle), 16);
    end = (end + span - 1) / span * span;
  }
  if (end > smem_size)
    fail("model.shared-range",
         fmt::format("tile {}: box at shared offset {} needs bytes up to {} ({} rows of pitch {}), "
                     "shared memory has {}",
                     what, offset, end, p.rows, p.pitch, smem_size));

  // Dimensions past the rank walk once, in bounds, so the row loops need no rank test.
  for (int i = p.rank; i < tensor_map::kMaxRank; ++i) p.n[i] = p.e[i] = 1, p.dims[i] = 1;
  for (int i = 0; i < tensor_map::kMaxRank; ++i)
    std::tie(p.in_lo[i], p.in_hi[i]) = in_bounds_k(p.c[i], p.e[i], p.dims[i], p.n[i]);
  p.k_lo = p.in_lo[0];
  p.k_hi = p.in_hi[0];
  return p;
}

std::string hex(u128 a) {
  if (a >> 64) return fmt::format("0x{:x}{:016x}", uint64_t(a >> 64), uint64_t(a));
  return fmt::format("0x{:x}", uint64_t(a));
}

[[noreturn]] void global_fault(const Plan& p, uint64_t row, uint32_t k0, u128 addr) {
  std::string coords = fmt::format("{}", g0_of(p, k0));
  for (int i = 1; i < p.rank; ++i) {  // row = k1 + N1 * (k2 + ...) (§2.1 item 5)
    coords += fmt::format(", {}", p.c[i] + int64_t(row % p.n[i]) * p.e[i]);
    row /= p.n[i];
  }
  fail("model.global-fault",
       fmt::format("tile {}: in-bound element ({}) at global address {} ({} bytes) is not inside "
                   "any allocation (map global_address {})",
                   p.what, coords, hex(addr), p.eb, hex(p.global_address)));
}

}  // namespace tmakit::model::tile_walk

namespace tmakit::model {

std::optional<std::vector<std::pair<uint64_t, uint64_t>>> tile_global_spans(const tensor_map::TensorMap& m,
                                                                           std::span<const int32_t> c,
                                                                           size_t max_rows) {
  using tile_walk::in_bounds_k;
  const int eb = tile_walk::element_size(m.data_type);
  if (m.encode != tensor_map::Encode::tiled || m.interleave != tensor_map::Interleave::none || eb == 0 ||
      m.rank < 1 || m.rank > tensor_map::kMaxRank || c.size() != size_t(m.rank))
    return std::nullopt;
  // Per dimension: the in-bound k range (§2.1 items 2-3); dimension 0 is one contiguous run (E0 = 1).
  std::array<uint32_t, 5> lo{}, hi{}, e{};
  size_t rows = 1;
  for (int i = 0; i < m.rank; ++i) {
    e[i] = i == 0 ? 1 : m.element_strides[i];
    const uint32_t n = (m.box[i] + e[i] - 1) / e[i];
    std::tie(lo[i], hi[i]) = in_bounds_k(c[i], e[i], m.dims[i], n);
    if (lo[i] >= hi[i]) return std::vector<std::pair<uint64_t, uint64_t>>{};
    if (i) rows *= hi[i] - lo[i];
    if (rows > max_rows) return std::nullopt;
  }
  const uint64_t first = uint64_t(c[0] + int64_t(lo[0])) * uint64_t(eb), last = uint64_t(c[0] + int64_t(hi[0])) * uint64_t(eb);
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  spans.reserve(rows);
  std::array<uint32_t, 5> k = lo;
  for (;;) {
    uint64_t base = m.global_address;
    for (int i = 1; i < m.rank; ++i) base += uint64_t(c[i] + int64_t(k[i]) * e[i]) * m.strides[i - 1];
    spans.emplace_back((base + first) & ~15ull, (base + last + 15) & ~15ull);
    int i = 1;
    for (; i < m.rank; ++i) {
      if (++k[i] < hi[i]) break;
      k[i] = lo[i];
    }
    if (i >= m.rank) break;
  }
  std::sort(spans.begin(), spans.end());
  size_t out = 0;
  for (const auto& s : spans) {  // merge touching and overlapping rows
    if (out && s.first <= spans[out - 1].second) spans[out - 1].second = std::max(spans[out - 1].second, s.second);
    else spans[out++] = s;
  }
  spans.resize(out);
  return spans;
}

}  // namespace tmakit::model
