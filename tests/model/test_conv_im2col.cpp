// The tiles an implicit-GEMM convolution loads through im2col (§4), checked against
// nothing but a direct convolution's index arithmetic written here: NHWC input,
// 3x3 filter, padding 1, strides 1 and 2, dilations 1 and 2.
//
// The GEMM's A operand has one row per output pixel m = (n, oh, ow) and one column
// per (filter tap r, s; channel c); the direct convolution says element (m; r, s, c)
// is input[n][oh*stride - pad + r*dil][ow*stride - pad + s*dil][c], or 0 where that
// lies in the padding (or past the channels: K residue). The im2col map follows
// CUTLASS: corners lower = -pad, upper = pad - dil*(R - 1), traversal stride = the
// convolution stride, one load per (M tile, tap, channel group) with the filter base
// of the tile's first output pixel and offsets (s*dil, r*dil).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tmakit/model/im2col.hpp"
#include "tmakit/model/memory.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace {

using namespace tmakit;
using namespace tmakit::model;
using tensor_map::DataType;
using tensor_map::Encode;
using tensor_map::Swizzle;
using tensor_map::TensorMap;

constexpr int kN = 2, kH = 7, kW = 6, kC = 40;  // input NHWC, uint16 elements
constexpr int kR = 3, kS = 3, kPad = 1;          // 3x3 filter, padding 1
constexpr int kBM = 32, kBK = 32;                // GEMM tile: 32 output pixels x 32 channels

uint16_t input_value(int n, int h, int w, int c) { return uint16_t(((n * kH + h) * kW + w) * kC + c + 1); }

// §3.1, 64B: chunk j of 128-byte line l lands at j ^ (l mod 4).
uint32_t swizzle64(uint32_t a) { return (a & ~0x30u) | ((((a >> 4) & 3) ^ ((a >> 7) & 3)) << 4); }

struct Conv {
  int stride, dil;
  int P() const { return (kH + 2 * kPad - dil * (kR - 1) - 1) / stride + 1; }
  int Q() const { return (kW + 2 * kPad - dil * (kS - 1) - 1) / stride + 1; }
  // The direct convolution's view of A(m; r, s, c).
  uint16_t a(int m, int r, int s, int c) const {
    if (m >= kN * P() * Q() || c >= kC) return 0;  // M and K residue: zero rows / columns
    const int n = m / (P() * Q()), oh = m / Q() % P(), ow = m % Q();
    const int ih = oh * stride - kPad + r * dil, iw = ow * stride - kPad + s * dil;
    if (ih < 0 || ih >= kH || iw < 0 || iw >= kW) return 0;  // padding
    return input_value(n, ih, iw, c);
  }
};

class ConvIm2col : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(ConvIm2col, EveryTileHoldsWhatTheDirectConvolutionReads) {
  const Conv conv{GetParam().first, GetParam().second};
  GlobalMemory g;
  TensorMap m;
  m.encode = Encode::im2col;
  m.data_type = DataType::uint16;
  m.rank = 4;
  m.dims = {kC, kW, kH, kN};
  m.strides = {kC * 2, kC * 2 * kW, kC * 2 * kW * kH};
  m.global_address = g.allocate("input", uint64_t(kC) * 2 * kW * kH * kN, 1024);
  auto& bytes = g.allocation("input")->bytes;
  for (int n = 0; n < kN; ++n)
    for (int h = 0; h < kH; ++h)
      for (int w = 0; w < kW; ++w)
        for (int c = 0; c < kC; ++c) {
          const uint16_t v = input_value(n, h, w, c);
          std::memcpy(bytes.data() + (((n * kH + h) * kW + w) * kC + c) * 2, &v, 2);
        }
  m.pixel_box_lower = {-kPad, -kPad};
  m.pixel_box_upper = {kPad - conv.dil * (kS - 1), kPad - conv.dil * (kR - 1)};  // W first (H11)
  m.element_strides = {1, uint32_t(conv.stride), uint32_t(conv.stride), 1, 1};
  m.channels_per_pixel = kBK;
  m.pixels_per_column = kBM;
  m.swizzle = Swizzle::b64;
  EXPECT_FALSE(tensor_map::validate(m, spec::Target{90, spec::Suffix::a}).has_errors());

  const int M = kN * conv.P() * conv.Q();
  int tiles = 0;
  for (int m0 = 0; m0 < M; m0 += kBM)
    for (int r = 0; r < kR; ++r)
      for (int s = 0; s < kS; ++s)
        for (int c0 = 0; c0 < kC; c0 += kBK) {
          // The filter base of the tile's first output pixel.
          const int n = m0 / (conv.P() * conv.Q()), oh = m0 / conv.Q() % conv.P(), ow = m0 % conv.Q();
          const std::vector<int32_t> coords = {c0, ow * conv.stride - kPad, oh * conv.stride - kPad, n};
          Im2colInfo info;
          info.offsets = {s * conv.dil, r * conv.dil, 0};
          std::vector<uint8_t> smem(kBM * kBK * 2, 0xEE);
          im2col_load(m, coords, info, g, smem, 0);
          for (int i = 0; i < kBM; ++i)
            for (int k = 0; k < kBK; ++k) {
              uint16_t got;
              std::memcpy(&got, smem.data() + swizzle64(uint32_t(i * kBK + k) * 2), 2);
              ASSERT_EQ(got, conv.a(m0 + i, r, s, c0 + k))
                  << "stride " << conv.stride << " dilation " << conv.dil << ": row m = " << m0 + i << ", tap (" << r
                  << ", " << s << "), channel " << c0 + k;
            }
          ++tiles;
        }
  EXPECT_EQ(tiles, (M + kBM - 1) / kBM * kR * kS * 2);
}

INSTANTIATE_TEST_SUITE_P(StrideDilation, ConvIm2col,
                         ::testing::Values(std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}, std::pair{2, 2}),
                         [](const auto& info) {
                           return "stride" + std::to_string(info.param.first) + "_dilation" +
                                  std::to_string(info.param.second);
                         });

}  // namespace
