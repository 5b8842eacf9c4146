// The words every picture shares (labels, headline, swizzle sentence) and the
// terminal picture: one line of text per 128-byte shared-memory line.
#include <fmt/format.h>

#include <algorithm>

#include "tmakit/layout/render.hpp"

namespace tmakit::layout {

namespace tm = tensor_map;

namespace {

template <class T>
std::string list(const T& v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

std::string cell(const Placement& p, const Chunk& c) {
  switch (c.kind) {
    case ChunkKind::data: return chunk_label(p, c) + (c.split ? "|" : "");
    case ChunkKind::partial: return chunk_label(p, c) + "~";
    case ChunkKind::oob: return "oob " + chunk_label(p, c);
    case ChunkKind::padding: return "pad";
    case ChunkKind::unused: return ".";
  }
  return ".";
}

// The im2col walk, one line per shared row: the pixel read and the filter base.
std::string walk_text(const Placement& p) {
  if (!p.im2col) return "";
  std::string out = "walk: row: pixel (n, d, h, w) read = filter base + offsets; OOB pixels are filled\n";
  for (const model::Im2colRow& r : p.walk)
    out += fmt::format("  row {:>4}: n {} d {} h {} w {}{}{}\n", r.row, r.n, r.d, r.h, r.w, r.halo ? " (halo)" : "",
                       r.in_bounds ? "" : " OOB");
  return out;
}

}  // namespace

std::string chunk_label(const Placement& p, const Chunk& c) { return list(c.first, p.map.rank); }

std::string coordinate_names(const Placement& p) {
  if (p.im2col) return p.map.rank == 3 ? "c,w,n" : p.map.rank == 4 ? "c,w,h,n" : "c,w,h,d,n";
  return std::string("x,y,z,u,v").substr(0, size_t(2 * p.map.rank - 1));
}

std::string headline(const Placement& p) {
  const tm::TensorMap& m = p.map;
  std::string shape;
  if (m.encode == tm::Encode::tiled)
    shape = fmt::format("box [{}]", list(m.box, m.rank));
  else if (m.encode == tm::Encode::im2col)
    shape = fmt::format("im2col pixel box [{}]..[{}], {} channels x {} pixels", list(m.pixel_box_lower, m.rank - 2),
                        list(m.pixel_box_upper, m.rank - 2), m.channels_per_pixel, m.elements(1));
  else
    shape = fmt::format("im2col_wide W box {}..{}, {} channels x {} pixels", m.pixel_box_lower_w, m.pixel_box_upper_w,
                        m.channels_per_pixel, m.elements(1));
  return fmt::format("{} map: dims [{}], {}, element strides [{}]; load at coords ({}) into shared offset {:#x}",
                     tm::name(m.data_type), list(m.dims, m.rank), shape, list(m.element_strides, m.rank),
                     list(p.coords, m.rank), p.smem_offset);
}

std::string swizzle_line(const Placement& p) {
  const tm::TensorMap& m = p.map;
  std::string s = m.swizzle == tm::Swizzle::none
                      ? std::string("swizzle none")
                      : fmt::format("swizzle {}: the box starts at phase {} of {} lines (offset {:#x} mod {})",
                                    tm::name(m.swizzle), p.phase, p.period_lines, p.smem_offset,
                                    p.period_lines * 128);
  s += fmt::format("; {} row{} of {} bytes", p.rows, p.rows == 1 ? "" : "s", p.row_bytes);
  if (m.interleave != tm::Interleave::none)  // Q26: labels name slices
    s += fmt::format(", dimension 0 in {}-byte slices (interleave {}; dimension {} walked once)", p.unit_bytes,
                     tm::name(m.interleave), m.rank - 2);
  if (p.pitch > p.row_bytes) s += fmt::format(", padded to the {}-byte swizzle span", p.pitch);
  return s + fmt::format("; OOB fill {}", p.fill);
}

std::string render_text(const Placement& p) {
  std::string out = headline(p) + "\n" + swizzle_line(p) + "\n";
  size_t width = 5;
  for (const Chunk& c : p.chunks) width = std::max(width, cell(p, c).size());
  for (int cta : p.ctas) {
    if (p.ctas.size() > 1) out += fmt::format("CTA {} (multicast destination)\n", cta);
    out += fmt::format("  {:<8} {:<6}|", "offset", "xor");
    for (int j = 0; j < 8; ++j) out += fmt::format(" {:<{}}", fmt::format("chunk {}", j), width);
    out += "\n";
    for (uint32_t l = 0; l < p.lines_shown; ++l) {
      const uint32_t line = p.smem_offset + l * 128;
      out += fmt::format("  {:<#8x} {:<#6x}|", line, line_xor(p.map.swizzle, line));
      for (int j = 0; j < 8; ++j) out += fmt::format(" {:<{}}", cell(p, p.chunks[l * 8 + j]), width);
      out += "\n";
    }
  }
  if (p.lines_total > p.lines_shown)
    out += fmt::format("... {} more lines (--max-lines)\n", p.lines_total - p.lines_shown);
  out += fmt::format("cells: {} = tensor coordinates of the chunk's first element; | = the chunk also starts the "
                     "next row; ~ = some elements OOB, filled with {}; oob = every element filled with {}; "
                     "pad = padding to the swizzle span, untouched; . = past the box\n",
                     coordinate_names(p), p.fill, p.fill);
  out += walk_text(p);
  return out;
}

}  // namespace tmakit::layout
