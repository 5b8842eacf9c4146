// Every rule of map_rules(): one map just inside the limit (the rule stays silent) and
// one a step past it (the rule fires, naming the field). Limits from §1.3-§1.5 and §0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <set>

#include "maps.hpp"

namespace tmakit::tensor_map {
namespace {

using namespace testing;
using Edit = std::function<void(TensorMap&)>;

struct Case {
  const char* rule;
  const char* name;        // what the pair probes
  TensorMap (*base)();
  Edit ok, bad;
  const char* where;       // field the bad map's diagnostic names
  spec::Target target = kSm90a;
};

const Diagnostic* find(const Diagnostics& ds, std::string_view rule) {
  for (const auto& d : ds)
    if (d.rule == rule) return &d;
  return nullptr;
}
// The pointer would outlive a temporary list (ASan: heap-use-after-free): keep the list.
const Diagnostic* find(Diagnostics&&, std::string_view) = delete;

// An im2col_wide map of rank r (4 or 5): H and D of 4, a dense stride chain.
void wide_rank(TensorMap& m, int r) {
  m.rank = r;
  for (int i = 2; i < r; ++i) m.dims[i] = 4, m.strides[i - 1] = m.strides[i - 2] * m.dims[i - 1];
}

// Rank r with outer dims of 4 and a dense stride chain on top of the base map.
void set_rank(TensorMap& m, int r) {
  m.rank = r;
  for (int i = 2; i < 5; ++i) {
    m.dims[i] = 4;
    m.box[i] = 1;
    m.strides[i - 1] = m.strides[i - 2] * m.dims[i - 1];
  }
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"map.rank-range", "rank 5 / 6", tiled_base, [](auto& m) { set_rank(m, 5); }, [](auto& m) { set_rank(m, 6); },
       "rank"},
      {"map.rank-range", "rank 1 / 0", tiled_base, [](auto& m) { m.rank = 1; }, [](auto& m) { m.rank = 0; }, "rank"},
      {"map.global-address-align", "16 / 8", tiled_base, [](auto& m) { m.global_address = 0x10010; },
       [](auto& m) { m.global_address = 0x10008; }, "global_address"},
      {"map.global-address-align", "interleave 32b: 32 / 16", interleaved_base,
       [](auto& m) { m.global_address = 0x10020; }, [](auto& m) { m.global_address = 0x10010; }, "global_address"},
      {"map.global-address-align", "16u6_align16b: 32 / 16", packed_base, [](auto& m) { m.global_address = 0x10020; },
       [](auto& m) { m.global_address = 0x10010; }, "global_address", kSm100a},
      {"map.global-dim-range", "2^32 / 2^32 + 1", tiled_base, [](auto& m) { m.dims[1] = 1ull << 32; },
       [](auto& m) { m.dims[1] = (1ull << 32) + 1; }, "dims[1]"},
      {"map.global-dim-range", "1 / 0", tiled_base, [](auto& m) { m.dims[1] = 1; }, [](auto& m) { m.dims[1] = 0; },
       "dims[1]"},
      {"map.global-stride-align", "2064 / 2056", tiled_base, [](auto& m) { m.strides[0] = 2064; },
       [](auto& m) { m.strides[0] = 2056; }, "strides[0]"},
      {"map.global-stride-align", "interleave 32b: 544 / 528", interleaved_base, [](auto& m) { m.strides[1] = 544; },
       [](auto& m) { m.strides[1] = 528; }, "strides[1]"},
      {"map.global-stride-range", "2^40 - 16 / 2^40", tiled_base, [](auto& m) { m.strides[0] = (1ull << 40) - 16; },
       [](auto& m) { m.strides[0] = 1ull << 40; }, "strides[0]"},
      {"map.box-dim-range", "256 / 257", tiled_base, [](auto& m) { m.box[1] = 256; }, [](auto& m) { m.box[1] = 257; },
       "box[1]"},
      {"map.box-dim-range", "1 / 0", tiled_base, [](auto& m) { m.box[1] = 1; }, [](auto& m) { m.box[1] = 0; },
       "box[1]"},
      {"map.box-inner-bytes", "float32 4 / 5", tiled_base, [](auto& m) { m.box[0] = 4; },
       [](auto& m) { m.box[0] = 5; }, "box[0]"},
      {"map.box-inner-bytes", "uint8 16 / 17", tiled_rank3_u8, [](auto& m) { m.box[0] = 16; },
       [](auto& m) { m.box[0] = 17; }, "box[0]"},
      {"map.box-inner-bytes", "16u4_align8b 32 / 31 (half bytes)", tiled_base,
       [](auto& m) { m.data_type = DataType::u4_align8b, m.box[0] = 32; },
       [](auto& m) { m.data_type = DataType::u4_align8b, m.box[0] = 31; }, "box[0]", kSm100a},
      // HW5: the driver applies the 16-byte rule to interleaved maps too (cuda.h says NONE only).
      {"map.box-inner-bytes", "interleave 32b, float32 4 / 3", interleaved_base, [](auto& m) { m.box[0] = 4; },
       [](auto& m) { m.box[0] = 3; }, "box[0]"},
      {"map.box-inner-bytes", "interleave 16b, float32 4 / 2 (8 bytes, refused on the H100)", interleaved_base,
       [](auto& m) { m.interleave = Interleave::b16, m.box[0] = 4; },
       [](auto& m) { m.interleave = Interleave::b16, m.box[0] = 2; }, "box[0]"},
      {"map.element-stride-range", "8 / 9", tiled_base, [](auto& m) { m.element_strides[1] = 8; },
       [](auto& m) { m.element_strides[1] = 9; }, "element_strides[1]"},
      {"map.element-stride-range", "1 / 0", tiled_base, [](auto& m) { m.element_strides[0] = 1; },
       [](auto& m) { m.element_strides[0] = 0; }, "element_strides[0]"},
      {"map.interleave-rank", "rank 3 / 2", interleaved_base, [](auto& m) { m.rank = 3; }, [](auto& m) { m.rank = 2; },
       "interleave"},
      // HW3: a warning now (the H100 driver accepts interleave 32b with any swizzle).
      {"map.interleave-swizzle", "32b / 64b", interleaved_base, [](auto& m) { m.swizzle = Swizzle::b32; },
       [](auto& m) { m.swizzle = Swizzle::b64; }, "swizzle"},
      {"map.interleave-swizzle", "interleave 16b / 32b with swizzle none", interleaved_base,
       [](auto& m) { m.interleave = Interleave::b16, m.swizzle = Swizzle::none; },
       [](auto& m) { m.interleave = Interleave::b32, m.swizzle = Swizzle::none; }, "swizzle"},
      // Q26: dimension rank-2 of an interleaved load is walked once.
      {"map.interleave-walk-once", "box[1] 1 / 2 (rank 3)", interleaved_base, [](auto& m) { m.box[1] = 1; },
       [](auto& m) { m.box[1] = 2; }, "box[1]"},
      {"map.interleave-walk-once", "element_strides[2] 1 / 2 (rank 4)", interleaved_base,
       [](auto& m) { m.rank = 4, m.dims[3] = 2, m.strides[2] = 8192, m.box = {8, 8, 1, 2}; },
       [](auto& m) { m.rank = 4, m.dims[3] = 2, m.strides[2] = 8192, m.box = {8, 8, 1, 2}, m.element_strides[2] = 2; },
       "box[2]"},
      {"map.swizzle-span", "128b: 128 / 144 bytes", tiled_base,
       [](auto& m) { m.swizzle = Swizzle::b128, m.box[0] = 32; },
       [](auto& m) { m.swizzle = Swizzle::b128, m.box[0] = 36; }, "box[0]"},
      {"map.swizzle-span", "32b: 32 / 48 bytes", tiled_base, [](auto& m) { m.swizzle = Swizzle::b32, m.box[0] = 8; },
       [](auto& m) { m.swizzle = Swizzle::b32, m.box[0] = 12; }, "box[0]"},
      {"map.swizzle-span", "im2col 64b: 64 / 80 bytes", im2col_base,
       [](auto& m) { m.swizzle = Swizzle::b64, m.channels_per_pixel = 32; },
       [](auto& m) { m.swizzle = Swizzle::b64, m.channels_per_pixel = 40; }, "channels_per_pixel"},
      {"map.oob-nan-type", "float16 / uint16", tiled_base,
       [](auto& m) { m.data_type = DataType::float16, m.box[0] = 8, m.oob_fill = OobFill::nan_request_zero_fma; },
       [](auto& m) { m.data_type = DataType::uint16, m.box[0] = 8, m.oob_fill = OobFill::nan_request_zero_fma; },
       "oob_fill"},
      {"map.oob-nan-type", "packed", packed_base, [](auto& m) { m.oob_fill = OobFill::zero; },
       [](auto& m) { m.oob_fill = OobFill::nan_request_zero_fma; }, "oob_fill", kSm100a},
      // H17: 233,472 accepted, 233,520 rejected.
      {"map.box-bytes-limit", "233472 / 233520", tiled_rank3_u8, [](auto& m) { m.box = {256, 16, 57}; },
       [](auto& m) { m.box = {16, 139, 105}; }, "box"},
      // HW1: the driver counts floor(box[i] / E[i]): 256 × floor(33 / 2) × 57 = 233,472 is accepted
      // (a load delivers 256 × 17 × 57 = 248,064), 256 × floor(34 / 2) × 57 = 248,064 refused.
      {"map.box-bytes-limit", "element strides count floor: 33 / 34", tiled_rank3_u8,
       [](auto& m) { m.box = {256, 33, 57}, m.element_strides = {1, 2, 1}; },
       [](auto& m) { m.box = {256, 34, 57}, m.element_strides = {1, 2, 1}; }, "box"},
      // HW1: element_strides[0] counts too (H16 says it is ignored without interleave):
      // 128 × 228 × 8 = 233,472 accepted (the notes' example), 128 × 229 × 8 = 234,496 refused.
      {"map.box-bytes-limit", "element_strides[0] counts: 228 / 229", tiled_rank3_u8,
       [](auto& m) { m.box = {256, 228, 8}, m.element_strides = {2, 1, 1}; },
       [](auto& m) { m.box = {256, 229, 8}, m.element_strides = {2, 1, 1}; }, "box"},
      // HW1: a box of 1 with element stride 4 counts 0, so the product is 0 (the notes' float32 example).
      {"map.box-bytes-limit", "box 1 / 4 under element stride 4", tiled_base,
       [](auto& m) {
         m.rank = 5, m.dims = {512, 512, 512, 512, 512}, m.strides = {2048, 1 << 20, 1 << 29, 1ull << 38};
         m.box = {4, 76, 1, 4, 243}, m.element_strides = {1, 2, 4, 1, 1};
       },
       [](auto& m) {
         m.rank = 5, m.dims = {512, 512, 512, 512, 512}, m.strides = {2048, 1 << 20, 1 << 29, 1ull << 38};
         m.box = {4, 76, 4, 4, 243}, m.element_strides = {1, 2, 4, 1, 1};
       },
       "box"},
      {"map.box-bytes-limit", "not clipped to the tensor", tiled_rank3_u8,
       [](auto& m) { m.dims = {16, 16, 16}, m.box = {256, 16, 57}; },
       [](auto& m) { m.dims = {16, 16, 16}, m.box = {16, 139, 105}; }, "box"},
      {"map.box-bytes-limit", "im2col 128 × 912 × 2 / × 913", im2col_base,
       [](auto& m) { m.channels_per_pixel = 128, m.swizzle = Swizzle::none, m.pixels_per_column = 912; },
       [](auto& m) { m.channels_per_pixel = 128, m.swizzle = Swizzle::none, m.pixels_per_column = 913; },
       "pixels_per_column"},
      // HW12: with interleave the driver still counts channels × pixels × element size
      // (128 × 2 bytes × 913 > 233,472), though a load delivers one 16-byte slice a pixel.
      {"map.box-bytes-limit", "im2col interleave 16b: 128 × 912 × 2 / × 913", im2col_base,
       [](auto& m) { m.interleave = Interleave::b16, m.channels_per_pixel = 128, m.pixels_per_column = 912; },
       [](auto& m) { m.interleave = Interleave::b16, m.channels_per_pixel = 128, m.pixels_per_column = 913; },
       "pixels_per_column"},
      // What a load really delivers (ceil, E[0] ignored, H16) past 233,472 while the driver accepts.
      {"map.box-bytes-delivered", "ceil on dimension 1: 32 / 33", tiled_rank3_u8,
       [](auto& m) { m.box = {256, 32, 57}, m.element_strides = {1, 2, 1}; },
       [](auto& m) { m.box = {256, 33, 57}, m.element_strides = {1, 2, 1}; }, "box"},
      {"map.box-bytes-delivered", "element_strides[0] ignored: 128 / 144", tiled_rank3_u8,
       [](auto& m) { m.box = {128, 228, 8}, m.element_strides = {2, 1, 1}; },
       [](auto& m) { m.box = {144, 228, 8}, m.element_strides = {2, 1, 1}; }, "box"},
      {"map.packed-type-target", "sm_100a / sm_90a", packed_base, [](auto&) {}, [](auto&) {}, "data_type", kSm100a},
      {"map.atom-swizzle-target", "sm_100a / sm_90a", tiled_base, [](auto& m) { m.swizzle = Swizzle::b128_atom_32b; },
       [](auto& m) { m.swizzle = Swizzle::b128_atom_64b; }, "swizzle", kSm100a},
      // The other packed types and atom swizzles, each refused on sm_90a by its own rule (§1.2, §3.4, H17).
      {"map.packed-type-target", "16u4_align16b: sm_100a / sm_90a", packed_base,
       [](auto& m) { m.data_type = DataType::u4_align16b, m.strides[0] = 128; },
       [](auto& m) { m.data_type = DataType::u4_align16b, m.strides[0] = 128; }, "data_type", kSm100a},
      {"map.packed-type-target", "16u4_align8b: sm_100a / sm_90a", tiled_base,
       [](auto& m) { m.data_type = DataType::u4_align8b, m.dims[0] = 512; },
       [](auto& m) { m.data_type = DataType::u4_align8b, m.dims[0] = 512; }, "data_type", kSm100a},
      {"map.atom-swizzle-target", "flip_8b: sm_100a / sm_90a", tiled_base,
       [](auto& m) { m.swizzle = Swizzle::b128_atom_32b_flip_8b; },
       [](auto& m) { m.swizzle = Swizzle::b128_atom_32b_flip_8b; }, "swizzle", kSm100a},
      {"map.packed-global-dim", "16u6: 256 / 272", packed_base, [](auto& m) { m.dims[0] = 256; },
       [](auto& m) { m.dims[0] = 272; }, "dims[0]", kSm100a},
      {"map.packed-global-dim", "16u4_align8b: 512 / 511", tiled_base,
       [](auto& m) { m.data_type = DataType::u4_align8b, m.dims[0] = 512; },
       [](auto& m) { m.data_type = DataType::u4_align8b, m.dims[0] = 511; }, "dims[0]", kSm100a},
      {"map.packed-box-inner", "128 / 64", packed_base, [](auto& m) { m.box[0] = 128; },
       [](auto& m) { m.box[0] = 64; }, "box[0]", kSm100a},
      {"map.packed-channels", "128 / 64", im2col_base,
       [](auto& m) { m.data_type = DataType::u6_align16b, m.dims[0] = 128, m.channels_per_pixel = 128; },
       [](auto& m) { m.data_type = DataType::u6_align16b, m.dims[0] = 128, m.channels_per_pixel = 64; },
       "channels_per_pixel", kSm100a},
      {"map.packed-interleave", "none / 16b", packed_base, [](auto& m) { m.interleave = Interleave::none; },
       [](auto& m) { m.interleave = Interleave::b16; }, "interleave", kSm100a},
      {"map.packed-swizzle", "16u4_align16b: 128b_atom_32b / 128b_atom_64b", packed_base,
       [](auto& m) { m.data_type = DataType::u4_align16b, m.strides[0] = 128, m.swizzle = Swizzle::b128_atom_32b; },
       [](auto& m) { m.data_type = DataType::u4_align16b, m.strides[0] = 128, m.swizzle = Swizzle::b128_atom_64b; },
       "swizzle", kSm100a},
      {"map.packed-swizzle", "16u6: 128b_atom_64b / 128b_atom_32b_flip_8b", packed_base,
       [](auto& m) { m.swizzle = Swizzle::b128_atom_64b; }, [](auto& m) { m.swizzle = Swizzle::b128_atom_32b_flip_8b; },
       "swizzle", kSm100a},
      {"map.packed-swizzle-store-only", "128b_atom_32b / 128b_atom_64b", packed_base,
       [](auto& m) { m.swizzle = Swizzle::b128_atom_32b; }, [](auto& m) { m.swizzle = Swizzle::b128_atom_64b; },
       "swizzle", kSm100a},
      {"map.im2col-rank", "3 / 2", im2col_base,
       [](auto& m) { m.rank = 3, m.dims = {64, 8, 2}, m.strides = {128, 1024}, m.pixel_box_lower = {-1}; },
       [](auto& m) { m.rank = 2, m.dims = {64, 8}, m.strides = {128}; }, "rank"},
      {"map.im2col-rank", "5 / 6", im2col_base,
       [](auto& m) {
         m.rank = 5, m.dims = {64, 8, 8, 8, 2}, m.strides = {128, 1024, 8192, 65536};
         m.pixel_box_lower = {-1, -1, -1}, m.pixel_box_upper = {0, 0, 0};
       },
       [](auto& m) { m.rank = 6; }, "rank"},
      {"map.im2col-corner-range", "rank 4: -128 / -129", im2col_base, [](auto& m) { m.pixel_box_lower[0] = -128; },
       [](auto& m) { m.pixel_box_lower[0] = -129; }, "pixel_box_lower[0]"},
      {"map.im2col-corner-range", "rank 4: 127 / 128", im2col_base, [](auto& m) { m.pixel_box_upper[1] = 127; },
       [](auto& m) { m.pixel_box_upper[1] = 128; }, "pixel_box_upper[1]"},
      {"map.im2col-corner-range", "rank 3: -32768 / -32769", im2col_base,
       [](auto& m) { m.rank = 3, m.dims = {64, 8, 2}, m.strides = {128, 1024}, m.pixel_box_lower = {-32768}; },
       [](auto& m) { m.rank = 3, m.dims = {64, 8, 2}, m.strides = {128, 1024}, m.pixel_box_lower = {-32769}; },
       "pixel_box_lower[0]"},
      {"map.im2col-corner-range", "rank 5: 15 / 16", im2col_base,
       [](auto& m) {
         m.rank = 5, m.dims = {64, 8, 8, 8, 2}, m.strides = {128, 1024, 8192, 65536};
         m.pixel_box_lower = {0, 0, 0}, m.pixel_box_upper = {0, 0, 15};
       },
       [](auto& m) {
         m.rank = 5, m.dims = {64, 8, 8, 8, 2}, m.strides = {128, 1024, 8192, 65536};
         m.pixel_box_lower = {0, 0, 0}, m.pixel_box_upper = {0, 0, 16};
       },
       "pixel_box_upper[2]"},
      // H17: a one-pixel box is accepted, an empty one rejected. W = 8: 8 + upper - lower.
      {"map.im2col-box-empty", "one pixel / none", im2col_base,
       [](auto& m) { m.pixel_box_lower[0] = 0, m.pixel_box_upper[0] = -7; },
       [](auto& m) { m.pixel_box_lower[0] = 0, m.pixel_box_upper[0] = -8; }, "pixel_box_upper[0]"},
      {"map.im2col-box-empty", "im2col_wide: one pixel / none", wide_base,
       [](auto& m) { m.pixel_box_lower_w = 0, m.pixel_box_upper_w = -31; },
       [](auto& m) { m.pixel_box_lower_w = 0, m.pixel_box_upper_w = -32; }, "pixel_box_upper_w", kSm100a},
      // HW2: the driver tests int32(W + upper) > lower with 32-bit wrap-around.
      // W = 2^31: int32(2^31 - 1) = 2147483647 > 0 accepted; int32(2^31) = -2^31 refused.
      {"map.im2col-box-empty", "W = 2^31: upper -1 / 0 (wraps)", im2col_base,
       [](auto& m) { m.dims[1] = 1ull << 31, m.pixel_box_lower[0] = 0, m.pixel_box_upper[0] = -1; },
       [](auto& m) { m.dims[1] = 1ull << 31, m.pixel_box_lower[0] = 0, m.pixel_box_upper[0] = 0; },
       "pixel_box_upper[0]"},
      // W = 2^32: int32(2^32 + 0) = 0, accepted above lower -1, refused at lower 0.
      {"map.im2col-box-empty", "W = 2^32: lower -1 / 0 (wraps to upper)", im2col_base,
       [](auto& m) { m.dims[1] = 1ull << 32, m.pixel_box_lower[0] = -1, m.pixel_box_upper[0] = 0; },
       [](auto& m) { m.dims[1] = 1ull << 32, m.pixel_box_lower[0] = 0, m.pixel_box_upper[0] = 0; },
       "pixel_box_upper[0]"},
      // H = dims[2] just below 2^31 + 2: the sum crosses 2^31 with upper 1 / 2.
      {"map.im2col-box-empty", "H = 2^31 - 2: upper 1 / 2 (wraps)", im2col_base,
       [](auto& m) { m.dims[2] = (1ull << 31) - 2, m.pixel_box_upper[1] = 1; },
       [](auto& m) { m.dims[2] = (1ull << 31) - 2, m.pixel_box_upper[1] = 2; }, "pixel_box_upper[1]"},
      // HW8: with interleave, corner entry k tests dims[k] (C in slices = 64 here), not dims[k + 1]
      // (W = 8, which upper -63 would empty).
      {"map.im2col-box-empty", "interleave 16b: entry 0 on dims[0] = 64: upper -63 / -64", im2col_base,
       [](auto& m) { m.interleave = Interleave::b16, m.pixel_box_lower = {0, -1}, m.pixel_box_upper = {-63, -1}; },
       [](auto& m) { m.interleave = Interleave::b16, m.pixel_box_lower = {0, -1}, m.pixel_box_upper = {-64, -1}; },
       "pixel_box_upper[0]"},
      // HW10: im2col_wide's W test wraps as im2col's (HW2): int32(2^31 - 1) > 0, int32(2^31) is not.
      {"map.im2col-box-empty", "im2col_wide W = 2^31: upper -1 / 0 (wraps)", wide_base,
       [](auto& m) { m.dims[1] = 1ull << 31, m.pixel_box_lower_w = 0, m.pixel_box_upper_w = -1; },
       [](auto& m) { m.dims[1] = 1ull << 31, m.pixel_box_lower_w = 0, m.pixel_box_upper_w = 0; },
       "pixel_box_upper_w", kSm100a},
      // HW10: H (and D) with corners 0: int32(H) > 0, so H = 2^31 - 1 passes and 2^31 does not.
      {"map.im2col-box-empty", "im2col_wide rank 4 H: 2^31 - 1 / 2^31", wide_base,
       [](auto& m) { wide_rank(m, 4), m.dims[2] = (1ull << 31) - 1; },
       [](auto& m) { wide_rank(m, 4), m.dims[2] = 1ull << 31; }, "dims[2]", kSm100a},
      {"map.im2col-channels", "256 / 257", im2col_base,
       [](auto& m) { m.swizzle = Swizzle::none, m.channels_per_pixel = 256; },
       [](auto& m) { m.swizzle = Swizzle::none, m.channels_per_pixel = 257; }, "channels_per_pixel"},
      {"map.im2col-channels", "1 / 0", im2col_base, [](auto& m) { m.channels_per_pixel = 1; },
       [](auto& m) { m.channels_per_pixel = 0; }, "channels_per_pixel"},
      // HW6 (issue 14): the driver refuses uint8 with 24 channels; whole 16-byte chunks pass.
      {"map.im2col-channel-bytes", "uint8: 32 / 24", im2col_base,
       [](auto& m) { m.data_type = DataType::uint8, m.channels_per_pixel = 32; },
       [](auto& m) { m.data_type = DataType::uint8, m.channels_per_pixel = 24; }, "channels_per_pixel"},
      {"map.im2col-channel-bytes", "float64 with interleave 16b: 2 / 1", im2col_base,
       [](auto& m) { m.data_type = DataType::float64, m.interleave = Interleave::b16, m.channels_per_pixel = 2; },
       [](auto& m) { m.data_type = DataType::float64, m.interleave = Interleave::b16, m.channels_per_pixel = 1; },
       "channels_per_pixel"},
      {"map.im2col-channel-bytes", "im2col_wide float16: 8 / 12", wide_base,
       [](auto& m) { m.channels_per_pixel = 8; }, [](auto& m) { m.channels_per_pixel = 12; }, "channels_per_pixel",
       kSm100a},
      {"map.im2col-pixels", "1024 / 1025", im2col_base, [](auto& m) { m.pixels_per_column = 1024; },
       [](auto& m) { m.pixels_per_column = 1025; }, "pixels_per_column"},
      {"map.im2col-pixels", "1 / 0", im2col_base, [](auto& m) { m.pixels_per_column = 1; },
       [](auto& m) { m.pixels_per_column = 0; }, "pixels_per_column"},
      // HW9: the driver checks pixelsPerColumn in mode w128 too (18 of 18 sets with 0 or 1025 refused).
      {"map.im2col-pixels", "im2col_wide w128: 1 / 0", wide_base,
       [](auto& m) { m.wide_mode = WideMode::w128, m.pixels_per_column = 1; },
       [](auto& m) { m.wide_mode = WideMode::w128, m.pixels_per_column = 0; }, "pixels_per_column", kSm100a},
      {"map.im2col-pixels", "im2col_wide w128: 1024 / 1025", wide_base,
       [](auto& m) { m.wide_mode = WideMode::w128, m.pixels_per_column = 1024; },
       [](auto& m) { m.wide_mode = WideMode::w128, m.pixels_per_column = 1025; }, "pixels_per_column", kSm100a},
      {"map.im2col-wide-target", "sm_100a / sm_90a", wide_base, [](auto&) {}, [](auto&) {}, "encode", kSm100a},
      {"map.im2col-wide-corner-range", "-32768 / -32769", wide_base, [](auto& m) { m.pixel_box_lower_w = -32768; },
       [](auto& m) { m.pixel_box_lower_w = -32769; }, "pixel_box_lower_w", kSm100a},
      {"map.im2col-wide-corner-range", "32767 / 32768", wide_base, [](auto& m) { m.pixel_box_upper_w = 32767; },
       [](auto& m) { m.pixel_box_upper_w = 32768; }, "pixel_box_upper_w", kSm100a},
      // HW10: the W corners keep im2col's per-rank budget (rank 4: [-128, 127], rank 5: [-16, 15]).
      {"map.im2col-wide-corner-range", "rank 4: 127 / 128", wide_base,
       [](auto& m) { wide_rank(m, 4), m.dims[1] = 200, m.pixel_box_upper_w = 127; },
       [](auto& m) { wide_rank(m, 4), m.dims[1] = 200, m.pixel_box_upper_w = 128; }, "pixel_box_upper_w", kSm100a},
      {"map.im2col-wide-corner-range", "rank 5: -16 / -17", wide_base,
       [](auto& m) { wide_rank(m, 5), m.pixel_box_lower_w = -16; },
       [](auto& m) { wide_rank(m, 5), m.pixel_box_lower_w = -17; }, "pixel_box_lower_w", kSm100a},
      {"map.im2col-wide-swizzle", "64b / 32b", wide_base,
       [](auto& m) { m.swizzle = Swizzle::b64, m.channels_per_pixel = 32; },
       [](auto& m) { m.swizzle = Swizzle::b32, m.channels_per_pixel = 16; }, "swizzle", kSm100a},
      {"map.im2col-wide-swizzle", "16u6: 128b_atom_32b / 64b", wide_base,
       [](auto& m) {
         m.data_type = DataType::u6_align16b, m.dims[0] = 128, m.channels_per_pixel = 128;
         m.swizzle = Swizzle::b128_atom_32b;
       },
       [](auto& m) {
         m.data_type = DataType::u6_align16b, m.dims[0] = 128, m.channels_per_pixel = 128;
         m.swizzle = Swizzle::b64;
       },
       "swizzle", kSm100a},
      {"map.im2col-wide-interleave", "none / 16b", wide_base, [](auto& m) { m.interleave = Interleave::none; },
       [](auto& m) { m.interleave = Interleave::b16; }, "interleave", kSm100a},
      // Our advisories.
      {"map.box-exceeds-tensor", "box = extent / extent + 4", tiled_base, [](auto& m) { m.dims[0] = 32; },
       [](auto& m) { m.dims[0] = 28; }, "box[0]"},
      {"map.store-inner-extent", "uint8 464 / 466 (the H6 probe)", tiled_rank3_u8, [](auto& m) { m.dims[0] = 464; },
       [](auto& m) { m.dims[0] = 466; }, "dims[0]"},
      {"map.stride-overlap", "2048 / 2032 (float32 rows of 512)", tiled_base, [](auto& m) { m.strides[0] = 2048; },
       [](auto& m) { m.strides[0] = 2032; }, "strides[0]"},
      {"map.stride-overlap", "stride 0 on a dimension of 2 / of 1", tiled_base,
       [](auto& m) { m.strides[0] = 0, m.dims[1] = 1; }, [](auto& m) { m.strides[0] = 0, m.dims[1] = 2; },
       "strides[0]"},
      {"map.stride-overlap", "transposed view without / with aliasing", tiled_base,
       [](auto& m) { m.rank = 3, m.dims = {4, 8, 16}, m.strides = {256, 16}, m.box = {4, 8, 16}; },
       [](auto& m) { m.rank = 3, m.dims = {4, 8, 16}, m.strides = {240, 16}, m.box = {4, 8, 16}; }, "strides[0]"},
  };
  return all;
}

