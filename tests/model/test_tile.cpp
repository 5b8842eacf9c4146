// Tiled mode (§2.1-§2.3, §3, H2-H6, H16): the worked examples of §2.8 and §3.5,
// random loads / stores / reductions against a naive per-element reference
// written here, and properties of the walk.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/model/memory.hpp"
#include "tmakit/model/reduce.hpp"
#include "tmakit/model/tile.hpp"

namespace {

using tmakit::DiagnosticError;
using tmakit::model::GlobalMemory;
using tmakit::model::tile_load;
using tmakit::model::tile_reduce;
using tmakit::model::tile_store;
using tmakit::spec::RedOp;
using namespace tmakit::tensor_map;

using Coords = std::vector<int32_t>;

// ---- the naive reference ----------------------------------------------------

int ebytes(DataType t) {
  switch (t) {
    case DataType::uint8: return 1;
    case DataType::uint16: case DataType::float16: case DataType::bfloat16: return 2;
    case DataType::uint64: case DataType::int64: case DataType::float64: return 8;
    default: return 4;
  }
}

// §3.1 and §3.4, written per line l = a >> 7 and granule.
uint32_t ref_swizzle(Swizzle s, uint32_t a) {
  const uint32_t l = a >> 7;
  auto chunk16 = [&](uint32_t m) { return (a & ~0x70u) | ((((a >> 4) & 7) ^ (l % m)) << 4); };
  switch (s) {
    case Swizzle::none: return a;
    case Swizzle::b32: return chunk16(2);
    case Swizzle::b64: return chunk16(4);
    case Swizzle::b128: return chunk16(8);
    case Swizzle::b128_atom_32b: return (a & ~0x60u) | ((((a >> 5) & 3) ^ (l & 3)) << 5);
    case Swizzle::b128_atom_32b_flip_8b:
      return ((a & ~0x60u) | ((((a >> 5) & 3) ^ (l & 3)) << 5)) ^ ((l & 1) << 3);
    case Swizzle::b128_atom_64b: return (a & ~0x40u) | ((((a >> 6) & 1) ^ (l & 1)) << 6);
  }
  return a;
}

uint32_t ref_span(Swizzle s) {
  return s == Swizzle::none ? 0 : s == Swizzle::b32 ? 32 : s == Swizzle::b64 ? 64 : 128;
}

// One box element: tile index k, tensor coordinate g, and where it lives.
struct Elem {
  uint32_t k[5];
  int64_t g[5];
  bool in, outer_in;
  uint64_t addr;   // global byte address (meaningful when in, or outer_in with g0 >= 0)
  uint32_t smem;   // unswizzled shared offset of its first byte
  uint64_t row;
};

struct Box {
  int eb;
  uint32_t E[5]{1, 1, 1, 1, 1}, N[5]{1, 1, 1, 1, 1};
  uint32_t pitch;
  std::vector<Elem> elems;  // k0 fastest
};

Box walk(const TensorMap& m, const Coords& c, uint32_t off) {
  Box b;
  b.eb = ebytes(m.data_type);
  for (int i = 0; i < m.rank; ++i) {
    b.E[i] = (i == 0 && m.interleave == Interleave::none) ? 1 : m.element_strides[i];  // H16
    b.N[i] = (m.box[i] + b.E[i] - 1) / b.E[i];
  }
  const uint32_t row_bytes = b.N[0] * b.eb;
  b.pitch = std::max(row_bytes, ref_span(m.swizzle));  // H2
  uint64_t total = 1;
  for (int i = 0; i < m.rank; ++i) total *= b.N[i];
  for (uint64_t L = 0; L < total; ++L) {
    Elem e{};
    uint64_t rest = L;
    for (int i = 0; i < m.rank; ++i) {
      e.k[i] = uint32_t(rest % b.N[i]);
      rest /= b.N[i];
    }
    e.in = e.outer_in = true;
    e.addr = m.global_address;
    for (int i = 0; i < m.rank; ++i) {
      e.g[i] = c[i] + int64_t(e.k[i]) * b.E[i];
      const bool ok = e.g[i] >= 0 && e.g[i] < int64_t(m.dims[i]);
      e.in = e.in && ok;
      if (i > 0) e.outer_in = e.outer_in && ok;
      e.addr += uint64_t(e.g[i]) * (i == 0 ? uint64_t(b.eb) : m.strides[i - 1]);
    }
    e.row = L / b.N[0];
    e.smem = uint32_t(off + e.row * b.pitch + e.k[0] * b.eb);
    b.elems.push_back(e);
  }
  return b;
}

uint32_t ref_tf32(uint32_t v) {
  if ((v & 0x7FFFFFFF) > 0x7F800000) return 0x7FFFE000;  // H3
  if ((v & 0x7FFFFFFF) == 0x7F800000) return v;
  const uint32_t low = v & 0x1FFF;
  uint32_t keep = v >> 13;
  if (low > 0x1000 || (low == 0x1000 && (keep & 1))) ++keep;
  return keep << 13;
}

void ref_load(const TensorMap& m, const Coords& c, const GlobalMemory& g, std::vector<uint8_t>& smem, uint32_t off) {
  const Box b = walk(m, c, off);
  const bool tf32 = m.data_type == DataType::tfloat32 || m.data_type == DataType::tfloat32_ftz;
  for (const Elem& e : b.elems) {
    uint8_t v[8];
    if (e.in) {
      const uint8_t* p = g.find(e.addr, b.eb);
      ASSERT_NE(p, nullptr);
      std::memcpy(v, p, b.eb);
      if (tf32) {
        uint32_t x;
        std::memcpy(&x, v, 4);
        x = ref_tf32(x);
        std::memcpy(v, &x, 4);
      }
    } else {
      for (int i = 0; i < b.eb; ++i)  // H4: 0x7FF7 repeated, little-endian
        v[i] = m.oob_fill == OobFill::zero ? 0 : b.eb == 1 ? 0xF7 : (i % 2 ? 0x7F : 0xF7);
    }
    for (int i = 0; i < b.eb; ++i) smem.at(ref_swizzle(m.swizzle, e.smem + i)) = v[i];
  }
}

// Elements a store or reduction writes: in-bound ones, and (H6) those past
// dims[0] whose bytes share a 16-byte chunk with the row's last in-bound element.
std::vector<Elem> written_elements(const TensorMap& m, const Box& b) {
  std::vector<Elem> out;
  for (size_t i = 0; i < b.elems.size(); i += b.N[0]) {
    const Elem* last = nullptr;
    for (size_t k = 0; k < b.N[0]; ++k)
      if (b.elems[i + k].in) last = &b.elems[i + k];
    if (!last) continue;
    const uint64_t last_chunk = (last->addr + b.eb - 1) / 16;
    for (size_t k = 0; k < b.N[0]; ++k) {
      const Elem& e = b.elems[i + k];
      if (e.in || (e.outer_in && e.g[0] >= int64_t(m.dims[0]) && e.addr / 16 == last_chunk)) out.push_back(e);
    }
  }
  return out;
}

void ref_store(const TensorMap& m, const Coords& c, const std::vector<uint8_t>& smem, uint32_t off, GlobalMemory& g) {
  const Box b = walk(m, c, off);
  for (const Elem& e : written_elements(m, b)) {
    uint8_t* p = g.find(e.addr, b.eb);
    ASSERT_NE(p, nullptr);
    for (int i = 0; i < b.eb; ++i) p[i] = smem.at(ref_swizzle(m.swizzle, e.smem + i));
  }
}

void ref_reduce(const TensorMap& m, const Coords& c, RedOp op, const std::vector<uint8_t>& smem, uint32_t off,
                GlobalMemory& g) {
  const Box b = walk(m, c, off);
  const auto type = tmakit::model::red_type_for_map(m.data_type);
  for (const Elem& e : written_elements(m, b)) {
    uint8_t src[8];
    for (int i = 0; i < b.eb; ++i) src[i] = smem.at(ref_swizzle(m.swizzle, e.smem + i));
    uint8_t* p = g.find(e.addr, b.eb);
    ASSERT_NE(p, nullptr);
    tmakit::model::reduce_element(op, type, p, src);
  }
}

// ---- helpers ------------------------------------------------------------------

void fill_random(std::vector<uint8_t>& v, std::mt19937& rng) {
  for (auto& x : v) x = uint8_t(rng());
}

template <class T>
T get(const std::vector<uint8_t>& v, size_t off) {
  T x;
  std::memcpy(&x, v.data() + off, sizeof x);
  return x;
}

TensorMap map2d(DataType t, uint64_t d0, uint64_t d1, uint64_t stride1, uint32_t b0, uint32_t b1) {
  TensorMap m;
  m.data_type = t;
  m.rank = 2;
  m.dims = {d0, d1};
  m.strides = {stride1};
  m.box = {b0, b1};
  return m;
}

// Value of tensor element (x, y) in the worked examples.
uint16_t val(int64_t x, int64_t y) { return uint16_t(y * 1000 + x); }

void fill_u16(GlobalMemory& g, const TensorMap& m) {
  uint8_t* p = g.find(m.global_address, m.strides[0] * m.dims[1]);
  for (uint64_t y = 0; y < m.dims[1]; ++y)
    for (uint64_t x = 0; x < m.dims[0]; ++x) {
      const uint16_t v = val(int64_t(x), int64_t(y));
      std::memcpy(p + y * m.strides[0] + 2 * x, &v, 2);
    }
}

// ---- worked examples ------------------------------------------------------------

// §2.8 A: UINT16, G = {256, 64}, S1 = 512, B = {32, 8}, c = (-8, 60).
TEST(TileWorked, A_OutOfBoundsLoad) {
  GlobalMemory g;
  TensorMap m = map2d(DataType::uint16, 256, 64, 512, 32, 8);
  m.global_address = g.allocate("t", 512 * 64);
  fill_u16(g, m);
  std::vector<uint8_t> smem(4096, 0xAA);
  const uint32_t D = 1024;
  tile_load(m, Coords{-8, 60}, g, smem, D);
  for (uint32_t k1 = 0; k1 < 8; ++k1)
    for (uint32_t k0 = 0; k0 < 32; ++k0) {
      const bool in = k0 >= 8 && k1 <= 3;
      EXPECT_EQ(get<uint16_t>(smem, D + 64 * k1 + 2 * k0), in ? val(int64_t(k0) - 8, 60 + k1) : 0)
          << k0 << "," << k1;
    }
  for (uint32_t i = 0; i < smem.size(); ++i)
    if (i < D || i >= D + 512) {
      ASSERT_EQ(smem[i], 0xAA) << i;
    }
}

// §2.8 B: same map with E = {1, 3}: rows from y = 60, 63, 66, dense pitch 64.
TEST(TileWorked, B_TraversalStride) {
  GlobalMemory g;
  TensorMap m = map2d(DataType::uint16, 256, 64, 512, 32, 8);
  m.element_strides = {1, 3, 1, 1, 1};
  m.global_address = g.allocate("t", 512 * 64);
  fill_u16(g, m);
  std::vector<uint8_t> smem(4096, 0xAA);
  const uint32_t D = 1024;
  tile_load(m, Coords{-8, 60}, g, smem, D);
  for (uint32_t k1 = 0; k1 < 3; ++k1)
    for (uint32_t k0 = 0; k0 < 32; ++k0) {
      const int64_t y = 60 + 3 * k1;
      const bool in = k0 >= 8 && y < 64;
      EXPECT_EQ(get<uint16_t>(smem, D + 64 * k1 + 2 * k0), in ? val(int64_t(k0) - 8, y) : 0);
    }
  for (uint32_t i = D + 192; i < smem.size(); ++i) ASSERT_EQ(smem[i], 0xAA) << i;
}

// §2.8 C: 64B swizzle, FLOAT16 box {32, 8}, D % 512 == 0.
TEST(TileWorked, C_Swizzle64) {
  GlobalMemory g;
  TensorMap m = map2d(DataType::float16, 32, 8, 64, 32, 8);
  m.swizzle = Swizzle::b64;
  m.global_address = g.allocate("t", 64 * 8);
  fill_u16(g, m);
  std::vector<uint8_t> smem(2048, 0xAA);
  const uint32_t D = 512;
  tile_load(m, Coords{0, 0}, g, smem, D);
  for (uint32_t r = 0; r < 8; ++r)
    for (uint32_t x = 0; x < 32; ++x) {
      const uint32_t j = x / 8, b = (2 * x) % 16;
      EXPECT_EQ(get<uint16_t>(smem, D + 64 * r + ((j ^ ((r >> 1) & 3)) << 4) + b), val(x, r));
    }
}

// §3.5: 128B, bf16, box {64, 8}, D 1024-aligned and D ≡ 128 (mod 1024).
TEST(TileWorked, Swizzle128Example) {
  GlobalMemory g;
  TensorMap m = map2d(DataType::bfloat16, 64, 8, 128, 64, 8);
  m.swizzle = Swizzle::b128;
  m.global_address = g.allocate("t", 128 * 8);
  fill_u16(g, m);
  for (uint32_t D : {1024u, 1024u + 128u}) {
    std::vector<uint8_t> smem(4096, 0xAA);
    tile_load(m, Coords{0, 0}, g, smem, D);
    for (uint32_t y = 0; y < 8; ++y)
      for (uint32_t x = 0; x < 64; ++x) {
        const uint32_t j = x >> 3, line = D == 1024 ? y : (y + 1) & 7;
        EXPECT_EQ(get<uint16_t>(smem, D + y * 128 + ((j ^ line) << 4) + (2 * x & 15)), val(x, y)) << D;
      }
  }
}

// H2: rows narrower than the span occupy a full span; padding bytes untouched.
TEST(TileWorked, NarrowRowsTakeAFullSpan) {
  GlobalMemory g;
  TensorMap m = map2d(DataType::float16, 32, 8, 64, 32, 8);  // 64-byte rows
  m.swizzle = Swizzle::b128;
  m.global_address = g.allocate("t", 64 * 8);
  fill_u16(g, m);
  std::vector<uint8_t> smem(4096, 0xAA);
  const uint32_t D = 2048;
  tile_load(m, Coords{0, 0}, g, smem, D);
  std::vector<bool> data(smem.size());
  for (uint32_t y = 0; y < 8; ++y)
    for (uint32_t x = 0; x < 32; ++x) {
      const uint32_t at = D + 128 * y + (((x >> 3) ^ y) << 4) + (2 * x & 15);
      EXPECT_EQ(get<uint16_t>(smem, at), val(x, y));
      data[at] = data[at + 1] = true;
    }
  for (uint32_t i = 0; i < smem.size(); ++i)
    if (!data[i]) {
      ASSERT_EQ(smem[i], 0xAA) << i;
    }
}

// §2.2 / H6: int8, extent 466, box 128 at x = 384, row pitch 512: the store
// writes 14 bytes per row past the extent (up to column 479); 470 -> 10; 464 -> 0.
TEST(TileWorked, StoreWritesWholeChunks) {
  for (uint64_t extent : {466u, 470u, 464u}) {
    GlobalMemory g;
    TensorMap m = map2d(DataType::uint8, extent, 4, 512, 128, 4);
    m.global_address = g.allocate("t", 512 * 4);
    std::vector<uint8_t>& gb = g.allocation("t")->bytes;
    std::fill(gb.begin(), gb.end(), 0xEE);
    std::vector<uint8_t> smem(512);
    for (size_t i = 0; i < smem.size(); ++i) smem[i] = uint8_t(i % 127);
    tile_store(m, Coords{384, 0}, smem, 0, g);
    const uint64_t last_written = (extent + 15) / 16 * 16;  // exclusive column
    for (uint64_t y = 0; y < 4; ++y)
      for (uint64_t x = 0; x < 512; ++x) {
        const bool w = x >= 384 && x < last_written;
        ASSERT_EQ(gb[y * 512 + x], w ? smem[y * 128 + (x - 384)] : 0xEE) << extent << " " << x << "," << y;
      }
  }
}

// H6 holds for reductions: u32 extent 5 -> elements 5..7 share the chunk.
TEST(TileWorked, ReduceWritesWholeChunks) {
  GlobalMemory g;
  TensorMap m = map2d(DataType::uint32, 5, 2, 64, 16, 2);
  m.global_address = g.allocate("t", 128);
  std::vector<uint8_t>& gb = g.allocation("t")->bytes;
  for (uint32_t i = 0; i < 32; ++i) std::memcpy(&gb[4 * i], &i, 4);
  std::vector<uint8_t> smem(128);
  for (uint32_t i = 0; i < 32; ++i) {
    const uint32_t v = 1000 * (i + 1);
    std::memcpy(&smem[4 * i], &v, 4);
  }
  tile_reduce(m, Coords{0, 0}, RedOp::add, smem, 0, g);
  for (uint32_t y = 0; y < 2; ++y)
    for (uint32_t x = 0; x < 16; ++x) {
      const uint32_t i = y * 16 + x;
      const uint32_t want = x < 8 ? i + 1000 * (y * 16 + x + 1) : i;
      EXPECT_EQ(get<uint32_t>(gb, 4 * i), want) << x << "," << y;
    }
}

TEST(TileWorked, OobNanFillPatterns) {
  struct Case { DataType t; uint64_t pattern; };
  for (Case cs : {Case{DataType::float16, 0x7FF7}, Case{DataType::bfloat16, 0x7FF7},
                  Case{DataType::float32, 0x7FF77FF7}, Case{DataType::tfloat32, 0x7FF77FF7},
                  Case{DataType::float64, 0x7FF77FF77FF77FF7ull}}) {
    const int eb = ebytes(cs.t);
    GlobalMemory g;
    TensorMap m = map2d(cs.t, 2, 1, 1024, 32 / eb, 2);
    m.oob_fill = OobFill::nan_request_zero_fma;
    m.global_address = g.allocate("t", 1024);
    std::vector<uint8_t>& gb = g.allocation("t")->bytes;
    std::fill(gb.begin(), gb.end(), 0);
    gb[0] = 1;  // element 0 = 1 (tiny, rounding keeps tf32 at 0)
    std::vector<uint8_t> smem(1024, 0xAA);
    tile_load(m, Coords{0, 0}, g, smem, 0);
    for (int k = 0; k < 2 * (32 / eb); ++k) {
      uint64_t v = 0;
      std::memcpy(&v, &smem[k * eb], eb);
      const bool in = k < 2;
      const uint64_t in_value = (k == 0 && cs.t != DataType::tfloat32) ? 1 : 0;
      EXPECT_EQ(v, in ? in_value : cs.pattern) << int(cs.t) << " element " << k;
    }
  }
}

TEST(TileWorked, Tf32RoundsOnLoadFtzCopies) {
  const uint32_t in[8] = {0x3F801001, 0x7FC00000, 0x00003000, 0x7F800000, 0xFFC00001, 0x00000001, 0x3F803000, 0};
  for (DataType t : {DataType::tfloat32, DataType::tfloat32_ftz, DataType::float32_ftz, DataType::float32}) {
    GlobalMemory g;
    TensorMap m = map2d(t, 8, 1, 32, 8, 1);
    m.global_address = g.allocate("t", 32);
    std::memcpy(g.allocation("t")->bytes.data(), in, 32);
    std::vector<uint8_t> smem(128);
    tile_load(m, Coords{0, 0}, g, smem, 0);
    const bool tf32 = t == DataType::tfloat32 || t == DataType::tfloat32_ftz;
    for (int i = 0; i < 8; ++i) EXPECT_EQ(get<uint32_t>(smem, 4 * i), tf32 ? ref_tf32(in[i]) : in[i]) << int(t) << " " << i;
    // Stores never round (H3).
    tile_store(m, Coords{0, 0}, smem, 0, g);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(get<uint32_t>(g.allocation("t")->bytes, 4 * i), get<uint32_t>(smem, 4 * i));
  }
}

// ---- faults -----------------------------------------------------------------------

template <class F>
std::string fault_rule(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const DiagnosticError& e) {
    if (message) *message = e.diagnostic().message;
    return e.diagnostic().rule;
  }
  return "(no fault)";
}

