// The validator's checker (validate()), shared by its files: rules.cpp (rank,
// address, dims, strides, box, element strides, interleave, swizzle, size, packed
// types), rules_im2col.cpp (im2col and im2col_wide), rules_advice.cpp (advice on
// maps the driver accepts). Limits cite the spec section they come from.
#pragma once
#include <cstdint>
#include <algorithm>
#include <fmt/format.h>
#include <string>

#include "detail.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::tensor_map::checker {

inline constexpr Severity E = Severity::error, W = Severity::warning, N = Severity::note;

inline constexpr uint64_t kMaxDim = uint64_t{1} << 32;      // §1.3 globalDim ≤ 2^32
inline constexpr uint64_t kStrideLimit = uint64_t{1} << 40;  // §1.3 globalStrides < 2^40
inline constexpr uint32_t kMaxBox = 256;                     // §1.3 boxDim ≤ 256
inline constexpr uint32_t kMaxElementStride = 8;             // §1.3 elementStrides ≤ 8
inline constexpr uint64_t kMaxBoxBytes = 233472;             // H17, HW1: 228 KiB per instruction
inline constexpr uint32_t kMaxChannels = 256;                // §1.4 channelsPerPixel ≤ 256
inline constexpr uint32_t kMaxPixels = 1024;                 // §1.4 pixelsPerColumn ≤ 1024

inline bool packed16(DataType t) { return t == DataType::u4_align16b || t == DataType::u6_align16b; }
inline bool is_atom(Swizzle s) {
  return s == Swizzle::b128_atom_32b || s == Swizzle::b128_atom_32b_flip_8b || s == Swizzle::b128_atom_64b;
}
inline bool sm100_or_later(const spec::Target& t) { return t.arch >= 100; }

// Dims far past 2^32 are reported by map.global-dim-range; keep the signed sum defined.
inline int64_t clamp_dim(uint64_t d) { return static_cast<int64_t>(std::min<uint64_t>(d, uint64_t{1} << 40)); }

inline std::string idx(const char* field, int i) { return fmt::format("{}[{}]", field, i); }

class Checker {
 public:
  Checker(const TensorMap& m, const spec::Target& t) : m_(m), t_(t) {}
  Diagnostics run();

 private:
  void add(std::string_view rule, std::string message, std::string where) {
    const MapRule* r = find_map_rule(rule);
    d_.push_back({r ? r->severity : Severity::error, std::string(rule), std::move(message), std::move(where)});
  }
  uint64_t elem_bits() const { return static_cast<uint64_t>(smem_bits_per_element(m_.data_type)); }
  std::string elem_text() const { return detail::bytes_text(elem_bits()); }
  bool tiled() const { return m_.encode == Encode::tiled; }
  // Whether an error already names `field` (a prefix: "dims[" is every dimension).
  // Advice derived from a value already in error only adds noise, so it is skipped.
  bool in_error(std::string_view field) const {
    return std::any_of(d_.begin(), d_.end(),
                       [&](const Diagnostic& d) { return d.severity == E && d.where.rfind(field, 0) == 0; });
  }

  void rank_and_target();
  void address();
  void dims_and_strides(int r);
  void box(int r);
  void element_strides(int r);
  void interleave_and_swizzle(int r);
  void fill_and_size();
  uint64_t driver_box_bytes() const;
  void packed(int r);
  void im2col(int r);
  void im2col_box_empty(int d, int64_t lower, int64_t upper, const std::string& where, const char* corners);
  void im2col_channel_bytes();
  void advisories(int r);
  void stride_overlap(int r);

  const TensorMap& m_;
  const spec::Target& t_;
  Diagnostics d_;
};

}  // namespace tmakit::tensor_map::checker
