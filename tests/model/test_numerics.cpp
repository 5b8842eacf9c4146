// tf32 rounding (H3), the OOB-NaN pattern (H4) and the conversions the
// reductions use, against hand-worked values and separately written references.
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <random>

#include "tmakit/model/numerics.hpp"

namespace {

using namespace tmakit::model;

TEST(Tf32, HandWorkedValues) {
  EXPECT_EQ(tf32_round(0x3F800000u), 0x3F800000u);  // 1.0
  EXPECT_EQ(tf32_round(0x3F800FFFu), 0x3F800000u);  // below half: down
  EXPECT_EQ(tf32_round(0x3F801000u), 0x3F800000u);  // tie, kept bit even: down
  EXPECT_EQ(tf32_round(0x3F803000u), 0x3F804000u);  // tie, kept bit odd: up
  EXPECT_EQ(tf32_round(0x3F801001u), 0x3F802000u);  // above half: up
  EXPECT_EQ(tf32_round(0xBF801001u), 0xBF802000u);  // sign kept, magnitude rounded
  EXPECT_EQ(tf32_round(0x3FFFF000u), 0x40000000u);  // carry into the exponent
  EXPECT_EQ(tf32_round(0x7F7FFFFFu), 0x7F800000u);  // largest finite rounds to inf
  EXPECT_EQ(tf32_round(0x7F800000u), 0x7F800000u);  // +inf unchanged
  EXPECT_EQ(tf32_round(0xFF800000u), 0xFF800000u);  // -inf unchanged
  // H3: every NaN becomes 0x7FFFE000.
  EXPECT_EQ(tf32_round(0x7FC00000u), 0x7FFFE000u);
  EXPECT_EQ(tf32_round(0xFFC00001u), 0x7FFFE000u);
  EXPECT_EQ(tf32_round(0x7F800001u), 0x7FFFE000u);
  EXPECT_EQ(tf32_round(0x7FFFFFFFu), 0x7FFFE000u);
  // Subnormals are rounded, not flushed.
  EXPECT_EQ(tf32_round(0x00001000u), 0x00000000u);
  EXPECT_EQ(tf32_round(0x00003000u), 0x00004000u);
  EXPECT_EQ(tf32_round(0x00001001u), 0x00002000u);
  EXPECT_EQ(tf32_round(0x80002001u), 0x80002000u);
  EXPECT_EQ(tf32_round(0x007FF000u), 0x00800000u);  // largest subnormals round to min normal
}

// Reference: keep the top 19 bits; round to nearest by value, ties to the even
// kept pattern, on the magnitude (the layout is sign-magnitude).
uint32_t ref_tf32(uint32_t b) {
  const uint32_t sign = b & 0x80000000u, mag = b & 0x7FFFFFFFu;
  if (mag > 0x7F800000u) return 0x7FFFE000u;
  if (mag == 0x7F800000u) return b;
  uint32_t kept = mag >> 13;
  const uint32_t dropped = mag & 0x1FFFu;
  if (dropped > 0x1000u || (dropped == 0x1000u && (kept & 1))) ++kept;
  return sign | (kept << 13);
}

TEST(Tf32, RandomAgainstReference) {
  std::mt19937 rng(1);
  for (int i = 0; i < 2000000; ++i) {
    const uint32_t b = rng();
    ASSERT_EQ(tf32_round(b), ref_tf32(b)) << std::hex << b;
  }
}

TEST(OobNan, Patterns) {
  EXPECT_EQ(oob_nan_bits(2), 0x7FF7u);
  EXPECT_EQ(oob_nan_bits(4), 0x7FF77FF7u);
  EXPECT_EQ(oob_nan_bits(8), 0x7FF77FF77FF77FF7ull);
  // Each pattern is a NaN of its width (f16, f32, f64), not an infinity.
  EXPECT_TRUE(half_is_nan(0x7FF7, false));
  EXPECT_TRUE(half_is_nan(0x7FF7, true));
  EXPECT_TRUE(f32_is_nan(0x7FF77FF7u));
  EXPECT_TRUE(std::isnan(std::bit_cast<double>(uint64_t(0x7FF77FF77FF77FF7ull))));
}

TEST(Convert, KnownValues) {
  EXPECT_EQ(f16_to_double(0x3C00), 1.0);
  EXPECT_EQ(f16_to_double(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(f16_to_double(0x03FF), std::ldexp(1023.0, -24));
  EXPECT_EQ(f16_to_double(0x7BFF), 65504.0);
  EXPECT_EQ(f16_to_double(0xC000), -2.0);
  EXPECT_TRUE(std::signbit(f16_to_double(0x8000)));
  EXPECT_EQ(f16_to_double(0x7C00), INFINITY);
  EXPECT_TRUE(std::isnan(f16_to_double(0x7E00)));
  EXPECT_EQ(bf16_to_double(0x3F80), 1.0);
  EXPECT_EQ(bf16_to_double(0x0001), std::ldexp(1.0, -133));
  EXPECT_EQ(bf16_to_double(0x7F7F), std::ldexp(255.0, 120));
  EXPECT_EQ(bf16_to_double(0xFF80), -INFINITY);
}

TEST(Convert, RoundTripEveryHalf) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if (!half_is_nan(uint16_t(b), false)) {
      ASSERT_EQ(double_to_f16(f16_to_double(uint16_t(b))), b) << b;
    } else {
      ASSERT_EQ(double_to_f16(f16_to_double(uint16_t(b))), kHalfNaN);
    }
    if (!half_is_nan(uint16_t(b), true)) {
      ASSERT_EQ(double_to_bf16(bf16_to_double(uint16_t(b))), b) << b;
    }
  }
}

// Reference rounding by search: the nearest finite value of the format among
// its positive bit patterns (ordered like their values), ties to the even
// pattern; beyond the largest finite value the next candidate is infinity.
uint16_t ref_round_half(long double x, int mant_bits) {
  const int exp_bits = 15 - mant_bits;
  const uint16_t inf = uint16_t(((1u << exp_bits) - 1) << mant_bits);
  auto value = [&](uint32_t b) -> long double {
    const int bias = (1 << (exp_bits - 1)) - 1;
    const uint32_t e = b >> mant_bits, m = b & ((1u << mant_bits) - 1);
    if (e == 0) return std::ldexp((long double)m, 1 - bias - mant_bits);
    return std::ldexp((long double)(m + (1u << mant_bits)), int(e) - bias - mant_bits);
  };
  if (std::isnan(x)) return 0x7FFF;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const long double a = std::fabs(x);
  // lo = the largest pattern with value <= a (value(inf) is the next power of two).
  uint32_t lo = 0, hi = inf;
  if (a >= value(inf)) return sign | inf;
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    (value(mid) <= a ? lo : hi) = mid;
  }
  if (value(lo) == a) return sign | uint16_t(lo);
  const long double mid = (value(lo) + value(lo + 1)) / 2;
  const uint32_t pick = a < mid ? lo : a > mid ? lo + 1 : ((lo & 1) ? lo + 1 : lo);
  return sign | uint16_t(pick);
}