TEST(TileFaults, InBoundElementOutsideAllocation) {
  GlobalMemory g;
  TensorMap m = map2d(DataType::uint16, 64, 64, 128, 64, 8);
  m.global_address = g.allocate("t", 128 * 32);  // only half the rows exist
  std::vector<uint8_t> smem(2048);
  EXPECT_NO_THROW(tile_load(m, Coords{0, 24}, g, smem, 0));
  std::string msg;
  EXPECT_EQ(fault_rule([&] { tile_load(m, Coords{0, 28}, g, smem, 0); }, &msg), "model.global-fault");
  // The first missing element is (0, 32), at global_address + 32 * 128.
  char addr[32];
  std::snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)(m.global_address + 32 * 128));
  EXPECT_NE(msg.find(addr), std::string::npos) << msg;
  EXPECT_NE(msg.find("(0, 32)"), std::string::npos) << msg;
  EXPECT_EQ(fault_rule([&] { tile_store(m, Coords{0, 28}, smem, 0, g); }), "model.global-fault");
  TensorMap u32 = map2d(DataType::uint32, 32, 64, 128, 32, 8);
  u32.global_address = m.global_address;
  EXPECT_EQ(fault_rule([&] { tile_reduce(u32, Coords{0, 28}, RedOp::max, smem, 0, g); }), "model.global-fault");
}

