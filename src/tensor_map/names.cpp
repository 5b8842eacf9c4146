// Enum spellings of the scenario format (scenario-format.md) and per-type facts (§1.2).
#include <array>

#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::tensor_map {
namespace {

// Index = enum value; the enums are dense from 0.
constexpr std::array<std::string_view, 16> kDataTypes{
    "uint8",   "uint16",   "uint32",      "int32",    "uint64",       "int64",
    "float16", "float32",  "float64",     "bfloat16", "float32_ftz",  "tfloat32",
    "tfloat32_ftz", "16u4_align8b", "16u4_align16b", "16u6_align16b"};
constexpr std::array<std::string_view, 3> kInterleaves{"none", "16b", "32b"};
constexpr std::array<std::string_view, 7> kSwizzles{
    "none", "32b", "64b", "128b", "128b_atom_32b", "128b_atom_32b_flip_8b", "128b_atom_64b"};
constexpr std::array<std::string_view, 4> kL2{"none", "64b", "128b", "256b"};
// OobFill::zero is the driver's FLOAT_OOB_FILL_NONE and is spelled "none".
constexpr std::array<std::string_view, 2> kFills{"none", "nan_request_zero_fma"};
constexpr std::array<std::string_view, 3> kEncodes{"tiled", "im2col", "im2col_wide"};
constexpr std::array<std::string_view, 2> kWideModes{"w", "w128"};

template <class E, size_t N>
std::string_view lookup(const std::array<std::string_view, N>& names, E e) {
  auto i = static_cast<size_t>(e);
  return i < N ? names[i] : std::string_view{"?"};
}

template <class E, size_t N>
std::optional<E> parse(const std::array<std::string_view, N>& names, std::string_view s) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}

}  // namespace

std::string_view name(DataType e) { return lookup(kDataTypes, e); }
std::string_view name(Interleave e) { return lookup(kInterleaves, e); }
std::string_view name(Swizzle e) { return lookup(kSwizzles, e); }
std::string_view name(L2Promotion e) { return lookup(kL2, e); }
std::string_view name(OobFill e) { return lookup(kFills, e); }
std::string_view name(Encode e) { return lookup(kEncodes, e); }
std::string_view name(WideMode e) { return lookup(kWideModes, e); }

std::optional<DataType> parse_data_type(std::string_view s) { return parse<DataType>(kDataTypes, s); }
std::optional<Interleave> parse_interleave(std::string_view s) { return parse<Interleave>(kInterleaves, s); }
std::optional<Swizzle> parse_swizzle(std::string_view s) { return parse<Swizzle>(kSwizzles, s); }
std::optional<L2Promotion> parse_l2_promotion(std::string_view s) { return parse<L2Promotion>(kL2, s); }
std::optional<OobFill> parse_oob_fill(std::string_view s) { return parse<OobFill>(kFills, s); }
std::optional<Encode> parse_encode(std::string_view s) { return parse<Encode>(kEncodes, s); }
std::optional<WideMode> parse_wide_mode(std::string_view s) { return parse<WideMode>(kWideModes, s); }

// §1.2 table, "elemBytes used in byte rules": the shared-memory size. 16U4_ALIGN8B
// packs two values per byte, so it has no whole-byte size (0); the ALIGN16B types
// occupy one shared-memory byte per value (8 or 12 data bytes + pad per 16 values).
int element_bytes(DataType t) {
  switch (t) {
    case DataType::uint8: return 1;
    case DataType::uint16: case DataType::float16: case DataType::bfloat16: return 2;
    case DataType::uint32: case DataType::int32: case DataType::float32:
    case DataType::float32_ftz: case DataType::tfloat32: case DataType::tfloat32_ftz: return 4;
    case DataType::uint64: case DataType::int64: case DataType::float64: return 8;
    case DataType::u4_align8b: return 0;
    case DataType::u4_align16b: case DataType::u6_align16b: return 1;
  }
  return 0;
}

// Bits of one value in global memory (§1.2 "bits/elem").
int bits_per_element(DataType t) {
  switch (t) {
    case DataType::u4_align8b: case DataType::u4_align16b: return 4;
    case DataType::u6_align16b: return 6;
    default: return element_bytes(t) * 8;
  }
}

bool is_float(DataType t) {
  switch (t) {
    case DataType::float16: case DataType::float32: case DataType::float64: case DataType::bfloat16:
    case DataType::float32_ftz: case DataType::tfloat32: case DataType::tfloat32_ftz: return true;
    default: return false;
  }
}

bool is_packed(DataType t) {
  return t == DataType::u4_align8b || t == DataType::u4_align16b || t == DataType::u6_align16b;
}

// §1.3 swizzle row: every 128B variant (ATOM ones included) has a 128-byte span.
int swizzle_span(Swizzle s) {
  switch (s) {
    case Swizzle::none: return 0;
    case Swizzle::b32: return 32;
    case Swizzle::b64: return 64;
    default: return 128;
  }
}

}  // namespace tmakit::tensor_map

namespace tmakit::tensor_map {

int smem_bits_per_element(DataType t) { return t == DataType::u4_align8b ? 4 : 8 * element_bytes(t); }

}  // namespace tmakit::tensor_map
