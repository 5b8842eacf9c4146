// Small arithmetic helpers private to the tensor-map layer.
#pragma once
#include <cstdint>
#include <limits>
#include <string>

namespace tmakit::tensor_map::detail {

// a × b, saturating at 2^64 − 1: derived sizes stay defined (and compare as
// "too large") for maps whose fields are far out of range.
inline uint64_t mul_sat(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::numeric_limits<uint64_t>::max();
  return r;
}

// A bit count as bytes: "12", or "0.5" for the 4-bit packed type.
inline std::string bytes_text(uint64_t bits) {
  std::string s = std::to_string(bits / 8);
  if (bits % 8) s += bits % 8 == 4 ? ".5" : bits % 8 == 6 ? ".75" : "+" + std::to_string(bits % 8) + " bits";
  return s;
}

}  // namespace tmakit::tensor_map::detail