class RuleCase : public ::testing::TestWithParam<size_t> {};

TEST_P(RuleCase, SilentInsideFiresOnePast) {
  const Case& c = cases()[GetParam()];
  SCOPED_TRACE(std::string(c.rule) + ": " + c.name);
  const MapRule* rule = find_map_rule(c.rule);
  ASSERT_NE(rule, nullptr);

  TensorMap ok = c.base();
  c.ok(ok);
  Diagnostics d_ok = validate(ok, c.target);
  EXPECT_EQ(find(d_ok, c.rule), nullptr) << format(*find(d_ok, c.rule));

  TensorMap bad = c.base();
  c.bad(bad);
  // Target rules fire by changing only the target (the map stays the same).
  spec::Target bad_target = std::string_view(c.rule).ends_with("-target") ? kSm90a : c.target;
  Diagnostics d_bad = validate(bad, bad_target);
  const Diagnostic* d = find(d_bad, c.rule);
  ASSERT_NE(d, nullptr) << "rule did not fire";
  EXPECT_EQ(d->where, c.where);
  EXPECT_EQ(d->severity, rule->severity);
  EXPECT_FALSE(d->message.empty());
}

// Test names read "map_swizzle_span_20": the rule id and the case's index.
INSTANTIATE_TEST_SUITE_P(AllRules, RuleCase, ::testing::Range<size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           std::string s = cases()[info.param].rule;
                           for (char& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s + "_" + std::to_string(info.param);
                         });

