// Enum spellings (scenario-format.md) and per-type facts (§1.2 table).
#include <gtest/gtest.h>

#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::tensor_map {
namespace {

// The scenario format's lists, in the driver's enum order (§1.2, §1.3).
TEST(Names, DataTypesMatchTheScenarioFormat) {
  const char* spelled[] = {"uint8",   "uint16",      "uint32",   "int32",        "uint64",       "int64",
                           "float16", "float32",     "float64",  "bfloat16",     "float32_ftz",  "tfloat32",
                           "tfloat32_ftz", "16u4_align8b", "16u4_align16b", "16u6_align16b"};
  for (int i = 0; i < 16; ++i) {
    auto t = parse_data_type(spelled[i]);
    ASSERT_TRUE(t) << spelled[i];
    EXPECT_EQ(static_cast<int>(*t), i) << spelled[i];  // driver numbering
    EXPECT_EQ(name(*t), spelled[i]);
  }
  EXPECT_FALSE(parse_data_type("FLOAT32"));
  EXPECT_FALSE(parse_data_type(""));
  EXPECT_FALSE(parse_data_type("float"));
}

TEST(Names, OtherEnumsRoundTrip) {
  const char* sw[] = {"none", "32b", "64b", "128b", "128b_atom_32b", "128b_atom_32b_flip_8b", "128b_atom_64b"};
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(parse_swizzle(sw[i]));
    EXPECT_EQ(static_cast<int>(*parse_swizzle(sw[i])), i);
    EXPECT_EQ(name(*parse_swizzle(sw[i])), sw[i]);
  }
  const char* il[] = {"none", "16b", "32b"};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(static_cast<int>(*parse_interleave(il[i])), i);
  const char* l2[] = {"none", "64b", "128b", "256b"};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(static_cast<int>(*parse_l2_promotion(l2[i])), i);
  EXPECT_EQ(name(OobFill::zero), "none");  // the driver's FLOAT_OOB_FILL_NONE
  EXPECT_EQ(parse_oob_fill("none"), OobFill::zero);
  EXPECT_EQ(parse_oob_fill("nan_request_zero_fma"), OobFill::nan_request_zero_fma);
  EXPECT_FALSE(parse_oob_fill("zero"));
  EXPECT_EQ(parse_encode("tiled"), Encode::tiled);
  EXPECT_EQ(parse_encode("im2col"), Encode::im2col);
  EXPECT_EQ(parse_encode("im2col_wide"), Encode::im2col_wide);
  EXPECT_EQ(parse_wide_mode("w"), WideMode::w);
  EXPECT_EQ(parse_wide_mode("w128"), WideMode::w128);
  EXPECT_FALSE(parse_swizzle("16b"));
  EXPECT_FALSE(parse_interleave("64b"));
}

TEST(Names, ElementFacts) {
  // §1.2: bits per element and the bytes used in byte rules.
  struct Row { DataType t; int bits, bytes; bool fl; bool packed; };
  const Row rows[] = {
      {DataType::uint8, 8, 1, false, false},        {DataType::uint16, 16, 2, false, false},
      {DataType::uint32, 32, 4, false, false},      {DataType::int32, 32, 4, false, false},
      {DataType::uint64, 64, 8, false, false},      {DataType::int64, 64, 8, false, false},
      {DataType::float16, 16, 2, true, false},      {DataType::float32, 32, 4, true, false},
      {DataType::float64, 64, 8, true, false},      {DataType::bfloat16, 16, 2, true, false},
      {DataType::float32_ftz, 32, 4, true, false},  {DataType::tfloat32, 32, 4, true, false},
      {DataType::tfloat32_ftz, 32, 4, true, false}, {DataType::u4_align8b, 4, 0, false, true},
      {DataType::u4_align16b, 4, 1, false, true},   {DataType::u6_align16b, 6, 1, false, true},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(std::string(name(r.t)));
    EXPECT_EQ(bits_per_element(r.t), r.bits);
    EXPECT_EQ(element_bytes(r.t), r.bytes);
    EXPECT_EQ(is_float(r.t), r.fl);
    EXPECT_EQ(is_packed(r.t), r.packed);
  }
  EXPECT_EQ(smem_bits_per_element(DataType::u4_align8b), 4);
  EXPECT_EQ(smem_bits_per_element(DataType::u4_align16b), 8);  // 8 data + 8 pad bytes per 16 values
  EXPECT_EQ(smem_bits_per_element(DataType::u6_align16b), 8);  // 12 data + 4 pad bytes per 16 values
  EXPECT_EQ(swizzle_span(Swizzle::none), 0);
  EXPECT_EQ(swizzle_span(Swizzle::b32), 32);
  EXPECT_EQ(swizzle_span(Swizzle::b64), 64);
  for (Swizzle s : {Swizzle::b128, Swizzle::b128_atom_32b, Swizzle::b128_atom_32b_flip_8b, Swizzle::b128_atom_64b})
    EXPECT_EQ(swizzle_span(s), 128);
}

}  // namespace
}  // namespace tmakit::tensor_map
