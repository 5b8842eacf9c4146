// Tiled mode (§2.1-§2.3, §3): one box between global memory and one CTA's
// shared memory. Pure functions of the map, the coordinates and the memories;
// the engine checks the instruction-level preconditions first (coordinate
// alignment §2.1 item 6 / H9, non-negative store coordinates H14, shared
// alignment H15) and accounts the byte count.
//
// Element k = (k0..k4), k[i] < N[i] = ceil(box[i] / E[i]), is tensor element
// g[i] = c[i] + k[i] * E[i] (E[0] = 1 unless interleaved, H16), in bounds iff
// 0 <= g[i] < dims[i] for every i; its global bytes start at
// global_address + sum g[i] * stride_bytes(i). In shared memory row
// r = k1 + N1 * (k2 + ...) starts at offset + r * pitch (pitch = row bytes,
// or max(row bytes, swizzle span) when swizzled, H2) and element k0 sits
// k0 * elemBytes into it, before swizzle_address() of the absolute offset.
//
// Faults (tmakit::DiagnosticError):
//   model.global-fault   an in-bound element's global bytes are in no allocation
//   model.shared-range   the box does not fit in the CTA's shared memory
//   model.map-unsupported the map is not a tiled map the model can walk
//                         (im2col, rank/box/element stride out of range); packed types
//                         (§2.5) go to packed.hpp, which refuses interleaved ones
//   model.coord-count    coords.size() != map.rank
//   model.reduce-type    tile_reduce on a map type with no reduction type
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "tmakit/model/memory.hpp"
#include "tmakit/spec/reduction.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::model {

// Global -> shared. OOB elements get the fill (zero bytes, or the OOB-NaN
// pattern of H4 for nan_request_zero_fma); in-bound f32 elements of TFLOAT32 /
// TFLOAT32_FTZ maps are rounded to tf32 (H3); everything else is a bit copy.
// Padding bytes of rows narrower than the swizzle span are left untouched.
void tile_load(const tensor_map::TensorMap& map, std::span<const int32_t> coords,
               const GlobalMemory& g, std::span<uint8_t> cta_smem, uint32_t dst_offset);

// Shared -> global, a bit copy for every type (H3). OOB elements are not
// written, except that whole 16-byte global chunks are written (H6): elements
// past dims[0] in the chunk of a row's last in-bound element get the shared
// values that map there (only where those bytes lie in the same allocation).
void tile_store(const tensor_map::TensorMap& map, std::span<const int32_t> coords,
                std::span<const uint8_t> cta_smem, uint32_t src_offset, GlobalMemory& g);

// Shared -> global with d = op(d, s) per element of red_type_for_map(map type),
// on the same element set as tile_store (H6 chunk extension included).
void tile_reduce(const tensor_map::TensorMap& map, std::span<const int32_t> coords, spec::RedOp op,
                 std::span<const uint8_t> cta_smem, uint32_t src_offset, GlobalMemory& g);

// The same three operations as the ISA describes them, one element and one byte at a time: the
// plain reference (src/model/tile_reference.cpp). The functions above are the fast walk the
// engine runs (src/model/fast/), kept equal to these by a property test on random maps.
namespace reference {
void tile_load(const tensor_map::TensorMap& map, std::span<const int32_t> coords, const GlobalMemory& g,
               std::span<uint8_t> cta_smem, uint32_t dst_offset);
void tile_store(const tensor_map::TensorMap& map, std::span<const int32_t> coords, std::span<const uint8_t> cta_smem,
                uint32_t src_offset, GlobalMemory& g);
void tile_reduce(const tensor_map::TensorMap& map, std::span<const int32_t> coords, spec::RedOp op,
                 std::span<const uint8_t> cta_smem, uint32_t src_offset, GlobalMemory& g);
}  // namespace reference

// The global bytes a tiled box's in-bound elements occupy, one span per row (widened to whole
// 16-byte chunks, H6), sorted and merged: what two operations in flight really share (their
// bounding ranges overlap whenever boxes sit side by side). nullopt where the rows are not
// contiguous runs (interleaved and packed maps) or number more than `max_rows`: use the
// bounding range then. Empty when no element is in bounds.
std::optional<std::vector<std::pair<uint64_t, uint64_t>>> tile_global_spans(const tensor_map::TensorMap& map,
                                                                           std::span<const int32_t> coords,
                                                                           size_t max_rows = 65536);

}  // namespace tmakit::model