TEST(TileFaults, OutOfBoundRowsNeedNoMemory) {
  GlobalMemory g;
  TensorMap m = map2d(DataType::uint16, 64, 32, 128, 64, 8);
  m.global_address = g.allocate("t", 128 * 32);  // exactly the tensor
  std::vector<uint8_t> smem(2048, 0x55);
  EXPECT_NO_THROW(tile_load(m, Coords{0, 28}, g, smem, 0));
  EXPECT_EQ(get<uint16_t>(smem, 4 * 128), 0);  // row 4 = y 32: filled
  EXPECT_NO_THROW(tile_store(m, Coords{0, 28}, smem, 0, g));
  EXPECT_NO_THROW(tile_load(m, Coords{64, 0}, g, smem, 0));  // fully OOB box
}

TEST(TileFaults, BadArguments) {
  GlobalMemory g;
  TensorMap m = map2d(DataType::uint16, 64, 32, 128, 64, 8);
  m.global_address = g.allocate("t", 128 * 32);
  std::vector<uint8_t> smem(1024);
  EXPECT_EQ(fault_rule([&] { tile_load(m, Coords{0, 0}, g, smem, 128); }), "model.shared-range");
  EXPECT_EQ(fault_rule([&] { tile_store(m, Coords{0, 0}, std::span<const uint8_t>(smem).first(1000), 0, g); }),
            "model.shared-range");
  EXPECT_EQ(fault_rule([&] { tile_load(m, Coords{0}, g, smem, 0); }), "model.coord-count");
  TensorMap u8 = m;
  u8.data_type = DataType::uint8;
  EXPECT_EQ(fault_rule([&] { tile_reduce(u8, Coords{0, 0}, RedOp::add, smem, 0, g); }), "model.reduce-type");
  TensorMap packed = m;
  packed.data_type = DataType::u4_align8b;
  packed.interleave = Interleave::b16;  // packed maps are walked (packed.cpp), interleaved ones are not
  EXPECT_EQ(fault_rule([&] { tile_load(packed, Coords{0, 0}, g, smem, 0); }), "model.map-unsupported");
  TensorMap bad_box = m;
  bad_box.box[1] = 0;
  EXPECT_EQ(fault_rule([&] { tile_load(bad_box, Coords{0, 0}, g, smem, 0); }), "model.map-unsupported");
  TensorMap im2col = m;
  im2col.encode = Encode::im2col;
  EXPECT_EQ(fault_rule([&] { tile_load(im2col, Coords{0, 0}, g, smem, 0); }), "model.map-unsupported");
}

