#include "tmakit/model/swizzle.hpp"

namespace tmakit::model {

using tensor_map::Swizzle;

uint32_t swizzle_repeat_bytes(Swizzle s) {
  switch (s) {
    case Swizzle::none: return 0;
    case Swizzle::b32: return 256;   // §3.1 period
    case Swizzle::b64: return 512;
    case Swizzle::b128: return 1024;
    case Swizzle::b128_atom_32b: return 512;          // source bits 7-8 (§3.4)
    case Swizzle::b128_atom_32b_flip_8b: return 512;  // source bits 7-8
    case Swizzle::b128_atom_64b: return 256;          // source bit 7
  }
  return 0;
}

uint32_t swizzle_granule_bytes(Swizzle s) {
  switch (s) {
    case Swizzle::none: return 0;
    case Swizzle::b32:
    case Swizzle::b64:
    case Swizzle::b128: return 16;  // 16-byte chunks (§3.1)
    case Swizzle::b128_atom_32b: return 32;
    case Swizzle::b128_atom_32b_flip_8b: return 8;  // the flip swaps 8-byte halves
    case Swizzle::b128_atom_64b: return 64;
  }
  return 0;
}

uint32_t swizzle_span_bytes(Swizzle s) {
  switch (s) {
    case Swizzle::none: return 0;
    case Swizzle::b32: return 32;
    case Swizzle::b64: return 64;
    default: return 128;  // every 128B variant (§1.3 swizzle row)
  }
}

}  // namespace tmakit::model