TEST(Convert, RandomDoublesToHalfAgainstSearch) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < 300000; ++i) {
    // Random magnitude around the f16 and bf16 ranges, including exact ties
    // (few mantissa bits) and values past the largest finite one.
    const int bits = 1 + int(rng() % 20);
    const double m = double(rng() >> (64 - bits)) + 1;
    const double x16 = std::ldexp(m, int(rng() % 50) - 30 - bits) * ((rng() & 1) ? -1 : 1);
    ASSERT_EQ(double_to_f16(x16), ref_round_half(x16, 10)) << x16;
    const double xb = std::ldexp(m, int(rng() % 280) - 140 - bits) * ((rng() & 1) ? -1 : 1);
    ASSERT_EQ(double_to_bf16(xb), ref_round_half(xb, 7)) << xb;
  }
}

TEST(Convert, ToF32AgainstHardwareConversion) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 300000; ++i) {
    double x = std::bit_cast<double>(rng());
    if (i % 2) x = std::ldexp(double(rng() >> 30), int(rng() % 330) - 190);  // f32 range and ties
    if (std::isnan(x)) continue;
    const float want = float(x);  // the CPU's RNE conversion
    ASSERT_EQ(uint32_t(round_double_to_format(x, 23, 8)), std::bit_cast<uint32_t>(want)) << x;
  }
  EXPECT_EQ(round_double_to_format(std::nan(""), 23, 8), 0x7FFFFFFFu);
}

TEST(Convert, AddRoundToOdd) {
  std::mt19937_64 rng(4);
  for (int i = 0; i < 200000; ++i) {
    const double a = std::ldexp(double(rng() >> 11), int(rng() % 100) - 50);
    double b = std::ldexp(double(rng() >> 11), int(rng() % 100) - 50 - int(rng() % 11));
    if (rng() & 1) b = -b;
    // With an exponent gap of at most 10 the sum fits the 64-bit long double mantissa.
    if (std::abs(std::ilogb(a) - std::ilogb(b)) > 10) continue;
    const long double exact = (long double)a + b;
    std::fesetround(FE_TOWARDZERO);
    volatile long double ve = exact;
    double trunc = double(ve);
    std::fesetround(FE_TONEAREST);
    if ((long double)trunc != exact) trunc = std::bit_cast<double>(std::bit_cast<uint64_t>(trunc) | 1);
    ASSERT_EQ(add_round_to_odd(a, b), trunc) << a << " " << b;
  }
  EXPECT_EQ(add_round_to_odd(1.0, 2.0), 3.0);
  // 1 + 2^-60: truncated to 1.0, inexact, so the last bit is set.
  EXPECT_EQ(add_round_to_odd(1.0, std::ldexp(1.0, -60)), std::nextafter(1.0, 2.0));
  // 1 - 2^-60: rounds (RNE) to 1.0 but truncation gives the double below 1.0 (already odd).
  EXPECT_EQ(add_round_to_odd(1.0, -std::ldexp(1.0, -60)), std::nextafter(1.0, 0.0));
}

}  // namespace
