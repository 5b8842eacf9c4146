// layout/: where a tensor load puts each 16-byte chunk, as SVG, text and JSON
// (the three renderings `tmakit layout --format svg|text|json` writes).
#include <algorithm>

#include "bindings.hpp"
#include "convert.hpp"
#include "tmakit/layout/placement.hpp"
#include "tmakit/layout/render.hpp"

namespace tmakit::python {
namespace {

namespace tm = tensor_map;

// im2colInfo follows the map, as `tmakit layout` reads it (layout_command.cpp's info_for).
model::Im2colInfo info_for(const tm::TensorMap& m, const std::vector<int64_t>& offsets, int64_t w_halo,
                           int64_t w_offset) {
  model::Im2colInfo info;
  if (m.encode == tm::Encode::im2col_wide)
    info.mode = m.wide_mode == tm::WideMode::w128 ? model::Im2colMode::w128 : model::Im2colMode::w;
  if (info.mode == model::Im2colMode::im2col) {
    if (offsets.size() > 3)
      unusable("cli.offsets", std::to_string(offsets.size()) + " offsets given; im2col has at most 3 (W, H, D)",
               "offsets");
    std::copy(offsets.begin(), offsets.end(), info.offsets.begin());
  }
  info.w_halo = w_halo;
  info.w_offset = w_offset;
  return info;
}

// (svg, text, json): the map must already be valid and the coordinates checked (the package does both first).
std::tuple<std::string, std::string, std::string> render(const std::string& map_json, const std::vector<int32_t>& coords,
                                                         uint32_t smem_offset, uint32_t max_lines,
                                                         const std::vector<int64_t>& offsets, int64_t w_halo,
                                                         int64_t w_offset) {
  const tm::TensorMap map = map_of(map_json, "map");
  layout::Placement p;
  {
    nb::gil_scoped_release unlocked;
    p = map.encode == tm::Encode::tiled
            ? layout::place_tile(map, coords, smem_offset, max_lines)
            : layout::place_im2col(map, coords, info_for(map, offsets, w_halo, w_offset), smem_offset, max_lines);
  }
  return {layout::render_svg(p), layout::render_text(p), layout::render_json(p).dump(2) + "\n"};
}

}  // namespace

void bind_layout(nb::module_& m) {
  m.def("layout_render", &render, nb::arg("map_json"), nb::arg("coords"), nb::arg("smem_offset"), nb::arg("max_lines"),
        nb::arg("offsets"), nb::arg("w_halo"), nb::arg("w_offset"));
}

}  // namespace tmakit::python
