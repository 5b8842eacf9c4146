// Derived facts against the spec's worked examples (§2.8, §3.5, H2, H17) and a
// naive reference that counts elements one by one.
#include <gtest/gtest.h>

#include <random>

#include "maps.hpp"

namespace tmakit::tensor_map {
namespace {

using namespace testing;

// §2.8 A/B: UINT16, G = {256, 64}, S[1] = 512, B = {32, 8}.
TensorMap example_a() {
  TensorMap m;
  m.data_type = DataType::uint16;
  m.rank = 2;
  m.dims = {256, 64};
  m.strides = {512};
  m.box = {32, 8};
  return m;
}

TEST(Derived, WorkedExampleA) {
  TensorMap m = example_a();
  EXPECT_EQ(m.bytes_per_box(), 512u);  // 32 × 8 × 2
  EXPECT_EQ(m.row_bytes(), 64u);       // shared row k1 starts at D + 64·k1
  EXPECT_EQ(m.row_pitch(), 64u);
  EXPECT_EQ(m.rows(), 8u);
  EXPECT_EQ(m.smem_footprint(), 512u);
  EXPECT_EQ(m.stride_bytes(0), 2u);
  EXPECT_EQ(m.stride_bytes(1), 512u);
}

TEST(Derived, WorkedExampleBElementStrides) {
  TensorMap m = example_a();
  m.element_strides = {1, 3};
  EXPECT_EQ(m.elements(0), 32u);
  EXPECT_EQ(m.elements(1), 3u);  // ceil(8 / 3)
  EXPECT_EQ(m.bytes_per_box(), 192u);
  EXPECT_EQ(m.row_pitch(), 64u);  // rows packed densely
  EXPECT_EQ(m.smem_footprint(), 192u);
}

TEST(Derived, InnerElementStrideIgnoredWithoutInterleave) {
  // H16: elementStrides[0] > 1 with interleave none is accepted and ignored.
  TensorMap m = example_a();
  m.element_strides = {4, 1};
  EXPECT_EQ(m.traversal_stride(0), 1u);
  EXPECT_EQ(m.elements(0), 32u);
  EXPECT_EQ(m.bytes_per_box(), 512u);
  // With interleave it counts (§2.4).
  m.interleave = Interleave::b16;
  EXPECT_EQ(m.traversal_stride(0), 4u);
  EXPECT_EQ(m.elements(0), 8u);
}

TEST(Derived, NarrowRowsUseFullSwizzleSpan) {
  // H2: fp16 box {32, 8} with 128B swizzle: 64 data bytes per row, 128-byte pitch.
  TensorMap m = example_a();
  m.data_type = DataType::float16;
  m.swizzle = Swizzle::b128;
  EXPECT_EQ(m.row_bytes(), 64u);
  EXPECT_EQ(m.row_pitch(), 128u);
  EXPECT_EQ(m.smem_footprint(), 1024u);
  EXPECT_EQ(m.bytes_per_box(), 512u);  // the transaction count is data only (§2.3)
  // §2.8 C: 64B swizzle with 64-byte rows needs no padding.
  m.swizzle = Swizzle::b64;
  EXPECT_EQ(m.row_pitch(), 64u);
  EXPECT_EQ(m.smem_footprint(), 512u);
}

TEST(Derived, SwizzlePeriodAndAlignment) {
  TensorMap m = example_a();
  const std::pair<Swizzle, uint32_t> periods[] = {
      {Swizzle::none, 128}, {Swizzle::b32, 256}, {Swizzle::b64, 512}, {Swizzle::b128, 1024}};  // §3.1 table
  for (auto [s, p] : periods) {
    m.swizzle = s;
    EXPECT_EQ(m.swizzle_period(), p) << name(s);
    EXPECT_EQ(m.smem_alignment(), 128u) << name(s);  // H15
  }
}

TEST(Derived, H17BoxBytesLimitExamples) {
  TensorMap m = tiled_rank3_u8();
  m.box = {256, 16, 57};
  EXPECT_EQ(m.bytes_per_box(), 233472u);
  m.box = {16, 139, 105};
  EXPECT_EQ(m.bytes_per_box(), 233520u);
  m.dims = {1, 1, 1};  // not clipped to the tensor
  EXPECT_EQ(m.bytes_per_box(), 233520u);
}

TEST(Derived, Im2colBox) {
  TensorMap m = im2col_base();  // fp16, 64 channels, 64 pixels
  EXPECT_EQ(m.elements(0), 64u);
  EXPECT_EQ(m.elements(1), 64u);
  EXPECT_EQ(m.elements(2), 1u);
  EXPECT_EQ(m.bytes_per_box(), 64u * 64u * 2u);
  EXPECT_EQ(m.row_bytes(), 128u);
  EXPECT_EQ(m.rows(), 64u);
  EXPECT_EQ(m.smem_footprint(), 8192u);
  // Traversal strides do not change the pixel count (§4.2 item 4).
  m.element_strides = {1, 2, 2, 1};
  EXPECT_EQ(m.bytes_per_box(), 8192u);
}

TEST(Derived, Im2colWideW128UsesPixels128) {
  TensorMap m = wide_base();  // 64 fp16 channels, 32 pixels
  EXPECT_EQ(m.bytes_per_box(), 64u * 32u * 2u);
  m.wide_mode = WideMode::w128;  // §1.5: pixelsPerColumn ignored, always 128
  EXPECT_EQ(m.bytes_per_box(), 64u * 128u * 2u);
  EXPECT_EQ(m.rows(), 128u);
}

TEST(Derived, PackedTypes) {
  // 16U4_ALIGN8B: two values per byte; the ALIGN16B types: one smem byte per value (§2.5).
  TensorMap m = example_a();
  m.data_type = DataType::u4_align8b;
  m.box = {64, 8};
  EXPECT_EQ(m.row_bytes(), 32u);
  EXPECT_EQ(m.bytes_per_box(), 256u);
  m.data_type = DataType::u6_align16b;
  m.box = {128, 8};
  EXPECT_EQ(m.row_bytes(), 128u);
  EXPECT_EQ(m.bytes_per_box(), 1024u);
}

TEST(Derived, HugeFieldsSaturateInsteadOfWrapping) {
  TensorMap m = example_a();
  m.rank = 5;
  m.box = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
  m.data_type = DataType::float64;
  EXPECT_EQ(m.bytes_per_box(), UINT64_MAX);
  EXPECT_GT(m.smem_footprint(), 233472u);
  m.element_strides = {0, 0, 0, 0, 0};  // invalid, but derived facts stay defined
  EXPECT_EQ(m.elements(1), UINT32_MAX);
}

// Q26: interleaved rows are dense, so a box can end inside a swizzle span; the
// footprint runs to the end of that span (the XOR moves chunks inside it).
TEST(Derived, InterleavedFootprintEndsAtTheLastSwizzleSpan) {
  TensorMap m;
  m.data_type = DataType::uint16;
  m.rank = 3;
  m.interleave = Interleave::b16;
  m.box = {4, 5, 3};  // 4 slices of 16 bytes per row; dimension 1 walked once; 3 rows
  EXPECT_EQ(m.bytes_per_box(), 4u * 16 * 3);
  EXPECT_EQ(m.row_pitch(), 64u);
  EXPECT_EQ(m.smem_footprint(), 192u);  // no swizzle
  m.swizzle = Swizzle::b64;
  EXPECT_EQ(m.smem_footprint(), 192u);  // 3 × 64: ends on a span
  m.swizzle = Swizzle::b128;
  EXPECT_EQ(m.smem_footprint(), 256u);  // the third row ends half way into a 128-byte span
  EXPECT_EQ(m.bytes_per_box(), 192u);   // complete_tx counts the slices only
}

// Property: bytes_per_box equals a count of tile indices k with k × E < B, element by element.
TEST(Derived, MatchesNaiveCountOnRandomMaps) {
  std::mt19937 rng(12345);
  const DataType types[] = {DataType::uint8, DataType::uint16, DataType::float32, DataType::float64};
  for (int iter = 0; iter < 300; ++iter) {
    TensorMap m;
    m.data_type = types[rng() % 4];
    m.rank = 1 + static_cast<int>(rng() % 5);
    m.interleave = rng() % 4 == 0 ? Interleave::b16 : Interleave::none;
    for (int i = 0; i < m.rank; ++i) {
      m.box[i] = 1 + rng() % 24;
      m.element_strides[i] = 1 + rng() % 8;
    }
    uint64_t count = 1, rows = 1;
    for (int i = 0; i < m.rank; ++i) {
      uint64_t e = (i == 0 && m.interleave == Interleave::none) ? 1 : m.element_strides[i];
      uint64_t n = 0;
      for (uint64_t k = 0; k * e < m.box[i]; ++k) ++n;
      // Q26: an interleaved load walks dimension rank-2 once.
      if (m.interleave != Interleave::none && m.rank >= 3 && i == m.rank - 2) n = 1;
      count *= n;
      if (i > 0) rows *= n;
    }
    // Q26: an interleaved element of dimension 0 is a 16-byte slice.
    const uint64_t elem = m.interleave == Interleave::none ? element_bytes(m.data_type) : 16;
    EXPECT_EQ(m.bytes_per_box(), count * elem);
    EXPECT_EQ(m.rows(), rows);
    EXPECT_EQ(m.smem_footprint(), rows * m.row_pitch());
  }
}

}  // namespace
}  // namespace tmakit::tensor_map
