// The validator's rule table and validate(): every violated rule, each with its
// stable id, the field it concerns and the values involved.
// Driver rules: §1.3 (tiled), §1.4 (im2col), §1.5 (im2col_wide), settled by H17 and
// by the 2,750 recorded H100 verdicts (docs/hardware-notes.md, "HW n" = its item n).
#include <algorithm>
#include <fmt/format.h>
#include <numeric>

#include "detail.hpp"
#include "tmakit/tensor_map/tensor_map.hpp"

namespace tmakit::tensor_map {
namespace {

constexpr Severity E = Severity::error, W = Severity::warning, N = Severity::note;

constexpr MapRule kRules[] = {
    {"map.rank-range", "§1.3", true, E, "tiled maps have rank 1..5"},
    {"map.global-address-align", "§1.3", true, E,
     "global address a multiple of 16 (32 with interleave 32b, 16u4_align16b, 16u6_align16b)"},
    {"map.global-dim-range", "§1.3", true, E, "each dims[i] in 1..2^32"},
    {"map.global-stride-align", "§1.3", true, E,
     "each stride a multiple of 16 (32 with interleave 32b, 16u4_align16b, 16u6_align16b)"},
    {"map.global-stride-range", "§1.3", true, E, "each stride below 2^40 bytes"},
    {"map.box-dim-range", "§1.3", true, E, "each box[i] in 1..256"},
    {"map.box-inner-bytes", "§1.3, HW5", true, E,
     "box[0] × element size a multiple of 16 bytes (with interleave too, HW5)"},
    {"map.element-stride-range", "§1.3", true, E, "each element stride in 1..8"},
    {"map.interleave-rank", "§1.3", true, E, "interleave 16b/32b needs rank 3..5"},
    {"map.interleave-swizzle", "§1.3, HW3", false, W,
     "interleave 32b without swizzle 32b: cuda.h requires it, the H100 driver accepts it"},
    {"map.interleave-walk-once", "§2.4, Q26", false, W,
     "interleave: box[rank-2] or element_strides[rank-2] above 1 has no effect (the H100 walks that dimension once)"},
    {"map.swizzle-span", "§1.3, §1.4, §1.5", true, E,
     "interleave none: inner box row at most the swizzle span (32, 64, 128 bytes)"},
    {"map.oob-nan-type", "§1.3", true, E, "NaN fill only for float types, never packed ones"},
    {"map.box-bytes-limit", "H17, HW1", true, E,
     "Π floor(box[i] / element_strides[i]) × element size (dimension 0 included) at most 233,472 bytes"},
    {"map.box-bytes-delivered", "H17, HW1, H16", false, W,
     "the driver accepts the map but one load delivers more than 233,472 bytes (ceil, E[0] ignored)"},
    {"map.packed-type-target", "§1.2, H17", true, E, "packed 16u4/16u6 types need sm_100 or later"},
    {"map.atom-swizzle-target", "§3.4, H17", true, E, "128b_atom_* swizzles need sm_100 or later"},
    {"map.packed-global-dim", "§1.3", true, E,
     "dims[0] a multiple of 128 (16u4_align16b, 16u6_align16b) or of 2 (16u4_align8b)"},
    {"map.packed-box-inner", "§1.3", true, E, "16u4_align16b/16u6_align16b: box[0] exactly 128"},
    {"map.packed-channels", "§1.4, §1.5", true, E,
     "16u4_align16b/16u6_align16b im2col: channels_per_pixel exactly 128"},
    {"map.packed-interleave", "§1.3", true, E, "16u6_align16b needs interleave none"},
    {"map.packed-swizzle", "§1.3", true, E,
     "16u4_align16b: swizzle none, 128b, 128b_atom_32b; 16u6_align16b: also 128b_atom_64b"},
    {"map.packed-swizzle-store-only", "§1.3", false, W, "16u6_align16b with 128b_atom_64b serves stores only"},
    {"map.im2col-rank", "§1.4, §1.5", true, E, "im2col maps have rank 3..5"},
    {"map.im2col-corner-range", "§1.4", true, E,
     "pixel box corners in [-32768, 32767] (rank 3), [-128, 127] (rank 4), [-16, 15] (rank 5)"},
    {"map.im2col-box-empty", "§1.4, §1.5, H17, HW2, HW8", true, E,
     "pixel bounding box not empty: int32(dims[d] + upper) > lower per spatial dim d, wrapping (HW2); d counts "
     "from 0 with interleave (HW8); im2col_wide: W with its corners, H and D with corners 0 (HW10)"},
    {"map.im2col-channels", "§1.4, §1.5", true, E, "channels_per_pixel in 1..256"},
    {"map.im2col-channel-bytes", "§1.4, §1.5, HW6", true, E,
     "channels_per_pixel × element size a multiple of 16 bytes (with interleave too)"},
    {"map.im2col-pixels", "§1.4, §1.5, HW9", true, E,
     "pixels_per_column in 1..1024 (in mode w128 too, HW9, although that mode reads 128 pixels)"},
    {"map.im2col-wide-target", "§1.5, HW7", false, W,
     "im2col_wide maps are read by .im2col::w loads, sm_100 or later (the H100's driver encodes them anyway)"},
    {"map.im2col-wide-corner-range", "§1.5, HW10", true, E,
     "pixel_box_lower_w / upper_w in [-32768, 32767] (rank 3), [-128, 127] (rank 4), [-16, 15] (rank 5)"},
    {"map.im2col-wide-swizzle", "§1.5, HW11", false, W,
     "im2col_wide: swizzle 64b, 128b or 128b_atom_32b (packed types: 128b or 128b_atom_32b); the H100's driver "
     "accepts none and 32b"},
    {"map.im2col-wide-interleave", "§1.5, §2.4, HW11", false, W,
     "im2col_wide: interleave none; the H100's driver accepts 16b"},
    {"map.box-exceeds-tensor", "H5", false, N, "a box larger than the tensor is valid: loads fill, stores skip"},
    {"map.store-inner-extent", "H6, §2.2", false, W,
     "inner extent not a multiple of 16 bytes: stores write the whole last 16-byte chunk"},
    {"map.stride-overlap", "§1.3, Q24, H17", false, W,
     "strides may let coordinates alias (the driver accepts it); stores would write such bytes twice"},
    {"map.smem-alignment", "H15, §3.1", false, N,
     "box operand 128-byte aligned; swizzle phase 0 at 256/512/1024"},
};

constexpr uint64_t kMaxDim = uint64_t{1} << 32;      // §1.3 globalDim ≤ 2^32
constexpr uint64_t kStrideLimit = uint64_t{1} << 40;  // §1.3 globalStrides < 2^40
constexpr uint32_t kMaxBox = 256;                     // §1.3 boxDim ≤ 256
constexpr uint32_t kMaxElementStride = 8;             // §1.3 elementStrides ≤ 8
constexpr uint64_t kMaxBoxBytes = 233472;             // H17, HW1: 228 KiB per instruction
constexpr uint32_t kMaxChannels = 256;                // §1.4 channelsPerPixel ≤ 256
constexpr uint32_t kMaxPixels = 1024;                 // §1.4 pixelsPerColumn ≤ 1024

bool packed16(DataType t) { return t == DataType::u4_align16b || t == DataType::u6_align16b; }
bool is_atom(Swizzle s) {
  return s == Swizzle::b128_atom_32b || s == Swizzle::b128_atom_32b_flip_8b || s == Swizzle::b128_atom_64b;
}
bool sm100_or_later(const spec::Target& t) { return t.arch >= 100; }

// Dims far past 2^32 are reported by map.global-dim-range; keep the signed sum defined.
int64_t clamp_dim(uint64_t d) { return static_cast<int64_t>(std::min<uint64_t>(d, uint64_t{1} << 40)); }

std::string idx(const char* field, int i) { return fmt::format("{}[{}]", field, i); }

class Checker {
 public:
  Checker(const TensorMap& m, const spec::Target& t) : m_(m), t_(t) {}
  Diagnostics run();

