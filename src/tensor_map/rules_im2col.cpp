// The im2col and im2col_wide checks of validate() (§1.4, §1.5; HW2, HW6-HW11 of
// docs/hardware-notes.md).
#include <numeric>

#include "checker.hpp"

namespace tmakit::tensor_map {
using namespace checker;

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
          fmt::format("im2col_wide maps take swizzle {}128b or 128b_atom_32b (cuda.h), got {}: the H100's "
                      "driver encodes the map (HW11), but what an sm_100 load does with it is unmeasured; use {}",
                      packed16(m_.data_type) ? "" : "64b, ", name(s), packed16(m_.data_type) ? "128b" : "64b or 128b"),
          "swizzle");
    if (m_.interleave != Interleave::none)
      add("map.im2col-wide-interleave",
          fmt::format("im2col_wide maps take interleave none (cuda.h), got {}: the H100's driver encodes the "
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

}  // namespace tmakit::tensor_map
