// The SVG picture: a title block, then per destination CTA a panel of 128-byte
// lines, eight 16-byte chunks each. Plain SVG 1.1 with fixed pixel sizes (no
// scripts, no external fonts), so every browser and the Chromium test draw it alike.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "svg_parts.hpp"
#include "tmakit/layout/render.hpp"
#include "tmakit/model/swizzle.hpp"

namespace tmakit::layout {
namespace {

using namespace svg;

constexpr int kCellW = 112, kCellH = 36, kLinePitch = 42;  // pixels
constexpr int kLeft = 150, kTop = 92, kPanelHead = 24;

std::string chunk_svg(const Placement& p, const Chunk& c, int x, int y) {
  const std::string label = chunk_label(p, c);
  const char* fill = c.kind == ChunkKind::padding  ? kPadColour
                     : c.kind == ChunkKind::unused ? kUnusedColour
                     : c.kind == ChunkKind::oob    ? "url(#oob)"
                                                   : row_colour(c.row);
  std::string tip = fmt::format("offset {:#x} (unswizzled {:#x})", c.offset, c.logical);
  if (c.kind != ChunkKind::unused) tip += fmt::format(", row {}", c.row);
  if (c.split) tip += " and the start of the next row";
  if (c.kind == ChunkKind::data || c.kind == ChunkKind::partial || c.kind == ChunkKind::oob)
    tip += fmt::format(", {} elements from ({}), {} out of bounds", c.elements, label, c.out_of_bounds);
  std::string s = fmt::format("<g class=\"chunk\" data-offset=\"{}\" data-kind=\"{}\">\n<title>{}</title>\n", c.offset,
                              name(c.kind), esc(tip));
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\"/>\n", x, y,
                   kCellW, kCellH, fill);
  const int cx = x + kCellW / 2;
  switch (c.kind) {
    case ChunkKind::data: s += text(cx, y + 23, font_for(label, 13, kCellW), label, "label"); break;
    case ChunkKind::partial:
    case ChunkKind::oob:
      if (c.kind == ChunkKind::partial)
        s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#oob)\" opacity=\"0.5\"/>\n",
                         x, y + kCellH / 2, kCellW, kCellH / 2);
      s += text(cx, y + 15, font_for(label, 12, kCellW), label, "label");
      {
        const std::string note = c.kind == ChunkKind::oob ? "OOB = " + p.fill
                                                          : fmt::format("{} OOB = {}", c.out_of_bounds, p.fill);
        s += text(cx, y + 31, font_for(note, 10, kCellW), note, "note");
      }
      break;
    case ChunkKind::padding: s += text(cx, y + 23, 11, "pad", "note"); break;
    case ChunkKind::unused: break;
  }
  return s + "</g>\n";
}

std::string panel_svg(const Placement& p, int cta, int top) {
  std::string s = fmt::format("<g class=\"panel\" data-cta=\"{}\">\n", cta);
  if (p.ctas.size() > 1)
    s += text(8, top + 16, 13, fmt::format("CTA {} (multicast destination)", cta), "panel-title", "start");
  top += p.ctas.size() > 1 ? kPanelHead : 0;
  const uint32_t span = model::swizzle_span_bytes(p.map.swizzle);
  for (uint32_t l = 0; l < p.lines_shown; ++l) {
    const int y = top + int(l) * kLinePitch;
    const uint32_t line = p.smem_offset + l * 128;
    s += text(8, y + 15, 12, fmt::format("{:#06x}", line), "offset", "start");
    if (p.map.swizzle != tensor_map::Swizzle::none)
      s += text(8, y + 31, 10, fmt::format("xor {:#04x}", line_xor(p.map.swizzle, line)), "xor", "start");
    for (int j = 0; j < 8; ++j) s += chunk_svg(p, p.chunks[l * 8 + j], kLeft + j * kCellW, y);
    // The 128-byte line, and the swizzle spans inside it (32B, 64B: §3.1).
    for (uint32_t b = span; span && b < 128; b += span) {
      const int x = kLeft + int(b / 16) * kCellW;
      s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#555555\" stroke-width=\"2\" "
                       "stroke-dasharray=\"4,3\"/>\n", x, y, x, y + kCellH);
    }
    s += fmt::format("<rect class=\"line\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                     "stroke=\"#333333\" stroke-width=\"2\"/>\n", kLeft, y, 8 * kCellW, kCellH);
  }
  return s + "</g>\n";
}

int panel_height(const Placement& p) {
  return (p.ctas.size() > 1 ? kPanelHead : 0) + int(p.lines_shown) * kLinePitch + 8;
}

std::string legend(const Placement& p, int y) {
  std::string s;
  int x = 8;
  auto item = [&](const char* fill, const std::string& what) {
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"22\" height=\"14\" fill=\"{}\" stroke=\"#333333\"/>\n", x, y - 11,
                     fill);
    s += text(x + 28, y, 12, what, "legend", "start");
    x += 28 + int(what.size()) * 7 + 18;
  };
  item(row_colour(0), "data (colour = source row)");
  item("url(#oob)", "out of bounds, filled with " + p.fill);
  if (p.pitch > p.row_bytes) item(kPadColour, "padding to the swizzle span");
  return s;
}

}  // namespace

std::string render_svg(const Placement& p) {
  int height = kTop;
  for (size_t i = 0; i < p.ctas.size(); ++i) height += panel_height(p);
  const bool cut = p.lines_total > p.lines_shown;
  if (cut) height += 20;
  const int walk_top = height;
  height += walk_height(p);
  std::string s = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans Mono, monospace\">\n"
      "<title>{2}</title>\n"
      "<defs><pattern id=\"oob\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"8\" height=\"8\" fill=\"#f4e4e4\"/>"
      "<rect width=\"3\" height=\"8\" fill=\"#d46a6a\"/></pattern></defs>\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n",
      kWidth, height, esc(headline(p)));
  s += text(8, 20, font_for(headline(p), 13, kWidth - 24), headline(p), "headline", "start");
  s += text(8, 40, font_for(swizzle_line(p), 12, kWidth - 24), swizzle_line(p), "swizzle", "start");
  s += text(8, 58, 11,
            fmt::format("one line per 128 bytes of shared memory, one cell per 16-byte chunk, labelled ({}) = tensor "
                        "coordinates of its first element", coordinate_names(p)),
            "caption", "start");
  s += legend(p, 80);
  int top = kTop;
  for (int cta : p.ctas) {
    s += panel_svg(p, cta, top);
    top += panel_height(p);
  }
  if (cut) s += text(8, top + 12, 12, fmt::format("... {} more lines", p.lines_total - p.lines_shown), "cut", "start");
  s += walk_svg(p, walk_top);
  return s + "</svg>\n";
}

}  // namespace tmakit::layout
