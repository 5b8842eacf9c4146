// Reduction numerics (§6.3, H8, H10, H13) against naive references written here.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/model/reduce.hpp"

namespace {

using tmakit::model::reduce_element;
using tmakit::spec::RedOp;
using tmakit::spec::RedType;

const RedOp kOps[] = {RedOp::add, RedOp::min, RedOp::max, RedOp::inc,
                      RedOp::dec, RedOp::and_, RedOp::or_, RedOp::xor_};

template <class T>
T run(RedOp op, RedType t, T d, T s) {
  uint8_t db[sizeof(T)], sb[sizeof(T)];
  std::memcpy(db, &d, sizeof d);
  std::memcpy(sb, &s, sizeof s);
  reduce_element(op, t, db, sb);
  T r;
  std::memcpy(&r, db, sizeof r);
  return r;
}

// ---- integers -------------------------------------------------------------

template <class U, class S>
U ref_int(RedOp op, U d, U s, bool sgn) {
  switch (op) {
    case RedOp::add: return U(d + s);
    case RedOp::min:
      if (sgn) return U(std::min(S(d), S(s)));
      return std::min(d, s);
    case RedOp::max:
      if (sgn) return U(std::max(S(d), S(s)));
      return std::max(d, s);
    case RedOp::inc: return d >= s ? 0 : U(d + 1);
    case RedOp::dec: return (d == 0 || d > s) ? s : U(d - 1);
    case RedOp::and_: return d & s;
    case RedOp::or_: return d | s;
    case RedOp::xor_: return d ^ s;
  }
  return 0;
}

template <class U>
std::vector<U> int_edges() {
  using S = std::make_signed_t<U>;
  return {U(0), U(1), U(2), U(-1), U(-2), U(std::numeric_limits<S>::max()),
          U(std::numeric_limits<S>::min()), U(std::numeric_limits<S>::max() - 1), U(100)};
}

template <class U, class S>
void check_int_type(RedType t, bool sgn) {
  std::mt19937_64 rng(11);
  std::vector<U> vals = int_edges<U>();
  for (int i = 0; i < 40; ++i) vals.push_back(U(rng()));
  for (int i = 0; i < 10; ++i) vals.push_back(U(rng() % 8));  // small values make inc/dec edges
  for (RedOp op : kOps)
    for (U d : vals)
      for (U s : vals) ASSERT_EQ(run<U>(op, t, d, s), (ref_int<U, S>(op, d, s, sgn))) << int(op) << " " << d << " " << s;
}

TEST(ReduceInt, AllOpsAllTypes) {
  check_int_type<uint32_t, int32_t>(RedType::u32, false);
  check_int_type<uint32_t, int32_t>(RedType::b32, false);
  check_int_type<uint32_t, int32_t>(RedType::s32, true);
  check_int_type<uint64_t, int64_t>(RedType::u64, false);
  check_int_type<uint64_t, int64_t>(RedType::b64, false);
  check_int_type<uint64_t, int64_t>(RedType::s64, true);
}

TEST(ReduceInt, IncDecEdges) {
  // §6.3 inc: d >= s ? 0 : d + 1.
  EXPECT_EQ(run<uint32_t>(RedOp::inc, RedType::u32, 5, 5), 0u);   // d == s
  EXPECT_EQ(run<uint32_t>(RedOp::inc, RedType::u32, 6, 5), 0u);   // d > s
  EXPECT_EQ(run<uint32_t>(RedOp::inc, RedType::u32, 4, 5), 5u);
  EXPECT_EQ(run<uint32_t>(RedOp::inc, RedType::u32, 0, 0), 0u);   // s == 0
  EXPECT_EQ(run<uint32_t>(RedOp::inc, RedType::u32, 0xFFFFFFFEu, 0xFFFFFFFFu), 0xFFFFFFFFu);
  // dec: (d == 0 || d > s) ? s : d - 1.
  EXPECT_EQ(run<uint32_t>(RedOp::dec, RedType::u32, 5, 5), 4u);   // d == s
  EXPECT_EQ(run<uint32_t>(RedOp::dec, RedType::u32, 6, 5), 5u);   // d > s
  EXPECT_EQ(run<uint32_t>(RedOp::dec, RedType::u32, 0, 5), 5u);   // d == 0
  EXPECT_EQ(run<uint32_t>(RedOp::dec, RedType::u32, 0, 0), 0u);   // s == 0
  EXPECT_EQ(run<uint32_t>(RedOp::dec, RedType::u32, 3, 0), 0u);   // s == 0, d > s
  // Integer add wraps (modulo 2^width); signed min compares signed.
  EXPECT_EQ(run<uint32_t>(RedOp::add, RedType::u32, 0xFFFFFFFFu, 2), 1u);
  EXPECT_EQ(run<uint32_t>(RedOp::min, RedType::s32, 0xFFFFFFFFu, 1), 0xFFFFFFFFu);
  EXPECT_EQ(run<uint32_t>(RedOp::min, RedType::u32, 0xFFFFFFFFu, 1), 1u);
  EXPECT_EQ(run<uint64_t>(RedOp::max, RedType::s64, 0x8000000000000000ull, 0), 0u);
}

// ---- f32 ------------------------------------------------------------------

uint32_t fbits(float f) { return std::bit_cast<uint32_t>(f); }
bool is_nan32(uint32_t b) { return (b & 0x7FFFFFFF) > 0x7F800000; }
uint32_t flush(uint32_t b) { return ((b & 0x7F800000) == 0) ? (b & 0x80000000) : b; }

// The exact sum rounded once: a double holds the sum of two floats exactly when
// their exponents are within 29 of each other, and otherwise the smaller one is
// too small to move the result across a float rounding boundary; float(double)
// is the CPU's RNE conversion.
uint32_t ref_f32_add(uint32_t d, uint32_t s, bool ftz) {
  if (ftz) d = flush(d), s = flush(s);
  const double sum = double(std::bit_cast<float>(d)) + double(std::bit_cast<float>(s));
  uint32_t r = fbits(float(sum));
  if (is_nan32(r)) return 0x7FFFFFFF;
  return ftz ? flush(r) : r;
}

std::vector<uint32_t> f32_edges() {
  return {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
          0x80800000, 0x00800001, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000,
          0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x33800000, 0x4B800000};
}

TEST(ReduceF32, AddAgainstReference) {
  std::mt19937 rng(12);
  std::vector<uint32_t> vals = f32_edges();
  for (int i = 0; i < 60; ++i) vals.push_back(rng());
  for (int i = 0; i < 20; ++i) vals.push_back(rng() & 0x80FFFFFF);  // subnormal / tiny
  for (uint32_t d : vals)
    for (uint32_t s : vals) {
      ASSERT_EQ(run<uint32_t>(RedOp::add, RedType::f32, d, s), ref_f32_add(d, s, false)) << std::hex << d << " " << s;
      ASSERT_EQ(run<uint32_t>(RedOp::add, RedType::f32_ftz, d, s), ref_f32_add(d, s, true)) << std::hex << d << " " << s;
    }
  for (int i = 0; i < 500000; ++i) {
    const uint32_t d = rng(), s = (i % 3 == 0) ? (d ^ (rng() & 0x80FFFFFF)) : rng();
    ASSERT_EQ(run<uint32_t>(RedOp::add, RedType::f32, d, s), ref_f32_add(d, s, false));
    ASSERT_EQ(run<uint32_t>(RedOp::add, RedType::f32_ftz, d, s), ref_f32_add(d, s, true));
  }
}

TEST(ReduceF32, HandWorked) {
  // Subnormals kept on FLOAT32 maps (H13).
  EXPECT_EQ(run<uint32_t>(RedOp::add, RedType::f32, 0x00000001, 0x00000001), 0x00000002u);
  EXPECT_EQ(run<uint32_t>(RedOp::add, RedType::f32, 0x00800001, 0x80800000), 0x00000001u);
  // FTZ: subnormal input flushed, subnormal result flushed to a signed zero.
  EXPECT_EQ(run<uint32_t>(RedOp::add, RedType::f32_ftz, 0x00800000, 0x80000001), 0x00800000u);
  EXPECT_EQ(run<uint32_t>(RedOp::add, RedType::f32_ftz, 0x00800001, 0x80800000), 0x00000000u);
  EXPECT_EQ(run<uint32_t>(RedOp::add, RedType::f32_ftz, 0x80800001, 0x00800000), 0x80000000u);
  // H8: NaN results are 0x7FFFFFFF.
  EXPECT_EQ(run<uint32_t>(RedOp::add, RedType::f32, 0x7F800000, 0xFF800000), 0x7FFFFFFFu);
  EXPECT_EQ(run<uint32_t>(RedOp::add, RedType::f32, 0xFFC00123, 0x3F800000), 0x7FFFFFFFu);
  // RNE: 1 + 2^-24 is a tie that stays at 1; 1 + 3*2^-24 goes up.
  EXPECT_EQ(run<uint32_t>(RedOp::add, RedType::f32, 0x3F800000, 0x33800000), 0x3F800000u);
  EXPECT_EQ(run<uint32_t>(RedOp::add, RedType::f32, 0x3F800001, 0x33800000), 0x3F800002u);
  EXPECT_EQ(run<uint32_t>(RedOp::add, RedType::f32, 0x7F7FFFFF, 0x7F7FFFFF), 0x7F800000u);
}

// ---- f16 / bf16 -------------------------------------------------------------

// Decoding written from the IEEE layout.
long double half_value(uint16_t b, bool bf16) {
  const int mb = bf16 ? 7 : 10, eb = 15 - mb, bias = (1 << (eb - 1)) - 1;
  const int e = (b >> mb) & ((1 << eb) - 1);
  const int m = b & ((1 << mb) - 1);
  long double v;
  if (e == (1 << eb) - 1) v = m ? NAN : INFINITY;
  else if (e == 0) v = std::ldexp((long double)m, 1 - bias - mb);
  else v = std::ldexp((long double)(m + (1 << mb)), e - bias - mb);
  return (b & 0x8000) ? -v : v;
}

bool half_nan(uint16_t b, bool bf16) { return std::isnan(half_value(b, bf16)); }

// Round to the nearest pattern by search over the ordered positive patterns,
// ties to the even pattern (see test_numerics for the same idea on doubles).
uint16_t ref_round(long double x, bool bf16) {
  if (std::isnan(x)) return 0x7FFF;
  const uint16_t inf = bf16 ? 0x7F80 : 0x7C00;
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const long double a = std::fabs(x);
  auto val = [&](uint32_t b) { return b == inf ? std::ldexp(1.0L, bf16 ? 128 : 16) : half_value(uint16_t(b), bf16); };
  if (a >= val(inf)) return sign | inf;
  uint32_t lo = 0, hi = inf;
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    (val(mid) <= a ? lo : hi) = mid;
  }
  if (val(lo) == a) return sign | lo;
  const long double mid = (val(lo) + val(lo + 1)) / 2;
  return sign | uint16_t(a < mid ? lo : a > mid ? lo + 1 : ((lo & 1) ? lo + 1 : lo));
}