TEST(Rules, BaseMapsHaveNoErrors) {
  using Base = std::pair<TensorMap (*)(), spec::Target>;
  for (auto [base, target] : {Base{tiled_base, kSm90a}, Base{tiled_rank3_u8, kSm90a}, Base{interleaved_base, kSm90a},
                              Base{im2col_base, kSm90a}, Base{wide_base, kSm100a}, Base{packed_base, kSm100a}}) {
    Diagnostics d = validate(base(), target);
    for (const auto& x : d) EXPECT_NE(x.severity, Severity::error) << format(x);
  }
}

TEST(Rules, EveryRuleHasABoundaryCase) {
  std::set<std::string_view> tested;
  for (const auto& c : cases()) tested.insert(c.rule);
  for (const auto& r : map_rules()) {
    if (r.id == "map.smem-alignment") continue;  // always present: its own test below
    EXPECT_TRUE(tested.count(r.id)) << "no boundary case for " << r.id;
  }
}

TEST(Rules, TableIsWellFormed) {
  std::set<std::string_view> ids;
  for (const auto& r : map_rules()) {
    EXPECT_TRUE(ids.insert(r.id).second) << "duplicate id " << r.id;
    EXPECT_TRUE(r.id.starts_with("map.")) << r.id;
    EXPECT_FALSE(r.section.empty()) << r.id;
    EXPECT_FALSE(r.summary.empty()) << r.id;
    // What the driver refuses is an error; our own checks never reject a map the driver takes
    // (map.im2col-wide-target: the H100's driver encodes im2col_wide maps, HW7).
    if (r.driver_enforced) EXPECT_EQ(r.severity, Severity::error) << r.id;
    else EXPECT_NE(r.severity, Severity::error) << r.id;
  }
  EXPECT_EQ(find_map_rule("map.no-such-rule"), nullptr);
}

