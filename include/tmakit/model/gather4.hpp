// `.tile::gather4` loads (and prefetches) and `.tile::scatter4` stores (§5,
// sm_100+): four rows of a 2-D tiled map, one coordinate vector
// {col, row0, row1, row2, row3}.
//
// Map (§5, PTX-T 5.5.3.4): tiled, rank 2, interleave none, box[1] = 1 (one row
// per box; box[0] is the row length). Every other tiled rule applies.
// Shared memory ([I] §5, decided in docs/hardware-notes.md "sm_100 decisions"):
// the four rows back to back in the order row0..row3, row k at
// offset + k × pitch with pitch = the map's row pitch (max(row bytes, swizzle
// span), H2), swizzled by absolute address bits as a 4-row tile box would be.
// Row k is tensor row row_k from column col on; an OOB row or element is filled
// on load (§2.2) and skipped on store (with the 16-byte chunk rule H6).
// Byte count: 4 × box[0] × element size, OOB rows included (§2.3 applied per row).
#pragma once
#include <cstdint>
#include <span>
#include <utility>

#include "tmakit/diag.hpp"
#include "tmakit/model/memory.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::model {

inline constexpr int kGather4Rows = 4;     // §5: four rows per instruction
inline constexpr int kGather4Coords = 5;   // {col, row0, row1, row2, row3}

// Instruction-time checks: the map's shape (gather4.map-rank, gather4.box-rows,
// gather4.interleave) and the coordinates (the tiled rules of check_coordinates
// for col; coord.store-negative for each row of a scatter4, H14 / PTX-R).
Diagnostics gather4_check(const tensor_map::TensorMap& map, std::span<const int32_t> coords,
                          tensor_map::Direction dir, const spec::Target& target);

uint64_t gather4_bytes(const tensor_map::TensorMap& map);      // the mbarrier transaction count
uint64_t gather4_footprint(const tensor_map::TensorMap& map);  // shared bytes: 4 × row pitch

// [lo, hi) global bytes the four rows can touch (16-byte chunks, H6); {0, 0} if none.
std::pair<uint64_t, uint64_t> gather4_global_extent(const tensor_map::TensorMap& map,
                                                    std::span<const int32_t> coords);

// The walks. Throw DiagnosticError (the first gather4_check error as
// model.map-unsupported / the rule, model.global-fault, model.shared-range).
void gather4_load(const tensor_map::TensorMap& map, std::span<const int32_t> coords, const GlobalMemory& g,
                  std::span<uint8_t> cta_smem, uint32_t dst_offset);
void scatter4_store(const tensor_map::TensorMap& map, std::span<const int32_t> coords,
                    std::span<const uint8_t> cta_smem, uint32_t src_offset, GlobalMemory& g);

}  // namespace tmakit::model