// The long double (64-bit mantissa) sum is exact for f16 operands and for bf16
// operands whose exponents are within 55; further apart, the smaller operand
// cannot move the sum across a bf16 rounding boundary or onto a tie.
uint16_t ref_half_add(uint16_t d, uint16_t s, bool bf16) {
  const long double sum = half_value(d, bf16) + half_value(s, bf16);
  return ref_round(sum, bf16);
}

// H13: a NaN operand yields the other, two NaNs 0x7FFF, -0 < +0.
uint16_t ref_half_minmax(bool is_max, uint16_t d, uint16_t s, bool bf16) {
  const bool dn = half_nan(d, bf16), sn = half_nan(s, bf16);
  if (dn && sn) return 0x7FFF;
  if (dn) return s;
  if (sn) return d;
  // Order by value, then -0 below +0.
  auto key = [&](uint16_t b) { return std::pair<long double, int>(half_value(b, bf16), (b & 0x8000) ? 0 : 1); };
  if (key(d) == key(s)) return d;
  return (key(s) < key(d)) != is_max ? s : d;
}

std::vector<uint16_t> half_edges(bool bf16) {
  if (bf16)
    return {0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x8080, 0x3F80, 0xBF80, 0x7F7F, 0xFF7F,
            0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x7FFF, 0x3B80, 0x3B81};
  return {0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x8400, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF,
          0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7C01, 0x7FFF, 0x1400, 0x1401};
}

