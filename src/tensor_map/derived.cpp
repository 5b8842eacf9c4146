// Facts derived from a map: element counts, byte counts, shared-memory geometry.
// Spec: §2.1 item 1 (N = ceil(B / E)), §2.3 and H17 (byte count), §3.3 and H2
// (row pitch), H15 and §3.1 (alignment and swizzle period), §4.2 (im2col rows).
#include <algorithm>

#include "detail.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::tensor_map {
namespace {

int dims_in_range(int rank) { return std::clamp(rank, 0, kMaxRank); }

uint32_t pixels(const TensorMap& m) {
  // §1.5: W128 mode always reads 128 pixels; pixelsPerColumn is ignored.
  if (m.encode == Encode::im2col_wide && m.wide_mode == WideMode::w128) return 128;
  return m.pixels_per_column;
}

uint64_t bits_to_bytes(uint64_t bits) { return bits / 8 + (bits % 8 ? 1 : 0); }

}  // namespace

// Interleaved tiled maps (Q26, docs/hardware-notes.md "interleave decisions"): an element
// of dimension 0 is one whole slice of 16 or 32 bytes, whatever the data type, and
// dimension rank-2 is walked once (its box and element stride are ignored). Interleaved
// im2col maps (item 9 there): every shared row is one slice, whatever channelsPerPixel.
uint32_t TensorMap::slice_bytes() const {
  if (encode != Encode::tiled && encode != Encode::im2col) return 0;
  return interleave == Interleave::b16 ? 16 : interleave == Interleave::b32 ? 32 : 0;
}

uint64_t TensorMap::stride_bytes(int i) const {
  if (i <= 0) return static_cast<uint64_t>(element_bytes(data_type));
  if (i >= kMaxRank) return 0;
  return strides[i - 1];
}

uint32_t TensorMap::traversal_stride(int i) const {
  if (i < 0 || i >= kMaxRank) return 1;
  // H16: with interleave none elementStrides[0] is accepted and ignored.
  if (i == 0 && interleave == Interleave::none) return 1;
  // 0 is invalid (map.element-stride-range); treat it as 1 so derived facts stay defined.
  return element_strides[i] == 0 ? 1 : element_strides[i];
}

uint32_t TensorMap::elements(int i) const {
  if (encode != Encode::tiled) {
    if (i == 0) return slice_bytes() ? 1 : channels_per_pixel;  // Q26: one slice a row
    if (i == 1) return pixels(*this);
    return 1;
  }
  if (i < 0 || i >= dims_in_range(rank)) return 1;
  if (slice_bytes() && rank >= 3 && i == rank - 2) return 1;  // Q26: walked once
  uint64_t e = traversal_stride(i);
  return static_cast<uint32_t>((uint64_t{box[i]} + e - 1) / e);
}

uint64_t TensorMap::bytes_per_box() const {
  // H17: Π ceil(box[i]/E[i]) × elemBytes (not clipped to the tensor), or
  // channelsPerPixel × pixelsPerColumn × elemBytes for im2col.
  int n = encode == Encode::tiled ? dims_in_range(rank) : 2;
  uint64_t count = 1;
  for (int i = 0; i < n; ++i) count = detail::mul_sat(count, elements(i));
  if (uint32_t s = slice_bytes()) return detail::mul_sat(count, s);  // Q26: whole slices
  uint64_t bits = detail::mul_sat(count, static_cast<uint64_t>(smem_bits_per_element(data_type)));
  return bits == UINT64_MAX ? bits : bits_to_bytes(bits);
}

uint32_t TensorMap::row_bytes() const {
  if (uint32_t s = slice_bytes()) return static_cast<uint32_t>(std::min<uint64_t>(uint64_t{elements(0)} * s, UINT32_MAX));
  uint64_t bits = uint64_t{elements(0)} * static_cast<uint64_t>(smem_bits_per_element(data_type));
  return static_cast<uint32_t>(std::min<uint64_t>(bits_to_bytes(bits), UINT32_MAX));
}

uint32_t TensorMap::row_pitch() const {
  // H2: a row narrower than the swizzle span still occupies a full span; interleaved
  // rows are dense (Q26: 64-byte rows under 128B swizzle lie 64 bytes apart).
  if (slice_bytes()) return row_bytes();
  return std::max<uint32_t>(row_bytes(), static_cast<uint32_t>(swizzle_span(swizzle)));
}

uint64_t TensorMap::rows() const {
  if (encode != Encode::tiled) return pixels(*this);
  uint64_t r = 1;
  for (int i = 1; i < dims_in_range(rank); ++i) r = detail::mul_sat(r, elements(i));
  return r;
}

uint64_t TensorMap::smem_footprint() const {
  // A swizzle moves 16-byte chunks only inside their aligned span (§3.1), so the box
  // reaches to the end of its last span: only dense interleaved rows (Q26) can end
  // inside one (64-byte rows under 128B swizzle).
  const uint64_t bytes = detail::mul_sat(rows(), row_pitch());
  const uint64_t span = static_cast<uint64_t>(swizzle_span(swizzle));
  return span == 0 || bytes == UINT64_MAX ? bytes : (bytes + span - 1) / span * span;
}

// H15: 16- to 64-byte aligned operands fault on sm_90; 128 is the minimum for every swizzle.
uint32_t TensorMap::smem_alignment() const { return 128; }

uint32_t TensorMap::swizzle_period() const {
  switch (swizzle) {
    case Swizzle::none: return 128;  // no pattern: any legal (128-aligned) address is phase 0
    case Swizzle::b32: return 256;   // §3.1 table
    case Swizzle::b64: return 512;
    default: return 1024;  // 128B and the sm_100 ATOM variants: 1024 is a multiple of every
                           // period §3.4's [I] bit mappings give (256, 512), so it is safe
  }
}

}  // namespace tmakit::tensor_map
