// The draws of record_driver_verdicts (verdict_draws.hpp): valid tiled and im2col maps, the
// extents and box limits they keep, and the breaking of exactly one rule of a valid map.
#include <algorithm>

#include "verdict_draws.hpp"

namespace tmakit::gpu_tools::verdicts {

uint64_t box_bytes(const TensorMap& m) {
  if (m.encode == Encode::im2col_wide) {
    const uint64_t pixels = m.wide_mode == tensor_map::WideMode::w128 ? 128 : m.pixels_per_column;
    return uint64_t(m.channels_per_pixel) * pixels * elem_bytes(m.data_type);
  }
  if (m.encode == Encode::im2col) return uint64_t(m.channels_per_pixel) * m.pixels_per_column * elem_bytes(m.data_type);
  uint64_t n = elem_bytes(m.data_type);
  for (int i = 0; i < m.rank; ++i) {
    // elementStrides[0] is ignored without interleave (§1.3, H16); a 0 stride is itself the broken rule
    const bool ignored = i == 0 && m.interleave == Interleave::none;
    const uint64_t e = m.element_strides[i] && !ignored ? m.element_strides[i] : 1;
    n *= (m.box[i] + e - 1) / e;
  }
  return n;
}

// Global dims and strides: strides include random padding, multiples of `align`;
// occasionally the H17 oddities (stride 0, non-monotonic) and 2^32 extents.
void random_extents(TensorMap& m, uint64_t align) {
  const int eb = elem_bytes(m.data_type);
  for (int i = 0; i < m.rank; ++i) {
    int kind = irand(0, 9);
    if (kind == 0) m.dims[i] = urand(1, 8);                          // often smaller than the box (H5)
    else if (kind == 1) m.dims[i] = chance(0.5) ? kTwo32 : urand(kTwo32 - 1000, kTwo32);  // upper bound
    else m.dims[i] = urand(1, 1u << irand(4, 20));
  }
  uint64_t prev = round_up(m.dims[0] * eb, align);
  for (int i = 0; i + 1 < m.rank; ++i) {
    uint64_t s = prev + align * urand(0, 4);
    int odd = irand(0, 19);
    if (odd == 0) s = 0;                                  // H17: stride 0 accepted
    else if (odd == 1) s = align * urand(1, 64);          // overlapping / non-monotonic
    if (s >= kTwo40) s = align * urand(1, (kTwo40 - 1) / align);
    m.strides[i] = s;
    prev = std::max<uint64_t>(s, 1) * m.dims[i + 1];
    if (prev >= kTwo40) prev = align;  // keep later strides representable
    prev = round_up(prev, align);
  }
}

// Shrinks outer box dims until the map fits the 233,472-byte limit.
void fit_box_limit(TensorMap& m) {
  for (int guard = 0; box_bytes(m) > kMaxBoxBytes && guard < 10000; ++guard) {
    int i = m.rank > 1 ? irand(1, m.rank - 1) : 0;
    if (m.box[i] > 1) m.box[i] = std::max<uint32_t>(1, m.box[i] / 2);
  }
}


TensorMap valid_tiled() {
  TensorMap m;
  m.encode = Encode::tiled;
  m.data_type = static_cast<DataType>(irand(0, 12));
  const int eb = elem_bytes(m.data_type);
  m.interleave = chance(0.15) ? static_cast<Interleave>(irand(1, 2)) : Interleave::none;
  m.rank = m.interleave == Interleave::none ? irand(1, 5) : irand(3, 5);
  if (m.interleave == Interleave::b32) m.swizzle = Swizzle::b32;  // §1.3: interleave 32B forces swizzle 32B
  else m.swizzle = static_cast<Swizzle>(irand(0, 3));
  const uint64_t align = m.interleave == Interleave::b32 ? 32 : 16;
  // Inner box: a multiple of 16 bytes, within the swizzle span (§1.3).
  int max_bytes = 256 * eb;
  if (m.interleave != Interleave::none) max_bytes = m.interleave == Interleave::b32 ? 32 : 16;
  else if (m.swizzle != Swizzle::none) max_bytes = span_of(m.swizzle);
  int chunks = irand(1, max_bytes / 16);
  m.box[0] = uint32_t(chunks * 16 / eb);
  for (int i = 1; i < m.rank; ++i) m.box[i] = chance(0.2) ? 256 : irand(1, chance(0.5) ? 16 : 256);
  for (int i = 0; i < m.rank; ++i) m.element_strides[i] = chance(0.6) ? 1 : irand(1, 8);
  fit_box_limit(m);
  random_extents(m, align);
  m.global_address = base_address + align * urand(0, 64);
  m.l2_promotion = static_cast<L2Promotion>(irand(0, 3));
  m.oob_fill = is_float_type(m.data_type) && chance(0.4) ? OobFill::nan_request_zero_fma : OobFill::zero;
  return m;
}

// The box limit exactly (valid) or just over it (invalid): uint8 {256, 228, 4}
// is 233,472 bytes; {16, 139, 105} is 233,520 (the two values H17 quotes).
TensorMap limit_case(bool over) {
  TensorMap m;
  m.data_type = DataType::uint8;
  m.rank = 3;
  if (over) m.box = {16, 139, 105, 1, 1};
  else m.box = {256, 228, 4, 1, 1};
  m.dims = {4096, 1024, 1024, 1, 1};
  m.strides = {4096, 4096ull * 1024, 0, 0};
  m.global_address = base_address;
  return m;
}


// The general mode draws no interleave here (its sets regenerate as recorded); the
// im2col mode asks for interleave 16b/32b in a quarter of the draws.
TensorMap valid_im2col(bool interleave) {
  TensorMap m;
  m.encode = Encode::im2col;
  m.data_type = static_cast<DataType>(irand(0, 12));
  const int eb = elem_bytes(m.data_type);
  if (interleave && chance(0.25)) m.interleave = static_cast<Interleave>(irand(1, 2));
  const uint64_t align = m.interleave == Interleave::b32 ? 32 : 16;
  m.rank = irand(3, 5);
  m.swizzle = static_cast<Swizzle>(irand(0, 3));
  int max_bytes = m.swizzle == Swizzle::none ? 256 * eb : span_of(m.swizzle);
  m.channels_per_pixel = uint32_t(irand(1, max_bytes / 16) * 16 / eb);
  m.pixels_per_column = chance(0.1) ? 1 : irand(1, 1024);
  while (box_bytes(m) > kMaxBoxBytes) m.pixels_per_column /= 2;
  for (int i = 0; i < m.rank; ++i) m.element_strides[i] = chance(0.6) ? 1 : irand(1, 8);
  random_extents(m, align);
  // Corners: 16 bits shared by the spatial dims (§1.4); keep the box non-empty.
  const int lim = corner_limit(m.rank);
  for (int s = 0; s + 2 < m.rank; ++s) {
    uint64_t X = m.dims[s + 1];
    int lo, hi;
    do {
      lo = irand(-lim, lim - 1);
      hi = irand(-lim, lim - 1);
      if (chance(0.5)) { lo = irand(-std::min(lim, 3), 0); hi = irand(-std::min(lim, 3), std::min(lim - 1, 3)); }
    } while (int64_t(X) - 1 + hi < lo);
    m.pixel_box_lower[s] = lo;
    m.pixel_box_upper[s] = hi;
  }
  m.global_address = base_address + align * urand(0, 64);
  m.l2_promotion = static_cast<L2Promotion>(irand(0, 3));
  m.oob_fill = is_float_type(m.data_type) && chance(0.4) ? OobFill::nan_request_zero_fma : OobFill::zero;
  return m;
}

// Breaks exactly one rule of a valid map; returns the rule's name, or "" when this
// rule does not apply to the map (the caller draws again).
std::string break_one(TensorMap& m, int rule) {
  const bool tiled = m.encode == Encode::tiled;
  const int eb = elem_bytes(m.data_type);
  const bool il = m.interleave != Interleave::none;
  switch (rule) {
    case 0:  // §1.3 tensorRank 1..5 (3..5 for im2col and interleave)
      if (tiled && !il) { m.rank = 0; return "map.rank-range"; }
      if (tiled && il) { m.rank = irand(1, 2); return "map.interleave-rank"; }
      m.rank = irand(1, 2);
      return "map.im2col-rank";
    case 1: {  // globalAddress multiple of 16 (32 with interleave 32B)
      if (m.interleave == Interleave::b32 && chance(0.5)) { m.global_address = base_address + 32 * urand(0, 8) + 16; return "map.global-address-align"; }
      m.global_address = base_address + 16 * urand(0, 8) + urand(1, 15);
      return "map.global-address-align";
    }
    case 2: {  // globalDim in [1, 2^32]
      int i = irand(0, m.rank - 1);
      m.dims[i] = chance(0.5) ? 0 : kTwo32 + urand(1, 1000);
      if (i > 0 && m.dims[i] > kTwo32) return "";  // may make the next stride meaningless; keep simple
      return "map.global-dim-range";
    }
    case 3: {  // strides multiple of 16 (32 with interleave 32B)
      if (m.rank < 2) return "";
      int i = irand(0, m.rank - 2);
      if (m.interleave == Interleave::b32 && chance(0.5)) { m.strides[i] = round_up(m.strides[i], 32) + 16; return "map.global-stride-align"; }
      m.strides[i] = (m.strides[i] & ~15ull) + urand(1, 15);
      if (m.strides[i] >= kTwo40) m.strides[i] -= 16;
      return "map.global-stride-align";
    }
    case 4: {  // strides < 2^40
      if (m.rank < 2) return "";
      int i = irand(0, m.rank - 2);
      m.strides[i] = kTwo40 + 32 * urand(0, 1000);
      return "map.global-stride-range";
    }
    case 5: {  // boxDim in [1, 256]
      if (!tiled) return "";
      if (m.rank > 1 && chance(0.6)) {
        int i = irand(1, m.rank - 1);
        if (chance(0.5)) { m.box[i] = 0; return "map.box-dim-range"; }
        m.box[i] = irand(257, 1024);
        for (int k = 1; k < m.rank; ++k) if (k != i) m.box[k] = 1;
        m.box[0] = 16 / eb;  // keep the byte limit and span rules satisfied
        if (box_bytes(m) > kMaxBoxBytes) return "";
        return "map.box-dim-range";
      }
      if (il) return "";
      if (chance(0.5)) { m.box[0] = 0; return "map.box-dim-range"; }
      m.box[0] = uint32_t(round_up(257 * eb, 16) / eb + 16 * irand(0, 4));  // inner bytes stay a multiple of 16
      m.swizzle = Swizzle::none;
      for (int k = 1; k < m.rank; ++k) m.box[k] = 1;
      return "map.box-dim-range";
    }
    case 6: {  // interleave NONE: boxDim[0] × elemBytes a multiple of 16
      if (!tiled || il) return "";
      int max_bytes = m.swizzle == Swizzle::none ? 256 * eb : span_of(m.swizzle);
      uint32_t b;
      do b = uint32_t(irand(1, max_bytes / eb)); while ((b * eb) % 16 == 0);
      m.box[0] = b;
      return "map.box-inner-bytes";
    }
    case 7: {  // elementStrides in [1, 8]
      int i = irand(0, m.rank - 1);
      m.element_strides[i] = chance(0.4) ? 0 : irand(9, 64);
      if (box_bytes(m) > kMaxBoxBytes) return "";
      return "map.element-stride-range";
    }
    case 8:  // interleave 32B requires swizzle 32B
      if (!tiled || m.interleave != Interleave::b32) return "";
      m.swizzle = chance(0.5) ? Swizzle::none : static_cast<Swizzle>(irand(2, 3));
      return "map.interleave-swizzle";
    case 9: {  // interleave NONE and swizzle: inner box bytes <= span
      if (il) return "";
      Swizzle s = static_cast<Swizzle>(irand(1, 3));
      int span = span_of(s);
      int inner = tiled ? int(m.box[0]) * eb : int(m.channels_per_pixel) * eb;
      if (inner <= span) {
        int max_el = 256;
        int want = span + 16 * irand(1, 8);
        if (want / eb > max_el) return "";
        if (tiled) { m.box[0] = want / eb; fit_box_limit(m); }
        else { m.channels_per_pixel = want / eb; while (box_bytes(m) > kMaxBoxBytes) m.pixels_per_column /= 2; }
      }
      m.swizzle = s;
      if (box_bytes(m) > kMaxBoxBytes || (tiled ? m.box[0] * eb : m.channels_per_pixel * eb) <= uint32_t(span)) return "";
      return "map.swizzle-span";
    }
    case 10:  // NaN fill only for float types
      if (is_float_type(m.data_type)) {
        m.data_type = static_cast<DataType>(irand(0, 5));
        int neb = elem_bytes(m.data_type);
        if (neb != eb) return "";  // keep every byte rule unchanged
      }
      m.oob_fill = OobFill::nan_request_zero_fma;
      return "map.oob-nan-type";
    case 11: {  // packed types: refused on compute capability 9.0 (H17)
      if (!tiled) return "";
      TensorMap p;
      p.encode = Encode::tiled;
      p.data_type = static_cast<DataType>(irand(13, 15));
      p.rank = irand(1, 3);
      p.dims = {128 * urand(1, 64), urand(1, 64), urand(1, 64), 1, 1};
      const uint64_t row = p.data_type == DataType::u6_align16b ? p.dims[0] / 128 * 96 : p.dims[0] / 2;
      p.strides = {round_up(row, 32), round_up(row, 32) * p.dims[1], 0, 0};
      p.box = {128, uint32_t(irand(1, 8)), uint32_t(irand(1, 8)), 1, 1};
      p.global_address = base_address + 32 * urand(0, 8);
      p.swizzle = chance(0.5) ? Swizzle::none : Swizzle::b128;
      m = p;
      return "map.packed-type-target";
    }
    case 12: {  // 128B_ATOM_* swizzles: refused on compute capability 9.0 (H17)
      if (il) return "";
      int inner = tiled ? int(m.box[0]) * eb : int(m.channels_per_pixel) * eb;
      if (inner > 128) return "";
      m.swizzle = static_cast<Swizzle>(irand(4, 6));
      return "map.atom-swizzle-target";
    }
    case 13: {  // H17: at most 233,472 bytes per instruction
      if (tiled) {
        if (il) return "";
        for (int guard = 0; box_bytes(m) <= kMaxBoxBytes && guard < 64; ++guard) {
          if (m.rank < 2) return "";
          int i = irand(1, m.rank - 1);
          m.box[i] = std::min<uint32_t>(256, m.box[i] * 2 + 1);
          m.element_strides[i] = 1;
        }
        if (box_bytes(m) <= kMaxBoxBytes) return "";
        return "map.box-bytes-limit";
      }
      m.pixels_per_column = 1024;
      if (box_bytes(m) <= kMaxBoxBytes) {
        m.channels_per_pixel = 256;
        m.swizzle = Swizzle::none;
      }
      if (box_bytes(m) <= kMaxBoxBytes) return "";
      return "map.box-bytes-limit";
    }
    case 14: {  // im2col corners within the 16-bit budget (§1.4)
      if (tiled) return "";
      const int lim = m.rank == 3 ? 32768 : (m.rank == 4 ? 128 : 16);
      int s = irand(0, m.rank - 3);
      if (chance(0.5)) m.pixel_box_lower[s] = chance(0.5) ? -lim - irand(1, 100) : lim + irand(0, 100);
      else m.pixel_box_upper[s] = chance(0.5) ? -lim - irand(1, 100) : lim + irand(0, 100);
      if (int64_t(m.dims[s + 1]) - 1 + m.pixel_box_upper[s] < m.pixel_box_lower[s]) return "";
      return "map.im2col-corner-range";
    }
    case 15: {  // im2col box must be non-empty (H17)
      if (tiled) return "";
      const int lim = m.rank == 3 ? 32768 : (m.rank == 4 ? 128 : 16);
      int s = irand(0, m.rank - 3);
      int64_t X = int64_t(std::min<uint64_t>(m.dims[s + 1], 1000));
      m.dims[s + 1] = uint64_t(X);
      // lower > X - 1 + upper within the corner ranges
      int hi = irand(-lim, lim - 1);
      int64_t need = X - 1 + hi + 1;
      if (need > lim - 1) return "";
      int lo = int(std::max<int64_t>(need, -lim) + irand(0, 2));
      if (lo > lim - 1) return "";
      m.pixel_box_lower[s] = lo;
      m.pixel_box_upper[s] = hi;
      return "map.im2col-box-empty";
    }
    case 16:  // channelsPerPixel in [1, 256]
      if (tiled) return "";
      if (chance(0.5)) m.channels_per_pixel = 0;
      else {
        m.channels_per_pixel = uint32_t(round_up(257 * eb, 16) / eb + 16 * irand(0, 4));
        m.swizzle = Swizzle::none;
        m.pixels_per_column = 1;
      }
      return "map.im2col-channels";
    case 17:  // pixelsPerColumn in [1, 1024]
      if (tiled) return "";
      if (chance(0.5)) m.pixels_per_column = 0;
      else {
        m.pixels_per_column = irand(1025, 4096);
        m.channels_per_pixel = 16 / eb;
        m.swizzle = Swizzle::none;
        if (box_bytes(m) > kMaxBoxBytes) return "";
      }
      return "map.im2col-pixels";
    case 18: {  // im2col: channels_per_pixel × element size a multiple of 16 bytes (issue 14)
      if (tiled) return "";
      const int max_bytes = m.swizzle == Swizzle::none ? 256 * eb : span_of(m.swizzle);
      uint32_t c;
      do c = uint32_t(irand(1, max_bytes / eb)); while ((c * eb) % 16 == 0);
      m.channels_per_pixel = c;
      if (box_bytes(m) > kMaxBoxBytes) return "";
      return "map.im2col-channel-bytes";
    }
  }
  return "";
}

}  // namespace tmakit::gpu_tools::verdicts