// ---- random cases against the reference ------------------------------------------

struct Case {
  TensorMap map;
  Coords coords;
  GlobalMemory g;
  std::vector<uint8_t> smem;
  uint32_t off;
};

const DataType kTypes[] = {DataType::uint8,   DataType::uint16,   DataType::uint32,      DataType::int32,
                           DataType::uint64,  DataType::int64,    DataType::float16,     DataType::float32,
                           DataType::float64, DataType::bfloat16, DataType::float32_ftz, DataType::tfloat32,
                           DataType::tfloat32_ftz};

int rnd(std::mt19937& rng, int lo, int hi) { return lo + int(rng() % uint32_t(hi - lo + 1)); }

// Random tiled map and box: ranks 1-5, every plain type, padded strides, element
// strides, swizzles, both fills, negative / past-the-end coordinates with
// c0 × elemBytes a multiple of 16 (§2.1 item 6); `store` keeps coordinates >= 0 (H14).
Case random_case(std::mt19937& rng, bool store, bool reducible) {
  Case cs;
  TensorMap& m = cs.map;
  do m.data_type = kTypes[rng() % std::size(kTypes)];
  while (reducible && ebytes(m.data_type) < 4);
  const int eb = ebytes(m.data_type);
  m.rank = rnd(rng, 1, 5);
  // Interleaved maps walk whole slices (Q26): tests/model/test_interleave.cpp has their
  // reference. The draw that chose them stays, so the other random cases stay the same.
  if (m.rank >= 3) (void)(rng() % 6);
  const bool interleave = false;
  const Swizzle swz[] = {Swizzle::none, Swizzle::b32, Swizzle::b64, Swizzle::b128,
                         Swizzle::b128_atom_32b, Swizzle::b128_atom_32b_flip_8b, Swizzle::b128_atom_64b};
  m.swizzle = swz[rng() % 4 == 0 ? 0 : rng() % 10 == 0 ? rnd(rng, 4, 6) : rnd(rng, 1, 3)];
  if (interleave) {
    m.interleave = rng() % 2 ? Interleave::b16 : Interleave::b32;
    if (m.interleave == Interleave::b32) m.swizzle = Swizzle::b32;
    // Dimension 0 is the channel index inside one 16/32-byte slice (§2.4).
    m.dims[0] = (m.interleave == Interleave::b16 ? 16 : 32) / eb;
    m.box[0] = uint32_t(rnd(rng, 1, int(m.dims[0])));
    m.element_strides[0] = uint32_t(rnd(rng, 1, 3));
  } else {
    const uint32_t span = m.swizzle == Swizzle::none ? 256 : ref_span(m.swizzle);
    m.box[0] = uint32_t(16 * rnd(rng, 1, int(span / 16))) / eb;
    m.dims[0] = uint64_t(rnd(rng, 1, int(3 * m.box[0])));
    m.element_strides[0] = uint32_t(rnd(rng, 1, 3));  // ignored (H16)
  }
  for (int i = 1; i < m.rank; ++i) {
    m.box[i] = uint32_t(rnd(rng, 1, 6));
    m.element_strides[i] = uint32_t(rng() % 8 == 0 ? rnd(rng, 4, 8) : rnd(rng, 1, 3));
    m.dims[i] = uint64_t(rnd(rng, 1, 9));
  }
  // Padded, non-overlapping strides (multiples of 16, §1.3).
  uint64_t extent = (m.dims[0] * eb + 15) / 16 * 16;
  for (int i = 1; i < m.rank; ++i) {
    m.strides[i - 1] = extent + 16 * uint64_t(rnd(rng, 0, 2));
    extent = m.strides[i - 1] * m.dims[i];
  }
  m.oob_fill = rng() % 2 ? OobFill::zero : OobFill::nan_request_zero_fma;

  const int q = 16 / eb;  // c0 step keeping c0 × elemBytes a multiple of 16
  cs.coords.resize(m.rank);
  cs.coords[0] = int32_t(q * rnd(rng, store ? 0 : -3, int(m.dims[0]) / q + 2));
  if (interleave) cs.coords[0] = rnd(rng, store ? 0 : -2, int(m.dims[0]) + 1);
  for (int i = 1; i < m.rank; ++i)
    cs.coords[i] = rnd(rng, store ? 0 : -int(m.box[i]) - 2, int(m.dims[i]) + 1);

  // Slack after the tensor so H6 chunks past its end exist in the allocation.
  m.global_address = cs.g.allocate("other", 4096);
  m.global_address = cs.g.allocate("t", extent + 64);
  for (auto& a : const_cast<std::vector<tmakit::model::Allocation>&>(cs.g.allocations())) fill_random(a.bytes, rng);

  uint64_t rows = 1;
  uint32_t n0 = (m.box[0] + (interleave ? m.element_strides[0] : 1) - 1) / (interleave ? m.element_strides[0] : 1);
  for (int i = 1; i < m.rank; ++i) rows *= (m.box[i] + m.element_strides[i] - 1) / m.element_strides[i];
  const uint32_t pitch = std::max<uint32_t>(n0 * eb, ref_span(m.swizzle));
  cs.off = 128 * uint32_t(rnd(rng, 0, 9));
  cs.smem.resize(cs.off + rows * pitch + 1024);
  fill_random(cs.smem, rng);
  return cs;
}