void check_half(RedType t, bool bf16) {
  std::mt19937 rng(bf16 ? 21 : 22);
  std::vector<uint16_t> vals = half_edges(bf16);
  for (int i = 0; i < 80; ++i) vals.push_back(uint16_t(rng()));
  for (uint16_t d : vals)
    for (uint16_t s : vals) {
      ASSERT_EQ(run<uint16_t>(RedOp::add, t, d, s), ref_half_add(d, s, bf16)) << std::hex << d << " " << s;
      ASSERT_EQ(run<uint16_t>(RedOp::min, t, d, s), ref_half_minmax(false, d, s, bf16)) << std::hex << d << " " << s;
      ASSERT_EQ(run<uint16_t>(RedOp::max, t, d, s), ref_half_minmax(true, d, s, bf16)) << std::hex << d << " " << s;
    }
  for (int i = 0; i < 300000; ++i) {
    const uint16_t d = uint16_t(rng());
    // Half the pairs with close exponents, where the rounding is decided.
    const uint16_t s = (i & 1) ? uint16_t(rng()) : uint16_t(d ^ (rng() & 0x81FF));
    ASSERT_EQ(run<uint16_t>(RedOp::add, t, d, s), ref_half_add(d, s, bf16)) << std::hex << d << " " << s;
  }
}

