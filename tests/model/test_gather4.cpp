// .tile::gather4 / .tile::scatter4 (§5): four rows back to back in shared
// memory, row k from tensor row row_k at column col, OOB rows filled on load and
// skipped on store, swizzled as a 4-row box. The expectations come from a naive
// per-element reference written here (with the §3.1 swizzle in its line/chunk form).
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <vector>

#include "tmakit/diag.hpp"
#include "tmakit/model/gather4.hpp"

namespace {

using namespace tmakit;
using namespace tmakit::tensor_map;
using model::GlobalMemory;

using Coords = std::array<int32_t, 5>;

// §3.1 in its line/chunk wording: chunk j of line l goes to j ^ (l mod m).
uint32_t ref_swizzle(Swizzle s, uint32_t a) {
  const uint32_t m = s == Swizzle::b32 ? 2 : s == Swizzle::b64 ? 4 : s == Swizzle::b128 ? 8 : 1;
  const uint32_t l = a / 128, j = (a / 16) % 8;
  return l * 128 + ((j ^ (l % m)) * 16) + a % 16;
}

struct Fixture {
  GlobalMemory g;
  TensorMap m;
  uint64_t base = 0;
  int eb = 2;
  // A rank-2 tensor of `dims0` × `dims1` elements of `eb` bytes, rows `pitch` bytes apart,
  // whose byte i is (i * 7 + 3) & 0xff, and a map with box {w, 1}.
  Fixture(DataType t, int ebytes, uint64_t dims0, uint64_t dims1, uint64_t pitch, uint32_t w,
          Swizzle s = Swizzle::none) {
    eb = ebytes;
    base = g.allocate("T", pitch * dims1);
    uint8_t* p = g.find(base, pitch * dims1);
    for (uint64_t i = 0; i < pitch * dims1; ++i) p[i] = uint8_t(i * 7 + 3);
    m.encode = Encode::tiled;
    m.data_type = t;
    m.rank = 2;
    m.global_address = base;
    m.dims = {dims0, dims1};
    m.strides = {pitch};
    m.box = {w, 1};
    m.swizzle = s;
  }
  const uint8_t* tensor() { return g.find(base, 1); }
  uint32_t pitch() const {
    const uint32_t row = m.box[0] * uint32_t(eb);
    const uint32_t span = m.swizzle == Swizzle::none ? 0 : m.swizzle == Swizzle::b32 ? 32 : m.swizzle == Swizzle::b64 ? 64 : 128;
    return std::max(row, span);  // H2
  }
  // What the load must leave in `smem` (which starts as `init`): byte b of element x of row k.
  std::vector<uint8_t> expect_load(const Coords& c, uint32_t dst, std::vector<uint8_t> smem,
                                   std::array<uint8_t, 2> fill = {0, 0}) {
    for (int k = 0; k < 4; ++k)
      for (uint32_t x = 0; x < m.box[0]; ++x)
        for (int b = 0; b < eb; ++b) {
          const int64_t col = int64_t(c[0]) + x, row = c[1 + k];
          const bool in = col >= 0 && col < int64_t(m.dims[0]) && row >= 0 && row < int64_t(m.dims[1]);
          const uint8_t v = in ? tensor()[uint64_t(row) * m.strides[0] + uint64_t(col) * eb + b] : fill[b % 2];
          smem[ref_swizzle(m.swizzle, dst + k * pitch() + x * eb + b)] = v;
        }
    return smem;
  }
};

TEST(Gather4, RowsLandBackToBackInCoordinateOrder) {
  Fixture f(DataType::uint16, 2, 64, 32, 128, 32);  // rows of 64 bytes
  std::vector<uint8_t> smem(2048, 0x55);
  const Coords c{8, 5, 0, 31, 7};
  const auto want = f.expect_load(c, 256, smem);
  model::gather4_load(f.m, c, f.g, smem, 256);
  EXPECT_EQ(smem, want);
  // Row 2 of the tile is tensor row 31 from column 8: spot-check one element by hand.
  EXPECT_EQ(smem[256 + 2 * 64 + 0], uint8_t((31 * 128 + 16) * 7 + 3));
  // Nothing outside the 4 × 64 bytes is written.
  EXPECT_EQ(smem[255], 0x55);
  EXPECT_EQ(smem[256 + 256], 0x55);
}

TEST(Gather4, OutOfBoundRowsAndColumnsAreFilled) {
  Fixture f(DataType::float16, 2, 64, 32, 128, 32);
  std::vector<uint8_t> smem(1024, 0x55);
  const Coords c{48, -1, 40, 3, 32};  // columns 48..79: the upper half is OOB; rows 0, 1, 3 are OOB
  model::gather4_load(f.m, c, f.g, smem, 0);
  EXPECT_EQ(smem, f.expect_load(c, 0, std::vector<uint8_t>(1024, 0x55)));
  for (int b = 0; b < 64; ++b) EXPECT_EQ(smem[b], 0) << "row 0 (tensor row -1) is zero";
  // OOB-NaN fill (H4: 0x7FF7 per f16 element) for the same rows.
  f.m.oob_fill = OobFill::nan_request_zero_fma;
  std::vector<uint8_t> nan(1024, 0x55);
  model::gather4_load(f.m, c, f.g, nan, 0);
  EXPECT_EQ(nan, f.expect_load(c, 0, std::vector<uint8_t>(1024, 0x55), {0xF7, 0x7F}));
  EXPECT_EQ(nan[64 + 10], 0xF7);
  EXPECT_EQ(nan[64 + 11], 0x7F);
}

TEST(Gather4, SwizzledAsAFourRowBoxByAbsoluteAddress) {
  for (Swizzle s : {Swizzle::b32, Swizzle::b64, Swizzle::b128}) {
    SCOPED_TRACE(int(s));
    const uint32_t w = s == Swizzle::b32 ? 16 : s == Swizzle::b64 ? 32 : 64;  // a full span of bf16
    Fixture f(DataType::bfloat16, 2, 256, 64, 512, w, s);
    for (uint32_t dst : {0u, 128u, 1024u + 384u}) {  // phases of the pattern (§3.1, H: absolute bits)
      std::vector<uint8_t> smem(4096, 0x55);
      const Coords c{64, 9, 63, 1, 9};
      model::gather4_load(f.m, c, f.g, smem, dst);
      EXPECT_EQ(smem, f.expect_load(c, dst, std::vector<uint8_t>(4096, 0x55))) << "dst " << dst;
    }
  }
  // Rows narrower than the span still take a full span each (H2): 64-byte rows, 128B swizzle.
  Fixture f(DataType::uint16, 2, 64, 32, 128, 32, Swizzle::b128);
  EXPECT_EQ(model::gather4_footprint(f.m), 4u * 128);
  std::vector<uint8_t> smem(2048, 0x55);
  const Coords c{0, 1, 2, 3, 4};
  model::gather4_load(f.m, c, f.g, smem, 0);
  EXPECT_EQ(smem, f.expect_load(c, 0, std::vector<uint8_t>(2048, 0x55)));
}

TEST(Gather4, ByteCountIsFourFullRows) {
  Fixture f(DataType::uint16, 2, 64, 32, 128, 32);
  EXPECT_EQ(model::gather4_bytes(f.m), 4u * 32 * 2);  // §2.3 per row, OOB rows included
  EXPECT_EQ(model::gather4_footprint(f.m), 4u * 64);
  const Coords all_oob{0, -5, 100, 32, -1};
  EXPECT_EQ(model::gather4_global_extent(f.m, all_oob), (std::pair<uint64_t, uint64_t>{0, 0}));
  const Coords two{8, 3, 1, 100, 3};  // rows 1 and 3; columns 8..39 = bytes 16..79 of a row
  EXPECT_EQ(model::gather4_global_extent(f.m, two), (std::pair<uint64_t, uint64_t>{f.base + 128 + 16, f.base + 3 * 128 + 80}));
}

TEST(Scatter4, WritesTheFourRowsAndSkipsOutOfBoundOnes) {
  Fixture f(DataType::uint16, 2, 64, 32, 128, 32);
  std::vector<uint8_t> before(f.tensor(), f.tensor() + 128 * 32);
  std::vector<uint8_t> smem(1024);
  for (size_t i = 0; i < smem.size(); ++i) smem[i] = uint8_t(i * 13 + 1);
  const Coords c{16, 2, 40, 30, 9};  // row 1 (tensor row 40) is OOB; columns 16..47 are in bounds
  model::scatter4_store(f.m, c, smem, 0, f.g);
  std::vector<uint8_t> want = before;
  for (int k : {0, 2, 3})
    for (uint32_t x = 0; x < 32; ++x)
      for (int b = 0; b < 2; ++b) want[uint64_t(c[1 + k]) * 128 + (16 + x) * 2 + b] = smem[k * 64 + x * 2 + b];
  EXPECT_EQ(std::vector<uint8_t>(f.tensor(), f.tensor() + 128 * 32), want);
}

TEST(Scatter4, PartialRowsWriteWholeSixteenByteChunks) {
  // H6 per row: inner extent 60 uint16 (120 bytes), columns 48..79 in a 64-element wide
  // allocation row: elements 48..59 are in bounds, and 60..63 share the last chunk.
  Fixture f(DataType::uint16, 2, 60, 8, 128, 32);
  std::vector<uint8_t> before(f.tensor(), f.tensor() + 128 * 8);
  std::vector<uint8_t> smem(1024, 0xEE);
  model::scatter4_store(f.m, Coords{48, 1, 1, 1, 1}, smem, 0, f.g);
  const uint8_t* t = f.tensor();
  for (int x = 48; x < 64; ++x) EXPECT_EQ(t[128 + 2 * x], 0xEE) << x;  // up to the end of the chunk
  EXPECT_EQ(std::memcmp(t, before.data(), 128), 0);                   // other rows untouched
}

TEST(Gather4, ScatterThenGatherIsTheIdentityOnDistinctInBoundRows) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    Fixture f(DataType::uint32, 4, 128, 64, 512, 4 * (1 + rng() % 8),
              std::array{Swizzle::none, Swizzle::b128}[rng() % 2]);
    if (f.m.swizzle == Swizzle::b128 && f.m.box[0] * 4 > 128) f.m.box[0] = 32;
    std::vector<int32_t> rows(64);
    for (int i = 0; i < 64; ++i) rows[i] = i;
    std::shuffle(rows.begin(), rows.end(), rng);
    const Coords c{int32_t(4 * (rng() % 8)), rows[0], rows[1], rows[2], rows[3]};
    std::vector<uint8_t> src(4096);
    for (auto& b : src) b = uint8_t(rng());
    model::scatter4_store(f.m, c, src, 1024, f.g);
    std::vector<uint8_t> back(4096, 0);
    model::gather4_load(f.m, c, f.g, back, 1024);
    for (int k = 0; k < 4; ++k)
      for (uint32_t i = 0; i < f.m.box[0] * 4; ++i) {
        const uint32_t a = ref_swizzle(f.m.swizzle, 1024 + k * f.pitch() + i);
        ASSERT_EQ(back[a], src[a]) << "trial " << trial << " row " << k << " byte " << i;
      }
  }
}

