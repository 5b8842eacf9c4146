// Pictures of a Placement: the same data three ways. Each returns the whole
// document as a string, so a caller writes all of it or nothing.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "tmakit/layout/placement.hpp"

namespace tmakit::layout {

// One 16-byte chunk label: the tensor coordinates of its first element,
// dimension 0 first ("32,7"). The SVG, the text and the tests read the same text.
std::string chunk_label(const Placement& p, const Chunk& c);
// Names of the label's coordinates: "x,y" for a rank-2 tile, "c,w,h,n" for a rank-4 im2col map.
std::string coordinate_names(const Placement& p);
// One line naming the map, coordinates and offset ("float32 dims [...] ...").
std::string headline(const Placement& p);
// The swizzle sentence: mode, phase from the destination address, pitch, fill.
std::string swizzle_line(const Placement& p);

// SVG 1.1: shared memory as rows of 16-byte chunks, eight per 128-byte line,
// coloured by source row; OOB hatched with the fill named; padding shaded; one
// panel per destination CTA. Each chunk is a <g class="chunk" data-offset=...>
// holding a <rect> and a <text class="label">.
std::string render_svg(const Placement& p);
// The same grid for terminals.
std::string render_text(const Placement& p);
// For tools: "format": "tmakit-layout/1", the map, geometry and every chunk.
nlohmann::json render_json(const Placement& p);

}  // namespace tmakit::layout
