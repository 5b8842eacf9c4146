// The placements: shared row r of a load starts at smem_offset + r * pitch
// (§2.1 item 5, §4.2; pitch per H2); its 16-byte chunks hold elements
// k0 = 16j / elemBytes onwards, and land at swizzle_address() of their
// unswizzled offset (§3). Tiled and im2col loads differ only in what each row
// holds, so both describe their rows and share the chunk walk.
#include "tmakit/layout/placement.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "tmakit/diag.hpp"
#include "tmakit/model/numerics.hpp"
#include "tmakit/model/swizzle.hpp"

namespace tmakit::layout {

namespace tm = tensor_map;

std::string_view name(ChunkKind k) {
  switch (k) {
    case ChunkKind::data: return "data";
    case ChunkKind::partial: return "partial";
    case ChunkKind::oob: return "oob";
    case ChunkKind::padding: return "padding";
    case ChunkKind::unused: return "unused";
  }
  return "unused";
}

uint32_t line_xor(tm::Swizzle s, uint32_t line) { return model::swizzle_address(s, line) ^ line; }

std::array<int64_t, 5> im2col_coordinates(int rank, const model::Im2colRow& r) {
  if (rank == 3) return {r.c, r.w, r.n};
  if (rank == 4) return {r.c, r.w, r.h, r.n};
  return {r.c, r.w, r.h, r.d, r.n};
}

namespace {

constexpr uint32_t kLine = 128;  // bytes of one shared-memory line (§3.1)
constexpr uint32_t kChunk = 16;

// What one shared row holds: element k0 is tensor element first + k0 * (e0, 0, ...);
// `in` is false when the row's outer coordinates (or its pixel) are out of bounds.
struct RowSource {
  std::array<int64_t, 5> first{};
  bool in = true;
};

std::string fill_name(const tm::TensorMap& m, int eb) {
  if (m.oob_fill == tm::OobFill::zero) return "0";
  return fmt::format("NaN {:#0{}x}", model::oob_nan_bits(eb), 2 + 2 * eb);  // H4
}

// The checks both modes share, and the geometry of `rows` rows.
Placement start(const tm::TensorMap& m, std::span<const int32_t> coords, uint32_t smem_offset, uint64_t rows,
                uint32_t max_lines) {
  const int eb = tm::element_bytes(m.data_type);
  if (tm::is_packed(m.data_type) || eb == 0)
    fail("layout.unsupported", fmt::format("data type {} is packed: not drawn", tm::name(m.data_type)));
  if (m.rank < 1 || m.rank > tm::kMaxRank)
    fail("layout.unsupported", fmt::format("rank {} is outside 1..5", m.rank));
  if (coords.size() != size_t(m.rank))
    fail("layout.coord-count", fmt::format("{} coordinates for a rank-{} map", coords.size(), m.rank));
  if (smem_offset % m.smem_alignment())
    fail("layout.smem-align", fmt::format("shared offset {} is not {}-byte aligned", smem_offset,
                                          m.smem_alignment()));
  Placement p;
  p.map = m;
  p.coords.assign(coords.begin(), coords.end());
  p.smem_offset = smem_offset;
  p.elem_bytes = eb;
  // Q26: interleaved walks move whole slices (the model's walk gives the rows).
  p.unit_bytes = m.slice_bytes() ? int(m.slice_bytes()) : eb;
  p.row_bytes = m.row_bytes();
  p.pitch = m.row_pitch();
  p.rows = rows;
  if (const uint32_t repeat = model::swizzle_repeat_bytes(m.swizzle)) {
    p.period_lines = repeat / kLine;
    p.phase = smem_offset % repeat / kLine;
  }
  p.fill = fill_name(m, eb);
  p.lines_total = (rows * p.pitch + kLine - 1) / kLine;
  p.lines_shown = uint32_t(std::min<uint64_t>(p.lines_total, max_lines));
  p.chunks.resize(p.lines_shown * (kLine / kChunk));
  for (size_t i = 0; i < p.chunks.size(); ++i)
    p.chunks[i].offset = p.chunks[i].logical = smem_offset + uint32_t(i) * kChunk;
  return p;
}

// Rows that reach into the placed lines.
uint64_t rows_shown(const Placement& p) {
  return std::min<uint64_t>(p.rows, (uint64_t(p.lines_shown) * kLine + p.pitch - 1) / p.pitch);
}

// Places every chunk of the shown lines. A chunk holds the elements whose bytes
// start in it; rows narrower than the swizzle span leave padding (H2), and rows
// that are not a multiple of 16 bytes (im2col channels) share a chunk with the
// next row. `e0` is the element stride of dimension 0.
void place_rows(Placement& p, std::span<const RowSource> rows, int64_t e0) {
  const uint64_t end = std::min<uint64_t>(uint64_t(p.lines_shown) * kLine, rows.size() * uint64_t(p.pitch));
  const uint32_t eb = uint32_t(p.unit_bytes);
  for (uint64_t at = 0; at < end; at += kChunk) {
    const uint32_t logical = p.smem_offset + uint32_t(at);
    const uint32_t physical = model::swizzle_address(p.map.swizzle, logical) & ~(kChunk - 1);
    Chunk& c = p.chunks[(physical - p.smem_offset) / kChunk];
    c.logical = logical;
    c.row = at / p.pitch;
    c.kind = ChunkKind::padding;
    // A unit whose bytes lie in the chunk: its first byte, or the chunk's own start
    // (the second half of a 32-byte slice).
    for (uint64_t b = at - (at % p.pitch) % eb; b < at + kChunk && b / p.pitch < rows.size(); b += eb) {
      const uint64_t r = b / p.pitch, rel = b % p.pitch;
      if (rel >= p.row_bytes) continue;  // padding to the span
      std::array<int64_t, 5> g = rows[r].first;
      g[0] += int64_t(rel / eb) * e0;
      if (c.elements++ == 0) {
        c.first = g;
        c.row = r;
      }
      c.split = c.split || r != c.row;
      c.out_of_bounds += !(rows[r].in && g[0] >= 0 && uint64_t(g[0]) < p.map.dims[0]);
    }
    if (c.elements)
      c.kind = c.out_of_bounds == 0 ? ChunkKind::data
               : c.out_of_bounds == c.elements ? ChunkKind::oob : ChunkKind::partial;
  }
}

}  // namespace

Placement place_tile(const tm::TensorMap& m, std::span<const int32_t> coords, uint32_t smem_offset,
                     uint32_t max_lines) {
  if (m.encode != tm::Encode::tiled)
    fail("layout.unsupported", fmt::format("a {} map has no tile placement", tm::name(m.encode)));
  Placement p = start(m, coords, smem_offset, m.rows(), max_lines);
  // k[i] walks the outer box dimensions in row order (dimension 1 fastest, §2.1 item 5).
  std::vector<RowSource> rows(rows_shown(p));
  std::array<uint32_t, tm::kMaxRank> k{};
  for (RowSource& row : rows) {
    row.first[0] = coords[0];
    for (int i = 1; i < m.rank; ++i) {
      row.first[i] = coords[i] + int64_t(k[i]) * m.traversal_stride(i);
      row.in = row.in && row.first[i] >= 0 && uint64_t(row.first[i]) < m.dims[i];
    }
    for (int i = 1; i < m.rank; ++i) {
      if (++k[i] < m.elements(i)) break;
      k[i] = 0;
    }
  }
  place_rows(p, rows, m.traversal_stride(0));
  return p;
}

Placement place_im2col(const tm::TensorMap& m, std::span<const int32_t> coords, const model::Im2colInfo& info,
                       uint32_t smem_offset, uint32_t max_lines) {
  if (m.encode == tm::Encode::tiled) fail("layout.unsupported", "a tiled map has no im2col walk");
  // Q26: an interleaved im2col walk steps through C (in slices), W and H, not the pixels
  // the walk picture draws; its rows are not drawn (tile placements of interleaved maps are).
  if (m.interleave != tm::Interleave::none)
    fail("layout.unsupported", fmt::format("interleave {} im2col walks (Q26) are not drawn", tm::name(m.interleave)));
  if (coords.size() != size_t(m.rank))  // before the model's walk reads them
    fail("layout.coord-count", fmt::format("{} coordinates for a rank-{} map", coords.size(), m.rank));
  std::vector<model::Im2colRow> walk = model::im2col_rows(m, coords, info);
  Placement p = start(m, coords, smem_offset, walk.size(), max_lines);
  p.im2col = true;
  p.info = info;
  std::vector<RowSource> rows(rows_shown(p));
  for (size_t r = 0; r < rows.size(); ++r) rows[r] = {im2col_coordinates(m.rank, walk[r]), walk[r].in_bounds};
  p.walk = std::move(walk);
  place_rows(p, rows, 1);  // channels are contiguous (§4.2)
  return p;
}

}  // namespace tmakit::layout