std::string describe(const Case& cs) {
  const TensorMap& m = cs.map;
  std::string s = "type " + std::to_string(int(m.data_type)) + " rank " + std::to_string(m.rank) + " swizzle " +
                  std::to_string(int(m.swizzle)) + " interleave " + std::to_string(int(m.interleave)) + " off " +
                  std::to_string(cs.off) + " fill " + std::to_string(int(m.oob_fill));
  for (int i = 0; i < m.rank; ++i)
    s += " | d" + std::to_string(i) + " dim " + std::to_string(m.dims[i]) + " box " + std::to_string(m.box[i]) +
         " es " + std::to_string(m.element_strides[i]) + " c " + std::to_string(cs.coords[i]);
  return s;
}

TEST(TileRandom, LoadsMatchReference) {
  std::mt19937 rng(101);
  for (int iter = 0; iter < 3000; ++iter) {
    Case cs = random_case(rng, false, false);
    std::vector<uint8_t> want = cs.smem;
    ref_load(cs.map, cs.coords, cs.g, want, cs.off);
    tile_load(cs.map, cs.coords, cs.g, cs.smem, cs.off);
    ASSERT_EQ(cs.smem, want) << describe(cs);
  }
}

TEST(TileRandom, StoresMatchReference) {
  std::mt19937 rng(102);
  for (int iter = 0; iter < 3000; ++iter) {
    Case cs = random_case(rng, true, false);
    GlobalMemory want = cs.g;
    ref_store(cs.map, cs.coords, cs.smem, cs.off, want);
    tile_store(cs.map, cs.coords, cs.smem, cs.off, cs.g);
    for (size_t a = 0; a < want.allocations().size(); ++a)
      ASSERT_EQ(cs.g.allocations()[a].bytes, want.allocations()[a].bytes) << describe(cs);
  }
}