TEST(Rules, SwizzleSpanMessageNamesValueAndLimit) {
  TensorMap m = tiled_base();
  m.data_type = DataType::float16;
  m.box[0] = 128;
  m.swizzle = Swizzle::b128;
  Diagnostics d = validate(m, kSm90a);
  const Diagnostic* s = find(d, "map.swizzle-span");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->message, "swizzle 128b allows an inner box of at most 128 bytes, got 256 (box[0]=128 × 2 bytes)");
}

TEST(Rules, ReportsEveryViolationAtOnce) {
  TensorMap m = tiled_base();
  m.global_address = 0x1008;      // map.global-address-align
  m.strides[0] = 2056;            // map.global-stride-align (and no overlap: 2056 > 2048)
  m.box = {5, 300};               // map.box-inner-bytes, map.box-dim-range
  m.element_strides = {1, 9};     // map.element-stride-range
  m.data_type = DataType::int32;  // 4-byte type: dims unchanged
  m.oob_fill = OobFill::nan_request_zero_fma;  // map.oob-nan-type
  Diagnostics d = validate(m, kSm90a);
  std::set<std::string> errors;
  for (const auto& x : d)
    if (x.severity == Severity::error) errors.insert(x.rule);
  EXPECT_EQ(errors, (std::set<std::string>{"map.global-address-align", "map.global-stride-align",
                                           "map.box-inner-bytes", "map.box-dim-range", "map.element-stride-range",
                                           "map.oob-nan-type"}));
}

