// Base maps shared by the tensor-map tests: each is clean (no errors) for its target,
// so a test that changes one field sees only the rule that field breaks.
#pragma once
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::tensor_map::testing {

inline const spec::Target kSm90a{90, spec::Suffix::a};
inline const spec::Target kSm100a{100, spec::Suffix::a};

// The quickstart map of docs/scenario-format.md: float32 512 × 512, box {32, 16}.
inline TensorMap tiled_base() {
  TensorMap m;
  m.data_type = DataType::float32;
  m.rank = 2;
  m.global_address = 0x10000;
  m.dims = {512, 512};
  m.strides = {2048};
  m.box = {32, 16};
  return m;
}

// A rank-3 uint8 map whose dims and box are big enough for the box-bytes tests.
inline TensorMap tiled_rank3_u8() {
  TensorMap m;
  m.data_type = DataType::uint8;
  m.rank = 3;
  m.global_address = 0x10000;
  m.dims = {1024, 1024, 1024};
  m.strides = {1024, 1024 * 1024};
  m.box = {16, 16, 16};
  return m;
}

// Interleave 32B needs swizzle 32B, 32-byte alignment and rank >= 3 (§1.3).
inline TensorMap interleaved_base() {
  TensorMap m;
  m.data_type = DataType::float32;
  m.rank = 3;
  m.global_address = 0x10000;
  m.dims = {8, 16, 16};
  m.strides = {32, 512};
  m.box = {8, 8, 8};
  m.interleave = Interleave::b32;
  m.swizzle = Swizzle::b32;
  return m;
}

// NHWC fp16 im2col map: C 64, W 8, H 8, N 2; corners (-1, -1) / (-1, -1) (GLUON-style padding).
inline TensorMap im2col_base() {
  TensorMap m;
  m.encode = Encode::im2col;
  m.data_type = DataType::float16;
  m.rank = 4;
  m.global_address = 0x10000;
  m.dims = {64, 8, 8, 2};
  m.strides = {128, 1024, 8192};
  m.pixel_box_lower = {-1, -1};
  m.pixel_box_upper = {-1, -1};
  m.channels_per_pixel = 64;
  m.pixels_per_column = 64;
  m.swizzle = Swizzle::b128;
  return m;
}

// NWC fp16 im2col_wide map (sm_100+, §1.5).
inline TensorMap wide_base() {
  TensorMap m;
  m.encode = Encode::im2col_wide;
  m.data_type = DataType::float16;
  m.rank = 3;
  m.global_address = 0x10000;
  m.dims = {64, 32, 4};
  m.strides = {128, 4096};
  m.pixel_box_lower_w = -1;
  m.pixel_box_upper_w = 0;
  m.channels_per_pixel = 64;
  m.pixels_per_column = 32;
  m.swizzle = Swizzle::b128;
  return m;
}

// 16U6_ALIGN16B (sm_100+): dims[0] % 128 == 0, box[0] == 128, 32-byte strides (§1.3).
inline TensorMap packed_base() {
  TensorMap m;
  m.data_type = DataType::u6_align16b;
  m.rank = 2;
  m.global_address = 0x10000;
  m.dims = {256, 16};
  m.strides = {192};  // 256 six-bit values = 192 bytes
  m.box = {128, 8};
  m.swizzle = Swizzle::b128;
  return m;
}

}  // namespace tmakit::tensor_map::testing