TEST(ReduceHalf, F16AgainstReference) { check_half(RedType::f16, false); }
TEST(ReduceHalf, Bf16AgainstReference) { check_half(RedType::bf16, true); }

TEST(ReduceHalf, HandWorked) {
  // f16: 1 + 2^-11 is a tie that stays at 1 (even); subnormals add exactly.
  EXPECT_EQ(run<uint16_t>(RedOp::add, RedType::f16, 0x3C00, 0x1000), 0x3C00);
  EXPECT_EQ(run<uint16_t>(RedOp::add, RedType::f16, 0x3C01, 0x1000), 0x3C02);
  EXPECT_EQ(run<uint16_t>(RedOp::add, RedType::f16, 0x0001, 0x0001), 0x0002);
  EXPECT_EQ(run<uint16_t>(RedOp::add, RedType::f16, 0x7BFF, 0x7BFF), 0x7C00);
  EXPECT_EQ(run<uint16_t>(RedOp::add, RedType::f16, 0x7C00, 0xFC00), 0x7FFF);  // NaN result (H13)
  // bf16: 1 + 2^-8 ties to 1; bf16 subnormal 2^-133 kept.
  EXPECT_EQ(run<uint16_t>(RedOp::add, RedType::bf16, 0x3F80, 0x3B80), 0x3F80);
  EXPECT_EQ(run<uint16_t>(RedOp::add, RedType::bf16, 0x3F80, 0x3B81), 0x3F81);
  EXPECT_EQ(run<uint16_t>(RedOp::add, RedType::bf16, 0x0001, 0x0001), 0x0002);
  EXPECT_EQ(run<uint16_t>(RedOp::add, RedType::bf16, 0x0080, 0x8001), 0x007F);
  // Far-apart exponents: 2^127 + 2^-133 stays 2^127 (the small one only rounds).
  EXPECT_EQ(run<uint16_t>(RedOp::add, RedType::bf16, 0x7F00, 0x0001), 0x7F00);
  EXPECT_EQ(run<uint16_t>(RedOp::add, RedType::bf16, 0x7F00, 0x8001), 0x7F00);
  EXPECT_EQ(run<uint16_t>(RedOp::add, RedType::bf16, 0x7FC0, 0x3F80), 0x7FFF);
  // min/max: NaN yields the other operand, two NaNs 0x7FFF, -0 < +0.
  EXPECT_EQ(run<uint16_t>(RedOp::min, RedType::f16, 0x7E00, 0x3C00), 0x3C00);
  EXPECT_EQ(run<uint16_t>(RedOp::max, RedType::bf16, 0x3F80, 0xFFC0), 0x3F80);
  EXPECT_EQ(run<uint16_t>(RedOp::max, RedType::bf16, 0x7FC1, 0xFFC0), 0x7FFF);
  EXPECT_EQ(run<uint16_t>(RedOp::min, RedType::f16, 0x0000, 0x8000), 0x8000);
  EXPECT_EQ(run<uint16_t>(RedOp::max, RedType::f16, 0x8000, 0x0000), 0x0000);
  EXPECT_EQ(run<uint16_t>(RedOp::min, RedType::bf16, 0x8000, 0x0000), 0x8000);
  EXPECT_EQ(run<uint16_t>(RedOp::max, RedType::bf16, 0xBF80, 0xC000), 0xBF80);
}