TEST(Rules, EveryDimensionIsChecked) {
  TensorMap m = tiled_base();
  set_rank(m, 5);
  m.dims = {0, 0, 0, 0, 0};
  m.box = {0, 0, 0, 0, 0};
  Diagnostics d = validate(m, kSm90a);
  std::set<std::string> dims, boxes;
  for (const auto& x : d) {
    if (x.rule == "map.global-dim-range") dims.insert(x.where);
    if (x.rule == "map.box-dim-range") boxes.insert(x.where);
  }
  EXPECT_EQ(dims, (std::set<std::string>{"dims[0]", "dims[1]", "dims[2]", "dims[3]", "dims[4]"}));
  EXPECT_EQ(boxes, (std::set<std::string>{"box[0]", "box[1]", "box[2]", "box[3]", "box[4]"}));
}

// §0 H17: what the driver accepts must validate without errors (warnings are fine).
TEST(Rules, H17AcceptedMapsHaveNoErrors) {
  std::vector<TensorMap> maps;
  TensorMap m = tiled_base();
  m.strides[0] = 0, maps.push_back(m);  // stride 0
  m = tiled_rank3_u8();
  m.strides = {1024 * 1024, 1024}, maps.push_back(m);  // non-monotonic strides
  m = tiled_base();
  m.strides[0] = 1024, maps.push_back(m);  // overlapping rows
  m = tiled_base();
  m.dims[1] = 4, m.element_strides[1] = 8, maps.push_back(m);  // element stride > extent
  m = tiled_base();
  m.swizzle = Swizzle::b128, m.global_address = 0x10010, maps.push_back(m);  // swizzle, 16-byte global alignment
  maps.push_back(interleaved_base());                                          // interleave 32b + swizzle 32b
  m = im2col_base();
  m.pixel_box_lower = {0, 0}, m.pixel_box_upper = {-7, -7}, maps.push_back(m);  // one-pixel im2col box
  m = tiled_base();
  m.box[0] = 64, m.dims[0] = 32, m.strides[0] = 128, maps.push_back(m);  // box wider than the tensor (H5)
  m = tiled_base();
  m.element_strides[0] = 3, maps.push_back(m);  // elementStrides[0] > 1 ignored (H16)
  for (const auto& x : maps) {
    Diagnostics d = validate(x, kSm90a);
    EXPECT_FALSE(d.has_errors()) << format(d.front()) << " / " << (d.size() > 1 ? format(d[1]) : "");
  }
}

