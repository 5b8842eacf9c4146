// Host side: the rank-2 map of a dense row-major W x H tensor at `base` with a
// box_w x box_h box, no swizzle or interleave (what most GPU tests load from).
#pragma once
#include "tmakit/device/map.cuh"

inline tmakit::tensor_map::TensorMap dense_map_2d(tmakit::tensor_map::DataType type, const void* base, uint64_t w,
                                                  uint64_t h, uint32_t box_w, uint32_t box_h) {
  tmakit::tensor_map::TensorMap t;
  t.data_type = type;
  t.rank = 2;
  t.global_address = uint64_t(base);
  t.dims = {w, h};
  t.strides = {w * uint64_t(tmakit::tensor_map::element_bytes(type))};
  t.box = {box_w, box_h};
  return t;
}
