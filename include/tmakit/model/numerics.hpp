// Bit-level numerics the copy engine applies: tf32 rounding on load (H3), the
// OOB-NaN fill pattern (H4), and exact conversions between f16 / bf16 / f32
// bit patterns and double used by the reductions (§6.3, H13).
#pragma once
#include <bit>
#include <cstdint>

namespace tmakit::model {

// H3: a TFLOAT32 / TFLOAT32_FTZ load rounds each f32 to tf32 with
// round-to-nearest-even: bits + 0xFFF + ((bits >> 13) & 1), low 13 bits cleared.
// ±inf unchanged; subnormals rounded, not flushed; every NaN -> 0x7FFFE000.
uint32_t tf32_round(uint32_t f32_bits);

// H4: the OOB-NaN fill is the 16-bit pattern 0x7FF7 repeated to the element
// width, e.g. 0x7FF77FF7 for 4 bytes. For 1-byte elements (not a float type, so
// a map the validator refuses) the low byte 0xF7 is used.
uint64_t oob_nan_bits(int elem_bytes);
// Byte `i` (little-endian, 0 <= i < elem_bytes) of that pattern.
constexpr uint8_t oob_nan_byte(int elem_bytes, int i) {
  return elem_bytes == 1 ? 0xF7 : (i % 2 == 0 ? 0xF7 : 0x7F);
}

// Canonical NaN results of the reductions (H8, H13).
inline constexpr uint16_t kHalfNaN = 0x7FFF;           // f16 and bf16
inline constexpr uint32_t kF32NaN = 0x7FFFFFFF;
inline constexpr uint32_t kTf32NaN = 0x7FFFE000;
inline constexpr uint64_t kF64NaN = 0x7FFFFFFFFFFFFFFF;  // [I]: not observed (no f64 min/max on sm_90)
// f64 .add of inf and -inf (an f64 add with a NaN operand returns that operand, reduce.cpp).
inline constexpr uint64_t kF64AddInvalid = 0xFFF8000000000000;  // questions/q17_bulk_add_f64_nan_pairs

// Exact widening to double (every f16, bf16 and f32 value is a double).
double f16_to_double(uint16_t bits);
double bf16_to_double(uint16_t bits);
inline double f32_to_double(uint32_t bits) { return std::bit_cast<float>(bits); }

// Round a double to a binary format with `mant_bits` explicit mantissa bits and
// `exp_bits` exponent bits (IEEE layout, bias 2^(exp_bits-1) - 1):
// round-to-nearest-even, subnormals kept, overflow to ±inf. NaN gives the
// positive NaN with every mantissa bit set (0x7FFF for f16 / bf16).
// Correct for any double input; callers that start from a wider exact value
// must round to double with round-to-odd first (see add_bf16 in reduce.cpp).
uint64_t round_double_to_format(double x, int mant_bits, int exp_bits);
inline uint16_t double_to_f16(double x) { return uint16_t(round_double_to_format(x, 10, 5)); }
inline uint16_t double_to_bf16(double x) { return uint16_t(round_double_to_format(x, 7, 8)); }

// Exact a + b rounded to double with round-to-odd: the result differs from the
// exact sum only in its last bit, which is set when the sum was inexact. A
// round-to-odd double (53 bits) rounds to any format of <= 51 bits exactly as
// the exact sum would (no double-rounding error).
double add_round_to_odd(double a, double b);

// fma.rn{.oob}{.relu}{.sat} on one f16 / bf16 value (one lane of .f16x2 / .bf16x2),
// as the H100 computes it (tests/vectors/fma_oob.jsonl, §14 Q6): the exact a * b + c
// rounded once to nearest even (subnormals kept, overflow to inf); a NaN operand,
// inf * 0 and inf - inf give kHalfNaN. With `oob`, an a or b whose bits without the
// sign are 0x7FF7 (the OOB-NaN fill, H4; 0xFFF7 too) makes the result +0 whatever
// c is, while 0x7FF7 in c is an ordinary NaN. `relu`: negative results (-0 and -inf
// too) become +0, NaN stays kHalfNaN. `sat`: clamp to [+0, 1], NaN -> +0.
// (ptxas takes .oob without .ftz, .sat.oob on f16 only, never .sat with .relu.)
constexpr bool is_oob_nan_operand(uint16_t bits) { return (bits & 0x7FFFu) == 0x7FF7u; }
uint16_t fma_rn_half(uint16_t a, uint16_t b, uint16_t c, bool bf16, bool oob, bool relu = false, bool sat = false);

// f32 classification on bit patterns.
constexpr bool f32_is_nan(uint32_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; }
constexpr bool f32_is_subnormal(uint32_t b) { return (b & 0x7F800000u) == 0 && (b & 0x007FFFFFu) != 0; }
constexpr bool half_is_nan(uint16_t b, bool bf16) {
  return bf16 ? (b & 0x7FFFu) > 0x7F80u : (b & 0x7FFFu) > 0x7C00u;
}

}  // namespace tmakit::model