TEST(Rules, SmemAlignmentNoteNamesAlignmentAndPeriod) {
  TensorMap m = tiled_base();
  m.swizzle = Swizzle::b128;
  Diagnostics d = validate(m, kSm90a);
  const Diagnostic* n = find(d, "map.smem-alignment");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->severity, Severity::note);
  EXPECT_NE(n->message.find("128-byte aligned"), std::string::npos);
  EXPECT_NE(n->message.find("1024"), std::string::npos);
}

TEST(Rules, StoreInnerExtentCountsBytesPastTheEnd) {
  // H6 probe: int8 extent 466 wrote 14 bytes past it, 470 wrote 10.
  for (auto [extent, past] : {std::pair{466, 14}, std::pair{470, 10}}) {
    TensorMap m = tiled_rank3_u8();
    m.dims[0] = static_cast<uint64_t>(extent);
    const Diagnostics ds = validate(m, kSm90a);
    const Diagnostic* w = find(ds, "map.store-inner-extent");
    ASSERT_NE(w, nullptr);
    EXPECT_NE(w->message.find("up to " + std::to_string(past) + " bytes"), std::string::npos) << w->message;
  }
}

TEST(Rules, OutOfRangeRankDoesNotCrash) {
  for (int rank : {-1, 0, 6, 100, INT32_MIN, INT32_MAX})
    for (Encode e : {Encode::tiled, Encode::im2col, Encode::im2col_wide}) {
      TensorMap m = tiled_base();
      m.encode = e;
      m.rank = rank;
      EXPECT_TRUE(validate(m, kSm90a).has_errors());
    }
}

}  // namespace
}  // namespace tmakit::tensor_map

namespace tmakit::tensor_map {
namespace {

// docs/tensor-maps.md lists every rule of the table.
TEST(Rules, DocsListEveryRule) {
  std::ifstream in(std::string(TMAKIT_SOURCE_DIR) + "/docs/tensor-maps.md");
  std::stringstream s;
  s << in.rdbuf();
  const std::string doc = s.str();
  ASSERT_FALSE(doc.empty());
  for (const auto& r : map_rules())
    EXPECT_NE(doc.find("| `" + std::string(r.id) + "` | " + std::string(r.section) + " |"), std::string::npos)
        << r.id << " missing from docs/tensor-maps.md";
}

}  // namespace
}  // namespace tmakit::tensor_map

