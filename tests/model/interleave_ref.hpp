// What the interleave tests (test_interleave.cpp: tiled, test_interleave_im2col.cpp:
// im2col) share, written from the H100 probes' rule (docs/hardware-notes.md
// "interleave decisions"): units of one 16- or 32-byte slice, placed densely in walk
// order and swizzled by the §3.1 XOR; OOB units are zero or the 0x7FF7 NaN pattern.
#pragma once
#include <cstdint>
#include <vector>

#include "tmakit/model/memory.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace interleave_ref {

using tmakit::model::GlobalMemory;
using namespace tmakit::tensor_map;

inline uint32_t slice_of(Interleave il) { return il == Interleave::b16 ? 16 : 32; }

// §3.1 on a shared offset whose window starts 1024-aligned: chunk bits 4-6 XOR line bits.
inline uint32_t xor_swizzle(Swizzle s, uint32_t a) {
  const uint32_t mask = s == Swizzle::b32 ? 1 : s == Swizzle::b64 ? 3 : s == Swizzle::b128 ? 7 : 0;
  return a ^ (((a >> 7) & mask) << 4);
}

// One slice of the walk: in bounds, and its global byte address (in bounds only).
struct Unit {
  bool in;
  uint64_t global;
};

// `smem` with unit j's bytes (or the fill) at the swizzled dst + j × slice.
inline std::vector<uint8_t> place(const TensorMap& m, const std::vector<Unit>& units, const GlobalMemory& g,
                                  std::vector<uint8_t> smem, uint32_t dst) {
  const uint32_t s = slice_of(m.interleave);
  for (size_t j = 0; j < units.size(); ++j)
    for (uint32_t b = 0; b < s; ++b) {
      uint8_t v = 0;
      if (units[j].in) v = *g.find(units[j].global + b, 1);
      else if (m.oob_fill == OobFill::nan_request_zero_fma) v = b % 2 ? 0x7F : 0xF7;  // 0x7FF7, every float type
      smem[xor_swizzle(m.swizzle, dst + uint32_t(j) * s + b)] = v;
    }
  return smem;
}

// Strides that are multiples of 32 past each dimension's extent (dims[0] slices), with
// up to 64 bytes of padding drawn by irand(lo, hi).
template <class Irand>
void padded_strides(TensorMap& m, Irand&& irand) {
  uint64_t prev = m.dims[0] * slice_of(m.interleave);
  for (int i = 0; i + 1 < m.rank; ++i) {
    m.strides[i] = prev + 32 * irand(0, 2);
    prev = m.strides[i] * m.dims[i + 1];
  }
}

// Bytes from the tensor's base to the end of its last slice.
inline uint64_t tensor_end(const TensorMap& m) {
  uint64_t last = m.dims[0] * slice_of(m.interleave);
  for (int i = 1; i < m.rank; ++i) last += (m.dims[i] - 1) * m.strides[i - 1];
  return last;
}

}  // namespace interleave_ref
