// im2col modes (§4, §1.4, §1.5, H11): one column of pixels between global memory
// and one CTA's shared memory. Pure functions of the map, the coordinates, the
// instruction's im2colInfo and the memories, like tile.hpp; the engine checks the
// instruction-level preconditions that tiled mode shares (coordinate alignment
// H9, non-negative store coordinates H14, shared alignment H15) and accounts the
// byte count (im2col_bytes).
//
// The walk (§4.2, H11). Coordinates are {c, w, (h), (d), n} (rank entries). A
// filter base (w, h, d, n) starts at the coordinates; shared row p receives
// channels c .. c + channelsPerPixel - 1 of the input pixel base + offsets.
// Then w += strideW; past W - 1 + upperW it wraps to lowerW and h advances by
// strideH, and so on into D and finally n += strideN. Strides are
// elementStrides[1 .. rank-1]: the H100 steps n by elementStrides[rank-1] too
// (§4.2 step 3 said n += 1; tests/vectors/im2col_load/0080 shows otherwise);
// elementStrides[0] is ignored.
// Corner entry 0 applies to W, 1 to H, 2 to D (H11).
//
// .im2col::w / ::w::128 (sm_100+, §4.4, [I] beyond PTX-T 5.5.5): only W walks; H
// and D stay at the coordinates, and a wrap of W carries straight into n. The
// box's W corners and the W coordinate are shifted by +wOffset; the W coordinate
// may lie left of the box, never right of it. ::w loads pixelsPerColumn main rows
// then wHalo halo rows; ::w::128 loads 128 main rows in four groups of 32, each
// followed by wHalo halo rows. Halo row k (1-based) after a main row at w reads
// w + k × strideW, same n, h, d, with no wrap (docs/hardware-notes.md,
// "im2col decisions").
//
// Shared memory: row r at offset + r × pitch (pitch = channelsPerPixel ×
// elemBytes, or max(that, swizzle span) when swizzled, H2), swizzled on absolute
// offsets like a tiled box (§3). OOB channels (< 0 or >= C) and OOB pixels (a
// spatial coordinate outside [0, size), n outside [0, N)) are filled as in tile
// mode: zeros or the OOB-NaN (H4). complete_tx counts every row, OOB included.
//
// Faults (tmakit::DiagnosticError):
//   tensor.im2col-offset-range  an im2col offset, wHalo or wOffset outside its range (§4.1, §4.4)
//   tensor.im2col-base-outside-box  the filter base outside [lower, X - 1 + upper] (§4.1, §13 item 6)
//   tensor.map-kind             .im2col::w on a W128 map or the reverse (§2.1 item 8)
//   model.map-unsupported       not an im2col map the model walks (interleaved, packed types, rank)
//   model.coord-count           coords.size() != map.rank
//   model.global-fault          an in-bound element's bytes are in no allocation
//   model.shared-range          the rows do not fit in the CTA's shared memory
#pragma once
#include <array>
#include <optional>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "tmakit/ptx/step.hpp"
#include "tmakit/model/memory.hpp"
#include "tmakit/spec/reduction.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::model {

enum class Im2colMode : uint8_t { im2col /* .im2col, .im2col_no_offs */, w /* .im2col::w */, w128 /* .im2col::w::128 */ };

// The instruction's im2colInfo operand (Appendix A). .im2col_no_offs: all zero.
struct Im2colInfo {
  Im2colMode mode = Im2colMode::im2col;
  std::array<int64_t, 3> offsets{};  // .im2col: i2cOffW, i2cOffH, i2cOffD (the first rank - 2)
  int64_t w_halo = 0, w_offset = 0;  // .im2col::w, .im2col::w::128
};

// The walk a decoded load mode takes (.im2col and .im2col_no_offs: im2col; .im2col::w,
// .im2col::w::128); nullopt for the tiled modes.
std::optional<Im2colMode> im2col_mode_of(ptx::LoadMode mode);

// What shared row `row` holds: channels c .. c + channelsPerPixel - 1 of input pixel
// (n, d, h, w) (d and h are 0 where the rank lacks them). Interleaved maps (Q26): one
// slice; w, h, d hold the walked dimensions 0..rank-3 (C in slices, W, H), c is 0, and
// dimension rank-2 stays at its coordinate.
struct Im2colRow {
  uint32_t row = 0;
  int64_t n = 0, d = 0, h = 0, w = 0;
  int64_t c = 0;
  bool halo = false;       // a halo row of .im2col::w / ::w::128
  bool in_bounds = false;  // the pixel lies in the tensor (its channels may still be partly OOB)
  friend bool operator==(const Im2colRow&, const Im2colRow&) = default;
};

// The walk's preconditions (the fault list above, except the memory ones).
void im2col_check(const tensor_map::TensorMap& map, std::span<const int32_t> coords, const Im2colInfo& info);

// Every shared row, in order (checks first). For layout tools and tests.
std::vector<Im2colRow> im2col_rows(const tensor_map::TensorMap& map, std::span<const int32_t> coords,
                                   const Im2colInfo& info);

// Rows one instruction moves: pixelsPerColumn (im2col, ::w) or 128 (::w::128), plus halo rows.
uint64_t im2col_row_count(const tensor_map::TensorMap& map, const Im2colInfo& info);
// Bytes a load delivers (complete_tx): rows × channelsPerPixel × elemBytes, OOB included (§4.2).
uint64_t im2col_bytes(const tensor_map::TensorMap& map, const Im2colInfo& info);
// Shared bytes the rows occupy: rows × pitch.
uint64_t im2col_footprint(const tensor_map::TensorMap& map, const Im2colInfo& info);
// [lo, hi) global bytes the in-bound elements span, widened to 16-byte chunks (H6); {0, 0} if none.
std::pair<uint64_t, uint64_t> im2col_global_extent(const tensor_map::TensorMap& map, std::span<const int32_t> coords,
                                                   const Im2colInfo& info);

// Global -> shared (.im2col, .im2col::w, .im2col::w::128). TFLOAT32 maps round in-bound
// elements to tf32 (H3); padding bytes of rows narrower than the swizzle span are untouched.
void im2col_load(const tensor_map::TensorMap& map, std::span<const int32_t> coords, const Im2colInfo& info,
                 const GlobalMemory& g, std::span<uint8_t> cta_smem, uint32_t dst_offset);

// Shared -> global (.im2col_no_offs): the walk with offsets 0, in-bound elements only, plus
// the rest of the 16-byte global chunk of each row's last in-bound element (H6, Q20 decision).
void im2col_store(const tensor_map::TensorMap& map, std::span<const int32_t> coords,
                  std::span<const uint8_t> cta_smem, uint32_t src_offset, GlobalMemory& g);

// The same element set with d = op(d, s) (red_type_for_map of the map type).
void im2col_reduce(const tensor_map::TensorMap& map, std::span<const int32_t> coords, spec::RedOp op,
                   std::span<const uint8_t> cta_smem, uint32_t src_offset, GlobalMemory& g);

}  // namespace tmakit::model
