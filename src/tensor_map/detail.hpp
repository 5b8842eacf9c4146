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

// A size from mul_sat: 2^64 − 1 means it saturated, so say that rather than the number.
inline std::string size_text(uint64_t v) {
  return v == std::numeric_limits<uint64_t>::max() ? "more than 2^64 − 1" : std::to_string(v);
}

// A bit count that may pass 64 bits (a stride times an extent), printed exactly:
// a saturated 2^64 − 1 would read "2305843009213693951+7 bits".
inline std::string bytes_text_wide(unsigned __int128 bits) {
  if (bits <= std::numeric_limits<uint64_t>::max()) return bytes_text(static_cast<uint64_t>(bits));
  std::string s;
  for (unsigned __int128 b = bits / 8; b; b /= 10) s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(b % 10)));
  return s + bytes_text(static_cast<uint64_t>(bits % 8)).substr(1);  // "0.5" → ".5", "0" → ""
}

}  // namespace tmakit::tensor_map::detail