TEST(TileRandom, ReductionsMatchReference) {
  std::mt19937 rng(103);
  const RedOp ops[] = {RedOp::add, RedOp::min, RedOp::max, RedOp::inc, RedOp::dec, RedOp::and_, RedOp::or_, RedOp::xor_};
  for (int iter = 0; iter < 2000; ++iter) {
    Case cs = random_case(rng, true, true);
    const RedOp op = ops[rng() % 8];
    GlobalMemory want = cs.g;
    ref_reduce(cs.map, cs.coords, op, cs.smem, cs.off, want);
    tile_reduce(cs.map, cs.coords, op, cs.smem, cs.off, cs.g);
    for (size_t a = 0; a < want.allocations().size(); ++a)
      ASSERT_EQ(cs.g.allocations()[a].bytes, want.allocations()[a].bytes) << describe(cs) << " op " << int(op);
  }
}

// The plain reference walk (model::reference, what the fast walk is kept equal to) against the
// naive walk of this file, on the same draws.
TEST(TileRandom, ReferenceWalkMatchesNaiveWalk) {
  namespace plain = tmakit::model::reference;
  std::mt19937 rng(101);
  for (int iter = 0; iter < 2000; ++iter) {
    Case cs = random_case(rng, false, false);
    std::vector<uint8_t> want = cs.smem;
    ref_load(cs.map, cs.coords, cs.g, want, cs.off);
    plain::tile_load(cs.map, cs.coords, cs.g, cs.smem, cs.off);
    ASSERT_EQ(cs.smem, want) << describe(cs);
  }
  const RedOp ops[] = {RedOp::add, RedOp::min, RedOp::max, RedOp::inc, RedOp::dec, RedOp::and_, RedOp::or_, RedOp::xor_};
  for (int iter = 0; iter < 2000; ++iter) {
    const bool reduce = iter % 2;
    Case cs = random_case(rng, true, reduce);
    const RedOp op = ops[rng() % 8];
    GlobalMemory want = cs.g;
    if (reduce) {
      ref_reduce(cs.map, cs.coords, op, cs.smem, cs.off, want);
      plain::tile_reduce(cs.map, cs.coords, op, cs.smem, cs.off, cs.g);
    } else {
      ref_store(cs.map, cs.coords, cs.smem, cs.off, want);
      plain::tile_store(cs.map, cs.coords, cs.smem, cs.off, cs.g);
    }
    for (size_t a = 0; a < want.allocations().size(); ++a)
      ASSERT_EQ(cs.g.allocations()[a].bytes, want.allocations()[a].bytes) << describe(cs) << " reduce " << reduce;
  }
}