// ---- f64 ------------------------------------------------------------------

TEST(ReduceF64, Add) {
  auto b = [](double x) { return std::bit_cast<uint64_t>(x); };
  EXPECT_EQ(run<uint64_t>(RedOp::add, RedType::f64, b(0.1), b(0.2)), 0x3FD3333333333334ull);
  EXPECT_EQ(run<uint64_t>(RedOp::add, RedType::f64, b(1.0), b(std::ldexp(1.0, -53))), b(1.0));  // tie to even
  EXPECT_EQ(run<uint64_t>(RedOp::add, RedType::f64, b(std::nextafter(1.0, 2.0)), b(std::ldexp(1.0, -53))),
            b(std::nextafter(std::nextafter(1.0, 2.0), 2.0)));
  EXPECT_EQ(run<uint64_t>(RedOp::add, RedType::f64, 1, 1), 2u);  // subnormals kept
  EXPECT_TRUE(std::isnan(std::bit_cast<double>(run<uint64_t>(RedOp::add, RedType::f64, b(INFINITY), b(-INFINITY)))));
}

// ---- buffers and map types --------------------------------------------------

TEST(Reduce, ElementsLoopMatchesSingleElements) {
  std::mt19937 rng(5);
  std::vector<uint8_t> d(64), s(64);
  for (auto& x : d) x = uint8_t(rng());
  for (auto& x : s) x = uint8_t(rng());
  std::vector<uint8_t> want = d;
  for (int i = 0; i < 32; ++i) reduce_element(RedOp::add, RedType::bf16, &want[2 * i], &s[2 * i]);
  tmakit::model::reduce_elements(RedOp::add, RedType::bf16, d.data(), s.data(), 32);
  EXPECT_EQ(d, want);
}

TEST(Reduce, RedTypeForMap) {
  using tmakit::tensor_map::DataType;
  using tmakit::model::red_type_for_map;
  EXPECT_EQ(red_type_for_map(DataType::float32), RedType::f32);
  EXPECT_EQ(red_type_for_map(DataType::tfloat32), RedType::f32);
  EXPECT_EQ(red_type_for_map(DataType::float32_ftz), RedType::f32_ftz);
  EXPECT_EQ(red_type_for_map(DataType::tfloat32_ftz), RedType::f32_ftz);
  EXPECT_EQ(red_type_for_map(DataType::uint32), RedType::u32);
  EXPECT_EQ(red_type_for_map(DataType::int32), RedType::s32);
  EXPECT_EQ(red_type_for_map(DataType::uint64), RedType::u64);
  EXPECT_EQ(red_type_for_map(DataType::int64), RedType::s64);
  EXPECT_EQ(red_type_for_map(DataType::float16), RedType::f16);
  EXPECT_EQ(red_type_for_map(DataType::bfloat16), RedType::bf16);
  try {
    red_type_for_map(DataType::uint8);
    FAIL() << "uint8 has no reduction type";
  } catch (const tmakit::DiagnosticError& e) {
    EXPECT_EQ(e.diagnostic().rule, "model.reduce-type");
  }
}

}  // namespace
