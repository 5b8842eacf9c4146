// Tensor maps built on the device (device_maps.hpp). The enumerations follow the PTX ISA's
// tensormap.replace page (its .elemtype numbering differs from the driver's enum at 8-10,
// tma-semantics.md §1.2).
#include "device_maps.hpp"

#include <array>

namespace tmakit::check::detail {

namespace tm = tensor_map;

std::string_view replaced_field(std::string_view text) {
  static constexpr std::array<std::string_view, 11> kFields = {
      ".global_address", ".rank", ".box_dim", ".global_dim", ".global_stride", ".element_stride",
      ".elemtype", ".interleave_layout", ".swizzle_mode", ".swizzle_atomicity", ".fill_mode"};
  for (std::string_view f : kFields) {
    const size_t at = text.find(f);
    // ".box_dim" must not match inside another word; every field is followed by a '.'.
    if (at != std::string_view::npos && at + f.size() < text.size() && text[at + f.size()] == '.') return f;
  }
  return {};
}

tm::TensorMap blank_device_map() {
  tm::TensorMap m;
  m.encode = tm::Encode::tiled;
  m.data_type = tm::DataType::uint8;
  m.rank = 1;
  return m;
}

namespace {

std::optional<tm::DataType> ptx_elemtype(uint64_t v) {
  using D = tm::DataType;
  static constexpr std::array<D, 16> kByPtx = {
      D::uint8,   D::uint16,   D::uint32,      D::int32,       D::uint64,       D::int64,
      D::float16, D::float32,  D::float32_ftz, D::float64,     D::bfloat16,     D::tfloat32,
      D::tfloat32_ftz, D::u4_align8b, D::u4_align16b, D::u6_align16b};
  if (v >= kByPtx.size()) return std::nullopt;
  return kByPtx[v];
}

std::string out_of_table(std::string_view field, uint64_t v) {
  return "tensormap.replace " + std::string(field) + " value " + std::to_string(v) + " is past the PTX ISA's table";
}

}  // namespace

std::optional<std::string> apply_replace(tm::TensorMap& m, std::string_view field, uint64_t ord, uint64_t value) {
  const bool per_dim = field == ".box_dim" || field == ".global_dim" || field == ".element_stride";
  if (per_dim && ord >= static_cast<uint64_t>(tm::kMaxRank))
    return "tensormap.replace " + std::string(field) + " ordinal " + std::to_string(ord) + " is past rank 5";
  if (field == ".global_stride" && ord >= static_cast<uint64_t>(tm::kMaxRank - 1))
    return "tensormap.replace .global_stride ordinal " + std::to_string(ord) + " is past the 4 strides of rank 5";
  if (field == ".global_address") m.global_address = value;
  else if (field == ".rank") {
    if (value >= static_cast<uint64_t>(tm::kMaxRank)) return out_of_table(field, value);
    m.rank = static_cast<int>(value) + 1;  // stored as rank - 1
  } else if (field == ".box_dim") m.box[ord] = static_cast<uint32_t>(value);
  else if (field == ".global_dim") m.dims[ord] = value;
  else if (field == ".global_stride") m.strides[ord] = value;  // bytes (PTX ISA 8.5 and later)
  else if (field == ".element_stride") m.element_strides[ord] = static_cast<uint32_t>(value);
  else if (field == ".elemtype") {
    auto t = ptx_elemtype(value);
    if (!t) return out_of_table(field, value);
    m.data_type = *t;
  } else if (field == ".interleave_layout") {
    if (value > 2) return out_of_table(field, value);
    m.interleave = static_cast<tm::Interleave>(value);
  } else if (field == ".swizzle_mode") {
    // 0 none, 1 32B, 2 64B, 3 128B (4: 96B, sm_103a only: not modelled).
    if (value > 3) return out_of_table(field, value);
    const bool atom = m.swizzle == tm::Swizzle::b128_atom_32b || m.swizzle == tm::Swizzle::b128_atom_32b_flip_8b ||
                      m.swizzle == tm::Swizzle::b128_atom_64b;
    if (!(value == 3 && atom)) m.swizzle = static_cast<tm::Swizzle>(value);
  } else if (field == ".swizzle_atomicity") {
    // 0 16B (the plain swizzles), 1 32B, 2 32B with the 8B flip, 3 64B: the 128B atoms (sm_100a).
    static constexpr std::array<tm::Swizzle, 4> kAtom = {tm::Swizzle::b128, tm::Swizzle::b128_atom_32b,
                                                         tm::Swizzle::b128_atom_32b_flip_8b,
                                                         tm::Swizzle::b128_atom_64b};
    if (value > 3) return out_of_table(field, value);
    if (value == 0) {
      if (m.swizzle == kAtom[1] || m.swizzle == kAtom[2] || m.swizzle == kAtom[3]) m.swizzle = tm::Swizzle::b128;
    } else {
      m.swizzle = kAtom[value];  // an atomicity names a 128-byte swizzle
    }
  } else if (field == ".fill_mode") {
    if (value > 1) return out_of_table(field, value);
    m.oob_fill = static_cast<tm::OobFill>(value);
  } else {
    return "tensormap.replace with no field the PTX ISA names";
  }
  return std::nullopt;
}

}  // namespace tmakit::check::detail