std::vector<std::string> rules(const Diagnostics& d) {
  std::vector<std::string> r;
  for (const auto& x : d) r.push_back(x.rule);
  return r;
}

TEST(Gather4, ChecksNameTheRule) {
  Fixture f(DataType::uint16, 2, 64, 32, 128, 32);
  const spec::Target sm100a{100, spec::Suffix::a};
  const Coords ok{8, 0, 1, 2, 3};
  EXPECT_TRUE(model::gather4_check(f.m, ok, Direction::load, sm100a).empty());
  TensorMap two_rows = f.m;
  two_rows.box[1] = 2;
  EXPECT_EQ(rules(model::gather4_check(two_rows, ok, Direction::load, sm100a)),
            std::vector<std::string>{"gather4.box-rows"});
  TensorMap rank3 = f.m;
  rank3.rank = 3;
  rank3.dims[2] = 1;
  rank3.box[2] = 1;
  EXPECT_EQ(rules(model::gather4_check(rank3, ok, Direction::load, sm100a)),
            std::vector<std::string>{"gather4.map-rank"});
  TensorMap inter = f.m;
  inter.interleave = Interleave::b16;
  EXPECT_EQ(rules(model::gather4_check(inter, ok, Direction::load, sm100a)),
            std::vector<std::string>{"gather4.interleave"});
  // The column follows the tiled inner-alignment rule (H9): 4 × 2 bytes is not 16.
  EXPECT_EQ(rules(model::gather4_check(f.m, Coords{4, 0, 1, 2, 3}, Direction::load, sm100a)),
            std::vector<std::string>{"coord.inner-align"});
  // A load may name negative rows (filled); a store may not (H14, PTX-R), and says which.
  const Coords neg{8, 0, 1, -2, 3};
  EXPECT_TRUE(model::gather4_check(f.m, neg, Direction::load, sm100a).empty());
  const auto d = model::gather4_check(f.m, neg, Direction::store, sm100a);
  ASSERT_EQ(rules(d), std::vector<std::string>{"coord.store-negative"});
  EXPECT_EQ(d[0].where, "coords[3]");
  EXPECT_NE(d[0].message.find("row_idx2"), std::string::npos) << d[0].message;
  // The walk refuses a bad map with the same rule.
  std::vector<uint8_t> smem(2048);
  try {
    model::gather4_load(two_rows, ok, f.g, smem, 0);
    ADD_FAILURE() << "accepted box[1] = 2";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostic().rule, "gather4.box-rows");
  }
}

}  // namespace