 private:
  void add(std::string_view rule, std::string message, std::string where) {
    const MapRule* r = find_map_rule(rule);
    d_.push_back({r ? r->severity : Severity::error, std::string(rule), std::move(message), std::move(where)});
  }
  uint64_t elem_bits() const { return static_cast<uint64_t>(smem_bits_per_element(m_.data_type)); }
  std::string elem_text() const { return detail::bytes_text(elem_bits()); }
  bool tiled() const { return m_.encode == Encode::tiled; }
  // Whether an error already names `field` (a prefix: "dims[" is every dimension).
  // Advice derived from a value already in error only adds noise, so it is skipped.
  bool in_error(std::string_view field) const {
    return std::any_of(d_.begin(), d_.end(),
                       [&](const Diagnostic& d) { return d.severity == E && d.where.rfind(field, 0) == 0; });
  }

  void rank_and_target();
  void address();
  void dims_and_strides(int r);
  void box(int r);
  void element_strides(int r);
  void interleave_and_swizzle(int r);
  void fill_and_size();
  uint64_t driver_box_bytes() const;
  void packed(int r);
  void im2col(int r);
  void im2col_box_empty(int d, int64_t lower, int64_t upper, const std::string& where, const char* corners);
  void im2col_channel_bytes();
  void advisories(int r);
  void stride_overlap(int r);

