// Per-element reduction semantics (§6.3, H8, H10, H13): d = op(d, s).
// Which op goes with which type is the table of forms' business (forms.hpp);
// here every pair has a defined result so the model never misbehaves:
// inc/dec and the bitwise ops on float types act on the raw bits as unsigned.
#pragma once
#include <cstddef>
#include <cstdint>

#include "tmakit/spec/reduction.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::model {

// dst and src point at one element of red_type_bytes(type) bytes each
// (little-endian, any alignment).
void reduce_element(spec::RedOp op, spec::RedType type, uint8_t* dst, const uint8_t* src);

// reduce_element over `count` consecutive elements; the op/type dispatch is done
// once, so this is the loop the tile and bulk paths use.
void reduce_elements(spec::RedOp op, spec::RedType type, uint8_t* dst, const uint8_t* src,
                     size_t count);

// Element type of a tensor reduction on a map of this data type (§6.1, H13):
// FLOAT32 / TFLOAT32 -> f32, FLOAT32_FTZ / TFLOAT32_FTZ -> f32_ftz, UINT32 -> u32,
// INT32 -> s32, UINT64 -> u64, INT64 -> s64, FLOAT16 -> f16, BFLOAT16 -> bf16,
// FLOAT64 -> f64 (only reachable through an invalid form). UINT8, UINT16 and
// the packed types have no reduction type: fault "model.reduce-type".
spec::RedType red_type_for_map(tensor_map::DataType);

}  // namespace tmakit::model
