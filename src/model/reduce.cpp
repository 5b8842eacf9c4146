#include "tmakit/model/reduce.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "tmakit/diag.hpp"
#include "tmakit/model/numerics.hpp"

namespace tmakit::model {

using spec::RedOp;
using spec::RedType;

namespace {

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// Integer ops on the unsigned type U; S is the signed type used by min/max when
// `is_signed` (§6.3: signed compare for .s32/.s64, unsigned otherwise).
template <class U, class S>
U int_op(RedOp op, U d, U s, bool is_signed) {
  switch (op) {
    case RedOp::add: return U(d + s);  // modulo 2^width
    case RedOp::min: return is_signed ? (S(s) < S(d) ? s : d) : (s < d ? s : d);
    case RedOp::max: return is_signed ? (S(s) > S(d) ? s : d) : (s > d ? s : d);
    case RedOp::inc: return d >= s ? U(0) : U(d + 1);                 // §6.3
    case RedOp::dec: return (d == 0 || d > s) ? s : U(d - 1);         // §6.3
    case RedOp::and_: return d & s;
    case RedOp::or_: return d | s;
    case RedOp::xor_: return d ^ s;
  }
  return d;
}

// min/max of two floats given as doubles with their bit patterns (H13): a NaN
// operand yields the other operand, two NaNs the canonical NaN, and -0 < +0.
template <class U>
U float_minmax(bool is_max, U db, double d, bool d_nan, U sb, double s, bool s_nan, U nan) {
  if (d_nan && s_nan) return nan;
  if (d_nan) return sb;
  if (s_nan) return db;
  if (d == s) {
    // Equal values differ only as ±0: -0 is the smaller one.
    const bool d_neg = std::signbit(d), s_neg = std::signbit(s);
    if (d_neg == s_neg) return db;
    return (is_max ? s_neg : d_neg) ? db : sb;
  }
  return (is_max ? s > d : s < d) ? sb : db;
}

uint32_t f32_flush(uint32_t b) { return f32_is_subnormal(b) ? (b & 0x80000000u) : b; }

uint32_t f32_op(RedOp op, uint32_t db, uint32_t sb, bool ftz) {
  if (op == RedOp::add) {
    if (ftz) {  // H13: FTZ maps flush subnormal inputs and results, keeping the sign
      db = f32_flush(db);
      sb = f32_flush(sb);
    }
    // One IEEE binary32 add: RNE, subnormals kept (the default x86-64 SSE mode).
    const float r = std::bit_cast<float>(db) + std::bit_cast<float>(sb);
    uint32_t rb = std::bit_cast<uint32_t>(r);
    if (f32_is_nan(rb)) return kF32NaN;  // H8
    return ftz ? f32_flush(rb) : rb;
  }
  if (op == RedOp::min || op == RedOp::max)
    return float_minmax<uint32_t>(op == RedOp::max, db, f32_to_double(db), f32_is_nan(db), sb,
                                  f32_to_double(sb), f32_is_nan(sb), kF32NaN);
  return int_op<uint32_t, int32_t>(op, db, sb, false);
}

uint64_t f64_op(RedOp op, uint64_t db, uint64_t sb) {
  const double d = std::bit_cast<double>(db), s = std::bit_cast<double>(sb);
  if (op == RedOp::add) {
    // The H100 returns a NaN operand's bits unchanged (signalling ones too), the source's
    // before the destination's, and 0xFFF8000000000000 for inf + -inf
    // (tests/vectors/questions/q17_bulk_add_f64_nan_pairs, q17_tensor_add_float64_nan_pairs).
    if (std::isnan(s)) return sb;
    if (std::isnan(d)) return db;
    const double r = d + s;  // RNE (§6.3)
    return std::isnan(r) ? kF64AddInvalid : std::bit_cast<uint64_t>(r);
  }
  if (op == RedOp::min || op == RedOp::max)
    return float_minmax<uint64_t>(op == RedOp::max, db, d, std::isnan(d), sb, s, std::isnan(s),
                                  kF64NaN);
  return int_op<uint64_t, int64_t>(op, db, sb, false);
}

// bf16 .add in binary32: bf16 values are binary32 values with 16 low zero bits,
// and a binary32 (24-bit) sum rounded again to bf16 (8 bits) is the correctly
// rounded bf16 sum (double rounding is innocuous when the wider format has at
// least 2p + 2 bits, here 24 >= 18), subnormals included (x86-64 SSE keeps them).
uint16_t bf16_add(uint16_t db, uint16_t sb) {
  const float r = std::bit_cast<float>(uint32_t(db) << 16) + std::bit_cast<float>(uint32_t(sb) << 16);
  const uint32_t b = std::bit_cast<uint32_t>(r);
  if (f32_is_nan(b)) return kHalfNaN;                       // H13
  return uint16_t((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);  // RNE; overflow carries into inf
}

uint16_t half_op(RedOp op, uint16_t db, uint16_t sb, bool bf16) {
  if (bf16 && op == RedOp::add) return bf16_add(db, sb);
  const double d = bf16 ? bf16_to_double(db) : f16_to_double(db);
  const double s = bf16 ? bf16_to_double(sb) : f16_to_double(sb);
  if (op == RedOp::add) {
    // f16: the sum of two f16 values is exact in double (at most 41 significant
    // bits), so one rounding is exact.
    return double_to_f16(d + s);  // NaN -> 0x7FFF (H13)
  }
  if (op == RedOp::min || op == RedOp::max)
    return float_minmax<uint16_t>(op == RedOp::max, db, d, half_is_nan(db, bf16), sb, s,
                                  half_is_nan(sb, bf16), kHalfNaN);
  return int_op<uint16_t, int16_t>(op, db, sb, false);
}

template <class U, class F>
void loop(uint8_t* dst, const uint8_t* src, size_t count, F f) {
  for (size_t i = 0; i < count; ++i, dst += sizeof(U), src += sizeof(U))
    store<U>(dst, f(load<U>(dst), load<U>(src)));
}

}  // namespace

void reduce_elements(RedOp op, RedType type, uint8_t* dst, const uint8_t* src, size_t count) {
  switch (type) {
    case RedType::u32:
    case RedType::b32:
      return loop<uint32_t>(dst, src, count,
                            [op](uint32_t d, uint32_t s) { return int_op<uint32_t, int32_t>(op, d, s, false); });
    case RedType::s32:
      return loop<uint32_t>(dst, src, count,
                            [op](uint32_t d, uint32_t s) { return int_op<uint32_t, int32_t>(op, d, s, true); });
    case RedType::u64:
    case RedType::b64:
      return loop<uint64_t>(dst, src, count,
                            [op](uint64_t d, uint64_t s) { return int_op<uint64_t, int64_t>(op, d, s, false); });
    case RedType::s64:
      return loop<uint64_t>(dst, src, count,
                            [op](uint64_t d, uint64_t s) { return int_op<uint64_t, int64_t>(op, d, s, true); });
    case RedType::f16:
      return loop<uint16_t>(dst, src, count, [op](uint16_t d, uint16_t s) { return half_op(op, d, s, false); });
    case RedType::bf16:
      return loop<uint16_t>(dst, src, count, [op](uint16_t d, uint16_t s) { return half_op(op, d, s, true); });
    case RedType::f32:
      return loop<uint32_t>(dst, src, count, [op](uint32_t d, uint32_t s) { return f32_op(op, d, s, false); });
    case RedType::f32_ftz:
      return loop<uint32_t>(dst, src, count, [op](uint32_t d, uint32_t s) { return f32_op(op, d, s, true); });
    case RedType::f64:
      return loop<uint64_t>(dst, src, count, [op](uint64_t d, uint64_t s) { return f64_op(op, d, s); });
  }
}

void reduce_element(RedOp op, RedType type, uint8_t* dst, const uint8_t* src) {
  reduce_elements(op, type, dst, src, 1);
}

RedType red_type_for_map(tensor_map::DataType t) {
  using tensor_map::DataType;
  switch (t) {
    case DataType::float32:
    case DataType::tfloat32: return RedType::f32;
    case DataType::float32_ftz:
    case DataType::tfloat32_ftz: return RedType::f32_ftz;
    case DataType::uint32: return RedType::u32;
    case DataType::int32: return RedType::s32;
    case DataType::uint64: return RedType::u64;
    case DataType::int64: return RedType::s64;
    case DataType::float16: return RedType::f16;
    case DataType::bfloat16: return RedType::bf16;
    case DataType::float64: return RedType::f64;
    default: break;
  }
  fail("model.reduce-type",
       "a tensor reduction has no element type for map data type " + std::string(tensor_map::name(t)) +
           " (reductions take 32/64-bit integer, f16, bf16 and f32 maps)");
}

}  // namespace tmakit::model