// ---- properties ---------------------------------------------------------------------

// 16-byte global chunks holding a byte of an in-bound element.
std::set<uint64_t> inbound_chunks(const Case& cs) {
  std::set<uint64_t> chunks;
  const Box b = walk(cs.map, cs.coords, cs.off);
  for (const Elem& e : b.elems)
    if (e.in)
      for (int i = 0; i < b.eb; ++i) chunks.insert((e.addr + i) / 16);
  return chunks;
}

TEST(TileProperties, StoresTouchOnlyChunksOfInBoundElements) {
  std::mt19937 rng(104);
  for (int iter = 0; iter < 1000; ++iter) {
    Case cs = random_case(rng, true, false);
    const GlobalMemory before = cs.g;
    tile_store(cs.map, cs.coords, cs.smem, cs.off, cs.g);
    const std::set<uint64_t> allowed = inbound_chunks(cs);
    for (size_t a = 0; a < before.allocations().size(); ++a) {
      const auto& x = before.allocations()[a];
      const auto& y = cs.g.allocations()[a];
      for (size_t i = 0; i < x.bytes.size(); ++i)
        if (x.bytes[i] != y.bytes[i]) {
          ASSERT_TRUE(allowed.count((x.base + i) / 16)) << describe(cs) << " byte " << i;
        }
    }
  }
}

