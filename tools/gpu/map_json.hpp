// A TensorMap in the scenario format's `tensor_maps` JSON form
// (scenario-format.md), written here rather than through the tensor_map layer so
// that the recorded vectors are an independent description of what the GPU ran.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::gpu_tools {

inline const char* type_name(tensor_map::DataType t) {
  static const char* names[] = {"uint8",       "uint16",   "uint32",       "int32",        "uint64",
                                "int64",       "float16",  "float32",      "float64",      "bfloat16",
                                "float32_ftz", "tfloat32", "tfloat32_ftz", "16u4_align8b", "16u4_align16b",
                                "16u6_align16b"};
  return names[static_cast<int>(t)];
}
inline const char* swizzle_name(tensor_map::Swizzle s) {
  static const char* names[] = {"none", "32b", "64b", "128b", "128b_atom_32b", "128b_atom_32b_flip_8b", "128b_atom_64b"};
  return names[static_cast<int>(s)];
}
inline const char* interleave_name(tensor_map::Interleave i) {
  static const char* names[] = {"none", "16b", "32b"};
  return names[static_cast<int>(i)];
}
inline const char* l2_name(tensor_map::L2Promotion p) {
  static const char* names[] = {"none", "64b", "128b", "256b"};
  return names[static_cast<int>(p)];
}
inline const char* oob_name(tensor_map::OobFill f) {
  static const char* names[] = {"none", "nan_request_zero_fma"};
  return names[static_cast<int>(f)];
}
// Bytes per element for the plain types (the packed ones are not loaded here).
inline int elem_bytes(tensor_map::DataType t) {
  static const int b[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4, 0, 0, 0};
  return b[static_cast<int>(t)];
}
inline bool is_float_type(tensor_map::DataType t) {
  int v = static_cast<int>(t);
  return v >= 6 && v <= 12;
}

// `global` empty: the map carries "global_address"; else "global" + "offset".
inline nlohmann::json map_json(const tensor_map::TensorMap& m, const std::string& global = {}, uint64_t offset = 0) {
  using nlohmann::json;
  const bool im2col = m.encode == tensor_map::Encode::im2col;
  const bool wide = m.encode == tensor_map::Encode::im2col_wide;
  json j;
  j["encode"] = im2col ? "im2col" : wide ? "im2col_wide" : "tiled";
  j["data_type"] = type_name(m.data_type);
  if (global.empty()) {
    j["global_address"] = m.global_address;
  } else {
    j["global"] = global;
    j["offset"] = offset;
  }
  const int n = m.rank < 0 ? 0 : (m.rank > tensor_map::kMaxRank ? tensor_map::kMaxRank : m.rank);
  json dims = json::array(), strides = json::array(), box = json::array(), es = json::array();
  for (int i = 0; i < n; ++i) {
    dims.push_back(m.dims[i]);
    if (i + 1 < n) strides.push_back(m.strides[i]);
    box.push_back(m.box[i]);
    es.push_back(m.element_strides[i]);
  }
  j["dims"] = dims;
  j["strides"] = strides;
  if (!im2col && !wide) j["box"] = box;
  j["element_strides"] = es;
  j["interleave"] = interleave_name(m.interleave);
  j["swizzle"] = swizzle_name(m.swizzle);
  j["l2_promotion"] = l2_name(m.l2_promotion);
  j["oob_fill"] = oob_name(m.oob_fill);
  if (im2col) {
    json lo = json::array(), hi = json::array();
    for (int i = 0; i + 2 < n; ++i) {
      lo.push_back(m.pixel_box_lower[i]);
      hi.push_back(m.pixel_box_upper[i]);
    }
    j["pixel_box_lower"] = lo;
    j["pixel_box_upper"] = hi;
    j["channels_per_pixel"] = m.channels_per_pixel;
    j["pixels_per_column"] = m.pixels_per_column;
  }
  if (wide) {
    j["pixel_box_lower_w"] = m.pixel_box_lower_w;
    j["pixel_box_upper_w"] = m.pixel_box_upper_w;
    j["mode"] = m.wide_mode == tensor_map::WideMode::w128 ? "w128" : "w";
    j["channels_per_pixel"] = m.channels_per_pixel;
    j["pixels_per_column"] = m.pixels_per_column;
  }
  return j;
}

}  // namespace tmakit::gpu_tools