// Properties of the three rules the recorded H100 verdicts settled (docs/hardware-notes.md
// items 1-3), each against a naive reference written here from the notes.
namespace tmakit::tensor_map {
namespace {

using namespace testing;

bool has_rule(const Diagnostics& ds, std::string_view rule) {
  return std::any_of(ds.begin(), ds.end(), [&](const Diagnostic& d) { return d.rule == rule; });
}

// HW1: refused exactly when Π floor(box[i] / E[i]) × bytes > 233,472 (every dimension);
// warned when the driver accepts but Π ceil(box[i] / E[i]) × bytes, E[0] = 1, is larger.
TEST(HardwareRules, BoxBytesFollowTheDriversFloorCount) {
  std::mt19937 rng(20261122);
  const std::pair<DataType, uint64_t> types[] = {
      {DataType::uint8, 1}, {DataType::float16, 2}, {DataType::float32, 4}, {DataType::float64, 8}};
  int refused = 0, warned = 0;
  for (int n = 0; n < 4000; ++n) {
    auto [type, bytes] = types[rng() % 4];
    TensorMap m;
    m.data_type = type;
    m.rank = 1 + static_cast<int>(rng() % 5);
    m.global_address = 0x10000;
    uint64_t floor_count = 1, ceil_count = 1, stride = 256 * bytes;
    for (int i = 0; i < m.rank; ++i) {
      m.dims[i] = 256;
      if (i > 0) m.strides[i - 1] = stride, stride *= 256;
      // Inner rows a multiple of 16 bytes (map.box-inner-bytes): box[0] a multiple of 16 / bytes.
      uint32_t unit = i == 0 ? static_cast<uint32_t>(16 / bytes) : 1;
      m.box[i] = unit * (1 + static_cast<uint32_t>(rng() % (256 / unit)));
      m.element_strides[i] = 1 + static_cast<uint32_t>(rng() % 8);
      floor_count *= m.box[i] / m.element_strides[i];
      uint32_t e = i == 0 ? 1 : m.element_strides[i];
      ceil_count *= (m.box[i] + e - 1) / e;
    }
    const bool driver_refuses = floor_count * bytes > 233472;
    const bool too_large = ceil_count * bytes > 233472;
    Diagnostics d = validate(m, kSm90a);
    SCOPED_TRACE(::testing::Message() << "map " << n << ": floor " << floor_count * bytes << ", ceil "
                                      << ceil_count * bytes);
    EXPECT_EQ(has_rule(d, "map.box-bytes-limit"), driver_refuses);
    EXPECT_EQ(d.has_errors(), driver_refuses);  // nothing else is wrong with these maps
    EXPECT_EQ(has_rule(d, "map.box-bytes-delivered"), !driver_refuses && too_large);
    refused += driver_refuses, warned += !driver_refuses && too_large;
  }
  // The draw reaches both outcomes often enough to mean something.
  EXPECT_GT(refused, 100);
  EXPECT_GT(warned, 100);
}

// HW2: along each spatial dimension the driver refuses unless int32(X + upper) > lower,
// the sum taken modulo 2^32; it never accepts a box that is really empty.
TEST(HardwareRules, Im2colEmptyBoxFollowsTheWrappingTest) {
  const uint64_t extents[] = {1, 2, 8, 200, (1ull << 31) - 129, (1ull << 31) - 1, 1ull << 31, (1ull << 31) + 1,
                              (1ull << 32) - 128, (1ull << 32) - 1, 1ull << 32};
  int wrapped_refusals = 0;
  for (uint64_t x : extents)
    for (int lower = -128; lower <= 127; lower += 5)
      for (int upper = -128; upper <= 127; upper += 7) {
        TensorMap m = im2col_base();
        m.dims[1] = x;  // W: corner entry 0
        m.pixel_box_lower[0] = lower, m.pixel_box_upper[0] = upper;
        int64_t sum = (static_cast<int64_t>(x) + upper) % (int64_t{1} << 32);
        if (sum < 0) sum += int64_t{1} << 32;
        if (sum >= int64_t{1} << 31) sum -= int64_t{1} << 32;  // as a signed 32-bit value
        const bool driver_refuses = !(sum > lower);
        const bool really_empty = static_cast<int64_t>(x) - 1 + upper < lower;
        const bool fired = has_rule(validate(m, kSm90a), "map.im2col-box-empty");
        ASSERT_EQ(fired, driver_refuses) << "W " << x << ", lower " << lower << ", upper " << upper;
        if (really_empty) {
          ASSERT_TRUE(fired) << "W " << x << ", lower " << lower << ", upper " << upper;
        }
        wrapped_refusals += fired && !really_empty;
      }
  EXPECT_GT(wrapped_refusals, 0);  // the sweep does reach the wrap
}

TEST(HardwareRules, Im2colMessagesSayWhetherTheBoxIsEmptyOrTheTestWraps) {
  TensorMap m = im2col_base();
  m.pixel_box_lower[0] = 0, m.pixel_box_upper[0] = -8;  // W 8: last base -1 < 0, really empty
  Diagnostics ds = validate(m, kSm90a);
  const Diagnostic* d = find(ds, "map.im2col-box-empty");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("is empty along dimension 1"), std::string::npos) << d->message;
  m = im2col_base();
  m.dims[1] = 1ull << 32, m.pixel_box_lower[0] = -1, m.pixel_box_upper[0] = -1;  // the notes' example
  ds = validate(m, kSm90a);
  d = find(ds, "map.im2col-box-empty");
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("wraps in 32 bits"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("= -1 is not above lower = -1"), std::string::npos) << d->message;
}

// HW1, HW3: maps the H100 driver accepted validate without errors; HW5: the 8-byte
// interleaved inner box it refused does not.
TEST(HardwareRules, RecordedExamplesOfTheNotes) {
  TensorMap u8 = tiled_rank3_u8();
  u8.box = {256, 228, 8}, u8.element_strides = {2, 1, 1};
  Diagnostics d = validate(u8, kSm90a);
  EXPECT_FALSE(d.has_errors());
  const Diagnostic* w = find(d, "map.box-bytes-delivered");
  ASSERT_NE(w, nullptr);
  // 256 × 228 × 8 = 466,944 delivered; the driver counts 128 × 228 × 8 = 233,472.
  EXPECT_NE(w->message.find("466944"), std::string::npos) << w->message;
  EXPECT_NE(w->message.find("233472"), std::string::npos) << w->message;
  for (Swizzle s : {Swizzle::none, Swizzle::b64, Swizzle::b128}) {
    TensorMap m = interleaved_base();
    m.swizzle = s;
    d = validate(m, kSm90a);
    EXPECT_FALSE(d.has_errors()) << name(s);
    EXPECT_TRUE(has_rule(d, "map.interleave-swizzle")) << name(s);
    m.box[0] = 2;  // 8 bytes
    EXPECT_TRUE(has_rule(validate(m, kSm90a), "map.box-inner-bytes")) << name(s);
  }
}

// HW6 (issue 14): the maps, uint8 with 24 or 40 channels and interleave none, are
// refused, and the message names the product and the channel counts that would pass.
TEST(HardwareRules, Im2colChannelBytesNamesTheProductAndTheFix) {
  for (auto [channels, fix] : {std::pair{24u, "16 or 32"}, std::pair{40u, "32 or 48"}}) {
    TensorMap m = im2col_base();
    m.data_type = DataType::uint8, m.channels_per_pixel = channels, m.swizzle = Swizzle::none;
    const Diagnostics ds = validate(m, kSm90a);
    const Diagnostic* d = find(ds, "map.im2col-channel-bytes");
    ASSERT_NE(d, nullptr) << channels;
    EXPECT_EQ(d->severity, Severity::error);
    const std::string product = std::to_string(channels) + " × 1 bytes = " + std::to_string(channels) + " bytes";
    EXPECT_NE(d->message.find(product), std::string::npos) << d->message;
    EXPECT_NE(d->message.find("multiple of 16 channels"), std::string::npos) << d->message;
    EXPECT_NE(d->message.find(std::string("(") + fix + ")"), std::string::npos) << d->message;
  }
}

// HW6 against a naive reference: for every plain type, both encodes and every interleave,
// the rule fires exactly when channels × element bytes is not a multiple of 16.
TEST(HardwareRules, Im2colChannelBytesAgreesWithItsReference) {
  const int bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};  // §1.2, uint8 .. tfloat32_ftz
  int fired_total = 0;
  for (int t = 0; t <= 12; ++t)
    for (bool wide : {false, true})
      for (Interleave il : {Interleave::none, Interleave::b16, Interleave::b32})
        for (uint32_t c = 1; c <= 256; ++c) {
          TensorMap m = wide ? wide_base() : im2col_base();
          m.data_type = static_cast<DataType>(t), m.interleave = il, m.channels_per_pixel = c;
          const bool expected = (c * bytes[t]) % 16 != 0;
          const bool fired = has_rule(validate(m, wide ? kSm100a : kSm90a), "map.im2col-channel-bytes");
          ASSERT_EQ(fired, expected) << name(m.data_type) << " × " << c << (wide ? " wide" : "") << " " << name(il);
          fired_total += fired;
        }
  EXPECT_GT(fired_total, 0);
}

