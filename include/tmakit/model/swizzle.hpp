// Shared-memory swizzle (§3): the map from an unswizzled CTA-relative shared
// byte offset to the physical one. The swizzle XORs address bits with higher
// address bits of the same offset, so it is an involution: applying it again
// gives the unswizzled offset back (stores "unswizzle" with the same call).
#pragma once
#include <cstdint>

#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::model {

// Physical shared offset of unswizzled offset `smem_offset` (absolute address
// bits, H/§3.1 "absolute": offset 0 of the window is 1024-aligned).
//   32B            a ^ (((a >> 7) & 1) << 4)                        §3.1
//   64B            a ^ (((a >> 7) & 3) << 4)                        §3.1
//   128B           a ^ (((a >> 7) & 7) << 4)                        §3.1
//   128B_ATOM_32B  a ^ (((a >> 7) & 3) << 5)   32-byte granules     §3.4 (sm_100+, [I])
//   ..._FLIP_8B    as ATOM_32B, and bit 3 ^= bit 7 (8-byte halves)  §3.4 (sm_100+, [I])
//   128B_ATOM_64B  a ^ (((a >> 7) & 1) << 6)   64-byte granules     §3.4 (sm_100+, [I])
constexpr uint32_t swizzle_address(tensor_map::Swizzle s, uint32_t a) {
  using tensor_map::Swizzle;
  switch (s) {
    case Swizzle::none: return a;
    case Swizzle::b32: return a ^ (((a >> 7) & 1u) << 4);
    case Swizzle::b64: return a ^ (((a >> 7) & 3u) << 4);
    case Swizzle::b128: return a ^ (((a >> 7) & 7u) << 4);
    case Swizzle::b128_atom_32b: return a ^ (((a >> 7) & 3u) << 5);
    case Swizzle::b128_atom_32b_flip_8b: return a ^ (((a >> 7) & 3u) << 5) ^ (((a >> 7) & 1u) << 3);
    case Swizzle::b128_atom_64b: return a ^ (((a >> 7) & 1u) << 6);
  }
  return a;
}

// Bytes after which the pattern repeats (the XOR source bits 7.. wrap):
// 256 / 512 / 1024 for 32B / 64B / 128B (§3.1 table), 512 / 512 / 256 for the
// atom variants (source bits 7-8, 7-8, 7), 0 for none.
uint32_t swizzle_repeat_bytes(tensor_map::Swizzle);

// Largest aligned block of bytes the swizzle moves as a unit: 16 for the §3.1
// modes, 32 / 8 / 64 for the atom variants (§3.4), 0 (everything) for none.
// A copy may move each aligned block of this size with one memcpy.
uint32_t swizzle_granule_bytes(tensor_map::Swizzle);

// Width of one shared-memory row slot when swizzled (§1.3 span: 32, 64, 128 for
// every 128B variant); 0 for none. Rows narrower than this occupy a full span (H2).
uint32_t swizzle_span_bytes(tensor_map::Swizzle);

}  // namespace tmakit::model