  const TensorMap& m_;
  const spec::Target& t_;
  Diagnostics d_;
};

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
        fmt::format("data type {} needs sm_100 or later; the driver rejects it on {} (H17)", name(m_.data_type),
                    t_.str()),
        "data_type");
  if (is_atom(m_.swizzle) && !sm100_or_later(t_))
    add("map.atom-swizzle-target",
        fmt::format("swizzle {} needs sm_100 or later; the driver rejects it on {} (H17)", name(m_.swizzle), t_.str()),
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
                    "ignored without interleave, H16), more than {} bytes (228 KiB), which no CTA's shared memory holds; "
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

void Checker::im2col(int r) {
  // §1.4: the corners share 16 bits between the spatial dimensions; the H100's driver
  // applies the same budget to im2col_wide's W corners (HW10).
  const int64_t lim = r == 3 ? 32768 : r == 4 ? 128 : 16;
  // The spatial dimensions the corners apply to: W, H, D = dims[1..rank-2], or with
  // interleave dims[0..rank-3] (corner entry k on dimension k, as the interleaved walk, HW8).
  const int first = m_.interleave == Interleave::none ? 1 : 0;
  if (m_.encode == Encode::im2col) {
    for (int i = 0; r >= 3 && i < r - 2; ++i)
      for (auto [field, arr] : {std::pair{"pixel_box_lower", &m_.pixel_box_lower},
                                std::pair{"pixel_box_upper", &m_.pixel_box_upper}}) {
        int64_t v = (*arr)[i];
        if (v < -lim || v > lim - 1)
          add("map.im2col-corner-range",
              fmt::format("{}[{}] = {} is outside [{}, {}] for rank {}", field, i, v, -lim, lim - 1, r),
              idx(field, i));
      }
    for (int i = 0; r >= 3 && i < r - 2; ++i)
      im2col_box_empty(first + i, m_.pixel_box_lower[i], m_.pixel_box_upper[i], idx("pixel_box_upper", i),
                       "lower and upper");
  } else {
    for (auto [field, v] : {std::pair{"pixel_box_lower_w", m_.pixel_box_lower_w},
                            std::pair{"pixel_box_upper_w", m_.pixel_box_upper_w}})
      if (r >= 3 && (v < -lim || v > lim - 1))
        add("map.im2col-wide-corner-range",
            fmt::format("{} = {} is outside [{}, {}] for rank {} (the H100's driver keeps im2col's shared 16-bit "
                        "budget for the W corners, HW10)",
                        field, v, -lim, lim - 1, r),
            field);
    // HW10: the H100's driver tests W as im2col's W (HW2's 32-bit wrap) and H, D with corners 0.
    for (int i = 0; r >= 3 && i < r - 2; ++i) {
      if (i == 0)
        im2col_box_empty(first, m_.pixel_box_lower_w, m_.pixel_box_upper_w, "pixel_box_upper_w",
                         "pixel_box_lower_w and pixel_box_upper_w");
      else
        im2col_box_empty(first + i, 0, 0, idx("dims", first + i), "corners 0: im2col_wide has W's only");
    }
    Swizzle s = m_.swizzle;
    bool ok = s == Swizzle::b128 || s == Swizzle::b128_atom_32b || (!packed16(m_.data_type) && s == Swizzle::b64);
    if (!ok)
      add("map.im2col-wide-swizzle",
          fmt::format("im2col_wide maps take swizzle {}128b or 128b_atom_32b (cuda.h, §1.5), got {}: the H100's "
                      "driver encodes the map (HW11), but what an sm_100 load does with it is unmeasured; use {}",
                      packed16(m_.data_type) ? "" : "64b, ", name(s), packed16(m_.data_type) ? "128b" : "64b or 128b"),
          "swizzle");
    if (m_.interleave != Interleave::none)
      add("map.im2col-wide-interleave",
          fmt::format("im2col_wide maps take interleave none (cuda.h, §1.5), got {}: the H100's driver encodes the "
                      "map (HW11), but the wide walk with interleave is unmeasured; use interleave none",
                      name(m_.interleave)),
          "interleave");
  }
  if (m_.channels_per_pixel < 1 || m_.channels_per_pixel > kMaxChannels)
    add("map.im2col-channels", fmt::format("channels_per_pixel = {} is outside 1..256", m_.channels_per_pixel),
        "channels_per_pixel");
  else
    im2col_channel_bytes();
  // HW9: the H100's driver checks pixelsPerColumn in mode w128 too, where loads read 128 pixels.
  const bool w128 = m_.encode == Encode::im2col_wide && m_.wide_mode == WideMode::w128;
  if (m_.pixels_per_column < 1 || m_.pixels_per_column > kMaxPixels)
    add("map.im2col-pixels",
        fmt::format("pixels_per_column = {} is outside 1..1024{}", m_.pixels_per_column,
                    w128 ? " (mode w128 reads 128 pixels, but the driver checks the field anyway, HW9: set it to 128)"
                         : ""),
        "pixels_per_column");
}

// The filter base ranges over [lower, X - 1 + upper] along spatial dimension X (§4.1),
// so the box is empty when X - 1 + upper < lower. The H100 driver decides with
// int32(X + upper) > lower in wrapping 32-bit arithmetic (HW2: 445 of 445 im2col sets;
// the 64-bit test misses 101). Below 2^31 the two agree; at larger extents the sum
// wraps negative (or, for X = 2^32, to upper) and the driver refuses boxes that are
// not empty. The wrap only ever refuses more (X + upper >= 1 - 32768 cannot wrap
// upwards), so mirroring it never accepts a truly empty box.
// d: the dimension; lower, upper: the corners applied to it; where: the field to name.
void Checker::im2col_box_empty(int d, int64_t lower, int64_t upper, const std::string& where, const char* corners) {
  // Modulo 2^32 (defined for unsigned; the int32 conversion is modulo too in C++20).
  const auto low32 = static_cast<uint32_t>(m_.dims[d] + static_cast<uint64_t>(upper));
  const auto driver_sum = static_cast<int32_t>(low32);
  if (driver_sum > lower) return;
  const int64_t last = clamp_dim(m_.dims[d]) - 1 + upper;  // the true last base coordinate
  if (last < lower)
    add("map.im2col-box-empty",
        fmt::format("the pixel bounding box is empty along dimension {} ({}): dims[{}] - 1 + upper = {} - 1 + {} = {} "
                    "is below lower = {} (one pixel needs dims[{}] + upper - lower >= 1)",
                    d, corners, d, m_.dims[d], upper, last, lower, d),
        where);
  else
    add("map.im2col-box-empty",
        fmt::format("the driver refuses this pixel box along dimension {} ({}): its test int32(dims[{}] + upper) > "
                    "lower wraps in 32 bits: int32({} + {}) = {} is not above lower = {} (the box itself is not "
                    "empty; keep dims[{}] + upper below 2^31)",
                    d, corners, d, m_.dims[d], upper, driver_sum, lower, d),
        where);
}

// HW6: a pixel's channels are whole 16-byte chunks, as box[0] is for tiled maps (the
// driver refuses uint8 with 24 channels); with interleave too. Packed types count their
// shared-memory bits (16u4_align8b: 4), unmeasured: sm_90 refuses them all.
void Checker::im2col_channel_bytes() {
  const uint64_t c = m_.channels_per_pixel, bits = c * elem_bits();
  if (bits % 128 == 0) return;
  const uint64_t step = 128 / std::gcd(uint64_t{128}, elem_bits());  // channels per 16-byte chunk
  const uint64_t below = c / step * step, above = below + step;
  add("map.im2col-channel-bytes",
      fmt::format("channels_per_pixel × element size = {} × {} bytes = {} bytes is not a multiple of 16 bytes, which "
                  "the driver refuses; use a multiple of {} channels ({}{}), padding the channel dimension if needed",
                  c, elem_text(), detail::bytes_text(bits), step, below ? fmt::format("{} or ", below) : "", above),
      "channels_per_pixel");
}

void Checker::advisories(int r) {
  if (tiled())
    for (int i = 0; i < r; ++i)
      if (m_.dims[i] >= 1 && m_.box[i] > m_.dims[i] && !in_error(idx("dims", i)) && !in_error(idx("box", i)))
        add("map.box-exceeds-tensor",
            fmt::format("box[{}] = {} is larger than dims[{}] = {}: valid (H5); loads fill the rest, stores skip it", i,
                        m_.box[i], i, m_.dims[i]),
            idx("box", i));
  // H6: stores (and reductions) write whole 16-byte global chunks. im2col_wide has no store form.
  if (r >= 1 && m_.encode != Encode::im2col_wide && m_.interleave == Interleave::none && m_.dims[0] >= 1 &&
      !in_error("dims[0]")) {
    uint64_t gbits = static_cast<uint64_t>(bits_per_element(m_.data_type));
    uint64_t bits = detail::mul_sat(m_.dims[0], gbits);
    if (bits % 128) {
      uint64_t past = (128 - bits % 128 + 7) / 8;
      add("map.store-inner-extent",
          fmt::format("inner extent dims[0] × element size = {} × {} bytes = {} bytes is not a multiple of 16: a "
                      "store or reduction writes the whole last 16-byte chunk, up to {} bytes past each row (H6)",
                      m_.dims[0], detail::bytes_text(gbits), detail::bytes_text(bits), past),
          "dims[0]");
    }
  }
  stride_overlap(r);
  std::string phase;
  if (m_.swizzle != Swizzle::none)
    phase = fmt::format("; with swizzle {} the pattern starts at phase 0 only at a multiple of {} bytes (§3.1)",
                        name(m_.swizzle), m_.swizzle_period());
  add("map.smem-alignment",
      fmt::format("the shared-memory box operand must be {}-byte aligned (H15), not 16 as PTX states{}",
                  m_.smem_alignment(), phase),
      "");
}

// Sorted by stride, each dimension must start past the whole extent of the ones
// below it (stride[k] >= stride[k-1] × dims[k-1], the first one past one element);
// otherwise two coordinates can name the same bytes.
void Checker::stride_overlap(int r) {
  if (r < 2 || m_.interleave != Interleave::none || in_error("dims[") || in_error("strides[")) return;
  struct Dim { uint64_t stride_bits, extent; int i; };
  const uint64_t elem = static_cast<uint64_t>(bits_per_element(m_.data_type));
  std::vector<Dim> ds;
  for (int i = 0; i < r; ++i) {
    if (m_.dims[i] <= 1) continue;  // a dimension of one element cannot alias
    uint64_t sb = i == 0 ? elem : detail::mul_sat(m_.strides[i - 1], 8);
    ds.push_back({sb, m_.dims[i], i});
  }
  std::stable_sort(ds.begin(), ds.end(), [](const Dim& a, const Dim& b) { return a.stride_bits < b.stride_bits; });
  unsigned __int128 below = elem;  // bits spanned by the dimensions already passed (exact: it can pass 2^64)
  std::string below_text = fmt::format("one element ({} bytes)", detail::bytes_text(elem));
  for (const Dim& d : ds) {
    if (d.stride_bits < below) {
      add("map.stride-overlap",
          fmt::format("dimension {} has stride {} bytes, less than the {} bytes of {}: coordinates may alias; loads are "
                      "fine, stores and reductions would write such bytes more than once (Q24)",
                      d.i, detail::bytes_text(d.stride_bits), detail::bytes_text_wide(below), below_text),
          d.i == 0 ? std::string("dims[0]") : idx("strides", d.i - 1));
      return;  // one report is enough
    }
    below = static_cast<unsigned __int128>(d.stride_bits) * d.extent;
    below_text = fmt::format("dimension {} ({} × {} bytes)", d.i, d.extent, detail::bytes_text(d.stride_bits));
  }
}

}  // namespace

std::span<const MapRule> map_rules() { return kRules; }

const MapRule* find_map_rule(std::string_view id) {
  for (const auto& r : kRules)
    if (r.id == id) return &r;
  return nullptr;
}

Diagnostics validate(const TensorMap& map, const spec::Target& target) { return Checker(map, target).run(); }

}  // namespace tmakit::tensor_map