// HW7, HW11: maps the H100's driver encoded although cuda.h or §1.5 forbid them are
// valid with a warning: an im2col_wide map on sm_90a, im2col_wide with swizzle none or
// 32b, with interleave 16b. The same maps broken in a driver rule stay invalid.
TEST(HardwareRules, Im2colWideMapsTheH100EncodedAreWarnings) {
  struct Probe { const char* rule; Edit edit; spec::Target target; };
  const Probe probes[] = {
      {"map.im2col-wide-target", [](TensorMap&) {}, kSm90a},
      {"map.im2col-wide-swizzle", [](TensorMap& m) { m.swizzle = Swizzle::none; }, kSm100a},
      {"map.im2col-wide-swizzle", [](TensorMap& m) { m.swizzle = Swizzle::b32, m.channels_per_pixel = 16; }, kSm100a},
      {"map.im2col-wide-interleave", [](TensorMap& m) { m.interleave = Interleave::b16; }, kSm100a},
  };
  for (const Probe& p : probes) {
    TensorMap m = wide_base();
    p.edit(m);
    Diagnostics d = validate(m, p.target);
    EXPECT_FALSE(d.has_errors()) << p.rule;
    const Diagnostic* w = find(d, p.rule);
    ASSERT_NE(w, nullptr) << p.rule;
    EXPECT_EQ(w->severity, Severity::warning) << p.rule;
    EXPECT_NE(w->message.find("HW"), std::string::npos) << w->message;  // names the recorded fact
    m.pixels_per_column = 0;  // a driver rule
    EXPECT_TRUE(validate(m, p.target).has_errors()) << p.rule;
  }
}

// HW8: an interleaved im2col map tests corner entry k on dims[k]; dimension rank-2 is
// not tested at all (dims[2] = 2^32 - 100 of a rank-4 map wraps without interleave only).
TEST(HardwareRules, InterleavedIm2colBoxTestsDimensionsFromZero) {
  TensorMap m = im2col_base();
  m.dims[2] = (1ull << 32) - 100;
  m.pixel_box_upper = {-1, 0};
  Diagnostics d = validate(m, kSm90a);
  const Diagnostic* e = find(d, "map.im2col-box-empty");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->where, "pixel_box_upper[1]");
  EXPECT_NE(e->message.find("along dimension 2"), std::string::npos) << e->message;
  m.interleave = Interleave::b16;
  d = validate(m, kSm90a);
  EXPECT_FALSE(has_rule(d, "map.im2col-box-empty")) << format(*find(d, "map.im2col-box-empty"));
  m.dims[1] = (1ull << 32) - 100;  // now entry 1's dimension
  d = validate(m, kSm90a);
  e = find(d, "map.im2col-box-empty");
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->message.find("along dimension 1"), std::string::npos) << e->message;
}

// HW12: interleaved im2col maps are limited by channels × pixels × element size, the
// message says what a load delivers instead (one slice a pixel).
TEST(HardwareRules, InterleavedIm2colByteLimitCountsChannels) {
  TensorMap m = im2col_base();
  m.interleave = Interleave::b32, m.data_type = DataType::uint32, m.channels_per_pixel = 228;
  m.pixels_per_column = 257;  // the recorded probe: 228 × 257 × 4 = 234,384 bytes, refused
  Diagnostics d = validate(m, kSm90a);
  const Diagnostic* e = find(d, "map.box-bytes-limit");
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->message.find("234384"), std::string::npos) << e->message;
  EXPECT_NE(e->message.find("delivers 8224 bytes"), std::string::npos) << e->message;  // 257 × 32
  m.pixels_per_column = 256;  // 233,472: accepted
  EXPECT_FALSE(has_rule(validate(m, kSm90a), "map.box-bytes-limit"));
}

// map.interleave-walk-once derives from box[rank-2] and element_strides[rank-2] only: an
// error elsewhere (an 8-byte inner box, HW5) keeps it; an error in box[rank-2] drops it.
TEST(Rules, WalkOnceAdviceSkipsOnlyWhatDerivesFromAFieldInError) {
  TensorMap m = interleaved_base();  // rank 3: dimension 1 is walked once, box[1] = 8
  Diagnostics d = validate(m, kSm90a);
  const Diagnostic* w = find(d, "map.interleave-walk-once");
  ASSERT_NE(w, nullptr);
  EXPECT_NE(w->message.find("one load delivers"), std::string::npos) << w->message;
  m.box[0] = 2;  // float32: 8 bytes, map.box-inner-bytes at box[0]
  d = validate(m, kSm90a);
  ASSERT_TRUE(has_rule(d, "map.box-inner-bytes"));
  w = find(d, "map.interleave-walk-once");
  ASSERT_NE(w, nullptr) << "an error in box[0] must not hide advice about box[1]";
  EXPECT_EQ(w->message.find("one load delivers"), std::string::npos) << w->message;  // a count from box[0]
  m = interleaved_base();
  m.box[1] = 257;  // map.box-dim-range at box[1]: the advice would repeat it
  d = validate(m, kSm90a);
  ASSERT_TRUE(has_rule(d, "map.box-dim-range"));
  EXPECT_FALSE(has_rule(d, "map.interleave-walk-once"));
  m = interleaved_base();
  m.box[1] = 1, m.element_strides[1] = 9;  // map.element-stride-range at element_strides[1]
  d = validate(m, kSm90a);
  ASSERT_TRUE(has_rule(d, "map.element-stride-range"));
  EXPECT_FALSE(has_rule(d, "map.interleave-walk-once"));
}

}  // namespace
}  // namespace tmakit::tensor_map
