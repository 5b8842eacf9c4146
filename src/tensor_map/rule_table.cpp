// The validator's rule table: one row per rule, with its stable id, the spec
// section it enforces, whether the driver refuses a map that breaks it, its
// severity and a one-line summary (docs/diagnostics.md is generated from it).
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::tensor_map {
namespace {

constexpr Severity E = Severity::error, W = Severity::warning, N = Severity::note;

constexpr MapRule kRules[] = {
    {"map.rank-range", "cuda.h `cuTensorMapEncodeTiled`", true, E, "tiled maps have rank 1..5"},
    {"map.global-address-align", "cuda.h `cuTensorMapEncodeTiled`", true, E,
     "global address a multiple of 16 (32 with interleave 32b, 16u4_align16b, 16u6_align16b)"},
    {"map.global-dim-range", "cuda.h `cuTensorMapEncodeTiled`", true, E, "each dims[i] in 1..2^32"},
    {"map.global-stride-align", "cuda.h `cuTensorMapEncodeTiled`", true, E,
     "each stride a multiple of 16 (32 with interleave 32b, 16u4_align16b, 16u6_align16b)"},
    {"map.global-stride-range", "cuda.h `cuTensorMapEncodeTiled`", true, E, "each stride below 2^40 bytes"},
    {"map.box-dim-range", "cuda.h `cuTensorMapEncodeTiled`", true, E, "each box[i] in 1..256"},
    {"map.box-inner-bytes", "cuda.h `cuTensorMapEncodeTiled`, HW5", true, E,
     "box[0] × element size a multiple of 16 bytes (with interleave too, HW5)"},
    {"map.element-stride-range", "cuda.h `cuTensorMapEncodeTiled`", true, E, "each element stride in 1..8"},
    {"map.interleave-rank", "cuda.h `cuTensorMapEncodeTiled`", true, E, "interleave 16b/32b needs rank 3..5"},
    {"map.interleave-swizzle", "cuda.h `cuTensorMapEncodeTiled`, HW3", false, W,
     "interleave 32b without swizzle 32b: cuda.h requires it, the H100 driver accepts it"},
    {"map.interleave-walk-once", "PTX ISA, interleave layout, Q26", false, W,
     "interleave: box[rank-2] or element_strides[rank-2] above 1 has no effect (the H100 walks that dimension once)"},
    {"map.swizzle-span", "cuda.h `cuTensorMapEncodeTiled`, cuda.h `cuTensorMapEncodeIm2col`, cuda.h `cuTensorMapEncodeIm2colWide`", true, E,
     "interleave none: inner box row at most the swizzle span (32, 64, 128 bytes)"},
    {"map.oob-nan-type", "cuda.h `cuTensorMapEncodeTiled`", true, E, "NaN fill only for float types, never packed ones"},
    {"map.box-bytes-limit", "[h100-driver-limits](hardware-notes.md#h100-driver-limits), HW1", true, E,
     "Π floor(box[i] / element_strides[i]) × element size (dimension 0 included) at most 233,472 bytes"},
    {"map.box-bytes-delivered", "[h100-driver-limits](hardware-notes.md#h100-driver-limits), HW1, [h100-element-stride-0](hardware-notes.md#h100-element-stride-0)", false, W,
     "the driver accepts the map but one load delivers more than 233,472 bytes (ceil, E[0] ignored)"},
    {"map.packed-type-target", "cuda.h (data types), [h100-driver-limits](hardware-notes.md#h100-driver-limits)", true, E, "packed 16u4/16u6 types need sm_100 or later"},
    {"map.atom-swizzle-target", "PTX ISA, swizzle atoms (sm_100), [h100-driver-limits](hardware-notes.md#h100-driver-limits)", true, E, "128b_atom_* swizzles need sm_100 or later"},
    {"map.packed-global-dim", "cuda.h `cuTensorMapEncodeTiled`", true, E,
     "dims[0] a multiple of 128 (16u4_align16b, 16u6_align16b) or of 2 (16u4_align8b)"},
    {"map.packed-box-inner", "cuda.h `cuTensorMapEncodeTiled`", true, E, "16u4_align16b/16u6_align16b: box[0] exactly 128"},
    {"map.packed-channels", "cuda.h `cuTensorMapEncodeIm2col`, cuda.h `cuTensorMapEncodeIm2colWide`", true, E,
     "16u4_align16b/16u6_align16b im2col: channels_per_pixel exactly 128"},
    {"map.packed-interleave", "cuda.h `cuTensorMapEncodeTiled`", true, E, "16u6_align16b needs interleave none"},
    {"map.packed-swizzle", "cuda.h `cuTensorMapEncodeTiled`", true, E,
     "16u4_align16b: swizzle none, 128b, 128b_atom_32b; 16u6_align16b: also 128b_atom_64b"},
    {"map.packed-swizzle-store-only", "cuda.h `cuTensorMapEncodeTiled`", false, W, "16u6_align16b with 128b_atom_64b serves stores only"},
    {"map.im2col-rank", "cuda.h `cuTensorMapEncodeIm2col`, cuda.h `cuTensorMapEncodeIm2colWide`", true, E, "im2col maps have rank 3..5"},
    {"map.im2col-corner-range", "cuda.h `cuTensorMapEncodeIm2col`", true, E,
     "pixel box corners in [-32768, 32767] (rank 3), [-128, 127] (rank 4), [-16, 15] (rank 5)"},
    {"map.im2col-box-empty", "cuda.h `cuTensorMapEncodeIm2col`, cuda.h `cuTensorMapEncodeIm2colWide`, [h100-driver-limits](hardware-notes.md#h100-driver-limits), HW2, HW8", true, E,
     "pixel bounding box not empty: int32(dims[d] + upper) > lower per spatial dim d, wrapping (HW2); d counts "
     "from 0 with interleave (HW8); im2col_wide: W with its corners, H and D with corners 0 (HW10)"},
    {"map.im2col-channels", "cuda.h `cuTensorMapEncodeIm2col`, cuda.h `cuTensorMapEncodeIm2colWide`", true, E, "channels_per_pixel in 1..256"},
    {"map.im2col-channel-bytes", "cuda.h `cuTensorMapEncodeIm2col`, cuda.h `cuTensorMapEncodeIm2colWide`, HW6", true, E,
     "channels_per_pixel × element size a multiple of 16 bytes (with interleave too)"},
    {"map.im2col-pixels", "cuda.h `cuTensorMapEncodeIm2col`, cuda.h `cuTensorMapEncodeIm2colWide`, HW9", true, E,
     "pixels_per_column in 1..1024 (in mode w128 too, HW9, although that mode reads 128 pixels)"},
    {"map.im2col-wide-target", "cuda.h `cuTensorMapEncodeIm2colWide`, HW7", false, W,
     "im2col_wide maps are read by .im2col::w loads, sm_100 or later (the H100's driver encodes them anyway)"},
    {"map.im2col-wide-corner-range", "cuda.h `cuTensorMapEncodeIm2colWide`, HW10", true, E,
     "pixel_box_lower_w / upper_w in [-32768, 32767] (rank 3), [-128, 127] (rank 4), [-16, 15] (rank 5)"},
    {"map.im2col-wide-swizzle", "cuda.h `cuTensorMapEncodeIm2colWide`, HW11", false, W,
     "im2col_wide: swizzle 64b, 128b or 128b_atom_32b (packed types: 128b or 128b_atom_32b); the H100's driver "
     "accepts none and 32b"},
    {"map.im2col-wide-interleave", "cuda.h `cuTensorMapEncodeIm2colWide`, PTX ISA, interleave layout, HW11", false, W,
     "im2col_wide: interleave none; the H100's driver accepts 16b"},
    {"map.box-exceeds-tensor", "[h100-box-wider-than-tensor](hardware-notes.md#h100-box-wider-than-tensor)", false, N, "a box larger than the tensor is valid: loads fill, stores skip"},
    {"map.store-inner-extent", "[h100-store-whole-chunks](hardware-notes.md#h100-store-whole-chunks), PTX ISA, out-of-bound access", false, W,
     "inner extent not a multiple of 16 bytes: stores write the whole last 16-byte chunk"},
    {"map.stride-overlap", "cuda.h `cuTensorMapEncodeTiled`, Q24, [h100-driver-limits](hardware-notes.md#h100-driver-limits)", false, W,
     "strides may let coordinates alias (the driver accepts it); stores would write such bytes twice"},
    {"map.smem-alignment", "[h100-smem-128-alignment](hardware-notes.md#h100-smem-128-alignment), PTX ISA, swizzling modes", false, N,
     "box operand 128-byte aligned; swizzle phase 0 at 256/512/1024"},
};

}  // namespace

std::span<const MapRule> map_rules() { return kRules; }

const MapRule* find_map_rule(std::string_view id) {
  for (const auto& r : kRules)
    if (r.id == id) return &r;
  return nullptr;
}

}  // namespace tmakit::tensor_map
