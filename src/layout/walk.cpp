// The im2col walk drawn over the input image (§4.2): one grid per image (n, d)
// the walk visits, W across and H down, reaching past the image where the pixel
// box's corners do (those pixels are OOB and filled). Each pixel a shared row
// reads carries the row's number and colour; dots mark the filter bases (pixel
// minus the instruction's offsets); a solid line joins steps along W, a dashed
// one the wraps back to the lower corner (into the next H, D or n).
#include <map>
#include <utility>

#include "svg_parts.hpp"

namespace tmakit::layout::svg {
namespace {

constexpr int kMaxImages = 4, kMaxCols = 40, kMaxRows = 24;  // a picture, not a dump
constexpr int kHeader = 58, kImageHead = 36, kImageGap = 14, kMargin = 60;

struct Grid {
  int64_t n, d;
  int64_t w0, w1, h0, h1;  // drawn range, inclusive
  std::vector<const model::Im2colRow*> rows;
  int cell() const { return int(std::min<int64_t>(34, (kWidth - kMargin - 16) / (w1 - w0 + 1))); }
  int height() const { return kImageHead + int(h1 - h0 + 1) * cell() + kImageGap; }
};

std::array<int64_t, 3> base_of(const Placement& p, const model::Im2colRow& r) {
  return {r.w - p.info.offsets[0], r.h - p.info.offsets[1], r.d - p.info.offsets[2]};
}

std::vector<Grid> grids(const Placement& p) {
  std::vector<Grid> out;
  std::map<std::pair<int64_t, int64_t>, size_t> index;
  const bool has_h = p.map.rank >= 4;
  const int64_t W = int64_t(p.map.dims[1]), H = has_h ? int64_t(p.map.dims[2]) : 1;
  for (const model::Im2colRow& r : p.walk) {
    auto [it, fresh] = index.try_emplace({r.n, r.d}, out.size());
    if (fresh) {
      if (out.size() == kMaxImages) {
        index.erase(it);
        continue;
      }
      out.push_back({r.n, r.d, 0, W - 1, 0, H - 1, {}});
    }
    Grid& g = out[it->second];
    const auto b = base_of(p, r);
    g.w0 = std::min({g.w0, r.w, b[0]});
    g.w1 = std::max({g.w1, r.w, b[0]});
    if (has_h) {
      g.h0 = std::min({g.h0, r.h, b[1]});
      g.h1 = std::max({g.h1, r.h, b[1]});
    }
    g.rows.push_back(&r);
  }
  for (Grid& g : out) {
    g.w1 = std::min(g.w1, g.w0 + kMaxCols - 1);
    g.h1 = std::min(g.h1, g.h0 + kMaxRows - 1);
  }
  return out;
}

std::string grid_svg(const Placement& p, const Grid& g, int top) {
  const int cs = g.cell();
  const bool has_h = p.map.rank >= 4;
  const int64_t W = int64_t(p.map.dims[1]), H = has_h ? int64_t(p.map.dims[2]) : 1;
  auto inside = [&](int64_t w, int64_t h) { return w >= g.w0 && w <= g.w1 && h >= g.h0 && h <= g.h1; };
  auto x_of = [&](int64_t w) { return kMargin + int(w - g.w0) * cs; };
  auto y_of = [&](int64_t h) { return top + kImageHead + int(h - g.h0) * cs; };
  std::string s = fmt::format("<g class=\"image\" data-n=\"{}\" data-d=\"{}\">\n", g.n, g.d);
  s += text(8, top + 14, 12,
            fmt::format("image n = {}{}: W {} x H {}{}", g.n, p.map.rank == 5 ? fmt::format(", d = {}", g.d) : "", W, H,
                        g.n < 0 || g.n >= int64_t(p.map.dims[p.map.rank - 1]) ? " (n out of bounds: every pixel OOB)"
                                                                              : ""),
            "image-title", "start");
  for (int64_t h = g.h0; h <= g.h1; ++h) {
    if (has_h) s += text(kMargin - 6, y_of(h) + cs / 2 + 4, std::min(10, cs), std::to_string(h), "axis", "end");
    for (int64_t w = g.w0; w <= g.w1; ++w) {
      const bool in = w >= 0 && w < W && h >= 0 && h < H;
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#bbbbbb\"/>\n", x_of(w),
                       y_of(h), cs, cs, in ? "#ffffff" : "url(#oob)");
    }
  }
  for (int64_t w = g.w0; w <= g.w1; ++w)
    if (cs >= 16 || w % 5 == 0) s += text(x_of(w) + cs / 2, top + kImageHead - 3, std::min(9, cs), std::to_string(w), "axis");
  // The walk: filter bases in order (main rows only), solid steps and dashed wraps.
  const model::Im2colRow* prev = nullptr;
  for (const model::Im2colRow* r : g.rows) {
    if (r->halo) continue;
    const auto b = base_of(p, *r);
    if (!inside(b[0], has_h ? b[1] : 0)) {
      prev = nullptr;
      continue;
    }
    const int bx = x_of(b[0]) + cs / 2, by = y_of(has_h ? b[1] : 0) + cs / 2;
    if (prev) {
      const auto a = base_of(p, *prev);
      const bool wrap = b[0] <= a[0] || (has_h && b[1] != a[1]);
      s += fmt::format("<line class=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.5\"{}/>\n",
                       wrap ? "wrap" : "step", x_of(a[0]) + cs / 2, y_of(has_h ? a[1] : 0) + cs / 2, bx, by,
                       wrap ? "#7f3fbf" : "#222222", wrap ? " stroke-dasharray=\"5,3\"" : "");
    }
    s += fmt::format("<circle class=\"base\" cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"#222222\"/>\n", bx, by);
    prev = r;
  }
  // Pixels read, numbered by shared row; OOB ones outlined in red, halo rows dashed.
  for (const model::Im2colRow* r : g.rows) {
    if (!inside(r->w, r->h)) continue;
    const std::string label = std::to_string(r->row);
    s += fmt::format("<g class=\"pixel\" data-row=\"{}\"><title>shared row {}: pixel w {} h {} d {} n {}{}{}</title>"
                     "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" fill-opacity=\"0.8\" stroke=\"{}\" stroke-width=\"2\"{}/>\n",
                     r->row, r->row, r->w, r->h, r->d, r->n, r->halo ? " (halo)" : "", r->in_bounds ? "" : ", OOB: filled",
                     x_of(r->w) + 2, y_of(r->h) + 2, cs - 4, cs - 4, row_colour(r->row),
                     r->in_bounds ? "#555555" : "#c0392b", r->halo ? " stroke-dasharray=\"3,2\"" : "");
    s += text(x_of(r->w) + cs / 2, y_of(r->h) + cs / 2 + 4, font_for(label, 10, cs), label, "row") + "</g>\n";
  }
  return s + "</g>\n";
}

}  // namespace

int walk_height(const Placement& p) {
  if (!p.im2col) return 0;
  int h = kHeader;
  for (const Grid& g : grids(p)) h += g.height();
  return h;
}

std::string walk_svg(const Placement& p, int top) {
  if (!p.im2col) return "";
  const auto& o = p.info.offsets;
  std::string s = "<g class=\"walk\">\n";
  s += text(8, top + 16, 13, "im2col walk over the input image", "walk-title", "start");
  s += text(8, top + 34, 11,
            fmt::format("numbered cell: the pixel that shared row N reads (its colour); red outline: OOB, filled with {}",
                        p.fill),
            "walk-caption", "start");
  s += text(8, top + 49, 11,
            fmt::format("hatched: outside the image; dots: filter bases = pixel - offsets ({},{},{}); solid: a step "
                        "along W; dashed: a wrap to the lower corner", o[0], o[1], o[2]),
            "walk-caption", "start");
  int y = top + kHeader;
  for (const Grid& g : grids(p)) {
    s += grid_svg(p, g, y);
    y += g.height();
  }
  return s + "</g>\n";
}

}  // namespace tmakit::layout::svg
