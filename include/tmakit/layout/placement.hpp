// Where a tensor load puts each 16-byte chunk of shared memory: the one place
// that works it out, so the SVG, text and JSON pictures (render.hpp) agree.
//
// A chunk is the unit the §3.1 swizzles move (16 bytes; the §3.4 atom modes move
// 32/64-byte granules or swap 8-byte halves inside a chunk, so a chunk still
// holds one logical chunk's bytes). Every swizzle XORs address bits below bit 7
// with bits 7 and up, so a chunk stays in its 128-byte line: the picture is
// drawn line by line and a line of the unswizzled box is a line of the picture.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tmakit/model/im2col.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::layout {

enum class ChunkKind {
  data,     // every element in bounds
  partial,  // some elements in bounds, the rest filled (§2.1 items 2-3)
  oob,      // every element out of bounds: the fill value (H4)
  padding,  // the tail of a row narrower than the swizzle span (H2); left untouched
  unused,   // in the last line but past the end of the box
};
std::string_view name(ChunkKind);

struct Chunk {
  uint32_t offset = 0;   // physical CTA-relative shared offset, 16-byte aligned
  uint32_t logical = 0;  // where the same bytes sit without swizzle (== offset for none)
  ChunkKind kind = ChunkKind::unused;
  uint64_t row = 0;                // shared row r (§2.1 item 5); padding: the row it pads
  std::array<int64_t, 5> first{};  // tensor coordinates of the chunk's first element, dim 0 first
  uint32_t elements = 0;           // units (elements, or slices) whose bytes lie in the chunk
  uint32_t out_of_bounds = 0;      // of them filled
  bool split = false;              // also holds the start of the next row (rows not a multiple of 16 bytes)
};

struct Placement {
  tensor_map::TensorMap map;
  std::vector<int32_t> coords;
  uint32_t smem_offset = 0;
  int elem_bytes = 0;
  // Bytes one step along dimension 0 moves: the element, or for an interleaved map the
  // whole 16- or 32-byte slice (Q26: dimension 0 then counts slices; chunk labels name them).
  int unit_bytes = 0;
  uint32_t row_bytes = 0, pitch = 0;  // pitch = max(row bytes, swizzle span) (H2)
  uint64_t rows = 0;
  // Swizzle phase of the first line: the box starts `phase` lines into the
  // pattern's period of `period_lines` 128-byte lines (§3.1: 2/4/8 lines).
  uint32_t phase = 0, period_lines = 0;
  uint64_t lines_total = 0;  // 128-byte lines the box spans
  uint32_t lines_shown = 0;  // of them placed (the rest is cut off: a picture, not a dump)
  std::string fill;          // the OOB fill value, named: "0" or "NaN 0x7ff77ff7"
  std::vector<int> ctas{0};  // destination CTAs: one panel each (multicast::cluster, §10.1)
  std::vector<Chunk> chunks; // lines_shown × 8, in physical order from smem_offset
  // im2col only: the instruction's offsets and the walk, one entry per shared row.
  bool im2col = false;
  model::Im2colInfo info;
  std::vector<model::Im2colRow> walk;
};

// Tensor coordinates of an im2col row's first element, dimension 0 first:
// {c, w, n}, {c, w, h, n} or {c, w, h, d, n} by rank.
std::array<int64_t, 5> im2col_coordinates(int rank, const model::Im2colRow& row);

// XOR the swizzle applies to the chunk offsets of the line at absolute offset `line`.
uint32_t line_xor(tensor_map::Swizzle s, uint32_t line);

// The placement of a tiled load (§2.1-§2.3, §3) of `map` at `coords` into
// shared memory at `smem_offset` (128-byte aligned, H15), at most `max_lines`
// lines. The map must be a valid tiled map of a non-packed type; throws
// DiagnosticError (layout.unsupported, layout.coord-count, layout.smem-align).
Placement place_tile(const tensor_map::TensorMap& map, std::span<const int32_t> coords, uint32_t smem_offset,
                     uint32_t max_lines = 64);

// The placement of an im2col load (§4.2): row r holds channels c.. of the r-th
// pixel of the walk (model::im2col_rows). Throws DiagnosticError as place_tile,
// and the model's im2col faults (tensor.im2col-offset-range, ...).
Placement place_im2col(const tensor_map::TensorMap& map, std::span<const int32_t> coords,
                       const model::Im2colInfo& info, uint32_t smem_offset, uint32_t max_lines = 64);

}  // namespace tmakit::layout
