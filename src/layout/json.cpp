// The placement as JSON, for tools: every chunk with its physical and
// unswizzled offsets, its source row, its first element and its OOB count.
#include "tmakit/layout/render.hpp"
#include "tmakit/tensor_map/json.hpp"

namespace tmakit::layout {

nlohmann::json render_json(const Placement& p) {
  using nlohmann::json;
  json j = {{"format", "tmakit-layout/1"},
            {"map", tensor_map::map_to_json(p.map)},
            {"coords", p.coords},
            {"smem_offset", p.smem_offset},
            {"ctas", p.ctas},
            {"element_bytes", p.elem_bytes},
            {"unit_bytes", p.unit_bytes},
            {"row_bytes", p.row_bytes},
            {"pitch", p.pitch},
            {"rows", p.rows},
            {"swizzle_phase", p.phase},
            {"swizzle_period_lines", p.period_lines},
            {"fill", p.fill},
            {"lines_total", p.lines_total},
            {"lines_shown", p.lines_shown}};
  json chunks = json::array();
  for (const Chunk& c : p.chunks) {
    json e = {{"offset", c.offset}, {"logical", c.logical}, {"kind", name(c.kind)}};
    if (c.kind != ChunkKind::unused) e["row"] = c.row;
    if (c.split) e["split"] = true;
    if (c.kind != ChunkKind::unused && c.kind != ChunkKind::padding) {
      e["first"] = std::vector<int64_t>(c.first.begin(), c.first.begin() + p.map.rank);
      e["elements"] = c.elements;
      e["out_of_bounds"] = c.out_of_bounds;
    }
    chunks.push_back(std::move(e));
  }
  j["chunks"] = std::move(chunks);
  if (p.im2col) {
    j["im2col_offsets"] = p.info.offsets;
    j["w_halo"] = p.info.w_halo;
    j["w_offset"] = p.info.w_offset;
    json walk = json::array();
    for (const model::Im2colRow& r : p.walk)
      walk.push_back({{"row", r.row}, {"n", r.n}, {"d", r.d}, {"h", r.h}, {"w", r.w}, {"c", r.c},
                      {"halo", r.halo}, {"in_bounds", r.in_bounds}});
    j["walk"] = std::move(walk);
  }
  return j;
}

}  // namespace tmakit::layout
