// validate() and the checks of every map: rank and target, address, dims and
// strides, box, element strides, interleave and swizzle, size, packed types.
// Driver rules: §1.3 (tiled), §1.4 (im2col), §1.5 (im2col_wide), settled by H17 and
// by the 2,750 recorded H100 verdicts (docs/hardware-notes.md, "HW n" = its item n).
#include "checker.hpp"

namespace tmakit::tensor_map {
using namespace checker;

Diagnostics Checker::run() {
  rank_and_target();
  address();
  // Per-dimension rules only make sense for a representable rank.
  int r = (m_.rank >= 1 && m_.rank <= kMaxRank) ? m_.rank : 0;
  dims_and_strides(r);
  if (tiled()) box(r);
  element_strides(r);
  interleave_and_swizzle(r);
  fill_and_size();
  packed(r);
  if (!tiled()) im2col(r);
  advisories(r);
  return std::move(d_);
}

void Checker::rank_and_target() {
  if (tiled()) {
    if (m_.rank < 1 || m_.rank > kMaxRank)
      add("map.rank-range", fmt::format("tensor rank {} is outside 1..5", m_.rank), "rank");
  } else if (m_.rank < 3 || m_.rank > kMaxRank) {
    add("map.im2col-rank", fmt::format("{} maps need rank 3..5 (NWC, NHWC, NDHWC), got {}", name(m_.encode), m_.rank),
        "rank");
  }
  if (is_packed(m_.data_type) && !sm100_or_later(t_))
    add("map.packed-type-target",
        fmt::format("data type {} needs sm_100 or later; the driver rejects it on {}", name(m_.data_type),
                    t_.str()),
        "data_type");
  if (is_atom(m_.swizzle) && !sm100_or_later(t_))
    add("map.atom-swizzle-target",
        fmt::format("swizzle {} needs sm_100 or later; the driver rejects it on {}", name(m_.swizzle), t_.str()),
        "swizzle");
  if (m_.encode == Encode::im2col_wide && !sm100_or_later(t_))
    add("map.im2col-wide-target",
        fmt::format("im2col_wide maps (cuTensorMapEncodeIm2colWide) are read only by .im2col::w and .im2col::w::128 "
                    "loads, which need sm_100 or later; target is {}: the H100's driver encodes the map (HW7), but "
                    "no instruction of this target can use it (target sm_100a, or encode im2col)",
                    t_.str()),
        "encode");
}

void Checker::address() {
  uint64_t align = 16;
  std::string why;
  if (m_.interleave == Interleave::b32) align = 32, why = " (interleave 32b)";
  else if (packed16(m_.data_type)) align = 32, why = fmt::format(" (data type {})", name(m_.data_type));
  if (m_.global_address % align)
    add("map.global-address-align",
        fmt::format("global address {:#x} is not a multiple of {}{}", m_.global_address, align, why),
        "global_address");
}

void Checker::dims_and_strides(int r) {
  for (int i = 0; i < r; ++i)
    if (m_.dims[i] < 1 || m_.dims[i] > kMaxDim)
      add("map.global-dim-range", fmt::format("dims[{}] = {} is outside 1..4294967296 (2^32)", i, m_.dims[i]),
          idx("dims", i));
  uint64_t align = (m_.interleave == Interleave::b32 || packed16(m_.data_type)) ? 32 : 16;
  for (int i = 0; i + 1 < r; ++i) {
    uint64_t s = m_.strides[i];
    if (s % align)
      add("map.global-stride-align",
          fmt::format("strides[{}] = {} bytes (dimension {}) is not a multiple of {}", i, s, i + 1, align),
          idx("strides", i));
    if (s >= kStrideLimit)
      add("map.global-stride-range",
          fmt::format("strides[{}] = {} bytes is not below 2^40 = {}", i, s, kStrideLimit), idx("strides", i));
  }
}

void Checker::box(int r) {
  for (int i = 0; i < r; ++i)
    if (m_.box[i] < 1 || m_.box[i] > kMaxBox)
      add("map.box-dim-range", fmt::format("box[{}] = {} is outside 1..256", i, m_.box[i]), idx("box", i));
  // cuda.h states this for interleave none only; the H100 driver refuses every
  // interleaved map with an 8-byte inner box too (HW5: 18 of 18 sets).
  if (r >= 1) {
    uint64_t bits = uint64_t{m_.box[0]} * elem_bits();
    if (bits % 128)
      add("map.box-inner-bytes",
          fmt::format("inner box row box[0] × element size = {} × {} bytes = {} bytes is not a multiple of 16",
                      m_.box[0], elem_text(), detail::bytes_text(bits)),
          "box[0]");
  }
}

void Checker::element_strides(int r) {
  for (int i = 0; i < r; ++i) {
    uint32_t e = m_.element_strides[i];
    if (e < 1 || e > kMaxElementStride)
      add("map.element-stride-range", fmt::format("element_strides[{}] = {} is outside 1..8", i, e),
          idx("element_strides", i));
  }
}

void Checker::interleave_and_swizzle(int r) {
  if (m_.interleave != Interleave::none && r != 0 && r < 3)
    add("map.interleave-rank", fmt::format("interleave {} needs rank 3..5, got rank {}", name(m_.interleave), r),
        "interleave");
  // cuda.h (and §1.3) require swizzle 32b with interleave 32b, but the H100 driver
  // accepts none, 64b and 128b (HW3: 39 sets), so this is advice, not a refusal.
  if (m_.interleave == Interleave::b32 && m_.swizzle != Swizzle::b32)
    add("map.interleave-swizzle",
        fmt::format("interleave 32b with swizzle {}: cuda.h requires swizzle 32b; the H100 driver accepts the map "
                    "and swizzles the dense 32-byte slices with the usual pattern (Q26)",
                    name(m_.swizzle)),
        "swizzle");
  // Q26: an interleaved tiled load walks dimension rank-2 once (k = 0): a larger box or
  // element stride there is silently ignored, so the box holds fewer bytes than written.
  // The advice derives from box[rank-2] and element_strides[rank-2] only: an error in
  // another field (an 8-byte inner box, HW5) does not make it noise. The byte count it
  // quotes depends on every box field, so it is left out when any of them is in error.
  const int once = r - 2;
  if (m_.interleave != Interleave::none && tiled() && r >= 3 && !in_error(idx("box", once)) &&
      !in_error(idx("element_strides", once)) && (m_.box[once] > 1 || m_.element_strides[once] > 1)) {
    const bool sized = !in_error("box[") && !in_error("element_strides[");
    add("map.interleave-walk-once",
        fmt::format("interleave {}: the H100 walks dimension {} once, so box[{}] = {} and element_strides[{}] = {} "
                    "have no effect{}",
                    name(m_.interleave), once, once, m_.box[once], once, m_.element_strides[once],
                    sized ? fmt::format(" (one load delivers {} bytes)", m_.bytes_per_box()) : std::string()),
        idx("box", once));
  }
  if (m_.interleave == Interleave::none && m_.swizzle != Swizzle::none && (r >= 1 || !tiled())) {
    uint64_t n = tiled() ? m_.box[0] : m_.channels_per_pixel;
    uint64_t bits = n * elem_bits();
    uint64_t span = static_cast<uint64_t>(swizzle_span(m_.swizzle));
    if (bits > span * 8)
      add("map.swizzle-span",
          fmt::format("swizzle {} allows an inner box of at most {} bytes, got {} ({}={} × {} bytes)",
                      name(m_.swizzle), span, detail::bytes_text(bits), tiled() ? "box[0]" : "channels_per_pixel", n,
                      elem_text()),
          tiled() ? "box[0]" : "channels_per_pixel");
  }
}

void Checker::fill_and_size() {
  if (m_.oob_fill == OobFill::nan_request_zero_fma && (!is_float(m_.data_type) || is_packed(m_.data_type)))
    add("map.oob-nan-type",
        fmt::format("oob_fill nan_request_zero_fma needs a float data type, got {}", name(m_.data_type)),
        "oob_fill");
  if (!tiled()) {
    // HW12: the driver counts channels × pixels × element size with interleave too,
    // although an interleaved load delivers one slice per pixel (bytes_per_box()).
    const uint32_t pixels = m_.encode == Encode::im2col_wide && m_.wide_mode == WideMode::w128 ? 128 : m_.pixels_per_column;
    const uint64_t bits = detail::mul_sat(uint64_t{m_.channels_per_pixel} * pixels, elem_bits());
    const uint64_t bytes = bits == UINT64_MAX ? bits : (bits + 7) / 8;
    if (bytes > kMaxBoxBytes)
      add("map.box-bytes-limit",
          fmt::format("the driver counts {} bytes (channels_per_pixel × pixels × element size = {} × {} × {} bytes{}); "
                      "the limit is {} bytes (228 KiB)",
                      detail::size_text(bytes), m_.channels_per_pixel, pixels, elem_text(),
                      m_.interleave != Interleave::none
                          ? fmt::format(", with interleave too, although a load delivers {} bytes, HW12",
                                        m_.bytes_per_box())
                          : "",
                      kMaxBoxBytes),
          "pixels_per_column");
    return;
  }
  const uint64_t counted = driver_box_bytes(), delivered = m_.bytes_per_box();
  if (counted > kMaxBoxBytes)
    add("map.box-bytes-limit",
        fmt::format("the driver counts {} bytes (Π floor(box[i] / element_strides[i]) × element size, dimension 0 "
                    "included); the limit is {} bytes (228 KiB)",
                    detail::size_text(counted), kMaxBoxBytes),
        "box");
  else if (delivered > kMaxBoxBytes && !in_error("box[") && !in_error("element_strides["))
    add("map.box-bytes-delivered",
        fmt::format("one load delivers {} bytes (Π ceil(box[i] / element_strides[i]) × element size, element_strides[0] "
                    "ignored without interleave), more than {} bytes (228 KiB), which no CTA's shared memory holds; "
                    "the driver accepts the map because it counts only {} bytes (floor, dimension 0 included)",
                    delivered, kMaxBoxBytes, counted),
        "box");
}

// HW1: the driver's size test is Π floor(box[i] / E[i]) × element size with E[0]
// counted even without interleave (1,014 of 1,014 sets where floor and ceil
// readings differ). A box of 1 with E = 4 counts 0, so the product can be 0.
uint64_t Checker::driver_box_bytes() const {
  uint64_t count = 1;
  for (int i = 0; i < std::clamp(m_.rank, 0, kMaxRank); ++i) {
    uint32_t e = m_.element_strides[i] == 0 ? 1 : m_.element_strides[i];  // 0: map.element-stride-range
    count = detail::mul_sat(count, m_.box[i] / e);
  }
  uint64_t bits = detail::mul_sat(count, elem_bits());
  return bits == UINT64_MAX ? bits : (bits + 7) / 8;
}

void Checker::packed(int r) {
  DataType t = m_.data_type;
  if (!is_packed(t)) return;
  if (r >= 1) {
    uint64_t multiple = packed16(t) ? 128 : 2;
    if (m_.dims[0] % multiple)
      add("map.packed-global-dim",
          fmt::format("data type {} needs dims[0] to be a multiple of {}, got {}", name(t), multiple, m_.dims[0]),
          "dims[0]");
  }
  if (!packed16(t)) return;
  if (tiled() && r >= 1 && m_.box[0] != 128)
    add("map.packed-box-inner", fmt::format("data type {} needs box[0] = 128, got {}", name(t), m_.box[0]), "box[0]");
  if (!tiled() && m_.channels_per_pixel != 128)
    add("map.packed-channels",
        fmt::format("data type {} needs channels_per_pixel = 128, got {}", name(t), m_.channels_per_pixel),
        "channels_per_pixel");
  if (t == DataType::u6_align16b && m_.interleave != Interleave::none)
    add("map.packed-interleave",
        fmt::format("data type 16u6_align16b needs interleave none, got {}", name(m_.interleave)), "interleave");
  if (m_.encode == Encode::im2col_wide) return;  // map.im2col-wide-swizzle covers the packed subset
  Swizzle s = m_.swizzle;
  bool ok = s == Swizzle::none || s == Swizzle::b128 || s == Swizzle::b128_atom_32b ||
            (t == DataType::u6_align16b && s == Swizzle::b128_atom_64b);
  if (!ok)
    add("map.packed-swizzle",
        fmt::format("data type {} allows swizzle none, 128b, 128b_atom_32b{}; got {}", name(t),
                    t == DataType::u6_align16b ? ", 128b_atom_64b (stores)" : "", name(s)),
        "swizzle");
  if (t == DataType::u6_align16b && s == Swizzle::b128_atom_64b)
    add("map.packed-swizzle-store-only",
        "data type 16u6_align16b with swizzle 128b_atom_64b serves stores only; loads through this map are invalid",
        "swizzle");
}

Diagnostics validate(const TensorMap& map, const spec::Target& target) { return Checker(map, target).run(); }

}  // namespace tmakit::tensor_map