// Loading a box and storing it back leaves every in-bound byte as it was, and the
// only other bytes that can change are H6 chunk neighbours (checked above).
TEST(TileProperties, LoadThenStoreRoundTrips) {
  std::mt19937 rng(105);
  int checked = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    Case cs = random_case(rng, true, false);
    if (cs.map.data_type == DataType::tfloat32 || cs.map.data_type == DataType::tfloat32_ftz) continue;  // H3 rounds
    const GlobalMemory before = cs.g;
    tile_load(cs.map, cs.coords, cs.g, cs.smem, cs.off);
    tile_store(cs.map, cs.coords, cs.smem, cs.off, cs.g);
    const Box b = walk(cs.map, cs.coords, cs.off);
    for (const Elem& e : b.elems)
      if (e.in) {
        ASSERT_EQ(std::memcmp(before.find(e.addr, b.eb), cs.g.find(e.addr, b.eb), b.eb), 0) << describe(cs);
        ++checked;
      }
  }
  EXPECT_GT(checked, 10000);
}

// Boxes swept along dimension 0 are streams (the walk prefetches each row's
// continuation, src/model/fast/tile_walk.hpp StreamPredictor): sweeps of loads and of
// stores over tensors whose allocation ends exactly at the tensor's last byte,
// for several box widths and ranks, give what the reference gives box by box.
TEST(TileProperties, SweepsAlongDimensionZeroMatchReference) {
  std::mt19937 rng(106);
  for (int iter = 0; iter < 24; ++iter) {
    TensorMap m;
    m.data_type = iter % 3 == 0 ? DataType::uint8 : iter % 3 == 1 ? DataType::bfloat16 : DataType::float32;
    const int eb = ebytes(m.data_type);
    m.rank = 2 + iter % 3;
    m.swizzle = iter % 2 ? Swizzle::b128 : Swizzle::none;
    m.box[0] = uint32_t(16 * (1 + iter % 8)) / uint32_t(eb);
    m.dims[0] = m.box[0] * uint64_t(3 + iter % 4);
    uint64_t extent = m.dims[0] * eb;
    for (int i = 1; i < m.rank; ++i) {
      m.box[i] = uint32_t(2 + iter % 5);
      m.dims[i] = m.box[i] * 2;
      m.strides[i - 1] = extent;
      extent *= m.dims[i];
    }
    GlobalMemory g;
    m.global_address = g.allocate("t", extent);
    auto& bytes = const_cast<std::vector<uint8_t>&>(g.allocations()[0].bytes);
    fill_random(bytes, rng);
    uint64_t rows = 1;
    for (int i = 1; i < m.rank; ++i) rows *= m.box[i];
    const uint32_t pitch = std::max<uint32_t>(m.box[0] * eb, ref_span(m.swizzle));
    std::vector<uint8_t> smem(rows * pitch + 1024), want;
    Coords c(m.rank, 0);
    for (int pass = 0; pass < 2; ++pass)  // the second pass finds its streams again
      for (c[1] = 0; uint64_t(c[1]) < m.dims[1]; c[1] += int32_t(m.box[1]))
        for (c[0] = 0; uint64_t(c[0]) < m.dims[0]; c[0] += int32_t(m.box[0])) {
          fill_random(smem, rng);
          want = smem;
          ref_load(m, c, g, want, 0);
          tile_load(m, c, g, smem, 0);
          ASSERT_EQ(smem, want) << "load, iteration " << iter << " x " << c[0] << " y " << c[1];
          fill_random(smem, rng);
          GlobalMemory expect = g;
          ref_store(m, c, smem, 0, expect);
          tile_store(m, c, smem, 0, g);
          ASSERT_EQ(g.allocations()[0].bytes, expect.allocations()[0].bytes)
              << "store, iteration " << iter << " x " << c[0] << " y " << c[1];
        }
  }
}

}  // namespace
