// Pieces the SVG pictures share (svg.cpp: shared memory; walk.cpp: the im2col
// walk over the input image): page width, colours, text escaping.
#pragma once
#include <cstdint>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "tmakit/layout/placement.hpp"

namespace tmakit::layout::svg {

constexpr int kWidth = 1062;  // pixels: the left margin, eight 112-pixel chunk cells, a border

// Pastel colours for source rows (shared rows, and the pixels they read); neighbours differ strongly.
constexpr std::array<const char*, 10> kRowColours{"#9ecae1", "#fdae6b", "#a1d99b", "#fc9272", "#bcbddc",
                                                  "#fdd0a2", "#c7e9c0", "#9e9ac8", "#fbb4c4", "#d9d9a0"};
inline const char* row_colour(uint64_t row) { return kRowColours[row % kRowColours.size()]; }
constexpr const char* kPadColour = "#d0d0d0";
constexpr const char* kUnusedColour = "#f6f6f6";

inline std::string esc(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

// Shrinks long labels to fit `width` pixels: monospace is ~0.6 em wide.
inline double font_for(std::string_view label, double max_px, int width) {
  return std::min(max_px, (width - 8) / (0.6 * double(std::max<size_t>(label.size(), 1))));
}

inline std::string text(int x, int y, double size, std::string_view s, std::string_view cls = {},
                        std::string_view anchor = "middle") {
  return fmt::format("<text{} x=\"{}\" y=\"{}\" font-size=\"{:.1f}\" text-anchor=\"{}\">{}</text>\n",
                     cls.empty() ? "" : fmt::format(" class=\"{}\"", cls), x, y, size, anchor, esc(s));
}

// The im2col walk over the input image (walk.cpp), drawn from `top`; empty for tiled loads.
std::string walk_svg(const Placement& p, int top);
int walk_height(const Placement& p);

}  // namespace tmakit::layout::svg
