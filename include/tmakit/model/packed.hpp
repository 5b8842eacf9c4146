// Packed sub-byte types in tiled mode (§1.2, §2.5, sm_100+): where each value
// of a 16U4_ALIGN8B, 16U4_ALIGN16B or 16U6_ALIGN16B box lands in shared memory.
// tile_load / tile_store hand packed maps here.
//
// A group of 16 values (value i at bits 4i or 6i of the little-endian group,
// low bits first, §2.5 [I]):
//   type            global bytes  shared bytes  shared layout
//   16u4_align8b          8             8        the same bytes (copied verbatim both ways)
//   16u4_align16b         8            16        load: 8 data bytes, then 8 pad bytes; no store (PTX-R)
//   16u6_align16b        12            16        load: 12 data bytes, then 4 pad bytes
//                                                store (.b6p2x16): one value per byte in bits 0-5
//                                                (bits 6-7 dropped), packed to 12 bytes
// Pad bytes are left untouched (the PTX ISA leaves them uninitialized). OOB
// groups load as zero bytes (NaN fill is invalid for packed types, §1.3) and are
// skipped by stores (with the 16-byte chunk rule of H6 on the packed bytes).
// Rows are placed and swizzled as in tile mode: row r at offset + r × row_pitch,
// each shared byte at swizzle_address() of its absolute offset. The mbarrier
// count is the map's bytes_per_box(): the shared bytes, pad included.
//
// Faults: model.map-unsupported (not tiled, interleaved, a count not a whole
// number of groups), coord.packed-direction (16u4_align16b store), and the tile
// walk's model.global-fault / model.shared-range (global positions in bytes).
#pragma once
#include <cstdint>
#include <span>

#include "tmakit/model/memory.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::model {

void packed_load(const tensor_map::TensorMap& map, std::span<const int32_t> coords, const GlobalMemory& g,
                 std::span<uint8_t> cta_smem, uint32_t dst_offset);
void packed_store(const tensor_map::TensorMap& map, std::span<const int32_t> coords,
                  std::span<const uint8_t> cta_smem, uint32_t src_offset, GlobalMemory& g);

// The 16U6 store packing of one 16-value group: bits 0-5 of each of the 16 bytes
// to 12 bytes (value i at bits 6i..6i+5). Exposed for tests.
void pack_b6p2x16(const uint8_t* sixteen, uint8_t* twelve);

}  // namespace tmakit::model
