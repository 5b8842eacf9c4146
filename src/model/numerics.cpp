#include "tmakit/model/numerics.hpp"

#include <cmath>

namespace tmakit::model {

uint32_t tf32_round(uint32_t b) {
  if (f32_is_nan(b)) return kTf32NaN;                     // H3: every NaN
  if ((b & 0x7FFFFFFFu) == 0x7F800000u) return b;         // ±inf unchanged
  // A carry out of the mantissa moves into the exponent (the largest finite
  // values round to inf), exactly as the hardware formula does.
  return (b + 0xFFFu + ((b >> 13) & 1u)) & 0xFFFFE000u;
}

uint64_t oob_nan_bits(int elem_bytes) {
  uint64_t v = 0;
  for (int i = elem_bytes - 1; i >= 0; --i) v = (v << 8) | oob_nan_byte(elem_bytes, i);
  return v;
}

// Decoder of a 16-bit IEEE-layout value, building the double's bits directly
// (the reductions call it per element; no libm).
static double decode16(uint16_t bits, int mant_bits) {
  const int exp_bits = 15 - mant_bits;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint64_t sign = uint64_t(bits >> 15) << 63;
  const int e = (bits >> mant_bits) & ((1 << exp_bits) - 1);
  const uint64_t m = bits & ((1u << mant_bits) - 1);
  uint64_t d;
  if (e == (1 << exp_bits) - 1) {
    d = (uint64_t(0x7FF) << 52) | (m << (52 - mant_bits));  // inf, or NaN (payload kept)
  } else if (e == 0) {
    // Subnormal: m * 2^(1 - bias - mant_bits), exact as a product of doubles.
    const double scale = std::bit_cast<double>(uint64_t(1023 + 1 - bias - mant_bits) << 52);
    return std::bit_cast<double>(sign | std::bit_cast<uint64_t>(double(m) * scale));
  } else {
    d = (uint64_t(e - bias + 1023) << 52) | (m << (52 - mant_bits));
  }
  return std::bit_cast<double>(sign | d);
}

double f16_to_double(uint16_t bits) { return decode16(bits, 10); }
double bf16_to_double(uint16_t bits) { return decode16(bits, 7); }

uint64_t round_double_to_format(double x, int mant_bits, int exp_bits) {
  const uint64_t exp_all = (uint64_t(1) << exp_bits) - 1;
  const uint64_t mant_all = (uint64_t(1) << mant_bits) - 1;
  if (std::isnan(x)) return (exp_all << mant_bits) | mant_all;
  const uint64_t sign = std::signbit(x) ? uint64_t(1) << (mant_bits + exp_bits) : 0;
  const uint64_t inf = sign | (exp_all << mant_bits);
  if (std::isinf(x)) return inf;
  if (x == 0) return sign;

  // |x| = sig * 2^e exactly, sig < 2^53.
  const uint64_t db = std::bit_cast<uint64_t>(x);
  const int dexp = int((db >> 52) & 0x7FF);
  const uint64_t sig = (db & ((uint64_t(1) << 52) - 1)) | (dexp ? uint64_t(1) << 52 : 0);
  const int e = (dexp ? dexp : 1) - 1075;
  const int top = e + 63 - std::countl_zero(sig);  // floor(log2 |x|)

  // Quantum of the target at this magnitude: ulp of a normal, or the subnormal step.
  const int bias = int(exp_all >> 1);
  const int emin = 1 - bias;
  int q = (top > emin ? top : emin) - mant_bits;

  // n = |x| / 2^q rounded to nearest, ties to even.
  uint64_t n;
  const int shift = q - e;
  if (shift <= 0) {
    n = sig << -shift;  // exact; n < 2^(mant_bits + 1)
  } else if (shift >= 63) {
    n = 0;  // |x| < 2^(q-10): far below half a quantum (sig < 2^53)
  } else {
    n = sig >> shift;
    const uint64_t rem = sig & ((uint64_t(1) << shift) - 1);
    const uint64_t half = uint64_t(1) << (shift - 1);
    if (rem > half || (rem == half && (n & 1))) ++n;
  }
  if (n >> (mant_bits + 1)) {  // rounding carried into a new binade
    n >>= 1;
    ++q;
  }
  if (n >> mant_bits) {  // normal
    const int64_t biased = int64_t(q) + mant_bits + bias;
    if (biased >= int64_t(exp_all)) return inf;
    return sign | (uint64_t(biased) << mant_bits) | (n & mant_all);
  }
  return sign | n;  // subnormal or zero (q == emin - mant_bits here)
}

double add_round_to_odd(double a, double b) {
  const double s = a + b;
  if (!std::isfinite(s)) return s;
  // TwoSum: s + err == a + b exactly (no overflow here since s is finite).
  const double bb = s - a;
  const double err = (a - (s - bb)) + (b - bb);
  if (err == 0) return s;
  uint64_t bits = std::bit_cast<uint64_t>(s);
  // Truncate toward zero: when |s| overshot the exact sum step one ulp back.
  if ((err < 0) != (s < 0)) --bits;
  // s and err have opposite signs exactly when |s| > |exact|; s is never 0 here.
  return std::bit_cast<double>(bits | 1);
}

uint16_t fma_rn_half(uint16_t a, uint16_t b, uint16_t c, bool bf16, bool oob, bool relu, bool sat) {
  if (oob && (is_oob_nan_operand(a) || is_oob_nan_operand(b))) return 0;  // +0, even for a NaN or inf c
  const double x = bf16 ? bf16_to_double(a) : f16_to_double(a);
  const double y = bf16 ? bf16_to_double(b) : f16_to_double(b);
  const double z = bf16 ? bf16_to_double(c) : f16_to_double(c);
  uint16_t r = kHalfNaN;
  if (!std::isnan(x) && !std::isnan(y) && !std::isnan(z)) {
    // x * y is exact in double (at most 22 significant bits, exponents far inside
    // double's range); the sum rounded to odd rounds to the 16-bit format exactly
    // as the exact sum would. inf * 0 and inf - inf come out as NaN here.
    const double s = add_round_to_odd(x * y, z);
    if (!std::isnan(s)) r = bf16 ? double_to_bf16(s) : double_to_f16(s);
  }
  const bool nan = half_is_nan(r, bf16);
  if (relu && !nan && (r & 0x8000u)) r = 0;
  if (sat) {
    const uint16_t one = bf16 ? 0x3F80 : 0x3C00;
    if (nan || (r & 0x8000u)) r = 0;
    else if (r > one) r = one;  // positive values order as their bits (inf included)
  }
  return r;
}

}  // namespace tmakit::model
