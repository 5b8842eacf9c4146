// Host-side pieces of the hardware-vector harness: the scenario format's
// splitmix64 init rule, hex, and independent reference models of tile loads
// and stores (§2.1-§2.3, §3.1, H2-H6) used only to flag suspicious recordings.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "map_json.hpp"

namespace tmakit::gpu_tools {

// scenario-format.md `{"random": SEED}`: byte i is byte (i % 8) of splitmix64(SEED + i / 8).
inline uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
inline std::vector<uint8_t> random_bytes(uint64_t seed, size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(splitmix64(seed + i / 8) >> (8 * (i % 8)));
  return v;
}
inline std::string hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = d[p[i] >> 4];
    s[2 * i + 1] = d[p[i] & 15];
  }
  return s;
}
inline std::string hex(const std::vector<uint8_t>& v) { return hex(v.data(), v.size()); }

inline int swizzle_span_bytes(tensor_map::Swizzle s) {
  switch (s) {
    case tensor_map::Swizzle::b32: return 32;
    case tensor_map::Swizzle::b64: return 64;
    case tensor_map::Swizzle::b128: return 128;
    default: return 0;
  }
}
// §3.1: chunk bits 4..6 ^= line bits 7..9 (masked by the span).
inline uint32_t swizzle_addr(uint32_t a, tensor_map::Swizzle s) {
  int span = swizzle_span_bytes(s);
  if (!span) return a;
  uint32_t mask = span / 16 - 1;
  return a ^ (((a >> 7) & mask) << 4);
}

struct BoxGeom {
  int rank;
  uint32_t n[5];  // elements per dim: ceil(box / es), es[0] ignored (H16)
  uint32_t es[5];
  int eb;
  uint32_t pitch;  // row pitch in shared memory (H2)
  uint64_t rows;
  uint64_t bytes() const {
    uint64_t b = eb;
    for (int i = 0; i < rank; ++i) b *= n[i];
    return b;
  }
  uint64_t footprint() const { return rows * pitch; }
};
inline BoxGeom box_geom(const tensor_map::TensorMap& m) {
  BoxGeom g{};
  g.rank = m.rank;
  g.eb = elem_bytes(m.data_type);
  g.rows = 1;
  for (int i = 0; i < m.rank; ++i) {
    g.es[i] = i == 0 ? 1 : m.element_strides[i];
    g.n[i] = (m.box[i] + g.es[i] - 1) / g.es[i];
    if (i > 0) g.rows *= g.n[i];
  }
  uint32_t row = g.n[0] * g.eb;
  int span = swizzle_span_bytes(m.swizzle);
  g.pitch = span && row < uint32_t(span) ? span : row;
  return g;
}

// H3: TFLOAT32 loads round to nearest even, NaN -> 0x7FFFE000, inf kept.
inline uint32_t to_tf32(uint32_t b) {
  if ((b & 0x7F800000u) == 0x7F800000u) return (b & 0x007FFFFFu) ? 0x7FFFE000u : b;
  return (b + 0xFFFu + ((b >> 13) & 1u)) & 0xFFFFE000u;
}

// Calls f(k-index linear L, g[] coordinates, in_bounds) for each box element.
template <class F>
void for_each_box_element(const tensor_map::TensorMap& m, const BoxGeom& g, const int32_t* c, F f) {
  uint32_t k[5] = {0, 0, 0, 0, 0};
  uint64_t total = 1;
  for (int i = 0; i < g.rank; ++i) total *= g.n[i];
  for (uint64_t L = 0; L < total; ++L) {
    uint64_t r = L;
    for (int i = 0; i < g.rank; ++i) {
      k[i] = uint32_t(r % g.n[i]);
      r /= g.n[i];
    }
    int64_t gc[5];
    bool in = true;
    for (int i = 0; i < g.rank; ++i) {
      gc[i] = int64_t(c[i]) + int64_t(k[i]) * g.es[i];
      if (gc[i] < 0 || gc[i] >= int64_t(m.dims[i])) in = false;
    }
    f(k, gc, in);
  }
}

inline uint64_t global_offset(const tensor_map::TensorMap& m, const int64_t* gc, int eb) {
  uint64_t off = uint64_t(gc[0]) * eb;
  for (int i = 1; i < m.rank; ++i) off += uint64_t(gc[i]) * m.strides[i - 1];
  return off;
}
inline uint64_t smem_offset(const BoxGeom& g, const uint32_t* k) {
  uint64_t row = 0;
  for (int i = g.rank - 1; i >= 1; --i) row = row * g.n[i] + k[i];
  return row * g.pitch + uint64_t(k[0]) * g.eb;
}

// Tile load into `smem` (shared window bytes; dst = window offset of the box).
inline void ref_load(const tensor_map::TensorMap& m, const std::vector<uint8_t>& global, uint64_t map_offset,
                     const int32_t* c, uint32_t dst, std::vector<uint8_t>& smem) {
  BoxGeom g = box_geom(m);
  const bool tf32 = m.data_type == tensor_map::DataType::tfloat32 || m.data_type == tensor_map::DataType::tfloat32_ftz;
  const bool nan = m.oob_fill == tensor_map::OobFill::nan_request_zero_fma;
  for_each_box_element(m, g, c, [&](const uint32_t* k, const int64_t* gc, bool in) {
    uint8_t v[8] = {};
    if (in) {
      std::memcpy(v, &global[map_offset + global_offset(m, gc, g.eb)], g.eb);
      if (tf32) {
        uint32_t b;
        std::memcpy(&b, v, 4);
        b = to_tf32(b);
        std::memcpy(v, &b, 4);
      }
    } else if (nan) {
      for (int i = 0; i < g.eb; i += 2) v[i] = 0xF7, v[i + 1] = 0x7F;  // H4: 0x7FF7 repeated
    }
    uint32_t a = dst + uint32_t(smem_offset(g, k));
    for (int b = 0; b < g.eb; ++b) smem[swizzle_addr(a + b, m.swizzle)] = v[b];
  });
}

// Tile store from `smem` (src = window offset); H6: whole 16-byte chunks at the
// inner edge are written.
inline void ref_store(const tensor_map::TensorMap& m, std::vector<uint8_t>& global, uint64_t map_offset,
                      const int32_t* c, uint32_t src, const std::vector<uint8_t>& smem) {
  BoxGeom g = box_geom(m);
  const uint64_t inner_chunked = (m.dims[0] * g.eb + 15) / 16 * 16;
  for_each_box_element(m, g, c, [&](const uint32_t* k, const int64_t* gc, bool in) {
    bool outer_in = true;
    for (int i = 1; i < g.rank; ++i)
      if (gc[i] < 0 || gc[i] >= int64_t(m.dims[i])) outer_in = false;
    bool write = in || (outer_in && gc[0] >= 0 && uint64_t(gc[0]) * g.eb < inner_chunked);
    if (!write) return;
    uint32_t a = src + uint32_t(smem_offset(g, k));
    uint64_t o = map_offset + global_offset(m, gc, g.eb);
    for (int b = 0; b < g.eb; ++b) global[o + b] = smem[swizzle_addr(a + b, m.swizzle)];
  });
}

}  // namespace tmakit::gpu_tools
